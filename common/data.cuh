// data.cuh - the inputs of a GEMM, made on the GPU from a 64-bit key: A, B, and what C holds first.
//
// Every value is a hash of (key, matrix, index) (SplitMix64's finalizer), so it does not depend on
// how the fill is split among threads, and the checks of verify.cuh can make any entry again from
// the key alone. The correctness run uses a key made from --seed (the same data on every run);
// every timed launch gets a fresh key from the operating system (timing.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "options.cuh"

namespace wb {

__host__ __device__ inline uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

enum Matrix : int { kA = 0, kB = 1, kC0 = 2, kCJunk = 3 };

// Entry `index` of matrix `which` under `key`: uniform in [-1, 1) in steps of 2^-23 (exact in FP32).
__host__ __device__ inline float value(uint64_t key, int which, size_t index) {
    const uint64_t h = mix64(mix64(key ^ (0xA24BAED4963EE407ull * uint64_t(which + 1))) + index);
    return float(uint32_t(h >> 40)) * (1.0f / 8388608.0f) - 1.0f;
}

// The input types the launchers receive; 09 adds FP8 E4M3 beside them.
template <class T>
__host__ __device__ T store_as(float v);
template <>
__host__ __device__ inline float store_as<float>(float v) {
    return v;
}
template <>
__host__ __device__ inline __half store_as<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__host__ __device__ inline __nv_bfloat16 store_as<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}

// What C holds before a launch. With beta = 0 a kernel must not read C, so it holds either NaN
// (an entry left unwritten fails) or finite numbers that are not the answer (a kernel that skips
// a tile "already holding a number" fails too); with beta != 0 it holds C0.
enum class CFill : int { c0, nan, junk };

template <class T>
__global__ void fill_gemm(T* A, T* B, float* C, Shape s, bool b_transposed, CFill c, uint64_t key) {
    const size_t mk = size_t(s.m) * s.k, kn = size_t(s.k) * s.n, mn = size_t(s.m) * s.n;
    for (size_t at = size_t(blockIdx.x) * blockDim.x + threadIdx.x; at < mk || at < kn || at < mn;
         at += size_t(gridDim.x) * blockDim.x) {
        if (at < mk) A[at] = store_as<T>(value(key, kA, at));
        // B is K x N; a launcher that takes it as N x K (b_transposed) gets the same matrix.
        if (at < kn) B[b_transposed ? (at % s.n) * s.k + at / s.n : at] = store_as<T>(value(key, kB, at));
        if (at < mn) C[at] = c == CFill::c0 ? value(key, kC0, at) : c == CFill::nan ? NAN : value(key, kCJunk, at);
    }
}

template <class T>
void fill(T* A, T* B, float* C, Shape s, CFill c, uint64_t key, cudaStream_t stream, bool b_transposed = false) {
    fill_gemm<T><<<1024, 256, 0, stream>>>(A, B, C, s, b_transposed, c, key);
    WB_LAUNCH_CHECK();
}

}  // namespace wb
