// step3_warp_specialized.cuh - step 3 of chapter 09 (variant warp_specialized): warp specialization.
// One warpgroup only copies (one thread issues every TMA copy) and hands most of its registers to
// the others, which only compute. A copy that waits for a free slot no longer stops any math, and
// the consumers keep one group of wgmmas in flight.
#pragma once

#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 3's configuration: step 2's tile and ring, plus a producer warpgroup: 384 threads.
template <class T>
using WarpSpecialized128x256 = WgmmaTiling<T, 128, 256, 4, 2, true, false>;

// One tile per block, tiles in the banded order of wb::tile_of_block (the grid is one-dimensional).
// Warpgroup 0 is the producer; warpgroups 1.. are the consumers. A consumer waits for the previous
// k-tile's group only (wait_group 1) and releases that slot, while the current one runs.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, 1) warp_specialized_kernel(const __grid_constant__ WgmmaParams p) {
    static_assert(Cfg::PRODUCER && !Cfg::PERSISTENT && Cfg::CLUSTER == 1 && !Cfg::TMA_STORE,
                  "step 3: a producer warpgroup, one tile per block");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
    const int tiles_m = wb::ceil_div(p.M, Cfg::BM), tiles_n = wb::ceil_div(p.N, Cfg::BN);
    const wb::TileIndex t = wb::tile_of_block(int(blockIdx.x), tiles_m, tiles_n, p.group_rows);
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
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int s = kt % Cfg::STAGES;
                // until its previous use is released (first pass: parity 1, complete on a fresh barrier)
                mbar_wait(ring.empty(s), ((kt / Cfg::STAGES) & 1) ^ 1);
                load_stage(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt);
            }
        }
    } else {
        setmaxnreg_inc<Cfg::CONSUMERS == 1 ? 240 : 232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        auto release = [&](int s) {
            if (lane == 0) mbar_arrive(ring.empty(s));
        };
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        zero<Cfg>(acc);
        int previous = -1;  // the slot whose wgmmas may still be running
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int s = kt % Cfg::STAGES;
            mbar_wait(ring.full(s), (kt / Cfg::STAGES) & 1);
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

}  // namespace ch09
