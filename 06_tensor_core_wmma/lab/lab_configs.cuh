// lab_configs.cuh - chapter 06's lab: every tile configuration the tuning sweep compares, and the
// rounding experiment of step 8. Nothing here is part of the ladder; kernels.cuh keeps the ladder
// and best_06.cuh the candidates of `best`. `make tune-06` runs the sweep (lab/tune_06.cu);
// lab/best_06.py turns a sweep into the rates of `best`.
//
// The FP16 rows run step 6's kernel (wmma_swizzle), the FP16 mma.sync rows step 9's (mma_ldmatrix),
// the TF32 WMMA rows step 7's (tf32_wmma), the TF32 mma.sync rows step 8's (tf32_mma_sync) or step
// 10's (tf32_pipelined), each with the configuration of its row.
//
// Row names: h (FP16 WMMA), hm (FP16 mma.sync, step 9), t (TF32 WMMA), m (TF32 mma.sync, step 8) or
// p (TF32 mma.sync pipelined, step 10);
// the block tile; w and the warp tile; k32 where BK is 32 floats (TF32; otherwise 16), k64 where it
// is 64 halves (FP16; otherwise 32); s and the number of stages; g1 where
// the blocks run in plain row-major order (otherwise in bands of kBand tile rows). The sweeps in
// lab/calib use the same names.
#pragma once

#include "../kernels.cuh"

