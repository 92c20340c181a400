// kernels.cuh - chapter 03: shared-memory tiling.
//
// Chapter 02 gave every thread one element of C and let it read a whole row of A and a whole
// column of B from global memory: 2 loads per multiply-add, and the same element of A is fetched
// again by every thread of its row of C. Here a block of threads computes a TILE x TILE piece of
// C and walks along K one TILE x TILE tile of A and of B at a time:
//
//   1. every thread copies ONE element of the A tile and ONE of the B tile into shared memory,
//   2. the block waits until both tiles are complete,
//   3. every thread does TILE multiply-adds out of shared memory,
//   4. the block waits until everybody is done with the tiles, and the next pair is loaded.
//
// Each element fetched from global memory is now used by TILE threads instead of one. The
// kernels below are that idea (sgemm_smem_tiled), an experiment with shared-memory bank
// conflicts (sgemm_smem_transposed_b), and a small step toward chapter 04, where each thread
// computes several elements of C (sgemm_smem_tiled_multirow).
//
// Every kernel is correct for any M, N, K >= 1: the tile loads are guarded and fill the part of a
// tile that hangs over the matrix edge with zeros, which add nothing to a dot product.
#pragma once

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"

namespace ch03 {

// The block shape of every kernel in this chapter, named once; the kernels, their launchers and
// the variant table all read it from here.
//   TILE             the block computes a TILE x TILE piece of C, and the K loop advances by
//                    TILE: the A tile is TILE x TILE (rows of C x steps of K), so is the B tile.
//   ROWS_PER_THREAD  elements of C each thread computes, down one column of the tile
//                    (1: the classic one-thread-per-element layout).
template <int TILE, int ROWS_PER_THREAD = 1>
struct TileConfig {
    static constexpr int kThreadsX = TILE;                    // one thread per column of the tile
    static constexpr int kThreadsY = TILE / ROWS_PER_THREAD;  // each covers ROWS_PER_THREAD rows
    static constexpr int kThreads = kThreadsX * kThreadsY;

    static_assert(ROWS_PER_THREAD >= 1 && TILE % ROWS_PER_THREAD == 0,
                  "TILE must be a multiple of ROWS_PER_THREAD, so the rows of a tile split evenly "
                  "among the threads of a column");
    static_assert(kThreads <= 1024,
                  "a block holds at most 1024 threads: TILE * TILE / ROWS_PER_THREAD is too many");
    static_assert(kThreads % 32 == 0,
                  "a block should be whole warps of 32 threads: a partial warp idles lanes on every step");
    static_assert(TILE >= 8,
                  "a block must cover at least 8 rows of C, so the grid's y extent (at most 65535 blocks) "
                  "reaches M = 500000, the largest size options.h accepts");

