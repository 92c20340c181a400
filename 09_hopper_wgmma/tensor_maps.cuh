// tensor_maps.cuh - the host side of TMA: describing A and B to the copy unit, and the one shape
// rule TMA imposes (row pitches and the base address must be multiples of 16 bytes).
//
// A CUtensorMap is made by the driver function cuTensorMapEncodeTiled. The workbook links only the
// runtime (libcudart), so the function is looked up through cudaGetDriverEntryPointByVersion
// (cudaGetDriverEntryPoint before CUDA 12.5) instead of linking libcuda: the program then still starts (and says what is missing) on a
// machine without a GPU driver.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "../common/cuda_check.cuh"
#include "../common/device.cuh"
#include "../common/gemm_device.cuh"

namespace ch09 {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

inline EncodeTiledFn encode_tiled() {
    static const EncodeTiledFn fn = [] {
        void* f = nullptr;
        cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
        // 12000: the function as it has existed since CUDA 12.0.
        WB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
#else
        // Runtimes before 12.5 have no ...ByVersion; this older lookup (removed in CUDA 13) returns
        // the driver's version of the function, which has had one signature since CUDA 12.0.
        WB_CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &f, cudaEnableDefault, &found));
#endif
        if (found != cudaDriverEntryPointSuccess || f == nullptr)
            throw std::runtime_error("the driver has no cuTensorMapEncodeTiled (a CUDA 12 driver or newer is needed)");
        return reinterpret_cast<EncodeTiledFn>(f);
    }();
    return fn;
}

template <class T>
constexpr CUtensorMapDataType tma_type() {
    if constexpr (std::is_same_v<T, __half>) return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    else if constexpr (std::is_same_v<T, __nv_bfloat16>) return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    // TMA has no FP8 type: it only moves bytes, so 1-byte elements are described as UINT8 (the
    // 128-byte swizzle then holds 128 of them per row).
    else if constexpr (sizeof(T) == 1) return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    else return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
}

// TMA reads a matrix whose base address and row pitch (in bytes) are multiples of 16.
template <class T>
bool tma_can_read(const T* base, size_t pitch_elems) {
    return reinterpret_cast<uintptr_t>(base) % 16 == 0 && (pitch_elems * sizeof(T)) % 16 == 0;
}

// The pitch (in elements) a padded copy of a row of `cols` elements gets: the next multiple of 16 bytes.
template <class T>
constexpr size_t padded_pitch(size_t cols) {
    constexpr size_t per16 = 16 / sizeof(T);
    return (cols + per16 - 1) / per16 * per16;
}

// A row-major rows x cols matrix with `pitch` elements per row, read in boxes of box_rows x
// box_cols with the 128-byte swizzle (box_cols * sizeof(T) must be 128). Elements outside
// rows x cols come back as zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE means "fill with zero").
template <class T>
CUtensorMap make_tile_map(const T* base, uint64_t rows, uint64_t cols, uint64_t pitch, uint32_t box_rows, uint32_t box_cols) {
    CUtensorMap map;
    const cuuint64_t dims[2] = {cols, rows};  // innermost (contiguous) dimension first
    const cuuint64_t strides[1] = {pitch * sizeof(T)};  // bytes from one row to the next
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t element_strides[2] = {1, 1};
    const CUresult r = encode_tiled()(&map, tma_type<T>(), 2, const_cast<T*>(base), dims, strides, box, element_strides,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for a " +
                                 std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    return map;
}

// ---- The padded copy: shapes TMA cannot describe ---------------------------------------------------
// An FP16/BF16 A whose K is not a multiple of 8 has rows that are not a multiple of 16 bytes (B
// likewise with N; FP8: K not a multiple of 16), and a pointer may sit off a 16-byte boundary. Such a matrix is copied into a
// buffer whose pitch is
// rounded up to 16 bytes; only the first `cols` entries of each row are written, because the
// tensor map still says the matrix is `cols` wide and TMA fills the rest of a box with zeros.
// The copy runs inside the timed call: its cost is part of that shape's result.
template <class T>
__global__ void copy_to_pitch(const T* __restrict__ src, size_t rows, size_t cols, T* __restrict__ dst, size_t pitch) {
    const size_t total = rows * cols;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x)
        dst[i / cols * pitch + i % cols] = src[i];
}

// One device buffer per process for the padded copies, grown when a larger one is needed.
struct PaddedCopies;  // the tag of this buffer
inline void* pad_workspace(size_t bytes) { return wb::scratch_buffer<PaddedCopies>(bytes); }

// A (rows x cols, packed) as TMA can read it: itself, or a padded copy in `scratch`.
template <class T>
struct TmaOperand {
    const T* base;
    size_t pitch;
};

template <class T>
TmaOperand<T> tma_operand(const T* m, size_t rows, size_t cols, T* scratch, cudaStream_t stream) {
    if (tma_can_read(m, cols)) return {m, cols};
    const size_t pitch = padded_pitch<T>(cols);
    const size_t total = rows * cols;
    const int blocks = int(total / 256 + 1 < 4096 ? total / 256 + 1 : 4096);
    copy_to_pitch<<<blocks, 256, 0, stream>>>(m, rows, cols, scratch, pitch);
    WB_LAUNCH_CHECK();
    return {scratch, pitch};
}

// ---- The transposed copy (TF32) -----------------------------------------------------------------------
// B (rows x cols, packed) -> B^T (cols x rows) with `pitch` elements per row. Through a 32 x 33
// shared tile so that both the reads and the writes walk along rows (the extra column keeps the
// column reads of the tile off a single bank).
template <class T>
__global__ void transpose_to_pitch(const T* __restrict__ src, int rows, int cols, T* __restrict__ dst, size_t pitch) {
    __shared__ T tile[32][33];
    const int r0 = blockIdx.y * 32, c0 = blockIdx.x * 32;
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        const int r = r0 + i, c = c0 + threadIdx.x;
        if (r < rows && c < cols) tile[i][threadIdx.x] = src[size_t(r) * cols + c];
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += blockDim.y) {
        const int c = c0 + i, r = r0 + threadIdx.x;  // row c of the transpose, column r
        if (c < cols && r < rows) dst[size_t(c) * pitch + r] = tile[threadIdx.x][i];
    }
}

template <class T>
TmaOperand<T> transposed_operand(const T* m, int rows, int cols, T* scratch, cudaStream_t stream) {
    const size_t pitch = padded_pitch<T>(size_t(rows));
    const dim3 grid(wb::ceil_div(cols, 32), wb::ceil_div(rows, 32));
    transpose_to_pitch<<<grid, dim3(32, 8), 0, stream>>>(m, rows, cols, scratch, pitch);
    WB_LAUNCH_CHECK();
    return {scratch, pitch};
}

}  // namespace ch09
