// wmma_steps.cuh - chapter 06, steps 2 to 6: one tiled WMMA kernel, wmma_gemm_tiled<Cfg, LOOP, EPI,
// VEC>, whose template arguments are the steps: the tile configuration (section 4), the copies
// (section 5), the block order and the tensor-core work on one stage (section 6), the main loop
// (section 7), the epilogue (section 8); then the kernel (section 9) and its launchers (section 11).
// Step 7 (mma_sync_step.cuh, section 10) reuses all of it but the tensor-core work.
#pragma once

#include <algorithm>

#include "wmma_basics.cuh"

// ---- 4. The tile configuration of steps 2 to 6 ---------------------------------------------------
//
//   BM x BN    the block's tile of C; K is walked BK elements at a time
//   WM x WN    one warp's part of it: (WM / 16) x (WN / 16) accumulator fragments of 16x16
//   STAGES     tiles of A and B that live in shared memory at once (1: load, then compute;
//              3: a cp.async ring with two tiles in flight while the third is multiplied)
//   SKEW_A/B   elements of padding after every shared-memory row of A and of B (0: none)
//
// Example, wmma_128x256_swizzle: Tiling<Fp16Inputs, 128, 256, 32, 64, 64, 3, 8, 8> has 2 x 4 warps
// of 64 x 64; per k-step of 16 a warp loads 4 fragments of A and 4 of B and issues 4 x 4 = 16
// mma_sync, so each fragment it loads is used 4 times.
//
//   block tile 128 x 256                 one warp: 64 x 64 = 4 x 4 fragments
//   +--------+--------+--------+--------+       b0  b1  b2  b3
//   | warp 0 | warp 1 | warp 2 | warp 3 |   a0 [00][01][02][03]
//   +--------+--------+--------+--------+   a1 [10][11][12][13]    acc[i][j] += a_i * b_j
//   | warp 4 | warp 5 | warp 6 | warp 7 |   a2 [20][21][22][23]
//   +--------+--------+--------+--------+   a3 [30][31][32][33]
//
// The padding is chosen against the bank conflicts of the fragment loads (see the README,
// "Skewed rows"): FP16 fragments are read by ldmatrix, 8 rows of 16 bytes at a time, so a row
// must be an odd number of 16-byte units long (SKEW 8 halves). TF32 fragments are read 4 bytes per
// lane, lanes spread over 8 rows and 4 columns of A (4 rows and 8 columns of B), so the row
// length in floats must be 4 (mod 8) for A (SKEW_A 4) and 8 (mod 32) for B (SKEW_B 8).

// The shared-memory limit every GPU of compute capability 8.0 and later grants one block
// (sm_86, sm_89 and sm_120 stop at 99 KB; sm_80 and sm_90 give more). sm_75 grants 64 KB.
constexpr int kSmemLimitSm80 = 99 * 1024;
constexpr int kSmemLimitSm75 = 64 * 1024;
constexpr int kSmemLimitSm90 = 227 * 1024;  // Hopper: configurations above 99 KB run on sm_90 only

template <class Op, int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int SKEW_A_, int SKEW_B_>
struct Tiling {
    using Inputs = Op;
    using Element = typename Op::Element;
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int SKEW_A = SKEW_A_, SKEW_B = SKEW_B_;

    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, WARPS = WARPS_M * WARPS_N;
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int FM = WM / 16, FN = WN / 16;  // accumulator fragments per warp, down and across

