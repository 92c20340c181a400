// cublas_costs.cuh - what using cuBLAS costs besides the GEMM itself: the CUDA context, creating
// and destroying a handle, the first call (kernels loaded, heuristics run), and the steady state.
//
// These are one-time costs of a process or of a handle, so they are measured with the host's
// wall clock (std::chrono::steady_clock) around the call AND a synchronize: CUDA events only see
// GPU work, while most of these costs are host work (loading code, allocating, choosing a kernel).
// Each one happens once, so each is measured once; only the steady state is a median.
//
// Every measurement uses handles made here, not the harness's shared handle (wb::cublas_handle()),
// and the program runs this section before the sweep, so "first" really is first in the process.
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "cuda_handles.cuh"
#include "kernels.cuh"

namespace ch07::costs {

// The chapter's two extra options (besides the common ones).
struct Settings {
    bool costs_only = false;  // --costs-only: measure the costs, skip the sweep
    bool no_costs = false;    // --no-costs: the sweep only (make bench runs one shape per process)
};

inline std::vector<wb::ExtraOption> extra_options(Settings& s) {
    return {
        {"costs-only", "measure what using cuBLAS costs (handle, first call), no sweep", nullptr,
         &s.costs_only},
        {"no-costs", "run the sweep only, without the cost measurements", nullptr, &s.no_costs},
    };
}

// Returns false (with one sentence in `error`) for a combination that makes no sense.
inline bool check_settings(const Settings& s, std::string& error) {
    if (s.costs_only && s.no_costs) {
        error = "--costs-only and --no-costs exclude each other";
        return false;
    }
    return true;
}

// The shape of the cost measurements, and a second one for "a new shape on a warm handle".
constexpr wb::Shape kCostShape{1024, 1024, 1024};
constexpr wb::Shape kNewShape{1000, 1013, 777};
constexpr int kHandleRepeats = 10;  // create/destroy pairs for the median of the steady cost

using Clock = std::chrono::steady_clock;
inline double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The first CUDA calls of the process. Negative = not measured (no device, or not first).
struct ProcessStart {
    double driver_init_ms = -1;  // cudaGetDeviceCount: the runtime and the driver initialise
    double context_ms = -1;      // cudaFree(nullptr): creates the device's primary context
};

// Call this before anything else touches CUDA. Without a usable device it measures nothing and
// returns; the caller then lets wb::require_device print the usual message and exit with 3.
inline ProcessStart measure_process_start() {
    ProcessStart p;
    Clock::time_point t0 = Clock::now();
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) return p;
    p.driver_init_ms = ms_since(t0);
    t0 = Clock::now();
    if (cudaFree(nullptr) != cudaSuccess) return p;  // freeing nothing: the classic "make the context"
    p.context_ms = ms_since(t0);
    return p;
}

struct Costs {
    double create_first_ms = -1;         // cublasCreate, the first in the process
    double first_call_ms = -1;           // first cublasSgemm on that handle, kCostShape
    double second_call_ms = -1;          // the same call again
    double steady_wall_ms = -1;          // median wall clock of a call + synchronize
    double steady_gpu_ms = -1;           // median GPU time of a call (CUDA events)
    double new_shape_first_ms = -1;      // first call of kNewShape on the warm handle
    double tf32_first_ms = -1;           // first call in TF32 math mode (needs sm_80; else -1)
    double fp16_first_ms = -1;           // first cublasGemmEx with FP16 inputs
    double create_second_ms = -1;        // a second handle: cublasCreate
    double second_handle_first_ms = -1;  // ... and its first call (kCostShape)
    double destroy_ms = -1;              // cublasDestroy of that second handle
    double create_again_ms = -1;         // median of kHandleRepeats create ...
    double destroy_again_ms = -1;        // ... and destroy pairs
    int reps = 0;
};

