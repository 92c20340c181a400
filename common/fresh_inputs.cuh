// fresh_inputs.cuh - every timed launch does the work: fresh inputs before it, a check after it.
//
// A kernel could otherwise be timed on work it did earlier. Launched again on the same A and B,
// it can skip a tile whose C already holds a number, or replay a result it kept in device memory
// under the A pointer or a checksum of A; inputs that follow from a printed seed can be predicted.
// So before every launch that is timed (warm-ups too), outside its events:
//   - A and B are filled on the device from a fresh 64-bit key out of the operating system's
//     entropy pool (getrandom), passed to the fill kernel by value and kept nowhere on the device;
//   - C is filled from the same key: C0 when beta != 0; when beta = 0, with NaN or (a coin toss of
//     the key) with finite numbers that are not the answer, so that neither an entry left
//     unwritten nor a kernel that skips a tile "already holding a number" can pass;
// and after it, also outside its events, a check kernel compares kEntriesPerLaunch entries, at
// positions drawn from a second key made after the launch was queued, with an FP64 dot product
// of the same inputs. The check regenerates A, B and C0 from the key rather than reading them
// back, so a kernel that overwrote its inputs cannot steer it. The host reads every check once
// the timed launches are done; one wrong launch fails the variant ("wrong in a timed run").
//
// The values are those of wb::fill_random (mix64.h, 24 random bits in [-1, 1)), rounded to the
// input type as a launcher receives it: FP32 as they are (TF32 variants round them themselves,
// and the check rounds them to nearest as the CPU reference does), FP16 and BF16 to nearest even,
// FP8 E4M3 as 448 * value with a per-tensor scale of 1/448.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.cuh"
#include "mix64.h"
#include "numerics.h"
#include "timer.cuh"

namespace wb {

// 64 bits from the operating system's entropy pool.
inline uint64_t entropy_key() {
    uint64_t key = 0;
    if (getrandom(&key, sizeof key, 0) == ssize_t(sizeof key)) return key;
    std::random_device pool;  // the same pool through the standard library, where getrandom fails
    return (uint64_t(pool()) << 32) ^ pool();
}

namespace fresh {

constexpr int kEntriesPerLaunch = 48;  // entries of C checked after each launch
constexpr int kCheckThreads = 128;     // threads summing one entry's dot product
constexpr float kFp8Scale = 1.0f / 448.0f;

// Entry `index` of operand `which` (0: A, 1: B as K x N, 2: C0) under `key`.
__device__ inline float value(uint64_t key, int which, size_t index) {
    return unit_value(mix64(mix64(key ^ (0xA24BAED4963EE407ull * uint64_t(which + 1))) + index));
}

template <class T> __device__ T store_as(float v);
template <> __device__ inline float store_as<float>(float v) { return v; }
template <> __device__ inline __half store_as<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 store_as<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ inline __nv_fp8_e4m3 store_as<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v * 448.0f); }

// The value the arithmetic of precision p works with, given what the launcher received.
template <class T>
__device__ double seen_as(T x, int precision) {
    if constexpr (sizeof(T) == 1) {
        return double(float(x)) * double(kFp8Scale);
    } else if constexpr (sizeof(T) == 2) {
        return double(float(x));
    } else {
        if (precision != int(Precision::tf32)) return x;
        return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xFFFFE000u);  // wb::round_to_tf32
    }
}

// What C holds before a launch: C0 (beta != 0), NaN, or finite numbers that are not the answer.
enum class CFill { c0, nan, finite };

template <class T>
__global__ void fill_inputs(T* A, T* B, float* C, float* scale_a, float* scale_b, Shape s, bool b_transposed,
                            CFill c_fill, uint64_t key) {
    const size_t mk = size_t(s.m) * s.k, kn = size_t(s.k) * s.n, mn = size_t(s.m) * s.n;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t at = size_t(blockIdx.x) * blockDim.x + threadIdx.x; at < mk || at < kn || at < mn; at += stride) {
        if (at < mk) A[at] = store_as<T>(value(key, 0, at));
        if (at < kn) B[b_transposed ? (at % s.n) * s.k + at / s.n : at] = store_as<T>(value(key, 1, at));
        if (at < mn)
            C[at] = c_fill == CFill::c0 ? value(key, 2, at) : c_fill == CFill::nan ? __int_as_float(-1) : value(key, 3, at);
    }
    if (scale_a && blockIdx.x == 0 && threadIdx.x == 0) *scale_a = *scale_b = kFp8Scale;
}