    // Shared memory. A stage is a BM x BK tile of A (row length A_LD) and a BK x BN tile of B (B_LD).
    static constexpr int A_LD = BK + SKEW_A, B_LD = BN + SKEW_B;
    static constexpr int A_STAGE = BM * A_LD, B_STAGE = BK * B_LD;  // elements
    static constexpr int PIPE_BYTES = STAGES * (A_STAGE + B_STAGE) * int(sizeof(Element));
    // After the main loop the same memory holds the epilogue's staging areas, one per warp:
    // 16 rows of WN floats (one row of fragments), padded by 8 floats (section 8).
    static constexpr int STAGE_LD = WN + 8;
    static constexpr int WARP_STAGE = 16 * STAGE_LD;  // floats
    static constexpr int STAGE_BYTES = WARPS * WARP_STAGE * int(sizeof(float));
    static constexpr int SMEM_BYTES = PIPE_BYTES > STAGE_BYTES ? PIPE_BYTES : STAGE_BYTES;

    // How the threads cut a stage into 16-byte copies (wb::TileChunks, common/gemm_tiles.cuh).
    using AChunks = wb::TileChunks<BM, BK, Op::CHUNK, THREADS>;  // rows: m, columns: k
    using BChunks = wb::TileChunks<BK, BN, Op::CHUNK, THREADS>;  // rows: k, columns: n

    // Accumulators are FM * FN * 8 floats per thread. Up to 64 of them leave room for two blocks
    // per SM (at most 128 registers per thread with 256 threads); 4x4 fragments take one block and
    // up to 255 registers each.
    static constexpr int MIN_BLOCKS = (FM * FN * 8 <= 64 && THREADS <= 256) ? 2 : 1;

    static_assert(BM % WM == 0 && BN % WN == 0, "the block tile must be a whole number of warp tiles");
    static_assert(WM % 16 == 0 && WN % 16 == 0, "a warp tile is made of whole 16x16 fragments");
    static_assert(THREADS <= 1024, "a block holds at most 1024 threads: fewer, larger warp tiles");
    static_assert(BK % Op::FRAG_K == 0, "BK must be a whole number of mma_sync steps (16 FP16, 8 TF32)");
    static_assert((A_LD * sizeof(Element)) % 16 == 0 && (B_LD * sizeof(Element)) % 16 == 0,
                  "WMMA needs ldm to be a multiple of 16 bytes: BK + SKEW_A and BN + SKEW_B must be "
                  "multiples of 8 halves (4 floats)");
    static_assert((A_STAGE * sizeof(Element)) % 32 == 0 && (B_STAGE * sizeof(Element)) % 32 == 0,
                  "every stage must start 32-byte aligned: WMMA pointers need 256-bit alignment "
                  "(with a legal ldm, fragments at multiples of 16 rows and columns then are too)");
    static_assert(BM >= 8, "at least 8 rows of C per block keep grid.y within 65535 (options.h)");
    static_assert(STAGES >= 1, "at least one tile in shared memory");
    static_assert(STAGE_BYTES <= PIPE_BYTES || STAGES == 1,
                  "the epilogue reuses the pipeline's shared memory; it should fit inside it");
    static_assert(SMEM_BYTES <= kSmemLimitSm90,
                  "more shared memory than any GPU grants one block (227 KB on sm_90): fewer stages "
                  "or a smaller tile");
};

// ---- 5. Moving tiles: global -> shared, guarded -----------------------------------------------
//
// A chunk is CHUNK consecutive elements (16 bytes) of one row of a tile. `valid` says how many of
// them are inside the matrix: all (CHUNK), none (0), or, on the element-wise path, a few (the
// chunk crosses the last column). The missing ones become zeros.
//
// VEC = true: the launcher has checked chunk_access_ok, so every chunk is 16-byte aligned and lies
// wholly inside or wholly outside the matrix (its width divides the row length); one 16-byte load
// (or cp.async) moves it. VEC = false: element by element, any alignment, any row length.
template <class T>
using Bits = typename std::conditional<sizeof(T) == 2, unsigned short, unsigned>::type;

