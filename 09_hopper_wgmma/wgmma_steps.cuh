// wgmma_steps.cuh - the kernels of chapter 09's ladder: TMA copies into a ring of shared-memory
// stages guarded by mbarriers, wgmma reading the stages through descriptors, and (from step 3) one
// warpgroup that only copies while the others only compute.
//
// The pieces, top to bottom:
//   WgmmaTiling<...>   one step's tile sizes and roles, with the shared-memory budget derived
//   StageRing          where stage s's A tile, B tile and two barriers live in shared memory
//   load_stage         the producer's work for one k-tile: announce the bytes, start the TMA copies
//   mma_stage          a consumer warpgroup's work for one k-tile: BK / 16 wgmmas per 64 rows
//   store_tile         the epilogue: accumulators to C with alpha and beta, guarded at the edges
//   wgmma_pipelined    steps 1-2: every warp computes, thread 0 also issues the copies
//   store_tile_tma     step 5's epilogue: through shared memory and TMA stores
//   wgmma_specialized  steps 3-5: a producer warpgroup and consumer warpgroups; optionally
//                      persistent (one block per SM walking over the tiles), in clusters of two
//                      blocks sharing B by TMA multicast
#pragma once

#include "../common/gemm_device.cuh"
#include "../common/gemm_tiles.cuh"
#include <type_traits>

#include "hopper_ptx.cuh"

namespace hopper {

// ---- One step's tiling ---------------------------------------------------------------------------
// T         the input type: __half, __nv_bfloat16, or float (read as TF32)
// BM x BN   the tile of C one block computes (per pass of a persistent block)
// BK        k per stage: 128 bytes of k (64 FP16/BF16 or 32 FP32 values), exactly one row of the
//           128-byte swizzle
// STAGES    slots in the ring: how many k-tiles the copies may run ahead of the math
// CONSUMERS warpgroups doing math; each owns BM / CONSUMERS rows of the tile (a multiple of 64,
//           the m of one wgmma)
// PRODUCER  a separate warpgroup issues the copies (warp specialization); without it thread 0
//           issues them between its own wgmmas
// PERSISTENT one block per SM loops over tiles instead of one block per tile
// CLUSTER   blocks per cluster (step 5: 2): they take vertically neighbouring tiles, which need the
//           same B tile, and each copies half of B's boxes into both blocks (TMA multicast)
// TMA_STORE the epilogue stages C through shared memory and writes it with TMA stores (step 5)
template <class T_, int BM_, int BN_, int STAGES_, int CONSUMERS_, bool PRODUCER_, bool PERSISTENT_, int CLUSTER_ = 1,
          bool TMA_STORE_ = false>
struct WgmmaTiling {
    using T = T_;
    static constexpr int ELEM = sizeof(T);  // bytes of one input element
    static constexpr int BM = BM_, BN = BN_, BK = 128 / ELEM, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int K_STEP = 32 / ELEM;  // k of one wgmma: 16 (FP16/BF16) or 8 (TF32), 32 bytes
    // B is row-major K x N. FP16/BF16 wgmma reads it as it is ("MN-major", trans-b = 1); TF32 has
    // no transpose, so it gets a transposed copy, N x K ("K-major", like A).
    static constexpr bool B_K_MAJOR = std::is_same_v<T, float>;
    static constexpr bool PRODUCER = PRODUCER_, PERSISTENT = PERSISTENT_, TMA_STORE = TMA_STORE_;
    static constexpr int CLUSTER = CLUSTER_;
    static constexpr int WG_ROWS = BM / CONSUMERS;  // rows of C per consumer warpgroup
    static constexpr int WG_MMAS = WG_ROWS / 64;    // 64-row wgmmas per consumer and k-step
    static constexpr int THREADS = 128 * (CONSUMERS + (PRODUCER ? 1 : 0));
    static constexpr int A_BYTES = BM * BK * ELEM;
    static constexpr int B_BYTES = BN * BK * ELEM;
    // One TMA box of B: MN-major, BK rows x 64 columns (128 bytes); K-major, the whole BN x BK tile.
    static constexpr int B_BOX_BYTES = B_K_MAJOR ? B_BYTES : 64 * BK * ELEM;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    // TMA_STORE: C leaves in chunks of 64 rows x 32 floats (128 bytes, one swizzle row), two
    // buffers per consumer so that filling one overlaps the store of the other.
    static constexpr int C_CHUNK_COLS = 32, C_CHUNK_BYTES = 64 * C_CHUNK_COLS * 4;
    static constexpr int EPI_BYTES = TMA_STORE ? CONSUMERS * 2 * C_CHUNK_BYTES : 0;
    // The stages, the epilogue's buffers, the barriers (two 8-byte mbarriers per stage), and 1 KB
    // to align the start: the 128-byte swizzle repeats every 1024 bytes and a descriptor assumes
    // tiles start on it.
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + EPI_BYTES + STAGES * 16 + 1024;

