// 05_float4_vectorized - float4 loads, a transposed A tile, warp tiling, double buffering, cp.async.
// Run: make 05 && ./05_float4_vectorized [--size 4096] [--variant warptile] (--help lists all)
//      ./05_float4_vectorized --tune --sizes 2048,4096   every tile configuration, best per shape
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "kernels.cuh"

int main(int argc, char** argv) {
    // --tune swaps the ladder for the table of configurations. It must be known before parsing,
    // because --variant names are checked against the table that will run.
    const bool tune =
        std::any_of(argv + 1, argv + argc, [](const char* a) { return std::string(a) == "--tune"; });
    bool tune_flag = false;
    wb::Chapter ch{"05_float4_vectorized", tune ? wb::table(kTuneConfigs) : wb::table(kSgemmVariants)};
    ch.extras = {{"tune", "run every compiled-in tile configuration, print the fastest per shape", nullptr,
                  &tune_flag}};
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    if (!tune) return wb::run_chapter(ch, opt);

    std::vector<wb::ResultRow> rows;
    const int status = wb::run_chapter(ch, opt, &rows);
    std::map<std::string, const wb::ResultRow*> best;  // shape -> fastest verified configuration
    for (const wb::ResultRow& r : rows) {
        if (r.variant.rfind("cublas", 0) == 0 || r.ms_median <= 0 || r.status == "FAIL") continue;
        const wb::ResultRow*& b = best[wb::to_string(r.shape)];
        if (!b || r.ms_median < b->ms_median) b = &r;
    }
    std::printf("\nfastest configuration per shape (put its name into kDefaultChoice in kernels.cuh):\n");
    for (const auto& [shape, r] : best)
        std::printf("  %-16s %-26s %9.1f GFLOP/s  %5.1f%% of cuBLAS\n", shape.c_str(), r->variant.c_str(),
                    r->gflops, r->pct_baseline);
    return status;
}
