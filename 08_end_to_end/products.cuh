// products.cuh - what every part of the chapter shares: buffers of device, pinned or managed
// memory, one product C = A * B as a whole program holds it (seeded inputs in host memory, device
// copies), cuBLAS handles bound to streams, and the check of a result against the
// double-precision reference of docs/CONTRACT.md, "Verifying".
//
// Every part of the chapter computes C = 1 * A * B + 0 * C (row-major, packed), so what changes
// from part to part is where the data lives and how the work is issued, never the arithmetic.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_handles.cuh"
#include "numerics.h"
#include "shape.h"

namespace ch08 {

// An allocation that failed: a size the machine cannot give (device, pinned or managed memory).
// The program turns it into one line on stderr and exit status 2, like any other bad input.
class AllocError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline std::string mib_text(size_t bytes) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1 << 20));
    return buf;
}

// What kind of memory a Buffer holds.
enum class Memory { device, pinned, managed };
inline const char* to_string(Memory m) {
    return m == Memory::device ? "device" : m == Memory::pinned ? "pinned host" : "managed";
}

// One allocation of `count` T, freed by the destructor.
//   device   cudaMalloc: GPU memory only.
//   pinned   cudaMallocHost: page-locked host memory. The copy engines read and write it directly
//            (DMA), so copies reach the link's rate and may run asynchronously; pageable memory
//            (a std::vector) is first copied by the CPU into a pinned staging buffer.
//   managed  cudaMallocManaged: one address valid on the CPU and the GPU; pages move to whoever
//            touches them (on a page fault) or where they are sent (cudaMemPrefetchAsync).
// A failed allocation throws AllocError naming the size and the kind, never a crash later.
template <class T>
class Buffer {
public:
    Buffer() = default;
    Buffer(size_t count, Memory kind) : count_(count), kind_(kind) {
        const size_t bytes = count * sizeof(T);
        void* p = nullptr;
        cudaError_t err = kind == Memory::device   ? cudaMalloc(&p, bytes)
                          : kind == Memory::pinned ? cudaMallocHost(&p, bytes)
                                                   : cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();  // an allocation failure is not sticky: clear it and go on
            throw AllocError(std::string(to_string(kind)) + " allocation of " + mib_text(bytes) +
                             " failed: " + cudaGetErrorString(err));
        }
        ptr_ = static_cast<T*>(p);
    }
    ~Buffer() { release(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { *this = std::move(o); }
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(count_, o.count_);
        std::swap(kind_, o.kind_);
        return *this;
    }
    T* get() const { return ptr_; }
    size_t size() const { return count_; }
    size_t bytes() const { return count_ * sizeof(T); }

private:
    void release() {
        if (!ptr_) return;
        if (kind_ == Memory::pinned)
            cudaFreeHost(ptr_);
        else
            cudaFree(ptr_);
        ptr_ = nullptr;
    }
    T* ptr_ = nullptr;
    size_t count_ = 0;
    Memory kind_ = Memory::device;
};

// The seeds' second argument ("stream" of fill_random) per matrix, as in the common harness.
constexpr uint64_t kStreamA = 1, kStreamB = 2, kStreamC = 3;

// A stream with its own cuBLAS handle and its own cuBLAS workspace. cuBLAS keeps scratch memory
// per handle; two streams sharing one handle would share it too, and two GEMMs running at once
// could overwrite each other's partial sums. One handle per stream is the simple safe rule. An
// explicit workspace (cublasSetWorkspace) also keeps cuBLAS from allocating inside a graph
// capture, where an allocation is not allowed.
class Lane {
public:
    static constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // what cuBLAS asks for on Hopper
    Lane()
        : stream_(cudaStreamNonBlocking), workspace_(kWorkspaceBytes, Memory::device), handle_(nullptr, cublasDestroy) {
        cublasHandle_t h = nullptr;
        WB_CUBLAS_CHECK(cublasCreate(&h));
        handle_.reset(h);
        WB_CUBLAS_CHECK(cublasSetStream(h, stream_));
        // After the stream: cublasSetStream puts the library's default workspace back.
        WB_CUBLAS_CHECK(cublasSetWorkspace(h, workspace_.get(), workspace_.bytes()));
        WB_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // FP32, no TF32
    }
    cudaStream_t stream() const { return stream_; }
    cublasHandle_t handle() const { return handle_.get(); }

