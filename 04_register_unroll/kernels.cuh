// kernels.cuh - chapter 04: thread tiling in registers.
//
// In chapter 03's basic tiled kernel every thread computes ONE element of C from shared-memory
// tiles, so each multiply-add (FMA) costs two reads from shared memory. Shared memory is fast, but
// the FMA units are faster: an SM does 64 to 128 FMAs per clock (128 on Hopper) but reads only 32
// four-byte words of shared memory. Here every thread computes a small tile of C and keeps it in
// registers, the only storage faster than shared memory. Each value a thread reads from shared
// memory then feeds several FMAs. Per step k along the shared tiles, one thread does:
//
//   thread tile     reads from shared memory   FMAs       reads per FMA
//   1 x 1 (ch. 03)  2                          1          2
//   TM x 1 (1D)     TM + 1                     TM         (TM + 1) / TM     = 1.125 for TM = 8
//   TM x TN (2D)    TM + TN                    TM * TN    (TM + TN) / TM TN = 0.25  for 8 x 8
//
// Template parameters of every kernel here (the tile sizes):
//   BM, BN  rows and columns of C computed by one thread block (the block tile)
//   BK      depth along K of the tiles staged in shared memory: A tile BM x BK, B tile BK x BN
//   TM, TN  rows and columns of C computed by one thread (the thread tile), kept in registers;
//           the 1D kernel has TN = 1
// One thread per thread tile: a block has (BM / TM) * (BN / TN) threads (threads_per_block).
//
// A thread's tile lives in a local array, `float acc[TM][TN]`. It stays in registers only if every
// index into it is known at compile time: registers cannot be indexed at run time. That is why
// every loop over TM, TN or BK is `#pragma unroll`ed with a compile-time trip count. An array
// indexed at run time, or one too large for the 255 registers a thread may have, goes to "local
// memory": per-thread memory that lives in DRAM behind the L1 cache. The last variant shows it.
#pragma once

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"

namespace ch04 {

// Threads per block: one per TM x TN thread tile of the BM x BN block tile.
__host__ __device__ constexpr int threads_per_block(int BM, int BN, int TM, int TN) {
    return (BM / TM) * (BN / TN);
}

// Floats of padding at the end of each row of the transposed A tile (see load_tile_transposed).
// 4 keeps every row 16-byte aligned, so the 4-float reads of the 2D kernel stay possible.
constexpr int kATilePad = 4;

// ---- staging tiles in shared memory ----------------------------------------------------------

// Copies the ROWS x COLS tile of the packed row-major matrix `src` (rows x cols entries) whose
// top-left element is (row0, col0) into `tile`, zero-filling everything outside the matrix: zeros
// add nothing to a dot product, so the kernels need no special case for the last tiles.
// THREADS threads share the copy. Consecutive threads take consecutive columns, so a warp reads
// contiguous runs of a row (coalesced) and writes contiguous shared words (no bank conflicts).
template <int THREADS, int ROWS, int COLS>
__device__ __forceinline__ void load_tile(const float* src, int rows, int cols, int row0, int col0,
                                          float (&tile)[ROWS][COLS]) {
    static_assert(ROWS * COLS % THREADS == 0, "every thread must copy the same number of elements");
#pragma unroll
    for (int step = 0; step < ROWS * COLS / THREADS; ++step) {
        const int e = step * THREADS + static_cast<int>(threadIdx.x);
        const int r = e / COLS, c = e % COLS;
        tile[r][c] = wb::load_or_zero(src, row0 + r, col0 + c, rows, cols, cols);
    }
}

// The same copy, stored transposed: element (r, c) goes to tile[c][r]. The global reads are the
// same coalesced ones as above; the shared writes are strided. With COLS = BK = 8, a warp writes
// 4 values (r) into each of the 8 rows (c) of the tile. Without padding, a row is ROWS = 64 or 128
// floats long, a multiple of the 32 banks, so the 8 writes of one r all land in one bank: an 8-way
// bank conflict. With LD = ROWS + 4, row c starts 4c banks further on and the 32 writes hit 32
// different banks. (With BK = 16 a warp writes 16 rows, and rows c and c + 8 share banks: 2-way.)
template <int THREADS, int ROWS, int COLS, int LD>
__device__ __forceinline__ void load_tile_transposed(const float* src, int rows, int cols, int row0, int col0,
                                                     float (&tile)[COLS][LD]) {
    static_assert(ROWS * COLS % THREADS == 0, "every thread must copy the same number of elements");
    static_assert(LD >= ROWS, "a row of the transposed tile must hold ROWS values");
#pragma unroll
    for (int step = 0; step < ROWS * COLS / THREADS; ++step) {
        const int e = step * THREADS + static_cast<int>(threadIdx.x);
        const int r = e / COLS, c = e % COLS;
        tile[c][r] = wb::load_or_zero(src, row0 + r, col0 + c, rows, cols, cols);
    }
}

// ---- the epilogue ----------------------------------------------------------------------------

// Writes a thread's TM x TN results, whose top-left element is C(row, col), as
// C = alpha * acc + beta * C. The block tiles of the last row and column hang over the edge of C;
// their elements outside it are skipped one by one (not tile by tile: a tile may be partly inside).
template <int TM, int TN>
__device__ __forceinline__ void store_thread_tile(const float (&acc)[TM][TN], int M, int N, int row, int col,
                                                  float alpha, float beta, float* C) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            if (row + i < M && col + j < N) wb::store_c(&C[(row + i) * N + col + j], acc[i][j], alpha, beta);
        }
    }
}