template <class T, bool VEC>
__device__ __forceinline__ uint4 load_chunk(const T* src, int valid) {
    if constexpr (VEC) {
        return valid > 0 ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);  // LDG.128
    } else {
        constexpr int CHUNK = 16 / int(sizeof(T));
        Bits<T> e[CHUNK];
        const Bits<T>* s = reinterpret_cast<const Bits<T>*>(src);
#pragma unroll
        for (int i = 0; i < CHUNK; ++i) e[i] = i < valid ? s[i] : Bits<T>(0);  // bits of +0.0
        uint4 v;
        memcpy(&v, e, sizeof v);
        return v;
    }
}

// One chunk into shared memory. VEC: by cp.async (wb::cp_async_16, sm_80+): the copy runs while the
// thread goes on, and a chunk outside the matrix reads nothing and writes zeros. Otherwise the
// element-wise load above and an ordinary store: the thread waits for the load, so the ring of
// section 7 keeps its order but loses the overlap.
template <class T, bool VEC>
__device__ __forceinline__ void copy_chunk_async(T* dst, const T* src, int valid) {
    if constexpr (VEC)
        wb::cp_async_16(dst, src, valid > 0);
    else
        *reinterpret_cast<uint4*>(dst) = load_chunk<T, false>(src, valid);
}

// Committing and waiting for cp.async groups: wb::cp_async_commit / wb::cp_async_wait<N> (common/gemm_device.cuh).

// Chunk i of this thread in the A tile (rows m0.., columns k0..) and in the B tile (rows k0..,
// columns n0..): where it comes from, how many of its elements are inside, where it goes.
template <class T>
struct ChunkRef {
    const T* src;  // where the chunk starts; read only when valid > 0 (it may lie past the matrix)
    int valid;     // elements inside the matrix, 0..CHUNK
    int smem;      // offset in the shared tile, in elements
};

template <int CHUNK>
__device__ __forceinline__ int elements_inside(bool line_inside, int remaining) {
    return line_inside ? ::min(::max(remaining, 0), CHUNK) : 0;
}

// A thread's chunks of a tile lie ROW_STEP rows apart in one column (wb::TileChunks), and the next tile
// starts BK columns of A (BK rows of B) further on. So the addresses and bounds are worked out once
// per block, here, and each chunk of each tile then costs one multiply-add of a constant. (Written
// as A + (m0 + row) * K + k0 + col per chunk and tile, every chunk needs a 64-bit multiply; with
// 200-odd registers holding accumulators the compiler recomputes such values instead of keeping
// them, about 15 instructions per chunk: in step 7 that was a third of the main loop.)
template <class Cfg>
struct ChunkSources {
    using T = typename Cfg::Element;
    using AC = typename Cfg::AChunks;
    using BC = typename Cfg::BChunks;
    static constexpr int CHUNK = Cfg::Inputs::CHUNK;
    const T* a;                    // this thread's chunk 0 of the A tile at k0 = 0
    const T* b;                    // and of the B tile
    long long a_step, b_step;      // elements from one of its chunks to the next (ROW_STEP rows)
    int n;                         // row length of B
    int a_rows_left, a_cols_left;  // rows of A from chunk 0's row on, columns from its column on
    int b_rows_left, b_cols_left;  // the same in B (at k0 = 0)

    __device__ __forceinline__ ChunkSources(const WmmaArgs<T>& g, const BlockCoord& t) {
        const int tid = threadIdx.x;
        const int ar = t.m0 + AC::row(tid, 0), ac = AC::col(tid);
        const int br = BC::row(tid, 0), bc = t.n0 + BC::col(tid);
        a = g.A + (long long)ar * g.K + ac;
        b = g.B + (long long)br * g.N + bc;
        a_step = (long long)AC::ROW_STEP * g.K;
        b_step = (long long)BC::ROW_STEP * g.N;
        n = g.N;
        a_rows_left = g.M - ar;
        a_cols_left = g.K - ac;
        b_rows_left = g.K - br;
        b_cols_left = g.N - bc;
    }
    __device__ __forceinline__ ChunkRef<T> a_chunk(int k0, int i) const {
        const int valid = elements_inside<CHUNK>(i * AC::ROW_STEP < a_rows_left, a_cols_left - k0);
        return {a + (i * a_step + k0), valid, AC::row(threadIdx.x, i) * Cfg::A_LD + AC::col(threadIdx.x)};
    }
    // b_tile: b + k0 * n, the same for every chunk of the tile (b_tile_start).
    __device__ __forceinline__ ChunkRef<T> b_chunk(const T* b_tile, int k0, int i) const {
        const int valid = elements_inside<CHUNK>(i * BC::ROW_STEP < b_rows_left - k0, b_cols_left);
        return {b_tile + i * b_step, valid, BC::row(threadIdx.x, i) * Cfg::B_LD + BC::col(threadIdx.x)};
    }
    __device__ __forceinline__ const T* b_tile_start(int k0) const { return b + (long long)k0 * n; }
};

