// kernels.cuh - chapter 05: float4 loads, a transposed A tile, warp tiling, double buffering.
//
// Chapter 04 gave every thread a small block of C in registers, so that each value read from
// shared memory feeds several multiply-adds. This chapter keeps that idea and removes, one step
// at a time, what still stands between it and the FP32 units:
//
//   step 1  float4_transposed_a  global loads of 16 bytes (LDG.128); the A tile is stored
//                                transposed, so a thread's column of A is contiguous in shared
//                                memory and comes in with 16-byte reads (LDS.128) too.
//   step 2  warptile             the same arithmetic, but the lanes of a warp are arranged so that
//                                their shared-memory reads never collide in a bank, and every
//                                store of C is a full 128-byte line per quarter warp.
//   step 3a warptile_db_regs     two shared buffers: the next tile travels through registers while
//                                the current one is multiplied; one barrier per K step.
//   step 3b warptile_cp_async    cp.async copies global memory straight into shared memory
//                                (Ampere and later), STAGES tiles in flight.
//   step 4  ..._swizzle          blocks are numbered so that neighbours share panels of A and B
//                                in the L2 cache.
//   step 5  splitk               small C, long K: several blocks share one tile of C, each summing
//                                one slice of K, and a second kernel adds the slices.
//   best                         the default configuration for this GPU and shape.
//
// All of them are ONE kernel template, sgemm_float4<Tiling, Pipeline, VEC>: a tile configuration
// (section 1), one of three main loops (section 4) and the alignment choice VEC (section 5).
//
// Any shape: every tile load is guarded and zero-filled at the edges, every store is guarded. The
// float4 path (VEC = true) is taken only when it is safe: K and N multiples of 4 (so every row of A,
// B and C starts on a 16-byte boundary) and 16-byte aligned pointers. Otherwise the same tiling
// runs with 4-byte loads and stores. Indices are int: the workbook keeps every matrix below 2^31
// elements (options.h).
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"

// ---- 1. The tile configuration --------------------------------------------------------------
//
//   block tile  BM x BN of C, computed by THREADS threads; K is walked BK columns at a time.
//   warp tile   WM x WN of the block tile belongs to one warp (WARPS_M x WARPS_N warps).
//   lanes       the 32 lanes of a warp form a LANES_M x LANES_N grid (LANES_N given, LANES_M = 32 / it).
//   sub-block   each lane owns TM x TN contiguous results; the lane grid covers
//               (LANES_M * TM) x (LANES_N * TN), and is repeated WM_ITER x WN_ITER times to fill
//               the warp tile. A lane thus holds THREAD_M x THREAD_N accumulators.
//   STAGES      how many A/B tile pairs live in shared memory at once (1: load, then compute;
//               2: double buffering; 3+: the cp.async pipeline).
//
// Example, step 2 (Tiling<128, 128, 8, 32, 64, 4, 4, 8, 1>): 8 warps as 4 x 2, each owns 32 x 64;
// its lanes form 4 x 8, each lane a 4 x 4 block, so one pass of the warp covers 16 x 32 and the
// warp repeats it 2 x 2 times: every lane computes 8 x 8 results in four 4 x 4 pieces.
//
//   warp tile 32 x 64: lane 9 (row 1, column 1 of the lane grid) owns the four blocks marked 9
//     columns 0..3  4..7         32..35 36..39
//        +-----+-----+--  --+-----+-----+--  --+
//        |  0  |  1  |  ..  |  0  |  1  |  ..  |  rows 0..3
//        |  8  |  9  |  ..  |  8  |  9  |  ..  |  rows 4..7
//        |  .. lanes 16..31: rows 8..15        |
//        +-----+-----+--  --+-----+-----+--  --+
//        |  0  |  1  |  ..  |  0  |  1  |  ..  |  rows 16..19: the lane grid again
//        |  8  |  9  |  ..  |  8  |  9  |  ..  |  rows 20..23
//        |  ..                                 |
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int LANES_N_, int STAGES_>
struct Tiling {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int TM = TM_, TN = TN_;
    static constexpr int LANES_N = LANES_N_, LANES_M = 32 / LANES_N_;
    static constexpr int STAGES = STAGES_;

    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM_ITER = WM / (LANES_M * TM), WN_ITER = WN / (LANES_N * TN);
    static constexpr int THREAD_M = WM_ITER * TM, THREAD_N = WN_ITER * TN;

    // Shared memory, in floats. The A tile is stored transposed, As[k][m], each row padded by one
    // float4 (see the transposed stores in section 3); the B tile is stored as it is, Bs[k][n].
    static constexpr int A_LD = BM + 4, B_LD = BN;
    static constexpr int A_STAGE = BK * A_LD, B_STAGE = BK * B_LD;
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * int(sizeof(float));

    // For __launch_bounds__: with up to 64 accumulators per thread, ask for two blocks per SM when
    // two fit in the 64K registers at 128 registers per thread (the compiler then stays within
    // 128); the big 128-accumulator tiles, and 512-thread blocks, get one block per SM.
    static constexpr int MIN_BLOCKS = THREAD_M * THREAD_N <= 64 && 2 * THREADS * 128 <= 65536 ? 2 : 1;

