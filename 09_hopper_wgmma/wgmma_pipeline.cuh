// wgmma_pipeline.cuh - what every step of chapter 09 shares: TMA copies into a ring of shared-memory
// stages guarded by mbarriers, wgmma reading the stages through descriptors, and the epilogue. The
// steps' kernels (step1_*.cuh to step5_*.cuh) are built from these pieces; each step adds its own
// idea around them.
//
// The pieces, top to bottom:
//   WgmmaTiling<...>     one configuration: tile sizes and warpgroups, shared-memory budget derived
//   WgmmaParams          what a kernel receives: the tensor maps and C
//   StageRing            where stage s's A tile, B tile and two barriers live in shared memory
//   load_stage           the copying thread's work for one k-tile: announce the bytes, start the copies
//   mma_stage            a consumer warpgroup's wgmmas for one k-tile: BK / K_STEP per 64 rows
//   mma_stage_overlapped steps 3-5, 8: mma_stage as one group, left running while the previous one ends
//   store_tile           the epilogue: accumulators to C with alpha and beta, guarded at the edges
#pragma once

#include "../common/gemm_device.cuh"
#include "../common/gemm_tiles.cuh"
#include <type_traits>

#include "hopper_ptx.cuh"

namespace ch09 {

// ---- One configuration ---------------------------------------------------------------------------
// T         the input type: __half, __nv_bfloat16, float (read as TF32) or __nv_fp8_e4m3
// BM x BN   the tile of C one block computes (per pass of a persistent block)
// BK        k per stage: 128 bytes of k (64 FP16/BF16, 32 FP32 or 128 FP8 values), exactly one row
//           of the 128-byte swizzle
// STAGES    slots in the ring: how many k-tiles the copies may run ahead of the math
// CONSUMERS warpgroups doing math; each owns BM / CONSUMERS rows of the tile (a multiple of 64,
//           the m of one wgmma), or, with PINGPONG, all BM rows of tiles of its own
// The rest describes the block for the launcher and the budgets (threads, grid, shared memory);
// kernels.cuh picks the step whose kernel has these roles, and each kernel checks them:
// PRODUCER  one more warpgroup that only copies (steps 3-5, 8); without it thread 0 issues the copies
//           between its own wgmmas (steps 1-2)
// PERSISTENT the grid is one block per SM, each looping over tiles (steps 4-8, 10)
// CLUSTER   blocks per cluster (steps 5 and 10: 2); they share B's copies by TMA multicast, so their
//           tiles neighbour down a column of C (CLUSTER_ALONG_N false: step 11's tiles lie along a row)
// TMA_STORE shared memory is reserved for step 5's epilogue, which writes C by TMA stores
// PINGPONG  step 8: each consumer owns a whole BM x BN tile of its own (not BM / CONSUMERS rows of a
//           shared one), so a stage is read by one consumer only, and two more mbarriers pass the
//           turn on the tensor cores between the consumers
template <class T_, int BM_, int BN_, int STAGES_, int CONSUMERS_, bool PRODUCER_, bool PERSISTENT_, int CLUSTER_ = 1,
          bool TMA_STORE_ = false, bool PINGPONG_ = false>
struct WgmmaTiling {
    using T = T_;
    static constexpr int ELEM = sizeof(T);  // bytes of one input element
    static constexpr int BM = BM_, BN = BN_, BK = 128 / ELEM, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int K_STEP = 32 / ELEM;  // k of one wgmma, 32 bytes: 16 (FP16/BF16), 8 (TF32), 32 (FP8)
    // B is row-major K x N. FP16/BF16 wgmma reads it as it is ("MN-major", trans-b = 1); TF32 has
    // no transpose, so it gets a transposed copy, N x K ("K-major", like A). FP8 has no transpose
    // either, and its B arrives as N x K already (step 6).
    static constexpr bool B_K_MAJOR = std::is_same_v<T, float> || ELEM == 1;
    static constexpr bool PRODUCER = PRODUCER_, PERSISTENT = PERSISTENT_, TMA_STORE = TMA_STORE_, PINGPONG = PINGPONG_;
    static constexpr int CLUSTER = CLUSTER_;
    static constexpr bool CLUSTER_ALONG_N = false;  // a cluster's tiles share B (ClusterTiles)
    static constexpr int WG_ROWS = PINGPONG ? BM : BM / CONSUMERS;  // rows of C per consumer warpgroup
    static constexpr int STAGE_READERS = PINGPONG ? 1 : CONSUMERS;  // consumer warpgroups that read each stage
    static constexpr int WG_MMAS = WG_ROWS / 64;                    // 64-row wgmmas per consumer and k-step
    static constexpr int THREADS = 128 * (CONSUMERS + (PRODUCER ? 1 : 0));
    static constexpr int A_BYTES = BM * BK * ELEM;
    static constexpr int B_BYTES = BN * BK * ELEM;
    // One TMA box of B: MN-major, BK rows x 64 columns (128 bytes); K-major, B_BOX_ROWS rows x BK:
    // the whole BN x BK tile, or in a cluster (step 10) a 1 / CLUSTER share of its rows.
    static constexpr int B_BOX_ROWS = B_K_MAJOR ? BN / CLUSTER : BK;
    static constexpr int B_BOX_BYTES = B_K_MAJOR ? B_BOX_ROWS * BK * ELEM : 64 * BK * ELEM;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    // TMA_STORE: C leaves in chunks of 64 rows x 32 floats (128 bytes, one swizzle row), two
    // buffers per consumer so that filling one overlaps the store of the other.
    static constexpr int C_CHUNK_COLS = 32, C_CHUNK_BYTES = 64 * C_CHUNK_COLS * 4;
    static constexpr int EPI_BYTES = TMA_STORE ? CONSUMERS * 2 * C_CHUNK_BYTES : 0;
    // The stages, the epilogue's buffers, the barriers (two 8-byte mbarriers per stage, and
    // PINGPONG's two turns), and 1 KB to align the start: the 128-byte swizzle repeats every 1024
    // bytes and a descriptor assumes tiles start on it.
    static constexpr int TURNS = PINGPONG ? 2 : 0;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + EPI_BYTES + (2 * STAGES + TURNS) * 8 + 1024;

