// part1_transfers.cuh - part 1: how fast data reaches the GPU, and why pinned memory matters.
//
// The copy engines move data by DMA, which needs host pages that stay where they are. Pinned
// (page-locked) memory from cudaMallocHost is such memory: the engines read it directly, at the
// link's rate, and cudaMemcpyAsync from it returns before the copy is done. Ordinary (pageable)
// memory is first copied by a CPU core into a pinned staging buffer of the driver, chunk by chunk:
// two copies, and no overlap with the caller. The same cudaMemcpyAsync is timed from both below.
//
// What the link could carry at most is read from the device (host_link.cuh); the table shows each
// copy's rate as a share of it.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_handles.cuh"
#include "host_link.cuh"
#include "products.cuh"
#include "timer.cuh"

namespace ch08 {

struct TransferRow {
    const char* direction;  // "H2D" or "D2H"
    const char* host;       // "pageable" or "pinned"
    size_t bytes = 0;
    double ms_median = 0, ms_min = 0;
    double gbs() const { return ms_median > 0 ? bytes / (ms_median * 1e6) : 0; }
};

// Copies of `bytes` between device memory and pageable (std::vector) or pinned host memory, each
// timed with events on one stream: the median of `reps` after `warmup`. The pageable buffer is
// written first, so its pages exist: what is timed is the copy, not the first touch.
inline std::vector<TransferRow> measure_transfers(const std::vector<size_t>& sizes, int warmup, int reps) {
    size_t largest = 0;
    for (size_t b : sizes) largest = std::max(largest, b);
    Buffer<char> dev(largest, Memory::device);
    Buffer<char> pinned(largest, Memory::pinned);
    std::vector<char> pageable(largest, 1);
    std::fill(pinned.get(), pinned.get() + largest, char(1));
    const wb::Stream stream;
    std::vector<TransferRow> rows;
    for (size_t bytes : sizes)
        for (const bool h2d : {true, false})
            for (const bool is_pinned : {false, true}) {
                char* h = is_pinned ? pinned.get() : pageable.data();
                const wb::Timing t = wb::time_launches(
                    [&](cudaStream_t st) {
                        if (h2d)
                            WB_CUDA_CHECK(cudaMemcpyAsync(dev.get(), h, bytes, cudaMemcpyHostToDevice, st));
                        else
                            WB_CUDA_CHECK(cudaMemcpyAsync(h, dev.get(), bytes, cudaMemcpyDeviceToHost, st));
                    },
                    warmup, reps, stream);
                rows.push_back({h2d ? "H2D" : "D2H", is_pinned ? "pinned" : "pageable", bytes, t.ms_median, t.ms_min});
            }
    return rows;
}

}  // namespace ch08
