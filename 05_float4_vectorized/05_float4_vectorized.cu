// 05_float4_vectorized - float4 loads, a transposed A tile, warp tiling, double buffering, cp.async.
// Run: make 05 && ./05_float4_vectorized [--size 4096] [--variant warptile] (--help lists all)
// The tuning sweep over more tile configurations is in lab/ (`make tune-05`).
#include "kernels.cuh"

int main(int argc, char** argv) {
    return wb::chapter_main({"05_float4_vectorized", wb::table(ch05::kSgemmVariants)}, argc, argv);
}
