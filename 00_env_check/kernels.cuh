// kernels.cuh - chapter 00: two kernels that measure what this GPU really does, and their timing.
//
//   copy_grid_stride  reads and writes every byte of a large buffer once: the memory ceiling.
//   fma_chains        does nothing but FP32 fused multiply-adds: the compute ceiling.
//
// Every GEMM kernel of the later chapters is limited by one of these two. Early versions wait on
// memory (they reload the same values again and again); tiled versions reuse each loaded value
// many times, until the FMA units are the limit. "% of peak" in every chapter compares against
// the theoretical FMA rate; this chapter shows how close a kernel can get at best.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "cuda_check.cuh"
#include "gemm_harness.cuh"  // wb::DeviceBuffer
#include "timer.cuh"

namespace ch00 {

// Rates: 1 GB/s = 10^9 bytes per second and 1 GFLOP/s = 10^9 FLOP per second, as in every data
// sheet. A time in milliseconds is 10^-3 s, hence the 10^6.
constexpr double per_second_1e9(double amount, double ms) { return amount / (ms * 1e6); }

// ---- memory bandwidth: a copy ------------------------------------------------------------------

constexpr int kCopyThreads = 256;  // threads per block
constexpr int kCopyUnroll = 8;     // elements each thread loads before it stores any of them

// Buffer sizes: well beyond the L2 cache (tens of MiB on current GPUs; 00 prints yours), so every
// byte really comes from and goes to DRAM. --quick is for tests, sanitizers and profilers.
constexpr size_t kCopyBufferBytes = size_t(1) << 30;         // 1 GiB per buffer
constexpr size_t kCopyBufferBytesQuick = size_t(128) << 20;  // 128 MiB per buffer
constexpr size_t kCopyL2Multiple = 4;  // and never less than 4 x the L2 size

// Bytes one copy of a buffer moves through DRAM: every byte is read once and written once.
// (Whole 32-byte sectors are written without being read first: there is no hidden third pass.)
constexpr double copy_bytes_moved(double buffer_bytes) { return 2.0 * buffer_bytes; }

// Bytes per buffer for a run: the target size (at least 4 x L2), but at most a quarter of the free
// memory (the source and the destination then take half), rounded down to whole 256-byte blocks.
inline size_t choose_copy_buffer_bytes(bool quick, size_t free_bytes, size_t l2_bytes) {
    const size_t target = quick ? kCopyBufferBytesQuick : kCopyBufferBytes;
    const size_t want = std::max(target, kCopyL2Multiple * l2_bytes);
    return std::min(want, free_bytes / 4) / 256 * 256;
}

// Copies `count` elements of type T (float4, 16 bytes; or float). The grid is fixed (one wave of
// resident blocks, see launch_copy) and walks the whole buffer ("grid-stride"), so the same launch
// works for any size. In each trip a block moves UNROLL * blockDim.x consecutive elements; thread t
// takes elements t, t + blockDim.x, ..., so each of its UNROLL loads is coalesced across the warp.
// All UNROLL loads are issued before the first store: each thread has UNROLL requests in flight
// instead of one. DRAM answers after several hundred nanoseconds, and only the bytes in flight
// during that time move (Little's law: bytes in flight = bandwidth x latency, several MB on an H200).
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

// Blocks of `kernel` that are resident on the whole GPU at once (all SMs full): one "wave".
inline int resident_blocks(const void* kernel, int threads_per_block) {
    int device = 0, sms = 0, per_sm = 0;
    WB_CUDA_CHECK(cudaGetDevice(&device));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    WB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads_per_block, 0));
    return std::max(1, sms * per_sm);
}

inline int copy_resident_blocks() {
    return resident_blocks(reinterpret_cast<const void*>(copy_grid_stride<float4, kCopyUnroll>),
                           kCopyThreads);
}

// Copies `count` floats from `in` to `out` with at most `max_blocks` blocks (>= 1; the timed runs
// pass copy_resident_blocks(), computed once, so no occupancy query sits inside the timed launch).
// float4 loads need 16-byte aligned addresses: cudaMalloc returns 256-byte aligned memory, but
// `p + 1` is not, so a misaligned pointer takes the plain float path. The last count % 4 floats
// of the float4 path are copied by a one-block launch of the float kernel.
inline void launch_copy(const float* in, float* out, size_t count, int max_blocks, cudaStream_t stream) {
    if (count == 0) return;
    const size_t trip = size_t(kCopyUnroll) * kCopyThreads;  // elements per block per trip
    auto blocks_for = [&](size_t n) {
        return int(std::min<size_t>(size_t(std::max(max_blocks, 1)), (n + trip - 1) / trip));
    };
    const bool aligned = reinterpret_cast<uintptr_t>(in) % alignof(float4) == 0 &&
                         reinterpret_cast<uintptr_t>(out) % alignof(float4) == 0;
    if (!aligned) {
        copy_grid_stride<float, kCopyUnroll><<<blocks_for(count), kCopyThreads, 0, stream>>>(in, out, count);
        WB_LAUNCH_CHECK();
        return;
    }
    const size_t vectors = count / 4, tail = count % 4;
    if (vectors > 0) {
        copy_grid_stride<float4, kCopyUnroll><<<blocks_for(vectors), kCopyThreads, 0, stream>>>(
            reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), vectors);
        WB_LAUNCH_CHECK();
    }
    if (tail > 0) {
        copy_grid_stride<float, 1><<<1, kCopyThreads, 0, stream>>>(in + 4 * vectors, out + 4 * vectors, tail);
        WB_LAUNCH_CHECK();
    }
}

