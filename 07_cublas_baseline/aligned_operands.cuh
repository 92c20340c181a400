// aligned_operands.cuh - gives a vectorized library kernel the aligned operands it needs, for any
// shape, by copying into a padded workspace when (and only when) the caller's buffers do not fit.
//
// Why this exists. A CUTLASS kernel moves its operands in vectors: the tensor-op kernels of this
// chapter read 16 bytes at a time (8 halves, 4 floats), and the Hopper kernels go through TMA,
// which wants 16-byte aligned addresses and row pitches. Such a kernel is only correct when every
// row starts on a vector boundary and every row length is a whole number of vectors. Our contract
// allows any M, N, K and packed rows, so a K of 67 halves breaks it.
//
// What we do about it (the cost is part of the timed call, so it shows in the numbers):
//   - the aligned case (K and N multiples of the vector width, 16-byte aligned pointers; every
//     power-of-two size of the sweep) passes the caller's buffers straight through: no copy;
//   - otherwise the problem is rounded up to Kp = roundup(K, V) and Np = roundup(N, V), and the
//     operands that do not fit are copied into a zeroed workspace with that pitch. The extra K
//     columns of A' and K rows of B' are zero, so they add exactly 0 to every dot product (and
//     the zeroing matters: 0 * garbage could be NaN). The extra N columns of C' are computed and
//     thrown away. M needs no padding: the kernels guard their last row of tiles themselves.
//   - C' starts as a copy of C only when beta != 0: with beta == 0 the contract forbids reading C.
// The copies are cudaMemsetAsync / cudaMemcpy2DAsync on the caller's stream, so they are ordered
// with the GEMM and timed with it.
//
// The workspace is one device buffer per program that grows when a larger problem needs it
// (cudaFree synchronizes the device, so no kernel still uses the old one). One buffer means the
// padded path is not meant for two streams at once; the harness runs one variant at a time.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda_check.cuh"
#include "device.cuh"

namespace ch07 {

constexpr size_t kVectorBytes = 16;  // the widest access of the kernels: 128-bit loads and TMA

inline long long round_up(long long x, long long multiple) { return (x + multiple - 1) / multiple * multiple; }
inline bool is_aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0; }

// The program's one padding workspace, at least `bytes` long.
struct PaddedOperands;  // the tag of this buffer
inline void* padding_workspace(size_t bytes) { return wb::scratch_buffer<PaddedOperands>(bytes); }

// The problem as the kernel sees it: M x Np x Kp with packed, aligned operands. T is the input
// type (half, bf16 or float); C is float. V, the vector width in elements of T, is the kernel's
// alignment for A and B; C's 4-float vectors divide any multiple of V used here (V >= 4).
template <class T, int V>
class AlignedOperands {
    static_assert(V * sizeof(T) == kVectorBytes, "V elements of T make one 16-byte vector");

public:
    AlignedOperands(int M, int N, int K, const T* A, const T* B, float beta, float* C, cudaStream_t stream)
        : M_(M), N_(N), K_(K), Np_(int(round_up(N, V))), Kp_(int(round_up(K, V))), C_user_(C), stream_(stream) {
        const bool shape_ok = Np_ == N && Kp_ == K;
        const bool copy_A = Kp_ != K || !is_aligned(A);
        const bool copy_B = !shape_ok || !is_aligned(B);
        copy_C_ = Np_ != N || !is_aligned(C);
        A_ = A;
        B_ = B;
        C_ = C;
        copies_ = copy_A || copy_B || copy_C_;
        if (!copies_) return;

        // One workspace, three aligned slices (each size a multiple of 16 bytes).
        const size_t a_bytes = copy_A ? size_t(M) * Kp_ * sizeof(T) : 0;
        const size_t b_bytes = copy_B ? size_t(Kp_) * Np_ * sizeof(T) : 0;
        const size_t c_bytes = copy_C_ ? size_t(M) * Np_ * sizeof(float) : 0;
        char* base = static_cast<char*>(padding_workspace(a_bytes + b_bytes + c_bytes));
        if (copy_A) A_ = pad_copy(A, M, K, M, Kp_, base);
        if (copy_B) B_ = pad_copy(B, K, N, Kp_, Np_, base + a_bytes);
        if (copy_C_) {
            float* Cp = reinterpret_cast<float*>(base + a_bytes + b_bytes);
            if (beta != 0.0f) {
                WB_CUDA_CHECK(cudaMemcpy2DAsync(Cp, Np_ * sizeof(float), C, N * sizeof(float), N * sizeof(float),
                                                M, cudaMemcpyDeviceToDevice, stream));
            }
            C_ = Cp;
        }
    }

    // After the GEMM: the first N columns of C' go back into the caller's C.
    void finish() const {
        if (!copy_C_) return;
        WB_CUDA_CHECK(cudaMemcpy2DAsync(C_user_, N_ * sizeof(float), C_, Np_ * sizeof(float), N_ * sizeof(float),
                                        M_, cudaMemcpyDeviceToDevice, stream_));
    }

    int M() const { return M_; }
    int N() const { return Np_; }  // the padded extents the kernel runs
    int K() const { return Kp_; }
    const T* A() const { return A_; }
    const T* B() const { return B_; }
    float* C() const { return C_; }
    bool copies() const { return copies_; }  // false: the caller's buffers go straight through

private:
    // rows x cols of `src` (pitch cols) into a zeroed padded_rows x pitch block at `dst`. Every
    // padded row is zeroed too (B' has Kp rows for K of data): the workspace holds whatever the
    // last call left there, NaN included, and 0 * NaN is NaN.
    const T* pad_copy(const T* src, int rows, int cols, int padded_rows, int pitch, char* dst) const {
        WB_CUDA_CHECK(cudaMemsetAsync(dst, 0, size_t(padded_rows) * pitch * sizeof(T), stream_));
        WB_CUDA_CHECK(cudaMemcpy2DAsync(dst, pitch * sizeof(T), src, cols * sizeof(T), cols * sizeof(T), rows,
                                        cudaMemcpyDeviceToDevice, stream_));
        return reinterpret_cast<const T*>(dst);
    }

    int M_, N_, K_, Np_, Kp_;
    const T* A_ = nullptr;
    const T* B_ = nullptr;
    float* C_ = nullptr;
    float* C_user_;
    bool copy_C_ = false;
    bool copies_ = false;
    cudaStream_t stream_;
};

}  // namespace ch07