// ---- step 1: 1D thread tiling ----------------------------------------------------------------

// Each thread computes TM consecutive rows of ONE column of C: a TM x 1 thread tile.
// Per k it reads B(k, col) from shared memory once, keeps it in a register and uses it for its
// TM multiply-adds, one per row. The BN threads of a block row sit side by side along a row of C,
// so the 32 threads of a warp share their TM rows: their reads of the A tile are broadcasts (one
// shared-memory access serves the whole warp) and their reads of the B tile are 32 consecutive words.
template <int BM, int BN, int BK, int TM>
__global__ void sgemm_1d_thread_tile(int M, int N, int K, float alpha, const float* A, const float* B,
                                     float beta, float* C) {
    constexpr int kThreads = threads_per_block(BM, BN, TM, 1);
    static_assert(BM % TM == 0, "BM must be a multiple of TM: the thread tiles must cover the block tile");
    static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                  "BM / TM * BN threads must be whole warps, and at most 1024 per block");
    static_assert(
        BM * BK % kThreads == 0,
        "BM*BK must be a multiple of the thread count so every thread loads the same number of A elements");
    static_assert(
        BK * BN % kThreads == 0,
        "BK*BN must be a multiple of the thread count so every thread loads the same number of B elements");
    static_assert(BM >= 8,
                  "at least 8 rows of C per block keep grid.y <= 65535 up to M = 500000 (options.h)");

    __shared__ float As[BM][BK];  // the A tile, row-major as in A
    __shared__ float Bs[BK][BN];

    const int tcol = threadIdx.x % BN;       // this thread's column in the block tile
    const int trow = threadIdx.x / BN * TM;  // the first of its TM rows
    const int row0 = blockIdx.y * BM;        // the block tile's top-left element of C
    const int col0 = blockIdx.x * BN;

    float acc[TM][1] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<kThreads>(A, M, K, row0, k0, As);
        load_tile<kThreads>(B, K, N, k0, col0, Bs);
        __syncthreads();  // the tiles are complete before anyone reads them
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float b = Bs[k][tcol];  // one read, TM uses
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i][0] += As[trow + i][k] * b;
        }
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }
    store_thread_tile(acc, M, N, row0 + trow, col0 + tcol, alpha, beta, C);
}

// ---- step 2: 2D thread tiling ----------------------------------------------------------------

// The heart of the 2D kernel: one pass over the BK-deep shared tiles. For each k, the thread
// copies its TM values of column k of the A tile and its TN values of row k of the B tile into
// registers (the fragments), then adds their outer product, TM * TN FMAs that read registers only.
// The A tile is stored transposed (As[k][m]), so the TM values are contiguous like the TN values:
// with TM and TN multiples of 4 and 16-byte aligned rows the compiler reads each group of 4
// floats with one 128-bit instruction (LDS.128), a quarter of the instructions of 4 scalar reads.
template <int BK, int LDA, int BN, int TM, int TN>
__device__ __forceinline__ void accumulate_tile(const float (&As)[BK][LDA], const float (&Bs)[BK][BN],
                                                int trow, int tcol, float (&acc)[TM][TN]) {
    // BEGIN SOLUTION: per k: TM values of As[k][..] and TN of Bs[k][..] into registers; outer product
    float a_frag[TM];
    float b_frag[TN];
#pragma unroll
    for (int k = 0; k < BK; ++k) {
#pragma unroll
        for (int i = 0; i < TM; ++i) a_frag[i] = As[k][trow + i];
#pragma unroll
        for (int j = 0; j < TN; ++j) b_frag[j] = Bs[k][tcol + j];
#pragma unroll
        for (int i = 0; i < TM; ++i) {
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
        }
    }
    // END SOLUTION
}

