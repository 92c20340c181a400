// env_report.h - chapter 00's report: what the program found (Report), the rules that judge it
// (driver against runtime, code for this GPU, the verdict), and the JSON. No CUDA call here:
// 00_env_check.cu asks the driver and fills a Report, and the tests run all of this without a GPU.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "device.cuh"   // wb::DeviceFacts: name, capability, SMs, clocks, theoretical peaks
#include "kernels.cuh"  // FmaMeasurement, CopyMeasurement
#include "numerics.h"   // wb::CheckResult
#include "options.h"

namespace env {

// printf into a std::string.
inline std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string strf(const char* fmt, ...) {
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    std::string text(std::max(0, std::vsnprintf(nullptr, 0, fmt, args)), '\0');  // first pass: the length
    std::vsnprintf(&text[0], text.size() + 1, fmt, again);
    va_end(args);
    va_end(again);
    return text;
}

// Sizes the way a student reads them: 48 KiB, 50.0 MiB, 139.80 GiB (powers of 1024).
inline std::string bytes_text(double b) {
    if (b >= 1 << 30) return strf("%.2f GiB", b / (1 << 30));
    if (b >= 1 << 20) return strf("%.1f MiB", b / (1 << 20));
    return b >= 1024 ? strf("%.0f KiB", b / 1024) : strf("%.0f B", b);
}

// "Not measured" (NaN): printed as "-", written to the JSON as null. Arithmetic keeps it NaN.
constexpr double kNotMeasured = NAN;
inline bool measured(double v) { return std::isfinite(v); }
inline double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : kNotMeasured; }

// One line of the report: printed as "label : text" where it has a label, written to the JSON as
// "key": value where it has a key (value: JSON text, from json:: below). A printed line that shows
// several values carries the others as lines with a key only.
struct Line {
    std::string key, value, label = {}, text = {};
};

// ---- JSON: each function returns one value as JSON text --------------------------------------
// JSON has no NaN or infinity: a number that was not measured is null.
namespace json {
inline std::string null() { return "null"; }
inline std::string boolean(bool v) { return v ? "true" : "false"; }
inline std::string integer(long long v) { return std::to_string(v); }
inline std::string number(double v) { return measured(v) ? strf("%.7g", v) : null(); }
// A string with quotes, backslashes and control characters escaped; UTF-8 passes unchanged.
inline std::string text(const std::string& s) {
    std::string out = "\"";
    for (const unsigned char c : s) {
        const char* named = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\n' ? "\\n"
                            : c == '\t' ? "\\t"
                                        : nullptr;
        out += named ? named : c < 0x20 ? strf("\\u%04x", c) : std::string(1, char(c));
    }
    return out + "\"";
}
inline std::string text_or_null(const std::string& s) { return s.empty() ? null() : text(s); }  // "": none
// One item per line, indented, except short lists of plain values ([1024, 1024, 64]).
inline std::string container(char open, const std::vector<std::string>& items, char close) {
    std::string line, lines;
    for (const std::string& v : items) {
        line += (line.empty() ? "" : ", ") + v;
        lines += lines.empty() ? "\n  " : ",\n  ";
        for (const char c : v) lines += c == '\n' ? std::string("\n  ") : std::string(1, c);
    }
    if (open == '[' && line.size() < 80 && line.find_first_of("{\n") == std::string::npos)
        return open + line + close;
    return open + lines + (items.empty() ? "" : "\n") + close;
}
inline std::string array(const std::vector<std::string>& items) { return container('[', items, ']'); }
inline std::string object(const std::vector<Line>& lines) {  // the lines that have a key
    std::vector<std::string> members;
    for (const Line& l : lines)
        if (!l.key.empty()) members.push_back(text(l.key) + ": " + l.value);
    return container('{', members, '}');
}
}  // namespace json

// ---- what the program found ---------------------------------------------------------------------

// The cuBLAS smoke test's SGEMM: just past 256 in every dimension, so edge handling is exercised.
inline const wb::Shape kSmokeShape{257, 255, 259};

