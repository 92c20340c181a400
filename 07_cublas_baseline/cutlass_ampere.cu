// cutlass_ampere.cu - the CUTLASS 2.x rows: SIMT SGEMM, TF32 and FP16 tensor-op GEMMs (mma.sync).
//
// Built only when CUTLASS is found (see the Makefile), in its own translation unit because the
// CUTLASS headers are slow to compile. cutlass_gemms.cuh explains the rows; this file names each
// kernel as a type and wraps it in a launcher with the workbook's signature.
//
// The CUTLASS 2.x device API in four steps, as every launcher below uses it:
//   1. name the kernel:   using Kernel = cutlass::gemm::device::Gemm<types, layouts, tiles, ...>;
//   2. describe the call: Kernel::Arguments{problem size, {A, lda}, {B, ldb}, {C, ldc}, {D, ldd},
//                                           {alpha, beta}}  (C is the source, D the destination)
//   3. ask whether this kernel can run it (alignment of pointers and leading dimensions):
//                         Kernel::can_implement(args)
//   4. run it on a stream: kernel(args, workspace, stream)
// Our row-major contract maps one to one: CUTLASS has a RowMajor layout, so no operand swap is
// needed here (contrast with cuBLAS in kernels.cuh). D and C are the same buffer.
#include <cuda_fp16.h>

#include <stdexcept>
#include <string>

#include "aligned_operands.cuh"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass_gemms.cuh"

