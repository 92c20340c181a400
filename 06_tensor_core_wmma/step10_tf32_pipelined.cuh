// step10_tf32_pipelined.cuh - chapter 06, step 10 (tf32_pipelined): step 8's TF32 mma.sync fed the
// way step 9 feeds FP16. The fragments of the next k-step are loaded and rounded while the current
// ones multiply, and the ring's barrier moves to just before a stage's last k-step, so that the
// next stage's first fragments load while that k-step multiplies. Step 8's tiles, padding, fragment
// addresses, rounding and epilogue are unchanged.
#pragma once

#include "step9_mma_ldmatrix.cuh"

namespace ch06 {

// In step 8 every k-step is: load A and B, round them, then 32 mma.sync that need all of it. A
// warp waits for its loads and roundings before its first mma.sync of the k-step, and with two
// blocks of four warps per SM (196 registers per thread) there are only two warps per scheduler to
// cover that wait. Here the loads of k-step s + 1 are issued before the mma.sync of k-step s, so
// they travel while the tensor core works; it costs one more set of fragments in registers.

// One k-step's fragments of a warp (step 8's layout): FM of A (a0..a3 each) and 2 FN n8 tiles of
// B (b0, b1 each), already rounded to TF32.
template <class Cfg>
struct Tf32Fragments {
    unsigned a[Cfg::FM][4];
    unsigned b[2 * Cfg::FN][2];
};

// k-step kk (a multiple of 8) of the stage whose tiles start at this lane's a_lane / b_lane
// (mma_a_lane_offset / mma_b_lane_offset added to the stage's shared address).
template <class Cfg>
__device__ __forceinline__ void load_tf32_fragments(Tf32Fragments<Cfg>& f, unsigned a_lane, unsigned b_lane, int kk) {
    using Op = typename Cfg::Inputs;
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) {
        ldmatrix_x4(f.a[i], a_lane + 4u * unsigned(16 * i * Cfg::A_LD + kk));
#pragma unroll
        for (int e = 0; e < 4; ++e) f.a[i][e] = Op::round_loaded(f.a[i][e]);
    }
#pragma unroll
    for (int j = 0; j < 2 * Cfg::FN; ++j) {
        f.b[j][0] = Op::round_loaded(lds32(b_lane + 4u * unsigned(kk * Cfg::B_LD + 8 * j)));
        f.b[j][1] = Op::round_loaded(lds32(b_lane + 4u * unsigned((kk + 4) * Cfg::B_LD + 8 * j)));
    }
}

template <class Cfg>
__device__ __forceinline__ void mma_tf32_fragments(MmaAccumulators<Cfg>& acc, const Tf32Fragments<Cfg>& f) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < 2 * Cfg::FN; ++j) mma_m16n8k8_tf32(acc[i][j], f.a[i], f.b[j]);
}

// Step 9's ring on step 8's padded tiles: iteration kt first refills stage (kt - 1) % STAGES, whose
// last fragments every warp loaded before the barrier of iteration kt - 1.
template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) tf32_pipelined(WmmaArgs<float> g) {
    static_assert(std::is_base_of<Tf32MmaInputs, typename Cfg::Inputs>::value, "a Tiling of Tf32MmaInputs");
    static_assert(Cfg::SKEW_A % 8 == 4, "ldmatrix reads 8 rows of 16 bytes: rows of A must be 4 (mod 8) "
                                        "floats long to be conflict-free");
    constexpr int STAGES = Cfg::STAGES, K_STEPS = Cfg::BK / 8;
    static_assert(STAGES >= 2, "the cp.async ring needs at least two stages");
    static_assert(K_STEPS % 2 == 0, "the fragments alternate between two register sets: an even number of "
                                    "k-steps per stage keeps that pattern the same in every stage");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Cfg::Inputs::kCompiled) {
        float* smem = reinterpret_cast<float*>(smem_bytes);
        const BlockCoord t = block_coord<Cfg>(g);
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;
        const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        const unsigned a_lane = smem_base + mma_a_lane_offset<Cfg>(warp_row, lane);
        const unsigned b_lane = smem_base + unsigned(STAGES * Cfg::A_STAGE) * 4u + mma_b_lane_offset<Cfg>(warp_col, lane);
        auto a_addr = [&](int stage) { return a_lane + unsigned(stage * Cfg::A_STAGE) * 4u; };
        auto b_addr = [&](int stage) { return b_lane + unsigned(stage * Cfg::B_STAGE) * 4u; };

        MmaAccumulators<Cfg> acc;
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
            for (int j = 0; j < 2 * Cfg::FN; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

        const ChunkSources<Cfg> src(g, t);
#pragma unroll
        for (int s = 0; s < STAGES - 1; ++s) {
            if (s < g.k_tiles) copy_tiles_async<Cfg, VEC>(src, s * Cfg::BK, a_stage<Cfg>(smem, s), b_stage<Cfg>(smem, s));
            wb::cp_async_commit();
        }
        wb::cp_async_wait<STAGES - 2>();
        __syncthreads();
        Tf32Fragments<Cfg> frag[2];  // the k-step being multiplied and the next one
        load_tf32_fragments<Cfg>(frag[0], a_addr(0), b_addr(0), 0);
        for (int kt = 0; kt < g.k_tiles; ++kt) {
            const int ahead = kt + STAGES - 1;
            if (ahead < g.k_tiles) {
                const int s = ahead % STAGES;
                copy_tiles_async<Cfg, VEC>(src, ahead * Cfg::BK, a_stage<Cfg>(smem, s), b_stage<Cfg>(smem, s));
            }
            wb::cp_async_commit();
            // BEGIN SOLUTION: per k-step: load the next fragments (barrier before the last), then mma
            const int stage = kt % STAGES;
#pragma unroll
            for (int s = 0; s < K_STEPS; ++s) {
                if (s + 1 < K_STEPS) {
                    load_tf32_fragments<Cfg>(frag[(s + 1) % 2], a_addr(stage), b_addr(stage), 8 * (s + 1));
                } else {
                    // Tile kt + 1 has landed, and every warp has loaded its last fragments of stage
                    // kt, which the next iteration refills.
                    wb::cp_async_wait<STAGES - 2>();
                    __syncthreads();
                    if (kt + 1 < g.k_tiles)
                        load_tf32_fragments<Cfg>(frag[(s + 1) % 2], a_addr((kt + 1) % STAGES),
                                                 b_addr((kt + 1) % STAGES), 0);
                }
                mma_tf32_fragments<Cfg>(acc, frag[s % 2]);
            }
            // END SOLUTION
        }
        wb::cp_async_wait<0>();  // only empty groups are left; leave no copy in flight behind us
        __syncthreads();         // the staging areas reuse the ring's memory
        epilogue_mma<Cfg>(g, t, warp_row, warp_col, acc, smem + warp * Cfg::WARP_STAGE);
    } else {
        __trap();  // sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// SgemmFn. GROUP: tile rows per band of the block order (step 6).
template <class Cfg, int GROUP = kBand>
void launch_tf32_pipelined(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, tf32_pipelined<Cfg, true>, tf32_pipelined<Cfg, false>>("TF32 mma.sync, pipelined", GROUP,
                                                                                M, N, K, alpha, A, B, beta, C,
                                                                                stream);
}

}  // namespace ch06
