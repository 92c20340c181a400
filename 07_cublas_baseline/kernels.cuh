// kernels.cuh - chapter 07: cuBLAS done right.
//
// No kernels of our own here: every variant is one cuBLAS call. What the chapter teaches is how
// to make that call right (row-major data in a column-major library), which arithmetic each call
// asks for (FP32, TF32, FP16 inputs), and what it costs (cublas_costs.cuh).
//
// The row-major trick, which every launcher below relies on:
//
//   cuBLAS reads a matrix column by column (Fortran order). Our matrices are stored row by row.
//   The bytes of a row-major R x C matrix X, read column by column, ARE the column-major C x R
//   matrix X^T, with the same leading dimension C. Nothing has to move: only the name changes.
//
//   We want C = A * B (row-major). Transposing both sides gives C^T = B^T * A^T, and every matrix
//   in that equation is what cuBLAS already sees in our buffers:
//
//     buffer B  (row-major K x N)  = column-major N x K = B^T, ld N
//     buffer A  (row-major M x K)  = column-major K x M = A^T, ld K
//     buffer C  (row-major M x N)  = column-major N x M = C^T, ld N
//
//   So one column-major call C^T (N x M) = B^T (N x K) * A^T (K x M), with the two operands
//   SWAPPED and no transpose flags, writes exactly the row-major C we want:
//
//     cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, /*m=*/N, /*n=*/M, /*k=*/K,
//                 &alpha, B, /*ldb as lda=*/N, A, /*lda as ldb=*/K, &beta, C, /*ldc=*/N);
//
// common/gemm_harness.cu holds the launchers every chapter uses as its baseline (wb::cublas_sgemm,
// wb::cublas_tf32, wb::cublas_hgemm, wb::cublas_bgemm, and cuBLASLt's wb::cublaslt_fp8); this
// chapter lists them as variants and adds the math-mode variants and a deliberately wrong call. After them come the CUTLASS rows,
// where CUTLASS was found at build time (cutlass_gemms.cuh): chapter_tables() below joins both.
#pragma once

#include <cublas_v2.h>

#include <vector>

#include "cuda_check.cuh"
#include "cutlass_gemms.cuh"
#include "gemm_harness.cuh"

namespace ch07 {

// Sets a handle's math mode for the lifetime of this object and then puts the previous mode
// back. The harness shares ONE handle between every cuBLAS call of the program (creating one
// costs milliseconds), so a variant that changes the mode must not leave it changed: the next
// call, e.g. the FP32 baseline, would silently run in TF32.
class MathModeScope {
public:
    MathModeScope(cublasHandle_t handle, cublasMath_t mode) : handle_(handle) {
        WB_CUBLAS_CHECK(cublasGetMathMode(handle_, &saved_));
        WB_CUBLAS_CHECK(cublasSetMathMode(handle_, mode));
    }
    // A destructor must not throw; restoring a mode the handle accepted before cannot fail.
    ~MathModeScope() { (void)cublasSetMathMode(handle_, saved_); }
    MathModeScope(const MathModeScope&) = delete;
    MathModeScope& operator=(const MathModeScope&) = delete;

private:
    cublasHandle_t handle_;
    cublasMath_t saved_ = CUBLAS_DEFAULT_MATH;
};

// C = alpha * A * B + beta * C for row-major, packed A (M x K), B (K x N), C (M x N), as the one
// column-major call C^T = B^T * A^T (see the top of this file). Runs on the handle's stream, in
// the handle's math mode. Written out once here so the chapter's own variants show the call.
inline void sgemm_row_major(cublasHandle_t handle, int M, int N, int K, float alpha, const float* A,
                            const float* B, float beta, float* C) {
    WB_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N,
                                /*m=*/N, /*n=*/M, /*k=*/K, &alpha,
                                /*first operand: B^T, N x K*/ B, /*its ld=*/N,
                                /*second operand: A^T, K x M*/ A, /*its ld=*/K, &beta,
                                /*result: C^T, N x M*/ C, /*its ld=*/N));
}

// cublasSgemm on the shared handle in math mode MODE:
//   CUBLAS_PEDANTIC_MATH        the prescribed FP32 arithmetic in every phase of the computation;
//                               no tensor cores, no reduced-precision shortcuts (for testing)
//   CUBLAS_TF32_TENSOR_OP_MATH  allows cuBLAS to round the FP32 inputs to TF32 (10-bit mantissa)
//                               and use the tensor cores (Ampere and later): the SAME call, a
//                               different arithmetic
// cublasSgemm has no compute-type argument, so the handle's math mode is the only way to choose.
template <cublasMath_t MODE>
void launch_sgemm_math_mode(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C, cudaStream_t stream) {
    cublasHandle_t handle = wb::cublas_handle();
    // The handle remembers its stream; every kernel cuBLAS launches goes there. Set it on every
    // call: the harness times on its own stream, and a handle left on the default stream would
    // run the GEMM outside the events that are meant to time it.
    WB_CUBLAS_CHECK(cublasSetStream(handle, stream));
    MathModeScope mode(handle, MODE);
    sgemm_row_major(handle, M, N, K, alpha, A, B, beta, C);
}

