// part2_crossover.cuh - part 2: C = A * B for a program whose data starts and ends in host memory.
//
// The GPU's time is then  copy A and B in + the GEMM + copy C out + what the host spends issuing
// and waiting (launch and synchronize, a few microseconds). The copies move 3 S^2 floats, the
// GEMM does 2 S^3 flops: copies grow like S^2, the GEMM like S^3. At small S the fixed costs and
// the copies dominate and a CPU that already holds the data in its caches finishes first; at large
// S the GPU's arithmetic rate wins by far. The crossover is the size from which the GPU wins.
//
// Each GPU run is timed two ways: CUDA events between the steps (what the GPU spent on each) and
// the host's clock around the whole (what the program waited). Their difference is the launch and
// synchronize overhead. CPU paths are timed with the host's clock.
#pragma once

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../01_cpu_matmul/cpu_kernels.h"
#include "cuda_handles.cuh"
#include "gemm_harness.cuh"
#include "products.cuh"

namespace ch08 {

// One end-to-end GPU run's parts (milliseconds).
struct GpuRunParts {
    double total = 0, h2d = 0, kernel = 0, d2h = 0, overhead = 0;
};

// Times `gemm` with copies from and to host memory `hA`, `hB`, `hC` (pinned or pageable).
class GpuEndToEnd {
public:
    // C = alpha A B + beta C. With beta != 0 the initial C (in hC) is copied in too: it is input.
    // ([[maybe_unused]]: in the starter kit the copies of hA and hB are the student's to write.)
    GpuRunParts run(SgemmFn gemm, wb::Shape s, float alpha, float beta, [[maybe_unused]] const float* hA,
                    [[maybe_unused]] const float* hB, float* hC, Matrices& dev) {
        const Clock::time_point t0 = Clock::now();
        WB_CUDA_CHECK(cudaEventRecord(ev_[0], stream_));
        // BEGIN SOLUTION: copy A and B (and C when beta != 0) from the host into dev, on stream_
        WB_CUDA_CHECK(cudaMemcpyAsync(dev.A.get(), hA, a_count(s) * sizeof(float), cudaMemcpyHostToDevice, stream_));
        WB_CUDA_CHECK(cudaMemcpyAsync(dev.B.get(), hB, b_count(s) * sizeof(float), cudaMemcpyHostToDevice, stream_));
        if (beta != 0.0f)
            WB_CUDA_CHECK(cudaMemcpyAsync(dev.C.get(), hC, c_count(s) * sizeof(float), cudaMemcpyHostToDevice, stream_));
        // END SOLUTION
        WB_CUDA_CHECK(cudaEventRecord(ev_[1], stream_));
        gemm(s.m, s.n, s.k, alpha, dev.A.get(), dev.B.get(), beta, dev.C.get(), stream_);
        WB_LAUNCH_CHECK();
        WB_CUDA_CHECK(cudaEventRecord(ev_[2], stream_));
        WB_CUDA_CHECK(cudaMemcpyAsync(hC, dev.C.get(), c_count(s) * sizeof(float), cudaMemcpyDeviceToHost, stream_));
        WB_CUDA_CHECK(cudaEventRecord(ev_[3], stream_));
        WB_CUDA_CHECK(cudaStreamSynchronize(stream_));
        GpuRunParts p;
        p.total = ms_since(t0);
        p.h2d = wb::elapsed_ms(ev_[0], ev_[1]);
        p.kernel = wb::elapsed_ms(ev_[1], ev_[2]);
        p.d2h = wb::elapsed_ms(ev_[2], ev_[3]);
        p.overhead = std::max(0.0, p.total - (p.h2d + p.kernel + p.d2h));
        return p;
    }
    cudaStream_t stream() const { return stream_; }

private:
    wb::Stream stream_;
    wb::Event ev_[4];  // before the copies in, the GEMM, the copy out, and after it
};

struct CrossoverRow {
    wb::Shape shape;
    int size = 0;      // the cube with as many multiply-adds: S = round((M N K)^(1/3))
    std::string path;  // gpu_cublas_pinned, cpu_openblas_16t, ...
    bool gpu = false;
    double total_ms = -1, min_ms = -1;  // median and minimum of the end-to-end time
    double h2d_ms = 0, kernel_ms = 0, d2h_ms = 0, overhead_ms = 0;  // the median run's parts (GPU)
    int reps = 0;
    std::string status;  // PASS, FAIL, skipped (...)
    double rel_err = -1;
};

// Fewer repetitions where one run is long: `max_reps`, but no more than fit in `budget_ms`
// (at least one). The first, untimed run gives the estimate.
inline int reps_within(double estimate_ms, int max_reps, double budget_ms) {
    if (estimate_ms <= 0) return max_reps;
    return std::max(1, std::min(max_reps, int(budget_ms / estimate_ms)));
}

// The size from which the GPU wins at every larger measured size too: the smallest size s such
// that gpu_ms < cpu_ms at s and at every size after it (sizes ascending, negative = not measured
// and skipped). 0 when the GPU never wins for good; the first size when it always wins.
inline int crossover_size(const std::vector<int>& sizes, const std::vector<double>& gpu_ms,
                          const std::vector<double>& cpu_ms) {
    int answer = 0;
    for (size_t i = sizes.size(); i-- > 0;) {
        if (gpu_ms[i] < 0 || cpu_ms[i] < 0) continue;
        if (gpu_ms[i] < cpu_ms[i])
            answer = sizes[i];
        else
            break;
    }
    return answer;
}

struct CrossoverSettings {
    std::vector<wb::Shape> shapes;  // ascending sizes; cubes for the picture, any shape works
    float alpha = 1.0f, beta = 0.0f;
    std::vector<wb::SgemmVariant> gpu;  // the GEMMs to run on the GPU (cuBLAS, chapter 05's best)
    int max_reps = 10;
    uint64_t seed = 2024;
    bool check = true;
    double budget_ms = 1500;      // per path and size, after the first run
    double naive_limit_ms = 2000; // the naive CPU loop runs only where it is expected below this
};

// Runs every path at every size. The naive CPU loop's time at the next size is predicted from the
// last one (x (S'/S)^3); once that passes naive_limit_ms it is skipped, and its row says so.
// `progress` (optional) gets one line per size.
inline std::vector<CrossoverRow> measure_crossover(const CrossoverSettings& set, FILE* progress = nullptr) {
    std::vector<CrossoverRow> rows;
    const int threads = ch01::all_threads();
    const std::string t = "_" + std::to_string(threads) + "t";
    struct CpuPath {
        std::string name;
        ch01::CpuSgemmFn fn;
        bool naive;
    };
    std::vector<CpuPath> cpu_paths = {{"cpu_naive_1t", ch01::sgemm_naive_ijk, true},
                                      {"cpu_blocked_omp" + t, ch01::sgemm_blocked_omp, false}};
#ifdef WB_HAVE_OPENBLAS
    cpu_paths.push_back({"cpu_openblas" + t, ch01::sgemm_openblas_all, false});
#endif
    double naive_last_ms = -1;
    double naive_last_macs = 0;
    GpuEndToEnd gpu_runner;

    for (const wb::Shape s : set.shapes) {
        const double macs = double(s.m) * s.n * s.k;
        const int S = int(std::lround(std::cbrt(macs)));
        if (progress) {
            std::fprintf(progress, "crossover: %s ...\n", wb::to_string(s).c_str());
            std::fflush(progress);
        }
        Matrices host(s, Memory::pinned, set.seed, true);
        Matrices dev(s, Memory::device, set.seed, false);
        // With beta != 0 the initial C is seeded input too; every run starts from it.
        std::vector<float> c0;
        if (set.beta != 0.0f) {
            c0.resize(c_count(s));
            wb::fill_random(c0.data(), c0.size(), set.seed, kStreamC);
        }
        auto reset_c = [&](float* C) {
            if (c0.empty())
                poison_host(C, c_count(s));  // beta == 0 never reads C: NaN shows an unwritten entry
            else
                std::copy(c0.begin(), c0.end(), C);
        };
        std::unique_ptr<ProductReference> ref;
        if (set.check)
            ref = std::make_unique<ProductReference>(s, host.A.get(), host.B.get(), set.seed, set.alpha, set.beta,
                                                     c0.empty() ? nullptr : c0.data());
        auto finish = [&](CrossoverRow& row, const float* C) {
            if (!ref) {
                row.status = "unchecked";
                return;
            }
            const wb::CheckResult c = ref->check(C);
            row.status = c.pass ? "PASS" : "FAIL";
            row.rel_err = c.rel_err;
        };

        // GPU: pinned buffers for every GEMM, and cuBLAS once more from pageable memory.
        std::vector<float> pageA(host.A.get(), host.A.get() + host.A.size());
        std::vector<float> pageB(host.B.get(), host.B.get() + host.B.size());
        std::vector<float> pageC(host.C.size());
        struct GpuPath {
            std::string name;
            SgemmFn fn;
            const float *a, *b;
            float* c;
        };
        std::vector<GpuPath> gpu_paths;
        for (const wb::SgemmVariant& v : set.gpu)
            gpu_paths.push_back({std::string("gpu_") + v.name + "_pinned", v.run, host.A.get(), host.B.get(), host.C.get()});
        if (!set.gpu.empty())
            gpu_paths.push_back({std::string("gpu_") + set.gpu[0].name + "_pageable", set.gpu[0].run, pageA.data(),
                                 pageB.data(), pageC.data()});
        for (const GpuPath& g : gpu_paths) {
            CrossoverRow row;
            row.shape = s;
            row.size = S;
            row.path = g.name;
            row.gpu = true;
            reset_c(g.c);
            const GpuRunParts first = gpu_runner.run(g.fn, s, set.alpha, set.beta, g.a, g.b, g.c, dev);  // untimed
            row.reps = reps_within(first.total, set.max_reps, set.budget_ms);
            std::vector<GpuRunParts> runs;
            std::vector<double> totals;
            for (int r = 0; r < row.reps; ++r) {
                reset_c(g.c);  // untimed, on the host
                runs.push_back(gpu_runner.run(g.fn, s, set.alpha, set.beta, g.a, g.b, g.c, dev));
                totals.push_back(runs.back().total);
            }
            row.total_ms = median(totals);
            row.min_ms = *std::min_element(totals.begin(), totals.end());
            size_t pick = 0;
            for (size_t i = 1; i < runs.size(); ++i)
                if (std::abs(runs[i].total - row.total_ms) < std::abs(runs[pick].total - row.total_ms)) pick = i;
            row.h2d_ms = runs[pick].h2d;
            row.kernel_ms = runs[pick].kernel;
            row.d2h_ms = runs[pick].d2h;
            row.overhead_ms = runs[pick].overhead;
            finish(row, g.c);
            rows.push_back(row);
        }

        // CPU: the same pinned host matrices (pinned memory is ordinary memory to the CPU).
        for (const CpuPath& c : cpu_paths) {
            CrossoverRow row;
            row.shape = s;
            row.size = S;
            row.path = c.name;
            if (c.naive) {
                // Without a smaller size measured before, assume 2 ns per multiply-add: the naive
                // loop's pace once B's columns miss the cache (chapter 01), on the slow side.
                const double predicted = naive_last_ms >= 0 ? naive_last_ms * macs / naive_last_macs : 2e-6 * macs;
                if (predicted > set.naive_limit_ms) {
                    char why[96];
                    std::snprintf(why, sizeof why, "skipped (expected %.1f s; limit %.1f s)", predicted / 1000,
                                  set.naive_limit_ms / 1000);
                    row.status = why;
                    rows.push_back(row);
                    continue;
                }
            }
            reset_c(host.C.get());
            Clock::time_point t0 = Clock::now();
            c.fn(s.m, s.n, s.k, set.alpha, host.A.get(), host.B.get(), set.beta, host.C.get());
            const double first = ms_since(t0);
            finish(row, host.C.get());
            // A first run longer than the budget is the measurement itself (the caches are not
            // what makes seconds of work slow); shorter ones were the warm-up.
            std::vector<double> times;
            if (first > set.budget_ms) {
                times.push_back(first);
            } else {
                const int reps = reps_within(first, set.max_reps, set.budget_ms);
                for (int r = 0; r < reps; ++r) {
                    reset_c(host.C.get());
                    t0 = Clock::now();
                    c.fn(s.m, s.n, s.k, set.alpha, host.A.get(), host.B.get(), set.beta, host.C.get());
                    times.push_back(ms_since(t0));
                }
            }
            row.reps = int(times.size());
            row.total_ms = median(times);
            row.min_ms = *std::min_element(times.begin(), times.end());
            if (c.naive) {
                naive_last_ms = row.total_ms;
                naive_last_macs = macs;
            }
            rows.push_back(row);
        }
#ifndef WB_HAVE_OPENBLAS
        CrossoverRow none;
        none.shape = s;
        none.size = S;
        none.path = "cpu_openblas" + t;
        none.status = "skipped (OpenBLAS not built in)";
        rows.push_back(none);
#endif
    }
    return rows;
}

// Per size: the fastest GPU path from pinned memory and the fastest CPU path (-1 where none ran).
struct CrossoverSummary {
    std::vector<int> sizes;
    std::vector<double> gpu_ms, cpu_ms;
    std::vector<std::string> gpu_path, cpu_path;
    int crossover = 0;
};

inline CrossoverSummary summarize_crossover(const std::vector<CrossoverRow>& rows) {
    CrossoverSummary out;
    for (const CrossoverRow& r : rows) {
        if (out.sizes.empty() || out.sizes.back() != r.size) {
            out.sizes.push_back(r.size);
            out.gpu_ms.push_back(-1);
            out.cpu_ms.push_back(-1);
            out.gpu_path.push_back("");
            out.cpu_path.push_back("");
        }
        if (r.total_ms < 0 || r.status == "FAIL") continue;
        if (r.gpu && r.path.find("_pageable") != std::string::npos) continue;
        double& best = r.gpu ? out.gpu_ms.back() : out.cpu_ms.back();
        if (best < 0 || r.total_ms < best) {
            best = r.total_ms;
            (r.gpu ? out.gpu_path.back() : out.cpu_path.back()) = r.path;
        }
    }
    out.crossover = crossover_size(out.sizes, out.gpu_ms, out.cpu_ms);
    return out;
}

}  // namespace ch08