// ---- FP32 throughput: chains of FMAs ---------------------------------------------------------

constexpr int kFmaThreads = 256;  // threads per block
// An FMA's result is ready about 4 cycles after it issues, and each of the 4 schedulers of an SM
// can issue one warp-wide FMA per cycle. A single chain x = x * a + b would leave a scheduler idle
// 3 cycles of 4 unless 4+ warps are ready; independent chains in every thread give the scheduler
// work from the same warp while earlier results are still in the pipeline.
constexpr int kFmaChains = 8;    // independent FMA chains per thread (registers x[0..7])
constexpr int kFmaIters = 1024;  // FMAs in each chain
constexpr int kFmaUnroll = 32;   // iterations unrolled per loop trip, see fma_chains
static_assert(kFmaIters % kFmaUnroll == 0, "the loop is unrolled by kFmaUnroll: it must divide kFmaIters");
// Each launch runs this many full waves of resident blocks: long enough (milliseconds) that the
// launch itself and the last, partly filled moment of the run do not count.
constexpr int kFmaWaves = 64;
constexpr int kFmaWavesQuick = 8;
// x <- x * a + b with 0 < a < 1 pulls every chain towards b / (1 - a), about 1: the values stay
// between 0 and 1, never overflow and never become denormal. (FFMA speed does not depend on them.)
constexpr float kFmaA = 0.9999f;
constexpr float kFmaB = 0.0001f;

// FLOP one launch of `threads` threads does: each FMA is a multiply and an add, 2 FLOP.
// (The kFmaChains - 1 additions that sum the chains at the end are not counted: 0.1%.)
constexpr double fma_flops(double threads) { return 2.0 * threads * kFmaChains * kFmaIters; }

// The start value of chain `chain` of thread `thread`: k / 1024 for a small integer k, exact in
// FP32 and computed the same way on the host, so the tests can repeat the whole chain bit for bit.
__host__ __device__ inline float fma_start_value(unsigned thread, int chain) {
    return float((thread * kFmaChains + unsigned(chain)) & 1023u) * (1.0f / 1024.0f);
}

// Nanoseconds of the GPU's global timer (the same on every SM).
__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}

// CHAINS independent chains of ITERS FMAs per thread.
// store_above: a thread writes its result (the sum of its chains) to out[thread] only when the
//   result is > store_above. The timed runs pass +infinity, so nothing is written; the compiler
//   cannot know that, and as the condition depends on every FMA it must do them all. (Without a
//   possible store the compiler deletes the whole kernel body.) The tests pass -infinity.
// clock_sums: when not null, thread 0 of each block adds the SM cycles (clock64) and the
//   nanoseconds (global timer) its block ran to clock_sums[0] and [1]. Their ratio is the SM
//   clock in GHz during the run: the theoretical peak assumes the maximum clock.
// Only the loop over the chains is unrolled completely. Unrolling all ITERS x CHAINS = 8192 FMAs
// would make 128 KiB of code that no longer fits the instruction cache, and warps would stall on
// instruction fetch; kFmaUnroll iterations per trip keep the loop's own 2-3 instructions (counter,
// compare, branch) below 1% of the issue slots.
template <int CHAINS, int ITERS>
__global__ void __launch_bounds__(kFmaThreads)
    fma_chains(float a, float b, float store_above, float* out, unsigned long long* clock_sums) {
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    const bool timing = clock_sums != nullptr && threadIdx.x == 0;
    long long cycles_start = 0;
    unsigned long long ns_start = 0;
    if (timing) {
        cycles_start = clock64();
        ns_start = global_timer_ns();
    }

    float x[CHAINS];  // registers: the loops below are unrolled, so every index is a constant
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

    if (timing) {
        const long long cycles = clock64() - cycles_start;
        const unsigned long long ns = global_timer_ns() - ns_start;
        atomicAdd(&clock_sums[0], static_cast<unsigned long long>(cycles));
        atomicAdd(&clock_sums[1], ns);
    }
}

