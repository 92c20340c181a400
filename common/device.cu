// device.cu - device facts, theoretical peaks, and the "no GPU" / "no kernel image" exits.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "cuda_check.cuh"
#include "device.cuh"
#include "options.h"

namespace wb {

int fp32_lanes_per_sm(int major, int minor) {
    // From the CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table.
    switch (major) {
        case 7: return 64;                       // Volta, Turing
        case 8: return minor == 0 ? 64 : 128;    // A100: 64; GA10x, AD10x: 128
        case 9: return 128;                      // Hopper
        case 10:
        case 11:
        case 12: return 128;                     // Blackwell
        default: return major > 12 ? 128 : 0;
    }
}

int tensor_flops_per_clock_per_sm(int major, int minor, bool tf32) {
    // Dense FLOP/clock/SM of the data-centre part of each generation (datasheet peak divided by
    // SMs and boost clock): T4, A100, A10/A40, L40S, H100/H200. The peaks printed multiply this by
    // the device's maximum clock; NVIDIA's H100/H200 datasheet uses a lower clock, so our FP16 peak
    // there (1070 TFLOP/s at 1.98 GHz) is about 8% above the datasheet's 989.
    const int cc = major * 10 + minor;
    if (cc == 75) return tf32 ? 0 : 1024;
    if (cc == 80) return tf32 ? 1024 : 2048;
    if (cc == 86 || cc == 87 || cc == 89) return tf32 ? 512 : 1024;
    if (cc == 90) return tf32 ? 2048 : 4096;
    return 0;
}

std::string cuda_version_string(int v) {
    return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string rebuild_hint(int major, int minor) {
    return "make clean && make ARCH=sm_" + std::to_string(major) + std::to_string(minor);
}

DeviceFacts query_device(int dev) {
    DeviceFacts f;
    f.id = dev;
    cudaDeviceProp p{};
    WB_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    f.name = p.name;
    f.cc_major = p.major;
    f.cc_minor = p.minor;
    f.sms = p.multiProcessorCount;
    f.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    f.global_mem_bytes = p.totalGlobalMem;
    f.smem_per_block_optin = int(p.sharedMemPerBlockOptin);
    int clock_khz = 0, mem_khz = 0, bus = 0;
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev));
    f.clock_ghz = clock_khz * 1e-6;
    f.mem_clock_ghz = mem_khz * 1e-6;
    f.bus_width_bits = bus;
    WB_CUDA_CHECK(cudaDriverGetVersion(&f.driver_version));
    WB_CUDA_CHECK(cudaRuntimeGetVersion(&f.runtime_version));
    f.fp32_lanes_per_sm = fp32_lanes_per_sm(f.cc_major, f.cc_minor);
    f.peak_fp32_gflops = f.sms * f.fp32_lanes_per_sm * 2.0 * f.clock_ghz;
    f.peak_fp16_tc_gflops = f.sms * tensor_flops_per_clock_per_sm(f.cc_major, f.cc_minor, false) * f.clock_ghz;
    f.peak_tf32_tc_gflops = f.sms * tensor_flops_per_clock_per_sm(f.cc_major, f.cc_minor, true) * f.clock_ghz;
    f.peak_bandwidth_gbs = f.mem_clock_ghz * 2.0 * f.bus_width_bits / 8.0;
    return f;
}

const DeviceFacts& current_device() {
    constexpr int kMaxDevices = 64;
    static DeviceFacts cache[kMaxDevices];
    static bool known[kMaxDevices] = {};
    int dev = 0;
    WB_CUDA_CHECK(cudaGetDevice(&dev));
    if (dev < 0 || dev >= kMaxDevices) throw std::runtime_error("device index out of range");
    if (!known[dev]) {
        cache[dev] = query_device(dev);
        known[dev] = true;
    }
    return cache[dev];
}

bool cuda_device_available() {
    static const bool available = [] {
        int n = 0;
        return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
    }();
    return available;
}

__global__ void empty_kernel() {}

void probe_kernel_image() {
    empty_kernel<<<1, 1>>>();
    WB_LAUNCH_CHECK();
    WB_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string no_device_reason(cudaError_t err, int driver_version, int runtime_version) {
    if (err == cudaErrorInsufficientDriver && driver_version == 0)
        return "no NVIDIA driver was found: libcuda.so.1 is not installed. Install the NVIDIA driver for your GPU "
               "(Debian/Ubuntu: sudo apt-get install nvidia-driver, or NVIDIA's installer), then check that "
               "'nvidia-smi' lists the GPU";
    if (err == cudaErrorInsufficientDriver)
        return "the NVIDIA driver supports CUDA " + cuda_version_string(driver_version) +
               ", older than the CUDA " + cuda_version_string(runtime_version) +
               " runtime this program was built with. Update the driver, or build with an older toolkit";
    return std::string(err != cudaSuccess ? cudaGetErrorString(err) : "the driver reports none") +
           ". This program needs an NVIDIA GPU with a working driver";
}

DeviceFacts require_device(const std::string& prog) {
    int n = 0;
    cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess || n == 0) {
        int driver = 0, runtime = 0;
        (void)cudaDriverGetVersion(&driver);  // 0 when no driver is installed
        (void)cudaRuntimeGetVersion(&runtime);
        cudaGetLastError();
        std::fprintf(stderr, "%s: error: no usable CUDA device (%s); run 'make check-env' for details.\n",
                     prog.c_str(), no_device_reason(err, driver, runtime).c_str());
        std::exit(kExitNoDevice);
    }
    DeviceFacts f;
    try {
        f = query_device(0);
        probe_kernel_image();
    } catch (const CudaError& e) {
        if (no_code_for_device(e.code())) {
            std::fprintf(stderr,
                         "%s: error: this binary holds no code for %s (compute capability %s). "
                         "Rebuild for it: %s\n",
                         prog.c_str(), f.name.c_str(), f.cc().c_str(),
                         rebuild_hint(f.cc_major, f.cc_minor).c_str());
        } else {
            std::fprintf(stderr, "%s: error: the CUDA device cannot be used: %s\n", prog.c_str(),
                         e.what());
        }
        std::exit(kExitNoDevice);
    }
    return f;
}

}  // namespace wb