struct Gpu {
    wb::DeviceFacts facts;        // what every chapter knows of a GPU (common/device.cuh)
    std::vector<Line> limits;     // what the chapters design their kernels around (00_env_check.cu)
    bool kernel_timeout = false;  // a display watchdog ends long kernels
    std::string query_error;      // the driver could not describe this GPU
    std::string kernel_image;     // "ok", "missing" (no code for it in this binary) or the error
    // GPU 0 only, the one the chapters run on:
    bool measure_ran = false;
    std::string measure_error;  // the CUDA error that stopped the measurements
    std::optional<FmaMeasurement> fma;
    std::optional<CopyMeasurement> copy;
    std::optional<wb::CheckResult> cublas;  // the smoke test; `what`: what was compared, or why it failed
    std::string sm() const { return strf("sm_%d", facts.cc_number()); }
};

// A tool the workbook uses, where common/config.mk found it when it built this program.
struct Tool {
    std::string name, path;  // path: "" when make found none, or it is gone since
    bool on_path = false;    // its folder is on $PATH, so a shell finds it by its name
    std::string needed_for;  // "make profile-NN"
};

struct Report {
    std::string git, timestamp;
    bool quick = false;
    int warmup = 0, reps = 0;
    int driver_version = 0;      // the newest CUDA the driver supports; 0: no driver found
    int runtime_version = 0;     // the CUDA runtime this program was built with
    std::vector<int> built_for;  // compute capabilities compiled in, e.g. {75, 80, 90}
    std::string device_error;    // why no GPU can be used ("" when there is one)
    std::vector<Gpu> gpus;
    std::vector<Tool> tools;
    int profiling_admin_only = -1;  // RmProfilingAdminOnly: 1, 0, or -1 unknown
    bool running_as_root = false, wsl = false;
};

// ---- the rules ----------------------------------------------------------------------------------

// Can a program built with CUDA runtime `runtime` run on a driver that supports up to `driver`?
// A driver older in the minor number only still runs it ("minor version compatibility"), but PTX
// from the newer toolkit cannot be JIT-compiled; older in the major number, nothing runs.
struct VersionMatch {
    bool runs;
    std::string text;
};
inline std::string version_text(int v) { return v > 0 ? wb::cuda_version_string(v) : "none"; }  // "13.0"
inline VersionMatch match_versions(int driver, int runtime) {
    const std::string d = version_text(driver), r = version_text(runtime);
    if (driver <= 0)
        return {false,
                "NO: no NVIDIA driver was found (libcuda.so could not be loaded). Install the NVIDIA "
                "driver; on WSL2 install it on the Windows side only."};
    if (driver >= runtime) return {true, "yes (the driver supports CUDA " + d + " >= runtime " + r + ")"};
    if (driver / 1000 == runtime / 1000)
        return {true,
                "mostly: the runtime (" + r + ") is newer than the driver (" + d + "); it runs by " +
                    "minor-version compatibility, but PTX cannot be JIT-compiled. Update the NVIDIA driver."};
    return {false, "NO: the driver supports only CUDA " + d + " but this program was built with CUDA " + r +
                       ". Update the NVIDIA driver (or build with an older toolkit)."};
}

// Which compiled-in code runs on a GPU of compute capability `cc` (86 for 8.6)? The workbook builds
// (common/config.mk) machine code (SASS) for every architecture in `built` and PTX for the newest.
// kind: "native" (SASS for this GPU), "compatible" (SASS of an older minor of the same major: 8.0 code
// runs on 8.6), "ptx_jit" (the driver compiles the PTX at the first start: slow, not tuned) or "none"
// (every launch fails with cudaErrorNoKernelImageForDevice).
struct CodeMatch {
    std::string kind, text;
};
inline CodeMatch code_for(const std::vector<int>& built, int cc) {
    const std::string here = strf("sm_%d", cc);
    int older = 0, newest = 0;
    for (int a : built) {
        if (a == cc) return {"native", "native code (SASS) for " + here};
        if (a / 10 == cc / 10 && a < cc) older = std::max(older, a);
        newest = std::max(newest, a);
    }
    if (older > 0)
        return {"compatible", strf("SASS for sm_%d, which runs on %s; build with ARCH=%s for code "
                                   "scheduled for this GPU",
                                   older, here.c_str(), here.c_str())};
    if (newest > 0 && cc > newest)
        return {"ptx_jit", strf("only PTX for compute_%d: the driver compiles it at the first start "
                                "(slow start, not tuned); build with ARCH=%s",
                                newest, here.c_str())};
    return {"none", "none: no compiled-in architecture runs on " + here};
}