inline int fma_resident_blocks() {
    return resident_blocks(reinterpret_cast<const void*>(fma_chains<kFmaChains, kFmaIters>), kFmaThreads);
}

// `out` holds blocks * kFmaThreads floats; `clock_sums` two zeroed counters, or null.
inline void launch_fma(int blocks, float a, float b, float store_above, float* out,
                       unsigned long long* clock_sums, cudaStream_t stream) {
    fma_chains<kFmaChains, kFmaIters><<<blocks, kFmaThreads, 0, stream>>>(a, b, store_above, out, clock_sums);
    WB_LAUNCH_CHECK();
}

// What thread `thread` of fma_chains computes, on the CPU. std::fma rounds once, like the GPU's
// fmaf, and the sum runs in the same order, so the result is the same to the last bit.
inline float fma_chains_reference(unsigned thread, float a, float b) {
    float x[kFmaChains];
    for (int c = 0; c < kFmaChains; ++c) x[c] = fma_start_value(thread, c);
    for (int i = 0; i < kFmaIters; ++i)
        for (int c = 0; c < kFmaChains; ++c) x[c] = std::fma(x[c], a, b);
    float sum = 0.0f;
    for (int c = 0; c < kFmaChains; ++c) sum += x[c];
    return sum;
}

// ---- the measurements ------------------------------------------------------------------------

struct CopyMeasurement {
    size_t buffer_bytes = 0;
    double bytes_moved = 0;      // per copy: read + written
    wb::Timing kernel, memcpy;   // copy_grid_stride, cudaMemcpyAsync device to device
    double kernel_gbs = 0, memcpy_gbs = 0;
};

// Times a copy of `buffer_bytes` with our kernel and with cudaMemcpy (the driver's own copy).
inline CopyMeasurement measure_copy(size_t buffer_bytes, int warmup, int reps, cudaStream_t stream) {
    CopyMeasurement m;
    const size_t count = buffer_bytes / sizeof(float);
    m.buffer_bytes = count * sizeof(float);
    m.bytes_moved = copy_bytes_moved(double(m.buffer_bytes));
    wb::DeviceBuffer<float> src(count), dst(count);
    // The values do not change the speed; set them anyway so the copy reads defined memory.
    WB_CUDA_CHECK(cudaMemsetAsync(src.get(), 0x5A, m.buffer_bytes, stream));
    const int blocks = copy_resident_blocks();
    m.kernel = wb::time_launches(
        [&](cudaStream_t s) { launch_copy(src.get(), dst.get(), count, blocks, s); }, warmup, reps, stream);
    m.memcpy = wb::time_launches(
        [&](cudaStream_t s) {
            WB_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), m.buffer_bytes, cudaMemcpyDeviceToDevice, s));
        },
        warmup, reps, stream);
    m.kernel_gbs = per_second_1e9(m.bytes_moved, m.kernel.ms_median);
    m.memcpy_gbs = per_second_1e9(m.bytes_moved, m.memcpy.ms_median);
    return m;
}

struct FmaMeasurement {
    int waves = 0, blocks = 0;
    long long threads = 0;
    double flops = 0;  // per launch
    wb::Timing timing;
    double gflops = 0;
    double sm_clock_ghz = 0;  // 0 when the counters read nothing
};

// Times fma_chains over `waves` full waves of resident blocks, then runs it once more with the
// clock counters on (kept out of the timed runs, though they cost next to nothing).
inline FmaMeasurement measure_fma(int waves, int warmup, int reps, cudaStream_t stream) {
    FmaMeasurement m;
    m.waves = waves;
    m.blocks = fma_resident_blocks() * waves;
    m.threads = static_cast<long long>(m.blocks) * kFmaThreads;
    m.flops = fma_flops(double(m.threads));
    wb::DeviceBuffer<float> out(size_t(m.threads));
    wb::DeviceBuffer<unsigned long long> clock_sums(2);
    const float never = std::numeric_limits<float>::infinity();
    m.timing = wb::time_launches(
        [&](cudaStream_t s) { launch_fma(m.blocks, kFmaA, kFmaB, never, out.get(), nullptr, s); }, warmup,
        reps, stream);
    m.gflops = per_second_1e9(m.flops, m.timing.ms_median);

    WB_CUDA_CHECK(cudaMemsetAsync(clock_sums.get(), 0, 2 * sizeof(unsigned long long), stream));
    launch_fma(m.blocks, kFmaA, kFmaB, never, out.get(), clock_sums.get(), stream);
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<unsigned long long> sums = clock_sums.download();
    m.sm_clock_ghz = sums[1] > 0 ? double(sums[0]) / double(sums[1]) : 0.0;  // cycles per ns = GHz
    return m;
}

}  // namespace ch00