// Steps 2 and 3: the thread's chunks of the next tiles pass through registers. All loads are
// issued first (load), then all stores (store): the loads of one thread are in flight together.
template <class Cfg, bool VEC>
struct TileRegisters {
    using T = typename Cfg::Element;
    uint4 a[Cfg::AChunks::PER_THREAD];
    uint4 b[Cfg::BChunks::PER_THREAD];

    __device__ __forceinline__ void load(const ChunkSources<Cfg>& src, int k0) {
#pragma unroll
        for (int i = 0; i < Cfg::AChunks::PER_THREAD; ++i) {
            const ChunkRef<T> ch = src.a_chunk(k0, i);
            a[i] = load_chunk<T, VEC>(ch.src, ch.valid);
        }
        const T* b_tile = src.b_tile_start(k0);
#pragma unroll
        for (int i = 0; i < Cfg::BChunks::PER_THREAD; ++i) {
            const ChunkRef<T> ch = src.b_chunk(b_tile, k0, i);
            b[i] = load_chunk<T, VEC>(ch.src, ch.valid);
        }
    }
    __device__ __forceinline__ void store(T* As, T* Bs) const {
        const int tid = threadIdx.x;
        using AC = typename Cfg::AChunks;
        using BC = typename Cfg::BChunks;
#pragma unroll
        for (int i = 0; i < AC::PER_THREAD; ++i)  // STS.128
            *reinterpret_cast<uint4*>(&As[AC::row(tid, i) * Cfg::A_LD + AC::col(tid)]) = a[i];
#pragma unroll
        for (int i = 0; i < BC::PER_THREAD; ++i)
            *reinterpret_cast<uint4*>(&Bs[BC::row(tid, i) * Cfg::B_LD + BC::col(tid)]) = b[i];
    }
};

// Steps 4 to 6: the thread's chunks of the tiles starting at k0, by cp.async.
template <class Cfg, bool VEC>
__device__ __forceinline__ void copy_tiles_async(const ChunkSources<Cfg>& src, int k0,
                                                 typename Cfg::Element* As, typename Cfg::Element* Bs) {
    using T = typename Cfg::Element;
#pragma unroll
    for (int i = 0; i < Cfg::AChunks::PER_THREAD; ++i) {
        const ChunkRef<T> ch = src.a_chunk(k0, i);
        copy_chunk_async<T, VEC>(As + ch.smem, ch.src, ch.valid);
    }
    const T* b_tile = src.b_tile_start(k0);
#pragma unroll
    for (int i = 0; i < Cfg::BChunks::PER_THREAD; ++i) {
        const ChunkRef<T> ch = src.b_chunk(b_tile, k0, i);
        copy_chunk_async<T, VEC>(Bs + ch.smem, ch.src, ch.valid);
    }
}