    // Rows [row0, row0 + rows) of C = A * B, every pointer the whole row-major matrix in device
    // memory. The rows of a row-major panel are contiguous, so the panel is an ordinary smaller
    // GEMM on offset pointers, with cuBLAS's row-major trick (chapter 07): C^T = B^T A^T.
    void sgemm_rows(int row0, int rows, int N, int K, const float* A, const float* B, float* C) const {
        const float one = 1.0f, zero = 0.0f;
        WB_CUBLAS_CHECK(cublasSgemm(handle_.get(), CUBLAS_OP_N, CUBLAS_OP_N, N, rows, K, &one, B, N,
                                    A + size_t(row0) * K, K, &zero, C + size_t(row0) * N, N));
    }

private:
    // Destroyed in reverse order: the handle before the workspace it uses, both before the stream.
    wb::Stream stream_;  // the legacy stream 0 would serialize the lanes: non-blocking
    Buffer<char> workspace_;
    std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> handle_;
};

inline size_t a_count(wb::Shape s) { return size_t(s.m) * s.k; }
inline size_t b_count(wb::Shape s) { return size_t(s.k) * s.n; }
inline size_t c_count(wb::Shape s) { return size_t(s.m) * s.n; }
inline size_t product_bytes(wb::Shape s) { return (a_count(s) + b_count(s) + c_count(s)) * sizeof(float); }

// The three matrices of one product in one kind of memory (A and B seeded when `fill` is set).
struct Matrices {
    wb::Shape s;
    Buffer<float> A, B, C;
    Matrices(wb::Shape shape, Memory kind, uint64_t seed, bool fill)
        : s(shape), A(a_count(shape), kind), B(b_count(shape), kind), C(c_count(shape), kind) {
        if (fill) {
            wb::fill_random(A.get(), A.size(), seed, kStreamA);
            wb::fill_random(B.get(), B.size(), seed, kStreamB);
        }
    }
};

// NaN in every entry of a host C: an entry nobody wrote fails the check.
inline void poison_host(float* C, size_t count) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (size_t i = 0; i < count; ++i) C[i] = nan;
}
// All bits set: a NaN pattern, for device (or managed) memory.
inline void poison_device(float* C, size_t count, cudaStream_t stream) {
    WB_CUDA_CHECK(cudaMemsetAsync(C, 0xFF, count * sizeof(float), stream));
}

// The double-precision reference of A * B, computed once and used for every path's result:
// every entry when the common rule says the whole reference is cheap enough, else 1024 sampled
// entries (corners, last row and column, random ones). Large results are also compared bit for bit
// with another path that does the same arithmetic.
class ProductReference {
public:
    // C = alpha A B + beta C0 (C0 only read when beta != 0).
    ProductReference(wb::Shape s, const float* A, const float* B, uint64_t seed, float alpha = 1.0f,
                     float beta = 0.0f, const float* C0 = nullptr)
        : s_(s), tol_(wb::tolerance_for(wb::Precision::fp32, s.k)), full_(wb::use_full_reference(s)) {
        wb::GemmView g;
        g.s = s;
        g.alpha = alpha;
        g.beta = beta;
        g.A = A;
        g.B = B;
        g.C0 = C0;
        if (full_)
            wb::reference_full(g, value_, scale_);
        else
            sample_ = wb::reference_sample(g, 1024, seed);
    }
    wb::CheckResult check(const float* C) const {
        return full_ ? wb::check_full(C, s_.m, s_.n, value_, scale_, tol_) : wb::check_sample(C, s_.n, sample_, tol_);
    }

private:
    wb::Shape s_;
    wb::Tolerance tol_;
    bool full_;
    std::vector<double> value_, scale_;
    std::vector<wb::RefEntry> sample_;
};

inline wb::CheckResult verify_product(wb::Shape s, const float* A, const float* B, const float* C,
                                      uint64_t seed) {
    return ProductReference(s, A, B, seed).check(C);
}

// True when two results hold the same bits (NaN included): same arithmetic, same answer.
inline bool same_bits(const float* x, const float* y, size_t count) {
    return std::memcmp(x, y, count * sizeof(float)) == 0;
}

// Host wall clock, for what CUDA events cannot see (host work: launches, staging, page faults
// handled by the driver).
using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Median of a list (mean of the middle two for an even count); 0 for none.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace ch08