    static_assert(32 % LANES_N == 0, "LANES_N must divide the 32 lanes of a warp");
    static_assert(BM % WM == 0 && BN % WN == 0, "the block tile must be a whole number of warp tiles");
    static_assert(THREADS <= 1024, "a block holds at most 1024 threads");
    static_assert(TM % 4 == 0 && TN % 4 == 0,
                  "TM and TN must be multiples of 4: a lane reads its pieces of A and B as float4");
    static_assert(WM % (LANES_M * TM) == 0 && WN % (LANES_N * TN) == 0,
                  "the warp tile must be a whole number of lane-grid passes (LANES_M*TM x LANES_N*TN)");
    static_assert(BK % 4 == 0, "BK must be a multiple of 4: one float4 load of A covers 4 columns of k");
    static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0,
                  "each tile must split into float4 loads evenly over the threads, so that every "
                  "thread loads the same number of A and of B values and no thread idles");
    static_assert(THREADS % BK == 0 && THREADS % BN == 0,
                  "the 4-byte path moves one float per thread along a tile row (BK floats of A, BN "
                  "floats of B): THREADS must be a multiple of BK and of BN");
    static_assert(BM >= 8, "at least 8 rows of C per block keep grid.y within 65535 (options.h)");
    static_assert(STAGES >= 1, "at least one tile in shared memory");
    static_assert(SMEM_BYTES <= 227 * 1024, "more shared memory than one block can get (227 KB on sm_90)");

    // Where lane `tid` of the block starts inside the block tile: its warp's corner plus its
    // place in the lane grid. (Host and device: the CPU tests enumerate these maps.)
    __host__ __device__ static constexpr int thread_row0(int tid) {
        return (tid / 32 / WARPS_N) * WM + (tid % 32 / LANES_N) * TM;
    }
    __host__ __device__ static constexpr int thread_col0(int tid) {
        return (tid / 32 % WARPS_N) * WN + (tid % 32 % LANES_N) * TN;
    }
    // Accumulator row r of a lane lies `row_offset(r)` rows below its first row: TM contiguous
    // rows, then a jump over the other lanes' rows (a pass of the lane grid) to the next piece.
    __host__ __device__ static constexpr int row_offset(int r) { return (r / TM) * (LANES_M * TM) + r % TM; }
    __host__ __device__ static constexpr int col_offset(int c) { return (c / TN) * (LANES_N * TN) + c % TN; }
};

// The tilings the chapter uses, named once. Parameters: BM, BN, BK, WM, WN, TM, TN, LANES_N, STAGES.
// Step 1: every thread owns one contiguous 8 x 8 block; the 256 threads are a 16 x 16 grid (a warp
// is 2 rows of 16 lanes). Expressed in the same terms: 8 warps stacked vertically, 16 x 128 each.
using TileStep1 = Tiling<128, 128, 8, 16, 128, 8, 8, 16, 1>;
// Step 2 onwards: 4 x 2 warps of 32 x 64, lanes 4 x 8, each lane 2 x 2 pieces of 4 x 4.
using Tile128 = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 1>;
using Tile128Db = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 2>;
using Tile128S3 = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 3>;
using Tile128S4 = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 4>;
using Tile128K16S3 = Tiling<128, 128, 16, 32, 64, 4, 4, 8, 3>;  // 48.8 KB: needs the opt-in too
// Bigger tiles: 8 warps of 64 x 64, each lane 16 x 8 results (4 x 2 pieces), one block per SM.
using Tile128x256Db = Tiling<128, 256, 8, 64, 64, 4, 4, 8, 2>;
using Tile128x256S3 = Tiling<128, 256, 8, 64, 64, 4, 4, 8, 3>;
using Tile128x256S4 = Tiling<128, 256, 8, 64, 64, 4, 4, 8, 4>;  // 48.5 KB: needs the opt-in above 48 KB
using Tile256x128S3 = Tiling<256, 128, 8, 64, 64, 4, 4, 8, 3>;
// 16 warps of 32 x 64 (8 x 8 per lane) on a 128 x 256 tile: one 512-thread block per SM, BK = 16
// so that the 2048 floats of an A tile still split evenly into float4s over 512 threads.
using Tile128x256K16T512 = Tiling<128, 256, 16, 32, 64, 4, 4, 8, 3>;
// Smaller tiles for small or oddly shaped problems: more blocks to spread over the SMs.
using Tile128x64S3 = Tiling<128, 64, 8, 32, 64, 4, 4, 8, 3>;  // 4 warps, 8 x 8 per lane
using Tile64S3 = Tiling<64, 64, 8, 32, 32, 4, 4, 8, 3>;       // 4 warps, 8 x 4 per lane

// ---- 2. What one block works on -------------------------------------------------------------

// One GEMM as the kernel sees it (row-major, packed: lda = K, ldb = ldc = N).
struct GemmArgs {
    int M, N, K;
    float alpha, beta;
    const float* A;
    const float* B;
    float* C;        // with split-K: the workspace, one M x N slice of partial sums per blockIdx.z
    int k_slice;     // the part of K that one blockIdx.z sums over (K when K is not split)
    int group_rows;  // block rasterisation: tile rows per group (1: plain row-by-row order)
};

struct BlockTile {
    int m0, n0;          // first row and column of this block's tile of C
    int k_begin, k_end;  // the columns of A (rows of B) this block sums over
    float* C;            // where this block's results go (C, or its slice of the workspace)
    int row0, col0;      // first row and column of this thread's results inside the tile
};

// Which tile of C a block computes. Blocks start roughly in the order of their linear index
// (x fastest). Taken row by row, the blocks running at one time touch a few rows of A panels but
// every column panel of B. Step 4 walks the tiles in groups of `group_rows` tile rows instead,
// down a group's column first: consecutive blocks share a panel of B, and the group's few panels
// of A are reused for every column, so more of both stay in L2. group_rows = 1 is plain row order.
struct TileIndex {
    int m, n;  // tile row and tile column
};
__host__ __device__ constexpr TileIndex tile_of_block(int linear, int tiles_m, int tiles_n, int group_rows) {
    const int per_group = group_rows * tiles_n;
    const int first_row = linear / per_group * group_rows;
    const int rows_here =
        tiles_m - first_row < group_rows ? tiles_m - first_row : group_rows;  // last group may be short
    const int in_group = linear % per_group;
    return {first_row + in_group % rows_here, in_group / rows_here};
}

template <class Cfg>
__device__ __forceinline__ BlockTile block_tile(const GemmArgs& g) {
    const TileIndex tile =
        tile_of_block(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, g.group_rows);
    BlockTile t;
    t.m0 = tile.m * Cfg::BM;
    t.n0 = tile.n * Cfg::BN;
    t.k_begin = blockIdx.z * g.k_slice;
    t.k_end = ::min(g.K, t.k_begin + g.k_slice);
    t.C = g.C + size_t(blockIdx.z) * g.M * g.N;
    t.row0 = Cfg::thread_row0(threadIdx.x);
    t.col0 = Cfg::thread_col0(threadIdx.x);
    return t;
}