inline const char* architecture_name(int major, int minor) {  // the generation, for the reader
    if (major == 7) return minor >= 5 ? "Turing" : "Volta";
    if (major == 8) return minor == 9 ? "Ada Lovelace" : "Ampere";
    if (major == 9) return "Hopper";
    return major >= 10 && major <= 12 ? "Blackwell" : "unknown generation";
}

// The tool make found at `path` ("" for none), as it stands now: still there? Its folder on the PATH?
inline Tool tool_now(const std::string& name, std::string path, const std::string& path_list,
                     const std::string& needed_for) {
    if (::access(path.c_str(), X_OK) != 0) path.clear();  // none, or removed since the build
    const std::string folder = path.substr(0, path.rfind('/')), list = ":" + path_list + ":";
    const bool on_path = !path.empty() && (list.find(":" + folder + ":") != std::string::npos ||
                                           list.find(":" + folder + "/:") != std::string::npos);
    return {name, path, on_path, needed_for};
}

inline std::string describe(const Tool& t, int runtime_version) {  // what to tell the student
    if (t.on_path) return t.path;
    if (!t.path.empty())
        return "not on PATH, but found at " + t.path +
               ": export PATH=" + t.path.substr(0, t.path.rfind('/')) + ":$PATH";
    const std::string version = strf("%d-%d)", runtime_version / 1000, runtime_version % 1000 / 10);
    return "not found; needed for " + t.needed_for + ". " +
           (t.name == "ncu" ? "Install Nsight Compute (e.g. apt package cuda-nsight-compute-" + version
            : t.name == "compute-sanitizer"
                ? "It ships with the CUDA toolkit (e.g. apt package cuda-sanitizer-" + version
                : "Install the CUDA toolkit");
}

// RmProfilingAdminOnly in /proc/driver/nvidia/params: 1 means only root may read the performance
// counters, so ncu fails for everyone else with ERR_NVGPUCTRPERM. -1: not there.
inline int profiling_admin_only(const std::string& params) {
    const size_t at = params.find("RmProfilingAdminOnly:");
    const size_t digit = at == std::string::npos ? at : params.find_first_not_of(' ', at + 21);
    if (digit == std::string::npos || !std::isdigit(static_cast<unsigned char>(params[digit]))) return -1;
    return params[digit] == '0' ? 0 : 1;
}

inline bool is_wsl(std::string proc_version) {  // "...microsoft-standard-WSL2..." in /proc/version
    for (char& c : proc_version) c = char(std::tolower(static_cast<unsigned char>(c)));
    return proc_version.find("microsoft") != std::string::npos ||
           proc_version.find("wsl") != std::string::npos;
}

// 00 parses the shared command line (--warmup, --reps and --seed mean what they mean in every
// chapter) but measures fixed problems: a GEMM option would be ignored in silence, so it is refused.
inline bool check_env_options(const wb::Options& opt, std::string& error) {
    const wb::Options d;
    const char* refused = !opt.shapes.empty()                          ? "--m/--n/--k/--size/--sizes"
                          : opt.alpha != d.alpha || opt.beta != d.beta ? "--alpha/--beta"
                          : opt.variant != d.variant                   ? "--variant"
                          : opt.check != d.check                       ? "--no-check"
                          : !opt.csv.empty()                           ? "--csv"
                                                                       : nullptr;
    if (refused)
        error = std::string("this program takes no ") + refused +
                ": it measures fixed problems (--quick makes them smaller, --json FILE saves the results)";
    return !refused;
}

