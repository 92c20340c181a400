// lab/configs.cuh - chapter 05's tuning table: the configurations `make tune-05` measures, to fit
// the rates of `best` (kBestRates in kernels.cuh) and to compare with the ladder. Exploration, not
// part of the lesson: the ladder and the defaults do not depend on this file.
//
// Row names say the loop, the tile and the split, as in the sweeps the notes quote:
//   regs2_BMxBNxBK    register-staged double buffering (step 3a)
//   async3_BMxBNxBK   cp.async ring of 3 stages (step 3b)
//   ..._skS           K split in S slices (step 5), whatever the shape
// Every candidate of `best` has its unsplit row (named by BestCandidate::lab_name), and each split
// candidate its rows for every split from 2 to kMaxSplits, so that one sweep measures every choice
// the rule can make (lab/eval_best.py scores the rule on it).
#pragma once

#include "../kernels.cuh"

namespace ch05 {

// A split candidate of best with K in a fixed number of slices, whatever the shape.
template <class Cfg, int SPLITS>
wb::SgemmVariant split_row(const char* name) {
    return {name, sgemm_float4_launcher<Cfg, Pipeline::cp_async, SPLITS>,
            "cp.async, K split in a fixed number of slices", wb::Precision::fp32,
            kernel_info<Cfg, Pipeline::cp_async>()};
}

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
    split_row<CpAsync128x128k8, 2>("async3_128x128x8_sk2"),
    split_row<CpAsync128x128k8, 3>("async3_128x128x8_sk3"),
    split_row<CpAsync128x128k8, 4>("async3_128x128x8_sk4"),
    split_row<CpAsync128x128k8, 5>("async3_128x128x8_sk5"),
    split_row<CpAsync128x128k8, 6>("async3_128x128x8_sk6"),
    split_row<CpAsync128x128k8, 7>("async3_128x128x8_sk7"),
    split_row<CpAsync128x128k8, 8>("async3_128x128x8_sk8"),
    split_row<CpAsync128x128k8, 9>("async3_128x128x8_sk9"),
    split_row<CpAsync128x128k8, 10>("async3_128x128x8_sk10"),
    split_row<CpAsync128x128k8, 11>("async3_128x128x8_sk11"),
    split_row<CpAsync128x128k8, 12>("async3_128x128x8_sk12"),
    split_row<CpAsync128x128k8, 13>("async3_128x128x8_sk13"),
    split_row<CpAsync128x128k8, 14>("async3_128x128x8_sk14"),
    split_row<CpAsync128x128k8, 15>("async3_128x128x8_sk15"),
    split_row<CpAsync128x128k8, 16>("async3_128x128x8_sk16"),
    split_row<CpAsync64x64k8, 2>("async3_64x64x8_sk2"),
    split_row<CpAsync64x64k8, 3>("async3_64x64x8_sk3"),
    split_row<CpAsync64x64k8, 4>("async3_64x64x8_sk4"),
    split_row<CpAsync64x64k8, 5>("async3_64x64x8_sk5"),
    split_row<CpAsync64x64k8, 6>("async3_64x64x8_sk6"),
    split_row<CpAsync64x64k8, 7>("async3_64x64x8_sk7"),
    split_row<CpAsync64x64k8, 8>("async3_64x64x8_sk8"),
    split_row<CpAsync64x64k8, 9>("async3_64x64x8_sk9"),
    split_row<CpAsync64x64k8, 10>("async3_64x64x8_sk10"),
    split_row<CpAsync64x64k8, 11>("async3_64x64x8_sk11"),
    split_row<CpAsync64x64k8, 12>("async3_64x64x8_sk12"),
    split_row<CpAsync64x64k8, 13>("async3_64x64x8_sk13"),
    split_row<CpAsync64x64k8, 14>("async3_64x64x8_sk14"),
    split_row<CpAsync64x64k8, 15>("async3_64x64x8_sk15"),
    split_row<CpAsync64x64k8, 16>("async3_64x64x8_sk16"),
};

}  // namespace ch05
