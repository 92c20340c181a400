// step3_smem_skewed.cuh - chapter 06, step 3 (wmma_smem_skewed): step 2 with every shared row
// padded by 16 bytes (SKEW), so that the fragment loads (ldmatrix) stop colliding in the banks.
// The kernel is step 2's; only the layout of the tiles changes.
#pragma once

#include "step2_smem.cuh"

namespace ch06 {

// Step 2's tiles with 8 halves (16 bytes) of padding per shared row. ldmatrix reads a fragment as
// 8 rows of 16 bytes at a time; a row must therefore be an odd number of 16-byte units long, so that
// the 8 rows fall into 8 different groups of 4 banks. Unpadded rows of A are 64 bytes (4 units:
// rows 0, 2, 4, 6 collide), rows of B 256 bytes (16 units: all 8 rows collide).
using Wmma128x128_padded = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 1, 8, 8>;

template <class Cfg>
constexpr bool kRowsConflictFreeForLdmatrix = (Cfg::A_LD * 2 / 16) % 2 == 1 && (Cfg::B_LD * 2 / 16) % 2 == 1;

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) wmma_smem_skewed(WmmaArgs<__half> g) {
    static_assert(std::is_same<typename Cfg::Inputs, Fp16Inputs>::value, "a Tiling of Fp16Inputs");
    static_assert(kRowsConflictFreeForLdmatrix<Cfg>,
                  "rows of A and B must be an odd number of 16-byte units long (SKEW 8 halves)");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    __half* smem = reinterpret_cast<__half*>(smem_bytes);
    const BlockCoord t = block_coord<Cfg>(g);
    const int warp = threadIdx.x / 32;
    const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
    const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

    Accumulators<Cfg> acc;
    zero_accumulators<Cfg>(acc);
    mainloop_load_then_compute<Cfg, VEC>(g, t, smem, warp_row, warp_col, acc);

    __syncthreads();
    float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
    epilogue_fragments<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
}

template <class Cfg>
void launch_wmma_smem_skewed(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                             float* C, cudaStream_t stream) {
    launch_two_paths<Cfg, wmma_smem_skewed<Cfg, true>, wmma_smem_skewed<Cfg, false>>("WMMA", 1, M, N, K, alpha, A,
                                                                                    B, beta, C, stream);
}

}  // namespace ch06