    static_assert(WG_ROWS % 64 == 0, "each consumer warpgroup must own whole 64-row wgmmas");
    static_assert(BN == 128 || BN == 256, "one wgmma covers the tile's width: n = 128 or 256");
    static_assert(BM <= 256, "a TMA box is at most 256 rows");
    static_assert(WG_MMAS * BN / 2 <= 128, "a consumer thread holds WG_MMAS * BN / 2 accumulators: keep it <= 128");
    static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "every tile must start on a 1024-byte swizzle atom");
    static_assert(SMEM_BYTES <= 227 * 1024, "an H100/H200 block may use at most 227 KB of shared memory");
    static_assert(CLUSTER == 1 || (PERSISTENT && PRODUCER), "clusters are taught on the persistent kernel");
    static_assert(CLUSTER == 1 || B_K_MAJOR || (BN / 64) % CLUSTER == 0,
                  "multicast splits B's 64-column boxes evenly over the cluster");
    static_assert(CLUSTER == 1 || !B_K_MAJOR || (BN % CLUSTER == 0 && B_BOX_BYTES % 1024 == 0),
                  "multicast splits a K-major B tile by rows: each share must start on a 1024-byte swizzle atom");
    static_assert(!TMA_STORE || (PRODUCER && WG_MMAS == 1), "the staged epilogue stores one 64-row slice per consumer");
    static_assert(!PINGPONG || (PRODUCER && PERSISTENT && CONSUMERS == 2 && CLUSTER == 1 && !TMA_STORE),
                  "ping-pong: two consumer warpgroups of one persistent block take turns, each on tiles of its own");
};

// What the kernels receive: the two tensor maps (made on the host, see tensor_maps.cuh) and the
// epilogue's view of C. Passed as one __grid_constant__ parameter: the TMA unit reads the maps
// straight from the kernel's parameter memory.
struct WgmmaParams {
    CUtensorMap map_a;  // A: M rows x K columns, boxes of BM x BK (128 bytes of k)
    CUtensorMap map_b;  // B: K rows x N columns, boxes of BK x 64 (TF32, FP8: B^T, N x K, boxes of BN x BK)
    int M, N, K;
    float alpha, beta;
    float* C;
    int group_rows;   // tile order: bands of this many tile rows (wb::tile_of_block)
    bool c_pairs;     // C is 8-byte aligned and N even: two neighbours go out as one float2
    bool c_tma;       // TMA_STORE configurations: C can be written by TMA (16-byte aligned, N a multiple of 4)
    CUtensorMap map_c;  // C: M rows x N columns, boxes of 64 x 32 (TMA_STORE configurations, when c_tma)
};

