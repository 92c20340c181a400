// gemm_tiles.cuh - the machinery every tiled GEMM kernel of the workbook shares (chapters 05, 06
// and later): what a launch passes to the kernel, which tile of C a block computes, how a tile is
// cut into copies, the cp.async copies, the float4 epilogue, the shared-memory opt-in, and the
// time model behind each chapter's `best`.
//
// What makes one chapter's kernel different from another (the main loop, the tensor-core work,
// the tile configuration) stays in the chapter's own files: a student sees each step's idea there.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_check.cuh"
#include "gemm_device.cuh"

namespace wb {

// ---- What a launch passes to a tiled kernel ----------------------------------------------------
// One GEMM, row-major and packed (leading dimensions K, N, N): C = alpha * A * B + beta * C.
// T is the element type of A and B (float, or __half for FP16 inputs); C is always float.
// A chapter that needs more (split-K slices, WMMA's alignment decisions) derives from it.
template <class T>
struct GemmArgs {
    int M, N, K;
    float alpha, beta;
    const T* A;
    const T* B;
    float* C;
    int group_rows;  // block order: bands of this many tile rows (1: plain row-major order)
};

// ---- Which tile of C a block computes ----------------------------------------------------------
// Blocks start roughly in the order of their linear index (x fastest). In plain row-major order
// the blocks running at one time share a few row panels of A but touch every column panel of B,
// and on a large problem B does not fit in L2. Walking the tiles in bands of `group_rows` tile rows,
// down a band's column before moving right, keeps the band's panels of A and a few panels of B in
// L2 while they are reused. group_rows = 1 is plain row-major order.
struct TileIndex {
    int m, n;  // tile row and tile column
};

__host__ __device__ constexpr TileIndex tile_of_block(int linear, int tiles_m, int tiles_n, int group_rows) {
    const int per_band = group_rows * tiles_n;
    const int first_row = linear / per_band * group_rows;
    const int rows_here =
        tiles_m - first_row < group_rows ? tiles_m - first_row : group_rows;  // the last band may be short
    const int in_band = linear % per_band;
    return {first_row + in_band % rows_here, in_band / rows_here};
}

// This block's tile, for a grid of ceil(N / BN) x ceil(M / BM) blocks.
__device__ __forceinline__ TileIndex this_block_tile(int group_rows) {
    return tile_of_block(blockIdx.y * gridDim.x + blockIdx.x, gridDim.y, gridDim.x, group_rows);
}

// ---- Cutting a tile into copies ------------------------------------------------------------------
// THREADS threads move a ROWS x COLS tile in chunks of CHUNK consecutive elements of one row (a
// float4, 8 halves, or a single element). Consecutive threads take consecutive chunks of a row, so
// a warp's global reads are coalesced; a thread's chunks lie ROW_STEP rows apart in one column, so
// its column, and the bounds check on it, stay the same for all its chunks.
template <int ROWS, int COLS, int CHUNK, int THREADS>
struct TileChunks {
    static constexpr int PER_ROW = COLS / CHUNK;           // chunks in one row of the tile
    static constexpr int ROW_STEP = THREADS / PER_ROW;     // rows between two chunks of one thread
    static constexpr int PER_THREAD = ROWS / ROW_STEP;     // chunks each thread moves
    static_assert(COLS % CHUNK == 0, "a tile row must be a whole number of chunks");
    static_assert(THREADS % PER_ROW == 0,
                  "the threads must cover whole tile rows, so that every thread keeps one column");
    static_assert(ROWS % ROW_STEP == 0, "every thread must move the same number of chunks");
    __host__ __device__ static constexpr int row(int tid, int i) { return tid / PER_ROW + i * ROW_STEP; }
    __host__ __device__ static constexpr int col(int tid) { return tid % PER_ROW * CHUNK; }
};

// ---- Pipelines ---------------------------------------------------------------------------------
// The three ways the chapters feed shared memory, in the order they are taught.
enum class Pipeline {
    single_buffer,  // load a tile, barrier, compute, barrier: the SM waits for every load
    prefetch_regs,  // two buffers; the next tile waits in registers while this one is multiplied
    cp_async,       // a ring of STAGES buffers filled by cp.async, STAGES - 1 tiles ahead
};

// ---- cp.async: global -> shared without registers ------------------------------------------------
// The copy runs while the thread goes on. With a source size of 0 nothing is read (the address is
// not touched) and the destination is filled with zeros: a chunk outside the matrix costs no branch.
// Before sm_80 there is no cp.async: the same call is an ordinary load and store, which the main
// loop's barriers keep correct, only without the overlap (wb::cp_async_commit/wait are no-ops).
// 16 bytes: dst and src 16-byte aligned. .cg caches in L2 only: each block reads a tile once.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst_shared),
                 "l"(__cvta_generic_to_global(src)), "r"(inside ? 16 : 0)
                 : "memory");
