// 02_naive_kernel - one thread per element of C, with a coalesced and an uncoalesced mapping.
// Run: make 02 && ./02_naive_kernel [--size 4096] [--variant coalesced_32x32] (--help lists all)
#include "kernels.cuh"

int main(int argc, char** argv) {
    return wb::chapter_main({"02_naive_kernel", wb::table(ch02::kSgemmVariants)}, argc, argv);
}
