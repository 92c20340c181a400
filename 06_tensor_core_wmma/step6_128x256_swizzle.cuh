// step6_128x256_swizzle.cuh - chapter 06, step 6 (wmma_128x256_swizzle): 64x64 of C per warp
// (4x4 fragments, each fragment loaded is used 4 times), a 128x256 block tile, and blocks walked
// in bands of kBand tile rows so that the panels of A and B they share stay in L2. The kernel is
// step 5's; the configuration and the block order are new.
#pragma once

#include "step5_smem_epilogue.cuh"

namespace ch06 {

// 2 x 4 warps of 64 x 64, 3 stages (79.5 KB: sm_80 and later). Per k-step of 16 a warp loads 4
// fragments of A and 4 of B and issues 4 x 4 = 16 mma_sync.
//
//   block tile 128 x 256                 one warp: 64 x 64 = 4 x 4 fragments
//   +--------+--------+--------+--------+       b0  b1  b2  b3
//   | warp 0 | warp 1 | warp 2 | warp 3 |   a0 [00][01][02][03]
//   +--------+--------+--------+--------+   a1 [10][11][12][13]    acc[i][j] += a_i * b_j
//   | warp 4 | warp 5 | warp 6 | warp 7 |   a2 [20][21][22][23]
//   +--------+--------+--------+--------+   a3 [30][31][32][33]
using Wmma128x256_3stage = Tiling<Fp16Inputs, 128, 256, 32, 64, 64, 3, 8, 8>;

constexpr int kBand = 8;  // tile rows per band of the block order (block_coord, wmma_common.cuh)

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) wmma_swizzle(WmmaArgs<__half> g) {
    static_assert(std::is_same<typename Cfg::Inputs, Fp16Inputs>::value, "a Tiling of Fp16Inputs");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    __half* smem = reinterpret_cast<__half*>(smem_bytes);
    const BlockCoord t = block_coord<Cfg>(g);  // bands of g.group_rows (kBand) tile rows
    const int warp = threadIdx.x / 32;
    const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
    const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

    Accumulators<Cfg> acc;  // 4 x 4 fragments on 128x256: 128 floats per thread, one block per SM
    zero_accumulators<Cfg>(acc);
    mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const __half* As, const __half* Bs) {
        mma_stage<Cfg>(As, Bs, warp_row, warp_col, acc);
    });

    __syncthreads();
    float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
    epilogue_staged<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
}

// GROUP: tile rows per band (1: plain row-major order, as the lab's *_g1 row compares).
template <class Cfg, int GROUP = kBand>
void launch_wmma_swizzle(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                         float* C, cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, wmma_swizzle<Cfg, true>, wmma_swizzle<Cfg, false>>("WMMA", GROUP, M, N, K, alpha, A, B,
                                                                            beta, C, stream);
}

}  // namespace ch06
