// kernels.cuh - chapter 02: one thread per element of C.
//
// Every thread computes one dot product: row `row` of A with column `col` of B, K multiply-adds.
// The two kernels below do exactly the same arithmetic. They differ only in which way the 32
// threads of a warp walk through C, and that decides whether the warp's loads of B and stores
// of C are coalesced (one wide memory transaction per warp) or not (32 separate ones).
#pragma once

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"

namespace ch02 {

// `__restrict__` promises the compiler that A, B and C do not overlap, so it may keep loads in
// flight across iterations and read A and B through the read-only data path.

// Consecutive threads (threadIdx.x) take consecutive ROWS of C: they walk DOWN a column.
// At step k, the 32 threads of a warp read A[row][k] for 32 different rows: addresses K floats
// apart, 32 separate 32-byte sectors for 128 useful bytes. Their stores to C are N floats apart.
// BX, BY: threads per block along x (rows here) and y (columns here).
template <int BX, int BY>
__global__ void sgemm_naive_uncoalesced(int M, int N, int K, float alpha, const float* __restrict__ A,
                                        const float* __restrict__ B, float beta, float* __restrict__ C) {
    // BEGIN SOLUTION: row from x, col from y; skip outside C; K-term dot product; wb::store_c
    const int row = blockIdx.x * BX + threadIdx.x;
    const int col = blockIdx.y * BY + threadIdx.y;
    // The grid rounds up to whole blocks, so the last blocks hang over the matrix edge.
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    wb::store_c(&C[row * N + col], acc, alpha, beta);
    // END SOLUTION
}

// Consecutive threads take consecutive COLUMNS of C: they walk ALONG a row.
// At step k, a warp reads B[k][col .. col+31]: 128 contiguous bytes, one transaction. All 32
// threads read the same A[row][k], which the hardware broadcasts. The stores to C are contiguous.
// BX, BY: threads per block along x (columns) and y (rows).
template <int BX, int BY>
__global__ void sgemm_naive_coalesced(int M, int N, int K, float alpha, const float* __restrict__ A,
                                      const float* __restrict__ B, float beta, float* __restrict__ C) {
    // BEGIN SOLUTION: col from x, row from y (a warp walks along a row); dot product; wb::store_c
    const int col = blockIdx.x * BX + threadIdx.x;
    const int row = blockIdx.y * BY + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    wb::store_c(&C[row * N + col], acc, alpha, beta);
    // END SOLUTION
}

// Host launchers: derive the grid from the block shape. Integer division would round DOWN and
// leave the last partial block of rows or columns uncomputed, hence ceil_div.
template <int BX, int BY>
void launch_naive_uncoalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C, cudaStream_t stream) {
    static_assert(BX * BY <= 1024, "a block holds at most 1024 threads");
    const dim3 block(BX, BY);
    const dim3 grid(wb::ceil_div(M, BX), wb::ceil_div(N, BY));
    sgemm_naive_uncoalesced<BX, BY><<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

template <int BX, int BY>
void launch_naive_coalesced(int M, int N, int K, float alpha, const float* A, const float* B,
                            float beta, float* C, cudaStream_t stream) {
    static_assert(BX * BY <= 1024, "a block holds at most 1024 threads");
    static_assert(BX % 16 == 0, "BX below 16 splits a warp over many rows and loses coalescing");
    static_assert(BY >= 8, "at least 8 rows per block keep the grid's y extent legal (kMaxDim, shape.h)");
    const dim3 block(BX, BY);
    const dim3 grid(wb::ceil_div(N, BX), wb::ceil_div(M, BY));
    sgemm_naive_coalesced<BX, BY><<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

// The variant table that the program, the tests and a grader iterate.
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"uncoalesced_32x32", launch_naive_uncoalesced<32, 32>,
     "a warp walks down a column of C: strided loads of A, strided stores of C",
     wb::Precision::fp32, {(const void*)sgemm_naive_uncoalesced<32, 32>, 32 * 32, 0}},
    {"coalesced_32x32", launch_naive_coalesced<32, 32>,
     "a warp walks along a row of C: contiguous loads of B and stores of C",
     wb::Precision::fp32, {(const void*)sgemm_naive_coalesced<32, 32>, 32 * 32, 0}},
    {"coalesced_32x8", launch_naive_coalesced<32, 8>,
     "same mapping, 256-thread blocks: more blocks per SM",
     wb::Precision::fp32, {(const void*)sgemm_naive_coalesced<32, 8>, 32 * 8, 0}},
    {"coalesced_16x16", launch_naive_coalesced<16, 16>,
     "same mapping, 16 wide: each warp covers two half rows of 64 bytes",
     wb::Precision::fp32, {(const void*)sgemm_naive_coalesced<16, 16>, 16 * 16, 0}},
};

}  // namespace ch02