// ---- The ring of stages in shared memory ---------------------------------------------------------
template <class Cfg>
struct StageRing {
    uint8_t* base;  // 1024-byte aligned
    __device__ explicit StageRing(uint8_t* raw)
        : base(raw + ((1024 - (smem_u32(raw) & 1023)) & 1023)) {}
    __device__ uint8_t* a(int s) const { return base + s * Cfg::STAGE_BYTES; }
    __device__ uint8_t* b(int s) const { return a(s) + Cfg::A_BYTES; }
    // Step 5's epilogue (TMA_STORE): buffer i (0, 1) of consumer c, after the stages.
    __device__ float* c_chunk(int c, int i) const {
        return reinterpret_cast<float*>(base + Cfg::STAGES * Cfg::STAGE_BYTES + (2 * c + i) * Cfg::C_CHUNK_BYTES);
    }
    // full[s]: the copies into stage s have landed. empty[s]: every consumer warp is done reading
    // it (in steps 5 and 10, of every block of the cluster: a multicast copy writes stage s in all
    // of them).
    __device__ uint64_t* full(int s) const {
        return reinterpret_cast<uint64_t*>(base + Cfg::STAGES * Cfg::STAGE_BYTES + Cfg::EPI_BYTES) + s;
    }
    __device__ uint64_t* empty(int s) const { return full(Cfg::STAGES) + s; }
    // Step 8 (PINGPONG): turn[c] completes a phase each time consumer c may start its next tile.
    __device__ uint64_t* turn(int c) const { return empty(Cfg::STAGES) + c; }

    // Thread 0, before anyone else touches the ring. full: one arrival (the producer's
    // expect_tx) plus the bytes; empty: one arrival per warp that reads the stage, in every block
    // of the cluster (step 8: the warps of the one consumer whose tile the stage belongs to).
    __device__ void init() const {
        for (int s = 0; s < Cfg::STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), Cfg::STAGE_READERS * 4 * Cfg::CLUSTER);
        }
        if constexpr (Cfg::PINGPONG) {  // a turn is passed by each of the 4 warps of the other consumer
            mbar_init(turn(0), 4);
            mbar_init(turn(1), 4);
        }
        fence_barrier_init();
    }
};

// The copies of k-tile kt of the tile at (m0, n0) into stage s: announce the bytes the stage will
// receive, then start the copies. A takes one box (BM rows x BK k); B, whose rows are k, takes
// BN / 64 boxes of BK rows x 64 columns, side by side (TF32: one box of its transposed copy, BN
// rows x BK k). Boxes reaching past the matrix are filled with zeros and still count their full
// size. (Steps 5 and 10 share B's boxes over a cluster instead: load_stage_multicast.)
template <class Cfg>
__device__ __forceinline__ void load_stage(const StageRing<Cfg>& ring, int s, const WgmmaParams& p, int m0, int n0,
                                           int kt) {
    mbar_arrive_expect_tx(ring.full(s), Cfg::STAGE_BYTES);
    tma_load_2d(ring.a(s), &p.map_a, ring.full(s), kt * Cfg::BK, m0);
    if constexpr (Cfg::B_K_MAJOR) {
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

// Steps 3-5 and 8: a consumer warpgroup's math on stage s, overlapped with what comes next. Stage s's
// wgmmas are issued as one group, then the warps wait until only that group still runs (wait_group
// 1): the group before it, which read the previous k-tile's slot, is done, so that slot may be
// released while this one computes. (Steps 1-2 wait for all, wait_group 0, and stall the tensor
// core at every stage.) The accumulator fences keep the compiler from moving reads or writes of acc
// across the asynchronous wgmmas; wgmma.fence orders the warps' earlier register writes (zeroing,
// the last epilogue) before the wgmmas.
template <class Cfg>
__device__ __forceinline__ void mma_stage_overlapped(float (&acc)[Cfg::WG_MMAS][Cfg::BN / 2], const StageRing<Cfg>& ring,
                                                     int s, int wg_row0) {
    // BEGIN SOLUTION: fence, stage s's wgmmas (mma_stage), commit; wait till one group is left
    fence_accumulators(acc);
    wgmma_fence();
    mma_stage<Cfg>(acc, ring, s, wg_row0);
    wgmma_commit();
    wgmma_wait<1>();  // the previous k-tile's group is done reading its slot
    fence_accumulators(acc);
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

}  // namespace ch09
