// step5_smem_epilogue.cuh - chapter 06, step 5 (wmma_smem_epilogue): step 4, with the accumulators
// leaving through shared memory: a row of fragments at a time is staged, then written to C with
// alpha, beta and the bounds applied, in coalesced 16-byte stores (epilogue_staged, wmma_common.cuh
// section 6) instead of one 8-byte fragment store per lane.
#pragma once

#include "step4_cp_async.cuh"

namespace ch06 {

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) wmma_smem_epilogue(WmmaArgs<__half> g) {
    static_assert(std::is_same<typename Cfg::Inputs, Fp16Inputs>::value, "a Tiling of Fp16Inputs");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    __half* smem = reinterpret_cast<__half*>(smem_bytes);
    const BlockCoord t = block_coord<Cfg>(g);
    const int warp = threadIdx.x / 32;
    const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
    const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

    Accumulators<Cfg> acc;
    zero_accumulators<Cfg>(acc);
    mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const __half* As, const __half* Bs) {
        mma_stage<Cfg>(As, Bs, warp_row, warp_col, acc);
    });

    __syncthreads();  // the ring's memory becomes one staging area per warp
    float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
    epilogue_staged<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
}

// Same tiles as step 4 (Wmma128x128_3stage).
template <class Cfg>
void launch_wmma_smem_epilogue(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                               float* C, cudaStream_t stream) {
    launch_two_paths<Cfg, wmma_smem_epilogue<Cfg, true>, wmma_smem_epilogue<Cfg, false>>(
        "WMMA", 1, M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace ch06
