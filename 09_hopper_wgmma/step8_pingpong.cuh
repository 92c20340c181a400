// step8_pingpong.cuh - step 8 of chapter 09 (variant pingpong): step 4's persistent block, but the
// two consumer warpgroups no longer share a tile. Each takes every other tile of the block, whole,
// and they take turns on the tensor cores: one consumer issues all the wgmmas of its tile and passes
// the turn; while the other's main loop keeps the tensor cores busy, the first waits for its own
// wgmmas and stores its tile. In step 4 both consumers store at the same moment (on every SM at
// once) and the tensor cores idle meanwhile; here the epilogue of one tile hides behind the math of
// the next.
#pragma once

#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 8's configuration: tiles of 128 x 128, one per consumer at a time: two m64n128k16 per k-step,
// still 128 accumulators per thread as in step 4. A stage is then 32 KB (half of step 4's), so the
// ring has 7 of them: 224 KB, just under the 227 KB limit with the barriers and the 1 KB alignment.
template <class T>
using Pingpong128x128 = WgmmaTiling<T, 128, 128, 7, 2, true, true, 1, false, true>;

// Block q's tiles are q, q + gridDim.x, ... in the banded order of wb::tile_of_block, as in step 4;
// call them the block's tiles j = 0, 1, 2, ... Consumer c takes j = c, c + 2, c + 4, ... The producer
// loads every k-tile of tile j before those of tile j + 1 into one ring, whoever reads them, so
// k-tile kt of tile j is the ring's use j * k_tiles + kt for the producer and its consumer alike:
// both agree on every slot (use % STAGES) and its phase (use / STAGES).
//
// The turn: consumer c may start its i-th tile once phase i of turn[c] has completed. Phase 0 of
// turn[0] is given at the start (consumer 0 goes first); every later phase of turn[c] is completed
// by the other consumer's 4 warps when each has ISSUED the last wgmmas of the tile it took before
// (not waited for them: the tensor cores queue them, and the two main loops run back to back).
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, 1) pingpong_kernel(const __grid_constant__ WgmmaParams p) {
    static_assert(Cfg::PINGPONG && Cfg::CONSUMERS == 2 && Cfg::WG_ROWS == Cfg::BM,
                  "step 8: two consumer warpgroups, each on whole tiles of its own");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
    const int tiles_m = wb::ceil_div(p.M, Cfg::BM), tiles_n = wb::ceil_div(p.N, Cfg::BN);
    const int tiles = tiles_m * tiles_n;
    const int first = int(blockIdx.x), step = int(gridDim.x);  // this block's tiles: first, first + step, ...
    const int k_tiles = wb::ceil_div(p.K, Cfg::BK);

    if (threadIdx.x == 0) {
        ring.init();
        // Consumer 0's first turn: the 4 arrivals consumer 1's warps would have made after a tile.
        for (int w = 0; w < 4; ++w) mbar_arrive(ring.turn(0));
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    __syncthreads();

    if (wg == 0) {
        // 40 registers are plenty to compute addresses; the freed ones go to the consumers.
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over the tiles of both consumers
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
        setmaxnreg_inc<232>();
        const int consumer = wg - 1, other = 1 - consumer;
        auto release = [&](int s) {  // empty[s] counts this consumer's 4 warps only: no one else read s
            if (lane == 0) mbar_arrive(ring.empty(s));
        };
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        // Each consumer waits only for turns the other passes after a tile it has: with an odd number
        // of tiles, or a single one (consumer 1 then has none), nobody waits for a turn never given.
        int turn = 0;  // tiles this consumer has started
        for (int j = consumer; first + j * step < tiles; j += 2, ++turn) {
            const wb::TileIndex t = wb::tile_of_block(first + j * step, tiles_m, tiles_n, p.group_rows);
            zero<Cfg>(acc);
            // Besides the order on the tensor cores, the turn keeps the parity waits below exact: the
            // other consumer has waited for every earlier use it reads, so no slot's full barrier can
            // still be in the phase before the one waited for (a parity wait would take it for done).
            mbar_wait(ring.turn(consumer), turn & 1);
            int use = j * k_tiles;  // the ring's position of this tile's first k-tile
            int previous = -1;      // the slot whose wgmmas may still be running
            for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                mma_stage_overlapped<Cfg>(acc, ring, s, 0);  // returns when the previous group is done
                if (previous >= 0) release(previous);
                previous = s;
            }
            if (lane == 0) mbar_arrive(ring.turn(other));  // this warp has issued every wgmma of the tile
            wgmma_wait<0>();
            fence_accumulators(acc);
            release(previous);
            store_tile<Cfg>(acc, p, t.m * Cfg::BM, t.n * Cfg::BN);  // overlaps the other consumer's main loop
        }
    }
}

}  // namespace ch09
