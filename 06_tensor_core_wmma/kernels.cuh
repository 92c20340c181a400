// kernels.cuh - chapter 06: tensor cores through WMMA. FP16 inputs with FP32 accumulation, and TF32.
//
// Chapters 02 to 05 multiplied on the FP32 units, one fused multiply-add per thread per instruction.
// A tensor core multiplies small matrices instead: in CUDA C++ a whole warp hands it a 16x16 tile of
// A, a 16x16 tile of B and a 16x16 tile of accumulators (nvcuda::wmma::mma_sync), and 4096
// multiply-adds happen in a few instructions. The ladder of this chapter:
//
//   step 1  wmma_naive            one warp per 16x16 tile of C, fragments read straight from global
//                                 memory (hgemm_wmma_naive).
//   step 2  wmma_smem             a 128x128 block tile in shared memory, moved with 16-byte loads;
//                                 8 warps, each owns 64x32 of C = 4x2 fragments and reuses every
//                                 fragment of A twice and every fragment of B four times.
//   step 3  wmma_smem_skewed      the same with every shared row padded by 16 bytes (SKEW): the
//                                 fragment loads (ldmatrix) stop colliding in the banks.
//   step 4  wmma_cp_async         a ring of STAGES tiles filled by cp.async (sm_80+), so the copies
//                                 of the next tiles run while the tensor cores work on this one.
//   step 5  wmma_smem_epilogue    the accumulators leave through shared memory: alpha/beta, bounds
//                                 and coalesced 16-byte stores of C.
//   step 6  wmma_128x256_swizzle  64x64 per warp (4x4 fragments), a 128x256 block tile, blocks
//                                 walked in bands of 8 tile rows so that A and B stay in L2.
//           wmma_best             the configuration kHgemmDefaults picks for this GPU and shape.
//   TF32    tf32_wmma             the same kernel on FP32 inputs rounded to TF32 (sm_80+); its
//                                 fragments are loaded with the address space spelled out (section 1).
//   step 7  tf32_mma_sync         TF32 without WMMA: mma.sync m16n8k8 with its documented register
//                                 layout, A loaded by ldmatrix (section 10).
//           tf32_best             the configuration kTf32Defaults picks (step 7 on the H200).
//
// Steps 2 to 6 and TF32 are ONE kernel template, wmma_gemm_tiled<Cfg, LOOP, EPI, VEC>: the tile
// configuration (section 4, which also names the input type of section 1), the main loop
// (section 7), the epilogue (section 8) and the alignment choice VEC (section 5). Step 7 is a
// second kernel, mma_tf32_gemm, built from the same tiles, copies, main loop and epilogue.
//
// Any shape: tiles hanging over an edge of A or B are zero-filled (zeros add nothing to a dot
// product), fragments of C that hang over the edge of C leave through a small staging area, and
// the fast paths are taken only where the WMMA rules (section 2) allow. Indices are int: the
// workbook keeps every matrix below 2^31 elements (options.h).
#pragma once

#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"

namespace wmma = nvcuda::wmma;

// ---- 1. The two kinds of input -----------------------------------------------------------------
//
// A tensor core instruction has a fixed shape. WMMA offers m16n16k16 for FP16 inputs (a 16x16 A
// fragment times a 16x16 B fragment) and m16n16k8 for TF32 inputs; both accumulate in FP32. The
// kernels below are written once for an `Op`, one of these two structs:
//   Element   what A and B hold in memory and in shared memory
//   FRAG_K    the k of one mma_sync (16 or 8)
//   CHUNK     elements in one 16-byte copy (8 halves or 4 floats)
//   FragA/B/C the fragment types, and round_inputs(), applied to each fragment of A and B
//
// TF32 (sm_80+) is not a storage type: a TF32 fragment holds ordinary floats, and the tensor core
// uses only their sign, exponent and top 10 mantissa bits. tf32_round (below) rounds a float to
// the nearest of those; without it the hardware simply ignores the low 13 bits, which truncates.
// The reference of the harness rounds to nearest too.
//
// The TF32 types exist only where the compiler targets sm_80 or newer. nvcc compiles this header
// once for the host and once per GPU architecture; in the sm_75 pass Tf32Inputs has no fragments,
// and its kernels compile to a trap that the launchers never reach (they refuse GPUs below 8.0).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WB06_TF32_WMMA 0
#else
#define WB06_TF32_WMMA 1
#endif

struct Fp16Inputs {
    using Element = __half;
    static constexpr int FRAG_K = 16;
    static constexpr int CHUNK = 16 / int(sizeof(Element));
    static constexpr int kMinCc = 70;  // WMMA with FP16 inputs: Volta and later
    static constexpr bool kCompiled = true;
    static constexpr bool kRoundInShared = false;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
    template <class Frag>
    __device__ static void round_inputs(Frag&) {}  // the inputs are FP16 already
    // A fragment of A or B from shared memory (the tiled kernels): load_matrix_sync becomes
    // ldmatrix (LDSM), one instruction per fragment.
    template <class Frag>
    __device__ static void load_shared(Frag& f, const Element* p, unsigned ldm) {
        wmma::load_matrix_sync(f, p, ldm);
    }
};

// Rounding a float to TF32. wmma::__float_to_tf32 is PTX cvt.rna.tf32.f32: to nearest, ties away
// from zero. nvcc 13.0 compiles it to 2 instructions per element: a compare that leaves Inf and NaN
// alone, and an integer add of half a TF32 unit (the result keeps its 13 low bits: the tensor core
// ignores them). Hopper added cvt.rn.tf32.f32, to nearest with ties to even (PTX 7.8, sm_90): one
// instruction (F2FP). The two differ only on a tie, when the 13 dropped bits are exactly
// 1 0000 0000 0000 (one input in 8192), by one TF32 unit; the checker's tolerance allows that (it
// allows truncation, common/numerics.cpp). The kernels round with TIES_EVEN = true: ties to even on
// sm_90, ties away (the only choice there) on sm_80 to sm_89. README, "Rounding: one instruction".
template <bool TIES_EVEN = true>
__device__ __forceinline__ float tf32_round(float x) {
#if WB06_TF32_WMMA
    unsigned r;
#if __CUDA_ARCH__ >= 900
    if constexpr (TIES_EVEN) {
        asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
        return __uint_as_float(r);
    }
#endif
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
#else
    return x;  // sm_75 pass: never reached (no TF32 kernel runs there)
#endif
}