// ---- 3. Moving tiles: global -> (registers ->) shared, guarded ---------------------------------
//
// A tile is moved in chunks of W consecutive floats of one of its rows (W = 4: a float4; W = 1: a
// float). Consecutive threads take consecutive chunks of a row, so a warp's global reads are
// coalesced. A thread's chunks lie ROW_STEP rows apart, all in the same column: its column, and
// the guard on it, stay fixed for the whole kernel.
template <int ROWS, int ROW_FLOATS, int W, int THREADS>
struct TileChunks {
    static constexpr int PER_ROW = ROW_FLOATS / W;      // chunks in one row of the tile
    static constexpr int ROW_STEP = THREADS / PER_ROW;  // rows between two chunks of one thread
    static constexpr int COUNT = ROWS / ROW_STEP;       // chunks per thread
    static_assert(ROW_FLOATS % W == 0, "a tile row must be a whole number of chunks");
    static_assert(THREADS % PER_ROW == 0,
                  "the threads must cover whole tile rows, so that every thread keeps one column");
    static_assert(ROWS % ROW_STEP == 0, "every thread must move the same number of chunks");
    __host__ __device__ static constexpr int row(int tid, int i) { return tid / PER_ROW + i * ROW_STEP; }
    __host__ __device__ static constexpr int col(int tid) { return tid % PER_ROW * W; }
};

// One thread's chunks of the A and B tiles: where they come from, whether they are inside the
// matrices, where they go in shared memory. Set up once per block (a multiply, the guards of the
// fixed row or column), then moved along K one tile at a time by advance(): the main loops do no
// index arithmetic beyond a pointer increment and one compare per chunk. Every register kept here
// is one the accumulators cannot have, so the strides are read from the kernel arguments (the
// constant bank) instead, and the column guards are folded into the k limits.
// A is read in chunks of WA floats along a row of A (along k), B in chunks of WB along a row of B.
// Pointers of chunks outside the matrix are never dereferenced: their loads are predicated off,
// and their cp.async copies read 0 bytes.
template <class Cfg, int WA, int WB>
struct TileSources {
    using AChunks = TileChunks<Cfg::BM, Cfg::BK, WA, Cfg::THREADS>;  // rows: m, columns: k
    using BChunks = TileChunks<Cfg::BK, Cfg::BN, WB, Cfg::THREADS>;  // rows: k, columns: n
    static_assert(AChunks::COUNT <= 32, "a_rows_inside holds one bit per chunk of A");

    const GemmArgs& g;
    const float* a;          // first chunk of A of the current tile; chunk i is i * ROW_STEP rows further
    const float* b;          // first chunk of B of the current tile; chunk i is i * ROW_STEP rows further
    unsigned a_rows_inside;  // bit i: the row of A of chunk i is < M
    int a_k_limit;           // chunk of the tile starting at k0 is inside when k0 < a_k_limit
    int b_k_limit;           // ... when k0 + i * ROW_STEP < b_k_limit (never, if the column is >= N)
    int a_smem, b_smem;      // where the first chunks go in a stage of As and Bs (in floats)

    __device__ __forceinline__ TileSources(const GemmArgs& args, const BlockTile& t) : g(args) {
        const int tid = threadIdx.x;
        const int a_row = t.m0 + AChunks::row(tid, 0), a_k = AChunks::col(tid);
        a = g.A + size_t(a_row) * g.K + t.k_begin + a_k;
        a_rows_inside = 0;
#pragma unroll
        for (int i = 0; i < AChunks::COUNT; ++i)
            if (a_row + i * AChunks::ROW_STEP < g.M) a_rows_inside |= 1u << i;
        a_k_limit = t.k_end - a_k;
        const int b_k = BChunks::row(tid, 0), b_col = t.n0 + BChunks::col(tid);
        b = g.B + size_t(t.k_begin + b_k) * g.N + b_col;
        b_k_limit = b_col < g.N ? t.k_end - b_k : INT_MIN;
        a_smem = a_k * Cfg::A_LD + AChunks::row(tid, 0);  // transposed: As[k][m]
        b_smem = b_k * Cfg::B_LD + BChunks::col(tid);     // as is: Bs[k][n]
    }
    // Chunk i of the tile whose first k is k0 lies inside the matrix (and inside this block's K
    // range). With W = 4 a chunk is wholly inside or wholly outside: the launcher takes the float4
    // path only when K and N are multiples of 4, and chunks start on multiples of 4.
    __device__ __forceinline__ bool a_inside(int i, int k0) const {
        return (a_rows_inside >> i & 1u) && k0 < a_k_limit;
    }
    __device__ __forceinline__ bool b_inside(int i, int k0) const {
        return k0 + i * BChunks::ROW_STEP < b_k_limit;
    }
    __device__ __forceinline__ const float* a_src(int i) const {
        return a + i * AChunks::ROW_STEP * g.K;
    }
    __device__ __forceinline__ const float* b_src(int i) const {
        return b + i * BChunks::ROW_STEP * g.N;
    }
    __device__ __forceinline__ void advance() {
        a += Cfg::BK;        // BK columns to the right in A
        b += Cfg::BK * g.N;  // BK rows down in B
    }
};

// Reads W floats, or zeros when the chunk is outside the matrix. Zeros add nothing to a dot
// product, so edge tiles need no other special case.
template <int W>
__device__ __forceinline__ void load_or_zero(float (&dst)[W], const float* src, bool inside) {
    if constexpr (W == 4) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (inside) v = *reinterpret_cast<const float4*>(src);  // LDG.E.128
        dst[0] = v.x;
        dst[1] = v.y;
        dst[2] = v.z;
        dst[3] = v.w;
    } else {
        dst[0] = inside ? *src : 0.0f;
    }
}

// Steps 1 to 3a: a thread's share of the next A and B tiles, held in registers between the global
// load and the shared store (in step 3a: while the current tile is being multiplied).
template <class Cfg, bool VEC>
struct StagedTiles {
    static constexpr int W = VEC ? 4 : 1;
    using Sources = TileSources<Cfg, W, W>;
    float a[Sources::AChunks::COUNT][W];
    float b[Sources::BChunks::COUNT][W];