    // The grid "rounds up" (ceil_div), so blocks at the right and bottom edges hang over the
    // matrix; the zero-filled loads and the guarded store take care of them. With plain integer
    // division the last partial tile of rows or columns would never be computed.
    static dim3 block() { return dim3(kThreadsX, kThreadsY); }
    static dim3 grid(int M, int N) { return dim3(wb::ceil_div(N, TILE), wb::ceil_div(M, TILE)); }
};

// Static shared memory is limited to 48 KiB per block (more needs dynamic shared memory and an
// opt-in); the kernels check their two tiles against it at compile time.
constexpr size_t kMaxStaticSmemBytes = 48 * 1024;

// ---------------------------------------------------------------------------------------------
// The tiled kernel: one thread per element of C, TILE x TILE threads per block.
// TILE: side of the square block tile (16 or 32 here); the block has TILE * TILE threads.
//
// __launch_bounds__ tells the compiler the block size, so it keeps the register count low enough
// for a block of that size to launch at all (at 1024 threads: at most 64 registers per thread).
template <int TILE>
__global__ void __launch_bounds__(TileConfig<TILE>::kThreads)
    sgemm_smem_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    static_assert(2 * TILE * TILE * sizeof(float) <= kMaxStaticSmemBytes,
                  "the A and B tiles must fit into 48 KiB of static shared memory");
    // BEGIN SOLUTION: As/Bs[TILE][TILE]; per K tile: load_or_zero, sync, TILE FMAs, sync; store_c
    // The current pair of tiles, for the k-step starting at k0 (i: row of the tile, j: column):
    // As[i][k] = A[blockIdx.y * TILE + i][k0 + k],  Bs[k][j] = B[k0 + k][blockIdx.x * TILE + j].
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    // Consecutive threads (threadIdx.x) take consecutive columns of C, as in chapter 02: a warp's
    // global loads of B, its global loads of A (along a row of the A tile) and its stores of C
    // are all contiguous.
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    // ceil_div, not K / TILE: when K is not a multiple of TILE the last, partial tile still
    // holds real terms of the dot product (its missing part is loaded as zeros).
    const int num_k_tiles = wb::ceil_div(K, TILE);
    for (int t = 0; t < num_k_tiles; ++t) {
        const int k0 = t * TILE;
        // Each thread copies one element of each tile. Threads whose (row, col) lies outside C
        // still take part: their elements are needed by the other threads of the block, and they
        // must reach both barriers below (see README, "a barrier inside a divergent branch").
        As[ty][tx] = wb::load_or_zero(A, row, k0 + tx, M, K, K);
        Bs[ty][tx] = wb::load_or_zero(B, k0 + ty, col, K, N, N);

        // Barrier 1 (read after write): thread (ty, tx) is about to read As[ty][0..TILE) and
        // Bs[0..TILE)[tx], elements that OTHER threads have just written. Without this barrier
        // a fast warp reads elements that a slower warp has not stored yet.
        __syncthreads();

        // TILE is a compile-time constant, so the compiler unrolls this loop completely and the
        // shared-memory offsets become constants in the instructions. Within a warp As[ty][k] is
        // one address per value of ty (a broadcast) and Bs[k][tx] runs over consecutive floats,
        // one per bank: no bank conflicts.
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];

        // Barrier 2 (write after read): the next iteration overwrites As and Bs. Without this
        // barrier a fast warp starts storing the next tiles while slower warps are still reading
        // the current ones, and they multiply elements of the wrong tile.
        __syncthreads();
    }

    // Only here do the threads outside C drop out: no barrier follows.
    if (row < M && col < N) wb::store_c(&C[row * N + col], acc, alpha, beta);
    // END SOLUTION
}

// ---------------------------------------------------------------------------------------------
// The bank-conflict experiment: the same algorithm with the B tile stored TRANSPOSED, so that
// both operands of the dot product are read along a row: acc += As[ty][k] * Bt[tx][k].
// It looks harmless (and per thread the reads are even contiguous), but shared memory is split
// into 32 banks, 4 bytes wide: the float at index i lives in bank i % 32, and each bank serves one
// 4-byte word per cycle. In Bt[tx][k] with a row length of 32 floats, the 32 threads of a warp
// (tx = 0..31) read indices tx * 32 + k, which are ALL in bank k % 32: a 32-way bank conflict,
// the warp's one load is served in 32 passes. The transposing store Bt[tx][ty] hits the same way.
//
// PAD: extra floats at the end of each row of Bt. PAD = 1 makes a row 33 floats long, so
// Bt[tx][k] is at index tx * 33 + k, in bank (tx + k) % 32: 32 different banks for the 32 threads,
// conflict-free, for 128 extra bytes of shared memory.
// TILE: as in sgemm_smem_tiled (the conflict is 32-way only when TILE is a multiple of 32).
template <int TILE, int PAD>
__global__ void __launch_bounds__(TileConfig<TILE>::kThreads)
    sgemm_smem_transposed_b(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C) {
    static_assert(PAD >= 0, "PAD is a count of extra floats per row");
    static_assert((TILE * TILE + TILE * (TILE + PAD)) * sizeof(float) <= kMaxStaticSmemBytes,
                  "the A and B tiles must fit into 48 KiB of static shared memory");
    // BEGIN SOLUTION: as sgemm_smem_tiled, but store B transposed: Bt[tx][ty], read Bt[tx][k]
    __shared__ float As[TILE][TILE];        // As[i][k] = A[blockIdx.y * TILE + i][k0 + k]
    __shared__ float Bt[TILE][TILE + PAD];  // Bt[j][k] = B[k0 + k][blockIdx.x * TILE + j]: transposed

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.0f;
    const int num_k_tiles = wb::ceil_div(K, TILE);
    for (int t = 0; t < num_k_tiles; ++t) {
        const int k0 = t * TILE;
        As[ty][tx] = wb::load_or_zero(A, row, k0 + tx, M, K, K);
        // The global load is still coalesced (a warp reads 32 consecutive floats of a row of B);
        // only the shared-memory store goes down a column of Bt: the conflicting store.
        Bt[tx][ty] = wb::load_or_zero(B, k0 + ty, col, K, N, N);
        __syncthreads();  // barrier 1: both tiles complete before anyone reads them

#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bt[tx][k];  // Bt: the conflicting load
        __syncthreads();  // barrier 2: everyone done reading before the next tiles overwrite them
    }

    if (row < M && col < N) wb::store_c(&C[row * N + col], acc, alpha, beta);
    // END SOLUTION
}

