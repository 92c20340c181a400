// 08_end_to_end - the GEMM inside a whole program: copies, pinned memory, the CPU/GPU crossover,
// streams that overlap copies with GEMMs, CUDA graphs, unified memory, batched small GEMMs.
// Run: make 08 && ./08_end_to_end [--part streams] [--out results/h200/08] (--help lists all)
//
// The six parts run one after another in one process (kernels.cuh lists them, program.cuh runs
// them); --out DIR keeps their CSV files, from which `python3 -m wb e2e` (tools/wb/e2e.py) draws
// the pictures and the notes' tables.
#include <cstdio>

#include "program.cuh"

int main(int argc, char** argv) {
    ch08::Settings settings;
    // clang-format off
    const wb::Chapter chapter{
        ch08::kChapter,
        wb::table(ch08::kSgemmVariants),
        {},
        {},
        {{32, 32, 32}, {64, 64, 64}, {128, 128, 128}, {256, 256, 256}, {512, 512, 512},
         {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
        ch08::extra_options(settings),
    };
    // clang-format on
    const wb::Options opt = wb::parse_or_exit(chapter, argc, argv);
    std::string error;
    if (!ch08::check_settings(settings, error)) {
        std::fprintf(stderr, "%s: error: %s\n", ch08::kChapter, error.c_str());
        return wb::kExitBadInput;
    }
    return ch08::run_program(settings, opt, argc, argv);
}
