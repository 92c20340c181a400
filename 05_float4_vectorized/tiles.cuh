// tiles.cuh - chapter 05: what one block works on, and how its A and B tiles travel from global
// memory into shared memory (through registers in steps 1 to 3a, by cp.async in step 3b).
//
// Everything here is a template on the tile configuration Cfg (a Tiling of kernels.cuh). The
// pieces every tiled chapter shares (GemmArgs, the block order, TileChunks, cp.async) come from
// common/gemm_tiles.cuh; what is particular to this chapter's layout (the transposed A tile, the
// guards folded into k limits) is here.
#pragma once

#include <climits>
#include <cstddef>

#include "gemm_tiles.cuh"

namespace ch05 {

// ---- What one block works on ----------------------------------------------------------------------

// The kernel arguments: one GEMM (wb::GemmArgs, row-major and packed), plus the part of K that
// one blockIdx.z sums over. Without split-K, k_slice = K and C is the real C; with split-K, C is
// the workspace, one M x N slice of partial sums per blockIdx.z.
struct SplitArgs : wb::GemmArgs<float> {
    int k_slice;
};

struct BlockTile {
    int m0, n0;          // first row and column of this block's tile of C
    int k_begin, k_end;  // the columns of A (rows of B) this block sums over
    float* C;            // where this block's results go (C, or its slice of the workspace)
    int row0, col0;      // first row and column of this thread's results inside the tile
};

// Step 4's block order (wb::this_block_tile: bands of group_rows tile rows) picks the tile;
// blockIdx.z picks the slice of K.
template <class Cfg>
__device__ __forceinline__ BlockTile block_tile(const SplitArgs& g) {
    const wb::TileIndex tile = wb::this_block_tile(g.group_rows);
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

// ---- One thread's sources ---------------------------------------------------------------------------
//
// A tile is moved in chunks of WA (A) or WB (B) consecutive floats of one of its rows
// (wb::TileChunks: consecutive threads take consecutive chunks, a thread keeps one column).
// TileSources holds where one thread's chunks come from, whether they are inside the matrices,
// and where they go in shared memory. Set up once per block (a multiply, the guards of the fixed
// row or column), then moved along K one tile at a time by advance(): the main loops do no index
// arithmetic beyond a pointer increment and one compare per chunk. Every register kept here is one
// the accumulators cannot have, so the strides are read from the kernel arguments (the constant
// bank) instead, and the column guards are folded into the k limits.
// Pointers of chunks outside the matrix are never dereferenced: their loads are predicated off,
// and their cp.async copies read 0 bytes.
template <class Cfg, int WA, int WB>
struct TileSources {
    using AChunks = wb::TileChunks<Cfg::BM, Cfg::BK, WA, Cfg::THREADS>;  // rows: m, columns: k
    using BChunks = wb::TileChunks<Cfg::BK, Cfg::BN, WB, Cfg::THREADS>;  // rows: k, columns: n
    static_assert(AChunks::PER_THREAD <= 32, "a_rows_inside holds one bit per chunk of A");

    const SplitArgs& g;
    const float* a;          // first chunk of A of the current tile; chunk i is i * ROW_STEP rows further
    const float* b;          // first chunk of B of the current tile; chunk i is i * ROW_STEP rows further
    unsigned a_rows_inside;  // bit i: the row of A of chunk i is < M
    int a_k_limit;           // chunk of the tile starting at k0 is inside when k0 < a_k_limit
    int b_k_limit;           // ... when k0 + i * ROW_STEP < b_k_limit (never, if the column is >= N)
    int a_smem, b_smem;      // where the first chunks go in a stage of As and Bs (in floats)

    __device__ __forceinline__ TileSources(const SplitArgs& args, const BlockTile& t) : g(args) {
        const int tid = threadIdx.x;
        const int a_row = t.m0 + AChunks::row(tid, 0), a_k = AChunks::col(tid);
        a = g.A + size_t(a_row) * g.K + t.k_begin + a_k;
        a_rows_inside = 0;
#pragma unroll
        for (int i = 0; i < AChunks::PER_THREAD; ++i)
            if (a_row + i * AChunks::ROW_STEP < g.M) a_rows_inside |= 1u << i;
        a_k_limit = t.k_end - a_k;
        const int b_k = BChunks::row(tid, 0), b_col = t.n0 + BChunks::col(tid);
        b = g.B + size_t(t.k_begin + b_k) * g.N + b_col;
        b_k_limit = b_col < g.N ? t.k_end - b_k : INT_MIN;
        a_smem = a_k * Cfg::A_LD + AChunks::row(tid, 0);  // transposed: As[k][m]
        b_smem = b_k * Cfg::B_LD + BChunks::col(tid);     // as is: Bs[k][n]
    }
    // Chunk i of the tile whose first k is k0 lies inside the matrix (and inside this block's K
    // range). With 4-float chunks a chunk is wholly inside or wholly outside: the launcher takes
    // the float4 path only when K and N are multiples of 4, and chunks start on multiples of 4.
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

// ---- Steps 1 to 3a: through registers ------------------------------------------------------------

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

// A thread's share of the next A and B tiles, held in registers between the global load and the
// shared store (in step 3a: while the current tile is being multiplied).
template <class Cfg, bool VEC>
struct StagedTiles {
    static constexpr int W = VEC ? 4 : 1;
    using Sources = TileSources<Cfg, W, W>;
    float a[Sources::AChunks::PER_THREAD][W];
    float b[Sources::BChunks::PER_THREAD][W];

    __device__ __forceinline__ void load(const Sources& src, int k0) {
#pragma unroll
        for (int i = 0; i < Sources::AChunks::PER_THREAD; ++i)
            load_or_zero<W>(a[i], src.a_src(i), src.a_inside(i, k0));
#pragma unroll
        for (int i = 0; i < Sources::BChunks::PER_THREAD; ++i)
            load_or_zero<W>(b[i], src.b_src(i), src.b_inside(i, k0));
    }

    // A goes in transposed: the W floats of row m, columns k..k+W-1, land in W rows of As, column
    // m. These 4-byte stores (STS.32) are the price of LDS.128 reads later. Bank check, BK = 8,
    // W = 4: one store instruction of a warp writes rows k and k + 4 (alternate lanes) for 16
    // consecutive m. Without padding both rows start in bank 0 (BM = 128 is a multiple of 32) and
    // lane pairs collide; one float4 of padding (A_LD = BM + 4) moves row k + 4 by 16 banks.
    __device__ __forceinline__ void store(const Sources& src, float* As, float* Bs) const {
#pragma unroll
        for (int i = 0; i < Sources::AChunks::PER_THREAD; ++i)
#pragma unroll
            for (int j = 0; j < W; ++j)
                As[src.a_smem + j * Cfg::A_LD + i * Sources::AChunks::ROW_STEP] = a[i][j];
#pragma unroll
        for (int i = 0; i < Sources::BChunks::PER_THREAD; ++i) {
            float* dst = &Bs[src.b_smem + i * Sources::BChunks::ROW_STEP * Cfg::B_LD];
            if constexpr (W == 4)  // rows of B stay rows: one STS.128
                *reinterpret_cast<float4*>(dst) = make_float4(b[i][0], b[i][1], b[i][2], b[i][3]);
            else
                *dst = b[i][0];
        }
    }
};

// ---- Step 3b: cp.async, global -> shared without registers ----------------------------------------
//
// wb::cp_async_16 / wb::cp_async_4 (common/gemm_tiles.cuh) start a copy and let the thread go on;
// a source size of 0 fills the destination with zeros and reads nothing: that is the guard. Before
// Ampere they are ordinary loads and stores, which the pipeline's barriers keep correct.
//
// A cannot use 16-byte copies: a copy moves 16 contiguous bytes to 16 contiguous bytes, and the
// transpose scatters them. So A moves in 4-byte copies, one element each. With BK = 8 a warp then
// reads 4 rows x 32 bytes of A (4 full sectors), and its stores, As[k][m] for k = 0..7 and 4
// consecutive m, hit 32 different banks (the padding shifts row k by 4k banks). B keeps its layout
// and moves 16 bytes at a time when aligned.
template <class Cfg, bool VEC>
using AsyncSources = TileSources<Cfg, 1, VEC ? 4 : 1>;

// Issues the copies of the A and B tiles whose first k is k0.
template <class Cfg, bool VEC>
__device__ __forceinline__ void copy_tiles_async(const AsyncSources<Cfg, VEC>& src, int k0, float* As,
                                                 float* Bs) {
    using Src = AsyncSources<Cfg, VEC>;
#pragma unroll
    for (int i = 0; i < Src::AChunks::PER_THREAD; ++i)
        wb::cp_async_4(&As[src.a_smem + i * Src::AChunks::ROW_STEP], src.a_src(i), src.a_inside(i, k0));
#pragma unroll
    for (int i = 0; i < Src::BChunks::PER_THREAD; ++i) {
        float* dst = &Bs[src.b_smem + i * Src::BChunks::ROW_STEP * Cfg::B_LD];
        if constexpr (VEC)
            wb::cp_async_16(dst, src.b_src(i), src.b_inside(i, k0));
        else
            wb::cp_async_4(dst, src.b_src(i), src.b_inside(i, k0));
    }
}

}  // namespace ch05
