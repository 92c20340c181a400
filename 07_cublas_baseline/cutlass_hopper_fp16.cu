// cutlass_hopper_fp16.cu - the Hopper CUTLASS row for FP16 inputs (cutlass_hopper.cuh has the
// kernel). Its own translation unit, so that it compiles beside the BF16 one.
#include <cuda_fp16.h>

#include "cutlass_hopper.cuh"

namespace ch07 {
namespace {

void cutlass_fp16_wgmma(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta, float* C,
                        cudaStream_t stream) {
    run_wgmma<cutlass::half_t>("cutlass_fp16_wgmma", M, N, K, alpha, A, B, beta, C, stream);
}

}  // namespace

CutlassRows cutlass_hopper_fp16_rows() {
    CutlassRows rows;
    rows.hgemm = {{"cutlass_fp16_wgmma", cutlass_fp16_wgmma,
                   "CUTLASS 3.x FP16: TMA + wgmma, warp-specialized cooperative, 128x128x64 (sm_90a only)", {}, 90}};
    return rows;
}

}  // namespace ch07
