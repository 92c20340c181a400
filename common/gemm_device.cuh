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

}  // namespace wb
