// ceiling_09 - how fast can wgmma go on this GPU with nothing else in the way? Every block keeps
// one 128 x 64 tile of A and one 64 x 256 tile of B resident in shared memory and two warpgroups
// issue m64n256 wgmmas on them in a loop: no copies, no barriers, no epilogue worth the name. The
// rate this reaches is the ceiling the ladder of chapter 09 is compared with in the notes, beside
// the theoretical dense peak (SMs x tensor FLOPs per clock x clock) and cuBLAS.
// Run: make -C 09_hopper_wgmma ceiling   (or lab/ceiling_09 [iterations])
#include <cstdio>
#include <cstdlib>

#include "../../common/device.cuh"
#include "../../common/timer.cuh"
#include "../hopper_ptx.cuh"

namespace ch09 {

constexpr int kBM = 128, kBN = 256, kTileBytes = (kBM + kBN) * 128;

// T: __half, __nv_bfloat16 or float (TF32). The tiles hold whatever the shared memory held
// (zeros after the memset below would flatter the tensor cores' power use; the bytes written here
// are a non-zero pattern).
template <class T>
__global__ void __launch_bounds__(256, 1) wgmma_loop(int iterations, float* sink) {
    extern __shared__ uint8_t raw[];
    uint8_t* base = raw + ((1024 - (smem_u32(raw) & 1023)) & 1023);
    for (int i = threadIdx.x; i < kTileBytes / 4; i += blockDim.x)
        reinterpret_cast<uint32_t*>(base)[i] = 0x3C003C01u ^ (i * 2654435761u & 0x03FF03FFu);  // finite, varied
    __syncthreads();
    float acc[kBN / 2] = {};
    for (int it = 0; it < iterations; ++it) {
        wgmma_fence();
        // The descriptor steps of chapter 09's homework (mma_stage), so the starter kit leaves them to
        // the student here too: warpgroup wg multiplies rows 64 wg .. 64 wg + 63 of the A tile by the
        // whole B tile, in 4 k-steps of 32 bytes.
        // BEGIN SOLUTION: per k-step of 32 bytes: A and B descriptors moved along the tiles, one wgmma_m64
        const int wg = threadIdx.x / 128;
        constexpr int K_STEP_BYTES = 32;
        const uint32_t a0 = smem_u32(base) + wg * 64 * 128, b0 = smem_u32(base) + kBM * 128;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
            const uint64_t da = make_smem_desc(a0 + kk * K_STEP_BYTES, 16, 1024);
            const uint64_t db = std::is_same_v<T, float> ? make_smem_desc(b0 + kk * K_STEP_BYTES, 16, 1024)
                                                         : make_smem_desc(b0 + kk * (32 / sizeof(T)) * 128, 64 * 128, 1024);
            wgmma_m64<T, kBN>(acc, da, db, 1);
        }
        // END SOLUTION
        wgmma_commit();
        wgmma_wait<1>();
    }
    wgmma_wait<0>();
    float s = 0;
    for (float v : acc) s += v;
    if (s == 1.2345f) sink[threadIdx.x] = s;  // keeps the loop alive; never true in practice
}

template <class T>
double measure(const wb::DeviceFacts& dev, int iterations, float* sink) {
    const int smem = kTileBytes + 1024;
    WB_CUDA_CHECK(cudaFuncSetAttribute(wgmma_loop<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    const int blocks = dev.sms;  // one per SM: 8 warps, 2 warpgroups, as the ladder's consumers
    wb::Timing t = wb::time_launches([&](cudaStream_t st) { wgmma_loop<T><<<blocks, 256, smem, st>>>(iterations, sink); },
                                     2, 10, nullptr);
    // Per iteration and warpgroup: 4 wgmmas of 64 x 256 x (32 bytes of k).
    const double k_per_iter = 4.0 * 32 / sizeof(T);
    const double flops = 2.0 * blocks * 2 * iterations * 64.0 * kBN * k_per_iter;
    return flops / (t.ms_median * 1e6);  // GFLOP/s
}

}  // namespace ch09

int main(int argc, char** argv) {
    const int iterations = argc > 1 ? std::atoi(argv[1]) : 20000;
    if (iterations <= 0) {
        std::fprintf(stderr, "ceiling_09: error: iterations must be a positive integer\n");
        return 2;
    }
    const wb::DeviceFacts dev = wb::require_device("ceiling_09");
    if (dev.cc_number() != 90) {
        std::fprintf(stderr, "ceiling_09: error: needs compute capability 9.0 (sm_90a code), %s is %d.%d\n",
                     dev.name.c_str(), dev.cc_major, dev.cc_minor);
        return 3;
    }
    float* sink = nullptr;
    WB_CUDA_CHECK(cudaMalloc(&sink, 1024 * sizeof(float)));
    std::printf("wgmma-only ceiling on %s (%d SMs, %.2f GHz), %d iterations, median of 10:\n", dev.name.c_str(), dev.sms,
                dev.clock_ghz, iterations);
    std::printf("%-6s %12s %14s %9s\n", "input", "GFLOP/s", "peak GFLOP/s", "% peak");
    const double f16 = ch09::measure<__half>(dev, iterations, sink);
    const double b16 = ch09::measure<__nv_bfloat16>(dev, iterations, sink);
    const double tf32 = ch09::measure<float>(dev, iterations, sink);
    std::printf("%-6s %12.0f %14.0f %8.1f%%\n", "fp16", f16, dev.peak_fp16_tc_gflops, 100 * f16 / dev.peak_fp16_tc_gflops);
    std::printf("%-6s %12.0f %14.0f %8.1f%%\n", "bf16", b16, dev.peak_fp16_tc_gflops, 100 * b16 / dev.peak_fp16_tc_gflops);
    std::printf("%-6s %12.0f %14.0f %8.1f%%\n", "tf32", tf32, dev.peak_tf32_tc_gflops, 100 * tf32 / dev.peak_tf32_tc_gflops);
    WB_CUDA_CHECK(cudaFree(sink));
    return 0;
}