// Each thread computes a TM x TN tile of C. The BN / TN threads of a block row take consecutive
// thread tiles along a row of C; BM / TM such rows of threads cover the block tile.
// Registers per thread: TM * TN accumulators + TM + TN fragment values + some for addresses and
// loop counters, of the 255 a thread may have. 8 x 8 compiles to 128 (so two 256-thread blocks fit
// the 65536 registers of an SM); 16 x 16 needs 256 for the accumulators alone and spills.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void sgemm_2d_thread_tile(int M, int N, int K, float alpha, const float* A, const float* B,
                                     float beta, float* C) {
    constexpr int kThreads = threads_per_block(BM, BN, TM, TN);
    static_assert(BM % TM == 0 && BN % TN == 0,
                  "BM must be a multiple of TM and BN of TN: the thread tiles must cover the block tile");
    static_assert(kThreads % 32 == 0 && kThreads <= 1024,
                  "(BM / TM) * (BN / TN) threads must be whole warps, and at most 1024 per block");
    static_assert(
        BM * BK % kThreads == 0,
        "BM*BK must be a multiple of the thread count so every thread loads the same number of A elements");
    static_assert(
        BK * BN % kThreads == 0,
        "BK*BN must be a multiple of the thread count so every thread loads the same number of B elements");
    static_assert(BM >= 8,
                  "at least 8 rows of C per block keep grid.y <= 65535 up to M = 500000 (options.h)");

    // BEGIN SOLUTION: As transposed [BK][BM+kATilePad], Bs[BK][BN]; TMxTN acc; load, sync, accumulate
    __shared__ __align__(16) float As[BK][BM + kATilePad];  // the A tile, transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK][BN];

    const int tcol = threadIdx.x % (BN / TN) * TN;  // this thread's tile in the block tile
    const int trow = threadIdx.x / (BN / TN) * TM;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile_transposed<kThreads, BM>(A, M, K, row0, k0, As);
        load_tile<kThreads>(B, K, N, k0, col0, Bs);
        __syncthreads();
        accumulate_tile(As, Bs, trow, tcol, acc);
        __syncthreads();
    }
    store_thread_tile(acc, M, N, row0 + trow, col0 + tcol, alpha, beta, C);
    // END SOLUTION
}

// ---- launchers -------------------------------------------------------------------------------
// The block and the grid come from the tile sizes: one thread per thread tile, one block per
// block tile. blockIdx.x walks the columns of C, so the blocks that run together share a row of A
// tiles. ceil_div rounds up; the kernels' zero-filled loads and guarded stores handle the overhang.

template <int BM, int BN, int BK, int TM>
void launch_1d_thread_tile(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           float* C, cudaStream_t stream) {
    const dim3 block(threads_per_block(BM, BN, TM, 1));
    const dim3 grid(wb::ceil_div(N, BN), wb::ceil_div(M, BM));
    sgemm_1d_thread_tile<BM, BN, BK, TM><<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

template <int BM, int BN, int BK, int TM, int TN>
void launch_2d_thread_tile(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           float* C, cudaStream_t stream) {
    const dim3 block(threads_per_block(BM, BN, TM, TN));
    const dim3 grid(wb::ceil_div(N, BN), wb::ceil_div(M, BM));
    sgemm_2d_thread_tile<BM, BN, BK, TM, TN><<<grid, block, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

// ---- the variant table -----------------------------------------------------------------------
// One row per configuration: its launcher and the kernel's resources come from the same template
// arguments, written once.

template <int BM, int BN, int BK, int TM>
wb::SgemmVariant variant_1d(const char* name, const char* what) {
    wb::KernelInfo info;  // what the harness needs to print registers, spills and occupancy
    info.kernel = (const void*)sgemm_1d_thread_tile<BM, BN, BK, TM>;
    info.threads = threads_per_block(BM, BN, TM, 1);
    return {name, launch_1d_thread_tile<BM, BN, BK, TM>, what, wb::Precision::fp32, info};
}

template <int BM, int BN, int BK, int TM, int TN>
wb::SgemmVariant variant_2d(const char* name, const char* what) {
    wb::KernelInfo info;
    info.kernel = (const void*)sgemm_2d_thread_tile<BM, BN, BK, TM, TN>;
    info.threads = threads_per_block(BM, BN, TM, TN);
    return {name, launch_2d_thread_tile<BM, BN, BK, TM, TN>, what, wb::Precision::fp32, info};
}

// The variant table that the program, the tests and a grader iterate.
inline const wb::SgemmVariant kSgemmVariants[] = {
    variant_1d<64, 64, 8, 8>("1d_64x64x8_8x1",
                             "8 rows of one column per thread: each B value read once, used 8 times"),
    variant_2d<64, 64, 8, 4, 4>("2d_64x64x8_4x4",
                                "4x4 results per thread; small block tiles give small problems many blocks"),
    variant_2d<128, 128, 8, 8, 8>("2d_128x128x8_8x8",
                                  "8x8 results per thread: 16 shared-memory reads feed 64 FMAs"),
    variant_2d<128, 128, 16, 8, 8>("2d_128x128x16_8x8",
                                   "same thread tile, BK = 16: half as many barriers and tile loads per FMA"),
    variant_2d<128, 128, 8, 16, 16>("2d_128x128x8_16x16",
                                    "16x16 results per thread need more than 255 registers: spills"),
};

}  // namespace ch04
