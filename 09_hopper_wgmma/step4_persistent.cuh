// step4_persistent.cuh - step 4 of chapter 09 (variant persistent): step 3's warpgroups in a
// persistent grid. One block per SM stays for the whole run and walks over the tiles: the barriers
// are set up and the tensor maps prefetched once per SM, and the producer starts the next tile's
// copies while the consumers are still storing this one. Step 6 (tf32_persistent) is this kernel
// on FP32 inputs.
#pragma once

#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 4's configuration: step 3's, persistent (the launcher starts min(tiles, SMs) blocks).
template <class T>
using Persistent128x256 = WgmmaTiling<T, 128, 256, 4, 2, true, true>;

// Block q takes tiles q, q + gridDim.x, ... in the banded order of wb::tile_of_block. Producer and
// consumers walk the same tiles and count the k-tiles they pass (`use`) across all of them, so the
// ring runs on from one tile into the next without a pause.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, 1) persistent_kernel(const __grid_constant__ WgmmaParams p) {
    static_assert(Cfg::PRODUCER && Cfg::PERSISTENT && Cfg::CLUSTER == 1 && !Cfg::TMA_STORE,
                  "step 4: a producer warpgroup, persistent blocks, no cluster");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
    const int tiles_m = wb::ceil_div(p.M, Cfg::BM), tiles_n = wb::ceil_div(p.N, Cfg::BN);
    const int tiles = tiles_m * tiles_n;
    const int first = int(blockIdx.x), step = int(gridDim.x);  // this block's tiles: first, first + step, ...
    const int k_tiles = wb::ceil_div(p.K, Cfg::BK);

    if (threadIdx.x == 0) {
        ring.init();
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    __syncthreads();

    if (wg == 0) {
        // 40 registers are plenty to compute addresses; the freed ones go to the consumers.
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over all its tiles
            for (int tile = first; tile < tiles; tile += step) {
                const wb::TileIndex t = wb::tile_of_block(tile, tiles_m, tiles_n, p.group_rows);
                for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                    const int s = use % Cfg::STAGES;
                    // until its previous use is released (first pass: parity 1, complete on a fresh barrier)
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt);
                }
            }
        }
    } else {
        setmaxnreg_inc<Cfg::CONSUMERS == 1 ? 240 : 232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        auto release = [&](int s) {
            if (lane == 0) mbar_arrive(ring.empty(s));
        };
        int use = 0;  // must step exactly as the producer's
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        for (int tile = first; tile < tiles; tile += step) {
            const wb::TileIndex t = wb::tile_of_block(tile, tiles_m, tiles_n, p.group_rows);
            zero<Cfg>(acc);
            int previous = -1;  // the slot whose wgmmas may still be running
            for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                mma_stage_overlapped<Cfg>(acc, ring, s, wg_row0);  // returns when the previous group is done
                if (previous >= 0) release(previous);
                previous = s;
            }
            wgmma_wait<0>();
            fence_accumulators(acc);
            release(previous);
            store_tile<Cfg>(acc, p, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
        }
    }
    // Each warp converges before it exits. Nothing after it needs that here (step 5's cluster
    // barrier does), but without this line ptxas lays out this kernel's registers differently:
    // it stays, so that the code here is the code measured in the notes.
    __syncwarp();
}

}  // namespace ch09