    __device__ __forceinline__ void load(const Sources& src, int k0) {
#pragma unroll
        for (int i = 0; i < Sources::AChunks::COUNT; ++i)
            load_or_zero<W>(a[i], src.a_src(i), src.a_inside(i, k0));
#pragma unroll
        for (int i = 0; i < Sources::BChunks::COUNT; ++i)
            load_or_zero<W>(b[i], src.b_src(i), src.b_inside(i, k0));
    }

    // A goes in transposed: the W floats of row m, columns k..k+W-1, land in W rows of As, column
    // m. These 4-byte stores (STS.32) are the price of LDS.128 reads later. Bank check, BK = 8,
    // W = 4: one store instruction of a warp writes rows k and k + 4 (alternate lanes) for 16
    // consecutive m. Without padding both rows start in bank 0 (BM = 128 is a multiple of 32) and
    // lane pairs collide; one float4 of padding (A_LD = BM + 4) moves row k + 4 by 16 banks.
    __device__ __forceinline__ void store(const Sources& src, float* As, float* Bs) const {
#pragma unroll
        for (int i = 0; i < Sources::AChunks::COUNT; ++i)
#pragma unroll
            for (int j = 0; j < W; ++j)
                As[src.a_smem + j * Cfg::A_LD + i * Sources::AChunks::ROW_STEP] = a[i][j];
#pragma unroll
        for (int i = 0; i < Sources::BChunks::COUNT; ++i) {
            float* dst = &Bs[src.b_smem + i * Sources::BChunks::ROW_STEP * Cfg::B_LD];
            if constexpr (W == 4)  // rows of B stay rows: one STS.128
                *reinterpret_cast<float4*>(dst) = make_float4(b[i][0], b[i][1], b[i][2], b[i][3]);
            else
                *dst = b[i][0];
        }
    }
};

// Step 3b: cp.async copies global memory into shared memory without passing through registers,
// and the thread goes on while the copy is in flight. Copies are grouped (commit_group) and a
// thread waits until at most N of its groups are still pending (wait_group N). With src-size 0
// nothing is read (the source address is not touched) and the destination is filled with zeros:
// that is the guard.
// Before Ampere (sm_75) there is no cp.async; the same calls become ordinary loads and stores,
// which the pipeline's barriers make correct, only without the overlap.
template <int W>
__device__ __forceinline__ void copy_async_or_zero(float* dst, const float* src, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    const size_t src_global = __cvta_generic_to_global(src);
    const int src_bytes = inside ? 4 * W : 0;
    if constexpr (W == 4)  // 16 bytes, cached in L2 only (.cg): LDGSTS.E.BYPASS.128
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_shared), "l"(src_global),
                     "r"(src_bytes)
                     : "memory");
    else  // 4 bytes (.ca: the only choice below 16 bytes): LDGSTS.E
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_shared), "l"(src_global),
                     "r"(src_bytes)
                     : "memory");
#else
    float v[W];
    load_or_zero<W>(v, src, inside);
#pragma unroll
    for (int j = 0; j < W; ++j) dst[j] = v[j];
#endif
}

// Committing and waiting for cp.async groups: wb::cp_async_commit / wb::cp_async_wait<N> (common/gemm_device.cuh).

// The sources of the cp.async loop. A cannot use 16-byte copies: a copy moves 16 contiguous bytes
// to 16 contiguous bytes, and the transpose scatters them. So A moves in 4-byte copies, one element
// each. With BK = 8 a warp then reads 4 rows x 32 bytes of A (4 full sectors), and its stores,
// As[k][m] for k = 0..7 and 4 consecutive m, hit 32 different banks (the padding shifts row k by
// 4k banks). B keeps its layout and moves 16 bytes at a time when aligned.
template <class Cfg, bool VEC>
using AsyncSources = TileSources<Cfg, 1, VEC ? 4 : 1>;

// Issues the copies of the A and B tiles whose first k is k0.
template <class Cfg, bool VEC>
__device__ __forceinline__ void copy_tiles_async(const AsyncSources<Cfg, VEC>& src, int k0, float* As,
                                                 float* Bs) {
    using Src = AsyncSources<Cfg, VEC>;
#pragma unroll
    for (int i = 0; i < Src::AChunks::COUNT; ++i)
        copy_async_or_zero<1>(&As[src.a_smem + i * Src::AChunks::ROW_STEP], src.a_src(i),
                              src.a_inside(i, k0));
#pragma unroll
    for (int i = 0; i < Src::BChunks::COUNT; ++i)
        copy_async_or_zero<VEC ? 4 : 1>(&Bs[src.b_smem + i * Src::BChunks::ROW_STEP * Cfg::B_LD],
                                        src.b_src(i), src.b_inside(i, k0));
}

// ---- 4. Computing on a tile, the three main loops, and the epilogue ----------------------------

template <class Cfg>
using Accumulators = float[Cfg::THREAD_M][Cfg::THREAD_N];

__device__ __forceinline__ void load_float4(float* dst, const float* src) {
    const float4 v = *reinterpret_cast<const float4*>(src);  // LDS.128
    dst[0] = v.x;
    dst[1] = v.y;
    dst[2] = v.z;
    dst[3] = v.w;
}

