// env_report.h - chapter 00's report, with no CUDA call in it: what the program found (Report), the
// rules that judge it (driver against runtime, code for this GPU, the verdict) and the JSON, whose
// keys and values the screen shows too. The tests run all of this without a GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "device.cuh"   // wb::DeviceFacts: name, capability, SMs, clocks, theoretical peaks
#include "json.h"       // wb::json: the writer, and Line
#include "kernels.cuh"  // CopyMeasurement
#include "numerics.h"   // wb::CheckResult
#include "options.h"

namespace ch00 {

template <class... Args>
std::string strf(const char* fmt, Args... args) {  // printf into a std::string of any length
    std::string text(std::max(0, std::snprintf(nullptr, 0, fmt, args...)), '\0');
    std::snprintf(&text[0], text.size() + 1, fmt, args...);
    return text;
}

// "Not measured" is NaN: written as null, shown as "-". Arithmetic keeps it NaN.
constexpr double kNotMeasured = NAN;
inline double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : kNotMeasured; }
inline std::string bytes_text(double b) {  // powers of 1024: 48 KiB, 50.0 MiB, 139.80 GiB
    if (b >= 1 << 30) return strf("%.2f GiB", b / (1 << 30));
    if (b >= 1 << 20) return strf("%.1f MiB", b / (1 << 20));
    return b >= 1024 ? strf("%.0f KiB", b / 1024) : strf("%.0f B", b);
}

// ---- the screen ---------------------------------------------------------------------------------

// One value, read once and shown twice: "key": value in the JSON, "key  value (note)" on the screen.
// The key names the unit: ..._bytes, ..._ghz, ..._gflops (10^9 FLOP/s), ..._gbs (10^9 B/s), ..._ms_...
using wb::json::Line;

// The screen's value: the JSON's, strings without quotes, null as "-", sizes in KiB, MiB or GiB (the
// JSON keeps the exact byte count).
inline std::string shown(const Line& l) {
    std::string v = l.value == "null" ? "-" : l.value;
    if (v.size() > 1 && v.front() == '"') v = v.substr(1, v.size() - 2);
    if (l.key.find("_bytes") != std::string::npos && v != "-") v = bytes_text(std::stod(v));
    return l.note.empty() ? v : v + " (" + l.note + ")";
}

// ---- what the program found ---------------------------------------------------------------------

// The cuBLAS smoke test's SGEMM: just past 256 in every dimension, so edge handling is exercised.
inline const wb::Shape kSmokeShape{257, 255, 259};

struct Gpu {
    wb::DeviceFacts facts;             // as wb::query_device returns it (common/device.cuh)
    cudaDeviceProp prop{};             // the other limits the chapters design their kernels around
    int watchdog = 0;                  // nonzero: a display watchdog ends long kernels (an attribute)
    std::string query_error;           // why the driver could not describe this GPU
    std::string kernel_image;          // "ok", "missing" (no code for it in this binary) or the launch's error
    std::string measure_error;         // this and the rest: GPU 0 only, the one the chapters run on
    double fma_gflops = kNotMeasured;  // this and copy: NaN where they did not run (kernels.cuh)
    CopyMeasurement copy;
    std::optional<wb::CheckResult> cublas;  // `what`: what was compared, or why it failed
    std::string sm() const { return strf("sm_%d", facts.cc_number()); }
    bool measured() const { return facts.id == 0 && kernel_image == "ok"; }  // kernels.cuh can run on it
};

// A tool the Makefile targets run, as common/config.mk found it: config.mk is the one place that
// looks, the chapter's Makefile builds its answer in, and this program only reports it.
struct Tool {
    std::string name, path;  // name as the JSON's key; path: "" when make found none
    std::string missing;     // config.mk's line that says how to install it
};

struct Report {
    std::string git, timestamp;
    bool quick = false;
    int driver_version = 0;         // the newest CUDA the driver supports; 0: no driver found
    int runtime_version = 0;        // the CUDA runtime this program was built with
    std::vector<int> built_for;     // compute capabilities compiled in, e.g. {75, 80, 90}
    std::string device_error;       // why no GPU can be used ("" when there is one)
    std::vector<Gpu> gpus;
    std::vector<Tool> tools;
    int profiling_admin_only = -1;  // RmProfilingAdminOnly: 1, 0, or -1 unknown
};

// ---- the rules ----------------------------------------------------------------------------------