// ---- 6. Which tile a block computes, and the tensor-core work on one stage ----------------------
//
// The block order of step 6: wb::this_block_tile (common/gemm_tiles.cuh) walks the tiles in bands
// of g.group_rows tile rows, so that the blocks running together share panels of A and B in L2
// (at 8192^3 in FP16, B alone is 128 MB, more than the L2 cache). group_rows = 1: row-major order.
template <class Cfg, class T>
__device__ __forceinline__ BlockCoord block_coord(const WmmaArgs<T>& g) {
    const wb::TileIndex tile = wb::this_block_tile(g.group_rows);
    return {tile.m * Cfg::BM, tile.n * Cfg::BN};
}

template <class Cfg>
using Accumulators = typename Cfg::Inputs::FragC[Cfg::FM][Cfg::FN];


// The heart of every tiled step. Per k-step of FRAG_K a warp loads its FM fragments of A and FN
// fragments of B ONCE and issues FM x FN mma_sync with them. Loads per mma_sync:
// (FM + FN) / (FM * FN), 0.5 for 4x4 fragments instead of 2 in step 1. Fully unrolled: all
// shared-memory offsets are constants, the fragments stay in registers, and the compiler can load
// the next k-step's fragments while this one's mma_sync run.
template <class Cfg>
__device__ __forceinline__ void mma_stage(const typename Cfg::Element* As, const typename Cfg::Element* Bs,
                                          int warp_row, int warp_col, Accumulators<Cfg>& acc) {
    // BEGIN SOLUTION: per FRAG_K: FM A, FN B fragments (Op::load_shared, round_inputs); FMxFN mma_sync
    using Op = typename Cfg::Inputs;
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += Op::FRAG_K) {
        typename Op::FragA a[Cfg::FM];
        typename Op::FragB b[Cfg::FN];
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i) {
            Op::load_shared(a[i], As + (warp_row + 16 * i) * Cfg::A_LD + kk, Cfg::A_LD);
            Op::round_inputs(a[i]);
        }
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j) {
            Op::load_shared(b[j], Bs + kk * Cfg::B_LD + warp_col + 16 * j, Cfg::B_LD);
            Op::round_inputs(b[j]);
        }
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    // END SOLUTION
}

// ---- 7. The two main loops ---------------------------------------------------------------------

// The two pipelines of wb::Pipeline (common/gemm_tiles.cuh) this chapter uses: single_buffer
// (steps 2 and 3: one stage; load, barrier, compute, barrier) and cp_async (steps 4 to 6: STAGES
// stages filled by cp.async, STAGES - 1 tiles ahead).

template <class Cfg>
__device__ __forceinline__ typename Cfg::Element* a_stage(typename Cfg::Element* smem, int s) {
    return smem + s * Cfg::A_STAGE;
}
template <class Cfg>
__device__ __forceinline__ typename Cfg::Element* b_stage(typename Cfg::Element* smem, int s) {
    return smem + Cfg::STAGES * Cfg::A_STAGE + s * Cfg::B_STAGE;
}

// While a block waits for its loads here, the tensor cores of its SM idle unless another block is
// resident: the reason for step 4.
template <class Cfg, bool VEC>
__device__ __forceinline__ void mainloop_load_then_compute(const WmmaArgs<typename Cfg::Element>& g,
                                                           const BlockCoord& t, typename Cfg::Element* smem,
                                                           int warp_row, int warp_col,
                                                           Accumulators<Cfg>& acc) {
    static_assert(Cfg::STAGES == 1, "the load-then-compute loop uses one stage");
    // BEGIN SOLUTION: per kt: TileRegisters load/store to stage 0, sync, mma_stage, sync
    const ChunkSources<Cfg> src(g, t);
    for (int kt = 0; kt < g.k_tiles; ++kt) {
        TileRegisters<Cfg, VEC> next;
        next.load(src, kt * Cfg::BK);
        next.store(a_stage<Cfg>(smem, 0), b_stage<Cfg>(smem, 0));
        __syncthreads();  // the tiles are complete before any warp loads a fragment from them
        mma_stage<Cfg>(a_stage<Cfg>(smem, 0), b_stage<Cfg>(smem, 0), warp_row, warp_col, acc);
        __syncthreads();  // every warp is done with them before the next tiles overwrite them
    }
    // END SOLUTION
}

