// env_report.h - chapter 00's host-only half: the facts the program gathers, how it judges them,
// and the JSON it writes for the report.
//
// Nothing here calls CUDA. The program (00_env_check.cu) asks the driver and fills a Report;
// everything that turns a Report into words, a verdict or JSON is a pure function, so the tests
// run it on machines without a GPU.
#pragma once

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

#include "options.h"

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

// ---- versions --------------------------------------------------------------------------------

// Can a program built with CUDA runtime `runtime` run on a driver that supports up to `driver`?
enum class VersionMatch {
    ok,           // driver >= runtime
    minor_newer,  // same major, newer minor: runs by "minor version compatibility", but PTX
                  // from the newer toolkit cannot be JIT-compiled and newest APIs may fail
    too_old,      // older major: nothing runs; update the driver
    no_driver,    // no NVIDIA driver could be loaded at all
};

inline VersionMatch match_versions(int driver, int runtime) {
    if (driver <= 0) return VersionMatch::no_driver;
    if (driver >= runtime) return VersionMatch::ok;
    if (driver / 1000 == runtime / 1000) return VersionMatch::minor_newer;
    return VersionMatch::too_old;
}

// "13.0" from 13000 (the same rule as wb::cuda_version_string, kept here so this header stays
// free of CUDA).
inline std::string version_text(int v) {
    return v <= 0 ? std::string("none") : strf("%d.%d", v / 1000, (v % 1000) / 10);
}

inline std::string describe(VersionMatch m, int driver, int runtime) {
    switch (m) {
        case VersionMatch::ok:
            return "yes (the driver supports CUDA " + version_text(driver) + " >= runtime " +
                   version_text(runtime) + ")";
        case VersionMatch::minor_newer:
            return "mostly: the runtime (" + version_text(runtime) + ") is newer than the driver (" +
                   version_text(driver) +
                   "); it runs by minor-version compatibility, but PTX cannot be JIT-compiled. "
                   "Update the NVIDIA driver.";
        case VersionMatch::too_old:
            return "NO: the driver supports only CUDA " + version_text(driver) + " but this program "
                   "was built with CUDA " + version_text(runtime) + ". Update the NVIDIA driver "
                   "(or build with an older toolkit).";
        case VersionMatch::no_driver:
            break;
    }
    return "NO: no NVIDIA driver was found (libcuda.so could not be loaded). Install the NVIDIA "
           "driver; on WSL2 install it on the Windows side only.";
}

// The marketing name of a compute capability's generation, for the reader.
inline const char* architecture_name(int major, int minor) {
    switch (major) {
        case 7: return minor >= 5 ? "Turing" : "Volta";
        case 8: return minor == 9 ? "Ada Lovelace" : "Ampere";
        case 9: return "Hopper";
        case 10:
        case 11:
        case 12: return "Blackwell";
        default: return "unknown generation";
    }
}

// ---- code in the binary for this GPU ---------------------------------------------------------

// Which of the compiled-in architectures can run on a GPU of compute capability `cc` (e.g. 86),
// given the workbook's build (common/config.mk): machine code (SASS) for every architecture in
// `built`, and PTX for the newest one only.
enum class CodeKind {
    native,      // SASS for exactly this compute capability
    compatible,  // SASS for an older minor of the same major (8.0 code runs on 8.6)
    ptx_jit,     // only PTX: the driver compiles it at the first start (slow start, not tuned)
    none,        // nothing runs: cudaErrorNoKernelImageForDevice
};
struct CodeMatch {
    CodeKind kind = CodeKind::none;
    int arch = 0;  // the compiled-in capability that is used, e.g. 80
};

inline CodeMatch code_for(const std::vector<int>& built, int cc) {
    CodeMatch best;
    for (int a : built) {
        if (a == cc) return {CodeKind::native, a};
        // SASS runs on later minors of its own major only.
        if (a / 10 == cc / 10 && a < cc && (best.kind != CodeKind::compatible || a > best.arch))
            best = {CodeKind::compatible, a};
    }
    if (best.kind == CodeKind::compatible) return best;
    const int newest = built.empty() ? 0 : *std::max_element(built.begin(), built.end());
    if (newest > 0 && cc > newest) return {CodeKind::ptx_jit, newest};
    return {};
}