struct Tf32Inputs {
    using Element = float;
    static constexpr int FRAG_K = 8;
    static constexpr int CHUNK = 16 / int(sizeof(Element));
    static constexpr int kMinCc = 80;  // TF32 tensor cores: Ampere and later
    static constexpr bool kRoundInShared = false;
    static constexpr bool kTiesEven = true;  // tf32_round above
#if WB06_TF32_WMMA
    static constexpr bool kCompiled = true;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;
    // Every element of a fragment once, right after its load: each fragment of A is then used FN
    // times and each fragment of B FM times, so the rounding is paid once per use of many.
    template <class Frag>
    __device__ static void round_inputs(Frag& f) {
#pragma unroll
        for (int e = 0; e < f.num_elements; ++e) f.x[e] = tf32_round<kTiesEven>(f.x[e]);
    }
    // A fragment of A or B from shared memory. wmma::load_matrix_sync on a TF32 fragment takes a
    // generic pointer, and nvcc 13.0 keeps the load generic even when the pointer points into shared
    // memory: each fragment became 4 generic loads (LD.E) with 64-bit address arithmetic, where
    // FP16 gets one ldmatrix (README, "The address space"). The PTX instruction behind
    // load_matrix_sync, wmma.load, takes a state space: naming .shared, with a 32-bit shared
    // address, gives 4 shared loads (LDS). Same instruction, same opaque fragment. (volatile and
    // the "memory" clobber keep the compiler from moving a load across the main loop's barriers.)
    template <class Frag>
    __device__ static void load_shared(Frag& f, const float* p, unsigned ldm) {
        static_assert(std::is_same<Frag, FragA>::value || std::is_same<Frag, FragB>::value, "A or B");
        const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
        unsigned r[4];
        if constexpr (std::is_same<Frag, FragA>::value)
            asm volatile("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;\n"
                         : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                         : "r"(addr), "r"(ldm)
                         : "memory");
        else
            asm volatile("wmma.load.b.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;\n"
                         : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                         : "r"(addr), "r"(ldm)
                         : "memory");
#pragma unroll
        for (int e = 0; e < 4; ++e) f.x[e] = __uint_as_float(r[e]);
    }
    static_assert(FragA::num_elements == 4 && FragB::num_elements == 4,
                  "a TF32 m16n16k8 fragment of A or B is 4 floats");
#else
    static constexpr bool kCompiled = false;  // sm_75 pass: no TF32 tensor cores
#endif
};

// TF32 rounded once per element of a shared tile instead of once per fragment load: each thread
// rounds the chunks it copied, after they landed and before the barrier that publishes them. Fewer
// roundings, but every tile is read and written once more: slower on the H200 (README, "Where to
// round"), kept as the measured counterexample (t_128x128_w64x64_k32_s3_rs).
struct Tf32RoundedInShared : Tf32Inputs {
    static constexpr bool kRoundInShared = true;
    template <class Frag>
    __device__ static void round_inputs(Frag&) {}  // done in shared memory
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
// The 16-byte copies of sections 5 and 8 have the same kind of rule, one size down: every row of
// the matrix must start on a 16-byte boundary (ldm a multiple of 8 halves / 4 floats) and so must
// the pointer. Otherwise the same tiles move element by element.
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

// What one launch works on. Row-major and packed: the leading dimensions are K, N and N.
template <class T>
struct WmmaArgs {
    int M, N, K;
    float alpha, beta;
    const T* A;
    const T* B;
    float* C;
    int k_tiles;     // BK-wide steps along K each block takes: ceil_div(K, BK). (A planted-bug test
                     // passes K / BK here, which silently drops the last partial step.)
    int group_rows;  // block order: bands of this many tile rows (1: plain row-major order)
    bool a_direct;   // fragments of A may be loaded straight from global memory (step 1 only)
    bool b_direct;   // the same for B
    bool c_direct;   // accumulator fragments may be stored straight into C
    bool c_vec;      // C may be written 16 bytes (one float4) at a time
};

template <class T>
WmmaArgs<T> make_args(int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C, int bk,
                      int group_rows) {
    if (M < 1 || N < 1 || K < 1)
        throw std::invalid_argument("GEMM sizes must be at least 1, got " + std::to_string(M) + "x" +
                                    std::to_string(N) + "x" + std::to_string(K));
    WmmaArgs<T> g{M, N, K, alpha, beta, A, B, C, wb::ceil_div(K, bk), group_rows, false, false, false, false};
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

// ---- 3. Step 1: one warp, one 16x16 tile of C, fragments from global memory -------------------
//
// The simplest correct use of WMMA: warp w of a block owns the 16x16 tile of C at (row0, col0) and
// walks along K 16 columns at a time. Each step loads one 16x16 fragment of A and one of B and
// multiplies them into the accumulator fragment. Nothing is shared between warps, so every
// element of A is read from global memory (or L1/L2) once per tile of C that needs it: N / 16
// times in all, and every element of B M / 16 times.
constexpr int kNaiveWarpsM = 2;  // a block is 2x2 warps: 32x32 of C
constexpr int kNaiveWarpsN = 2;
constexpr int kNaiveWarps = kNaiveWarpsM * kNaiveWarpsN;
constexpr int kNaiveThreads = 32 * kNaiveWarps;
constexpr int kStageLd = 16 + 8;  // floats per row of a 16x16 staging area for C (see section 8)

// Copies a 16x16 tile whose top-left element is `src` into `dst` (row length 16), zero where the
// tile leaves the matrix: only the first `rows` rows and `cols` columns of it are inside.
// Element by element, so it works for any ld_src and any alignment. Not unrolled: this is the rare
// path, and unrolling it doubles the registers of step 1 (95 instead of 48), which costs occupancy.
template <class T>
__device__ __forceinline__ void stage_tile_zero_padded(T* dst, const T* src, int ld_src, int rows, int cols,
                                                       int lane) {
#pragma unroll 1
    for (int e = lane; e < 16 * 16; e += 32) {
        const int r = e / 16, c = e % 16;
        dst[e] = (r < rows && c < cols) ? src[size_t(r) * ld_src + c] : T(0.0f);
    }
}

// The epilogue of one accumulator fragment whose top-left element is C[row0][col0]:
// C = alpha * acc + beta * C, where beta == 0 never reads C (it may hold NaN).
// Inside C, with the WMMA rules met, the fragment goes straight to global memory; element-wise
// arithmetic on fragments is allowed because two fragments of the same type map their elements
// to the same places, whatever that mapping is. At the edge of C the fragment is stored to the
// warp's staging area (16 x kStageLd floats) and only the elements inside C are written out.
template <class T, class FragC>
__device__ __forceinline__ void store_fragment(FragC& acc, const WmmaArgs<T>& g, int row0, int col0,
                                               float* stage) {
    if (row0 >= g.M || col0 >= g.N) return;  // the whole fragment is outside C (warp-uniform)
    if (g.c_direct && row0 + 16 <= g.M && col0 + 16 <= g.N) {
        float* dst = g.C + size_t(row0) * g.N + col0;
        if (g.beta != 0.0f) {
            FragC old;
            wmma::load_matrix_sync(old, dst, unsigned(g.N), wmma::mem_row_major);
#pragma unroll
            for (int e = 0; e < acc.num_elements; ++e) acc.x[e] = g.alpha * acc.x[e] + g.beta * old.x[e];
        } else {
#pragma unroll
            for (int e = 0; e < acc.num_elements; ++e) acc.x[e] = g.alpha * acc.x[e];
        }
        wmma::store_matrix_sync(dst, acc, unsigned(g.N), wmma::mem_row_major);
        return;
    }
    const int lane = threadIdx.x % 32;
    wmma::store_matrix_sync(stage, acc, kStageLd, wmma::mem_row_major);
    __syncwarp();  // every lane's part of the fragment is in `stage` before anyone reads it
#pragma unroll
    for (int e = lane; e < 16 * 16; e += 32) {
        const int r = e / 16, c = e % 16;
        if (row0 + r < g.M && col0 + c < g.N)
            wb::store_c(&g.C[size_t(row0 + r) * g.N + col0 + c], stage[r * kStageLd + c], g.alpha, g.beta);
    }
    __syncwarp();  // all reads done before the next fragment overwrites `stage`
}

__global__ void __launch_bounds__(kNaiveThreads) hgemm_wmma_naive(WmmaArgs<__half> g) {
    // BEGIN SOLUTION: warp owns a 16x16 C tile; per 16 of K: load A, B fragments, mma_sync; store
    using Op = Fp16Inputs;
    // Per warp: a zero-padded 16x16 copy of the A and B tiles for the steps where a fragment cannot
    // be read from global memory (edges, or the WMMA rules broken), and the staging area of C.
    __shared__ __align__(32) __half a_edge[kNaiveWarps][16 * 16];
    __shared__ __align__(32) __half b_edge[kNaiveWarps][16 * 16];
    __shared__ __align__(32) float c_stage[kNaiveWarps][16 * kStageLd];

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int row0 = blockIdx.y * (16 * kNaiveWarpsM) + (warp / kNaiveWarpsN) * 16;
    const int col0 = blockIdx.x * (16 * kNaiveWarpsN) + (warp % kNaiveWarpsN) * 16;
    // A warp whose tile lies wholly outside C has nothing to do. Returning is safe here because this
    // kernel has no block-wide barrier, only __syncwarp() within each warp.
    if (row0 >= g.M || col0 >= g.N) return;

    Op::FragA a;
    Op::FragB b;
    Op::FragC acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < g.K; k0 += 16) {
        // Each condition is the same for the 32 lanes, so the warp never splits: WMMA calls must be
        // made by all lanes of a warp together.
        if (g.a_direct && row0 + 16 <= g.M && k0 + 16 <= g.K) {
            wmma::load_matrix_sync(a, g.A + size_t(row0) * g.K + k0, unsigned(g.K));
        } else {
            stage_tile_zero_padded(a_edge[warp], g.A + size_t(row0) * g.K + k0, g.K, g.M - row0, g.K - k0,
                                   lane);
            __syncwarp();
            wmma::load_matrix_sync(a, a_edge[warp], 16);
        }
        if (g.b_direct && k0 + 16 <= g.K && col0 + 16 <= g.N) {
            wmma::load_matrix_sync(b, g.B + size_t(k0) * g.N + col0, unsigned(g.N));
        } else {
            stage_tile_zero_padded(b_edge[warp], g.B + size_t(k0) * g.N + col0, g.N, g.K - k0, g.N - col0,
                                   lane);
            __syncwarp();
            wmma::load_matrix_sync(b, b_edge[warp], 16);
        }
        wmma::mma_sync(acc, a, b, acc);
        __syncwarp();  // every lane has read the staged tiles before the next step overwrites them
    }
    store_fragment(acc, g, row0, col0, c_stage[warp]);
    // END SOLUTION
}

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

// How THREADS threads split a ROWS x COLS tile into 16-byte chunks of CHUNK elements: consecutive
// threads take consecutive chunks of a row (coalesced reads), and a thread's chunks lie ROW_STEP
// rows apart in one column, so its column and its column guard stay the same for every chunk.
template <int ROWS, int COLS, int CHUNK, int THREADS>
struct ChunkGrid {
    static constexpr int PER_ROW = COLS / CHUNK;
    static constexpr int ROW_STEP = THREADS / PER_ROW;
    static constexpr int PER_THREAD = ROWS / ROW_STEP;
    static_assert(COLS % CHUNK == 0, "a tile row must be a whole number of 16-byte chunks");
    static_assert(THREADS % PER_ROW == 0,
                  "the threads must cover whole tile rows, so that each thread keeps one column");
    static_assert(ROWS % ROW_STEP == 0, "every thread must move the same number of chunks");
    __host__ __device__ static constexpr int row(int tid, int i) { return tid / PER_ROW + i * ROW_STEP; }
    __host__ __device__ static constexpr int col(int tid) { return tid % PER_ROW * CHUNK; }
};

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