// The heart of every variant: for each k of the tile, a lane reads its THREAD_M values of A (a
// column of As, contiguous thanks to the transpose) and THREAD_N values of B, 4 at a time, and
// adds their outer product to its accumulators: THREAD_M * THREAD_N FFMA per
// (THREAD_M + THREAD_N) / 4 LDS.128. Fully unrolled: all indices are constants, the accumulators
// stay in registers, and the compiler can read the next k's values while this k's FFMAs issue.
// In step 2's layout the 8 lanes of a lane-grid row read 8 consecutive float4 of B (128 bytes,
// one pass of the shared-memory banks) and the 4 lane rows read 4 consecutive float4 of A, each
// broadcast to 8 lanes. In step 1's layout 16 lanes read float4s 32 bytes apart: bank conflicts.
template <class Cfg>
__device__ __forceinline__ void multiply_tile(const float* As, const float* Bs, const BlockTile& t,
                                              Accumulators<Cfg>& acc) {
    // BEGIN SOLUTION: per k: THREAD_M of A, THREAD_N of B via load_float4 (row/col_offset); fmaf
#pragma unroll
    for (int k = 0; k < Cfg::BK; ++k) {
        float a[Cfg::THREAD_M], b[Cfg::THREAD_N];
#pragma unroll
        for (int r = 0; r < Cfg::THREAD_M; r += 4)
            load_float4(&a[r], &As[k * Cfg::A_LD + t.row0 + Cfg::row_offset(r)]);
#pragma unroll
        for (int c = 0; c < Cfg::THREAD_N; c += 4)
            load_float4(&b[c], &Bs[k * Cfg::B_LD + t.col0 + Cfg::col_offset(c)]);
#pragma unroll
        for (int r = 0; r < Cfg::THREAD_M; ++r)
#pragma unroll
            for (int c = 0; c < Cfg::THREAD_N; ++c) acc[r][c] = fmaf(a[r], b[c], acc[r][c]);
    }
    // END SOLUTION
}

template <class Cfg>
__device__ __forceinline__ float* a_stage(float* smem, int s) {
    return smem + s * Cfg::A_STAGE;
}
template <class Cfg>
__device__ __forceinline__ float* b_stage(float* smem, int s) {
    return smem + Cfg::STAGES * Cfg::A_STAGE + s * Cfg::B_STAGE;
}

__device__ __forceinline__ int k_tiles(const BlockTile& t, int bk) {
    return t.k_end > t.k_begin ? (t.k_end - t.k_begin + bk - 1) / bk : 0;
}

// Steps 1 and 2: load a tile, wait for everyone, compute, wait again (nobody may overwrite the
// tile while a slower warp still reads it). While a block waits on its loads, only the other
// resident blocks keep the FP32 units busy.
template <class Cfg, bool VEC>
__device__ __forceinline__ void mainloop_single_buffer(const GemmArgs& g, const BlockTile& t, float* smem,
                                                       Accumulators<Cfg>& acc) {
    static_assert(Cfg::STAGES == 1, "the single-buffer loop uses one stage");
    // BEGIN SOLUTION: per BK step: tile.load(src, k0), src.advance(), tile.store, sync, multiply, sync
    float* As = a_stage<Cfg>(smem, 0);
    float* Bs = b_stage<Cfg>(smem, 0);
    typename StagedTiles<Cfg, VEC>::Sources src(g, t);
    StagedTiles<Cfg, VEC> tile;
    for (int k0 = t.k_begin; k0 < t.k_end; k0 += Cfg::BK) {
        tile.load(src, k0);
        src.advance();
        tile.store(src, As, Bs);
        __syncthreads();
        multiply_tile<Cfg>(As, Bs, t, acc);
        __syncthreads();
    }
    // END SOLUTION
}

// Step 3a: two shared buffers. The global loads of tile i + 1 are issued before the FFMAs of tile
// i, whose hundreds of cycles hide their latency; the registers are written to the other buffer
// afterwards. That buffer was last read during tile i - 1, and every thread has passed the
// barrier that ended tile i - 1, so one barrier per K step suffices.
template <class Cfg, bool VEC>
__device__ __forceinline__ void mainloop_prefetch_regs(const GemmArgs& g, const BlockTile& t, float* smem,
                                                       Accumulators<Cfg>& acc) {
    static_assert(Cfg::STAGES == 2, "register-staged double buffering uses two stages");
    const int tiles = k_tiles(t, Cfg::BK);
    typename StagedTiles<Cfg, VEC>::Sources src(g, t);
    StagedTiles<Cfg, VEC> next;
    next.load(src, t.k_begin);
    src.advance();
    next.store(src, a_stage<Cfg>(smem, 0), b_stage<Cfg>(smem, 0));
    __syncthreads();
    int cur = 0;                                  // the stage holding tile i - 1
    for (int i = 1; i < tiles; ++i) {             // the last tile is peeled off: no "is there a next?" test
        next.load(src, t.k_begin + i * Cfg::BK);  // in flight during the FFMAs below
        src.advance();
        multiply_tile<Cfg>(a_stage<Cfg>(smem, cur), b_stage<Cfg>(smem, cur), t, acc);
        next.store(src, a_stage<Cfg>(smem, 1 - cur), b_stage<Cfg>(smem, 1 - cur));
        __syncthreads();
        cur = 1 - cur;
    }
    if (tiles > 0) multiply_tile<Cfg>(a_stage<Cfg>(smem, cur), b_stage<Cfg>(smem, cur), t, acc);
}

// Step 3b: a ring of STAGES buffers filled by cp.async, STAGES - 1 tiles ahead of the compute.
// Group accounting: every iteration commits exactly one group (possibly empty near the end), so
// before iteration i the groups of tiles 0 .. i + STAGES - 2 were committed, and waiting until at
// most STAGES - 2 are pending means tile i has landed, for this thread's copies. The barrier then
// makes it true for every thread, and also tells us everyone finished computing tile i - 1, whose
// buffer ((i - 1) % STAGES == (i + STAGES - 1) % STAGES) is refilled next: one barrier per K step.
template <class Cfg, bool VEC>
__device__ __forceinline__ void mainloop_cp_async(const GemmArgs& g, const BlockTile& t, float* smem,
                                                  Accumulators<Cfg>& acc) {
    static_assert(Cfg::STAGES >= 2, "the cp.async pipeline needs at least two stages");
    const int tiles = k_tiles(t, Cfg::BK);
    AsyncSources<Cfg, VEC> src(g, t);
#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) {
        if (s < tiles) {
            copy_tiles_async<Cfg, VEC>(src, t.k_begin + s * Cfg::BK, a_stage<Cfg>(smem, s),
                                       b_stage<Cfg>(smem, s));
            src.advance();
        }
        wb::cp_async_commit();
    }
    int read = 0, write = Cfg::STAGES - 1;  // the stages of tile i and of tile i + STAGES - 1
    for (int i = 0; i < tiles; ++i) {
        wb::cp_async_wait<Cfg::STAGES - 2>();
        __syncthreads();
        const int ahead = i + Cfg::STAGES - 1;
        if (ahead < tiles) {
            copy_tiles_async<Cfg, VEC>(src, t.k_begin + ahead * Cfg::BK, a_stage<Cfg>(smem, write),
                                       b_stage<Cfg>(smem, write));
            src.advance();
        }
        wb::cp_async_commit();
        multiply_tile<Cfg>(a_stage<Cfg>(smem, read), b_stage<Cfg>(smem, read), t, acc);
        read = read + 1 == Cfg::STAGES ? 0 : read + 1;  // counters, not i % STAGES: no division
        write = write + 1 == Cfg::STAGES ? 0 : write + 1;
    }
    wb::cp_async_wait<0>();  // nothing real is pending here, only empty groups; leave no copy behind
}

