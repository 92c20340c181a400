// cublas.cuh - the baseline every GPU chapter is measured against: cuBLAS on the same problem.
//
// cuBLAS is column-major; our matrices are row-major. A row-major M x N matrix read column-major is
// its N x M transpose, and C^T = B^T A^T, so asking cuBLAS for B^T A^T (swap A and B, swap M and N)
// writes our row-major C with no copy and no transpose flag.
#pragma once

#include <cublas_v2.h>

#include "verify.cuh"

namespace wb {

// The GEMM contract of every chapter: row-major, device pointers, C = alpha A B + beta C, A M x K,
// B K x N, C M x N; FP16 and BF16 inputs accumulate in FP32.
using SgemmFn = void (*)(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                         cudaStream_t stream);
template <class T>
using Gemm16Fn = void (*)(int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C,
                          cudaStream_t stream);
// One row of a chapter's variant table: the program, its tests, make bench and the grader iterate it.
template <class Fn>
struct Variant {
    const char* name;
    Fn launch;
    const char* idea;
};

inline cublasHandle_t cublas() {
    static cublasHandle_t handle = [] {
        cublasHandle_t h = nullptr;
        WB_CUBLAS_CHECK(cublasCreate(&h));
        return h;
    }();
    return handle;
}

// C = alpha A B + beta C with inputs of type `in` and FP32 accumulation. `compute`: plain FP32
// (CUBLAS_COMPUTE_32F, no tensor cores), TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32).
inline void cublas_gemm(cudaDataType_t in, cublasComputeType_t compute, int M, int N, int K, float alpha, const void* A,
                        const void* B, float beta, float* C, cudaStream_t stream) {
    WB_CUBLAS_CHECK(cublasSetStream(cublas(), stream));
    WB_CUBLAS_CHECK(cublasGemmEx(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, in, N, A, in, K, &beta, C,
                                 CUDA_R_32F, N, compute, CUBLAS_GEMM_DEFAULT));
}

// The baselines, one per precision, with the launchers' signature.
inline void cublas_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                         cudaStream_t stream) {
    WB_CUBLAS_CHECK(cublasSetStream(cublas(), stream));
    WB_CUBLAS_CHECK(cublasSgemm(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
}
inline void cublas_tf32(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                        cudaStream_t stream) {
    cublas_gemm(CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, M, N, K, alpha, A, B, beta, C, stream);
}
inline void cublas_hgemm(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta, float* C,
                         cudaStream_t stream) {
    cublas_gemm(CUDA_R_16F, CUBLAS_COMPUTE_32F, M, N, K, alpha, A, B, beta, C, stream);
}
inline void cublas_bgemm(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B, float beta,
                         float* C, cudaStream_t stream) {
    cublas_gemm(CUDA_R_16BF, CUBLAS_COMPUTE_32F, M, N, K, alpha, A, B, beta, C, stream);
}

// Every entry of C against another library's result from the same inputs (large shapes, where an
// FP64 reference of every entry would take the CPU minutes). Both results carry their own error,
// so judge with slack 2; (|A||B|)_ij is bounded by ||row i of A|| ||column j of B|| (Cauchy-Schwarz).
template <class T>
std::vector<Entry> against(const std::vector<float>& other, const std::vector<T>& A, const std::vector<T>& B,
                           const std::vector<float>& C0, const std::vector<float>& C, Shape s, float alpha, float beta,
                           Precision p) {
    std::vector<double> row(s.m), col(s.n);
    for (size_t at = 0; at < A.size(); ++at) row[at / s.k] += seen_as(A[at], p) * seen_as(A[at], p);
    for (size_t at = 0; at < B.size(); ++at) col[at % s.n] += seen_as(B[at], p) * seen_as(B[at], p);
    std::vector<Entry> out(C.size());
    for (size_t at = 0; at < C.size(); ++at) {
        const int i = int(at / s.n), j = int(at % s.n);
        const double c0 = beta != 0 ? fabs(double(beta) * C0[at]) : 0;
        out[at] = {i, j, C[at], std::isfinite(other[at]) ? other[at] : NAN,
                   fabs(double(alpha)) * std::sqrt(row[i] * col[j]) * 1.0001 + c0};
    }
    return out;
}

}  // namespace wb
