// step9_tf32_rs.cuh - step 9 of chapter 09 (variant tf32_rs): TF32 without B's transposed copy.
// TF32 wgmma reads its shared-memory operands K-major only, so step 6 first copies B (K x N, n
// contiguous) to B^T inside the timed call. But wgmma's A operand may also come from registers
// ("rs": A in registers, B in shared memory), and registers have no "major": each thread loads its
// values from wherever they are. So this step computes the transposed product, C^T = B^T * A^T:
//   wgmma's A (64 x 8 per k-step, registers) is B^T: row i, column k is B[k][n], n one of the
//     tile's columns of C. The warps load it from B's tile as TMA copies it (rows of k, n contiguous).
//   wgmma's B (8 x 256, shared memory, K-major) is A^T: its column j is row m0 + j of A, whose k
//     are contiguous: exactly A's tile as TMA copies it, read with the K-major descriptor step 6
//     uses for B^T.
//   The accumulators hold C^T: a thread's neighbouring pair is two ROWS of C in one column, so the
//     epilogue transposes through shared memory on the way to C (then TMA stores, as in step 5).
// Around that: step 4's persistent pipeline, a producer warpgroup and two consumers.
#pragma once

#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 9's configuration. A tile of C is BM rows x BN columns: its columns are wgmma's m (64 per
// consumer warpgroup), its rows wgmma's n (256, one instruction). Per stage: A's tile, BM rows of
// BK k (32 KB), and B's tile, BK rows of BN columns (16 KB) in boxes of 32 columns (128 bytes, one
// row of the 128-byte swizzle).
struct Tf32RsTiling {
    using T = float;
    static constexpr int BM = 256, BN = 128, BK = 32, K_STEP = 8;  // K_STEP: the k of one .tf32 wgmma
    static constexpr int STAGES = 4, CONSUMERS = 2, CLUSTER = 1;
    static constexpr bool CLUSTER_ALONG_N = false;  // no clusters here (step 11 forms them along n)
    // What StageRing asks of a configuration: both consumers read every stage; no turn barriers.
    static constexpr int STAGE_READERS = CONSUMERS;
    static constexpr bool PINGPONG = false;
    static constexpr int THREADS = 128 * (CONSUMERS + 1);  // a producer warpgroup and the consumers
    static constexpr int A_BYTES = BM * BK * 4;
    static constexpr int B_BOX_COLS = 32, B_BOX_BYTES = BK * B_BOX_COLS * 4;
    static constexpr int B_BYTES = BN * BK * 4;
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    // The epilogue: C leaves in boxes of 32 rows x 32 columns; one buffer holds a consumer's 64
    // columns (two boxes), and two buffers per consumer alternate.
    static constexpr int C_BOX_ROWS = 32, C_BOX_COLS = 32, C_BOX_BYTES = C_BOX_ROWS * C_BOX_COLS * 4;
    static constexpr int C_CHUNK_BYTES = 2 * C_BOX_BYTES;
    static constexpr int EPI_BYTES = CONSUMERS * 2 * C_CHUNK_BYTES;
    static constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + EPI_BYTES + STAGES * 16 + 1024;

    static_assert(BN == 64 * CONSUMERS, "each consumer warpgroup computes 64 columns of C: wgmma's m");
    static_assert(BM == 256, "one m64n256k8 covers the tile's rows");
    static_assert(BK * 4 == 128 && B_BOX_COLS * 4 == 128, "A's rows and B's boxes are one 128-byte swizzle row");
    static_assert(A_BYTES % 1024 == 0 && B_BOX_BYTES % 1024 == 0, "every tile and box starts on a swizzle atom");
    static_assert(SMEM_BYTES <= 227 * 1024, "an H100/H200 block may use at most 227 KB of shared memory");
};

// ---- Where each register of the A fragment comes from --------------------------------------------
// Byte offset of float `col` of row `row` in a box whose rows are 128 bytes, as TMA lays it out with
// the 128-byte swizzle: 16-byte chunk c of row r sits at chunk c ^ (r % 8).
__host__ __device__ constexpr uint32_t swizzle128_offset(int row, int col) {
    return uint32_t(row * 128 + (((col / 4) ^ (row % 8)) * 16) + (col % 4) * 4);
}