// The epilogue: C = alpha * acc + beta * C with wb::store_c semantics (beta == 0: C is not read).
// A lane writes 4 consecutive columns at a time; in step 2's layout the 8 lanes of a lane-grid row
// write 8 consecutive float4: a quarter warp fills one 128-byte line of C (STG.E.128).
template <class Cfg, bool VEC>
__device__ __forceinline__ void store_tile(const GemmArgs& g, const BlockTile& t,
                                           const Accumulators<Cfg>& acc) {
#pragma unroll
    for (int r = 0; r < Cfg::THREAD_M; ++r) {
        const int row = t.m0 + t.row0 + Cfg::row_offset(r);
        if (row >= g.M) continue;
        float* c_row = t.C + row * g.N;
#pragma unroll
        for (int c = 0; c < Cfg::THREAD_N; c += 4) {
            const int col = t.n0 + t.col0 + Cfg::col_offset(c);
            float* out = c_row + col;
            if constexpr (VEC) {
                if (col >= g.N) continue;  // N % 4 == 0: the 4 columns are all in or all out
                float4 v = make_float4(g.alpha * acc[r][c], g.alpha * acc[r][c + 1], g.alpha * acc[r][c + 2],
                                       g.alpha * acc[r][c + 3]);
                if (g.beta != 0.0f) {
                    const float4 old = *reinterpret_cast<const float4*>(out);
                    v.x += g.beta * old.x;
                    v.y += g.beta * old.y;
                    v.z += g.beta * old.z;
                    v.w += g.beta * old.w;
                }
                *reinterpret_cast<float4*>(out) = v;
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < g.N) wb::store_c(out + j, acc[r][c + j], g.alpha, g.beta);
            }
        }
    }
}

// ---- 5. The kernel ------------------------------------------------------------------------------

enum class Pipeline {
    single_buffer,  // steps 1 and 2
    prefetch_regs,  // step 3a
    cp_async,       // step 3b
};

// Cfg: a Tiling (section 1). P: the main loop (section 4). VEC: float4 global loads and stores of
// A, B and C (true) or 4-byte ones (false, for unaligned data); shared memory reads are float4
// either way. The shared memory is dynamic (Cfg::SMEM_BYTES), so tiles above 48 KB work too.
template <class Cfg, Pipeline P, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) sgemm_float4(GemmArgs g) {
    extern __shared__ float4 smem_float4[];  // declared as float4: 16-byte aligned
    float* smem = reinterpret_cast<float*>(smem_float4);
    const BlockTile t = block_tile<Cfg>(g);
    float acc[Cfg::THREAD_M][Cfg::THREAD_N] = {};
    if constexpr (P == Pipeline::single_buffer)
        mainloop_single_buffer<Cfg, VEC>(g, t, smem, acc);
    else if constexpr (P == Pipeline::prefetch_regs)
        mainloop_prefetch_regs<Cfg, VEC>(g, t, smem, acc);
    else
        mainloop_cp_async<Cfg, VEC>(g, t, smem, acc);
    store_tile<Cfg, VEC>(g, t, acc);
}

// Step 5's second kernel: C = alpha * (sum of the slices) + beta * C, one element per thread
// (memory-bound and short next to the GEMM). The slices are added in a fixed order, so the result
// is the same on every run, unlike atomicAdd into C.
__global__ void splitk_sum_slices(int MN, int slices, float alpha, const float* __restrict__ parts,
                                  float beta, float* C) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= MN) return;
    float sum = 0.0f;
    for (int s = 0; s < slices; ++s) sum += parts[size_t(s) * MN + i];
    wb::store_c(&C[i], sum, alpha, beta);
}

// ---- 6. Launchers --------------------------------------------------------------------------------

// The float4 path reads and writes 16 bytes at a time: every row of A (K floats), B and C (N
// floats) must start on a 16-byte boundary, and so must the pointers. A sub-matrix view such as
// A + 1, or K = 4097, falls back to 4-byte accesses with the same tiling.
inline bool float4_path_ok(int N, int K, const float* A, const float* B, const float* C) {
    auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    return K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C);
}

