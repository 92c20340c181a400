// step5_cluster_multicast.cuh - step 5 of chapter 09 (variant cluster_multicast): step 4 in clusters
// of two blocks on vertically neighbouring tiles, which need the same B tile: each block copies half
// of B's boxes into both (TMA multicast), so B is read from L2 once for two tiles of C. And C leaves
// through shared memory by TMA stores instead of each thread's own stores.
#pragma once

#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 5's configuration: step 4's, in clusters of 2, with two 8 KB buffers of C per consumer for
// the TMA stores (225 KB of shared memory in all).
template <class T>
using Cluster2Persistent128x256 = WgmmaTiling<T, 128, 256, 4, 2, true, true, 2, true>;

// One block's share of a K-major tile split by rows over a cluster (step 10's B^T, step 11's A). Such
// a tile is TILE_ROWS rows of 128 bytes of k, with no columns to hand out, so block `rank` copies
// rows [rank, rank + 1) * TILE_ROWS / CLUSTER, one box of the map, to the same offset in every block
// of the cluster. Each share is a whole number of the swizzle's 1024-byte atoms (8 rows), so it lands
// in phase and every block's tile looks byte for byte like one copy of the whole tile: the
// descriptors that read it do not change. row_share says where a share goes (and lets the tests
// check, on the CPU, that the shares cover the tile once); multicast_row_share starts the copy.
struct RowShare {
    int first_row, rows;  // rows [first_row, first_row + rows) of the tile
    int offset;           // their byte offset in the tile, the same in every block
};
__host__ __device__ constexpr RowShare row_share(int tile_rows, int cluster, int rank) {
    const int rows = tile_rows / cluster;
    return {rank * rows, rows, rank * rows * 128};
}
template <int TILE_ROWS, int CLUSTER>
__device__ __forceinline__ void multicast_row_share(uint8_t* tile, const CUtensorMap* map, uint64_t* full, int k0,
                                                    int row0, int rank) {
    static_assert(TILE_ROWS % CLUSTER == 0 && (TILE_ROWS / CLUSTER) % 8 == 0,
                  "each block's share of the rows must be whole 1024-byte swizzle atoms (8 rows of 128 bytes)");
    constexpr uint16_t everyone = (1u << CLUSTER) - 1;
    const RowShare share = row_share(TILE_ROWS, CLUSTER, rank);
    tma_load_2d_multicast(tile + share.offset, map, full, k0, row0 + share.first_row, everyone);
}

// load_stage for a block of a cluster: A as there; B's tile is split into CLUSTER shares and block
// `rank` copies share rank into every block of the cluster. Each block still receives the whole
// stage, so it still expects STAGE_BYTES. The share depends on B's layout:
//   MN-major (FP16, BF16): of B's 64-column boxes, those with j % CLUSTER == rank;
//   K-major (step 10's FP8 B^T): rows of the BN x BK tile, one box of B_BOX_ROWS (multicast_row_share).
template <class Cfg>
__device__ __forceinline__ void load_stage_multicast(const StageRing<Cfg>& ring, int s, const WgmmaParams& p, int m0,
                                                     int n0, int kt, int rank) {
    mbar_arrive_expect_tx(ring.full(s), Cfg::STAGE_BYTES);
    tma_load_2d(ring.a(s), &p.map_a, ring.full(s), kt * Cfg::BK, m0);
    if constexpr (Cfg::B_K_MAJOR) {
        static_assert(Cfg::B_BOX_ROWS == Cfg::BN / Cfg::CLUSTER, "B^T's map copies one share per box");
        multicast_row_share<Cfg::BN, Cfg::CLUSTER>(ring.b(s), &p.map_b, ring.full(s), kt * Cfg::BK, n0, rank);
    } else {
        constexpr uint16_t everyone = (1u << Cfg::CLUSTER) - 1;
#pragma unroll
        for (int j = rank; j < Cfg::BN / 64; j += Cfg::CLUSTER)
            tma_load_2d_multicast(ring.b(s) + j * Cfg::B_BOX_BYTES, &p.map_b, ring.full(s), n0 + 64 * j, kt * Cfg::BK,
                                  everyone);
    }
}