inline std::string describe(const CodeMatch& m, int cc) {
    const std::string here = strf("sm_%d", cc), used = strf("sm_%d", m.arch);
    switch (m.kind) {
        case CodeKind::native: return "native code (SASS) for " + here;
        case CodeKind::compatible:
            return "SASS for " + used + ", which runs on " + here + "; build with ARCH=" + here +
                   " for code scheduled for this GPU";
        case CodeKind::ptx_jit:
            return "only PTX for " + strf("compute_%d", m.arch) + ": the driver compiles it at the "
                   "first start (slow start, not tuned); build with ARCH=" + here;
        case CodeKind::none: break;
    }
    return "none: no compiled-in architecture runs on " + here;
}

// "sm_75 sm_80 sm_90".
inline std::string arch_list_text(const std::vector<int>& built) {
    std::string s;
    for (int a : built) s += (s.empty() ? "" : " ") + strf("sm_%d", a);
    return s.empty() ? "(unknown)" : s;
}

// ---- tools on the PATH -----------------------------------------------------------------------

// True for a regular file this user may execute (a directory of the same name does not count).
inline bool is_executable_file(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// Looks `name` up the way a shell does: each folder of `path_list` (colon-separated) in order;
// an empty entry means the current folder. Returns the full path, or "" when none has it.
inline std::string find_on_path(const std::string& name, const std::string& path_list) {
    size_t start = 0;
    while (start <= path_list.size()) {
        size_t end = path_list.find(':', start);
        if (end == std::string::npos) end = path_list.size();
        std::string dir = path_list.substr(start, end - start);
        if (dir.empty()) dir = ".";
        const std::string candidate = dir + (dir.back() == '/' ? "" : "/") + name;
        if (is_executable_file(candidate)) return candidate;
        start = end + 1;
    }
    return "";
}

// The first match of `name` in folders given as glob patterns, e.g. "/opt/nvidia/nsight-compute/*".
inline std::string find_in_folders(const std::string& name, const std::vector<std::string>& patterns) {
    for (const std::string& pattern : patterns) {
        glob_t g{};
        if (::glob((pattern + "/" + name).c_str(), 0, nullptr, &g) == 0) {
            // glob sorts its matches; the last is the newest of versioned folders.
            for (size_t i = g.gl_pathc; i-- > 0;) {
                const std::string p = g.gl_pathv[i];
                if (is_executable_file(p)) {
                    ::globfree(&g);
                    return p;
                }
            }
        }
        ::globfree(&g);
    }
    return "";
}

// The folder part of a path: "/usr/local/cuda/bin" from "/usr/local/cuda/bin/ncu".
inline std::string folder_of(const std::string& path) {
    const size_t slash = path.find_last_of('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// What to tell the student about one tool.
inline std::string describe(const Tool& t, int runtime_version) {
    if (t.on_path) return t.path;
    if (!t.path.empty())
        return "not on PATH, but found at " + t.path + ": export PATH=" + folder_of(t.path) + ":$PATH";
    const std::string pkg_version = strf("%d-%d", runtime_version / 1000, (runtime_version % 1000) / 10);
    if (t.name == "ncu")
        return "not found; needed for " + t.needed_for + ". Install Nsight Compute (e.g. apt package "
               "cuda-nsight-compute-" + pkg_version + ")";
    if (t.name == "compute-sanitizer")
        return "not found; needed for " + t.needed_for + ". It ships with the CUDA toolkit (e.g. apt "
               "package cuda-sanitizer-" + pkg_version + ")";
    return "not found; needed for " + t.needed_for + ". Install the CUDA toolkit";
}

// RmProfilingAdminOnly from the text of /proc/driver/nvidia/params: 1 means only root may read
// the performance counters, so ncu fails for everyone else with ERR_NVGPUCTRPERM.
inline int profiling_admin_only(const std::string& params_text) {
    const std::string key = "RmProfilingAdminOnly:";
    const size_t at = params_text.find(key);
    if (at == std::string::npos) return -1;
    size_t i = at + key.size();
    while (i < params_text.size() && params_text[i] == ' ') ++i;
    if (i >= params_text.size() || !std::isdigit(static_cast<unsigned char>(params_text[i]))) return -1;
    return params_text[i] == '0' ? 0 : 1;
}

// WSL2 announces itself in /proc/version ("...microsoft-standard-WSL2...").
inline bool is_wsl(const std::string& proc_version) {
    std::string lower = proc_version;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return lower.find("microsoft") != std::string::npos || lower.find("wsl") != std::string::npos;
}

// ---- options ---------------------------------------------------------------------------------

// 00 parses the shared command line (so --warmup, --reps and --seed mean what they mean in every
// chapter) but measures fixed problems: the GEMM options would be silently ignored, so they are
// refused instead. Returns false with one sentence in `error`.
inline bool check_env_options(const wb::Options& opt, std::string& error) {
    const wb::Options defaults;
    const char* refused = nullptr;
    if (!opt.shapes.empty()) refused = "--m/--n/--k/--size/--sizes";
    else if (opt.alpha != defaults.alpha || opt.beta != defaults.beta) refused = "--alpha/--beta";
    else if (opt.variant != defaults.variant) refused = "--variant";
    else if (opt.check != defaults.check) refused = "--no-check";
    else if (!opt.csv.empty()) refused = "--csv";
    if (!refused) return true;
    error = std::string("this program takes no ") + refused + ": it measures fixed problems "
            "(--quick makes them smaller, --json FILE saves the results)";
    return false;
}

// ---- the verdict -----------------------------------------------------------------------------

// Problems stop chapter 01 (and set the exit status); notes are worth knowing but not blocking.
struct Verdict {
    std::vector<std::string> problems;
    std::vector<std::string> notes;
    bool ready() const { return problems.empty(); }
};

// Below these fractions of the theoretical ceiling a measurement suggests something is wrong
// with the machine (another process on the GPU, clocks locked low, a power cap, a laptop on
// battery), not with the program.
constexpr double kLowFmaPercent = 70.0;
constexpr double kLowBandwidthPercent = 60.0;

inline Verdict judge(const Report& r) {
    Verdict v;
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    if (versions == VersionMatch::no_driver || versions == VersionMatch::too_old)
        v.problems.push_back("CUDA versions: " + describe(versions, r.driver_version, r.runtime_version));
    else if (versions == VersionMatch::minor_newer)
        v.notes.push_back("update the NVIDIA driver: it is older than the CUDA runtime");

    // Without a (new enough) driver no GPU is visible: that is the one problem to fix, not two.
    if (r.gpus.empty() && v.problems.empty()) {
        v.problems.push_back("no usable CUDA GPU: " +
                             (r.device_error.empty() ? std::string("none found") : r.device_error));
    }
    for (const Gpu& g : r.gpus) {
        const std::string who = strf("GPU %d (%s)", g.id, g.name.c_str());
        if (!g.query_error.empty()) {
            (g.id == 0 ? v.problems : v.notes).push_back(who + " cannot be queried: " + g.query_error);
            continue;
        }
        if (g.kernel_image == "missing") {
            (g.id == 0 ? v.problems : v.notes)
                .push_back(who + ": this binary holds no code for " + g.sm() +
                           ". Rebuild: " + g.rebuild_hint);
        } else if (g.kernel_image != "ok") {
            (g.id == 0 ? v.problems : v.notes).push_back(who + ": a test kernel failed: " + g.kernel_image);
        }
        if (g.kernel_timeout)
            v.notes.push_back(who + " has a kernel time limit (display watchdog): keep single launches "
                              "short (smaller --size), see the README");
        if (g.id != 0) continue;
        if (!g.ceilings.error.empty()) v.problems.push_back(who + ": measuring failed: " + g.ceilings.error);
        if (g.cublas.ran && !g.cublas.pass)
            v.problems.push_back(who + ": the cuBLAS smoke test FAILED: " + g.cublas.detail);
        const double fma_pct = percent(g.ceilings.fma_gflops, g.peak_fp32_gflops);
        if (measured(fma_pct) && fma_pct < kLowFmaPercent)
            v.notes.push_back(strf("FP32 FMA reached only %.0f%% of theory: is another program using "
                                   "the GPU, or are its clocks or power capped? (nvidia-smi -q -d "
                                   "CLOCK,PERFORMANCE)", fma_pct));
        const double bw = std::max(measured(g.ceilings.copy_kernel_gbs) ? g.ceilings.copy_kernel_gbs : 0.0,
                                   measured(g.ceilings.memcpy_gbs) ? g.ceilings.memcpy_gbs : 0.0);
        const double bw_pct = percent(bw > 0 ? bw : kNotMeasured, g.peak_bandwidth_gbs);
        if (measured(bw_pct) && bw_pct < kLowBandwidthPercent)
            v.notes.push_back(strf("memory bandwidth reached only %.0f%% of theory: is another program "
                                   "using the GPU?", bw_pct));
    }
    for (const Tool& t : r.tools)
        if (!t.on_path) v.notes.push_back(t.name + ": " + describe(t, r.runtime_version));
    if (r.wsl)
        v.notes.push_back("WSL2: the Windows display watchdog (TDR, 2 s by default) ends long kernels, and "
                          "ncu needs the Windows driver's counter permission; see the README");
    if (r.profiling_admin_only == 1 && !r.running_as_root)
        v.notes.push_back("GPU performance counters are for root only (RmProfilingAdminOnly=1): ncu will "
                          "fail with ERR_NVGPUCTRPERM; see the README");
    return v;
}

// ---- JSON ------------------------------------------------------------------------------------

// A JSON string literal's contents: quotes, backslashes and control characters escaped.
// Bytes >= 0x80 (UTF-8) pass through unchanged, which JSON allows.
inline std::string json_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) out += strf("\\u%04x", c);
                else out += ch;
        }
    }
    return out;
}