    static_assert(WG_ROWS % 64 == 0, "each consumer warpgroup must own whole 64-row wgmmas");
    static_assert(BN == 128 || BN == 256, "one wgmma covers the tile's width: n = 128 or 256");
    static_assert(BM <= 256, "a TMA box is at most 256 rows");
    static_assert(WG_MMAS * BN / 2 <= 128, "a consumer thread holds WG_MMAS * BN / 2 accumulators: keep it <= 128");
    static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "every tile must start on a 1024-byte swizzle atom");
    static_assert(SMEM_BYTES <= 227 * 1024, "an H100/H200 block may use at most 227 KB of shared memory");
    static_assert(CLUSTER == 1 || (PERSISTENT && PRODUCER), "clusters are taught on the persistent kernel");
    static_assert(CLUSTER == 1 || (!B_K_MAJOR && (BN / 64) % CLUSTER == 0),
                  "multicast splits B's 64-column boxes evenly over the cluster");
    static_assert(!TMA_STORE || (PRODUCER && WG_MMAS == 1), "the staged epilogue stores one 64-row slice per consumer");
};

// What the kernels receive: the two tensor maps (made on the host, see tensor_maps.cuh) and the
// epilogue's view of C. Passed as one __grid_constant__ parameter: the TMA unit reads the maps
// straight from the kernel's parameter memory.
struct WgmmaParams {
    CUtensorMap map_a;  // A: M rows x K columns, boxes of BM x BK (128 bytes of k)
    CUtensorMap map_b;  // B: K rows x N columns, boxes of BK x 64 (TF32: B transposed, N x K, boxes of BN x BK)
    int M, N, K;
    float alpha, beta;
    float* C;
    int group_rows;   // tile order: bands of this many tile rows (wb::tile_of_block)
    bool c_pairs;     // C is 8-byte aligned and N even: two neighbours go out as one float2
    bool c_tma;       // TMA_STORE steps: C can be written by TMA (16-byte aligned, N a multiple of 4)
    CUtensorMap map_c;  // C: M rows x N columns, boxes of 64 x 32 (TMA_STORE steps, when c_tma)
};

// ---- The ring of stages in shared memory ---------------------------------------------------------
template <class Cfg>
struct StageRing {
    uint8_t* base;  // 1024-byte aligned
    __device__ explicit StageRing(uint8_t* raw)
        : base(raw + ((1024 - (smem_u32(raw) & 1023)) & 1023)) {}
    __device__ uint8_t* a(int s) const { return base + s * Cfg::STAGE_BYTES; }
    __device__ uint8_t* b(int s) const { return a(s) + Cfg::A_BYTES; }
    // TMA_STORE: buffer i (0, 1) of consumer c.
    __device__ float* c_chunk(int c, int i) const {
        return reinterpret_cast<float*>(base + Cfg::STAGES * Cfg::STAGE_BYTES + (2 * c + i) * Cfg::C_CHUNK_BYTES);
    }
    // full[s]: the copies into stage s have landed. empty[s]: every consumer of every block of the
    // cluster is done reading it (a multicast copy writes stage s in all of them).
    __device__ uint64_t* full(int s) const {
        return reinterpret_cast<uint64_t*>(base + Cfg::STAGES * Cfg::STAGE_BYTES + Cfg::EPI_BYTES) + s;
    }
    __device__ uint64_t* empty(int s) const { return full(Cfg::STAGES) + s; }

    // Thread 0, before anyone else touches the ring. full: one arrival (the producer's
    // expect_tx) plus the bytes; empty: one arrival per consumer warp of the cluster.
    __device__ void init() const {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), Cfg::CONSUMERS * 4 * Cfg::CLUSTER);
        }
        fence_barrier_init();
    }
};

