// lab/tune_05 - every configuration of lab/configs.cuh on the requested shapes (verified, timed,
// next to cuBLAS, with the common options: --sizes, --csv, --no-check, ...), then the fastest per
// shape. `make tune-05` runs it with TUNE_ARGS; lab/eval_best.py scores `best` on its CSV.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "configs.cuh"

int main(int argc, char** argv) {
    const wb::Chapter ch{"05_float4_vectorized", wb::table(kTuneConfigs)};
    const wb::Options opt = wb::parse_or_exit(ch, argc, argv);
    std::vector<wb::ResultRow> rows;
    const int status = wb::run_chapter(ch, opt, &rows);
    std::map<std::string, const wb::ResultRow*> fastest;  // shape -> fastest verified configuration
    for (const wb::ResultRow& r : rows) {
        if (r.variant.rfind("cublas", 0) == 0 || r.ms_median <= 0 || r.status == "FAIL") continue;
        const wb::ResultRow*& f = fastest[wb::to_string(r.shape)];
        if (!f || r.ms_median < f->ms_median) f = &r;
    }
    std::printf("\nfastest configuration per shape (kBestRates in kernels.cuh holds the rates `best` uses):\n");
    for (const auto& [shape, r] : fastest)
        std::printf("  %-16s %-26s %9.1f GFLOP/s  %5.1f%% of cuBLAS\n", shape.c_str(), r->variant.c_str(),
                    r->gflops, r->pct_baseline);
    return status;
}
