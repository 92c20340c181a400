// 07_cublas_baseline - cuBLAS done right: the row-major trick, SGEMM in three math modes, TF32, FP16
// and BF16 through cublasGemmEx, FP8 E4M3 through cublasLtMatmul, and what a handle and a first call
// cost; then CUTLASS beside it (where CUTLASS was found at build time).
// Run: make 07 && ./07_cublas_baseline [--size 4096] [--costs-only] [--no-costs] (--help lists all)
//
// First the costs (in a fresh process, so "first call" means first), then the size sweep
// 128 ... 8192 of every variant through the common harness, cuBLAS's and CUTLASS's.
#include <cstdio>

#include "cublas_costs.cuh"
#include "kernels.cuh"

int main(int argc, char** argv) {
    ch07::costs::Settings settings;
    const ch07::ChapterTables tables = ch07::chapter_tables();
    // clang-format off
    const wb::Chapter chapter{
        "07_cublas_baseline",
        tables.sgemm,
        tables.hgemm,
        tables.bgemm,
        {{128, 128, 128}, {256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048},
         {4096, 4096, 4096}, {8192, 8192, 8192}},
        ch07::costs::extra_options(settings),
        tables.fp8,
    };
    // clang-format on
    const wb::Options opt = wb::parse_or_exit(chapter, argc, argv);
    std::string error;
    if (!ch07::costs::check_settings(settings, error)) {
        std::fprintf(stderr, "%s: error: %s\n", chapter.name.c_str(), error.c_str());
        return wb::kExitBadInput;
    }

    if (!settings.no_costs) {
        // The process start is measured before any other CUDA call.
        const ch07::costs::ProcessStart start = ch07::costs::measure_process_start();
        const wb::DeviceFacts dev = wb::require_device(chapter.name);  // exits 3 without a GPU
        try {
            std::printf("%s", ch07::costs::format(start, ch07::costs::measure(dev, opt.reps)).c_str());
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: error while measuring the costs: %s\n", chapter.name.c_str(), e.what());
            return wb::kExitVerifyFailed;
        }
        if (settings.costs_only) return wb::kExitOk;
    }
    if (!tables.not_built.empty()) std::printf("%s\n\n", tables.not_built.c_str());
    return wb::run_chapter(chapter, opt);
}