// Which column of the tile (0..BN-1) row i = 16 warp + 8 half + group of consumer `consumer`'s wgmma
// rows stands for. Nothing is summed along wgmma's m: any order of the tile's columns gives the same
// product, as long as the epilogue uses the same order. This one keeps the fragment loads free of
// bank conflicts: in one load the warp reads k = t (+ 4) for lanes 4g + t, whose rows' swizzle
// flips chunk bits 0-1 (and 2), so the lanes' columns must differ in chunk bit 2 and in col % 4
// (group / 4 and group % 4 below), not in bits 0-1. Each warp pair keeps to one 32-column box of C,
// which the epilogue relies on.
__host__ __device__ constexpr int rs_tile_column(int consumer, int warp, int half, int group) {
    return 64 * consumer + 32 * (warp / 2) + 16 * (group / 4) + 8 * (warp % 2) + 4 * half + group % 4;
}

// Byte offset in B's tile (BK rows x BN columns, boxes of 32 columns side by side) of register v of
// lane `lane` of warp `warp` at k-step kk (PTX ISA register fragment of m64nNk8, hopper_ptx.cuh):
// row i = 16 warp + group + 8 (v % 2), k = 8 kk + t + 4 (v / 2), with group = lane / 4, t = lane % 4.
__host__ __device__ constexpr uint32_t rs_fragment_offset(int consumer, int warp, int lane, int kk, int v) {
    using Cfg = Tf32RsTiling;
    const int col = rs_tile_column(consumer, warp, v % 2, lane / 4);
    const int k = Cfg::K_STEP * kk + lane % 4 + 4 * (v / 2);
    return uint32_t(col / Cfg::B_BOX_COLS * Cfg::B_BOX_BYTES) + swizzle128_offset(k, col % Cfg::B_BOX_COLS);
}

// ---- The pieces of the kernel --------------------------------------------------------------------
// The producer's copies of k-tile kt: A's box (BM rows x BK k at row m0), B's boxes (BK rows x 32
// columns each, B read as it is: K rows x N columns).
__device__ __forceinline__ void load_stage_rs(const StageRing<Tf32RsTiling>& ring, int s, const WgmmaParams& p, int m0,
                                              int n0, int kt) {
    using Cfg = Tf32RsTiling;
    mbar_arrive_expect_tx(ring.full(s), Cfg::STAGE_BYTES);
    tma_load_2d(ring.a(s), &p.map_a, ring.full(s), kt * Cfg::BK, m0);
#pragma unroll
    for (int j = 0; j < Cfg::BN / Cfg::B_BOX_COLS; ++j)
        tma_load_2d(ring.b(s) + j * Cfg::B_BOX_BYTES, &p.map_b, ring.full(s), n0 + j * Cfg::B_BOX_COLS, kt * Cfg::BK);
}

// A stage's A fragments, for all BK / K_STEP k-steps. A k-step is K_STEP = 8 rows further down
// B's tile: 1024 bytes, a whole swizzle atom, so the swizzle (and `base`, k-step 0's offsets) stays.
using RsFragments = uint32_t[Tf32RsTiling::BK / Tf32RsTiling::K_STEP][4];
__device__ __forceinline__ void load_fragments(RsFragments& f, const uint8_t* b_tile, const uint32_t (&base)[4]) {
#pragma unroll
    for (int kk = 0; kk < Tf32RsTiling::BK / Tf32RsTiling::K_STEP; ++kk)
#pragma unroll
        for (int v = 0; v < 4; ++v)
            f[kk][v] = *reinterpret_cast<const uint32_t*>(b_tile + base[v] + kk * Tf32RsTiling::K_STEP * 128);
}

// A consumer's wgmmas on one stage, one per k-step: wgmma's A (B^T) from the fragments loaded for
// that k-step, wgmma's B (A^T) through a K-major descriptor of A's tile (as step 6 reads B^T).
__device__ __forceinline__ void mma_stage_rs(float (&acc)[128], const RsFragments& f, const uint8_t* a_tile) {
    // BEGIN SOLUTION: per k-step: A descriptor 32 bytes further along; one register-A wgmma
    const uint32_t a0 = smem_u32(a_tile);
#pragma unroll
    for (int kk = 0; kk < Tf32RsTiling::BK / Tf32RsTiling::K_STEP; ++kk)
        wgmma_m64n256k8_tf32_rs(acc, f[kk], make_smem_desc(a0 + kk * 32, 16, 1024), 1);
    // END SOLUTION
}

