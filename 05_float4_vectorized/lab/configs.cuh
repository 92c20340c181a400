// lab/configs.cuh - chapter 05's tuning table: the configurations `make tune-05` measures, to fit
// the rates of `best` (kBestRates in kernels.cuh) and to compare with the ladder. Exploration, not
// part of the lesson: the ladder and the defaults do not depend on this file.
//
// Row names say the loop, the tile and the split, as in the sweeps the notes quote:
//   regs2_BMxBNxBK    register-staged double buffering (step 3a)
//   async3_BMxBNxBK   cp.async ring of 3 stages (step 3b)
//   ..._skS           K split in S slices (step 5), whatever the shape
// Every candidate of `best` has its unsplit row (named by BestCandidate::lab_name), and the split
// candidate its rows for each split in kBestSplits, so that one sweep measures every choice the
// rule can make (lab/eval_best.py scores the rule on it).
#pragma once

#include "../kernels.cuh"

inline const wb::SgemmVariant kTuneConfigs[] = {
    {"regs2_128x128x8", sgemm_float4_launcher<DoubleBuffer128x128k8, Pipeline::prefetch_regs>,
     "register-staged double buffering, 8x8 per thread", wb::Precision::fp32,
     kernel_info<DoubleBuffer128x128k8, Pipeline::prefetch_regs>()},
    {"async3_128x128x8", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async>,
     "cp.async, 3 stages, 8x8 per thread", wb::Precision::fp32, kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"async3_128x128x16", sgemm_float4_launcher<CpAsync128x128k16, Pipeline::cp_async>,
     "cp.async, BK = 16: half the barriers per FFMA", wb::Precision::fp32,
     kernel_info<CpAsync128x128k16, Pipeline::cp_async>()},
    {"async3_128x256x8", sgemm_float4_launcher<CpAsync128x256k8, Pipeline::cp_async>,
     "cp.async, 3 stages, 16x8 per thread", wb::Precision::fp32, kernel_info<CpAsync128x256k8, Pipeline::cp_async>()},
    {"async3_128x64x8", sgemm_float4_launcher<CpAsync128x64k8, Pipeline::cp_async>,
     "cp.async, 4 warps, 8x8 per thread: 2x the blocks of 128x128", wb::Precision::fp32,
     kernel_info<CpAsync128x64k8, Pipeline::cp_async>()},
    {"async3_64x64x8", sgemm_float4_launcher<CpAsync64x64k8, Pipeline::cp_async>,
     "cp.async, 4 warps, 8x4 per thread: 4x the blocks of 128x128", wb::Precision::fp32,
     kernel_info<CpAsync64x64k8, Pipeline::cp_async>()},
    {"async3_128x128x8_sk2", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async, 2>,
     "cp.async, K split in 2 slices", wb::Precision::fp32, kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"async3_128x128x8_sk4", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async, 4>,
     "cp.async, K split in 4 slices", wb::Precision::fp32, kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"async3_128x128x8_sk8", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async, 8>,
     "cp.async, K split in 8 slices", wb::Precision::fp32, kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"async3_128x128x8_sk16", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async, 16>,
     "cp.async, K split in 16 slices", wb::Precision::fp32, kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
};