// One block per checked entry: the FP64 dot product of row i of A and column j of B, and its
// error scale, summed by kCheckThreads threads; thread 0 writes the entry.
template <class T>
__global__ void check_entries(const float* C, Shape s, float alpha, float beta, int precision, uint64_t key,
                              uint64_t where, EntryCheck* out) {
    __shared__ double sum[kCheckThreads], abs_sum[kCheckThreads];
    const uint64_t h = mix64(where + blockIdx.x);
    const int i = int((h >> 32) % uint64_t(s.m)), j = int((h & 0xFFFFFFFFull) % uint64_t(s.n));
    double v = 0.0, a_b = 0.0;
    for (int k = threadIdx.x; k < s.k; k += kCheckThreads) {
        const double p = seen_as(store_as<T>(value(key, 0, size_t(i) * s.k + k)), precision) *
                         seen_as(store_as<T>(value(key, 1, size_t(k) * s.n + j)), precision);
        v += p;
        a_b += fabs(p);
    }
    sum[threadIdx.x] = v;
    abs_sum[threadIdx.x] = a_b;
    __syncthreads();
    for (int half = kCheckThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) {
            sum[threadIdx.x] += sum[threadIdx.x + half];
            abs_sum[threadIdx.x] += abs_sum[threadIdx.x + half];
        }
        __syncthreads();
    }
    if (threadIdx.x != 0) return;
    const double c0 = beta != 0.0f ? value(key, 2, size_t(i) * s.n + j) : 0.0;
    EntryCheck& e = out[blockIdx.x];
    e.i = i;
    e.j = j;
    e.got = C[size_t(i) * s.n + j];
    e.want = double(alpha) * sum[0] + double(beta) * c0;
    e.scale = fabs(double(alpha)) * abs_sum[0] + fabs(double(beta) * c0);
}

// Holds the GPU back for about `ns` nanoseconds, so that the host can queue a batch of launches
// before the GPU reaches them: a GPU that ran ahead of the host would sit idle between a start
// event and its launch, and that wait would be timed as the kernel's.
static __global__ void hold(long long ns) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}

}  // namespace fresh

// The operands of one GEMM as its launchers receive them: A (M x K) and B (K x N, or N x K when
// b_transposed: FP8) of the precision's input type, C (M x N, FP32), FP8's two scales.
struct GemmOperands {
    Precision precision = Precision::fp32;
    Shape s;
    float alpha = 1.0f, beta = 0.0f;
    void* A = nullptr;
    void* B = nullptr;
    float* C = nullptr;
    float* scale_a = nullptr;  // FP8 only: where the launchers read the two scales
    float* scale_b = nullptr;
    bool b_transposed = false;
};

