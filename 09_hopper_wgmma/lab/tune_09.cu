// tune_09 - chapter 09's lab sweep: step 5's kernel (cluster_multicast) in the configurations of
// lab/tune_configs_09.cuh (cluster size, ring stages, band of the tile order), FP16 and BF16, beside
// cuBLAS, each row verified like a ladder row; then the fastest per type and shape.
// Run: make tune-09 (from the top) or, in 09_hopper_wgmma, make tune [TUNE_ARGS="--sizes 4096 --csv FILE"]
//      lab/tune_09 [the chapter's options]
#include <cstdio>

#include "tune_configs_09.cuh"

int main(int argc, char** argv) {
    wb::Chapter ch{"tune_09", {}, ch09::tune_configs<__half>(), ch09::tune_configs<__nv_bfloat16>()};
    ch.default_shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 4096, 1024}};
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    const wb::DeviceFacts dev = wb::require_device(ch.name);
    if (dev.cc_major != 9 || dev.cc_minor != 0) {
        std::fprintf(stderr, "%s: error: needs compute capability 9.0; %s is %d.%d\n", ch.name.c_str(),
                     dev.name.c_str(), dev.cc_major, dev.cc_minor);
        return wb::kExitNoDevice;
    }
    // A row that throws (a cluster of 4 that fits no GPC) is reported FAIL by the harness, the rest go on.
    return wb::run_and_print_fastest(ch, opt, "the ladder's row is step5_c2_s4_b8");
}
