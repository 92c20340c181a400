// mainloops.cuh - chapter 05: computing on a tile, the three main loops, the epilogue, and the
// kernel sgemm_float4<Tiling, Pipeline, VEC> that puts them together (with split-K's second kernel).
//
// The loops differ only in how the next tile reaches shared memory while the current one is being
// multiplied: not at all (single buffer), through registers (prefetch_regs), or by cp.async.
#pragma once

#include "gemm_device.cuh"
#include "gemm_tiles.cuh"
#include "tiles.cuh"

namespace ch05 {

// ---- Computing on a tile ------------------------------------------------------------------------

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
__device__ __forceinline__ void mainloop_single_buffer(const SplitArgs& g, const BlockTile& t, float* smem,
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
__device__ __forceinline__ void mainloop_prefetch_regs(const SplitArgs& g, const BlockTile& t, float* smem,
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
__device__ __forceinline__ void mainloop_cp_async(const SplitArgs& g, const BlockTile& t, float* smem,
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
__device__ __forceinline__ void store_tile(const SplitArgs& g, const BlockTile& t,
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
                wb::store_c4(out, make_float4(acc[r][c], acc[r][c + 1], acc[r][c + 2], acc[r][c + 3]),
                             g.alpha, g.beta);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < g.N) wb::store_c(out + j, acc[r][c + j], g.alpha, g.beta);
            }
        }
    }
}

// ---- The kernel ---------------------------------------------------------------------------------

// The three main loops above, named by wb::Pipeline (common/gemm_tiles.cuh): single_buffer
// (steps 1 and 2), prefetch_regs (step 3a), cp_async (step 3b).
using wb::Pipeline;

// Cfg: a Tiling (kernels.cuh). P: the main loop (above). VEC: float4 global loads and stores of
// A, B and C (true) or 4-byte ones (false, for unaligned data); shared memory reads are float4
// either way. The shared memory is dynamic (Cfg::SMEM_BYTES), so tiles above 48 KB work too.
template <class Cfg, Pipeline P, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) sgemm_float4(SplitArgs g) {
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

}  // namespace ch05