// ---- the ceilings -------------------------------------------------------------------------------

inline double fma_gflops(const Gpu& g) { return g.fma ? g.fma->gflops : kNotMeasured; }

// The memory ceiling to compare kernels with: the better of the two measured copies.
inline double best_bandwidth_gbs(const Gpu& g) {
    return g.copy ? std::max(g.copy->kernel_gbs, g.copy->memcpy_gbs) : kNotMeasured;
}

// The lowest SM clock at which `gflops` of FP32 FMAs are possible: each lane does at most one FMA
// (2 FLOP) per cycle.
inline double min_clock_for_gflops(const wb::DeviceFacts& f, double gflops) {
    return gflops / (2.0 * f.sms * f.fp32_lanes_per_sm);
}

// The SM clock during the FMA run (kernels.cuh). The in-kernel reading rests on the GPU's global
// timer, which some virtual machines run at another rate (seen on the workbook's H200: 1.69 GHz
// "measured" while the FMA rate needed at least 1.93): a reading below what the rate needs is wrong.
inline double sm_clock_under_load(const Gpu& g) {
    const double ghz = g.fma ? g.fma->sm_clock_ghz : 0;
    return ghz > 0 && ghz >= 0.98 * min_clock_for_gflops(g.facts, g.fma->gflops) ? ghz : kNotMeasured;
}

