// step11_tf32_multicast.cuh - step 11 of chapter 09 (variant tf32_multicast): step 9's TF32 kernel in
// clusters of two blocks that share A's tile by TMA multicast, so A is read from L2 once for two
// tiles of C.
//
// Which operand, and so which neighbours: step 9's tile of C is BM = 256 rows x BN = 128 columns,
// so a stage holds 256 rows of A (256 x 32 floats, 32 KB) but only 32 rows of k of B's 128 columns
// (16 KB). Two tiles need the same tile of A when they cover the same rows of C: neighbours along a
// row of tiles (along n). Steps 5 and 10 pair vertical neighbours, which share B's tile; here that
// would save 16 KB of every 96 KB two blocks copy per k-tile, while sharing A saves 32 KB (a third).
// So the tile groups lie along n (TileGroups with along_n: block `rank` of a cluster computes tile
// column 2 g + rank of group g's tile row).
//
// How the share works: A's tile is K-major, 256 rows of 128 bytes of k, exactly what step 10 splits
// for FP8 B^T. Block `rank` copies rows [128 rank, 128 rank + 128), 16 KB, 16 whole swizzle atoms,
// to the same offset in both blocks (multicast_row_share, step 5's file); each block copies B's four
// boxes for its own columns alone. Every block still receives 48 KB per stage, byte for byte what
// step 9's single copy would have put there, so the consumers (fragment loads, descriptors,
// epilogue) are step 9's. From step 5 come the cluster's handshakes: every slot is released to both
// blocks (both copy into it), the barriers exist in both blocks before the first copy (cluster_sync
// at the start), and neither block exits while the other may still write into it (at the end).
//
// The edge: where tiles_n is odd, the last group of each tile row has only one tile inside C. Its
// second block still runs the group (a phantom tile past C's last column: its B copies are zeros,
// its stores are clipped) because its half of A is the half its partner multiplies with, and its
// consumers' releases are what its partner's producer waits for. A block that skipped the group
// would leave its partner waiting forever.
#pragma once

#include "step5_cluster_multicast.cuh"
#include "step9_tf32_rs.cuh"
#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 11's configuration: step 9's tile, ring and epilogue (225 KB of shared memory), in clusters
// of 2 along n. A's map copies boxes of BM / CLUSTER = 128 rows: one block's share (the launcher).
struct Tf32MulticastTiling : Tf32RsTiling {
    static constexpr int CLUSTER = 2;
    static constexpr bool CLUSTER_ALONG_N = true;  // the two tiles of a group cover the same rows of C
};

// The producer's copies of k-tile kt for block `rank` of a cluster: its share of A's tile into both
// blocks, then B's boxes (BK rows x 32 columns) of this block's own columns, into this block only.
// The partner's share of A lands here too, so the stage still expects STAGE_BYTES.
template <class Cfg>
__device__ __forceinline__ void load_stage_rs_multicast(const StageRing<Cfg>& ring, int s, const WgmmaParams& p, int m0,
                                                        int n0, int kt, int rank) {
    mbar_arrive_expect_tx(ring.full(s), Cfg::STAGE_BYTES);
    multicast_row_share<Cfg::BM, Cfg::CLUSTER>(ring.a(s), &p.map_a, ring.full(s), kt * Cfg::BK, m0, rank);
#pragma unroll
    for (int j = 0; j < Cfg::BN / Cfg::B_BOX_COLS; ++j)
        tma_load_2d(ring.b(s) + j * Cfg::B_BOX_BYTES, &p.map_b, ring.full(s), n0 + j * Cfg::B_BOX_COLS, kt * Cfg::BK);
}

// Step 9's kernel over a cluster's tile groups (ClusterTiles, as steps 5 and 10): the producer
// copies with load_stage_rs_multicast, the consumers release each slot to both blocks.
template <class Cfg>
__global__ void __cluster_dims__(Cfg::CLUSTER, 1, 1) __launch_bounds__(Cfg::THREADS, 1)
    tf32_multicast_kernel(const __grid_constant__ WgmmaParams p) {
    // (Cfg::CLUSTER_ALONG_N is true here; the tests run the kernel along m as a planted bug.)
    static_assert(Cfg::CLUSTER > 1, "step 11: clusters of blocks that share A's tile");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
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
                    // until both blocks' consumers are done with its previous use
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage_rs_multicast(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt, work.rank);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int consumer = wg - 1;
        uint32_t base[4];  // this thread's fragment offsets in B's tile at k-step 0
#pragma unroll
        for (int v = 0; v < 4; ++v) base[v] = rs_fragment_offset(consumer, warp, lane, 0, v);
        int use = 0;        // must step exactly as the producer's
        int previous = -1;  // the slot whose wgmmas may still be running
        float acc[128];
        RsFragments f0 = {}, f1 = {};
        // One k-tile, as in step 9; the slot freed goes back to both blocks' producers.
        auto stage = [&](RsFragments& f, RsFragments& in_flight) {
            const int s = use % Cfg::STAGES;
            mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
            load_fragments(f, ring.b(s), base);
            fence_accumulators(acc);
            wgmma_fence();
            mma_stage_rs(acc, f, ring.a(s));
            wgmma_commit();
            wgmma_wait<1>();
            fence_accumulators(acc);
            fence_fragments(in_flight);
            if (previous >= 0) release_to_cluster(ring, previous);
            previous = s;
            ++use;
        };
        for (int g = work.first; g < work.groups; g += work.step) {
            const wb::TileIndex t = work.tile(g);
#pragma unroll
            for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
            previous = -1;
            for (int kt = 0; kt + 1 < k_tiles; kt += 2) {  // pairs of k-tiles, then the odd one (step 9)
                stage(f0, f1);
                stage(f1, f0);
            }
            if (k_tiles % 2 == 1) stage(f0, f1);
            wgmma_wait<0>();
            fence_accumulators(acc);
            fence_fragments(f0);
            fence_fragments(f1);
            release_to_cluster(ring, previous);
            store_tile_transposed(acc, p, ring, consumer, t.m * Cfg::BM, t.n * Cfg::BN);
        }
        if (threadIdx.x % 128 == 0) bulk_wait_group_read<0>();  // shared memory must outlive the stores
    }
    // A block must not exit while its neighbour may still multicast into it or arrive on its barriers.
    __syncwarp();  // barrier.cluster is .aligned: each warp converged
    cluster_sync();
}

}  // namespace ch09
