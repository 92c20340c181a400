// step11_tf32_swizzled.cuh - chapter 06, step 11 (tf32_swizzled): step 10 on unpadded tiles laid out
// with an XOR swizzle, as step 9 lays out FP16's. Rows of A are 32 floats (one 128-byte line), rows of
// B 128 floats (four lines); inside every line the 16-byte chunks are permuted by a key taken from the
// row. Step 10's ring, fragments, rounding, mma.sync and epilogue are unchanged.
#pragma once

#include "step10_tf32_pipelined.cuh"

namespace ch06 {

// Step 10's padding (rows of 36 and 136 floats) keeps the fragment loads conflict-free, but it is
// paid for in the copies: a row of 144 bytes (A) or 544 bytes (B) no longer starts on a 128-byte line,
// so the 16-byte cp.async stores of the 8 lanes that copy 128 bytes of a row straddle two lines, and
// the profile (the notes, step 10) finds all of step 10's excess traffic in those copies. Unpadded,
// 8 lanes store the 8 chunks of one whole line; the swizzle, which only permutes chunks inside a
// line, gives the fragment loads back their conflict-free banks.
//
// A: ldmatrix.x4 reads 8 rows of 16 bytes per matrix (lanes 8q .. 8q + 7 name the rows). A row is a
// whole line, so step 9's key, row mod 8, sends the same logical chunk of 8 consecutive rows to 8
// different 16-byte columns: swizzle_chunk<8> as it is.
//
// B: a 4-byte load of b0 has lane (g, t) read B[t][n0 + g]: 4 k-rows times 8 consecutive floats
// (one aligned pair of chunks, 2m and 2m + 1), 32 words that must fall in 32 banks. XORing a key
// into the chunk index moves the pair to pair m ^ (key / 2) and at most swaps its two chunks. Step
// 9's key (k-row mod 8) gives k-rows 0 and 1 keys 0 and 1: the same pair, swapped, so two words share
// each bank (2 passes). The key must differ in its upper two bits across 4 consecutive k-rows:
//
//   key = 2 * (k-row mod 4)      B, the first line of k-rows 0..3 (logical chunk in each column):
//                                  k-row 0 (key 0):  0 1 2 3 4 5 6 7     b0 of n-tile 0 reads chunks
//                                  k-row 1 (key 2):  2 3 0 1 6 7 4 5     0, 1 of every k-row: columns
//                                  k-row 2 (key 4):  4 5 6 7 0 1 2 3     0,1 / 2,3 / 4,5 / 6,7 of the
//                                  k-row 3 (key 6):  6 7 4 5 2 3 0 1     four rows, 32 banks, 1 pass
//
// k-rows t and t + 4 (b0 and b1) share a key; they are two loads, so that costs nothing.
template <int ROW_CHUNKS>
__host__ __device__ constexpr int swizzle_chunk_pairs(int chunk) {
    static_assert(ROW_CHUNKS >= 8 && (ROW_CHUNKS & (ROW_CHUNKS - 1)) == 0,
                  "the pair swizzle needs rows of whole 128-byte lines: a power-of-two number of chunks, at least 8");
    return chunk ^ (2 * (chunk / ROW_CHUNKS % 4));
}

// 128x128x32, 4 warps of 64x64, 3 stages: step 8's tiles without the padding, one stage more (96 KB;
// two blocks still fit on an sm_90 SM, whose registers allow two anyway).
using Mma128x128_k32_3stage_swizzled = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 3, 0, 0>;

// The layout of a stage and the fragment addresses on it. a_offset / b_offset: where element e of
// the row-major, unpadded A (B) tile lives, in floats (the copies use them for the first element of
// each chunk; copy_tiles_swizzled, step 9).
//
// Step 10's fragment addresses are one per-lane base per operand plus constants. Here the key XORs
// bits of the chunk index that a constant would have to add to, which costs either a base per value
// of those bits or an XOR at run time:
//   A: k-step s reads chunk 2 s + lane / 16 of its row, stored at (2 s + lane / 16) ^ (row mod 8) =
//      (lane / 16 ^ row mod 8) ^ 2 s: k-step 0's base XOR 32 s bytes (a_step_xor). One XOR per
//      k-step, on an unrolled constant. m-tile i adds 16 i rows (a_tile_bytes), which keeps row mod 8.
//   B: n-tile j reads chunks 2 (j mod 4) and 2 (j mod 4) + 1 of a line, moved by the key: one base
//      per j mod 4 (b_lane_bytes(q)). n-tile j + 4 is the next line (32 floats on), k-step s is 8 s
//      k-rows on, b1 is 4 k-rows on: none of them changes k-row mod 4 (b_tile_bytes).
// One base for A and four for B keep the kernel within 255 registers without spilling; four bases
// for A as well (no XOR at all) spill on the element-wise path, XORs for B too spill on both paths.
template <class Cfg>
struct SwizzledTf32Tiles {
    static constexpr int CHUNK = Cfg::Inputs::CHUNK;
    static constexpr int A_ROW_CHUNKS = Cfg::BK / CHUNK, B_ROW_CHUNKS = Cfg::BN / CHUNK;
    static constexpr int K_STEPS = Cfg::BK / 8;  // mma.sync k-steps per stage
    static constexpr int B_BASES = 4;            // n-tiles j and j + 4 share a base
    static_assert(CHUNK == 4, "a layout of floats: 4 per 16-byte chunk");
    static_assert(Cfg::SKEW_A == 0 && Cfg::SKEW_B == 0, "the swizzle replaces the padding: SKEW 0");
    static_assert(A_ROW_CHUNKS == 8, "rows of A must be one 128-byte line (BK = 32), so that row mod 8 is the key");
    static_assert(Cfg::BN % 32 == 0 && Cfg::WN % 32 == 0,
                  "B's rows and a warp's columns must be whole lines (32 floats): the bases repeat every line");

