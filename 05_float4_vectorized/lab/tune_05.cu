// lab/tune_05 - every configuration of lab/configs.cuh on the requested shapes (verified, timed,
// next to cuBLAS, with the common options: --sizes, --csv, --no-check, ...), then the fastest per
// shape. `make tune-05` runs it with TUNE_ARGS; lab/eval_best.py scores `best` on its CSV.

#include "configs.cuh"

int main(int argc, char** argv) {
    const wb::Chapter ch{"05_float4_vectorized", wb::table(ch05::kTuneConfigs)};
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    return wb::run_and_print_fastest(ch, opt, "kBestRates in kernels.cuh holds the rates `best` uses");
}
