// timer.cuh - timing GPU work with CUDA events.
//
// Launches are asynchronous: a host clock read right after a launch measures only the launch.
// Events are recorded into the stream around the work and read after it finished, so they time
// the GPU itself. We warm up first (module load, cuBLAS heuristics, clocks ramping up), then time
// each launch on its own and report the median (robust to a stray slow run) and the minimum.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.cuh"

namespace wb {

struct Timing {
    double ms_median = 0;
    double ms_min = 0;
    std::vector<float> ms_all;  // in launch order
};

// Median and minimum of a list of times (the median of an even count is the mean of the middle two).
inline Timing summarize(std::vector<float> ms) {
    Timing t;
    t.ms_all = ms;
    if (ms.empty()) return t;
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    t.ms_median = n % 2 ? ms[n / 2] : 0.5 * (double(ms[n / 2 - 1]) + ms[n / 2]);
    t.ms_min = ms.front();
    return t;
}

// Times `launch(stream)`: `warmup` untimed calls, then `reps` calls each between its own pair of
// events. Any CUDA error during the runs throws wb::CudaError.
template <class Launch>
Timing time_launches(Launch&& launch, int warmup, int reps, cudaStream_t stream) {
    cudaEvent_t start, stop;
    WB_CUDA_CHECK(cudaEventCreate(&start));
    WB_CUDA_CHECK(cudaEventCreate(&stop));
    std::vector<float> ms;
    try {
        for (int i = 0; i < warmup; ++i) launch(stream);
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        for (int i = 0; i < reps; ++i) {
            WB_CUDA_CHECK(cudaEventRecord(start, stream));
            launch(stream);
            WB_CUDA_CHECK(cudaEventRecord(stop, stream));
            WB_CUDA_CHECK(cudaEventSynchronize(stop));
            float t = 0;
            WB_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
            ms.push_back(t);
        }
    } catch (...) {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        throw;
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return summarize(std::move(ms));
}

}  // namespace wb