// The ring: before iteration kt, this thread has committed one group per tile 0 .. kt + STAGES - 2
// (empty groups past the end, so the count never changes shape). wait_group<STAGES - 2> then
// means tile kt has landed, for this thread's copies; the barrier makes that true for all threads
// AND says every warp has finished multiplying tile kt - 1, whose stage, (kt - 1) % STAGES ==
// (kt + STAGES - 1) % STAGES, is refilled next. One barrier per tile.
// `compute(As, Bs)` multiplies one stage: mma_stage for the WMMA kernel, mma_sync_stage for step 7
// (section 10), which shares this loop.
template <class Cfg, bool VEC, class Compute>
__device__ __forceinline__ void mainloop_cp_async_ring(const WmmaArgs<typename Cfg::Element>& g,
                                                       const BlockCoord& t, typename Cfg::Element* smem,
                                                       Compute&& compute) {
    static_assert(Cfg::STAGES >= 2, "the cp.async ring needs at least two stages");
    const ChunkSources<Cfg> src(g, t);
#pragma unroll
    for (int s = 0; s < Cfg::STAGES - 1; ++s) {
        if (s < g.k_tiles)
            copy_tiles_async<Cfg, VEC>(src, s * Cfg::BK, a_stage<Cfg>(smem, s), b_stage<Cfg>(smem, s));
        wb::cp_async_commit();
    }
    for (int kt = 0; kt < g.k_tiles; ++kt) {
        wb::cp_async_wait<Cfg::STAGES - 2>();
        __syncthreads();
        const int ahead = kt + Cfg::STAGES - 1;
        if (ahead < g.k_tiles) {
            const int s = ahead % Cfg::STAGES;
            copy_tiles_async<Cfg, VEC>(src, ahead * Cfg::BK, a_stage<Cfg>(smem, s), b_stage<Cfg>(smem, s));
        }
        wb::cp_async_commit();
        const int s = kt % Cfg::STAGES;
        compute(a_stage<Cfg>(smem, s), b_stage<Cfg>(smem, s));
    }
    wb::cp_async_wait<0>();  // only empty groups are left; leave no copy in flight behind us
}

// ---- 8. The two epilogues ------------------------------------------------------------------------

enum class Epilogue {
    fragments_to_global,  // steps 2 to 4: store_matrix_sync straight into C (edges staged)
    staged_in_smem,       // steps 5 and 6: a row of fragments at a time through shared memory
};

// Steps 2 to 4: each fragment on its own (store_fragment, section 3). A fragment store writes
// 8 bytes per lane (STG.64), 8 rows of 32 bytes per instruction; with beta != 0, C is read the
// same way. Correct and simple, but 8-byte accesses.
template <class Cfg>
__device__ __forceinline__ void epilogue_fragments(const WmmaArgs<typename Cfg::Element>& g,
                                                   const BlockCoord& t, int warp_row, int warp_col,
                                                   Accumulators<Cfg>& acc, float* warp_stage) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j)
            store_fragment(acc[i][j], g, t.m0 + warp_row + 16 * i, t.n0 + warp_col + 16 * j, warp_stage);
}

