// kernels.cuh - chapter 06: tensor cores through WMMA. FP16 inputs with FP32 accumulation, and TF32.
//
// Chapters 02 to 05 multiplied on the FP32 units, one fused multiply-add per thread per instruction.
// A tensor core multiplies small matrices instead: in CUDA C++ a whole warp hands it a 16x16 tile of
// A, a 16x16 tile of B and a 16x16 tile of accumulators (nvcuda::wmma::mma_sync), and 4096
// multiply-adds happen in a few instructions.
//
// The ladder, one kernel per step, one file per step; read them in order, each includes the one
// before, and `diff` of two neighbours shows the step's one idea:
//   wmma_common.cuh            what every step shares: the FP16 input type, the WMMA rules, the tile
//                              configuration, guarded tile copies, the cp.async ring, the epilogues
//   step1_naive.cuh            wmma_naive: one warp per 16x16 tile of C, fragments from global memory
//   step2_smem.cuh             wmma_smem: a 128x128 block tile in shared memory, 8 warps of 4x2
//                              fragments; load, barrier, compute, barrier
//   step3_smem_skewed.cuh      wmma_smem_skewed: every shared row padded by 16 bytes, conflict-free
//                              fragment loads
//   step4_cp_async.cuh         wmma_cp_async: a ring of 3 stages filled by cp.async (sm_80+)
//   step5_smem_epilogue.cuh    wmma_smem_epilogue: accumulators staged in shared memory, coalesced
//                              16-byte stores of C
//   step6_128x256_swizzle.cuh  wmma_swizzle: 64x64 per warp, a 128x256 block tile, blocks walked in
//                              bands of 8 tile rows so that A and B stay in L2
//   step7_tf32_wmma.cuh        tf32_wmma: the same on FP32 inputs read as TF32 (sm_80+)
//   step8_tf32_mma_sync.cuh    tf32_mma_sync: TF32 without WMMA, mma.sync m16n8k8 with its
//                              documented register layout
//   step9_mma_ldmatrix.cuh     mma_ldmatrix: FP16 without WMMA, mma.sync m16n8k16 on fragments that
//                              ldmatrix reads from XOR-swizzled tiles, double-buffered registers
//   step10_tf32_pipelined.cuh  tf32_pipelined: step 8 fed like step 9, the next k-step's fragments
//                              loaded while the current ones multiply
//   step11_tf32_swizzled.cuh   tf32_swizzled: step 10 on unpadded tiles with an XOR swizzle (B keyed by
//                              k-row mod 4), whole 128-byte lines for the cp.async copies
// Not a step: best_06.cuh, the `best` variants, which choose among the steps' kernels per shape.
// What exists to explore rather than to teach (tuning tables, the precision study, rounding
// experiments) lives in lab/ (`make tune-06`).
//
// Any shape: tiles hanging over an edge of A or B are zero-filled (zeros add nothing to a dot
// product), fragments of C that hang over the edge of C leave through a small staging area, and
// the fast paths are taken only where the WMMA rules (wmma_common.cuh, section 2) allow. Indices
// are int: the workbook keeps every matrix below 2^31 elements (options.h).
#pragma once

#include "step11_tf32_swizzled.cuh"
#include "best_06.cuh"

