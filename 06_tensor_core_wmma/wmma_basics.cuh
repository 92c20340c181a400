// wmma_basics.cuh - chapter 06, what every step builds on: the two kinds of tensor-core input
// (FP16 and TF32, section 1), the rules a WMMA fragment access must obey and what a launcher
// decides from them (section 2), and step 1, the simplest correct WMMA kernel (section 3).
// kernels.cuh gives the overview of the chapter and includes this file first.
#pragma once

#include <mma.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda_check.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"
#include "gemm_tiles.cuh"

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
// from zero, 2 instructions per element: a compare that leaves Inf and NaN
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
        for (int e = 0; e < f.num_elements; ++e) f.x[e] = tf32_round(f.x[e]);
    }
    // A fragment of A or B from shared memory. wmma::load_matrix_sync on a TF32 fragment takes a
    // generic pointer, and nvcc keeps the load generic even when the pointer points into shared
    // memory: each fragment becomes 4 generic loads (LD.E) with 64-bit address arithmetic, where
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