// Steps 5 and 6: a warp stores one row of its fragments (16 x WN floats) into its staging area,
// then its 32 lanes read it back 16 bytes at a time along the rows and write C: a quarter warp
// covers 128 consecutive bytes of a row of C, whole cache lines. alpha, beta and the bounds are
// applied on the way. The staging rows are WN + 8 floats long: the fragment store writes 8 bytes per
// lane into 8 rows at once (STS.64, two half-warp passes of 4 rows); 8 floats of padding put those
// 4 rows into 4 different groups of 8 banks. (WN + 4 would let rows 0 and 1 overlap.)
//
// The second half, shared with step 7 (section 10): the 16 x WN floats in `warp_stage` go to the
// rows row0.. and columns col0.. of C.
template <class Cfg, class T>
__device__ __forceinline__ void stage_row_to_c(const WmmaArgs<T>& g, int row0, int col0, const float* warp_stage) {
    constexpr int VECS_PER_ROW = Cfg::WN / 4;  // float4s in one row of the warp tile
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int e = lane; e < 16 * VECS_PER_ROW; e += 32) {
        const int r = e / VECS_PER_ROW, c = (e % VECS_PER_ROW) * 4;
        const int row = row0 + r, col = col0 + c;
        if (row >= g.M) continue;
        const float4 v = *reinterpret_cast<const float4*>(&warp_stage[r * Cfg::STAGE_LD + c]);
        float* out = g.C + size_t(row) * g.N + col;
        if (g.c_vec) {  // N % 4 == 0: the 4 columns are all inside or all outside
            if (col >= g.N) continue;
            wb::store_c4(out, v, g.alpha, g.beta);  // one STG.128; C is read only when beta != 0
        } else {
            const float vals[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int q = 0; q < 4; ++q)
                if (col + q < g.N) wb::store_c(out + q, vals[q], g.alpha, g.beta);
        }
    }
}

template <class Cfg>
__device__ __forceinline__ void epilogue_staged(const WmmaArgs<typename Cfg::Element>& g, const BlockCoord& t,
                                                int warp_row, int warp_col, Accumulators<Cfg>& acc,
                                                float* warp_stage) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) {
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j)
            wmma::store_matrix_sync(warp_stage + 16 * j, acc[i][j], Cfg::STAGE_LD, wmma::mem_row_major);
        __syncwarp();
        stage_row_to_c<Cfg>(g, t.m0 + warp_row + 16 * i, t.n0 + warp_col, warp_stage);
        __syncwarp();  // the next row of fragments overwrites the staging area
    }
}

// ---- 9. The kernel ---------------------------------------------------------------------------------

