// wmma_common.cuh - chapter 06, what every step shares: the FP16 input type (section 1), the WMMA
// rules and what a launcher decides from them (2), the tile configuration (3), the guarded tile
// copies (4), the block order and the cp.async ring (5), the staged epilogue (6) and the launch helpers
// (7). The steps themselves, one kernel each, are the files step1_naive.cuh ... step8_tf32_mma_sync.cuh;
// kernels.cuh lists them. The epilogue of one fragment (store_fragment, steps 1 to 4) is step 1's and
// lives there.
#pragma once

#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"
#include "gemm_tiles.cuh"

namespace ch06 {

namespace wmma = nvcuda::wmma;

// ---- 1. The FP16 input type --------------------------------------------------------------------
//
// A tensor-core instruction has a fixed shape. WMMA offers m16n16k16 for FP16 inputs (a 16x16 A
// fragment times a 16x16 B fragment) and m16n16k8 for TF32 inputs (step 7); both accumulate in
// FP32. The tiled kernels are written once for an input type `Op`:
//   Element   what A and B hold in memory and in shared memory
//   FRAG_K    the k of one mma_sync (16 or 8)
//   CHUNK     elements in one 16-byte copy (8 halves or 4 floats)
//   FragA/B/C the fragment types; round_inputs(), applied to each fragment of A and B; and
//   load_shared(), which loads a fragment of A or B from shared memory
struct Fp16Inputs {
    using Element = __half;
    static constexpr int FRAG_K = 16;
    static constexpr int CHUNK = 16 / int(sizeof(Element));
    static constexpr int kMinCc = 70;  // WMMA with FP16 inputs: Volta and later
    static constexpr bool kCompiled = true;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
    template <class Frag>
    __device__ static void round_inputs(Frag&) {}  // the inputs are FP16 already
    // From shared memory load_matrix_sync becomes ldmatrix (LDSM), one instruction per fragment.
    template <class Frag>
    __device__ static void load_shared(Frag& f, const Element* p, unsigned ldm) {
        wmma::load_matrix_sync(f, p, ldm);
    }
};

// ---- 2. The WMMA rules, and what the launchers decide from them --------------------------------
//
// load_matrix_sync(frag, ptr, ldm) and store_matrix_sync(ptr, frag, ldm, layout) demand:
//   - ptr aligned to 256 bits (32 bytes);
//   - ldm, the row length of the matrix in memory, a multiple of 16 bytes: 8 halves or 4 floats.
// A fragment's pointer is the matrix pointer plus (16 q rows) * ldm + (16 p columns), so with a
// 32-byte aligned matrix and a legal ldm every fragment of it is legal too. When either rule fails
// (K = 1000 + 1, or a view A + 1 into a larger buffer) the kernels must not call WMMA on that
// memory at all: they copy the tile into shared memory, where they choose the layout themselves.
//
// The 16-byte copies (section 4) have the same kind of rule, one size down: every row of the
// matrix must start on a 16-byte boundary (ldm a multiple of 8 halves / 4 floats) and so must the
// pointer. Otherwise the same tiles move element by element.
inline bool aligned_to(const void* p, size_t bytes) {
    return reinterpret_cast<uintptr_t>(p) % bytes == 0;
}

// A WMMA fragment may be loaded (or stored) straight from (to) this row-major matrix.
template <class T>
bool fragment_access_ok(const T* matrix, int ld) {
    return (size_t(ld) * sizeof(T)) % 16 == 0 && aligned_to(matrix, 32);
}

// Every 16-byte chunk of every row of this row-major matrix is 16-byte aligned.
template <class T>
bool chunk_access_ok(const T* matrix, int ld) {
    return (size_t(ld) * sizeof(T)) % 16 == 0 && aligned_to(matrix, 16);
}

// What one launch works on: the GEMM of wb::GemmArgs (sizes, alpha, beta, pointers, block order)
// and what the launcher decided from the rules above.
template <class T>
struct WmmaArgs : wb::GemmArgs<T> {
    int k_tiles;    // BK-wide steps along K each block takes: ceil_div(K, BK). (A planted-bug test
                    // passes K / BK here, which silently drops the last partial step.)
    bool a_direct;  // fragments of A may be loaded straight from global memory (step 1 only)
    bool b_direct;  // the same for B
    bool c_direct;  // accumulator fragments may be stored straight into C
    bool c_vec;     // C may be written 16 bytes (one float4) at a time
};

template <class T>
WmmaArgs<T> make_args(int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C, int bk,
                      int group_rows) {
    if (M < 1 || N < 1 || K < 1)
        throw std::invalid_argument("GEMM sizes must be at least 1, got " + std::to_string(M) + "x" +
                                    std::to_string(N) + "x" + std::to_string(K));
    WmmaArgs<T> g{{M, N, K, alpha, beta, A, B, C, group_rows}, wb::ceil_div(K, bk), false, false, false, false};
    g.a_direct = fragment_access_ok(A, K);
    g.b_direct = fragment_access_ok(B, N);
    g.c_direct = fragment_access_ok(C, N);
    g.c_vec = chunk_access_ok(C, N);
    return g;
}

// Where this block's tile of C starts.
struct BlockCoord {
    int m0, n0;
};

// ---- 3. The tile configuration of steps 2 to 8 ---------------------------------------------------
//
//   BM x BN    the block's tile of C; K is walked BK elements at a time
//   WM x WN    one warp's part of it: (WM / 16) x (WN / 16) accumulator fragments of 16x16
//   STAGES     tiles of A and B that live in shared memory at once (1: load, then compute;
//              3: a cp.async ring with two tiles in flight while the third is multiplied)
//   SKEW_A/B   elements of padding after every shared-memory row of A and of B (0: none)
//
// Each step names its configuration as a type beside its kernel (Wmma128x128_unpadded, ...).

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
    // 16 rows of WN floats (one row of fragments), padded by 8 floats (section 6).
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

// The smallest compute capability a configuration runs on: the input type's, and 8.0 where the
// shared memory exceeds sm_75's 64 KB per block (every sm_80+ GPU grants 99 KB).
template <class Cfg>
constexpr int min_cc_of() {
    return Cfg::SMEM_BYTES > kSmemLimitSm80   ? 90
           : Cfg::SMEM_BYTES > kSmemLimitSm75 ? std::max(80, Cfg::Inputs::kMinCc)
                                              : Cfg::Inputs::kMinCc;
}

template <class Cfg>
using Accumulators = typename Cfg::Inputs::FragC[Cfg::FM][Cfg::FN];

template <class Cfg>
__device__ __forceinline__ void zero_accumulators(Accumulators<Cfg>& acc) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
}

