// step10_fp8_multicast.cuh - step 10 of chapter 09 (variant fp8_multicast): step 7's FP8 GEMM in
// step 5's clusters. Two blocks of a cluster work on vertically neighbouring tiles, which need the
// same tile of B^T; each copies half of it into both blocks by TMA multicast, so B^T is read from L2
// once for two tiles of C, as in FP16 and BF16.
//
// Against step 5: the kernel is the same walk over tile groups (ClusterTiles), the same release of
// a slot to every block of the cluster and the same final cluster_sync; only the share of B each
// block copies changes. Step 5 hands out B's 64-column boxes; a K-major B tile is BN rows of 128
// bytes of k, with no columns to hand out, so it is split by rows: block `rank` copies rows
// [rank * BN / CLUSTER, (rank + 1) * BN / CLUSTER) into the same place in every block
// (multicast_row_share, which step 11 uses for A's tile). Each share is 128 rows x 128 bytes =
// 16 KB, a whole number of the swizzle's 1024-byte atoms, so every block's stage looks byte for
// byte like a single copy of the whole tile and the descriptors of mma_stage do not change.
// Against step 7: the per-tensor scales and their one multiply per tile, before the epilogue.
#pragma once

#include "step5_cluster_multicast.cuh"
#include "step7_fp8_e4m3.cuh"
#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 10's configuration: step 7's tile and ring in clusters of 2 (225 KB of shared memory, as
// steps 5 and 7). B^T's box is 128 rows x 128 bytes (B_BOX_ROWS), half of the tile.
using Fp8Cluster2Persistent128x256 = WgmmaTiling<__nv_fp8_e4m3, 128, 256, 4, 2, true, true, 2, true>;

// Step 5's kernel on FP8 operands: after a tile's last k-tile each consumer multiplies its
// accumulators by scale_a * scale_b once, then the shared epilogue applies alpha and beta.
template <class Cfg>
__global__ void __cluster_dims__(Cfg::CLUSTER, 1, 1) __launch_bounds__(Cfg::THREADS, 1)
    fp8_multicast_kernel(const __grid_constant__ Fp8Params p) {
    static_assert(Cfg::PRODUCER && Cfg::PERSISTENT && Cfg::CLUSTER > 1 && Cfg::TMA_STORE && Cfg::WG_MMAS == 1,
                  "step 10: a producer warpgroup, persistent clusters, one 64-row slice per consumer");
    static_assert(Cfg::ELEM == 1 && Cfg::B_K_MAJOR && Cfg::K_STEP == 32, "step 10: 1-byte inputs, B given as N x K");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128;
    const ClusterTiles<Cfg> work(p, int(cluster_ctarank()));
    const int k_tiles = wb::ceil_div(p.K, Cfg::BK);

    if (threadIdx.x == 0) {
        ring.init();
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    cluster_sync();  // every barrier of every block of the cluster exists before anyone uses it

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over all its tiles
            for (int g = work.first; g < work.groups; g += work.step) {
                const wb::TileIndex t = work.tile(g);
                for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                    const int s = use % Cfg::STAGES;
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage_multicast(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt, work.rank);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        const float scale_ab = *p.scale_a * *p.scale_b;
        int use = 0;  // must step exactly as the producer's
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        for (int g = work.first; g < work.groups; g += work.step) {
            const wb::TileIndex t = work.tile(g);
            zero<Cfg>(acc);
            int previous = -1;  // the slot whose wgmmas may still be running
            for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                mma_stage_overlapped<Cfg>(acc, ring, s, wg_row0);
                if (previous >= 0) release_to_cluster(ring, previous);
                previous = s;
            }
            wgmma_wait<0>();
            fence_accumulators(acc);
            release_to_cluster(ring, previous);
#pragma unroll
            for (int i = 0; i < Cfg::BN / 2; ++i) acc[0][i] *= scale_ab;
            if (p.c_tma)
                store_tile_tma<Cfg>(acc, p, ring, consumer, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
            else
                store_tile<Cfg>(acc, p, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
        }
        if (threadIdx.x % 128 == 0) bulk_wait_group_read<0>();  // shared memory must outlive the stores
    }
    // A block must not exit while its neighbour may still multicast into it or arrive on its barriers.
    __syncwarp();  // barrier.cluster is .aligned: each warp converged
    cluster_sync();
}

}  // namespace ch09
