// cutlass_hopper_bf16.cu - the Hopper CUTLASS row for BF16 inputs (cutlass_hopper.cuh has the
// kernel). Its own translation unit, so that it compiles beside the FP16 one.
#include <cuda_bf16.h>

#include "cutlass_hopper.cuh"

namespace ch07 {
namespace {

void cutlass_bf16_wgmma(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                        float beta, float* C, cudaStream_t stream) {
    run_wgmma<cutlass::bfloat16_t>("cutlass_bf16_wgmma", M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace

CutlassRows cutlass_hopper_bf16_rows() {
    CutlassRows rows;
    rows.bgemm = {{"cutlass_bf16_wgmma", cutlass_bf16_wgmma,
                   "CUTLASS 3.x BF16: TMA + wgmma, warp-specialized cooperative, 128x128x64 (sm_90a only)", {}, 90}};
    return rows;
}

}  // namespace ch07
