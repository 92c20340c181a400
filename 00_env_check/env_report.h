// env_report.h - what chapter 00 gathers about a machine (the Report) and the small text and
// rate helpers every part of the program shares.
//
// Nothing here calls CUDA. The program (00_env_check.cu) asks the driver and fills a Report;
// env_checks.h judges it (versions, code for this GPU, tools, the verdict) and env_json.h writes
// it as JSON. All three are pure host code, so the tests run them on machines without a GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace env {

// "Not measured" for every double below: printed as "-", written to JSON as null.
constexpr double kNotMeasured = NAN;
inline bool measured(double v) { return std::isfinite(v); }

// ---- what the program gathers --------------------------------------------------------------

// The measured ceilings of one GPU (see kernels.cuh for how).
struct Ceilings {
    bool ran = false;
    std::string error;  // the CUDA error that stopped the measurement, if any
    int warmup = 0, reps = 0;
    // FP32 FMA throughput
    long long fma_threads = 0;
    int fma_waves = 0;
    double fma_flops = 0;  // FLOP per launch
    double fma_ms_median = kNotMeasured, fma_ms_min = kNotMeasured;
    double fma_gflops = kNotMeasured;
    double sm_clock_ghz = kNotMeasured;  // the SM clock while the FMA kernel ran
    // DRAM bandwidth: bytes read + bytes written per copy
    double copy_buffer_bytes = 0;
    double copy_bytes = 0;
    double copy_kernel_ms_median = kNotMeasured, copy_kernel_ms_min = kNotMeasured;
    double copy_kernel_gbs = kNotMeasured;
    double memcpy_ms_median = kNotMeasured, memcpy_ms_min = kNotMeasured;
    double memcpy_gbs = kNotMeasured;
};

// The small cuBLAS SGEMM that proves the library and the harness's checker work here.
struct SmokeTest {
    bool ran = false;
    bool pass = false;
    std::string shape;           // "257x255x259"
    double rel_err = kNotMeasured;
    std::string detail;          // what was compared, or why it failed
};

struct Gpu {
    int id = 0;
    std::string name;
    int cc_major = 0, cc_minor = 0;
    std::string pci_bus_id;
    int sms = 0, fp32_lanes_per_sm = 0;
    double clock_ghz = 0, mem_clock_ghz = 0;
    int bus_width_bits = 0;
    double memory_bytes = 0, memory_free_bytes = 0;
    int l2_bytes = 0;
    int smem_per_block = 0, smem_per_block_optin = 0, smem_per_sm = 0, smem_reserved_per_block = 0;
    int regs_per_block = 0, regs_per_sm = 0, warp_size = 0;
    int max_threads_per_block = 0, max_threads_per_sm = 0, max_blocks_per_sm = 0;
    int max_block_dim[3] = {0, 0, 0}, max_grid_dim[3] = {0, 0, 0};
    bool kernel_timeout = false, integrated = false, ecc = false;
    double peak_fp32_gflops = 0, peak_bandwidth_gbs = 0;
    double peak_fp16_tc_gflops = 0, peak_tf32_tc_gflops = 0;  // 0: not known for this GPU
    std::string query_error;   // set when the driver could not even describe this GPU
    std::string kernel_image;  // "ok", "missing", or the CUDA error of the probe launch
    std::string rebuild_hint;  // "make clean && make ARCH=sm_90"
    Ceilings ceilings;         // measured on GPU 0 only: the one the chapters use
    SmokeTest cublas;          // GPU 0 only

    int cc_number() const { return cc_major * 10 + cc_minor; }
    std::string cc() const { return std::to_string(cc_major) + "." + std::to_string(cc_minor); }
    std::string sm() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

// A command-line tool the workbook uses (nvcc, ncu, compute-sanitizer).
struct Tool {
    std::string name;
    std::string path;  // where it was found, "" if nowhere
    bool on_path = false;  // found through $PATH (else only in a known folder, or not at all)
    std::string needed_for;  // "make profile-NN"
};

struct Report {
    std::string program = "00_env_check";
    std::string git, timestamp;
    bool quick = false;
    int driver_version = 0;   // newest CUDA the driver supports; 0: no driver found
    int runtime_version = 0;  // the CUDA runtime this program was built with
    std::vector<int> built_for;  // compute capabilities compiled in, e.g. {75, 80, 90}
    std::string device_error;    // why no GPU can be used ("" when gpu_count > 0)
    std::vector<Gpu> gpus;
    std::vector<Tool> tools;
    int profiling_admin_only = -1;  // RmProfilingAdminOnly: 1, 0, or -1 unknown
    bool running_as_root = false;
    bool wsl = false;
};

// ---- small formatting helpers ----------------------------------------------------------------

// printf into a std::string.
inline std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string strf(const char* fmt, ...) {
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    const int length = std::vsnprintf(nullptr, 0, fmt, args);  // first pass: just the length
    va_end(args);
    std::string text(length > 0 ? size_t(length) : 0, '\0');
    if (length > 0) std::vsnprintf(&text[0], text.size() + 1, fmt, again);
    va_end(again);
    return text;
}

// Sizes the way a student reads them: 48 KiB, 50.0 MiB, 139.80 GiB (powers of 1024).
inline std::string bytes_text(double bytes) {
    if (bytes >= 1024.0 * 1024 * 1024) return strf("%.2f GiB", bytes / (1024.0 * 1024 * 1024));
    if (bytes >= 1024.0 * 1024) return strf("%.1f MiB", bytes / (1024.0 * 1024));
    if (bytes >= 1024.0) return strf("%.0f KiB", bytes / 1024.0);
    return strf("%.0f B", bytes);
}

// Rates: 1 GB/s = 10^9 bytes per second and 1 GFLOP/s = 10^9 FLOP per second, as in every
// data sheet. A time in milliseconds is 10^-3 s, hence the 10^6.
inline double per_second_1e9(double amount, double ms) { return amount / (ms * 1e6); }

inline double percent(double part, double whole) {
    return (measured(part) && whole > 0) ? 100.0 * part / whole : kNotMeasured;
}

// The FP32 peak at the SM clock measured during the FMA run instead of the maximum clock: the
// rate the FMA units can reach at the clock the GPU actually chose (power and heat limit it).
inline double peak_at_measured_clock(const Gpu& g) {
    return measured(g.ceilings.sm_clock_ghz) && g.clock_ghz > 0
               ? g.peak_fp32_gflops * g.ceilings.sm_clock_ghz / g.clock_ghz
               : kNotMeasured;
}


// The memory ceiling to compare kernels with: the better of the two measured copies.
inline double best_bandwidth_gbs(const Ceilings& c) {
    const double best = std::max(measured(c.copy_kernel_gbs) ? c.copy_kernel_gbs : 0.0,
                                 measured(c.memcpy_gbs) ? c.memcpy_gbs : 0.0);
    return best > 0 ? best : kNotMeasured;
}

// The lowest SM clock at which `gflops` of FP32 FMAs are possible on this GPU: every lane does at
// most one FMA (2 FLOP) per cycle.
inline double min_clock_for_gflops(const Gpu& g, double gflops) {
    const double lanes = double(g.sms) * g.fp32_lanes_per_sm;
    return lanes > 0 && measured(gflops) ? gflops / (lanes * 2.0) : kNotMeasured;
}

}  // namespace env