// The producer's work for k-tile kt of the tile at (m0, n0), into stage s: announce the bytes the
// stage will receive, then start the copies. A takes one box (BM rows x BK k); B, whose rows are
// k, takes BN / 64 boxes of BK rows x 64 columns, side by side (TF32: one box of its transposed
// copy, BN rows x BK k). Boxes reaching past the matrix are filled with zeros and still count
// their full size. In a cluster, block `rank` copies only the B boxes j with j % CLUSTER == rank,
// into every block of the cluster; each block still receives the whole stage.
template <class Cfg>
__device__ __forceinline__ void load_stage(const StageRing<Cfg>& ring, int s, const WgmmaParams& p, int m0, int n0, int kt,
                                           int rank = 0) {
    mbar_arrive_expect_tx(ring.full(s), Cfg::STAGE_BYTES);
    tma_load_2d(ring.a(s), &p.map_a, ring.full(s), kt * Cfg::BK, m0);
    if constexpr (Cfg::CLUSTER > 1) {
        constexpr uint16_t everyone = (1u << Cfg::CLUSTER) - 1;
#pragma unroll
        for (int j = rank; j < Cfg::BN / 64; j += Cfg::CLUSTER)
            tma_load_2d_multicast(ring.b(s) + j * Cfg::B_BOX_BYTES, &p.map_b, ring.full(s), n0 + 64 * j, kt * Cfg::BK,
                                  everyone);
    } else if constexpr (Cfg::B_K_MAJOR) {
        tma_load_2d(ring.b(s), &p.map_b, ring.full(s), kt * Cfg::BK, n0);
    } else {
#pragma unroll
        for (int j = 0; j < Cfg::BN / 64; ++j)
            tma_load_2d(ring.b(s) + j * Cfg::B_BOX_BYTES, &p.map_b, ring.full(s), n0 + 64 * j, kt * Cfg::BK);
    }
}

// A consumer warpgroup's math on stage s: for each k-step (32 bytes of k), one wgmma per 64 rows
// it owns. Descriptors (hopper_ptx.cuh): a K-major operand's k-step moves its start 32 bytes along
// the row (the hardware applies the swizzle to the address it computes); the MN-major B's k-step
// moves K_STEP rows of 128 bytes, and its LBO steps from one 64-column box to the next.
template <class Cfg>
__device__ __forceinline__ void mma_stage(float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const StageRing<Cfg>& ring, int s,
                                          int wg_row0) {
    // BEGIN SOLUTION: per k-step: A and B descriptors moved along the stage, one wgmma_m64 per 64 rows
    const uint32_t a0 = smem_u32(ring.a(s)) + wg_row0 * 128;
    const uint32_t b0 = smem_u32(ring.b(s));
#pragma unroll
    for (int kk = 0; kk < Cfg::BK / Cfg::K_STEP; ++kk) {
        const uint64_t desc_b = Cfg::B_K_MAJOR ? make_smem_desc(b0 + kk * 32, 16, 1024)
                                               : make_smem_desc(b0 + kk * Cfg::K_STEP * 128, Cfg::B_BOX_BYTES, 1024);
#pragma unroll
        for (int mb = 0; mb < Cfg::WG_MMAS; ++mb) {
            const uint64_t desc_a = make_smem_desc(a0 + mb * 64 * 128 + kk * 32, 16, 1024);
            wgmma_m64<typename Cfg::T, Cfg::BN>(acc[mb], desc_a, desc_b, 1);
        }
    }
    // END SOLUTION
}

// Two neighbouring entries of C (row, col) and (row, col + 1), as much of them as lies inside C.
__device__ __forceinline__ void store_pair(const WgmmaParams& p, int row, int col, float v0, float v1) {
    if (row >= p.M || col >= p.N) return;
    float* c = p.C + size_t(row) * p.N + col;
    if (p.c_pairs) {  // col is even and N is even, so col + 1 < N as well
        float2 v = make_float2(p.alpha * v0, p.alpha * v1);
        if (p.beta != 0.0f) {
            const float2 old = *reinterpret_cast<const float2*>(c);
            v.x += p.beta * old.x;
            v.y += p.beta * old.y;
        }
        *reinterpret_cast<float2*>(c) = v;
        return;
    }
    wb::store_c(c, v0, p.alpha, p.beta);
    if (col + 1 < p.N) wb::store_c(c + 1, v1, p.alpha, p.beta);
}

