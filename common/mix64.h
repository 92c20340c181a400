// mix64.h - the one hash behind every random input of the workbook, on the host and the device.
//
// SplitMix64's finalizer: a tiny, well-mixed function of a 64-bit counter. Hashing (key, index)
// instead of running a sequential generator makes every value independent of how the fill is
// split up (any thread count, any grid), so the CPU reference and a GPU fill agree bit for bit.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define WB_HOST_DEVICE __host__ __device__
#else
#define WB_HOST_DEVICE
#endif

namespace wb {

WB_HOST_DEVICE inline uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

// 24 random bits of `h` as a float uniform in [-1, 1), in steps of 2^-23: exact in FP32.
WB_HOST_DEVICE inline float unit_value(uint64_t h) {
    const uint32_t r = static_cast<uint32_t>(h >> 40);
    return static_cast<float>(r) * (1.0f / 8388608.0f) - 1.0f;
}

}  // namespace wb
