// step4_cp_async.cuh - chapter 06, step 4 (wmma_cp_async): step 3's tiles in a ring of 3 stages
// filled by cp.async (sm_80+), so that the copies of the next tiles run while the tensor cores work
// on this one. The ring itself, mainloop_cp_async_ring, is in wmma_common.cuh (section 5): steps 5
// to 8 keep it.
#pragma once

#include "step3_smem_skewed.cuh"

namespace ch06 {

// Step 3's tiles, 3 stages (55.5 KB: still within sm_75's 64 KB, where cp.async is an ordinary
// load and store and the ring keeps its order without the overlap).
using Wmma128x128_3stage = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 3, 8, 8>;

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) wmma_cp_async(WmmaArgs<__half> g) {
    static_assert(std::is_same<typename Cfg::Inputs, Fp16Inputs>::value, "a Tiling of Fp16Inputs");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    __half* smem = reinterpret_cast<__half*>(smem_bytes);
    const BlockCoord t = block_coord<Cfg>(g);
    const int warp = threadIdx.x / 32;
    const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
    const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

    Accumulators<Cfg> acc;
    zero_accumulators<Cfg>(acc);
    // STAGES - 1 tiles in flight while the warps multiply the oldest one.
    mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const __half* As, const __half* Bs) {
        mma_stage<Cfg>(As, Bs, warp_row, warp_col, acc);
    });

    __syncthreads();
    float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
    epilogue_fragments<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
}

template <class Cfg>
void launch_wmma_cp_async(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                          float* C, cudaStream_t stream) {
    launch_two_paths<Cfg, wmma_cp_async<Cfg, true>, wmma_cp_async<Cfg, false>>("WMMA", 1, M, N, K, alpha, A, B,
                                                                              beta, C, stream);
}

}  // namespace ch06
