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
// they travel while the tensor core works; it costs one more set of fragments in registers. The
// pieces are step 8's (Tf32Fragments, load_tf32_fragments, mma_tf32_fragments) and step 9's
// (double_buffered_ring).

// Step 9's ring (double_buffered_ring) on step 8's padded tiles, copied as in steps 4 to 8.
template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) tf32_pipelined(WmmaArgs<float> g) {
    static_assert(std::is_base_of<Tf32MmaInputs, typename Cfg::Inputs>::value, "a Tiling of Tf32MmaInputs");
    static_assert(Cfg::SKEW_A % 8 == 4, "ldmatrix reads 8 rows of 16 bytes: rows of A must be 4 (mod 8) "
                                        "floats long to be conflict-free");
    constexpr int STAGES = Cfg::STAGES;
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

        MmaAccumulators<Cfg> acc;
        zero_mma_accumulators<Cfg>(acc);

        const ChunkSources<Cfg> src(g, t);
        double_buffered_ring<STAGES, Cfg::BK / 8, Tf32Fragments<Cfg>>(
            g.k_tiles, Cfg::BK,
            [&](int k0, int stage) {
                copy_tiles_async<Cfg, VEC>(src, k0, a_stage<Cfg>(smem, stage), b_stage<Cfg>(smem, stage));
            },
            [&](Tf32Fragments<Cfg>& f, int stage, int s) {
                load_tf32_fragments<Cfg>(f, a_lane + unsigned(stage * Cfg::A_STAGE) * 4u,
                                         b_lane + unsigned(stage * Cfg::B_STAGE) * 4u, 8 * s);
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
void launch_tf32_pipelined(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                           cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, tf32_pipelined<Cfg, true>, tf32_pipelined<Cfg, false>>("TF32 mma.sync, pipelined", GROUP,
                                                                                M, N, K, alpha, A, B, beta, C,
                                                                                stream);
}

}  // namespace ch06
