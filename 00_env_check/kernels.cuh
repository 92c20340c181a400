// kernels.cuh - chapter 00: the two kernels that measure what this GPU really does.
//   copy_grid_stride  reads and writes every byte of a large buffer once: the memory ceiling.
//   fma_chains        does nothing but FP32 fused multiply-adds: the compute ceiling.
// Every GEMM kernel of the later chapters is limited by one of the two (README.md explains both).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "cuda_check.cuh"
#include "device.cuh"        // wb::current_device
#include "gemm_harness.cuh"  // wb::DeviceBuffer
#include "timer.cuh"

namespace ch00 {

// 1 GB/s = 10^9 bytes per second and 1 GFLOP/s = 10^9 FLOP per second, as in every data sheet.
constexpr double per_second_1e9(double amount, double ms) { return amount / (ms * 1e6); }

// Blocks of `kernel` resident on the whole GPU at once: one "wave".
template <class Kernel>
int resident_blocks(Kernel* kernel, int threads_per_block) {
    int per_sm = 0;
    WB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block, 0));
    return std::max(1, wb::current_device().sms * per_sm);
}

// ---- memory bandwidth: a copy ------------------------------------------------------------------

constexpr int kCopyThreads = 256;
constexpr int kCopyUnroll = 8;  // loads each thread has in flight before its first store
// Well beyond the L2 cache, so every byte comes from and goes to DRAM; --quick is for tests and tools.
constexpr size_t kCopyBufferBytes = size_t(1) << 30, kCopyBufferBytesQuick = size_t(128) << 20;
constexpr size_t kCopyL2Multiple = 4;  // and never less than 4 x the L2 size

// Each byte is read once and written once (whole 32-byte sectors are written without a read).
constexpr double copy_bytes_moved(double buffer_bytes) { return 2.0 * buffer_bytes; }

// Bytes per buffer: the target (at least 4 x L2), at most a quarter of the free memory (source and
// destination then take half), in whole 256-byte blocks.
inline size_t choose_copy_buffer_bytes(bool quick, size_t free_bytes, size_t l2_bytes) {
    const size_t want =
        std::max(quick ? kCopyBufferBytesQuick : kCopyBufferBytes, kCopyL2Multiple * l2_bytes);
    return std::min(want, free_bytes / 4) / 256 * 256;
}

// A fixed grid walks the whole buffer ("grid-stride"). Per trip a block moves UNROLL * blockDim.x
// consecutive elements, thread t taking t, t + blockDim.x, ...: each load is coalesced across the
// warp, and all UNROLL loads are issued before the first store, so UNROLL requests are in flight
// per thread (Little's law: bytes in flight = bandwidth x latency).
template <class T, int UNROLL>
__global__ void __launch_bounds__(kCopyThreads)
    copy_grid_stride(const T* __restrict__ in, T* __restrict__ out, size_t count) {
    const size_t trip = size_t(UNROLL) * blockDim.x;
    for (size_t base = size_t(blockIdx.x) * trip; base < count; base += size_t(gridDim.x) * trip) {
        T v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t i = base + size_t(u) * blockDim.x + threadIdx.x;
            if (i < count) v[u] = __ldcs(&in[i]);  // "cache streaming": each byte is used once
        }
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) {
            const size_t i = base + size_t(u) * blockDim.x + threadIdx.x;
            if (i < count) __stcs(&out[i], v[u]);
        }
    }
}

inline int copy_resident_blocks() { return resident_blocks(copy_grid_stride<float4, kCopyUnroll>, kCopyThreads); }

// Copies `count` floats with at most `max_blocks` blocks (the timed runs pass copy_resident_blocks(),
// computed once, so no occupancy query sits inside the timed launch). 16-byte float4 accesses need
// 16-byte aligned pointers and a count that divides by 4; anything else takes the float kernel.
inline void launch_copy(const float* in, float* out, size_t count, int max_blocks, cudaStream_t stream) {
    if (count == 0) return;
    const bool vector =
        (reinterpret_cast<uintptr_t>(in) | reinterpret_cast<uintptr_t>(out)) % 16 == 0 && count % 4 == 0;
    const size_t elements = vector ? count / 4 : count, trip = size_t(kCopyUnroll) * kCopyThreads;
    const int blocks = int(std::min<size_t>(size_t(std::max(max_blocks, 1)), (elements + trip - 1) / trip));
    if (vector)
        copy_grid_stride<float4, kCopyUnroll><<<blocks, kCopyThreads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), elements);
    else
        copy_grid_stride<float, kCopyUnroll><<<blocks, kCopyThreads, 0, stream>>>(in, out, count);
    WB_LAUNCH_CHECK();
}