// Can a program built with CUDA runtime `runtime` run on a driver that supports up to `driver`?
// Older in the minor number only still runs ("minor version compatibility", but no PTX JIT);
// older in the major number, nothing runs.
struct VersionMatch {
    bool runs;
    std::string text;
};
inline std::string version_text(int v) { return v > 0 ? wb::cuda_version_string(v) : "none"; }  // "13.0"
inline VersionMatch match_versions(int driver, int runtime) {
    const std::string d = version_text(driver), r = version_text(runtime);
    if (driver <= 0)
        return {false, "NO: no NVIDIA driver was found (libcuda.so could not be loaded). Install the NVIDIA "
                       "driver; on WSL2 install it on the Windows side only."};
    if (driver >= runtime) return {true, "yes (the driver supports CUDA " + d + " >= runtime " + r + ")"};
    if (driver / 1000 == runtime / 1000)
        return {true, "mostly: the runtime (" + r + ") is newer than the driver (" + d + "); it runs by " +
                          "minor-version compatibility, but PTX cannot be JIT-compiled. Update the driver."};
    return {false, "NO: the driver supports only CUDA " + d + " but this program was built with CUDA " + r +
                       ". Update the NVIDIA driver (or build with an older toolkit)."};
}

// Which compiled-in code runs on a GPU of compute capability `cc` (86 for 8.6)? kind: "native",
// "compatible" (SASS of an older minor of the same major), "ptx_jit" (the driver compiles the PTX of
// the newest architecture at the first start) or "none" (every launch fails).
struct CodeMatch {
    std::string kind, text;
};
inline CodeMatch code_for(const std::vector<int>& built, int cc) {
    const std::string here = strf("sm_%d", cc), better = "; build with ARCH=" + here + "";
    int older = 0, newest = 0;
    for (int a : built) {
        if (a == cc) return {"native", "native code (SASS) for " + here};
        if (a / 10 == cc / 10 && a < cc) older = std::max(older, a);
        newest = std::max(newest, a);
    }
    if (older > 0) return {"compatible", strf("SASS for sm_%d, which runs on ", older) + here + better};
    if (newest > 0 && cc > newest)
        return {"ptx_jit", strf("only PTX for compute_%d, JIT-compiled at the first start", newest) + better};
    return {"none", "none: no compiled-in architecture runs on " + here};
}

// RmProfilingAdminOnly in /proc/driver/nvidia/params: 1 means only root may read the performance
// counters (ncu then fails with ERR_NVGPUCTRPERM). -1: not there.
inline int profiling_admin_only(const std::string& params) {
    const size_t at = params.find("RmProfilingAdminOnly: ");
    unsigned value = 0;
    return at != std::string::npos && std::sscanf(params.c_str() + at + 22, "%u", &value) == 1 ? value != 0 : -1;
}
inline Line profiling_line(int admin) {  // the screen's line and the JSON's member
    return {"profiling_admin_only", admin < 0 ? "null" : wb::json::boolean(admin),
            admin == 1 ? "only root may read the GPU counters (README.md)" : ""};
}

// --warmup, --reps and --seed mean what they mean in every chapter; a GEMM option would be ignored
// in silence here, where the problems are fixed, so it is refused.
inline bool check_env_options(const wb::Options& opt, std::string& error) {
    const wb::Options d;
    const char* refused = !opt.shapes.empty()                          ? "--m/--n/--k/--size/--sizes"
                          : opt.alpha != d.alpha || opt.beta != d.beta ? "--alpha/--beta"
                          : opt.variant != d.variant                   ? "--variant"
                          : opt.check != d.check                       ? "--no-check"
                          : !opt.csv.empty()                           ? "--csv"
                          : opt.energy                                 ? "--energy"
                                                                       : nullptr;
    if (refused)
        error = std::string("this program takes no ") + refused +
                ": it measures fixed problems (--quick makes them smaller, --json FILE saves the results)";
    return !refused;
}

// ---- the ceilings -------------------------------------------------------------------------------

// The memory ceiling to compare kernels with: the better of the two measured copies.
inline double best_bandwidth_gbs(const Gpu& g) { return std::max(g.copy.kernel_gbs, g.copy.memcpy_gbs); }

