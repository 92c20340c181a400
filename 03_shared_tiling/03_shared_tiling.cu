// 03_shared_tiling - tiles of A and B staged in shared memory (16, 32, padding, several rows per
// thread), correct for any shape.
// Run: make 03 && ./03_shared_tiling [--size 4096] [--variant tiled_32] (--help lists all)
#include "kernels.cuh"

int main(int argc, char** argv) {
    return wb::chapter_main({"03_shared_tiling", wb::table(ch03::kSgemmVariants)}, argc, argv);
}