// Measures everything in Costs on device `dev` (the context must exist). `reps` timed calls for
// the steady state. Throws wb::CudaError on a CUDA or cuBLAS error.
inline Costs measure(const wb::DeviceFacts& dev, int reps) {
    Costs c;
    c.reps = reps;
    const wb::Shape s = kCostShape, s2 = kNewShape;
    // Buffers big enough for both shapes, with seeded random data (the values do not change the
    // time, but constant data would be a bad habit to show).
    const size_t a_count = std::max(size_t(s.m) * s.k, size_t(s2.m) * s2.k);
    const size_t b_count = std::max(size_t(s.k) * s.n, size_t(s2.k) * s2.n);
    const size_t c_count = std::max(size_t(s.m) * s.n, size_t(s2.m) * s2.n);
    std::vector<float> host_a(a_count), host_b(b_count);
    wb::fill_random(host_a.data(), a_count, 7, 1);
    wb::fill_random(host_b.data(), b_count, 7, 2);
    wb::DeviceBuffer<float> A(a_count), B(b_count), C(c_count);
    A.upload(host_a);
    B.upload(host_b);
    std::vector<__half> half_a(a_count), half_b(b_count);
    for (size_t i = 0; i < a_count; ++i) half_a[i] = __half(__half_raw{wb::fp16_bits(host_a[i])});
    for (size_t i = 0; i < b_count; ++i) half_b[i] = __half(__half_raw{wb::fp16_bits(host_b[i])});
    wb::DeviceBuffer<__half> A16(a_count), B16(b_count);
    A16.upload(half_a);
    B16.upload(half_b);

    const wb::Stream stream;
    auto sgemm_on = [&](cublasHandle_t h, wb::Shape sh) {
        sgemm_row_major(h, sh.m, sh.n, sh.k, 1.0f, A.get(), B.get(), 0.0f, C.get());
    };
    // One SGEMM on handle h, timed on the host from the call until the GPU has finished it.
    auto timed_call = [&](cublasHandle_t h, wb::Shape sh) {
        const Clock::time_point t0 = Clock::now();
        sgemm_on(h, sh);
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        return ms_since(t0);
    };

    cublasHandle_t h = nullptr;
    Clock::time_point t0 = Clock::now();
    WB_CUBLAS_CHECK(cublasCreate(&h));
    c.create_first_ms = ms_since(t0);
    WB_CUBLAS_CHECK(cublasSetStream(h, stream));

    c.first_call_ms = timed_call(h, s);
    c.second_call_ms = timed_call(h, s);
    std::vector<float> wall;
    for (int i = 0; i < reps; ++i) wall.push_back(static_cast<float>(timed_call(h, s)));
    c.steady_wall_ms = wb::summarize(wall).ms_median;
    c.steady_gpu_ms = wb::time_launches([&](cudaStream_t) { sgemm_on(h, s); }, 1, reps, stream).ms_median;
    c.new_shape_first_ms = timed_call(h, s2);

    if (dev.cc_number() >= 80) {
        MathModeScope tf32(h, CUBLAS_TF32_TENSOR_OP_MATH);
        c.tf32_first_ms = timed_call(h, s);
    }
    {
        // cublasGemmEx with FP16 inputs through the harness's launcher, on the harness's shared
        // handle. That handle gets one FP32 call first, untimed, so that what is timed is the
        // FP16 kernels' first use and not the handle's own first-call setup.
        wb::cublas_sgemm(s.m, s.n, s.k, 1.0f, A.get(), B.get(), 0.0f, C.get(), stream);
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        t0 = Clock::now();
        wb::cublas_hgemm(s.m, s.n, s.k, 1.0f, A16.get(), B16.get(), 0.0f, C.get(), stream);
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        c.fp16_first_ms = ms_since(t0);
    }

    // A second handle in the same process: what is left of the first-call cost when the kernels
    // are already loaded is the per-handle part.
    cublasHandle_t h2 = nullptr;
    t0 = Clock::now();
    WB_CUBLAS_CHECK(cublasCreate(&h2));
    c.create_second_ms = ms_since(t0);
    WB_CUBLAS_CHECK(cublasSetStream(h2, stream));
    c.second_handle_first_ms = timed_call(h2, s);
    t0 = Clock::now();
    WB_CUBLAS_CHECK(cublasDestroy(h2));
    c.destroy_ms = ms_since(t0);

    std::vector<float> create_ms, destroy_ms;
    for (int i = 0; i < kHandleRepeats; ++i) {
        cublasHandle_t tmp = nullptr;
        t0 = Clock::now();
        WB_CUBLAS_CHECK(cublasCreate(&tmp));
        create_ms.push_back(static_cast<float>(ms_since(t0)));
        t0 = Clock::now();
        WB_CUBLAS_CHECK(cublasDestroy(tmp));
        destroy_ms.push_back(static_cast<float>(ms_since(t0)));
    }
    c.create_again_ms = wb::summarize(create_ms).ms_median;
    c.destroy_again_ms = wb::summarize(destroy_ms).ms_median;

    WB_CUBLAS_CHECK(cublasDestroy(h));
    // The shared handle still points at `stream`: point it back at the default stream before the
    // stream goes away (the harness sets its own stream on every call anyway).
    WB_CUBLAS_CHECK(cublasSetStream(wb::cublas_handle(), nullptr));
    return c;
}