// What kernels.cuh measured on GPU 0, the JSON's "measured" (the theory is in the GPU's lines).
inline std::vector<Line> ceiling_lines(const Gpu& g) {
    using namespace wb::json;
    const CopyMeasurement& copy = g.copy;
    const double peak = g.facts.peak_fp32_gflops, bw_peak = g.facts.peak_bandwidth_gbs, bw = best_bandwidth_gbs(g);
    return {{"error", text_or_null(g.measure_error)}, {"fma_gflops", number(g.fma_gflops)},
            {"fma_pct_peak", number(percent(g.fma_gflops, peak))}, {"copy_kernel_gbs", number(copy.kernel_gbs)},
            {"copy_kernel_pct_peak", number(percent(copy.kernel_gbs, bw_peak))},
            {"memcpy_gbs", number(copy.memcpy_gbs)}, {"memcpy_pct_peak", number(percent(copy.memcpy_gbs, bw_peak))},
            {"copy_bytes", number(copy.bytes_moved), "each byte read once, written once"},
            {"bandwidth_gbs", number(bw)}, {"bandwidth_pct_peak", number(percent(bw, bw_peak))},
            {"ridge_flop_per_byte", number(g.fma_gflops / bw), "fewer FLOP per DRAM byte: memory bound"}};
}

// ---- the verdict --------------------------------------------------------------------------------

// Problems stop the GPU chapters and set the exit status; notes block nothing.
struct Verdict {
    std::vector<std::string> problems, notes;
    int status = wb::kExitOk;  // kExitNoDevice, or kExitVerifyFailed when only cuBLAS failed
    bool ready() const { return problems.empty(); }
    void problem(int exit_status, const std::string& what) {
        problems.push_back(what);
        status = std::max(status, exit_status);
    }
};

// Below these percentages of theory something is wrong with the machine (another process on the
// GPU, clocks locked low, a power cap), not with the program.
constexpr double kLowFmaPercent = 70.0, kLowBandwidthPercent = 60.0;

inline Verdict judge(const Report& r) {
    Verdict v;
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    if (!versions.runs) v.problem(wb::kExitNoDevice, "CUDA versions: " + versions.text);
    if (versions.runs && r.driver_version < r.runtime_version) v.notes.push_back("update the NVIDIA driver");
    if (r.gpus.empty() && versions.runs)  // without a (new enough) driver no GPU is visible: one problem
        v.problem(wb::kExitNoDevice,
                  "no usable CUDA GPU: " + (r.device_error.empty() ? "none found" : r.device_error));
    for (const Gpu& g : r.gpus) {
        const wb::DeviceFacts& f = g.facts;
        const std::string who = strf("GPU %d (%s)", f.id, f.name.c_str());
        auto blocking = [&](const std::string& what) {  // GPU 0 is the one the chapters run on
            f.id == 0 ? v.problem(wb::kExitNoDevice, what) : v.notes.push_back(what);
        };
        if (!g.query_error.empty()) {
            blocking(who + " cannot be queried: " + g.query_error);
            continue;
        }
        if (g.kernel_image == "missing")
            blocking(who + ": this binary holds no code for " + g.sm() + " (compute capability " + f.cc() +
                     "). Rebuild for it: " + wb::rebuild_hint(f.cc_major, f.cc_minor));
        else if (g.kernel_image != "ok")
            blocking(who + ": a test kernel failed: " + g.kernel_image);
        if (f.id != 0) continue;
        if (!g.measure_error.empty())
            v.problem(wb::kExitNoDevice, who + ": measuring failed: " + g.measure_error);
        if (g.cublas && !g.cublas->pass)
            v.problem(wb::kExitVerifyFailed, who + ": the cuBLAS smoke test FAILED: " + g.cublas->what);
        const double fma_pct = percent(g.fma_gflops, f.peak_fp32_gflops);  // NaN: not measured, no note
        const double bw_pct = percent(best_bandwidth_gbs(g), f.peak_bandwidth_gbs);
        if (fma_pct < kLowFmaPercent)
            v.notes.push_back(strf("FP32 FMA reached only %.0f%% of theory: another job, or capped clocks?", fma_pct));
        if (bw_pct < kLowBandwidthPercent)
            v.notes.push_back(strf("memory bandwidth reached only %.0f%% of theory: another job?", bw_pct));
    }
    for (const Tool& t : r.tools)
        if (t.path.empty()) v.notes.push_back(t.missing);
    return v;
}

// ---- the JSON file ------------------------------------------------------------------------------

inline std::vector<Line> version_lines(int driver, int runtime) {  // the JSON's "cuda"
    using namespace wb::json;
    const VersionMatch m = match_versions(driver, runtime);
    return {{"driver", text(version_text(driver))}, {"runtime", text(version_text(runtime))},
            {"compatible", boolean(m.runs)}, {"note", text(m.text)}};
}

// The architectures compiled in, e.g. ["sm_80", "sm_90"].
inline Line built_for_line(const std::vector<int>& built) {
    std::vector<std::string> names;
    for (int a : built) names.push_back(strf("sm_%d", a));
    return {"built_for", wb::json::texts(names), "PTX for the last; make ARCH=sm_XY changes it"};
}