// ---------------------------------------------------------------------------------------------
// The bridge to chapter 04: the same tiles, but each thread computes ROWS_PER_THREAD elements
// of C down one column, so the block has TILE x (TILE / ROWS_PER_THREAD) threads.
//
// Why it helps: in sgemm_smem_tiled every multiply-add reads two floats from shared memory, but an
// SM reads only 32 four-byte words from shared memory per cycle while it can do 64 to 128
// multiply-adds, so the kernel waits on shared memory, not on arithmetic. Here a thread reads
// Bs[k][tx] ONCE per k, keeps it in a register and uses it for ROWS_PER_THREAD rows:
// 1 + ROWS_PER_THREAD reads for ROWS_PER_THREAD multiply-adds, and ROWS_PER_THREAD independent
// accumulators, so a multiply-add never waits for the one before it. The global memory traffic
// does not change: it is the same TILE x TILE tiles per block.
//
// TILE:            side of the square block tile, as above.
// ROWS_PER_THREAD: elements of C per thread. Thread (ty, tx) owns rows ty, ty + kThreadsY,
//                  ty + 2 * kThreadsY, ... of the tile: rows one kThreadsY apart, so that the
//                  whole block still loads and stores one contiguous row of 32 floats per warp.
template <int TILE, int ROWS_PER_THREAD>
__global__ void __launch_bounds__(TileConfig<TILE, ROWS_PER_THREAD>::kThreads)
    sgemm_smem_tiled_multirow(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C) {
    static_assert(2 * TILE * TILE * sizeof(float) <= kMaxStaticSmemBytes,
                  "the A and B tiles must fit into 48 KiB of static shared memory");
    // BEGIN SOLUTION: ROWS_PER_THREAD accumulators, rows kThreadsY apart; read Bs[k][tx] once per k
    // Distance, in rows of the tile, between two elements of C of the same thread.
    constexpr int kRowStride = TileConfig<TILE, ROWS_PER_THREAD>::kThreadsY;
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int tile_row0 = blockIdx.y * TILE;  // first row of C (and of A) of this block
    const int col = blockIdx.x * TILE + tx;

    float acc[ROWS_PER_THREAD] = {};  // fully unrolled loops below keep this array in registers
    const int num_k_tiles = wb::ceil_div(K, TILE);
    for (int t = 0; t < num_k_tiles; ++t) {
        const int k0 = t * TILE;
        // There are fewer threads than tile elements now: each thread copies ROWS_PER_THREAD
        // elements of each tile, one kRowStride rows apart.
#pragma unroll
        for (int r = 0; r < ROWS_PER_THREAD; ++r) {
            const int i = ty + r * kRowStride;  // row of the tiles this thread fills
            As[i][tx] = wb::load_or_zero(A, tile_row0 + i, k0 + tx, M, K, K);
            Bs[i][tx] = wb::load_or_zero(B, k0 + i, col, K, N, N);
        }
        __syncthreads();  // barrier 1: both tiles complete before anyone reads them

#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            const float b = Bs[k][tx];  // one shared load, reused ROWS_PER_THREAD times
#pragma unroll
            for (int r = 0; r < ROWS_PER_THREAD; ++r) acc[r] += As[ty + r * kRowStride][k] * b;
        }
        __syncthreads();  // barrier 2: everyone done reading before the next tiles overwrite them
    }