// ---- 4. Moving tiles: global -> shared, guarded -----------------------------------------------
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
// section 5 keeps its order but loses the overlap.
template <class T, bool VEC>
__device__ __forceinline__ void copy_chunk_async(T* dst, const T* src, int valid) {
    if constexpr (VEC)
        wb::cp_async_16(dst, src, valid > 0);
    else
        *reinterpret_cast<uint4*>(dst) = load_chunk<T, false>(src, valid);
}

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

// A thread's chunks of a tile lie ROW_STEP rows apart in one column (wb::TileChunks), and the next
// tile starts BK columns of A (BK rows of B) further on. So the addresses and bounds are worked out
// once per block, here, and each chunk of each tile then costs one multiply-add of a constant.
// (Written as A + (m0 + row) * K + k0 + col per chunk and tile, every chunk needs a 64-bit
// multiply, which the compiler recomputes instead of keeping when the accumulators fill the
// registers.)
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

// The thread's chunks of the tiles starting at k0, by cp.async (the ring of section 5).
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

// ---- 5. Which tile a block computes, and the cp.async ring --------------------------------------
//
// wb::this_block_tile (common/gemm_tiles.cuh) walks the tiles in bands of g.group_rows tile rows,
// so that the blocks running together share panels of A and B in L2 (step 6 sets kBand; at 8192^3
// in FP16, B alone is 128 MB, more than the L2 cache). group_rows = 1: row-major order.
template <class Cfg, class T>
__device__ __forceinline__ BlockCoord block_coord(const WmmaArgs<T>& g) {
    const wb::TileIndex tile = wb::this_block_tile(g.group_rows);
    return {tile.m * Cfg::BM, tile.n * Cfg::BN};
}