#else
    *static_cast<uint4*>(dst) = inside ? *static_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
#endif
}

// 4 bytes (one float): below 16 bytes only the .ca form exists.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, bool inside) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned dst_shared = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst_shared),
                 "l"(__cvta_generic_to_global(src)), "r"(inside ? 4 : 0)
                 : "memory");
#else
    *static_cast<unsigned*>(dst) = inside ? *static_cast<const unsigned*>(src) : 0u;
#endif
}

// ---- The float4 epilogue -------------------------------------------------------------------------
// Four consecutive entries of C: out = alpha * acc + beta * out, one 16-byte store (STG.128).
// `out` must be 16-byte aligned and all four columns inside C. With beta == 0, C is not read (it
// may hold NaN, and 0 * NaN is NaN), exactly as wb::store_c.
__device__ __forceinline__ void store_c4(float* out, float4 acc, float alpha, float beta) {
    float4 v = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.0f) {
        const float4 old = *reinterpret_cast<const float4*>(out);
        v.x += beta * old.x;
        v.y += beta * old.y;
        v.z += beta * old.z;
        v.w += beta * old.w;
    }
    *reinterpret_cast<float4*>(out) = v;
}

// ---- Launching a kernel with dynamic shared memory -----------------------------------------------
// Above 48 KB of dynamic shared memory a kernel must opt in, once per kernel; the kernel is a
// template argument so that every instantiation gets its own `raised` flag. (Once per process:
// the workbook's programs use one GPU.)
template <auto KERNEL, int THREADS, int SMEM_BYTES, class Args>
void launch_tiled(const Args& args, dim3 grid, cudaStream_t stream) {
    if constexpr (SMEM_BYTES > 48 * 1024) {
        static const bool raised = [] {
            WB_CUDA_CHECK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES));
            return true;
        }();
        (void)raised;
    }
    KERNEL<<<grid, THREADS, SMEM_BYTES, stream>>>(args);
    WB_LAUNCH_CHECK();
}

// ---- The time model behind `best`: tiles per SM ----------------------------------------------------
// A grid of T equal tiles on S SMs does not take T / S tile-times: the blocks go out in waves,
// and the SM that gets the most tiles, ceil(T / S), decides when the kernel ends. With 132 SMs,
// 133 tiles take as long as 264: the last "wave" of one tile leaves 131 SMs idle. So a smaller
// tile, or a K split in slices (more, shorter tiles), can finish first although each of its tiles
// runs less efficiently. The estimate for one configuration:
//
//   time ~ ceil(tiles * splits / SMs) * (BM * BN * K / splits) / rate
//
// where `rate` is the configuration's measured throughput per SM at full load (any unit, the same
// for every configuration compared). Blocks resident together on one SM share it, so the count
// that matters is tiles per SM, not tiles per resident block.
inline double busiest_sm_time(int M, int N, int K, int bm, int bn, int splits, int sms, double rate) {
    const long long tiles = (long long)ceil_div(M, bm) * ceil_div(N, bn) * splits;
    const long long per_sm = (tiles + sms - 1) / sms;
    return double(per_sm) * bm * bn * ceil_div(K, splits) / rate;
}

}  // namespace wb