// The "Ceilings" section: theory from the GPU's numbers (printed only: the JSON has them with the
// GPU), then what kernels.cuh measured (the JSON's "measured").
inline std::vector<Line> ceiling_lines(const Gpu& g, const Report& r) {
    using namespace json;
    const wb::DeviceFacts& f = g.facts;
    const FmaMeasurement fma = g.fma.value_or(FmaMeasurement{});
    const CopyMeasurement copy = g.copy.value_or(CopyMeasurement{});
    auto gflops = [](double v) {  // as in every chapter's table; large values also in TFLOP/s
        return !measured(v) ? "-"
               : v < 1000   ? strf("%.1f GFLOP/s", v)
                            : strf("%.0f GFLOP/s (%.1f TFLOP/s)", v, v / 1000);
    };
    auto gbs = [](double v) {
        return !measured(v) ? "-"
               : v < 1000   ? strf("%.1f GB/s", v)
                            : strf("%.0f GB/s (%.2f TB/s)", v, v / 1000);
    };
    auto pct = [](double v) { return measured(v) ? strf("%.1f%%", v) : std::string("-"); };
    auto ms = [](bool ran, double v) { return ran ? number(v) : null(); };  // null: not measured
    auto timing = [](const wb::Timing& t) {
        return strf("median %.3f ms, min %.3f ms", t.ms_median, t.ms_min);
    };
    const double peak = f.peak_fp32_gflops, bw_peak = f.peak_bandwidth_gbs, bw = best_bandwidth_gbs(g);
    const double fma_gf = fma_gflops(g), clock = sm_clock_under_load(g), ridge = fma_gf / bw;
    const double at_clock =
        percent(fma_gf, peak * clock / f.clock_ghz);  // of the peak at the clock under load
    const double copy_gbs = g.copy ? copy.kernel_gbs : kNotMeasured,
                 memcpy_gbs = g.copy ? copy.memcpy_gbs : kNotMeasured;
    std::vector<Line> lines = {
        {"", "", "FP32 peak (theory)",
         gflops(peak) +
             strf(" = %d SMs x %d lanes x 2 FLOP x %.3f GHz", f.sms, f.fp32_lanes_per_sm, f.clock_ghz)},
        {"error", text_or_null(g.measure_error)},
        {"warmup", integer(r.warmup)},
        {"reps", integer(r.reps)},
        {"fma_gflops", number(fma_gf), "FP32 FMA (measured)",
         gflops(fma_gf) + " = " + pct(percent(fma_gf, peak)) + " of theory, " + pct(at_clock) +
             " of the peak at the clock measured below"},
        {"fma_pct_peak", number(percent(fma_gf, peak))},
        {"fma_ms_median", ms(g.fma.has_value(), fma.timing.ms_median), g.fma ? "  how" : "",
         strf("%d chains x %d FMA per thread, %lld threads (%d waves); ", kFmaChains, kFmaIters, fma.threads,
              fma.waves) +
             timing(fma.timing)},
        {"fma_ms_min", ms(g.fma.has_value(), fma.timing.ms_min)},
        {"fma_flops", integer(std::llround(fma.flops))},
        {"fma_threads", integer(fma.threads)},
        {"sm_clock_ghz_under_load", number(clock), "SM clock during FMA run",
         measured(clock)    ? strf("%.3f GHz (max %.3f GHz)", clock, f.clock_ghz)
         : measured(fma_gf) ? strf("not measurable here (the global timer disagrees with the FMA rate, which "
                                   "needs at least %.3f GHz)",
                                   min_clock_for_gflops(f, fma_gf))
                            : "-"},
        {"fma_pct_peak_at_measured_clock", number(at_clock)},
        {"", "", "DRAM bandwidth (theory)",
         gbs(bw_peak) + strf(" = %d bits / 8 x 2 x %.3f GHz", f.bus_width_bits, f.mem_clock_ghz)},
        {"copy_kernel_gbs", number(copy_gbs), "copy kernel (measured)",
         gbs(copy_gbs) + " = " + pct(percent(copy_gbs, bw_peak)) + " of theory"},
        {"copy_kernel_pct_peak", number(percent(copy_gbs, bw_peak))},
        {"copy_kernel_ms_median", ms(g.copy.has_value(), copy.kernel.ms_median)},
        {"copy_kernel_ms_min", ms(g.copy.has_value(), copy.kernel.ms_min)},
        {"memcpy_gbs", number(memcpy_gbs), "cudaMemcpy D2D (measured)",
         gbs(memcpy_gbs) + " = " + pct(percent(memcpy_gbs, bw_peak)) + " of theory"},
        {"memcpy_pct_peak", number(percent(memcpy_gbs, bw_peak))},
        {"memcpy_ms_median", ms(g.copy.has_value(), copy.memcpy.ms_median)},
        {"memcpy_ms_min", ms(g.copy.has_value(), copy.memcpy.ms_min)},
        {"copy_bytes", integer(std::llround(copy.bytes_moved)), g.copy ? "  how" : "",
         "2 buffers of " + bytes_text(double(copy.buffer_bytes)) + ", " + bytes_text(copy.bytes_moved) +
             " moved per copy (read once + written once); kernel " + timing(copy.kernel)},
        {"bandwidth_gbs", number(bw)},
        {"bandwidth_pct_peak", number(percent(bw, bw_peak))},
        {"ridge_flop_per_byte", number(ridge), bw_peak > 0 ? "ridge point" : "",
         strf("%.1f FLOP/byte in theory", peak / bw_peak) +
             (measured(ridge) ? strf(", %.1f measured", ridge) : "") +
             ": kernels doing fewer FLOP per DRAM byte are memory bound"},
        {"", "", f.peak_fp16_tc_gflops > 0 ? "FP16 tensor cores (theory)" : "",
         gflops(f.peak_fp16_tc_gflops) + " dense (chapters 06 and 07)"},
        {"", "", f.peak_tf32_tc_gflops > 0 ? "TF32 tensor cores (theory)" : "",
         gflops(f.peak_tf32_tc_gflops) + " dense"},
        {"", "", "runs",
         strf("%d warm-up + %d timed, each timed with CUDA events; median shown%s", r.warmup, r.reps,
              r.reps < 10 ? " (fewer than 10 timed runs: rough numbers)" : "")},
        {"", "", g.measure_error.empty() ? "" : "ERROR", g.measure_error},
    };
    return lines;
}