// Cfg: a Tiling (section 4); Cfg::Inputs is Fp16Inputs or Tf32Inputs (section 1). LOOP, EPI:
// sections 7 and 8.
// VEC: 16-byte copies of A and B (true) or element-wise ones (false, for rows that do not start on
// 16-byte boundaries). The shared memory is dynamic (Cfg::SMEM_BYTES), so tiles above 48 KB work.
template <class Cfg, wb::Pipeline LOOP, Epilogue EPI, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS)
    wmma_gemm_tiled(WmmaArgs<typename Cfg::Element> g) {
    using Op = typename Cfg::Inputs;
    using T = typename Cfg::Element;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Op::kCompiled) {
        T* smem = reinterpret_cast<T*>(smem_bytes);
        const BlockCoord t = block_coord<Cfg>(g);
        const int warp = threadIdx.x / 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;  // the warp's tile inside the block tile
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

        Accumulators<Cfg> acc;
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

        if constexpr (LOOP == wb::Pipeline::single_buffer)
            mainloop_load_then_compute<Cfg, VEC>(g, t, smem, warp_row, warp_col, acc);
        else
            mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const T* As, const T* Bs) {
                mma_stage<Cfg>(As, Bs, warp_row, warp_col, acc);
            });

        __syncthreads();  // all warps are done with the tiles: their memory becomes staging areas
        float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
        if constexpr (EPI == Epilogue::fragments_to_global)
            epilogue_fragments<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
        else
            epilogue_staged<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
    } else {
        __trap();  // TF32 in an sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// ---- 11. Launchers -----------------------------------------------------------------------------

// The clean "not supported" path: a clear error instead of a kernel that cannot run.
inline void require_gpu(int min_cc, int smem_bytes, const char* what) {
    const wb::DeviceFacts& gpu = wb::current_device();  // read once per device
    if (gpu.cc_number() < min_cc)
        throw std::runtime_error(std::string(what) + " needs compute capability " +
                                 std::to_string(min_cc / 10) + "." + std::to_string(min_cc % 10) +
                                 " or later; this GPU is sm_" + std::to_string(gpu.cc_number()));
    if (smem_bytes > gpu.smem_per_block_optin)
        throw std::runtime_error(std::string(what) + " needs " + std::to_string(smem_bytes) +
                                 " bytes of shared memory per block; this GPU grants " +
                                 std::to_string(gpu.smem_per_block_optin));
}

inline void launch_wmma_naive(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                              float* C, cudaStream_t stream) {
    require_gpu(Fp16Inputs::kMinCc, 0, "WMMA");
    const WmmaArgs<__half> g = make_args(M, N, K, alpha, A, B, beta, C, 16, 1);
    const dim3 grid(wb::ceil_div(N, 16 * kNaiveWarpsN), wb::ceil_div(M, 16 * kNaiveWarpsM));
    hgemm_wmma_naive<<<grid, kNaiveThreads, 0, stream>>>(g);
    WB_LAUNCH_CHECK();
}

template <class Cfg>
dim3 tiled_grid(int M, int N) {
    return dim3(wb::ceil_div(N, Cfg::BN), wb::ceil_div(M, Cfg::BM));
}

// One kernel instantiation with ready-made arguments (the tests' planted bugs come in here too).
template <class Cfg, wb::Pipeline LOOP, Epilogue EPI, bool VEC>
void launch_wmma_kernel(const WmmaArgs<typename Cfg::Element>& g, dim3 grid, cudaStream_t stream) {
    // Above 48 KB of dynamic shared memory the kernel opts in first (wb::launch_tiled).
    wb::launch_tiled<wmma_gemm_tiled<Cfg, LOOP, EPI, VEC>, Cfg::THREADS, Cfg::SMEM_BYTES>(g, grid, stream);
}

// The launcher of every tiled step and configuration, with the chapter's signature (HgemmFn for
// FP16 inputs, SgemmFn for TF32). GROUP: tile rows per band of the block order (1: none). It checks
// the GPU and the alignment itself and takes the element-wise path where 16-byte copies would be
// unsafe.
template <class Cfg, wb::Pipeline LOOP, Epilogue EPI, int GROUP = 1>
void launch_wmma_tiled(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                       const typename Cfg::Element* B, float beta, float* C, cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    using Op = typename Cfg::Inputs;
    require_gpu(Op::kMinCc, Cfg::SMEM_BYTES, std::is_same<Op, Tf32Inputs>::value ? "TF32 WMMA" : "WMMA");
    const WmmaArgs<typename Cfg::Element> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, GROUP);
    if (chunk_access_ok(A, K) && chunk_access_ok(B, N))
        launch_wmma_kernel<Cfg, LOOP, EPI, true>(g, tiled_grid<Cfg>(M, N), stream);
    else
        launch_wmma_kernel<Cfg, LOOP, EPI, false>(g, tiled_grid<Cfg>(M, N), stream);
}

// The smallest compute capability a configuration runs on: the input type's, and 8.0 where the
// shared memory exceeds sm_75's 64 KB per block (every sm_80+ GPU grants 99 KB, section 4).
template <class Cfg>
constexpr int min_cc_of() {
    return Cfg::SMEM_BYTES > kSmemLimitSm80   ? 90
           : Cfg::SMEM_BYTES > kSmemLimitSm75 ? std::max(80, Cfg::Inputs::kMinCc)
                                              : Cfg::Inputs::kMinCc;
}

// The resources the harness prints (the 16-byte instantiation).
template <class Cfg, wb::Pipeline LOOP, Epilogue EPI>
wb::KernelInfo kernel_info() {
    return {(const void*)wmma_gemm_tiled<Cfg, LOOP, EPI, true>, Cfg::THREADS, size_t(Cfg::SMEM_BYTES)};
}