    __host__ __device__ static constexpr int a_offset(int e) {
        return swizzle_chunk<A_ROW_CHUNKS>(e / CHUNK) * CHUNK + e % CHUNK;
    }
    __host__ __device__ static constexpr int b_offset(int e) {
        return swizzle_chunk_pairs<B_ROW_CHUNKS>(e / CHUNK) * CHUNK + e % CHUNK;
    }

    // Step 8's lane pattern. A, k-step 0: lanes 8q .. 8q + 7 name the rows of matrix q (rows 0-7,
    // 8-15, then the same with columns 4-7). B: lane (g, t) reads b0 = B[t][g] of n-tile q.
    __host__ __device__ static unsigned a_lane_bytes(int warp_row, int lane) {
        const int row = warp_row + lane % 8 + 8 * (lane / 8 % 2);
        return unsigned(a_offset(row * Cfg::BK + 4 * (lane / 16))) * 4u;
    }
    __host__ __device__ static unsigned b_lane_bytes(int warp_col, int lane, int q) {
        return unsigned(b_offset((lane % 4) * Cfg::BN + warp_col + 8 * q + lane / 4)) * 4u;
    }
    // The constants: k-step s of A (an XOR) and its m-tile i; n-tile j of B at k-step s, b0 (h = 0)
    // or b1 (h = 1).
    __host__ __device__ static constexpr unsigned a_step_xor(int s) { return 32u * unsigned(s); }
    __host__ __device__ static constexpr unsigned a_tile_bytes(int i) { return unsigned(16 * i * Cfg::BK) * 4u; }
    __host__ __device__ static constexpr unsigned b_tile_bytes(int j, int s, int h) {
        return unsigned((8 * s + 4 * h) * Cfg::BN + 32 * (j / B_BASES)) * 4u;
    }
};

// k-step s of the stage whose tiles start at a_stage / b_stage (shared addresses): step 8's loads
// (FM ldmatrix.x4, 2 FN pairs of 4-byte loads, each element rounded once) at the swizzled places.
template <class Cfg, class L>
__device__ __forceinline__ void load_tf32_fragments_swizzled(Tf32Fragments<Cfg>& f, unsigned a_stage, unsigned b_stage,
                                                             unsigned a_lane, const unsigned (&b_lane)[L::B_BASES],
                                                             int s) {
    // BEGIN SOLUTION: step 8's loads: A at a_lane ^ a_step_xor(s), B at b_lane[j % 4], plus tile constants
    using Op = typename Cfg::Inputs;
    const unsigned a = a_stage + (a_lane ^ L::a_step_xor(s));
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) {
        ldmatrix_x4(f.a[i], a + L::a_tile_bytes(i));
#pragma unroll
        for (int e = 0; e < 4; ++e) f.a[i][e] = Op::round_loaded(f.a[i][e]);
    }
#pragma unroll
    for (int j = 0; j < 2 * Cfg::FN; ++j) {
        const unsigned b = b_stage + b_lane[j % L::B_BASES];
        f.b[j][0] = Op::round_loaded(lds32(b + L::b_tile_bytes(j, s, 0)));
        f.b[j][1] = Op::round_loaded(lds32(b + L::b_tile_bytes(j, s, 1)));
    }
    // END SOLUTION
}