// A cluster's work: tile groups of CLUSTER neighbouring tiles of C, one tile per block, the same list
// in every block of the cluster. Steps 5 and 10 stack a group's tiles down a column of tiles (they
// need the same tile of B, which they share); step 11 lines them up along a row of tiles (the same
// tile of A). The groups form a grid of their own, walked in the banded order of wb::tile_of_block.
// When the tiles do not divide evenly into groups (tiles_m, or for step 11 tiles_n, not a multiple
// of CLUSTER), the last group of each column (row) reaches past C: that block's tile lies outside C,
// its own copies are all zeros and its stores are all clipped, but it still copies its share of the
// shared operand for its neighbours and releases every slot, or they would wait for it forever.
struct TileGroups {
    int tiles_m, tiles_n;  // tiles of C
    int cluster;           // tiles per group
    bool along_n;          // a group's tiles lie side by side in one row of tiles (else in one column)

    __host__ __device__ constexpr int rows() const { return along_n ? tiles_m : wb::ceil_div(tiles_m, cluster); }
    __host__ __device__ constexpr int cols() const { return along_n ? wb::ceil_div(tiles_n, cluster) : tiles_n; }
    __host__ __device__ constexpr int count() const { return rows() * cols(); }
    // The tile of group g that block `rank` of a cluster computes (banded over `band` group rows).
    __host__ __device__ constexpr wb::TileIndex tile(int g, int rank, int band) const {
        const wb::TileIndex t = wb::tile_of_block(g, rows(), cols(), band);
        return along_n ? wb::TileIndex{t.m, t.n * cluster + rank} : wb::TileIndex{t.m * cluster + rank, t.n};
    }
};

// This block's walk: cluster q takes groups q, q + clusters, ... (every block of a cluster the same).
template <class Cfg>
struct ClusterTiles {
    const WgmmaParams& p;
    int rank;
    TileGroups grid;
    int groups, first, step;  // this cluster's groups: first, first + step, ... below groups

    __device__ ClusterTiles(const WgmmaParams& p_, int rank_)
        : p(p_),
          rank(rank_),
          grid{wb::ceil_div(p_.M, Cfg::BM), wb::ceil_div(p_.N, Cfg::BN), Cfg::CLUSTER, Cfg::CLUSTER_ALONG_N},
          groups(grid.count()),
          first(int(blockIdx.x) / Cfg::CLUSTER),
          step(int(gridDim.x) / Cfg::CLUSTER) {}

    __device__ wb::TileIndex tile(int g) const { return grid.tile(g, rank, p.group_rows); }
};

// A consumer warp is done with stage s: one arrival on its empty barrier in every block of the
// cluster, since every block's producer copies into this block's slot.
template <class Cfg>
__device__ __forceinline__ void release_to_cluster(const StageRing<Cfg>& ring, int s) {
    if (threadIdx.x % 32 == 0)
        for (int cta = 0; cta < Cfg::CLUSTER; ++cta) mbar_arrive_cluster(ring.empty(s), cta);
}

// One chunk of a consumer warpgroup's C (64 rows x 32 floats: columns 32 j .. 32 j + 31 of its
// slice), alpha and beta applied, into a buffer laid out with TMA's 128-byte swizzle (16-byte chunk
// c of row r sits at chunk c ^ (r % 8): the warp's writes spread over all banks). Step 12 writes
// its chunks with it too.
template <class Cfg>
__device__ __forceinline__ void write_c_chunk(const float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const WgmmaParams& p,
                                              float* buf, int j, int row0, int col0) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