// Like fence_accumulators: the compiler must keep these registers as they are until here (after the
// wait_group that ends the wgmmas reading them), not reuse them for the next stage's loads.
__device__ __forceinline__ void fence_fragments(RsFragments& f) {
#pragma unroll
    for (int kk = 0; kk < Tf32RsTiling::BK / Tf32RsTiling::K_STEP; ++kk)
#pragma unroll
        for (int v = 0; v < 4; ++v) asm volatile("" : "+r"(f[kk][v])::"memory");
}

// The epilogue of one consumer warpgroup: its 64 columns x 256 rows of C, transposed on the way.
// The thread holds, for half h = 0, 1, column rs_tile_column(consumer, warp, h, group) of C at rows
// 8 jj + 2 t and + 1 (acc[4 jj + 2 h] and acc[4 jj + 2 h + 1], wgmma's accumulator layout). In rounds
// of 32 rows, each warp pair writes its 32-column box (swizzled as TMA reads it) into one of two
// alternating buffers, then one thread stores both boxes with TMA, which clips what lies outside C.
// (These shared-memory writes meet 2-way bank conflicts: the column order suits the fragment loads,
// which run on every k-tile, not these, which run once per tile.)
// Where TMA cannot write C (p.c_tma false) each value goes straight to C, guarded. (Cfg: this
// tiling, or step 11's, the same tiling in clusters.)
template <class Cfg>
__device__ __forceinline__ void store_tile_transposed(const float (&acc)[128], const WgmmaParams& p,
                                                      const StageRing<Cfg>& ring, int consumer, int m0, int n0) {
    const int tid = threadIdx.x % 128, warp = tid / 32, lane = tid % 32, group = lane / 4, t = lane % 4;
    if (!p.c_tma) {
        // BEGIN SOLUTION: each value to C[row][col], row 8 jj + 2 t + e, col rs_tile_column; wb::store_c
#pragma unroll
        for (int jj = 0; jj < Cfg::BM / 8; ++jj)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int col = n0 + rs_tile_column(consumer, warp, h, group);
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int row = m0 + 8 * jj + 2 * t + e;
                    if (row < p.M && col < p.N)
                        wb::store_c(p.C + size_t(row) * p.N + col, acc[4 * jj + 2 * h + e], p.alpha, p.beta);
                }
            }
        // END SOLUTION
        return;
    }
    const int barrier_id = 1 + consumer;         // named barrier of this warpgroup (0 is __syncthreads)
    constexpr int SLICES = Cfg::C_BOX_ROWS / 8;  // 8-row slices of the accumulator per round
#pragma unroll
    for (int round = 0; round < Cfg::BM / Cfg::C_BOX_ROWS; ++round) {
        uint8_t* buf = reinterpret_cast<uint8_t*>(ring.c_chunk(consumer, round % 2));
        if (tid == 0) bulk_wait_group_read<1>();  // the store issued from this buffer two rounds ago has read it
        named_barrier_sync(barrier_id, 128);
        uint8_t* box = buf + (warp / 2) * Cfg::C_BOX_BYTES;
#pragma unroll
        for (int jj = 0; jj < SLICES; ++jj)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int x = rs_tile_column(consumer, warp, h, group) % Cfg::C_BOX_COLS;  // column inside the box
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int r = 8 * jj + 2 * t + e;  // row inside the box
                    float v = p.alpha * acc[4 * (round * SLICES + jj) + 2 * h + e];
                    if (p.beta != 0.0f) {  // C is read only when beta != 0 (it may hold NaN otherwise)
                        const int row = m0 + round * Cfg::C_BOX_ROWS + r,
                                  col = n0 + 64 * consumer + 32 * (warp / 2) + x;
                        if (row < p.M && col < p.N) v += p.beta * p.C[size_t(row) * p.N + col];
                    }
                    *reinterpret_cast<float*>(box + swizzle128_offset(r, x)) = v;
                }
            }
        fence_proxy_async_smem();  // these writes must be visible to the TMA unit's reads
        named_barrier_sync(barrier_id, 128);
        if (tid == 0) {
            for (int b = 0; b < 2; ++b)
                tma_store_2d(&p.map_c, buf + b * Cfg::C_BOX_BYTES, n0 + 64 * consumer + 32 * b,
                             m0 + round * Cfg::C_BOX_ROWS);
            bulk_commit_group();
        }
    }
}