// The LaunchGuard of a GEMM: fresh inputs before each launch, a check after it, and the hold at
// the head of each batch (timer.cuh calls these).
class FreshInputs : public LaunchGuard {
public:
    explicit FreshInputs(const GemmOperands& g) : g_(g) {
        WB_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, 0));
    }

    void batch(int launches, cudaStream_t stream) override {
        reserve(launches);
        // The host queues a launch with its fill and check in 15-25 us; once ~10 ms are queued the
        // launch queue is deep enough that the host no longer falls behind within a batch.
        fresh::hold<<<1, 1, 0, stream>>>(std::min<long long>(40000LL * launches, 10000000LL));
        WB_LAUNCH_CHECK();
    }

    void before(cudaStream_t stream) override {
        key_ = entropy_key();
        const fresh::CFill c_fill = g_.beta != 0.0f ? fresh::CFill::c0
                                    : (mix64(key_) & 1) ? fresh::CFill::finite
                                                        : fresh::CFill::nan;
        const bool fp8 = g_.precision == Precision::fp8_e4m3;
        with_input_type([&](auto* type) {
            using T = std::remove_pointer_t<decltype(type)>;
            fresh::fill_inputs<T><<<sms_ * 4, 256, 0, stream>>>(static_cast<T*>(g_.A), static_cast<T*>(g_.B), g_.C,
                                                                fp8 ? g_.scale_a : nullptr, fp8 ? g_.scale_b : nullptr,
                                                                g_.s, g_.b_transposed, c_fill, key_);
        });
        WB_LAUNCH_CHECK();
    }

    void after(cudaStream_t stream, int side) override {
        reserve(1);
        EntryCheck* out = chunks_.back().get() + size_t(used_) * fresh::kEntriesPerLaunch;
        const uint64_t where = entropy_key();  // drawn now, after the launch was queued
        with_input_type([&](auto* type) {
            using T = std::remove_pointer_t<decltype(type)>;
            fresh::check_entries<T><<<fresh::kEntriesPerLaunch, fresh::kCheckThreads, 0, stream>>>(
                g_.C, g_.s, g_.alpha, g_.beta, int(g_.precision), key_, where, out);
        });
        WB_LAUNCH_CHECK();
        sides_.push_back(side);
        ++used_;
    }

    // Waits for the queued checks and judges every launch, per side: the first wrong launch of a
    // side, else a pass with the largest normwise error seen. Forgets every launch checked so far.
    std::array<CheckResult, 2> collect() {
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const Tolerance tol = tolerance_for(g_.precision, g_.s.k);
        std::array<CheckResult, 2> out;
        std::array<int, 2> launches = {0, 0};
        size_t launch = 0;
        for (size_t c = 0; c < chunks_.size(); ++c) {
            const int in_chunk = c + 1 < chunks_.size() ? capacity_[c] : used_;
            std::vector<EntryCheck> host(size_t(in_chunk) * fresh::kEntriesPerLaunch);
            WB_CUDA_CHECK(cudaMemcpy(host.data(), chunks_[c].get(), host.size() * sizeof(EntryCheck),
                                     cudaMemcpyDeviceToHost));
            for (int slot = 0; slot < in_chunk; ++slot, ++launch) {
                const int side = sides_[launch];
                CheckResult& sum = out[side];
                ++launches[side];
                if (!sum.pass) continue;  // the first wrong launch is the one reported
                const auto first = host.begin() + size_t(slot) * fresh::kEntriesPerLaunch;
                CheckResult r = check_entries({first, first + fresh::kEntriesPerLaunch}, tol, "");
                if (!r.pass) {
                    r.what = "launch " + std::to_string(launches[side]) + " of the timed run: " +
                             std::to_string(fresh::kEntriesPerLaunch) +
                             " entries at positions drawn after it, against an FP64 dot product of its fresh inputs";
                    sum = r;
                    continue;
                }
                sum.checked += r.checked;
                sum.rel_err = std::max(sum.rel_err, r.rel_err);
                sum.normwise_limit = r.normwise_limit;
            }
        }
        for (int side : {0, 1})
            if (out[side].pass)
                out[side].what = std::to_string(launches[side]) + " launches with fresh inputs, " +
                                 std::to_string(fresh::kEntriesPerLaunch) + " entries of each checked";
        chunks_.clear();
        capacity_.clear();
        sides_.clear();
        used_ = 0;
        return out;
    }

private:
    struct CudaFree {
        void operator()(EntryCheck* p) const { cudaFree(p); }
    };
    GemmOperands g_;
    int sms_ = 1;
    uint64_t key_ = 0;  // the key of the launch in flight, needed again by its check
    std::vector<std::unique_ptr<EntryCheck, CudaFree>> chunks_;
    std::vector<int> capacity_;  // launches each chunk holds
    int used_ = 0;               // launches in the last chunk
    std::vector<int> sides_;     // the side of every launch checked, in order

    // Calls f with a null pointer of the input type the launchers of this precision receive.
    template <class F>
    void with_input_type(F&& f) const {
        switch (g_.precision) {
            case Precision::fp16: return f(static_cast<__half*>(nullptr));
            case Precision::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
            case Precision::fp8_e4m3: return f(static_cast<__nv_fp8_e4m3*>(nullptr));
            default: return f(static_cast<float*>(nullptr));  // FP32 and TF32
        }
    }
    // Room for `launches` more checks: a new chunk when the last one is full (allocated before the
    // batch's timed launches, never between them).
    void reserve(int launches) {
        if (!chunks_.empty() && used_ + launches <= capacity_.back()) return;
        const int n = std::max(launches, 256);
        EntryCheck* p = nullptr;
        WB_CUDA_CHECK(cudaMalloc(&p, size_t(n) * fresh::kEntriesPerLaunch * sizeof(EntryCheck)));
        if (!chunks_.empty()) capacity_.back() = used_;  // what the old chunk holds
        chunks_.emplace_back(p);
        capacity_.push_back(n);
        used_ = 0;
    }
};

}  // namespace wb
