// gpu.cuh - which GPU this is, what it can do in theory, and the clear exit when there is none.
// The peaks are the "% of peak" of every row; clocks come from cudaDeviceGetAttribute, because
// CUDA 13 removed the clock fields of cudaDeviceProp.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "cuda_check.cuh"

namespace wb {

enum ExitStatus : int { kExitOk = 0, kExitVerifyFailed = 1, kExitBadInput = 2, kExitNoDevice = 3 };

struct Gpu {
    std::string name;
    int major = 0, minor = 0, sms = 0;
    double clock_ghz = 0;         // the highest SM clock
    double fp32_peak = 0;         // GFLOP/s: SMs x FP32 lanes x 2 (an FMA) x clock
    double tensor_peak = 0;       // GFLOP/s, dense FP16 or BF16 inputs on the tensor cores; 0 unknown
    size_t memory = 0;            // bytes
    int driver = 0, runtime = 0;  // e.g. 13000 for CUDA 13.0
};

inline std::string cuda_version(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

inline Gpu query_gpu(int dev = 0) {
    cudaDeviceProp p{};
    WB_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    Gpu g;
    g.name = p.name;
    g.major = p.major, g.minor = p.minor, g.sms = p.multiProcessorCount, g.memory = p.totalGlobalMem;
    int clock_khz = 0;
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    WB_CUDA_CHECK(cudaDriverGetVersion(&g.driver));
    WB_CUDA_CHECK(cudaRuntimeGetVersion(&g.runtime));
    g.clock_ghz = clock_khz * 1e-6;
    // FP32 lanes per SM (Programming Guide, arithmetic throughput): 64 on Volta, Turing and A100.
    const int cc = g.major * 10 + g.minor, lanes = cc < 86 ? 64 : 128;
    // Dense tensor FLOP per clock per SM of each generation's data-centre part (datasheet peak / SMs
    // / clock): T4, A100, A10 and L40S, H100 and H200.
    const int tensor = cc == 75 ? 1024 : cc == 80 ? 2048 : (cc >= 86 && cc <= 89) ? 1024 : cc == 90 ? 4096 : 0;
    g.fp32_peak = g.sms * lanes * 2.0 * g.clock_ghz;
    g.tensor_peak = g.sms * tensor * g.clock_ghz;
    return g;
}

static __global__ void empty_kernel() {}

// The GPU the program runs on, or one line that says what is missing and exit status 3: no driver
// (libcuda is not installed), a driver older than the toolkit, no GPU, or no code for this GPU.
inline Gpu gpu_or_exit(const char* prog) {
    int n = 0, driver = 0, runtime = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    (void)cudaDriverGetVersion(&driver);  // 0 when no driver is installed
    (void)cudaRuntimeGetVersion(&runtime);
    std::string why;
    if (err == cudaErrorInsufficientDriver && driver == 0)
        why =
            "no NVIDIA driver was found (libcuda.so.1 is not installed): install the driver for your GPU, "
            "then check that nvidia-smi lists it";
    else if (err == cudaErrorInsufficientDriver)
        why = "the driver supports CUDA " + cuda_version(driver) + ", older than the CUDA " + cuda_version(runtime) +
              " this program was built with: update the driver";
    else if (err != cudaSuccess || n == 0)
        why = std::string(err ? cudaGetErrorString(err) : "no GPU found") + ": this program needs an NVIDIA GPU";
    else if (empty_kernel<<<1, 1>>>(), cudaDeviceSynchronize() != cudaSuccess) {
        const Gpu g = query_gpu();
        why = "this program holds no code for the " + g.name + ": rebuild with make clean && make ARCH=sm_" +
              std::to_string(g.major) + std::to_string(g.minor);
    }
    if (why.empty()) return query_gpu();
    std::fprintf(stderr, "%s: error: %s (make check-env says more)\n", prog, why.c_str());
    std::exit(kExitNoDevice);
}

// The deviceQuery-style summary each program prints first.
inline void print_gpu(const Gpu& g) {
    std::printf("GPU: %s (sm_%d%d, %d SMs, %.2f GHz, %.1f GiB), driver CUDA %s, runtime %s\n", g.name.c_str(), g.major,
                g.minor, g.sms, g.clock_ghz, g.memory / 1073741824.0, cuda_version(g.driver).c_str(),
                cuda_version(g.runtime).c_str());
    std::printf("peaks: FP32 %.0f GFLOP/s, tensor cores FP16 %.0f GFLOP/s\n", g.fp32_peak, g.tensor_peak);
}

}  // namespace wb