    using AChunks = ChunkGrid<BM, BK, Op::CHUNK, THREADS>;  // rows: m, columns: k
    using BChunks = ChunkGrid<BK, BN, Op::CHUNK, THREADS>;  // rows: k, columns: n

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

// cp.async (sm_80+) copies global memory into shared memory without passing through registers,
// and the thread moves on while the copy is in flight. With a source size of 0 it reads nothing and
// writes 16 zero bytes: the guard costs nothing. Copies are grouped by commit_group, and
// wait_group N waits until at most N of this thread's groups are still in flight.
// Before sm_80 (and for the element-wise path) the same call is an ordinary load and store; the
// main loop's barriers keep that correct, only the overlap is lost.
template <class T, bool VEC>
__device__ __forceinline__ void copy_chunk_async(T* dst, const T* src, int valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if constexpr (VEC) {
        const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
        const size_t src_global = __cvta_generic_to_global(src);
        const int src_bytes = valid > 0 ? 16 : 0;
        // .cg: cached in L2 only; a tile is read once per block, L1 would not help. (LDGSTS.BYPASS.128)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_shared), "l"(src_global),
                     "r"(src_bytes)
                     : "memory");
        return;
    }
#endif
    *reinterpret_cast<uint4*>(dst) = load_chunk<T, VEC>(src, valid);
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

// A thread's chunks of a tile lie ROW_STEP rows apart in one column (ChunkGrid), and the next tile
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

// TF32 rounded in shared memory (Tf32RoundedInShared): this thread's own chunks of a stage, after
// they have landed (cp.async.wait_group, or the thread's own stores) and before the barrier after
// which other warps read them. A thread sees its own completed copies without a barrier.
__device__ __forceinline__ float4 round_chunk_tf32(float4 v) {
    return make_float4(tf32_round(v.x), tf32_round(v.y), tf32_round(v.z), tf32_round(v.w));
}

template <class Cfg>
__device__ __forceinline__ void round_own_chunks(typename Cfg::Element* As, typename Cfg::Element* Bs) {
    if constexpr (Cfg::Inputs::kRoundInShared) {
        using AC = typename Cfg::AChunks;
        using BC = typename Cfg::BChunks;
        const int tid = threadIdx.x;
#pragma unroll
        for (int i = 0; i < AC::PER_THREAD; ++i) {
            float4* p = reinterpret_cast<float4*>(&As[AC::row(tid, i) * Cfg::A_LD + AC::col(tid)]);
            *p = round_chunk_tf32(*p);
        }
#pragma unroll
        for (int i = 0; i < BC::PER_THREAD; ++i) {
            float4* p = reinterpret_cast<float4*>(&Bs[BC::row(tid, i) * Cfg::B_LD + BC::col(tid)]);
            *p = round_chunk_tf32(*p);
        }
    }
}

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
// Blocks start roughly in the order of their linear index (x fastest). In plain row-major order
// the blocks that run at the same time share a few row panels of A but touch every column panel
// of B, and at 8192^3 in FP16 B alone is 128 MB, more than the L2 cache. Walking the tiles in
// bands of `group` tile rows, down each column of a band before moving right, keeps a band's
// panels of A and a few panels of B in L2 while they are reused.
struct TileIndex {
    int row, col;  // tile row and tile column
};
__host__ __device__ constexpr TileIndex swizzled_tile(int linear, int tiles_m, int tiles_n, int group) {
    const int band = linear / (group * tiles_n);
    const int first_row = band * group;
    const int rows_here = tiles_m - first_row < group ? tiles_m - first_row : group;  // last band is short
    const int in_band = linear - band * group * tiles_n;
    return {first_row + in_band % rows_here, in_band / rows_here};
}

template <class Cfg, class T>
__device__ __forceinline__ BlockCoord block_coord(const WmmaArgs<T>& g) {
    const TileIndex tile =
        swizzled_tile(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, g.group_rows);
    return {tile.row * Cfg::BM, tile.col * Cfg::BN};
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

enum class Mainloop {
    load_then_compute,  // steps 2 and 3: one stage; load, barrier, compute, barrier
    cp_async_ring,      // steps 4 to 6: STAGES stages filled by cp.async, STAGES - 1 tiles ahead
};

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
        round_own_chunks<Cfg>(a_stage<Cfg>(smem, 0), b_stage<Cfg>(smem, 0));
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
        round_own_chunks<Cfg>(a_stage<Cfg>(smem, kt % Cfg::STAGES), b_stage<Cfg>(smem, kt % Cfg::STAGES));
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
            float4 w = make_float4(g.alpha * v.x, g.alpha * v.y, g.alpha * v.z, g.alpha * v.w);
            if (g.beta != 0.0f) {  // read C only when it counts: with beta == 0 it may hold NaN
                const float4 old = *reinterpret_cast<const float4*>(out);
                w.x += g.beta * old.x;
                w.y += g.beta * old.y;
                w.z += g.beta * old.z;
                w.w += g.beta * old.w;
            }
            *reinterpret_cast<float4*>(out) = w;  // STG.128
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
template <class Cfg, Mainloop LOOP, Epilogue EPI, bool VEC>
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

        if constexpr (LOOP == Mainloop::load_then_compute)
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

// ---- 10. Step 7 (TF32): mma.sync, the instruction under WMMA ----------------------------------
//
// WMMA hides which element of a tile each lane holds, so every TF32 fragment load goes through
// wmma.load: 4 loads of 4 bytes per fragment, each with its own address arithmetic, and the rounding
// is applied to an opaque array; and on sm_90 one TF32 wmma::mma_sync becomes four HMMA.1684 (k = 4)
// instructions (README, "Why WMMA's TF32 stays near a third of cuBLAS"). The PTX instruction
// mma.sync.m16n8k8 with .tf32 inputs is one HMMA.1688 (k = 8), and the PTX ISA documents its layout.
// With lane = 4 g + t (g = lane / 4 in 0..7, t = lane % 4):
//
//   A, 16 x 8, row-major:    a0 = A[g][t]    a1 = A[g+8][t]    a2 = A[g][t+4]    a3 = A[g+8][t+4]
//   B,  8 x 8, "col":        b0 = B[t][g]    b1 = B[t+4][g]
//   C, 16 x 8:               c0 = C[g][2t]   c1 = C[g][2t+1]   c2 = C[g+8][2t]   c3 = C[g+8][2t+1]
//
// Knowing the layout buys three more things:
//   - A in one instruction. ldmatrix (made for 16-bit data) hands lane 4 g + t the 4-byte word t of
//     row g of an 8 x 16-byte matrix: read as floats, that is A[g][t] of an 8 x 4 block, exactly a0.
//     One ldmatrix.x4 fetches a0..a3 (four 8 x 4 blocks) instead of 4 separate loads.
//   - B as plain 4-byte shared loads whose addresses are a per-lane base plus constants: no
//     per-load address arithmetic.
//   - The accumulators written straight into the epilogue's staging area, no fragment store.
// Everything else is the kernel of steps 4 to 6: the same tiles, cp.async ring (section 7), padding
// and staged epilogue (section 8). A warp tile of WM x WN is (WM / 16) x (WN / 8) mma.sync tiles.
struct Tf32MmaInputs {
    using Element = float;
    static constexpr int FRAG_K = 8;
    static constexpr int CHUNK = 16 / int(sizeof(Element));
    static constexpr int kMinCc = 80;
    static constexpr bool kRoundInShared = false;
    static constexpr bool kTiesEven = true;
    static constexpr bool kCompiled = WB06_TF32_WMMA != 0;
};

// Rounded once per element of a shared tile (round_own_chunks, section 5) instead of after every
// fragment load: the counterexample of the WMMA path (Tf32RoundedInShared), measured again here.
struct Tf32MmaRoundedInShared : Tf32MmaInputs {
    static constexpr bool kRoundInShared = true;
};

// The cost of the rounding instruction: ties away from zero (cvt.rna, 2 instructions) everywhere.
struct Tf32MmaTiesAway : Tf32MmaInputs {
    static constexpr bool kTiesEven = false;
};

template <class Cfg>
using MmaAccumulators = float[Cfg::FM][2 * Cfg::FN][4];  // [m-tile of 16][n-tile of 8][c0..c3]

// The instructions, each one line of PTX. Shared addresses are 32-bit byte offsets
// (__cvta_generic_to_shared). The loads are volatile with a "memory" clobber, like
// Tf32Inputs::load_shared: they must stay between the main loop's barriers.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}
__device__ __forceinline__ unsigned lds32(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
// d = a * b + d on one 16x8 tile, k = 8.
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if WB06_TF32_WMMA
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Where this lane's loads start inside a stage, in bytes; every load of the stage adds a constant.
//   A: ldmatrix.x4 takes 4 matrices of 8 rows; lanes 8 q .. 8 q + 7 name the rows of matrix q.
//      Matrix 0 = rows 0-7, columns 0-3 (a0); 1 = rows 8-15 (a1); 2 = rows 0-7, columns 4-7 (a2);
//      3 = rows 8-15, columns 4-7 (a3).
//   B: lane (g, t) reads B[t][g] and B[t + 4][g].
template <class Cfg>
__device__ __forceinline__ unsigned mma_a_lane_offset(int warp_row, int lane) {
    const int row = warp_row + lane % 8 + 8 * (lane / 8 % 2);
    const int col = 4 * (lane / 16);
    return unsigned(row * Cfg::A_LD + col) * 4u;
}
template <class Cfg>
__device__ __forceinline__ unsigned mma_b_lane_offset(int warp_col, int lane) {
    return unsigned((lane % 4) * Cfg::B_LD + warp_col + lane / 4) * 4u;
}

// One stage: per k-step of 8, FM ldmatrix.x4 for A and 2 FN pairs of loads for B, every element
// rounded once after its load (unless the tile was rounded in shared memory), then FM x 2 FN
// mma.sync.
template <class Cfg>
__device__ __forceinline__ unsigned round_loaded(unsigned bits) {
    return Cfg::Inputs::kRoundInShared ? bits
                                       : __float_as_uint(tf32_round<Cfg::Inputs::kTiesEven>(__uint_as_float(bits)));
}
template <class Cfg>
__device__ __forceinline__ void mma_sync_stage(unsigned a_lane, unsigned b_lane, MmaAccumulators<Cfg>& acc) {
    // BEGIN SOLUTION: per k-step of 8: ldmatrix_x4 per m-tile, lds32 pairs per n-tile, round_loaded, mma
    constexpr int MT = Cfg::FM, NT = 2 * Cfg::FN;
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += 8) {
        unsigned a[MT][4], b[NT][2];
#pragma unroll
        for (int i = 0; i < MT; ++i) {
            ldmatrix_x4(a[i], a_lane + 4u * unsigned(16 * i * Cfg::A_LD + kk));
#pragma unroll
            for (int e = 0; e < 4; ++e) a[i][e] = round_loaded<Cfg>(a[i][e]);
        }
#pragma unroll
        for (int j = 0; j < NT; ++j) {
            b[j][0] = round_loaded<Cfg>(lds32(b_lane + 4u * unsigned(kk * Cfg::B_LD + 8 * j)));
            b[j][1] = round_loaded<Cfg>(lds32(b_lane + 4u * unsigned((kk + 4) * Cfg::B_LD + 8 * j)));
        }
#pragma unroll
        for (int i = 0; i < MT; ++i)
#pragma unroll
            for (int j = 0; j < NT; ++j) mma_m16n8k8_tf32(acc[i][j], a[i], b[j]);
    }
    // END SOLUTION
}

// The epilogue of section 8 with a known layout: lane (g, t) writes c0, c1 to row g and c2, c3 to
// row g + 8 of the staging area, 8 bytes each (STS.64), then stage_row_to_c moves the row to C.
template <class Cfg>
__device__ __forceinline__ void epilogue_mma(const WmmaArgs<float>& g, const BlockCoord& t, int warp_row,
                                             int warp_col, MmaAccumulators<Cfg>& acc, float* warp_stage) {
    const int lane = threadIdx.x % 32, gr = lane / 4, tc = lane % 4;
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) {
#pragma unroll
        for (int j = 0; j < 2 * Cfg::FN; ++j) {
            float* p = warp_stage + gr * Cfg::STAGE_LD + 8 * j + 2 * tc;
            *reinterpret_cast<float2*>(p) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(p + 8 * Cfg::STAGE_LD) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
        __syncwarp();
        stage_row_to_c<Cfg>(g, t.m0 + warp_row + 16 * i, t.n0 + warp_col, warp_stage);
        __syncwarp();
    }
}

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) mma_tf32_gemm(WmmaArgs<float> g) {
    static_assert(std::is_base_of<Tf32MmaInputs, typename Cfg::Inputs>::value, "a Tiling of Tf32MmaInputs");
    static_assert(Cfg::SKEW_A % 8 == 4, "ldmatrix reads 8 rows of 16 bytes: rows of A must be 4 (mod 8) "
                                        "floats long to be conflict-free");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Cfg::Inputs::kCompiled) {
        float* smem = reinterpret_cast<float*>(smem_bytes);
        const BlockCoord t = block_coord<Cfg>(g);
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;
        const unsigned a_lane = mma_a_lane_offset<Cfg>(warp_row, lane);
        const unsigned b_lane = mma_b_lane_offset<Cfg>(warp_col, lane);

        MmaAccumulators<Cfg> acc;
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
            for (int j = 0; j < 2 * Cfg::FN; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

        mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const float* As, const float* Bs) {
            mma_sync_stage<Cfg>(static_cast<unsigned>(__cvta_generic_to_shared(As)) + a_lane,
                                static_cast<unsigned>(__cvta_generic_to_shared(Bs)) + b_lane, acc);
        });