namespace ch07 {
namespace {

using Row = cutlass::layout::RowMajor;
using cutlass::gemm::GemmShape;

// D = alpha * accumulator + beta * C, FP32 throughout, writing `kOutVector` floats per access.
// It reads C only when beta != 0 (its is_source_needed()), which is what lets beta = 0 leave a
// C full of NaN unread; the tests check it.
template <int kOutVector>
using FloatEpilogue = cutlass::epilogue::thread::LinearCombination<float, kOutVector, float, float>;
// Consecutive blocks walk along N (CUTLASS's default order).
using BlockOrder = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>;

// ---- the three kernels, each one configuration ----------------------------------------------
// Template arguments of cutlass::gemm::device::Gemm, in order: element and layout of A, of B,
// of C; the accumulator type; the operation class (SIMT = CUDA cores, TensorOp = tensor cores);
// the architecture whose instructions it uses; the block tile (M x N x K per block), the warp
// tile, the instruction tile; the epilogue; the block order; the pipeline depth (stages of
// cp.async copies in flight); then the vector width of the A and B loads in elements.

// FP32 FMA on the CUDA cores, as in chapters 04-05: 8 warps, each 32 x 64 of C, 4 stages. One
// float per access, so any leading dimension works and no padding is ever needed.
using SimtSgemm = cutlass::gemm::device::Gemm<float, Row, float, Row, float, Row, float,
                                              cutlass::arch::OpClassSimt, cutlass::arch::Sm80,
                                              GemmShape<128, 128, 8>, GemmShape<32, 64, 8>, GemmShape<1, 1, 1>,
                                              FloatEpilogue<1>, BlockOrder, 4, 1, 1>;

// TF32 tensor cores on FP32 data: mma.sync m16n8k8, which rounds each input to TF32 as it loads
// the fragment. 4 warps of 64 x 64, 3 stages of 128x32 + 32x128 floats (96 KiB of shared memory).
using Tf32TensorOp = cutlass::gemm::device::Gemm<float, Row, float, Row, float, Row, float,
                                                 cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
                                                 GemmShape<128, 128, 32>, GemmShape<64, 64, 32>, GemmShape<16, 8, 8>,
                                                 FloatEpilogue<4>, BlockOrder, 3, 4, 4>;

// FP16 inputs, FP32 accumulation: mma.sync m16n8k16. 8 warps of 64 x 64 over a 128 x 256 block
// tile, 3 stages (72 KiB of shared memory); 8 halves (16 bytes) per load.
using Fp16TensorOp = cutlass::gemm::device::Gemm<cutlass::half_t, Row, cutlass::half_t, Row, float, Row, float,
                                                 cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
                                                 GemmShape<128, 256, 32>, GemmShape<64, 64, 32>, GemmShape<16, 8, 16>,
                                                 FloatEpilogue<4>, BlockOrder, 3, 8, 8>;

// ---- one launcher for all three ---------------------------------------------------------------
void check_status(cutlass::Status status, const char* kernel, const char* step) {
    if (status != cutlass::Status::kSuccess)
        throw std::runtime_error(std::string(kernel) + ": CUTLASS " + step + " failed: " +
                                 cutlassGetStatusString(status));
}

// Runs `Kernel` on row-major, packed operands that already meet its alignment.
template <class Kernel, class T>
void run_2x(const char* name, int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C,
            cudaStream_t stream) {
    using ElementA = typename Kernel::ElementA;  // cutlass::half_t for __half: the same 16 bits
    using ElementB = typename Kernel::ElementB;
    // The leading dimension of a packed row-major matrix is its number of columns.
    typename Kernel::Arguments args({M, N, K}, {reinterpret_cast<const ElementA*>(A), K},
                                    {reinterpret_cast<const ElementB*>(B), N}, {C, N}, {C, N}, {alpha, beta});
    check_status(Kernel::can_implement(args), name, "can_implement");
    // Without split-K these kernels need no workspace; asking keeps the launcher honest if a
    // configuration ever does.
    if (Kernel::get_workspace_size(args) != 0)
        throw std::runtime_error(std::string(name) + ": unexpected CUTLASS workspace");
    Kernel kernel;
    check_status(kernel(args, nullptr, stream), name, "run");
    WB_LAUNCH_CHECK();
}

// Any shape: through the padded workspace when the operands are not aligned for `Kernel`.
template <class Kernel, class T, int V>
void run_2x_any_shape(const char* name, int M, int N, int K, float alpha, const T* A, const T* B, float beta,
                      float* C, cudaStream_t stream) {
    const AlignedOperands<T, V> op(M, N, K, A, B, beta, C, stream);
    run_2x<Kernel>(name, op.M(), op.N(), op.K(), alpha, op.A(), op.B(), beta, op.C(), stream);
    op.finish();
}

void cutlass_simt_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                        cudaStream_t stream) {
    run_2x<SimtSgemm>("cutlass_simt_sgemm", M, N, K, alpha, A, B, beta, C, stream);
}

void cutlass_tf32_tensorop(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream) {
    run_2x_any_shape<Tf32TensorOp, float, 4>("cutlass_tf32_tensorop", M, N, K, alpha, A, B, beta, C, stream);
}

void cutlass_fp16_tensorop(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                           float* C, cudaStream_t stream) {
    run_2x_any_shape<Fp16TensorOp, __half, 8>("cutlass_fp16_tensorop", M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace

CutlassRows cutlass_ampere_rows() {
    CutlassRows rows;
    // clang-format off
    rows.sgemm = {
        {"cutlass_simt_sgemm", cutlass_simt_sgemm,
         "CUTLASS 2.x SIMT SGEMM: FP32 FMA, 128x128x8 block tile, 4-stage cp.async pipeline",
         wb::Precision::fp32, {}, 80},
        {"cutlass_tf32_tensorop", cutlass_tf32_tensorop,
         "CUTLASS 2.x TF32 tensor op (mma.sync 16x8x8), 128x128x32, 3 stages; pads unaligned shapes",
         wb::Precision::tf32, {}, 80},
    };
    rows.hgemm = {
        {"cutlass_fp16_tensorop", cutlass_fp16_tensorop,
         "CUTLASS 2.x FP16 tensor op (mma.sync 16x8x16), 128x256x32, 3 stages; pads unaligned shapes",
         {}, 80},
    };
    // clang-format on
    return rows;
}

}  // namespace ch07
