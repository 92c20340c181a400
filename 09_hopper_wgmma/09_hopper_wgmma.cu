// 09_hopper_wgmma - Hopper tensor cores as cuBLAS drives them: TMA, wgmma, mbarrier rings, warp
// specialization, persistent blocks. FP16 and BF16 inputs with FP32 accumulation, TF32, and FP8 E4M3
// with per-tensor scales; sm_90a only.
// Run: make 09 && ./09_hopper_wgmma [--size 4096] [--variant persistent] (--help lists all)
#include <cstdio>

#include "kernels.cuh"

int main(int argc, char** argv) {
    wb::Chapter ch{"09_hopper_wgmma", ch09::kTf32Variants, ch09::kHgemmVariants, ch09::kBgemmVariants};
    ch.fp8 = ch09::kFp8Variants;
    ch.default_shapes = {{1024, 1024, 1024}, {4096, 4096, 4096}, {8192, 8192, 8192}};
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    // The kernels are built for sm_90a: they run on compute capability 9.0 and on nothing else.
    const wb::DeviceFacts dev = wb::require_device(ch.name);
    if (dev.cc_major != 9 || dev.cc_minor != 0) {
        std::fprintf(stderr,
                     "%s: error: this chapter needs a Hopper GPU (compute capability 9.0: H100, H200, GH200); "
                     "%s is %d.%d. Chapters 02-08 run on it.\n",
                     ch.name.c_str(), dev.name.c_str(), dev.cc_major, dev.cc_minor);
        return wb::kExitNoDevice;
    }
    return wb::run_chapter(ch, opt);
}