namespace ch06 {

// FP16: BK = 32 halves. (The ladder's configurations are in the step files, best's in best_06.cuh.)
using Wmma128x128_4stage = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 4, 8, 8>;  // 74 KB
using Wmma256x128_3stage = Tiling<Fp16Inputs, 256, 128, 32, 64, 64, 3, 8, 8>;  // 85.5 KB, tall tile
// Step 9 (FP16 mma.sync, swizzled tiles, no padding): the ladder's Mma128x256_k32_4stage, best's
// Mma16_128x256_k64_3stage and Mma16_64x128_4stage (best_06.cuh), and these.
using Mma16_128x256_3stage = Tiling<Fp16MmaInputs, 128, 256, 32, 64, 64, 3, 0, 0>;      // 72 KB
using Mma16_256x128_4stage = Tiling<Fp16MmaInputs, 256, 128, 32, 64, 64, 4, 0, 0>;      // 96 KB, tall tile
using Mma16_128x128_4warps_4stage = Tiling<Fp16MmaInputs, 128, 128, 32, 64, 64, 4, 0, 0>;  // 64 KB
using Mma16_128x256_5stage = Tiling<Fp16MmaInputs, 128, 256, 32, 64, 64, 5, 0, 0>;      // 120 KB: sm_90
using Mma16_128x128_8warps_4stage = Tiling<Fp16MmaInputs, 128, 128, 32, 64, 32, 4, 0, 0>;  // 64 KB
// TF32 WMMA: BK = 16 floats unless named k32.
using Tf32Wmma64x64_3stage = Tiling<Tf32Inputs, 64, 64, 16, 32, 32, 3, 4, 8>;
using Tf32Wmma128x128_4stage = Tiling<Tf32Inputs, 128, 128, 16, 64, 32, 4, 4, 8>;
using Tf32Wmma128x128_4warps_3stage = Tiling<Tf32Inputs, 128, 128, 16, 64, 64, 3, 4, 8>;
using Tf32Wmma128x256_3stage = Tiling<Tf32Inputs, 128, 256, 16, 64, 64, 3, 4, 8>;
using Tf32Wmma256x128_3stage = Tiling<Tf32Inputs, 256, 128, 16, 64, 64, 3, 4, 8>;
using Tf32Wmma128x128_k32_3stage = Tiling<Tf32Inputs, 128, 128, 32, 64, 64, 3, 4, 8>;  // 105 KB: sm_90
using Tf32Wmma128x256_k32_3stage = Tiling<Tf32Inputs, 128, 256, 32, 64, 64, 3, 4, 8>;  // sm_90
// Step 8 (mma.sync).
using Mma128x128_3stage = Tiling<Tf32MmaInputs, 128, 128, 16, 64, 64, 3, 4, 8>;
using Mma128x128_8warps_3stage = Tiling<Tf32MmaInputs, 128, 128, 16, 64, 32, 3, 4, 8>;
using Mma128x128_k32_3stage = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 3, 4, 8>;  // 105 KB: sm_90
using Mma128x128_k32_4stage = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 4, 4, 8>;  // 140 KB: sm_90
using Mma128x256_3stage = Tiling<Tf32MmaInputs, 128, 256, 16, 64, 64, 3, 4, 8>;      // 79.5 KB
using Mma128x256_k32_3stage = Tiling<Tf32MmaInputs, 128, 256, 32, 64, 64, 3, 4, 8>;  // 158 KB: sm_90
using Mma256x128_k32_3stage = Tiling<Tf32MmaInputs, 256, 128, 32, 64, 64, 3, 4, 8>;  // 159 KB: sm_90

// The rounding experiment: step 8 rounding with cvt.rna (ties away from zero, 2 instructions) where
// the ladder uses cvt.rn (ties to even, 1 instruction, sm_90). An input policy, so the kernel is the
// ladder's own.
struct Tf32MmaTiesAway : Tf32MmaInputs {
    __device__ __forceinline__ static unsigned round_loaded(unsigned bits) {
        return __float_as_uint(tf32_round<false>(__uint_as_float(bits)));
    }
};
using Mma128x128_k32_3stage_tiesaway = Tiling<Tf32MmaTiesAway, 128, 128, 32, 64, 64, 3, 4, 8>;
// Rounding by one integer add: half a TF32 unit (2^12 in the 13 dropped bits) added to the bits, the
// tensor core then drops the low 13 bits. Nearest, ties away from zero, on the integer pipe instead
// of the conversion unit; a NaN whose payload lies only in the low 13 bits would become infinity.
struct Tf32MmaHalfUlp : Tf32MmaInputs {
    __device__ __forceinline__ static unsigned round_loaded(unsigned bits) { return bits + 0x1000u; }
};
using Mma128x128_k32_2stage_halfulp = Tiling<Tf32MmaHalfUlp, 128, 128, 32, 64, 64, 2, 4, 8>;
using Mma128x128_k16_4stage = Tiling<Tf32MmaInputs, 128, 128, 16, 64, 64, 4, 4, 8>;  // 75.5 KB

// The launcher of a row: the kernel its input type takes, in bands of GROUP tile rows.
template <class Cfg, int GROUP = kBand>
constexpr auto ring() {
    if constexpr (std::is_same<typename Cfg::Inputs, Fp16Inputs>::value)
        return launch_wmma_swizzle<Cfg, GROUP>;
    else
        return launch_tf32_wmma<Cfg, GROUP>;
}
template <class Cfg>
constexpr auto mma() {
    return launch_tf32_mma_sync<Cfg>;
}
// The resources the harness prints for a row (the 16-byte instantiation).
template <class Cfg>
wb::KernelInfo ring_info() {
    if constexpr (std::is_same<typename Cfg::Inputs, Fp16Inputs>::value)
        return kernel_info<Cfg>(wmma_swizzle<Cfg, true>);
    else
        return kernel_info<Cfg>(tf32_wmma<Cfg, true>);
}
template <class Cfg>
wb::KernelInfo mma_kernel_info() {
    return kernel_info<Cfg>(tf32_mma_sync<Cfg, true>);
}
template <class Cfg>
wb::KernelInfo pipelined_kernel_info() {
    return kernel_info<Cfg>(tf32_pipelined<Cfg, true>);
}
template <class Cfg>
wb::KernelInfo mma16_kernel_info() {
    return kernel_info<Cfg>(mma_ldmatrix<Cfg, true>);
}

// clang-format off
inline const wb::HgemmVariant kHgemmConfigs[] = {
    {"h_64x64_w32x32_s3", ring<Wmma64x64_3stage>(), "4 warps of 2x2 fragments: many blocks for small C",
     ring_info<Wmma64x64_3stage>(), min_cc_of<Wmma64x64_3stage>()},
    {"h_128x128_w64x32_s3", ring<Wmma128x128_3stage>(), "8 warps of 4x2 fragments, 3 stages, 2 blocks/SM",
     ring_info<Wmma128x128_3stage>(), min_cc_of<Wmma128x128_3stage>()},
    {"h_128x128_w64x32_s4", ring<Wmma128x128_4stage>(), "8 warps of 4x2 fragments, 4 stages",
     ring_info<Wmma128x128_4stage>(), min_cc_of<Wmma128x128_4stage>()},
    {"h_128x128_w64x64_s3", ring<Wmma128x128_4warps_3stage>(), "4 warps of 4x4 fragments, 3 stages",
     ring_info<Wmma128x128_4warps_3stage>(), min_cc_of<Wmma128x128_4warps_3stage>()},
    {"h_128x256_w64x64_s3", ring<Wmma128x256_3stage>(), "8 warps of 4x4 fragments, 3 stages",
     ring_info<Wmma128x256_3stage>(), min_cc_of<Wmma128x256_3stage>()},
    {"h_128x256_w64x64_s3_g1", ring<Wmma128x256_3stage, 1>(), "the same in plain row-major block order",
     ring_info<Wmma128x256_3stage>(), min_cc_of<Wmma128x256_3stage>()},
    {"h_256x128_w64x64_s3", ring<Wmma256x128_3stage>(), "8 warps of 4x4 fragments, tall block tile",
     ring_info<Wmma256x128_3stage>(), min_cc_of<Wmma256x128_3stage>()},
    {"hm_128x256_w64x64_s4", launch_mma_ldmatrix<Mma128x256_k32_4stage>, "FP16 mma.sync, 4 stages (step 9)",
     mma16_kernel_info<Mma128x256_k32_4stage>(), min_cc_of<Mma128x256_k32_4stage>()},
    {"hm_128x256_w64x64_s4_g1", launch_mma_ldmatrix<Mma128x256_k32_4stage, 1>, "the same in plain row-major block order",
     mma16_kernel_info<Mma128x256_k32_4stage>(), min_cc_of<Mma128x256_k32_4stage>()},
    {"hm_128x256_w64x64_s3", launch_mma_ldmatrix<Mma16_128x256_3stage>, "FP16 mma.sync, 3 stages",
     mma16_kernel_info<Mma16_128x256_3stage>(), min_cc_of<Mma16_128x256_3stage>()},
    {"hm_256x128_w64x64_s4", launch_mma_ldmatrix<Mma16_256x128_4stage>, "FP16 mma.sync, tall tile, 4 stages",
     mma16_kernel_info<Mma16_256x128_4stage>(), min_cc_of<Mma16_256x128_4stage>()},
    {"hm_128x128_w64x64_s4", launch_mma_ldmatrix<Mma16_128x128_4warps_4stage>, "FP16 mma.sync, 4 warps, 4 stages",
     mma16_kernel_info<Mma16_128x128_4warps_4stage>(), min_cc_of<Mma16_128x128_4warps_4stage>()},
    {"hm_128x256_w64x64_k64_s3", launch_mma_ldmatrix<Mma16_128x256_k64_3stage>, "FP16 mma.sync, BK = 64 halves, 3 stages",
     mma16_kernel_info<Mma16_128x256_k64_3stage>(), min_cc_of<Mma16_128x256_k64_3stage>()},
    {"hm_128x256_w64x64_s5", launch_mma_ldmatrix<Mma16_128x256_5stage>, "FP16 mma.sync, 5 stages",
     mma16_kernel_info<Mma16_128x256_5stage>(), min_cc_of<Mma16_128x256_5stage>()},
    {"hm_128x128_w64x32_s4", launch_mma_ldmatrix<Mma16_128x128_8warps_4stage>, "FP16 mma.sync, 8 warps of 64x32, 4 stages",
     mma16_kernel_info<Mma16_128x128_8warps_4stage>(), min_cc_of<Mma16_128x128_8warps_4stage>()},
    {"hm_64x128_w32x64_s4", launch_mma_ldmatrix<Mma16_64x128_4stage>, "FP16 mma.sync, 4 warps of 32x64: more blocks for small C",
     mma16_kernel_info<Mma16_64x128_4stage>(), min_cc_of<Mma16_64x128_4stage>()},
};
inline const wb::SgemmVariant kTf32Configs[] = {
    {"t_64x64_w32x32_s3", ring<Tf32Wmma64x64_3stage>(), "TF32, 4 warps of 2x2 fragments",
     wb::Precision::tf32, ring_info<Tf32Wmma64x64_3stage>(), min_cc_of<Tf32Wmma64x64_3stage>()},
    {"t_128x128_w64x32_s3", ring<Tf32Wmma128x128_3stage>(), "TF32, 8 warps of 4x2 fragments, 3 stages",
     wb::Precision::tf32, ring_info<Tf32Wmma128x128_3stage>(), min_cc_of<Tf32Wmma128x128_3stage>()},
    {"t_128x128_w64x32_s4", ring<Tf32Wmma128x128_4stage>(), "TF32, 8 warps of 4x2 fragments, 4 stages",
     wb::Precision::tf32, ring_info<Tf32Wmma128x128_4stage>(), min_cc_of<Tf32Wmma128x128_4stage>()},
    {"t_128x128_w64x64_s3", ring<Tf32Wmma128x128_4warps_3stage>(), "TF32, 4 warps of 4x4 fragments",
     wb::Precision::tf32, ring_info<Tf32Wmma128x128_4warps_3stage>(), min_cc_of<Tf32Wmma128x128_4warps_3stage>()},
    {"t_128x256_w64x64_s3", ring<Tf32Wmma128x256_3stage>(), "TF32, 8 warps of 4x4 fragments",
     wb::Precision::tf32, ring_info<Tf32Wmma128x256_3stage>(), min_cc_of<Tf32Wmma128x256_3stage>()},
    {"t_256x128_w64x64_s3", ring<Tf32Wmma256x128_3stage>(), "TF32, 8 warps of 4x4 fragments, tall tile",
     wb::Precision::tf32, ring_info<Tf32Wmma256x128_3stage>(), min_cc_of<Tf32Wmma256x128_3stage>()},
    {"t_128x128_w64x64_k32_s3", ring<Tf32Wmma128x128_k32_3stage>(), "TF32, BK = 32 floats, 4 warps of 4x4 fragments",
     wb::Precision::tf32, ring_info<Tf32Wmma128x128_k32_3stage>(), min_cc_of<Tf32Wmma128x128_k32_3stage>()},
    {"t_128x256_w64x64_k32_s3", ring<Tf32Wmma128x256_k32_3stage>(), "TF32, BK = 32 floats, 8 warps of 4x4 fragments",
     wb::Precision::tf32, ring_info<Tf32Wmma128x256_k32_3stage>(), min_cc_of<Tf32Wmma128x256_k32_3stage>()},
    {"m_64x64_w32x32_s3", mma<Mma64x64_k32_3stage>(), "TF32 mma.sync, BK = 32, 4 warps of 32x32: small problems",
     wb::Precision::tf32, mma_kernel_info<Mma64x64_k32_3stage>(), min_cc_of<Mma64x64_k32_3stage>()},
    {"m_128x128_w64x64_s3", mma<Mma128x128_3stage>(), "TF32 mma.sync, 4 warps of 64x64",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_3stage>(), min_cc_of<Mma128x128_3stage>()},
    {"m_128x128_w64x32_s3", mma<Mma128x128_8warps_3stage>(), "TF32 mma.sync, 8 warps of 64x32",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_8warps_3stage>(), min_cc_of<Mma128x128_8warps_3stage>()},
    {"m_128x128_w64x64_k32_s2", mma<Mma128x128_k32_2stage>(), "TF32 mma.sync, BK = 32, 2 stages (step 8)",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_k32_2stage>(), min_cc_of<Mma128x128_k32_2stage>()},
    {"m_128x128_w64x64_k32_s3", mma<Mma128x128_k32_3stage>(), "TF32 mma.sync, BK = 32, 3 stages",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_k32_3stage>(), min_cc_of<Mma128x128_k32_3stage>()},
    {"m_128x128_w64x64_k32_s4", mma<Mma128x128_k32_4stage>(), "TF32 mma.sync, BK = 32, 4 stages",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_k32_4stage>(), min_cc_of<Mma128x128_k32_4stage>()},
    {"m_128x256_w64x64_s3", mma<Mma128x256_3stage>(), "TF32 mma.sync, 8 warps of 64x64",
     wb::Precision::tf32, mma_kernel_info<Mma128x256_3stage>(), min_cc_of<Mma128x256_3stage>()},
    {"m_128x256_w64x64_k32_s3", mma<Mma128x256_k32_3stage>(), "TF32 mma.sync, BK = 32, 8 warps of 64x64",
     wb::Precision::tf32, mma_kernel_info<Mma128x256_k32_3stage>(), min_cc_of<Mma128x256_k32_3stage>()},
    {"m_256x128_w64x64_k32_s3", mma<Mma256x128_k32_3stage>(), "TF32 mma.sync, BK = 32, tall tile",
     wb::Precision::tf32, mma_kernel_info<Mma256x128_k32_3stage>(), min_cc_of<Mma256x128_k32_3stage>()},
    {"m_128x128_w64x64_k32_s3_rna", mma<Mma128x128_k32_3stage_tiesaway>(), "TF32 mma.sync, BK = 32, ties away (cvt.rna)",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_k32_3stage_tiesaway>(), min_cc_of<Mma128x128_k32_3stage_tiesaway>()},
    {"p_128x128_w64x64_k32_s2", launch_tf32_pipelined<Mma128x128_k32_2stage>, "TF32 pipelined, BK = 32, 2 stages (step 10)",
     wb::Precision::tf32, pipelined_kernel_info<Mma128x128_k32_2stage>(), min_cc_of<Mma128x128_k32_2stage>()},
    {"p_128x128_w64x64_k32_s3", launch_tf32_pipelined<Mma128x128_k32_3stage>, "TF32 pipelined, BK = 32, 3 stages",
     wb::Precision::tf32, pipelined_kernel_info<Mma128x128_k32_3stage>(), min_cc_of<Mma128x128_k32_3stage>()},
    {"p_128x128_w64x64_k32_s4", launch_tf32_pipelined<Mma128x128_k32_4stage>, "TF32 pipelined, BK = 32, 4 stages",
     wb::Precision::tf32, pipelined_kernel_info<Mma128x128_k32_4stage>(), min_cc_of<Mma128x128_k32_4stage>()},
    {"p_128x128_w64x64_s4", launch_tf32_pipelined<Mma128x128_k16_4stage>, "TF32 pipelined, BK = 16, 4 stages",
     wb::Precision::tf32, pipelined_kernel_info<Mma128x128_k16_4stage>(), min_cc_of<Mma128x128_k16_4stage>()},
    {"p_128x256_w64x64_k32_s3", launch_tf32_pipelined<Mma128x256_k32_3stage>, "TF32 pipelined, BK = 32, 8 warps of 64x64",
     wb::Precision::tf32, pipelined_kernel_info<Mma128x256_k32_3stage>(), min_cc_of<Mma128x256_k32_3stage>()},
    {"p_128x128_w64x64_k32_s2_hulp", launch_tf32_pipelined<Mma128x128_k32_2stage_halfulp>, "TF32 pipelined, rounded by an integer add",
     wb::Precision::tf32, pipelined_kernel_info<Mma128x128_k32_2stage_halfulp>(), min_cc_of<Mma128x128_k32_2stage_halfulp>()},
    {"m_128x128_w64x64_k32_s2_hulp", mma<Mma128x128_k32_2stage_halfulp>(), "step 8 rounded by an integer add",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_k32_2stage_halfulp>(), min_cc_of<Mma128x128_k32_2stage_halfulp>()},
};
// clang-format on

}  // namespace ch06
