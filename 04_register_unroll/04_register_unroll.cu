// 04_register_unroll - thread tiling in registers: 1D (a column of results per thread), 2D (a
// tile of results per thread), and a thread tile too big for the registers.
// Run: make 04 && ./04_register_unroll [--size 4096] [--variant 2d_128x128x8_8x8] (--help lists all)
#include "kernels.cuh"

int main(int argc, char** argv) {
    return wb::chapter_main({"04_register_unroll", wb::table(ch04::kSgemmVariants)}, argc, argv);
}