struct GpuFacts {
    int cc;   // 90 for sm_90
    int sms;  // multiprocessors
};
inline GpuFacts current_gpu() {
    int dev = 0, major = 0, minor = 0, sms = 0;
    WB_CUDA_CHECK(cudaGetDevice(&dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    return {major * 10 + minor, sms};
}

// Split-K needs room for the partial sums: one buffer per process, grown on demand (the first,
// untimed warm-up launch pays for the allocation). Launches on several streams at once would need
// one each.
inline float* splitk_workspace(size_t floats) {
    static wb::DeviceBuffer<float> buffer;
    if (buffer.size() < floats) buffer = wb::DeviceBuffer<float>(floats);
    return buffer.get();
}

// How many K slices fill the GPU: only when the tiles of C alone leave SMs idle, no more than
// fits at once, and no slice shorter than kMinSliceK (below that the pipeline never fills).
constexpr int kSplitAuto = 0;
constexpr int kMaxSplits = 16;
constexpr int kMinSliceK = 256;
template <class Cfg>
int auto_splits(int M, int N, int K, int sms) {
    const int tiles = wb::ceil_div(M, Cfg::BM) * wb::ceil_div(N, Cfg::BN);
    if (tiles >= sms) return 1;
    const int fill = sms * Cfg::MIN_BLOCKS / tiles;
    return std::max(1, std::min({fill, K / kMinSliceK, kMaxSplits}));
}

template <class Cfg, Pipeline P, bool VEC>
void launch_sgemm_float4(const GemmArgs& g, dim3 grid, cudaStream_t stream) {
    const auto kernel = sgemm_float4<Cfg, P, VEC>;
    if constexpr (Cfg::SMEM_BYTES > 48 * 1024) {
        // Above 48 KB a kernel must opt in; once per kernel (and per process: one GPU assumed).
        static const bool raised = [&] {
            WB_CUDA_CHECK(
                cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES));
            return true;
        }();
        (void)raised;
    }
    kernel<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, stream>>>(g);
    WB_LAUNCH_CHECK();
}

// The launcher of every variant and configuration. SPLITS: K slices (1: none, kSplitAuto: chosen
// by auto_splits). GROUP: tile rows per rasterisation group (1: none). It checks the alignment
// itself and takes the 4-byte path when the float4 one would be unsafe.
template <class Cfg, Pipeline P, int SPLITS = 1, int GROUP = 1>
void sgemm_float4_launcher(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           float* C, cudaStream_t stream) {
    static_assert(SPLITS >= 0 && SPLITS <= kMaxSplits,
                  "SPLITS: 1 for none, 0 for automatic, at most kMaxSplits");
    static_assert(GROUP >= 1, "GROUP: at least one tile row per group");
    GemmArgs g{M, N, K, alpha, beta, A, B, C, K, GROUP};
    dim3 grid(wb::ceil_div(N, Cfg::BN), wb::ceil_div(M, Cfg::BM), 1);
    const int splits = SPLITS == kSplitAuto ? auto_splits<Cfg>(M, N, K, current_gpu().sms) : SPLITS;
    if (splits > 1) {
        // Slices are whole BK tiles, so each starts on a float4 boundary; the last may be shorter.
        g.k_slice = wb::ceil_div(wb::ceil_div(K, splits), Cfg::BK) * Cfg::BK;
        grid.z = wb::ceil_div(K, g.k_slice);
    }
    if (grid.z > 1) {  // the GEMM writes raw partial sums; alpha and beta are applied when adding
        g.C = splitk_workspace(size_t(grid.z) * M * N);
        g.alpha = 1.0f;
        g.beta = 0.0f;
    }
    if (float4_path_ok(N, K, A, B, g.C))
        launch_sgemm_float4<Cfg, P, true>(g, grid, stream);
    else
        launch_sgemm_float4<Cfg, P, false>(g, grid, stream);
    if (grid.z > 1) {
        const int MN = M * N;
        splitk_sum_slices<<<wb::ceil_div(MN, 256), 256, 0, stream>>>(MN, int(grid.z), alpha, g.C, beta, C);
        WB_LAUNCH_CHECK();
    }
}

// The resources the harness prints for a configuration (the float4 instantiation).
template <class Cfg, Pipeline P>
wb::KernelInfo kernel_info() {
    return {(const void*)sgemm_float4<Cfg, P, true>, Cfg::THREADS, size_t(Cfg::SMEM_BYTES)};
}

// ---- 7. The configurations for --tune --------------------------------------------------------------
// Every compiled-in configuration. `--tune` runs them all on the requested shapes and prints the
// fastest per shape; the lines of kDefaultChoice below name rows of this table. Names:
//   regs2_BMxBNxBK    register-staged double buffering (step 3a)
//   asyncS_BMxBNxBK   cp.async ring of S stages (step 3b)
//   ..._g8            tiles walked in groups of 8 tile rows (step 4)
//   ..._skN           K split in N slices, ..._skauto: split only when SMs would idle (step 5)
// Warp tiles: 32 x 64 for 128 x 128, 128 x 64 and the 512-thread 128 x 256 x 16 tiles, 64 x 64 for
// the other 128 x 256 and 256 x 128 tiles, 32 x 32 for 64 x 64 (the Tile... aliases, section 1).
inline const wb::SgemmVariant kTuneConfigs[] = {
    {"regs2_128x128x8", sgemm_float4_launcher<Tile128Db, Pipeline::prefetch_regs>,
     "register-staged double buffering, 8x8 per thread", wb::Precision::fp32,
     kernel_info<Tile128Db, Pipeline::prefetch_regs>()},
    {"regs2_128x256x8", sgemm_float4_launcher<Tile128x256Db, Pipeline::prefetch_regs>,
     "register-staged double buffering, 16x8 per thread", wb::Precision::fp32,
     kernel_info<Tile128x256Db, Pipeline::prefetch_regs>()},
    {"async3_128x128x8", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async>,
     "cp.async, 3 stages, 8x8 per thread", wb::Precision::fp32, kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"async4_128x128x8", sgemm_float4_launcher<Tile128S4, Pipeline::cp_async>,
     "cp.async, 4 stages, 8x8 per thread", wb::Precision::fp32, kernel_info<Tile128S4, Pipeline::cp_async>()},
    {"async3_128x128x16", sgemm_float4_launcher<Tile128K16S3, Pipeline::cp_async>,
     "cp.async, BK = 16: half the barriers per FFMA", wb::Precision::fp32,
     kernel_info<Tile128K16S3, Pipeline::cp_async>()},
    {"async3_128x256x8", sgemm_float4_launcher<Tile128x256S3, Pipeline::cp_async>,
     "cp.async, 3 stages, 16x8 per thread", wb::Precision::fp32,
     kernel_info<Tile128x256S3, Pipeline::cp_async>()},
    {"async4_128x256x8", sgemm_float4_launcher<Tile128x256S4, Pipeline::cp_async>,
     "cp.async, 4 stages (48.5 KB), 16x8 per thread", wb::Precision::fp32,
     kernel_info<Tile128x256S4, Pipeline::cp_async>()},
    {"async3_128x256x16", sgemm_float4_launcher<Tile128x256K16T512, Pipeline::cp_async>,
     "cp.async, 3 stages (72.8 KB), 512 threads, 8x8 per thread", wb::Precision::fp32,
     kernel_info<Tile128x256K16T512, Pipeline::cp_async>(), 80},  // sm_75 allows 64 KB per block
    {"async3_256x128x8", sgemm_float4_launcher<Tile256x128S3, Pipeline::cp_async>,
     "cp.async, 3 stages, 16x8 per thread", wb::Precision::fp32,
     kernel_info<Tile256x128S3, Pipeline::cp_async>()},
    {"async3_128x64x8", sgemm_float4_launcher<Tile128x64S3, Pipeline::cp_async>,
     "cp.async, 4 warps, 8x8 per thread: 2x the blocks of 128x128", wb::Precision::fp32,
     kernel_info<Tile128x64S3, Pipeline::cp_async>()},
    {"async3_64x64x8", sgemm_float4_launcher<Tile64S3, Pipeline::cp_async>,
     "cp.async, 4 warps, 8x4 per thread: 4x the blocks of 128x128", wb::Precision::fp32,
     kernel_info<Tile64S3, Pipeline::cp_async>()},
    {"async3_128x128x8_g8", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async, 1, 8>,
     "cp.async, 3 stages, tiles walked in groups of 8 rows", wb::Precision::fp32,
     kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"async3_128x256x8_g8", sgemm_float4_launcher<Tile128x256S3, Pipeline::cp_async, 1, 8>,
     "cp.async, 3 stages, 16x8 per thread, groups of 8 rows", wb::Precision::fp32,
     kernel_info<Tile128x256S3, Pipeline::cp_async>()},
    {"async3_128x128x8_sk2", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async, 2>,
     "cp.async, K split in 2 slices", wb::Precision::fp32, kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"async3_128x128x8_sk4", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async, 4>,
     "cp.async, K split in 4 slices", wb::Precision::fp32, kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"async3_128x128x8_skauto", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async, kSplitAuto>,
     "cp.async, K split when the tiles alone leave SMs idle", wb::Precision::fp32,
     kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"async3_64x64x8_skauto", sgemm_float4_launcher<Tile64S3, Pipeline::cp_async, kSplitAuto>,
     "cp.async, 64x64 tiles, K split when SMs would idle", wb::Precision::fp32,
     kernel_info<Tile64S3, Pipeline::cp_async>()},
};

// ---- 8. The default configuration per compute capability -----------------------------------------
// One line per GPU generation: the configuration for a C with enough 128 x 128 tiles to fill every
// SM, and the one for a C with fewer. Names are rows of kTuneConfigs: after `--tune` on your GPU,
// copy the winners' names here. The first line whose min_cc the GPU reaches is used.
struct DefaultChoice {
    int min_cc;
    const char* many_tiles;
    const char* few_tiles;
};
inline const DefaultChoice kDefaultChoice[] = {
    {90, "async3_128x256x8", "async3_128x128x8_skauto"},  // Hopper: H200 `make tune`, 2026-11-29
    {80, "async3_128x128x8", "async3_128x128x8_skauto"},  // Ampere, Ada
    {0, "regs2_128x128x8", "regs2_128x128x8"},            // Turing: no cp.async
};

inline const DefaultChoice& default_choice(int cc) {
    for (const DefaultChoice& d : kDefaultChoice)
        if (cc >= d.min_cc) return d;
    return kDefaultChoice[std::size(kDefaultChoice) - 1];
}

inline const wb::SgemmVariant& tune_config(const char* name) {
    for (const wb::SgemmVariant& v : kTuneConfigs)
        if (std::strcmp(v.name, name) == 0) return v;
    throw std::invalid_argument(std::string("kDefaultChoice names '") + name +
                                "', which is not in kTuneConfigs");
}

inline const wb::SgemmVariant& default_config(int cc, int sms, int M, int N) {
    const DefaultChoice& d = default_choice(cc);
    const bool few_tiles = wb::ceil_div(M, 128) * wb::ceil_div(N, 128) < sms;
    return tune_config(few_tiles ? d.few_tiles : d.many_tiles);
}

inline void launch_best(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                        float* C, cudaStream_t stream) {
    const GpuFacts gpu = current_gpu();
    default_config(gpu.cc, gpu.sms, M, N).run(M, N, K, alpha, A, B, beta, C, stream);
}

// ---- 9. The ladder ---------------------------------------------------------------------------------
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"float4_transposed_a", sgemm_float4_launcher<TileStep1, Pipeline::single_buffer>,
     "LDG.128 tile loads, A stored transposed for LDS.128; 8x8 contiguous per thread", wb::Precision::fp32,
     kernel_info<TileStep1, Pipeline::single_buffer>()},
    {"warptile", sgemm_float4_launcher<Tile128, Pipeline::single_buffer>,
     "warp tiles of 32x64, lanes 4x8, 2x2 pieces of 4x4: conflict-free LDS.128", wb::Precision::fp32,
     kernel_info<Tile128, Pipeline::single_buffer>()},
    {"warptile_db_regs", sgemm_float4_launcher<Tile128Db, Pipeline::prefetch_regs>,
     "+ double buffering: next tile staged in registers, one barrier per K step", wb::Precision::fp32,
     kernel_info<Tile128Db, Pipeline::prefetch_regs>()},
    {"warptile_cp_async", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async>,
     "+ cp.async ring of 3 stages, global -> shared without registers", wb::Precision::fp32,
     kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"warptile_cp_async_swizzle", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async, 1, 8>,
     "+ blocks walk the tiles in groups of 8 rows, for L2 reuse", wb::Precision::fp32,
     kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"splitk", sgemm_float4_launcher<Tile128S3, Pipeline::cp_async, kSplitAuto>,
     "+ K split over blocks when C has fewer tiles than SMs, slices added by a 2nd kernel",
     wb::Precision::fp32, kernel_info<Tile128S3, Pipeline::cp_async>()},
    {"best", launch_best, "the default configuration for this GPU and shape (kDefaultChoice)",
     wb::Precision::fp32, tune_config(kDefaultChoice[0].many_tiles).info},
};