// Writes indented JSON: objects, arrays and values in the order they are given, so the key order
// of the file is the order of the code below (stable from run to run).
class JsonWriter {
public:
    JsonWriter& begin_object(const char* key = nullptr) { return open(key, '{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array(const char* key = nullptr) { return open(key, '['); }
    JsonWriter& end_array() { return close(']'); }

    JsonWriter& string(const char* key, const std::string& v) {
        return raw(key, "\"" + json_escape(v) + "\"");
    }
    JsonWriter& integer(const char* key, long long v) { return raw(key, std::to_string(v)); }
    JsonWriter& boolean(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
    JsonWriter& null(const char* key) { return raw(key, "null"); }
    // JSON has no NaN or Infinity: a value that was not measured is written as null.
    JsonWriter& number(const char* key, double v) {
        return measured(v) ? raw(key, strf("%.7g", v)) : null(key);
    }
    // "" is written as null: "no error", "not found".
    JsonWriter& string_or_null(const char* key, const std::string& v) {
        return v.empty() ? null(key) : string(key, v);
    }

    const std::string& str() const { return out_; }

private:
    JsonWriter& raw(const char* key, const std::string& value) {
        next_item(key);
        out_ += value;
        return *this;
    }
    JsonWriter& open(const char* key, char bracket) {
        next_item(key);
        out_ += bracket;
        empty_.push_back(true);
        return *this;
    }
    JsonWriter& close(char bracket) {
        const bool was_empty = empty_.back();
        empty_.pop_back();
        if (!was_empty) newline();
        out_ += bracket;
        if (empty_.empty()) out_ += '\n';
        return *this;
    }
    // The comma before every item but the first of its container, then the key.
    void next_item(const char* key) {
        if (!empty_.empty()) {
            if (!empty_.back()) out_ += ',';
            empty_.back() = false;
            newline();
        }
        if (key) out_ += "\"" + json_escape(key) + "\": ";
    }
    void newline() { out_ += "\n" + std::string(2 * empty_.size(), ' '); }

    std::string out_;
    std::vector<bool> empty_;  // one entry per open container: nothing written into it yet
};

inline const char* to_string(CodeKind k) {
    switch (k) {
        case CodeKind::native: return "native";
        case CodeKind::compatible: return "compatible";
        case CodeKind::ptx_jit: return "ptx_jit";
        case CodeKind::none: break;
    }
    return "none";
}

inline void write_ceilings(JsonWriter& j, const Gpu& g) {
    const Ceilings& c = g.ceilings;
    if (!c.ran) {
        j.null("measured");
        return;
    }
    const double bandwidth = std::max(measured(c.copy_kernel_gbs) ? c.copy_kernel_gbs : 0.0,
                                      measured(c.memcpy_gbs) ? c.memcpy_gbs : 0.0);
    const double best_bw = bandwidth > 0 ? bandwidth : kNotMeasured;
    j.begin_object("measured")
        .string_or_null("error", c.error)
        .integer("warmup", c.warmup)
        .integer("reps", c.reps)
        .number("fma_gflops", c.fma_gflops)
        .number("fma_pct_peak", percent(c.fma_gflops, g.peak_fp32_gflops))
        .number("fma_ms_median", c.fma_ms_median)
        .number("fma_ms_min", c.fma_ms_min)
        .integer("fma_flops", static_cast<long long>(c.fma_flops))
        .integer("fma_threads", c.fma_threads)
        .number("sm_clock_ghz_under_load", c.sm_clock_ghz)
        .number("fma_pct_peak_at_measured_clock", percent(c.fma_gflops, peak_at_measured_clock(g)))
        .number("copy_kernel_gbs", c.copy_kernel_gbs)
        .number("copy_kernel_pct_peak", percent(c.copy_kernel_gbs, g.peak_bandwidth_gbs))
        .number("copy_kernel_ms_median", c.copy_kernel_ms_median)
        .number("copy_kernel_ms_min", c.copy_kernel_ms_min)
        .number("memcpy_gbs", c.memcpy_gbs)
        .number("memcpy_pct_peak", percent(c.memcpy_gbs, g.peak_bandwidth_gbs))
        .number("memcpy_ms_median", c.memcpy_ms_median)
        .number("memcpy_ms_min", c.memcpy_ms_min)
        .integer("copy_bytes", static_cast<long long>(c.copy_bytes))
        .number("bandwidth_gbs", best_bw)
        .number("bandwidth_pct_peak", percent(best_bw, g.peak_bandwidth_gbs))
        .number("ridge_flop_per_byte", measured(c.fma_gflops) && measured(best_bw) ? c.fma_gflops / best_bw
                                                                                   : kNotMeasured)
        .end_object();
}

inline void write_gpu(JsonWriter& j, const Gpu& g, const std::vector<int>& built_for) {
    j.begin_object()
        .integer("id", g.id)
        .string("name", g.name)
        .string("cc", g.cc())
        .string("sm", g.sm())
        .string_or_null("pci_bus_id", g.pci_bus_id)
        .string_or_null("query_error", g.query_error)
        .integer("sms", g.sms)
        .integer("fp32_lanes_per_sm", g.fp32_lanes_per_sm)
        .number("sm_clock_ghz", g.clock_ghz)
        .number("mem_clock_ghz", g.mem_clock_ghz)
        .integer("bus_width_bits", g.bus_width_bits)
        .integer("memory_bytes", static_cast<long long>(g.memory_bytes))
        .integer("memory_free_bytes", static_cast<long long>(g.memory_free_bytes))
        .integer("l2_bytes", g.l2_bytes)
        .integer("smem_per_block_bytes", g.smem_per_block)
        .integer("smem_per_block_optin_bytes", g.smem_per_block_optin)
        .integer("smem_per_sm_bytes", g.smem_per_sm)
        .integer("smem_reserved_per_block_bytes", g.smem_reserved_per_block)
        .integer("regs_per_block", g.regs_per_block)
        .integer("regs_per_sm", g.regs_per_sm)
        .integer("warp_size", g.warp_size)
        .integer("max_threads_per_block", g.max_threads_per_block)
        .integer("max_threads_per_sm", g.max_threads_per_sm)
        .integer("max_blocks_per_sm", g.max_blocks_per_sm);
    j.begin_array("max_block_dim");
    for (int d : g.max_block_dim) j.integer(nullptr, d);
    j.end_array().begin_array("max_grid_dim");
    for (int d : g.max_grid_dim) j.integer(nullptr, d);
    j.end_array()
        .boolean("kernel_timeout", g.kernel_timeout)
        .boolean("integrated", g.integrated)
        .boolean("ecc", g.ecc)
        .string("code", to_string(code_for(built_for, g.cc_number()).kind))
        .string_or_null("kernel_image", g.kernel_image)
        .string("rebuild_hint", g.rebuild_hint)
        .number("peak_fp32_gflops", g.peak_fp32_gflops)
        .number("peak_bandwidth_gbs", g.peak_bandwidth_gbs)
        .number("peak_fp16_tc_gflops", g.peak_fp16_tc_gflops > 0 ? g.peak_fp16_tc_gflops : kNotMeasured)
        .number("peak_tf32_tc_gflops", g.peak_tf32_tc_gflops > 0 ? g.peak_tf32_tc_gflops : kNotMeasured);
    write_ceilings(j, g);
    if (g.cublas.ran) {
        j.begin_object("cublas_smoke")
            .string("shape", g.cublas.shape)
            .string("status", g.cublas.pass ? "PASS" : "FAIL")
            .number("rel_err", g.cublas.rel_err)
            .string("detail", g.cublas.detail)
            .end_object();
    } else {
        j.null("cublas_smoke");
    }
    j.end_object();
}

// The whole report as JSON. The keys are documented in README.md ("The JSON file"); add new keys
// at the end of their object and never rename one: tools/ and the report read them.
inline std::string to_json(const Report& r) {
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    const Verdict v = judge(r);
    JsonWriter j;
    j.begin_object()
        .integer("schema", 1)
        .string("program", r.program)
        .string("git", r.git)
        .string("timestamp", r.timestamp)
        .boolean("quick", r.quick);
    j.begin_object("cuda")
        .integer("driver_version", r.driver_version)
        .string("driver", version_text(r.driver_version))
        .integer("runtime_version", r.runtime_version)
        .string("runtime", version_text(r.runtime_version))
        .boolean("compatible", versions == VersionMatch::ok || versions == VersionMatch::minor_newer)
        .string("note", describe(versions, r.driver_version, r.runtime_version))
        .end_object();
    j.begin_array("built_for");
    for (int a : r.built_for) j.string(nullptr, strf("sm_%d", a));
    j.end_array();
    j.integer("gpu_count", static_cast<long long>(r.gpus.size())).string_or_null("gpu_error", r.device_error);
    j.begin_array("gpus");
    for (const Gpu& g : r.gpus) write_gpu(j, g, r.built_for);
    j.end_array();
    j.begin_object("tools");
    for (const Tool& t : r.tools) {
        std::string key = t.name;  // "compute-sanitizer" -> "compute_sanitizer": easier in jq/Python
        std::replace(key.begin(), key.end(), '-', '_');
        j.begin_object(key.c_str()).string_or_null("path", t.path).boolean("on_path", t.on_path).end_object();
    }
    j.end_object();
    if (r.profiling_admin_only < 0) j.null("profiling_admin_only");
    else j.boolean("profiling_admin_only", r.profiling_admin_only == 1);
    j.boolean("wsl", r.wsl).boolean("ready", v.ready());
    j.begin_array("problems");
    for (const std::string& p : v.problems) j.string(nullptr, p);
    j.end_array().begin_array("notes");
    for (const std::string& n : v.notes) j.string(nullptr, n);
    j.end_array().end_object();
    return j.str();
}

}  // namespace env