// The epilogue of one consumer warpgroup. wgmma's accumulator layout for a 64 x N tile: warp w of
// the warpgroup holds rows 16w..16w+15; in each 8-column slice j, lane l holds row l / 4 (and
// l / 4 + 8) at columns 2 (l % 4) and 2 (l % 4) + 1, as d[4j + 0..1] (and d[4j + 2..3]).
template <class Cfg>
__device__ __forceinline__ void store_tile(const float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const WgmmaParams& p, int row0,
                                           int col0) {
    // BEGIN SOLUTION: warp w: rows 16w + l/4 and + 8; slice j: columns 8j + 2(l%4), +1; store_pair each
    const int warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
#pragma unroll
    for (int mb = 0; mb < Cfg::WG_MMAS; ++mb) {
        const int row = row0 + mb * 64 + warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < Cfg::BN / 8; ++j) {
            const int col = col0 + 8 * j + 2 * (lane % 4);
            store_pair(p, row, col, acc[mb][4 * j], acc[mb][4 * j + 1]);
            store_pair(p, row + 8, col, acc[mb][4 * j + 2], acc[mb][4 * j + 3]);
        }
    }
    // END SOLUTION
}

template <class Cfg>
__device__ __forceinline__ void zero(float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2]) {
#pragma unroll
    for (int mb = 0; mb < Cfg::WG_MMAS; ++mb)
#pragma unroll
        for (int i = 0; i < Cfg::BN / 2; ++i) acc[mb][i] = 0.0f;
}

// ---- Steps 1 and 2: every warpgroup computes; thread 0 also feeds the ring ------------------------
// Thread 0 keeps the copies STAGES - 1 k-tiles ahead: before the math on k-tile kt it starts the
// copies of kt + STAGES - 1 into the slot that k-tile kt - 1 used, once every consumer warp has
// released that slot. While it waits, its own warpgroup's math waits too: that is what step 3 fixes.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS) wgmma_pipelined(const __grid_constant__ WgmmaParams p) {
    static_assert(!Cfg::PRODUCER && !Cfg::PERSISTENT, "steps 1-2: no producer warpgroup, one tile per block");
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

// Step 5's epilogue for one consumer warpgroup (64 rows): the accumulators go, with alpha and beta
// applied, into a shared buffer of 64 rows x 32 floats laid out with TMA's 128-byte swizzle (16-byte
// chunk c of row r sits at chunk c ^ (r % 8): the warp's writes spread over all banks), then one
// thread stores the buffer with TMA, which clips what lies outside C. Two buffers alternate; before
// refilling one, its store issued two chunks earlier must have finished reading it.
template <class Cfg>
__device__ __forceinline__ void store_tile_tma(const float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const WgmmaParams& p,
                                               const StageRing<Cfg>& ring, int consumer, int row0, int col0) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int barrier_id = 1 + consumer;  // named barrier of this warpgroup (0 is __syncthreads)
#pragma unroll
    for (int j = 0; j < Cfg::BN / Cfg::C_CHUNK_COLS; ++j) {
        float* buf = ring.c_chunk(consumer, j % 2);
        if (t == 0) bulk_wait_group_read<1>();
        named_barrier_sync(barrier_id, 128);
#pragma unroll
        for (int jj = 0; jj < Cfg::C_CHUNK_COLS / 8; ++jj) {
            const int slice = j * (Cfg::C_CHUNK_COLS / 8) + jj;  // 8-column slice of the accumulator
            const int col = 8 * jj + 2 * (lane % 4);              // column inside the chunk (even)
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
        fence_proxy_async_smem();  // these writes must be visible to the TMA unit's reads
        named_barrier_sync(barrier_id, 128);
        if (t == 0) {
            tma_store_2d(&p.map_c, buf, col0 + j * Cfg::C_CHUNK_COLS, row0);
            bulk_commit_group();
        }
    }
}