#pragma unroll
    for (int r = 0; r < ROWS_PER_THREAD; ++r) {
        const int row = tile_row0 + ty + r * kRowStride;
        if (row < M && col < N) wb::store_c(&C[row * N + col], acc[r], alpha, beta);
    }
    // END SOLUTION
}

// ---------------------------------------------------------------------------------------------
// Host launchers: the block and the grid come from TileConfig, never typed twice.
template <int TILE>
void launch_smem_tiled(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                       cudaStream_t stream) {
    using Cfg = TileConfig<TILE>;
    sgemm_smem_tiled<TILE><<<Cfg::grid(M, N), Cfg::block(), 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

template <int TILE, int PAD>
void launch_smem_transposed_b(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C, cudaStream_t stream) {
    using Cfg = TileConfig<TILE>;
    sgemm_smem_transposed_b<TILE, PAD>
        <<<Cfg::grid(M, N), Cfg::block(), 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

template <int TILE, int ROWS_PER_THREAD>
void launch_smem_tiled_multirow(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                float* C, cudaStream_t stream) {
    using Cfg = TileConfig<TILE, ROWS_PER_THREAD>;
    sgemm_smem_tiled_multirow<TILE, ROWS_PER_THREAD>
        <<<Cfg::grid(M, N), Cfg::block(), 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

// The variant table that the program, the tests and a grader iterate. None of these kernels
// uses dynamic shared memory (the tiles are static arrays), hence the 0 in each KernelInfo.
// clang-format off
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"tiled_16", launch_smem_tiled<16>,
     "16x16 tiles of A and B in shared memory, one thread per element of C",
     wb::Precision::fp32, {(const void*)sgemm_smem_tiled<16>, TileConfig<16>::kThreads, 0}},
    {"tiled_32", launch_smem_tiled<32>,
     "32x32 tiles: twice the reuse of each global load, 1024-thread blocks",
     wb::Precision::fp32, {(const void*)sgemm_smem_tiled<32>, TileConfig<32>::kThreads, 0}},
    {"transposed_b_32", launch_smem_transposed_b<32, 0>,
     "B tile stored transposed, Bt[32][32]: 32-way shared-memory bank conflicts",
     wb::Precision::fp32, {(const void*)sgemm_smem_transposed_b<32, 0>, TileConfig<32>::kThreads, 0}},
    {"transposed_b_padded_32", launch_smem_transposed_b<32, 1>,
     "same, padded to Bt[32][33]: every row starts one bank later, no conflicts",
     wb::Precision::fp32, {(const void*)sgemm_smem_transposed_b<32, 1>, TileConfig<32>::kThreads, 0}},
    {"tiled_32_2rows", launch_smem_tiled_multirow<32, 2>,
     "32x32 tiles, 32x16 threads, 2 elements of C per thread down a column",
     wb::Precision::fp32, {(const void*)sgemm_smem_tiled_multirow<32, 2>, TileConfig<32, 2>::kThreads, 0}},
    {"tiled_32_4rows", launch_smem_tiled_multirow<32, 4>,
     "32x32 tiles, 32x8 threads, 4 elements of C per thread: fewer shared loads per multiply-add",
     wb::Precision::fp32, {(const void*)sgemm_smem_tiled_multirow<32, 4>, TileConfig<32, 4>::kThreads, 0}},
};
// clang-format on

}  // namespace ch03