// Step 10's kernel on the layout L (a template parameter so that a test can hand it a layout whose
// copies and loads disagree).
template <class Cfg, bool VEC, class L = SwizzledTf32Tiles<Cfg>>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) tf32_swizzled(WmmaArgs<float> g) {
    static_assert(std::is_base_of<Tf32MmaInputs, typename Cfg::Inputs>::value, "a Tiling of Tf32MmaInputs");
    constexpr int STAGES = Cfg::STAGES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Cfg::Inputs::kCompiled) {
        float* smem = reinterpret_cast<float*>(smem_bytes);
        const BlockCoord t = block_coord<Cfg>(g);
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;
        const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        auto a_addr = [&](int stage) { return smem_base + unsigned(stage * Cfg::A_STAGE) * 4u; };
        auto b_addr = [&](int stage) {
            return smem_base + unsigned(STAGES * Cfg::A_STAGE + stage * Cfg::B_STAGE) * 4u;
        };
        const unsigned a_lane = L::a_lane_bytes(warp_row, lane);
        unsigned b_lane[L::B_BASES];
#pragma unroll
        for (int q = 0; q < L::B_BASES; ++q) b_lane[q] = L::b_lane_bytes(warp_col, lane, q);

        MmaAccumulators<Cfg> acc;
        zero_mma_accumulators<Cfg>(acc);

        const ChunkSources<Cfg> src(g, t);
        double_buffered_ring<STAGES, L::K_STEPS, Tf32Fragments<Cfg>>(
            g.k_tiles, Cfg::BK,
            [&](int k0, int stage) {
                copy_tiles_swizzled<Cfg, VEC, L>(src, k0, a_stage<Cfg>(smem, stage), b_stage<Cfg>(smem, stage));
            },
            [&](Tf32Fragments<Cfg>& f, int stage, int s) {
                load_tf32_fragments_swizzled<Cfg, L>(f, a_addr(stage), b_addr(stage), a_lane, b_lane, s);
            },
            [&](const Tf32Fragments<Cfg>& f) { mma_tf32_fragments<Cfg>(acc, f); });

        __syncthreads();  // the staging areas reuse the ring's memory
        epilogue_mma<Cfg>(g, t, warp_row, warp_col, acc, smem + warp * Cfg::WARP_STAGE);
    } else {
        __trap();  // sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// SgemmFn. GROUP: tile rows per band of the block order (step 6).
template <class Cfg, int GROUP = kBand>
void launch_tf32_swizzled(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                          cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, tf32_swizzled<Cfg, true>, tf32_swizzled<Cfg, false>>("TF32 mma.sync, swizzled", GROUP, M, N,
                                                                               K, alpha, A, B, beta, C, stream);
}

}  // namespace ch06