// Stage s of the ring: all STAGES tiles of A first, then all tiles of B.
template <class Cfg>
__device__ __forceinline__ typename Cfg::Element* a_stage(typename Cfg::Element* smem, int s) {
    return smem + s * Cfg::A_STAGE;
}
template <class Cfg>
__device__ __forceinline__ typename Cfg::Element* b_stage(typename Cfg::Element* smem, int s) {
    return smem + Cfg::STAGES * Cfg::A_STAGE + s * Cfg::B_STAGE;
}

// The ring of step 4, which steps 5 to 8 keep: before iteration kt, this thread has committed one
// group per tile 0 .. kt + STAGES - 2 (empty groups past the end, so the count never changes
// shape). wait_group<STAGES - 2> then means tile kt has landed, for this thread's copies; the
// barrier makes that true for all threads AND says every warp has finished multiplying tile
// kt - 1, whose stage, (kt - 1) % STAGES == (kt + STAGES - 1) % STAGES, is refilled next. One
// barrier per tile. `compute(As, Bs)` multiplies one stage: mma_stage (step 2) for the WMMA
// kernels, mma_sync_stage for step 8.
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

// ---- 6. The staged epilogue ----------------------------------------------------------------------

// Steps 5 to 8: the 16 x WN floats of one row of a warp's fragments, staged in `warp_stage`, go to
// the rows row0.. and columns col0.. of C. The 32 lanes read the staging area 16 bytes at a time
// along the rows: a quarter warp covers 128 consecutive bytes of a row of C, whole cache lines.
// alpha, beta and the bounds are applied on the way.
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

// Steps 5 to 7: a warp stores one row of its fragments into its staging area, then
// stage_row_to_c writes it to C. The staging rows are WN + 8 floats long: the fragment store
// writes 8 bytes per lane into 8 rows at once (STS.64, two half-warp passes of 4 rows); 8 floats
// of padding put those 4 rows into 4 different groups of 8 banks (WN + 4 would let rows 0 and 1
// overlap).
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

// ---- 7. Launch helpers ---------------------------------------------------------------------------

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

template <class Cfg>
dim3 tiled_grid(int M, int N) {
    return dim3(wb::ceil_div(N, Cfg::BN), wb::ceil_div(M, Cfg::BM));
}

// What every tiled step's launcher does: check the GPU, derive the arguments, and take the 16-byte
// path (KERNEL_VEC16) only where every row of A and B starts on a 16-byte boundary; otherwise the
// element-wise one. Above 48 KB of dynamic shared memory the kernel opts in first (wb::launch_tiled).
template <class Cfg, auto KERNEL_VEC16, auto KERNEL_ELEMENTWISE>
void launch_two_paths(const char* what, int group_rows, int M, int N, int K, float alpha,
                      const typename Cfg::Element* A, const typename Cfg::Element* B, float beta, float* C,
                      cudaStream_t stream) {
    require_gpu(Cfg::Inputs::kMinCc, Cfg::SMEM_BYTES, what);
    const WmmaArgs<typename Cfg::Element> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, group_rows);
    if (chunk_access_ok(A, K) && chunk_access_ok(B, N))
        wb::launch_tiled<KERNEL_VEC16, Cfg::THREADS, Cfg::SMEM_BYTES>(g, tiled_grid<Cfg>(M, N), stream);
    else
        wb::launch_tiled<KERNEL_ELEMENTWISE, Cfg::THREADS, Cfg::SMEM_BYTES>(g, tiled_grid<Cfg>(M, N), stream);
}

// The resources the harness prints for a kernel of configuration Cfg (the 16-byte instantiation).
template <class Cfg, class Kernel>
wb::KernelInfo kernel_info(Kernel kernel) {
    return {(const void*)kernel, Cfg::THREADS, size_t(Cfg::SMEM_BYTES)};
}

}  // namespace ch06