// ---- FP32 throughput: chains of FMAs -----------------------------------------------------------

constexpr int kFmaThreads = 256;
// An FMA's result is ready about 4 cycles after it issues: independent chains in every thread give
// a scheduler FMAs to issue from the same warp while earlier results are still in the pipeline.
constexpr int kFmaChains = 8;    // independent chains per thread (registers x[0..7])
constexpr int kFmaIters = 1024;  // FMAs in each chain
constexpr int kFmaUnroll = 32;   // not all 8192 FMAs: 128 KiB of code would miss the instruction cache
static_assert(kFmaIters % kFmaUnroll == 0, "the loop is unrolled by kFmaUnroll: it must divide kFmaIters");
constexpr int kFmaWaves = 64, kFmaWavesQuick = 8;  // full waves per launch: milliseconds of work
// x <- x * a + b with 0 < a < 1 pulls every chain towards b / (1 - a) = 1: never overflow, never denormal.
constexpr float kFmaA = 0.9999f, kFmaB = 0.0001f;

// FLOP per launch: an FMA is 2 FLOP (the 7 additions that sum the chains, 0.1%, are not counted).
constexpr double fma_flops(double threads) { return 2.0 * threads * kFmaChains * kFmaIters; }

// k / 1024 for a small integer k: exact in FP32, so the CPU can repeat every chain bit for bit.
__host__ __device__ inline float fma_start_value(unsigned thread, int chain) {
    return float((thread * kFmaChains + unsigned(chain)) & 1023u) * (1.0f / 1024.0f);
}

// A thread stores the sum of its chains only when it is > store_above: the timed runs pass +infinity,
// so nothing is written, but the compiler cannot know that and must do every FMA.
template <int CHAINS, int ITERS>
__global__ void __launch_bounds__(kFmaThreads) fma_chains(float a, float b, float store_above, float* out) {
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    float x[CHAINS];  // registers: the chain loops are unrolled, so every index is a constant
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = fma_start_value(thread, c);
#pragma unroll kFmaUnroll
    for (int i = 0; i < ITERS; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], a, b);
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    if (sum > store_above) out[thread] = sum;
}

inline int fma_resident_blocks() { return resident_blocks(fma_chains<kFmaChains, kFmaIters>, kFmaThreads); }

// `out` holds blocks * kFmaThreads floats.
inline void launch_fma(int blocks, float a, float b, float store_above, float* out, cudaStream_t stream) {
    fma_chains<kFmaChains, kFmaIters><<<blocks, kFmaThreads, 0, stream>>>(a, b, store_above, out);
    WB_LAUNCH_CHECK();
}

// ---- the measurements --------------------------------------------------------------------------

// The numbers are NaN until measured, so a report cannot mistake "did not run" for 0.
struct CopyMeasurement {
    double bytes_moved = NAN;                   // per copy: read + written
    double kernel_gbs = NAN, memcpy_gbs = NAN;  // copy_grid_stride, cudaMemcpyAsync device to device
};

inline CopyMeasurement measure_copy(size_t buffer_bytes, int warmup, int reps, cudaStream_t stream) {
    const size_t count = buffer_bytes / sizeof(float), bytes = count * sizeof(float);
    CopyMeasurement m;
    m.bytes_moved = copy_bytes_moved(double(bytes));
    wb::DeviceBuffer<float> src(count), dst(count);
    WB_CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5A, bytes, stream));  // defined memory to read
    const int blocks = copy_resident_blocks();
    auto kernel = [&](cudaStream_t s) { launch_copy(src.get(), dst.get(), count, blocks, s); };
    auto memcpy_d2d = [&](cudaStream_t s) {
        WB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, s));
    };
    m.kernel_gbs = per_second_1e9(m.bytes_moved, wb::time_launches(kernel, warmup, reps, stream).ms_median);
    m.memcpy_gbs = per_second_1e9(m.bytes_moved, wb::time_launches(memcpy_d2d, warmup, reps, stream).ms_median);
    return m;
}

// GFLOP/s of `waves` full waves of fma_chains.
inline double measure_fma_gflops(int waves, int warmup, int reps, cudaStream_t stream) {
    const int blocks = fma_resident_blocks() * waves;
    wb::DeviceBuffer<float> out(size_t(blocks) * kFmaThreads);
    const float never = std::numeric_limits<float>::infinity();
    auto launch = [&](cudaStream_t s) { launch_fma(blocks, kFmaA, kFmaB, never, out.get(), s); };
    const double ms = wb::time_launches(launch, warmup, reps, stream).ms_median;
    return per_second_1e9(fma_flops(double(blocks) * kFmaThreads), ms);
}

}  // namespace ch00
