// timing.cuh - timing a GEMM launch so that every timed launch does the work.
//
// CUDA events recorded into the stream around a launch time the GPU itself (a host clock would
// time only the launch call). Each launch is timed between its own pair of events; the median and
// the minimum are reported. A kernel could be timed on work it did earlier: launched again on the
// same A and B it can skip a tile whose C already holds a number, or replay a result it kept in
// device memory. So FreshInputs works around every launch, warm-ups included, outside its events:
// before it, new A, B and C from a fresh 64-bit key out of the operating system's entropy (passed
// by value, kept nowhere on the device); after it, 48 entries at positions drawn after the launch
// was queued, checked against an FP64 dot product that makes the inputs again from the key.
#pragma once

#include <sys/random.h>

#include <algorithm>
#include <random>
#include <vector>

#include "verify.cuh"

namespace wb {

inline uint64_t entropy_key() {
    uint64_t key = 0;
    if (getrandom(&key, sizeof key, 0) == ssize_t(sizeof key)) return key;
    std::random_device pool;  // the same pool through the standard library
    return uint64_t(pool()) << 32 ^ pool();
}

constexpr int kCheckedPerLaunch = 48, kCheckThreads = 128;

// One block per checked entry: its FP64 dot product regenerated from the key, summed by the block.
template <class T>
__global__ void check_launch(const float* C, Shape s, float alpha, float beta, Precision p, uint64_t key,
                             uint64_t where, Entry* out) {
    __shared__ double sum[kCheckThreads], scale[kCheckThreads];
    const uint64_t h = mix64(where + blockIdx.x);
    Entry e{int((h >> 32) % uint64_t(s.m)), int(uint32_t(h) % uint64_t(s.n))};
    reference(
        e, s.k, 1, 0, 0, [&](int k) { return seen_as(store_as<T>(value(key, kA, size_t(e.i) * s.k + k)), p); },
        [&](int k) { return seen_as(store_as<T>(value(key, kB, size_t(k) * s.n + e.j)), p); }, threadIdx.x,
        kCheckThreads);
    sum[threadIdx.x] = e.want, scale[threadIdx.x] = e.scale;
    for (int half = kCheckThreads / 2; half > 0; half /= 2) {
        __syncthreads();
        if (threadIdx.x < half)
            sum[threadIdx.x] += sum[threadIdx.x + half], scale[threadIdx.x] += scale[threadIdx.x + half];
    }
    if (threadIdx.x > 0) return;
    const double c0 = beta != 0 ? double(beta) * value(key, kC0, size_t(e.i) * s.n + e.j) : 0;
    out[blockIdx.x] = {e.i, e.j, C[size_t(e.i) * s.n + e.j], alpha * sum[0] + c0, fabs(alpha) * scale[0] + fabs(c0)};
}

// Holds the GPU for `ns` nanoseconds at the head of a batch, so that the host queues the batch
// before the GPU reaches it: a GPU waiting for the host between a start event and its launch would
// time that wait as the kernel's.
static __global__ void hold(long long ns) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}

// The operands of one GEMM, their fresh filling before each launch and the checks after it.
template <class T>
class FreshInputs {
public:
    FreshInputs(T* A, T* B, float* C, Shape s, float alpha, float beta, Precision p, bool b_transposed = false)
        : A_(A), B_(B), C_(C), s_(s), alpha_(alpha), beta_(beta), p_(p), b_transposed_(b_transposed) {}
    ~FreshInputs() { cudaFree(out_); }

