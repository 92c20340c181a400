// step1_naive.cuh - chapter 06, step 1 (wmma_naive): one warp per 16x16 tile of C, fragments read
// straight from global memory. The simplest correct use of WMMA.
#pragma once

#include "wmma_common.cuh"

namespace ch06 {

// Warp w of a block owns the 16x16 tile of C at (row0, col0) and walks along K 16 columns at a
// time. Each step loads one 16x16 fragment of A and one of B and multiplies them into the
// accumulator fragment. Nothing is shared between warps, so every element of A is read from global
// memory (or L1/L2) once per tile of C that needs it: N / 16 times in all, and every element of B
// M / 16 times.
constexpr int kNaiveWarpsM = 2;  // a block is 2x2 warps: 32x32 of C
constexpr int kNaiveWarpsN = 2;
constexpr int kNaiveWarps = kNaiveWarpsM * kNaiveWarpsN;
constexpr int kNaiveThreads = 32 * kNaiveWarps;

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

constexpr int kStageLd = 16 + 8;  // floats per row of a 16x16 staging area for one fragment of C

// The epilogue of one accumulator fragment whose top-left element is C[row0][col0] (steps 1 to 4):
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

__global__ void __launch_bounds__(kNaiveThreads) wmma_naive(WmmaArgs<__half> g) {
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

inline void launch_wmma_naive(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                              float* C, cudaStream_t stream) {
    require_gpu(Fp16Inputs::kMinCc, 0, "WMMA");
    const WmmaArgs<__half> g = make_args(M, N, K, alpha, A, B, beta, C, 16, 1);
    const dim3 grid(wb::ceil_div(N, 16 * kNaiveWarpsN), wb::ceil_div(M, 16 * kNaiveWarpsM));
    wmma_naive<<<grid, kNaiveThreads, 0, stream>>>(g);
    WB_LAUNCH_CHECK();
}

}  // namespace ch06