// A GPU's lines up to its measurements: its wb::DeviceFacts, the other limits the chapters choose
// their tiles against from cudaDeviceProp, which code runs on it, and the theoretical peaks.
inline std::vector<Line> gpu_lines(const Gpu& g, const std::vector<int>& built) {
    using namespace wb::json;
    const wb::DeviceFacts& f = g.facts;
    const cudaDeviceProp& p = g.prop;
    auto known = [](double peak) { return number(peak > 0 ? peak : kNotMeasured); };  // 0: unknown
    const CodeMatch code = code_for(built, f.cc_number());
    const char* watchdog = g.watchdog ? "a display watchdog ends long kernels: see README.md" : "";
    return {{"id", number(f.id)}, {"name", text(f.name)}, {"cc", text(f.cc())}, {"sm", text(g.sm())},
            {"query_error", text_or_null(g.query_error)}, {"sms", number(f.sms)},
            {"fp32_lanes_per_sm", number(f.fp32_lanes_per_sm)}, {"sm_clock_ghz", number(f.clock_ghz), "maximum"},
            {"memory_bytes", number(f.global_mem_bytes)},
            {"mem_clock_ghz", number(f.mem_clock_ghz), "2 transfers a clock"},
            {"bus_width_bits", number(f.bus_width_bits)}, {"l2_bytes", number(p.l2CacheSize)},
            {"smem_per_block_bytes", number(p.sharedMemPerBlock)},
            {"smem_per_block_optin_bytes", number(f.smem_per_block_optin)},
            {"smem_per_sm_bytes", number(p.sharedMemPerMultiprocessor)},
            {"regs_per_sm", number(p.regsPerMultiprocessor)}, {"max_threads_per_sm", number(f.max_threads_per_sm)},
            {"max_blocks_per_sm", number(p.maxBlocksPerMultiProcessor)},
            {"kernel_timeout", boolean(g.watchdog != 0), watchdog}, {"ecc", boolean(p.ECCEnabled != 0)},
            {"code", text(code.kind), code.text}, {"kernel_image", text_or_null(g.kernel_image)},
            {"peak_fp32_gflops", number(f.peak_fp32_gflops), "SMs x lanes x 2 x clock"},
            {"peak_bandwidth_gbs", number(f.peak_bandwidth_gbs), "bits / 8 x 2 x clock"},
            {"peak_fp16_tc_gflops", known(f.peak_fp16_tc_gflops)},
            {"peak_tf32_tc_gflops", known(f.peak_tf32_tc_gflops)}};
}

inline std::vector<Line> smoke_lines(const Gpu& g) {  // the cuBLAS smoke test (GPU 0)
    using namespace wb::json;
    const bool ran = g.cublas.has_value();
    return {{"shape", text(wb::to_string(kSmokeShape))},
            {"status", text(ran && g.cublas->pass ? "PASS" : "FAIL")},
            {"rel_err", number(ran && g.cublas->checked > 0 ? g.cublas->rel_err : kNotMeasured)},
            {"detail", text(ran ? g.cublas->what : "")}};
}

// The keys are documented in README.md ("The JSON file"); add new keys at the end of their object
// and never rename one: tools/ and the report read them.
inline std::string to_json(const Report& r) {
    using namespace wb::json;
    std::vector<std::string> gpus;
    for (const Gpu& g : r.gpus) {
        std::vector<Line> lines = gpu_lines(g, r.built_for);
        lines.push_back({"measured", g.measured() ? object(ceiling_lines(g)) : "null"});
        lines.push_back({"cublas_smoke", g.cublas ? object(smoke_lines(g)) : "null"});
        gpus.push_back(object(lines));
    }
    std::vector<Line> tools;
    for (const Tool& t : r.tools) tools.push_back({t.name, object({{"path", text_or_null(t.path)}})});
    const Verdict v = judge(r);
    return object({{"schema", number(1)}, {"program", text("00_env_check")}, {"git", text(r.git)},
                   {"timestamp", text(r.timestamp)}, {"quick", boolean(r.quick)},
                   {"cuda", object(version_lines(r.driver_version, r.runtime_version))},
                   built_for_line(r.built_for), {"gpu_count", number(r.gpus.size())},
                   {"gpu_error", text_or_null(r.device_error)}, {"gpus", array(gpus)},
                   {"tools", object(tools)}, profiling_line(r.profiling_admin_only),
                   {"ready", boolean(v.ready())}, {"problems", texts(v.problems)}, {"notes", texts(v.notes)}}) +
           "\n";
}

}  // namespace ch00
