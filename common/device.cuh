// device.cuh - what the GPU is and what it can do in theory: the numbers every "% of peak" uses.
//
// CUDA 13 removed the clock fields of cudaDeviceProp, so clocks come from
// cudaDeviceGetAttribute (kHz), which works with every toolkit from CUDA 11 on.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "cuda_check.cuh"

namespace wb {

struct DeviceFacts {
    int id = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    int sms = 0;
    int max_threads_per_sm = 0;
    int smem_per_block_optin = 0;  // the most dynamic shared memory one block may opt in to (bytes)
    int fp32_lanes_per_sm = 0;  // FP32 FMA units per SM: 64 or 128, by compute capability
    double clock_ghz = 0;       // maximum (boost) SM clock
    double mem_clock_ghz = 0;   // memory clock as reported (data moves twice per clock)
    int bus_width_bits = 0;
    size_t global_mem_bytes = 0;
    int driver_version = 0;   // e.g. 13000 = the newest CUDA the driver supports
    int runtime_version = 0;  // e.g. 13000 = the runtime this program was built with
    double peak_fp32_gflops = 0;  // sms * lanes * 2 flops (one FMA) * clock
    double peak_fp16_tc_gflops = 0;  // dense tensor cores, FP16 in, FP32 accumulate; 0 = unknown
    double peak_tf32_tc_gflops = 0;  // dense tensor cores, TF32; 0 = unknown
    double peak_bandwidth_gbs = 0;   // mem_clock * 2 * bus_width / 8

    std::string cc() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
    int cc_number() const { return cc_major * 10 + cc_minor; }  // 90 for 9.0
};

// FP32 lanes (CUDA cores) per SM for a compute capability; 0 for a GPU this table does not know.
int fp32_lanes_per_sm(int major, int minor);
// Dense tensor-core FLOP per clock per SM (FP16 inputs with FP32 accumulation, and TF32) for the
// data-centre parts of each generation; 0 where unknown or absent. GeForce parts of the same
// compute capability often run FP32 accumulation at half this rate.
int tensor_flops_per_clock_per_sm(int major, int minor, bool tf32);

// "13.0" from 13000.
std::string cuda_version_string(int v);

// Reads the facts of device `dev`; throws wb::CudaError when it cannot.
DeviceFacts query_device(int dev = 0);

// The facts of the current device (cudaGetDevice), read once per device and kept: launchers that
// choose a configuration per GPU call this on every launch, and a fresh query would add host time
// to every timed run.
const DeviceFacts& current_device();

// For a program's start: returns the facts of device 0, or prints one clear line on stderr and
// exits with status 3 when there is no usable device or this binary has no code for it.
DeviceFacts require_device(const std::string& prog);

// Why cudaGetDeviceCount found no device, and what to do, for require_device's line: no driver at
// all (driver_version 0: libcuda is not installed), a driver older than the runtime, or no GPU.
std::string no_device_reason(cudaError_t err, int driver_version, int runtime_version);

// True when a CUDA device can be used (no message, no exit). Cached.
bool cuda_device_available();

// The line that says how to rebuild for this GPU, e.g. "make ARCH=sm_90".
std::string rebuild_hint(int major, int minor);

// Launches an empty kernel: throws wb::CudaError (cudaErrorNoKernelImageForDevice and friends)
// when this binary holds no code that runs on the device.
void probe_kernel_image();
// True for the errors of a launch that found no code for the device: rebuild for it.
inline bool no_code_for_device(cudaError_t e) {
    return e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidKernelImage ||
           e == cudaErrorUnsupportedPtxVersion;
}

// A device buffer of at least `bytes`, one per Tag type, that only grows: scratch space reused from
// call to call (padded copies of operands, a library kernel's workspace), so that a timed call
// allocates nothing once it has seen its largest shape. Growing frees the old buffer; cudaFree
// first waits for the work already queued on the device, which may still be reading it. Tags keep
// two users that need their buffers at the same time apart. Not thread-safe.
template <class Tag>
void* scratch_buffer(size_t bytes) {
    static void* buffer = nullptr;
    static size_t capacity = 0;
    if (bytes > capacity) {
        if (buffer) WB_CUDA_CHECK(cudaFree(buffer));
        buffer = nullptr;
        capacity = 0;
        WB_CUDA_CHECK(cudaMalloc(&buffer, bytes));
        capacity = bytes;
    }
    return buffer;
}

}  // namespace wb