// ---- Steps 3 to 5: a producer warpgroup and consumer warpgroups ----------------------------------
// Warpgroup 0 only copies (one thread issues every TMA copy) and hands most of its registers to the
// consumers; warpgroups 1.. only compute. A consumer keeps one group of wgmmas in flight: it waits
// for the previous k-tile's group (wait_group 1) and releases that slot, while the current one runs.
// PERSISTENT: the grid is one block per SM (per cluster: CLUSTER blocks on CLUSTER SMs) and cluster q
// takes tile groups q, q + clusters, ... in the banded order of wb::tile_of_block; a tile group is
// CLUSTER vertically neighbouring tiles, one per block. The producer runs ahead into the next tile
// while the consumers are still storing the last one.
template <class Cfg>
__global__ void __cluster_dims__(Cfg::CLUSTER, 1, 1) __launch_bounds__(Cfg::THREADS, 1)
    wgmma_specialized(const __grid_constant__ WgmmaParams p) {
    static_assert(Cfg::PRODUCER, "steps 3-5 have a producer warpgroup");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
    const int rank = Cfg::CLUSTER > 1 ? int(cluster_ctarank()) : 0;
    const int tiles_m = wb::ceil_div(p.M, Cfg::BM), tiles_n = wb::ceil_div(p.N, Cfg::BN);
    const int group_rows = wb::ceil_div(tiles_m, Cfg::CLUSTER);  // rows of tile groups
    const int groups = group_rows * tiles_n;
    const int first = int(blockIdx.x) / Cfg::CLUSTER;                                 // this cluster's first group
    const int step = Cfg::PERSISTENT ? int(gridDim.x) / Cfg::CLUSTER : groups;        // non-persistent: one
    const int k_tiles = wb::ceil_div(p.K, Cfg::BK);
    // The tile of group g this block computes (it may lie below the matrix when tiles_m is not a
    // multiple of CLUSTER: its copies of A are all zeros and its stores are all clipped, but it
    // still copies its share of B for its neighbour).
    auto tile_of = [&](int g) {
        const wb::TileIndex t = wb::tile_of_block(g, group_rows, tiles_n, p.group_rows);
        return wb::TileIndex{t.m * Cfg::CLUSTER + rank, t.n};
    };

    if (threadIdx.x == 0) {
        ring.init();
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    // Every barrier of every block of the cluster exists before anyone copies or arrives remotely.
    if constexpr (Cfg::CLUSTER > 1) cluster_sync(); else __syncthreads();

    if (wg == 0) {
        // 40 registers are plenty to compute addresses; the freed ones go to the consumers.
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over all its tiles
            for (int g = first; g < groups; g += step) {
                const wb::TileIndex t = tile_of(g);
                for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                    const int s = use % Cfg::STAGES;
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt, rank);
                }
            }
        }
    } else {
        setmaxnreg_inc<Cfg::CONSUMERS == 1 ? 240 : 232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        // A slot is released to every block of the cluster: all of them copy into it.
        auto release = [&](int s) {
            if (lane != 0) return;
            if constexpr (Cfg::CLUSTER > 1) {
                for (int cta = 0; cta < Cfg::CLUSTER; ++cta) mbar_arrive_cluster(ring.empty(s), cta);
            } else {
                mbar_arrive(ring.empty(s));
            }
        };
        int use = 0;  // must step exactly as the producer's
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        for (int g = first; g < groups; g += step) {
            const wb::TileIndex t = tile_of(g);
            zero<Cfg>(acc);
            int previous = -1;  // the slot whose wgmmas may still be running
            for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                // BEGIN SOLUTION: fence, stage s's wgmmas (mma_stage), commit; wait till one group is left
                fence_accumulators(acc);
                wgmma_fence();
                mma_stage<Cfg>(acc, ring, s, wg_row0);
                wgmma_commit();
                wgmma_wait<1>();  // the previous k-tile's group is done reading its slot
                fence_accumulators(acc);
                // END SOLUTION
                if (previous >= 0) release(previous);
                previous = s;
            }
            wgmma_wait<0>();
            fence_accumulators(acc);
            release(previous);
            if constexpr (Cfg::TMA_STORE) {
                if (p.c_tma) {
                    store_tile_tma<Cfg>(acc, p, ring, consumer, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
                    continue;
                }
            }
            store_tile<Cfg>(acc, p, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
        }
        if constexpr (Cfg::TMA_STORE)
            if (threadIdx.x % 128 == 0) bulk_wait_group_read<0>();  // shared memory must outlive the stores
    }
    // A block must not exit while its neighbour may still multicast into it or arrive on its barriers.
    __syncwarp();  // barrier.cluster is .aligned: each warp converged
    if constexpr (Cfg::CLUSTER > 1) cluster_sync();
}

}  // namespace hopper
