// step2_wgmma_128x256.cuh - step 2 of chapter 09 (variant wgmma_128x256): step 1's ring and loop on
// a tile four times larger, 128 x 256, shared by two warpgroups (64 rows each, m64n256k16: 128
// accumulators per thread). Each byte copied now feeds twice the multiply-adds, and each wgmma is
// twice as long, so its fixed issue cost weighs less.
#pragma once

#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 2's configuration: a 128 x 256 tile, 4 stages of (128 + 256) x 128 bytes = 192 KB, two
// warpgroups and no producer.
template <class T>
using Wgmma128x256 = WgmmaTiling<T, 128, 256, 4, 2, false, false>;

// One tile per block, tiles in the banded order of wb::this_block_tile. Thread 0 keeps the copies
// STAGES - 1 k-tiles ahead: before the math on k-tile kt it starts the copies of kt + STAGES - 1
// into the slot that k-tile kt - 1 used, once every warp has released that slot. While it waits,
// its warpgroup's math waits too (wgmma is .aligned: the warpgroup moves together): that is what
// step 3 fixes. Warpgroup wg computes rows wg * WG_ROWS.. of the tile.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS) wgmma_128x256_kernel(const __grid_constant__ WgmmaParams p) {
    static_assert(!Cfg::PRODUCER && !Cfg::PERSISTENT, "step 2: no producer warpgroup, one tile per block");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
    const wb::TileIndex t = wb::this_block_tile(p.group_rows);
    const int m0 = t.m * Cfg::BM, n0 = t.n * Cfg::BN;
    const int k_tiles = wb::ceil_div(p.K, Cfg::BK);

    if (threadIdx.x == 0) {
        ring.init();
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    __syncthreads();
    if (threadIdx.x == 0)  // the first STAGES - 1 slots are free: no wait
        for (int kt = 0; kt < Cfg::STAGES - 1 && kt < k_tiles; ++kt) load_stage(ring, kt, p, m0, n0, kt);

    float acc[Cfg::WG_MMAS][Cfg::BN / 2];
    zero<Cfg>(acc);
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int ahead = kt + Cfg::STAGES - 1;
        if (threadIdx.x == 0 && ahead < k_tiles) {
            const int s = ahead % Cfg::STAGES;
            // Use u = ahead / STAGES of slot s needs use u - 1 released (phase u - 1 of empty[s]);
            // for u = 0 the parity is 1, which a fresh barrier reports as already complete.
            mbar_wait(ring.empty(s), ((ahead / Cfg::STAGES) & 1) ^ 1);
            load_stage(ring, s, p, m0, n0, ahead);
        }
        __syncwarp();  // wgmma is .aligned: warp 0 must be converged again
        const int s = kt % Cfg::STAGES;
        mbar_wait(ring.full(s), (kt / Cfg::STAGES) & 1);
        fence_accumulators(acc);
        wgmma_fence();
        mma_stage<Cfg>(acc, ring, s, wg * Cfg::WG_ROWS);
        wgmma_commit();
        wgmma_wait<0>();  // this stage's reads are done: the slot may be refilled
        fence_accumulators(acc);
        if (lane == 0) mbar_arrive(ring.empty(s));
    }
    store_tile<Cfg>(acc, p, m0 + wg * Cfg::WG_ROWS, n0);
}

}  // namespace ch09
