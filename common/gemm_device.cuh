// gemm_device.cuh - the few device-side helpers every chapter's kernels share.
#pragma once

#include <cuda_runtime.h>

namespace wb {

// Blocks needed to cover n items with blocks of b: the grid "rounds up", and the kernels then
// guard the extra threads of the last block.
__host__ __device__ constexpr int ceil_div(int n, int b) { return (n + b - 1) / b; }

// The epilogue of every kernel: C = alpha * acc + beta * C. When beta == 0, C is not read at all:
// it may hold garbage or NaN (and 0 * NaN is NaN), and skipping the read saves memory traffic.
__device__ __forceinline__ void store_c(float* c, float acc, float alpha, float beta) {
    *c = (beta == 0.0f) ? alpha * acc : alpha * acc + beta * *c;
}

// Element (row, col) of a row-major matrix with `rows` x `cols` valid entries and leading
// dimension ld, or 0 outside it. Zeros are harmless padding for a tile: they add nothing to a
// dot product, so the tile loop needs no special case at the edges.
__device__ __forceinline__ float load_or_zero(const float* m, int row, int col, int rows, int cols, int ld) {
    return (row < rows && col < cols) ? m[static_cast<size_t>(row) * ld + col] : 0.0f;
}

// cp.async (sm_80 and later) copies global memory into shared memory without passing through
// registers; copies are grouped, and a thread waits until at most N of its groups are still in
// flight. On older GPUs both calls compile to nothing, so a kernel's plain-load fallback path can
// call them unconditionally.
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace wb