// ---- The kernel ----------------------------------------------------------------------------------
// Step 4's persistent pipeline: block q takes tiles q, q + gridDim.x, ... in the banded order of
// wb::tile_of_block; the producer's thread copies, the consumers compute. What changes is the
// consumers' stage: they first load the stage's A fragments from B's tile (16 registers), then issue
// the stage's four wgmmas as one group. With one group left running (wait_group 1), the previous
// stage's fragments are still being read while this stage's are loaded: two sets alternate (f0,
// f1), and the k-tile loop names them in turn, so that each keeps its own registers.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, 1) tf32_rs_kernel(const __grid_constant__ WgmmaParams p) {
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, warp = (threadIdx.x % 128) / 32, lane = threadIdx.x % 32;
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
        setmaxnreg_dec<40>();  // the producer computes addresses only; its registers go to the consumers
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over all its tiles
            for (int tile = first; tile < tiles; tile += step) {
                const wb::TileIndex t = wb::tile_of_block(tile, tiles_m, tiles_n, p.group_rows);
                for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                    const int s = use % Cfg::STAGES;
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);  // until its previous use is released
                    load_stage_rs(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int consumer = wg - 1;
        uint32_t base[4];  // this thread's fragment offsets in B's tile at k-step 0
#pragma unroll
        for (int v = 0; v < 4; ++v) base[v] = rs_fragment_offset(consumer, warp, lane, 0, v);
        auto release = [&](int s) {
            if (lane == 0) mbar_arrive(ring.empty(s));
        };
        int use = 0;        // must step exactly as the producer's
        int previous = -1;  // the slot whose wgmmas may still be running
        float acc[128];
        RsFragments f0 = {}, f1 = {};
        // One k-tile: its fragments in `f`, while the group reading `in_flight` may still run.
        auto stage = [&](RsFragments& f, RsFragments& in_flight) {
            const int s = use % Cfg::STAGES;
            mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
            load_fragments(f, ring.b(s), base);
            fence_accumulators(acc);
            wgmma_fence();  // the fragments and accumulators written by ordinary code, before the wgmmas
            mma_stage_rs(acc, f, ring.a(s));
            wgmma_commit();
            wgmma_wait<1>();  // the previous k-tile's group is done: its slot and `in_flight` are free
            fence_accumulators(acc);
            fence_fragments(in_flight);
            if (previous >= 0) release(previous);
            previous = s;
            ++use;
        };
        for (int tile = first; tile < tiles; tile += step) {
            const wb::TileIndex t = wb::tile_of_block(tile, tiles_m, tiles_n, p.group_rows);
#pragma unroll
            for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
            previous = -1;
            // Pairs of k-tiles, then the odd one. The plain `if (kt + 1 < k_tiles)` inside the loop
            // reads the same, but then ptxas cannot tell which set is in flight on every path, and it
            // serializes the wgmmas (warning C7513: nothing then overlaps the fragment loads).
            for (int kt = 0; kt + 1 < k_tiles; kt += 2) {
                stage(f0, f1);
                stage(f1, f0);
            }
            if (k_tiles % 2 == 1) stage(f0, f1);
            wgmma_wait<0>();
            fence_accumulators(acc);
            fence_fragments(f0);
            fence_fragments(f1);
            release(previous);
            store_tile_transposed(acc, p, ring, consumer, t.m * Cfg::BM, t.n * Cfg::BN);
        }
        if (threadIdx.x % 128 == 0) bulk_wait_group_read<0>();  // shared memory must outlive the stores
    }
    __syncwarp();
}

}  // namespace ch09