namespace ch06 {

// ---- The ladder ----------------------------------------------------------------------------------
// Every GPU runs the same configurations; a variant whose shared memory a GPU does not grant is
// skipped there (min_cc_of: sm_75 grants 64 KB per block, sm_80 and later 99 KB or more).
// clang-format off
inline const wb::HgemmVariant kHgemmVariants[] = {
    {"wmma_naive", launch_wmma_naive,
     "one warp per 16x16 tile of C, fragments loaded from global memory",
     {(const void*)wmma_naive, kNaiveThreads, 0}, Fp16Inputs::kMinCc},
    {"wmma_smem", launch_wmma_smem<Wmma128x128_unpadded>,
     "128x128x32 tiles in shared memory (16-byte loads), 8 warps of 4x2 fragments",
     kernel_info<Wmma128x128_unpadded>(wmma_smem<Wmma128x128_unpadded, true>),
     min_cc_of<Wmma128x128_unpadded>()},
    {"wmma_smem_skewed", launch_wmma_smem_skewed<Wmma128x128_padded>,
     "+ 16 bytes of padding per shared row: conflict-free fragment loads",
     kernel_info<Wmma128x128_padded>(wmma_smem_skewed<Wmma128x128_padded, true>),
     min_cc_of<Wmma128x128_padded>()},
    {"wmma_cp_async", launch_wmma_cp_async<Wmma128x128_3stage>,
     "+ a 3-stage cp.async ring: copies overlap the tensor-core work",
     kernel_info<Wmma128x128_3stage>(wmma_cp_async<Wmma128x128_3stage, true>),
     min_cc_of<Wmma128x128_3stage>()},
    {"wmma_smem_epilogue", launch_wmma_smem_epilogue<Wmma128x128_3stage>,
     "+ accumulators staged in shared memory, 16-byte coalesced stores of C",
     kernel_info<Wmma128x128_3stage>(wmma_smem_epilogue<Wmma128x128_3stage, true>),
     min_cc_of<Wmma128x128_3stage>()},
    {"wmma_128x256_swizzle", launch_wmma_swizzle<Wmma128x256_3stage>,
     "+ 128x256 tiles, 64x64 per warp (4x4 fragments), blocks in bands of 8 tile rows",
     kernel_info<Wmma128x256_3stage>(wmma_swizzle<Wmma128x256_3stage, true>), min_cc_of<Wmma128x256_3stage>()},
    {"mma_ldmatrix", launch_mma_ldmatrix<Mma128x256_k32_4stage>,
     "mma.sync m16n8k16 from ldmatrix on XOR-swizzled tiles, 128x256x32, 4 stages, fragments double-buffered",
     kernel_info<Mma128x256_k32_4stage>(mma_ldmatrix<Mma128x256_k32_4stage, true>),
     min_cc_of<Mma128x256_k32_4stage>()},
    // The *_best variants run one of several kernels (chosen per shape), so they have no row of
    // their own in the resource table.
    {"wmma_best", launch_hgemm_best, "per shape, the fastest of the candidates the wave model shortlists (best_06.cuh)",
     {}, Fp16Inputs::kMinCc},
};
inline const wb::SgemmVariant kTf32Variants[] = {
    {"tf32_wmma", launch_tf32_wmma<Tf32Wmma128x128_3stage>,
     "TF32 m16n16k8 on FP32 inputs, step 6's kernel: 128x128x16 tiles, 3 stages, staged epilogue",
     wb::Precision::tf32, kernel_info<Tf32Wmma128x128_3stage>(tf32_wmma<Tf32Wmma128x128_3stage, true>),
     min_cc_of<Tf32Wmma128x128_3stage>()},
    {"tf32_mma_sync", launch_tf32_mma_sync<Mma128x128_k32_2stage>,
     "the instruction under WMMA, mma.sync m16n8k8 with its documented layout, 128x128x32, 2 stages",
     wb::Precision::tf32, kernel_info<Mma128x128_k32_2stage>(tf32_mma_sync<Mma128x128_k32_2stage, true>),
     min_cc_of<Mma128x128_k32_2stage>()},
    {"tf32_pipelined", launch_tf32_pipelined<Mma128x128_k32_2stage>,
     "+ step 9's pipeline: the next k-step's fragments loaded while the current ones multiply",
     wb::Precision::tf32, kernel_info<Mma128x128_k32_2stage>(tf32_pipelined<Mma128x128_k32_2stage, true>),
     min_cc_of<Mma128x128_k32_2stage>()},
    {"tf32_swizzled", launch_tf32_swizzled<Mma128x128_k32_3stage_swizzled>,
     "+ unpadded tiles with an XOR swizzle: the copies store whole 128-byte lines, the loads stay conflict-free",
     wb::Precision::tf32,
     kernel_info<Mma128x128_k32_3stage_swizzled>(tf32_swizzled<Mma128x128_k32_3stage_swizzled, true>),
     min_cc_of<Mma128x128_k32_3stage_swizzled>()},
    {"tf32_best", launch_tf32_best, "per shape, the fastest of the TF32 candidates the wave model shortlists (best_06.cuh)",
     wb::Precision::tf32, {}, Tf32Inputs::kMinCc},
};
// clang-format on

}  // namespace ch06