// A WRONG call, kept for the lesson and the tests; it is not in the variant tables.
// The usual first attempt at "cuBLAS is column-major": transpose the operands instead of swapping
// them. op(A) = A and op(B) = B are then read correctly, and cuBLAS computes the right numbers,
// but it WRITES C column-major (ld M): the buffer holds C^T, i.e. the row-major N x M matrix C^T.
// Read back as row-major M x N, only entries that happen to land on their own place are right.
// (For square matrices the buffer is exactly the transpose of the answer; for others it is not
// even that.) The checker must reject it, and the test shows that the buffer holds C^T exactly.
inline void launch_sgemm_transposed_not_swapped(int M, int N, int K, float alpha, const float* A,
                                                const float* B, float beta, float* C, cudaStream_t stream) {
    cublasHandle_t handle = wb::cublas_handle();
    WB_CUBLAS_CHECK(cublasSetStream(handle, stream));
    MathModeScope mode(handle, CUBLAS_DEFAULT_MATH);
    WB_CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_T, CUBLAS_OP_T, /*m=*/M, /*n=*/N, /*k=*/K, &alpha, A,
                                /*lda=*/K, B, /*ldb=*/N, &beta, C, /*ldc=*/M));
}

// The variant tables that the program, the tests and a grader iterate. The names differ from the
// harness's baseline rows (cublas_sgemm, cublas_tf32, cublas_hgemm), which every chapter prints
// first: `sgemm` below makes exactly the baseline's call, so the two rows of a run differ only by
// the noise of the measurement. (No KernelInfo: cuBLAS picks its kernels at run time.)
// clang-format off
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"sgemm", wb::cublas_sgemm,
     "cublasSgemm, default math mode: FP32 on the CUDA cores (the baseline's own call)"},
    {"sgemm_pedantic", launch_sgemm_math_mode<CUBLAS_PEDANTIC_MATH>,
     "cublasSgemm, CUBLAS_PEDANTIC_MATH: the prescribed FP32 arithmetic in every step"},
    {"sgemm_tf32_mode", launch_sgemm_math_mode<CUBLAS_TF32_TENSOR_OP_MATH>,
     "cublasSgemm, CUBLAS_TF32_TENSOR_OP_MATH: the same call, TF32 tensor cores",
     wb::Precision::tf32, {}, 80},
    {"gemmex_tf32", wb::cublas_tf32,
     "cublasGemmEx, FP32 data, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores",
     wb::Precision::tf32, {}, 80},
};

inline const wb::HgemmVariant kHgemmVariants[] = {
    {"gemmex_fp16", wb::cublas_hgemm,
     "cublasGemmEx, FP16 A and B, FP32 C, CUBLAS_COMPUTE_32F: FP16 tensor cores"},
};

inline const wb::BgemmVariant kBgemmVariants[] = {
    {"gemmex_bf16", wb::cublas_bgemm,
     "cublasGemmEx, BF16 A and B, FP32 C, CUBLAS_COMPUTE_32F: BF16 tensor cores", {}, 80},
};
// FP8 has no cublasGemmEx: it is cublasLtMatmul, where the operation, each matrix's layout and the
// algorithm are separate objects (wb::cublaslt_fp8 makes them once per shape). E4M3 A and B come
// with one FP32 scale each, passed as device pointers; FP8 kernels exist for "TN" only (cuBLAS's A
// transposed, its B not): in our row-major terms, B must be given as N x K (Bt), like A along K.
inline const wb::Fp8gemmVariant kFp8Variants[] = {
    {"lt_fp8_e4m3", wb::cublaslt_fp8,
     "cublasLtMatmul, E4M3 A and Bt (TN) with per-tensor scale pointers, FP32 C: FP8 tensor cores", {}, 89},
};
// clang-format on

// The chapter's tables as the program runs them: the cuBLAS rows above, then the CUTLASS rows
// that were built. `not_built` is the one line to print when some CUTLASS rows are missing.
struct ChapterTables {
    std::vector<wb::SgemmVariant> sgemm;
    std::vector<wb::HgemmVariant> hgemm;
    std::vector<wb::BgemmVariant> bgemm;
    std::string not_built;
    std::vector<wb::Fp8gemmVariant> fp8 = wb::table(kFp8Variants);  // no CUTLASS row
};

inline ChapterTables chapter_tables() {
    const CutlassRows cutlass = cutlass_rows();
    ChapterTables t{wb::table(kSgemmVariants), wb::table(kHgemmVariants), wb::table(kBgemmVariants),
                    cutlass.not_built};
    t.sgemm.insert(t.sgemm.end(), cutlass.sgemm.begin(), cutlass.sgemm.end());
    t.hgemm.insert(t.hgemm.end(), cutlass.hgemm.begin(), cutlass.hgemm.end());
    t.bgemm.insert(t.bgemm.end(), cutlass.bgemm.begin(), cutlass.bgemm.end());
    return t;
}

}  // namespace ch07
