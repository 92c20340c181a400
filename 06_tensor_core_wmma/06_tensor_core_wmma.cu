// 06_tensor_core_wmma - tensor cores through WMMA: FP16 inputs with FP32 accumulation, and TF32.
// Run: make 06 && ./06_tensor_core_wmma [--size 4096] [--variant wmma_best,tf32_best] (--help lists all)
// The tuning sweep and the precision study are lab programs: make tune-06, lab/tune_06 --precision.
#include "kernels.cuh"

int main(int argc, char** argv) {
    wb::Chapter ch{"06_tensor_core_wmma", wb::table(ch06::kTf32Variants), wb::table(ch06::kHgemmVariants)};
    ch.default_shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}};
    return wb::chapter_main(ch, argc, argv);
}