// One line of the table: what, then the time (or "-" when not measured, e.g. TF32 before sm_80).
inline std::string cost_line(const char* what, double ms) {
    char buf[160];
    if (ms < 0)
        std::snprintf(buf, sizeof buf, "  %-66s %10s\n", what, "-");
    else
        std::snprintf(buf, sizeof buf, "  %-66s %10.3f ms\n", what, ms);
    return buf;
}

inline std::string format(const ProcessStart& p, const Costs& c) {
    std::string out;
    out += "What using cuBLAS costs besides the GEMM (host wall clock; SGEMM " + wb::to_string(kCostShape) +
           "):\n";
    out += cost_line("CUDA runtime + driver initialisation (cudaGetDeviceCount)", p.driver_init_ms);
    out += cost_line("CUDA context creation (cudaFree(nullptr))", p.context_ms);
    out += cost_line("cublasCreate, the first in this process", c.create_first_ms);
    out += cost_line("cublasSgemm, first call on that handle (incl. synchronize)", c.first_call_ms);
    out += cost_line("cublasSgemm, second call (incl. synchronize)", c.second_call_ms);
    const std::string median = "(median of " + std::to_string(c.reps) + ")";
    out += cost_line(("steady state: wall clock per call + synchronize " + median).c_str(), c.steady_wall_ms);
    out += cost_line(("steady state: GPU time per call, CUDA events " + median).c_str(), c.steady_gpu_ms);
    out += cost_line(("first call of a new shape, " + wb::to_string(kNewShape) + ", warm handle").c_str(),
                     c.new_shape_first_ms);
    out += cost_line("first call in CUBLAS_TF32_TENSOR_OP_MATH (TF32 kernels; sm_80+)", c.tf32_first_ms);
    out += cost_line("first cublasGemmEx with FP16 inputs (FP16 kernels)", c.fp16_first_ms);
    out += cost_line("a second handle: cublasCreate", c.create_second_ms);
    out += cost_line("a second handle: its first cublasSgemm, same shape", c.second_handle_first_ms);
    out += cost_line("cublasDestroy (waits for the GPU)", c.destroy_ms);
    const std::string again = "(median of " + std::to_string(kHandleRepeats) + " pairs)";
    out += cost_line(("cublasCreate again " + again).c_str(), c.create_again_ms);
    out += cost_line(("cublasDestroy again " + again).c_str(), c.destroy_again_ms);
    out +=
        "Measured on handles made here, before the harness's shared handle existed (only the FP16 line\n"
        "uses that one, after one untimed call): nothing was warm. So: create one handle per thread and\n"
        "keep it, and time only after a warm-up call of every shape and precision you time.\n\n";
    return out;
}

}  // namespace ch07::costs