        __syncthreads();
        epilogue_mma<Cfg>(g, t, warp_row, warp_col, acc,
                          reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE);
    } else {
        __trap();  // sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// ---- 11. Launchers -----------------------------------------------------------------------------

// What the launchers need to know about the current GPU, read once per device (the queries would
// otherwise add host time to every timed launch).
struct GpuFacts {
    int cc = 0;              // 90 for sm_90
    int sms = 0;             // multiprocessors
    int smem_per_block = 0;  // the most dynamic shared memory a block may opt in to
};
inline const GpuFacts& current_gpu() {
    constexpr int kMaxDevices = 64;
    static GpuFacts cache[kMaxDevices];
    int dev = 0;
    WB_CUDA_CHECK(cudaGetDevice(&dev));
    if (dev < 0 || dev >= kMaxDevices) throw std::runtime_error("device index out of range");
    GpuFacts& f = cache[dev];
    if (f.cc == 0) {
        int major = 0, minor = 0;
        WB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
        WB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
        WB_CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, dev));
        WB_CUDA_CHECK(
            cudaDeviceGetAttribute(&f.smem_per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
        f.cc = major * 10 + minor;
    }
    return f;
}

// The clean "not supported" path: a clear error instead of a kernel that cannot run.
inline void require_gpu(int min_cc, int smem_bytes, const char* what) {
    const GpuFacts& gpu = current_gpu();
    if (gpu.cc < min_cc)
        throw std::runtime_error(std::string(what) + " needs compute capability " +
                                 std::to_string(min_cc / 10) + "." + std::to_string(min_cc % 10) +
                                 " or later; this GPU is sm_" + std::to_string(gpu.cc));
    if (smem_bytes > gpu.smem_per_block)
        throw std::runtime_error(std::string(what) + " needs " + std::to_string(smem_bytes) +
                                 " bytes of shared memory per block; this GPU grants " +
                                 std::to_string(gpu.smem_per_block));
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

// A tiled kernel with Cfg::THREADS threads and Cfg::SMEM_BYTES of dynamic shared memory. Above
// 48 KB a kernel must opt in, once per kernel (one GPU per process assumed): the kernel is a
// template argument, so that each kernel gets its own `raised` flag.
template <class Cfg, auto KERNEL, class Args>
void launch_tiled_kernel(const Args& g, dim3 grid, cudaStream_t stream) {
    if constexpr (Cfg::SMEM_BYTES > 48 * 1024) {
        static const bool raised = [] {
            WB_CUDA_CHECK(
                cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES));
            return true;
        }();
        (void)raised;
    }
    KERNEL<<<grid, Cfg::THREADS, Cfg::SMEM_BYTES, stream>>>(g);
    WB_LAUNCH_CHECK();
}

// One kernel instantiation with ready-made arguments (the tests' planted bugs come in here too).
template <class Cfg, Mainloop LOOP, Epilogue EPI, bool VEC>
void launch_wmma_kernel(const WmmaArgs<typename Cfg::Element>& g, dim3 grid, cudaStream_t stream) {
    launch_tiled_kernel<Cfg, wmma_gemm_tiled<Cfg, LOOP, EPI, VEC>>(g, grid, stream);
}

// The launcher of every tiled step and configuration, with the chapter's signature (HgemmFn for
// FP16 inputs, SgemmFn for TF32). GROUP: tile rows per band of the block order (1: none). It checks
// the GPU and the alignment itself and takes the element-wise path where 16-byte copies would be
// unsafe.
template <class Cfg, Mainloop LOOP, Epilogue EPI, int GROUP = 1>
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

// Step 7 (section 10), SgemmFn: the same checks, the same two paths.
template <class Cfg, int GROUP>
void launch_mma_tf32(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                     cudaStream_t stream) {
    require_gpu(Cfg::Inputs::kMinCc, Cfg::SMEM_BYTES, "TF32 mma.sync");
    const WmmaArgs<float> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, GROUP);
    if (chunk_access_ok(A, K) && chunk_access_ok(B, N))
        launch_tiled_kernel<Cfg, mma_tf32_gemm<Cfg, true>>(g, tiled_grid<Cfg>(M, N), stream);
    else
        launch_tiled_kernel<Cfg, mma_tf32_gemm<Cfg, false>>(g, tiled_grid<Cfg>(M, N), stream);
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
template <class Cfg, Mainloop LOOP, Epilogue EPI>
wb::KernelInfo kernel_info() {
    return {(const void*)wmma_gemm_tiled<Cfg, LOOP, EPI, true>, Cfg::THREADS, size_t(Cfg::SMEM_BYTES)};
}

// ---- 12. Tile configurations, the tuning tables and the default choice ----------------------------
// Parameters: Op, BM, BN, BK, WM, WN, STAGES, SKEW_A, SKEW_B.
// Steps 2 and 3: 8 warps of 64 x 32 (4 x 2 fragments), one stage, without and with padding.
using H128Plain = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 1, 0, 0>;
using H128Skewed = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 1, 8, 8>;
// The cp.async configurations (BK = 32 halves = 64 bytes per row of A).
using H64S3 = Tiling<Fp16Inputs, 64, 64, 32, 32, 32, 3, 8, 8>;         // 4 warps, small problems
using H128S3 = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 3, 8, 8>;      // 8 warps of 64x32, 55.5 KB
using H128S4 = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 4, 8, 8>;      // 74 KB
using H128W64S3 = Tiling<Fp16Inputs, 128, 128, 32, 64, 64, 3, 8, 8>;   // 4 warps of 64x64
using H128x256S3 = Tiling<Fp16Inputs, 128, 256, 32, 64, 64, 3, 8, 8>;  // 8 warps of 64x64, 79.5 KB
using H256x128S3 = Tiling<Fp16Inputs, 256, 128, 32, 64, 64, 3, 8, 8>;  // 8 warps of 64x64, 85.5 KB
// TF32: BK = 16 floats (64 bytes per row of A, as above); padding 4 floats on A, 8 on B.
using T64S3 = Tiling<Tf32Inputs, 64, 64, 16, 32, 32, 3, 4, 8>;
using T128S3 = Tiling<Tf32Inputs, 128, 128, 16, 64, 32, 3, 4, 8>;
using T128S4 = Tiling<Tf32Inputs, 128, 128, 16, 64, 32, 4, 4, 8>;
using T128W64S3 = Tiling<Tf32Inputs, 128, 128, 16, 64, 64, 3, 4, 8>;
using T128x256S3 = Tiling<Tf32Inputs, 128, 256, 16, 64, 64, 3, 4, 8>;
using T256x128S3 = Tiling<Tf32Inputs, 256, 128, 16, 64, 64, 3, 4, 8>;
// TF32 on sm_90 only (more than the 99 KB that sm_86/sm_89 grant): BK = 32 floats, 105 KB, two
// blocks of 4 warps per SM. _rs: the same, rounded in shared memory instead of in the fragments.
using T128W64K32S3 = Tiling<Tf32Inputs, 128, 128, 32, 64, 64, 3, 4, 8>;
using T128W64K32S3Rs = Tiling<Tf32RoundedInShared, 128, 128, 32, 64, 64, 3, 4, 8>;
using T128x256K32S3 = Tiling<Tf32Inputs, 128, 256, 32, 64, 64, 3, 4, 8>;
// Step 7, mma.sync (section 10). Same parameters; SKEW_A 4 makes rows of A 4 (mod 8) floats long
// (ldmatrix), SKEW_B 8 makes rows of B 8 (mod 32) (the 4-byte loads of B).
using M128W64S3 = Tiling<Tf32MmaInputs, 128, 128, 16, 64, 64, 3, 4, 8>;
using M128W64K32S3 = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 3, 4, 8>;   // 105 KB: sm_90
using M128W64K32S4 = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 4, 4, 8>;   // 140 KB: sm_90
using M128x256K32S3 = Tiling<Tf32MmaInputs, 128, 256, 32, 64, 64, 3, 4, 8>;  // 158 KB: sm_90
using M128W64x32S3 = Tiling<Tf32MmaInputs, 128, 128, 16, 64, 32, 3, 4, 8>;   // 8 warps
using M128x256S3 = Tiling<Tf32MmaInputs, 128, 256, 16, 64, 64, 3, 4, 8>;     // 79.5 KB
using M256x128K32S3 = Tiling<Tf32MmaInputs, 256, 128, 32, 64, 64, 3, 4, 8>;  // 159 KB: sm_90
using M128W64S3Rs = Tiling<Tf32MmaRoundedInShared, 128, 128, 16, 64, 64, 3, 4, 8>;
using M128x256K32S3Rs = Tiling<Tf32MmaRoundedInShared, 128, 256, 32, 64, 64, 3, 4, 8>;
using M128W64K32S3Rna = Tiling<Tf32MmaTiesAway, 128, 128, 32, 64, 64, 3, 4, 8>;
using M64S3 = Tiling<Tf32MmaInputs, 64, 64, 32, 32, 32, 3, 4, 8>;  // 4 warps of 32x32, small problems
using M128W64K32S2 = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 2, 4, 8>;  // 70 KB: sm_80 and later

constexpr int kBand = 8;  // tile rows per band of the block order (section 6)

// One row of a configuration table: everything runs the ring, the staged epilogue and the banded
// block order unless its name says otherwise (..._g1: plain row-major block order).
template <class Cfg, int GROUP = kBand>
constexpr auto config_launcher() {
    return launch_wmma_tiled<Cfg, Mainloop::cp_async_ring, Epilogue::staged_in_smem, GROUP>;
}
template <class Cfg>
wb::KernelInfo config_info() {
    return kernel_info<Cfg, Mainloop::cp_async_ring, Epilogue::staged_in_smem>();
}
template <class Cfg, int GROUP = kBand>
constexpr auto mma_launcher() {
    return launch_mma_tf32<Cfg, GROUP>;
}
template <class Cfg>
wb::KernelInfo mma_info() {
    return {(const void*)mma_tf32_gemm<Cfg, true>, Cfg::THREADS, size_t(Cfg::SMEM_BYTES)};
}

// Every compiled-in configuration. `--tune` runs them all on the requested shapes and prints the
// fastest per shape; kHgemmDefaults and kTf32Defaults below name rows of these tables.
// Names: h (FP16) or t (TF32), block tile, w + warp tile, s + stages.
// clang-format off
inline const wb::HgemmVariant kHgemmConfigs[] = {
    {"h_64x64_w32x32_s3", config_launcher<H64S3>(), "4 warps of 2x2 fragments: many blocks for small C",
     config_info<H64S3>(), min_cc_of<H64S3>()},
    {"h_128x128_w64x32_s3", config_launcher<H128S3>(), "8 warps of 4x2 fragments, 3 stages, 2 blocks/SM",
     config_info<H128S3>(), min_cc_of<H128S3>()},
    {"h_128x128_w64x32_s4", config_launcher<H128S4>(), "8 warps of 4x2 fragments, 4 stages",
     config_info<H128S4>(), min_cc_of<H128S4>()},
    {"h_128x128_w64x64_s3", config_launcher<H128W64S3>(), "4 warps of 4x4 fragments, 3 stages",
     config_info<H128W64S3>(), min_cc_of<H128W64S3>()},
    {"h_128x256_w64x64_s3", config_launcher<H128x256S3>(), "8 warps of 4x4 fragments, 3 stages",
     config_info<H128x256S3>(), min_cc_of<H128x256S3>()},
    {"h_128x256_w64x64_s3_g1", config_launcher<H128x256S3, 1>(), "the same in plain row-major block order",
     config_info<H128x256S3>(), min_cc_of<H128x256S3>()},
    {"h_256x128_w64x64_s3", config_launcher<H256x128S3>(), "8 warps of 4x4 fragments, tall block tile",
     config_info<H256x128S3>(), min_cc_of<H256x128S3>()},
};
inline const wb::SgemmVariant kTf32Configs[] = {
    {"t_64x64_w32x32_s3", config_launcher<T64S3>(), "TF32, 4 warps of 2x2 fragments",
     wb::Precision::tf32, config_info<T64S3>(), min_cc_of<T64S3>()},
    {"t_128x128_w64x32_s3", config_launcher<T128S3>(), "TF32, 8 warps of 4x2 fragments, 3 stages",
     wb::Precision::tf32, config_info<T128S3>(), min_cc_of<T128S3>()},
    {"t_128x128_w64x32_s4", config_launcher<T128S4>(), "TF32, 8 warps of 4x2 fragments, 4 stages",
     wb::Precision::tf32, config_info<T128S4>(), min_cc_of<T128S4>()},
    {"t_128x128_w64x64_s3", config_launcher<T128W64S3>(), "TF32, 4 warps of 4x4 fragments",
     wb::Precision::tf32, config_info<T128W64S3>(), min_cc_of<T128W64S3>()},
    {"t_128x256_w64x64_s3", config_launcher<T128x256S3>(), "TF32, 8 warps of 4x4 fragments",
     wb::Precision::tf32, config_info<T128x256S3>(), min_cc_of<T128x256S3>()},
    {"t_256x128_w64x64_s3", config_launcher<T256x128S3>(), "TF32, 8 warps of 4x4 fragments, tall tile",
     wb::Precision::tf32, config_info<T256x128S3>(), min_cc_of<T256x128S3>()},
    {"t_128x128_w64x64_k32_s3", config_launcher<T128W64K32S3>(), "TF32, BK = 32 floats, 4 warps of 4x4 fragments",
     wb::Precision::tf32, config_info<T128W64K32S3>(), min_cc_of<T128W64K32S3>()},
    {"t_128x128_w64x64_k32_s3_rs", config_launcher<T128W64K32S3Rs>(), "the same, rounded in shared memory",
     wb::Precision::tf32, config_info<T128W64K32S3Rs>(), min_cc_of<T128W64K32S3Rs>()},
    {"t_128x256_w64x64_k32_s3", config_launcher<T128x256K32S3>(), "TF32, BK = 32 floats, 8 warps of 4x4 fragments",
     wb::Precision::tf32, config_info<T128x256K32S3>(), min_cc_of<T128x256K32S3>()},
    {"m_128x128_w64x64_s3", mma_launcher<M128W64S3>(), "TF32 mma.sync (step 7), 4 warps of 64x64",
     wb::Precision::tf32, mma_info<M128W64S3>(), min_cc_of<M128W64S3>()},
    {"m_128x128_w64x32_s3", mma_launcher<M128W64x32S3>(), "TF32 mma.sync, 8 warps of 64x32",
     wb::Precision::tf32, mma_info<M128W64x32S3>(), min_cc_of<M128W64x32S3>()},
    {"m_128x128_w64x64_k32_s3", mma_launcher<M128W64K32S3>(), "TF32 mma.sync, BK = 32 floats",
     wb::Precision::tf32, mma_info<M128W64K32S3>(), min_cc_of<M128W64K32S3>()},
    {"m_128x128_w64x64_k32_s4", mma_launcher<M128W64K32S4>(), "TF32 mma.sync, BK = 32, 4 stages",
     wb::Precision::tf32, mma_info<M128W64K32S4>(), min_cc_of<M128W64K32S4>()},
    {"m_128x256_w64x64_k32_s3", mma_launcher<M128x256K32S3>(), "TF32 mma.sync, BK = 32, 8 warps of 64x64",
     wb::Precision::tf32, mma_info<M128x256K32S3>(), min_cc_of<M128x256K32S3>()},
    {"m_128x256_w64x64_s3", mma_launcher<M128x256S3>(), "TF32 mma.sync, 8 warps of 64x64",
     wb::Precision::tf32, mma_info<M128x256S3>(), min_cc_of<M128x256S3>()},
    {"m_256x128_w64x64_k32_s3", mma_launcher<M256x128K32S3>(), "TF32 mma.sync, BK = 32, tall tile",
     wb::Precision::tf32, mma_info<M256x128K32S3>(), min_cc_of<M256x128K32S3>()},
    {"m_128x128_w64x64_s3_rs", mma_launcher<M128W64S3Rs>(), "TF32 mma.sync, rounded in shared memory",
     wb::Precision::tf32, mma_info<M128W64S3Rs>(), min_cc_of<M128W64S3Rs>()},
    {"m_128x256_w64x64_k32_s3_rs", mma_launcher<M128x256K32S3Rs>(), "TF32 mma.sync, BK = 32, rounded in shared",
     wb::Precision::tf32, mma_info<M128x256K32S3Rs>(), min_cc_of<M128x256K32S3Rs>()},
    {"m_128x128_w64x64_k32_s3_rna", mma_launcher<M128W64K32S3Rna>(), "TF32 mma.sync, BK = 32, ties away (cvt.rna)",
     wb::Precision::tf32, mma_info<M128W64K32S3Rna>(), min_cc_of<M128W64K32S3Rna>()},
    {"m_128x128_w64x64_k32_s2", mma_launcher<M128W64K32S2>(), "TF32 mma.sync, BK = 32, 2 stages (fits 99 KB)",
     wb::Precision::tf32, mma_info<M128W64K32S2>(), min_cc_of<M128W64K32S2>()},
    {"m_64x64_w32x32_s3", mma_launcher<M64S3>(), "TF32 mma.sync, BK = 32, 4 warps of 32x32: small problems",
     wb::Precision::tf32, mma_info<M64S3>(), min_cc_of<M64S3>()},
};
// clang-format on

// The default per GPU generation and problem size. `large` when C has at least one 128x256 tile per
// SM, `medium` when it has one 128x128 tile per SM, `small` otherwise (more, smaller blocks keep the
// SMs busy). After `--tune` on your GPU, copy the winners' names here. The first line whose min_cc
// the GPU reaches is used; the last line must have min_cc 0.
struct DefaultChoice {
    int min_cc;
    const char* large;
    const char* medium;
    const char* small;
};
inline const DefaultChoice kHgemmDefaults[] = {
    {90, "h_128x128_w64x64_s3", "h_128x128_w64x32_s3", "h_64x64_w32x32_s3"},  // Hopper: H200 --tune, 2026-11-29
    {80, "h_128x256_w64x64_s3", "h_128x128_w64x32_s3", "h_64x64_w32x32_s3"},  // Ampere, Ada (not measured)
    {0, "h_128x128_w64x32_s3", "h_128x128_w64x32_s3", "h_64x64_w32x32_s3"},   // Turing: 64 KB of smem
};
// TF32: step 7 (mma.sync) wins every shape on the H200; its 2-stage BK = 32 tile (70 KB) was as fast
// as 3 stages (105 KB) and fits the 99 KB of Ampere and Ada too.
inline const DefaultChoice kTf32Defaults[] = {
    {90, "m_128x128_w64x64_k32_s2", "m_128x128_w64x64_k32_s2", "m_64x64_w32x32_s3"},  // H200 --tune, 2026-11-29
    {0, "m_128x128_w64x64_k32_s2", "m_128x128_w64x64_k32_s2", "m_64x64_w32x32_s3"},  // Ampere, Ada (not measured)
};

template <size_t N>
const DefaultChoice& default_choice(const DefaultChoice (&table)[N], int cc) {
    for (const DefaultChoice& d : table)
        if (cc >= d.min_cc) return d;
    return table[N - 1];
}

inline const char* default_name(const DefaultChoice& d, int sms, int M, int N) {
    if (wb::ceil_div(M, 128) * wb::ceil_div(N, 256) >= sms) return d.large;
    if (wb::ceil_div(M, 128) * wb::ceil_div(N, 128) >= sms) return d.medium;
    return d.small;
}

template <class Variant, size_t N>
const Variant& find_config(const Variant (&table)[N], const char* name) {
    for (const Variant& v : table)
        if (std::strcmp(v.name, name) == 0) return v;
    throw std::invalid_argument(std::string("a default names '") + name + "', which is not a configuration");
}

inline void launch_hgemm_best(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                              float* C, cudaStream_t stream) {
    const GpuFacts& gpu = current_gpu();
    const char* name = default_name(default_choice(kHgemmDefaults, gpu.cc), gpu.sms, M, N);
    find_config(kHgemmConfigs, name).run(M, N, K, alpha, A, B, beta, C, stream);
}

inline void launch_tf32_best(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                             float* C, cudaStream_t stream) {
    const GpuFacts& gpu = current_gpu();
    const char* name = default_name(default_choice(kTf32Defaults, gpu.cc), gpu.sms, M, N);
    find_config(kTf32Configs, name).run(M, N, K, alpha, A, B, beta, C, stream);
}

// ---- 13. The ladder ------------------------------------------------------------------------------
// clang-format off
inline const wb::HgemmVariant kHgemmVariants[] = {
    {"wmma_naive", launch_wmma_naive,
     "one warp per 16x16 tile of C, fragments loaded from global memory",
     {(const void*)hgemm_wmma_naive, kNaiveThreads, 0}, Fp16Inputs::kMinCc},
    {"wmma_smem", launch_wmma_tiled<H128Plain, Mainloop::load_then_compute, Epilogue::fragments_to_global>,
     "128x128x32 tiles in shared memory (16-byte loads), 8 warps of 4x2 fragments",
     kernel_info<H128Plain, Mainloop::load_then_compute, Epilogue::fragments_to_global>(), min_cc_of<H128Plain>()},
    {"wmma_smem_skewed", launch_wmma_tiled<H128Skewed, Mainloop::load_then_compute, Epilogue::fragments_to_global>,
     "+ 16 bytes of padding per shared row: conflict-free fragment loads",
     kernel_info<H128Skewed, Mainloop::load_then_compute, Epilogue::fragments_to_global>(), min_cc_of<H128Skewed>()},
    {"wmma_cp_async", launch_wmma_tiled<H128S3, Mainloop::cp_async_ring, Epilogue::fragments_to_global>,
     "+ a 3-stage cp.async ring: copies overlap the tensor-core work",
     kernel_info<H128S3, Mainloop::cp_async_ring, Epilogue::fragments_to_global>(), min_cc_of<H128S3>()},
    {"wmma_smem_epilogue", launch_wmma_tiled<H128S3, Mainloop::cp_async_ring, Epilogue::staged_in_smem>,
     "+ accumulators staged in shared memory, 16-byte coalesced stores of C",
     kernel_info<H128S3, Mainloop::cp_async_ring, Epilogue::staged_in_smem>(), min_cc_of<H128S3>()},
    {"wmma_128x256_swizzle", config_launcher<H128x256S3>(),
     "+ 128x256 tiles, 64x64 per warp (4x4 fragments), blocks in bands of 8 tile rows",
     config_info<H128x256S3>(), min_cc_of<H128x256S3>()},
    // The *_best variants run one of several kernels (the configuration picked per shape), so they
    // have no row of their own in the resource table: see --tune for the configurations' rows.
    {"wmma_best", launch_hgemm_best, "the configuration kHgemmDefaults picks for this GPU and shape",
     {}, Fp16Inputs::kMinCc},
};
inline const wb::SgemmVariant kTf32Variants[] = {
    {"tf32_wmma", config_launcher<T128S3>(),
     "TF32 m16n16k8 on FP32 inputs, same kernel: 128x128x16 tiles, 3 stages, staged epilogue",
     wb::Precision::tf32, config_info<T128S3>(), min_cc_of<T128S3>()},
    {"tf32_mma_sync", mma_launcher<M128W64K32S2>(),
     "step 7: the instruction under WMMA, mma.sync m16n8k8 with its documented layout, 128x128x32, 2 stages",
     wb::Precision::tf32, mma_info<M128W64K32S2>(), min_cc_of<M128W64K32S2>()},
    {"tf32_best", launch_tf32_best, "the configuration kTf32Defaults picks for this GPU and shape",
     wb::Precision::tf32, {}, Tf32Inputs::kMinCc},
};
// clang-format on