    // Before a batch of `launches` (never between them): room for their checks, and the hold.
    void batch(int launches, cudaStream_t stream) {
        if (used_ + launches > capacity_) {
            std::vector<Entry> kept = results();
            capacity_ = std::max(2 * capacity_, used_ + launches);
            cudaFree(out_);
            WB_CUDA_CHECK(cudaMalloc(&out_, sizeof(Entry) * kCheckedPerLaunch * capacity_));
            WB_CUDA_CHECK(cudaMemcpy(out_, kept.data(), sizeof(Entry) * kept.size(), cudaMemcpyHostToDevice));
        }
        hold<<<1, 1, 0, stream>>>(std::min(40000LL * launches, 10000000LL));  // a launch queues in 15-25 us
        WB_LAUNCH_CHECK();
    }
    void before(cudaStream_t stream) {
        key_ = entropy_key();
        fill(A_, B_, C_, s_, beta_ != 0 ? CFill::c0 : key_ & 1 ? CFill::junk : CFill::nan, key_, stream, b_transposed_);
    }
    // After a launch; `side` tells a variant (0) from its baseline (1) when both share the operands.
    void after(cudaStream_t stream, int side = 0) {
        check_launch<T><<<kCheckedPerLaunch, kCheckThreads, 0, stream>>>(C_, s_, alpha_, beta_, p_, key_, entropy_key(),
                                                                         out_ + used_++ * kCheckedPerLaunch);
        WB_LAUNCH_CHECK();
        sides_.push_back(side);
    }
    // The verdict on every launch of `side` so far: the first wrong one fails.
    Check verdict(int side = 0) {
        const std::vector<Entry> all = results();
        Check r = judge({}, tolerance_for(p_, s_.k), "");
        int launches = 0;
        for (int l = 0; l < used_ && r.pass; ++l) {
            if (sides_[l] != side) continue;
            const Check c =
                judge({all.begin() + l * kCheckedPerLaunch, all.begin() + (l + 1) * kCheckedPerLaunch},
                      tolerance_for(p_, s_.k), "launch " + std::to_string(++launches) + " of the timed run");
            if (!c.pass || c.rel_err > r.rel_err) r = c;
        }
        r.what += " (" + std::to_string(kCheckedPerLaunch) + " entries of fresh inputs, drawn after the launch)";
        return r;
    }

private:
    T *A_, *B_;
    float* C_;
    Shape s_;
    float alpha_, beta_;
    Precision p_;
    bool b_transposed_;
    uint64_t key_ = 0;
    Entry* out_ = nullptr;
    int used_ = 0, capacity_ = 0;
    std::vector<int> sides_;
    std::vector<Entry> results() const {
        std::vector<Entry> r(size_t(used_) * kCheckedPerLaunch);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        if (used_) WB_CUDA_CHECK(cudaMemcpy(r.data(), out_, sizeof(Entry) * r.size(), cudaMemcpyDeviceToHost));
        return r;
    }
};

struct Timing {
    float median = 0, min = 0;
    std::vector<float> ms;  // every timed launch, in order
};
inline Timing summarize(std::vector<float> ms) {
    Timing t{0, 0, ms};
    std::sort(ms.begin(), ms.end());
    if (!ms.empty()) t.median = (ms[(ms.size() - 1) / 2] + ms[ms.size() / 2]) / 2, t.min = ms[0];
    return t;
}

// `warmup` untimed launches, then `reps` launches each between its own two events, all queued back
// to back and read once at the end, each with fresh inputs before it and a check after it.
template <class T, class Launch>
Timing time_fresh(Launch&& launch, int warmup, int reps, FreshInputs<T>& fresh, cudaStream_t stream, int side = 0) {
    std::vector<cudaEvent_t> ev(2 * reps);
    for (cudaEvent_t& e : ev) WB_CUDA_CHECK(cudaEventCreate(&e));
    fresh.batch(warmup + reps, stream);
    for (int i = -warmup; i < reps; ++i) {
        fresh.before(stream);
        if (i >= 0) WB_CUDA_CHECK(cudaEventRecord(ev[2 * i], stream));
        launch(stream);
        if (i >= 0) WB_CUDA_CHECK(cudaEventRecord(ev[2 * i + 1], stream));
        fresh.after(stream, side);
    }
    std::vector<float> ms(reps);
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int i = 0; i < reps; ++i) WB_CUDA_CHECK(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]));
    for (cudaEvent_t& e : ev) cudaEventDestroy(e);
    return summarize(ms);
}

}  // namespace wb