#pragma unroll
    for (int jj = 0; jj < Cfg::C_CHUNK_COLS / 8; ++jj) {
        const int slice = j * (Cfg::C_CHUNK_COLS / 8) + jj;  // 8-column slice of the accumulator
        const int col = 8 * jj + 2 * (lane % 4);             // column inside the chunk (even)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int r = warp * 16 + lane / 4 + 8 * h;
            float v0 = p.alpha * acc[0][4 * slice + 2 * h], v1 = p.alpha * acc[0][4 * slice + 2 * h + 1];
            if (p.beta != 0.0f) {  // C is read only when beta != 0 (it may hold NaN otherwise)
                const int row = row0 + r, gcol = col0 + j * Cfg::C_CHUNK_COLS + col;
                const float* c = p.C + size_t(row) * p.N + gcol;
                if (row < p.M && gcol < p.N) v0 += p.beta * c[0];
                if (row < p.M && gcol + 1 < p.N) v1 += p.beta * c[1];
            }
            const int chunk16 = (col / 4) ^ (r % 8);
            *reinterpret_cast<float2*>(reinterpret_cast<uint8_t*>(buf) + r * 128 + chunk16 * 16 + (col % 4) * 4) =
                make_float2(v0, v1);
        }
    }
}

// The epilogue of one consumer warpgroup (64 rows), through shared memory: chunk by chunk, the
// accumulators go into a buffer (write_c_chunk), then one thread stores the buffer with TMA, which
// clips what lies outside C. Two buffers alternate; before refilling one, its store issued two
// chunks earlier must have finished reading it.
template <class Cfg>
__device__ __forceinline__ void store_tile_tma(const float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const WgmmaParams& p,
                                               const StageRing<Cfg>& ring, int consumer, int row0, int col0) {
    const int t = threadIdx.x % 128;
    const int barrier_id = 1 + consumer;  // named barrier of this warpgroup (0 is __syncthreads)
#pragma unroll
    for (int j = 0; j < Cfg::BN / Cfg::C_CHUNK_COLS; ++j) {
        float* buf = ring.c_chunk(consumer, j % 2);
        if (t == 0) bulk_wait_group_read<1>();
        named_barrier_sync(barrier_id, 128);
        write_c_chunk<Cfg>(acc, p, buf, j, row0, col0);
        fence_proxy_async_smem();  // these writes must be visible to the TMA unit's reads
        named_barrier_sync(barrier_id, 128);
        if (t == 0) {
            tma_store_2d(&p.map_c, buf, col0 + j * Cfg::C_CHUNK_COLS, row0);
            bulk_commit_group();
        }
    }
}

// The grid is one cluster of CLUSTER blocks per CLUSTER SMs (as many as fit at once), each walking
// its tile groups (ClusterTiles). A slot is released to every block of the cluster, since all of
// them copy into it. Where C cannot be written by TMA (p.c_tma false: a pitch or address that is
// not a multiple of 16 bytes) the epilogue is step 4's store_tile.
template <class Cfg>
__global__ void __cluster_dims__(Cfg::CLUSTER, 1, 1) __launch_bounds__(Cfg::THREADS, 1)
    cluster_multicast_kernel(const __grid_constant__ WgmmaParams p) {
    static_assert(Cfg::PRODUCER && Cfg::PERSISTENT && Cfg::WG_MMAS == 1,
                  "step 5: a producer warpgroup, persistent clusters, one 64-row slice per consumer");
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
        // 40 registers are plenty to compute addresses; the freed ones go to the consumers.
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over all its tiles
            for (int g = work.first; g < work.groups; g += work.step) {
                const wb::TileIndex t = work.tile(g);
                for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                    const int s = use % Cfg::STAGES;
                    // until its previous use is released (first pass: parity 1, complete on a fresh barrier)
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage_multicast(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt, work.rank);
                }
            }
        }
    } else {
        setmaxnreg_inc<Cfg::CONSUMERS == 1 ? 240 : 232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        int use = 0;  // must step exactly as the producer's
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        for (int g = work.first; g < work.groups; g += work.step) {
            const wb::TileIndex t = work.tile(g);
            zero<Cfg>(acc);
            int previous = -1;  // the slot whose wgmmas may still be running
            for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                mma_stage_overlapped<Cfg>(acc, ring, s, wg_row0);  // returns when the previous group is done
                if (previous >= 0) release_to_cluster(ring, previous);
                previous = s;
            }
            wgmma_wait<0>();
            fence_accumulators(acc);
            release_to_cluster(ring, previous);
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