// ---- the verdict --------------------------------------------------------------------------------

// Chapter 01 runs on the CPU and needs only what built this program: it is ready whenever this
// program runs. Problems stop the GPU chapters; notes block nothing.
struct Verdict {
    std::vector<std::string> problems, notes;
    bool ready() const { return problems.empty(); }  // for every chapter, the GPU ones included
    std::vector<std::string> first_lines() const {
        if (ready()) return {"ready for every chapter: 01 on the CPU, 02 and later on GPU 0."};
        return {"ready for chapter 01 (it runs on the CPU).",
                "NOT ready for the GPU chapters (02 and later). Fix first:"};
    }
};

// Below these percentages of theory a measurement suggests something is wrong with the machine
// (another process on the GPU, clocks locked low, a power cap), not with the program.
constexpr double kLowFmaPercent = 70.0, kLowBandwidthPercent = 60.0;

inline Verdict judge(const Report& r) {
    Verdict v;
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    if (!versions.runs) v.problems.push_back("CUDA versions: " + versions.text);
    if (versions.runs && r.driver_version < r.runtime_version)
        v.notes.push_back("update the NVIDIA driver: it is older than the CUDA runtime");
    if (r.gpus.empty() && versions.runs)  // without a (new enough) driver no GPU is visible: one problem
        v.problems.push_back("no usable CUDA GPU: " +
                             (r.device_error.empty() ? "none found" : r.device_error));
    for (const Gpu& g : r.gpus) {
        const std::string who = strf("GPU %d (%s)", g.facts.id, g.facts.name.c_str());
        std::vector<std::string>& blocking = g.facts.id == 0 ? v.problems : v.notes;  // GPU 0 is the one used
        if (!g.query_error.empty()) {
            blocking.push_back(who + " cannot be queried: " + g.query_error);
            continue;
        }
        if (g.kernel_image == "missing")
            blocking.push_back(who + ": this binary holds no code for " + g.sm() +
                               ". Rebuild: " + wb::rebuild_hint(g.facts.cc_major, g.facts.cc_minor));
        else if (g.kernel_image != "ok")
            blocking.push_back(who + ": a test kernel failed: " + g.kernel_image);
        if (g.kernel_timeout)
            v.notes.push_back(who +
                              " has a kernel time limit (display watchdog): keep single launches short "
                              "(smaller --size), see the README");
        if (g.facts.id != 0) continue;
        if (!g.measure_error.empty()) v.problems.push_back(who + ": measuring failed: " + g.measure_error);
        if (g.cublas && !g.cublas->pass)
            v.problems.push_back(who + ": the cuBLAS smoke test FAILED: " + g.cublas->what);
        const double fma_pct = percent(fma_gflops(g), g.facts.peak_fp32_gflops);
        const double bw_pct = percent(best_bandwidth_gbs(g), g.facts.peak_bandwidth_gbs);
        if (fma_pct < kLowFmaPercent)  // false for NaN: not measured
            v.notes.push_back(
                strf("FP32 FMA reached only %.0f%% of theory: is another program using the GPU, or "
                     "are its clocks or power capped? (nvidia-smi -q -d CLOCK,PERFORMANCE)",
                     fma_pct));
        if (bw_pct < kLowBandwidthPercent)
            v.notes.push_back(strf(
                "memory bandwidth reached only %.0f%% of theory: is another program using the GPU?", bw_pct));
    }
    for (const Tool& t : r.tools)
        if (!t.on_path) v.notes.push_back(t.name + ": " + describe(t, r.runtime_version));
    if (r.wsl)
        v.notes.push_back(
            "WSL2: the Windows display watchdog (TDR, 2 s by default) ends long kernels, and ncu needs "
            "the Windows driver's counter permission; see the README");
    if (r.profiling_admin_only == 1 && !r.running_as_root)
        v.notes.push_back(
            "GPU performance counters are for root only (RmProfilingAdminOnly=1): ncu will fail with "
            "ERR_NVGPUCTRPERM; see the README");
    return v;
}

// ---- the JSON file ------------------------------------------------------------------------------
// The keys are documented in README.md ("The JSON file"); add new keys at the end of their object
// and never rename one: tools/ and the report read them.
inline std::string to_json(const Report& r) {
    using namespace json;
    const Verdict v = judge(r);
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    std::vector<std::string> built, gpus, problems, notes;
    for (int a : r.built_for) built.push_back(text(strf("sm_%d", a)));
    for (const std::string& p : v.problems) problems.push_back(text(p));
    for (const std::string& n : v.notes) notes.push_back(text(n));
    for (const Gpu& g : r.gpus) {
        const wb::DeviceFacts& f = g.facts;
        std::vector<Line> lines = {{"id", integer(f.id)},
                                   {"name", text(f.name)},
                                   {"cc", text(f.cc())},
                                   {"sm", text(g.sm())},
                                   {"query_error", text_or_null(g.query_error)}};
        lines.insert(lines.end(), g.limits.begin(), g.limits.end());
        const auto known = [](double peak) { return number(peak > 0 ? peak : kNotMeasured); };  // 0: unknown
        const std::vector<Line> smoke = {{"shape", text(wb::to_string(kSmokeShape))},
                                         {"status", text(g.cublas && g.cublas->pass ? "PASS" : "FAIL")},
                                         {"rel_err", number(g.cublas ? g.cublas->rel_err : kNotMeasured)},
                                         {"detail", text(g.cublas ? g.cublas->what : "")}};
        lines.insert(lines.end(), {{"code", text(code_for(r.built_for, f.cc_number()).kind)},
                                   {"kernel_image", text_or_null(g.kernel_image)},
                                   {"rebuild_hint", text(wb::rebuild_hint(f.cc_major, f.cc_minor))},
                                   {"peak_fp32_gflops", number(f.peak_fp32_gflops)},
                                   {"peak_bandwidth_gbs", number(f.peak_bandwidth_gbs)},
                                   {"peak_fp16_tc_gflops", known(f.peak_fp16_tc_gflops)},
                                   {"peak_tf32_tc_gflops", known(f.peak_tf32_tc_gflops)},
                                   {"measured", g.measure_ran ? object(ceiling_lines(g, r)) : null()},
                                   {"cublas_smoke", g.cublas ? object(smoke) : null()}});
        gpus.push_back(object(lines));
    }
    std::vector<Line> tools;
    for (const Tool& t : r.tools) {  // "compute-sanitizer" -> "compute_sanitizer": easier in jq and Python
        std::string key = t.name;
        std::replace(key.begin(), key.end(), '-', '_');
        tools.push_back({key, object({{"path", text_or_null(t.path)}, {"on_path", boolean(t.on_path)}})});
    }
    const std::vector<Line> cuda = {
        {"driver_version", integer(r.driver_version)},   {"driver", text(version_text(r.driver_version))},
        {"runtime_version", integer(r.runtime_version)}, {"runtime", text(version_text(r.runtime_version))},
        {"compatible", boolean(versions.runs)},          {"note", text(versions.text)}};
    return object({{"schema", integer(1)},
                   {"program", text("00_env_check")},
                   {"git", text(r.git)},
                   {"timestamp", text(r.timestamp)},
                   {"quick", boolean(r.quick)},
                   {"cuda", object(cuda)},
                   {"built_for", array(built)},
                   {"gpu_count", integer(static_cast<long long>(r.gpus.size()))},
                   {"gpu_error", text_or_null(r.device_error)},
                   {"gpus", array(gpus)},
                   {"tools", object(tools)},
                   {"profiling_admin_only",
                    r.profiling_admin_only < 0 ? null() : boolean(r.profiling_admin_only == 1)},
                   {"wsl", boolean(r.wsl)},
                   {"ready", boolean(v.ready())},
                   {"problems", array(problems)},
                   {"notes", array(notes)}}) +
           "\n";
}

}  // namespace env
