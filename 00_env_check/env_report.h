// env_report.h - chapter 00's report, with no CUDA call in it: what the program found (Report), the
// rules that judge it (driver against runtime, code for this GPU, the verdict) and the JSON, whose
// keys and values the screen shows too. The tests run all of this without a GPU.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <optional>
#include <string>
#include <vector>

#include "device.cuh"   // wb::DeviceFacts: name, capability, SMs, clocks, theoretical peaks
#include "kernels.cuh"  // FmaMeasurement, CopyMeasurement
#include "numerics.h"   // wb::CheckResult
#include "options.h"

namespace ch00 {

inline std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string strf(const char* fmt, ...) {  // printf into a std::string of any length
    va_list args, again;
    va_start(args, fmt);
    va_copy(again, args);
    std::string text(std::max(0, std::vsnprintf(nullptr, 0, fmt, args)), '\0');
    std::vsnprintf(&text[0], text.size() + 1, fmt, again);
    va_end(args);
    va_end(again);
    return text;
}

// "Not measured" is NaN: written as null, shown as "-". Arithmetic keeps it NaN.
constexpr double kNotMeasured = NAN;
inline bool measured(double v) { return std::isfinite(v); }
inline double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : kNotMeasured; }
inline std::string bytes_text(double b) {  // powers of 1024: 48 KiB, 50.0 MiB, 139.80 GiB
    if (b >= 1 << 30) return strf("%.2f GiB", b / (1 << 30));
    if (b >= 1 << 20) return strf("%.1f MiB", b / (1 << 20));
    return b >= 1024 ? strf("%.0f KiB", b / 1024) : strf("%.0f B", b);
}

// ---- the JSON writer, and the screen ------------------------------------------------------------

// One value, read once and shown twice: "key": value in the JSON, "key  value (note)" on the screen.
// The key names the unit: ..._bytes, ..._ghz, ..._gflops (10^9 FLOP/s), ..._gbs (10^9 B/s), ..._ms_...
struct Line {
    std::string key, value, note = {};  // note: the screen only
};
namespace json {  // each function returns one value as JSON text
inline std::string null() { return "null"; }
inline std::string boolean(bool v) { return v ? "true" : "false"; }
inline std::string integer(long long v) { return std::to_string(v); }
inline std::string number(double v) { return measured(v) ? strf("%.7g", v) : null(); }  // JSON has no NaN
inline std::string text(const std::string& s) {  // escaped; UTF-8 passes unchanged
    std::string out = "\"";
    for (const unsigned char c : s)
        out += c == '"' || c == '\\' ? std::string{'\\', char(c)}
               : c == '\n'           ? "\\n"
               : c == '\t'           ? "\\t"
               : c < 0x20            ? strf("\\u%04x", c)
                                     : std::string(1, char(c));
    return out + "\"";
}
inline std::string text_or_null(const std::string& s) { return s.empty() ? null() : text(s); }
// One item per line, indented; a short list of plain values stays on one line: [1024, 1024, 64].
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
inline std::string texts(const std::vector<std::string>& items) {  // an array of strings
    std::vector<std::string> quoted;
    for (const std::string& s : items) quoted.push_back(text(s));
    return array(quoted);
}
inline std::string object(const std::vector<Line>& lines) {
    std::vector<std::string> members;
    for (const Line& l : lines) members.push_back(text(l.key) + ": " + l.value);
    return container('{', members, '}');
}
}  // namespace json

// The screen's value: the JSON's, strings without quotes, null as "-", sizes also in KiB, MiB or GiB.
inline std::string shown(const Line& l) {
    std::string v = l.value == "null" ? "-" : l.value;
    if (v.size() > 1 && v.front() == '"') v = v.substr(1, v.size() - 2);
    if (l.key.find("_bytes") != std::string::npos && v != "-") v += " (" + bytes_text(std::stod(v)) + ")";
    return l.note.empty() ? v : v + " (" + l.note + ")";
}

// ---- what the program found ---------------------------------------------------------------------

// The cuBLAS smoke test's SGEMM: just past 256 in every dimension, so edge handling is exercised.
inline const wb::Shape kSmokeShape{257, 255, 259};

struct Gpu {
    wb::DeviceFacts facts;     // as wb::query_device returns it (common/device.cuh)
    std::vector<Line> limits;  // the other limits the chapters design their kernels around
    std::string query_error;   // why the driver could not describe this GPU
    std::string kernel_image;  // "ok", "missing" (no code for it in this binary) or the launch's error
    bool measure_ran = false;  // this and the rest: GPU 0 only, the one the chapters run on
    std::string measure_error;
    std::optional<FmaMeasurement> fma;
    std::optional<CopyMeasurement> copy;
    std::optional<wb::CheckResult> cublas;  // `what`: what was compared, or why it failed
    std::string sm() const { return strf("sm_%d", facts.cc_number()); }
};

struct Tool {  // a tool the Makefile targets run, where common/config.mk found it at build time
    std::string name, path;  // path: "" when make found none, or it is gone since
    bool on_path = false;    // its folder is on $PATH, so a shell finds it by its name
    std::string missing;     // config.mk's line that says how to install it
};

struct Report {
    std::string git, timestamp;
    bool quick = false, wsl = false;
    int warmup = 0, reps = 0;
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

// The tool make found at `path` ("" for none) as it stands now: still there, its folder on the PATH?
inline Tool tool_now(const std::string& name, std::string path, const std::string& path_list,
                     const std::string& missing) {
    if (::access(path.c_str(), X_OK) != 0) path.clear();  // none, or removed since the build
    const std::string folder = path.substr(0, path.rfind('/')), list = ":" + path_list + ":";
    const bool on_path = !path.empty() && (list.find(":" + folder + ":") != std::string::npos ||
                                           list.find(":" + folder + "/:") != std::string::npos);
    return {name, path, on_path, missing};
}
inline std::string describe(const Tool& t) {  // what to tell the student
    if (t.path.empty() || t.on_path) return t.path.empty() ? t.missing : t.path;
    const std::string folder = t.path.substr(0, t.path.rfind('/'));
    return "not on PATH, but found at " + t.path + ": export PATH=" + folder + ":$PATH";
}

// RmProfilingAdminOnly in /proc/driver/nvidia/params: 1 means only root may read the performance
// counters (ncu then fails with ERR_NVGPUCTRPERM). -1: not there.
inline int profiling_admin_only(const std::string& params) {
    const size_t at = params.find("RmProfilingAdminOnly:");
    const size_t digit = at == std::string::npos ? at : params.find_first_not_of(' ', at + 21);
    if (digit == std::string::npos || !std::isdigit(static_cast<unsigned char>(params[digit]))) return -1;
    return params[digit] != '0';
}
inline bool is_wsl(std::string proc_version) {  // "...microsoft-standard-WSL2..." in /proc/version
    for (char& c : proc_version) c = char(std::tolower(static_cast<unsigned char>(c)));
    return proc_version.find("microsoft") != std::string::npos ||
           proc_version.find("wsl") != std::string::npos;
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
                                                                       : nullptr;
    if (refused)
        error = std::string("this program takes no ") + refused +
                ": it measures fixed problems (--quick makes them smaller, --json FILE saves the results)";
    return !refused;
}

// ---- the ceilings -------------------------------------------------------------------------------

// The memory ceiling to compare kernels with: the better of the two measured copies.
inline double best_bandwidth_gbs(const Gpu& g) {
    return g.copy ? std::max(g.copy->kernel_gbs, g.copy->memcpy_gbs) : kNotMeasured;
}
inline double fma_gflops(const Gpu& g) { return g.fma ? g.fma->gflops : kNotMeasured; }

// The lowest SM clock at which `gflops` of FP32 FMAs are possible: one FMA (2 FLOP) per lane per cycle.
inline double min_clock_for_gflops(const wb::DeviceFacts& f, double gflops) {
    return gflops / (2.0 * f.sms * f.fp32_lanes_per_sm);
}
// The in-kernel clock rests on the global timer, which some virtual machines run at another rate:
// a reading below what the measured FMA rate needs is wrong, and not reported.
inline double sm_clock_under_load(const Gpu& g) {
    const double ghz = g.fma ? g.fma->sm_clock_ghz : 0;
    return ghz > 0 && ghz >= 0.98 * min_clock_for_gflops(g.facts, g.fma->gflops) ? ghz : kNotMeasured;
}

// What kernels.cuh measured on GPU 0, the JSON's "measured" (the theory is in the GPU's lines).
// The NaN factors turn what did not run into null.
inline std::vector<Line> ceiling_lines(const Gpu& g, const Report& r) {
    using namespace json;
    const FmaMeasurement fma = g.fma.value_or(FmaMeasurement{});
    const CopyMeasurement copy = g.copy.value_or(CopyMeasurement{});
    const double ran_fma = g.fma ? 1 : kNotMeasured, ran_copy = g.copy ? 1 : kNotMeasured;
    const double peak = g.facts.peak_fp32_gflops, bw_peak = g.facts.peak_bandwidth_gbs;
    const double bw = best_bandwidth_gbs(g), fma_gf = fma_gflops(g), clock = sm_clock_under_load(g);
    const double copy_gbs = copy.kernel_gbs * ran_copy, memcpy_gbs = copy.memcpy_gbs * ran_copy;
    const std::string no_clock = measured(clock) || !measured(fma_gf) ? "" : strf(
        "not measurable here: the global timer disagrees with the FMA rate, which needs at least %.3f GHz",
        min_clock_for_gflops(g.facts, fma_gf));
    return {{"error", text_or_null(g.measure_error)}, {"warmup", integer(r.warmup)},
            {"reps", integer(r.reps), r.reps < 10 ? "fewer than 10 timed runs: rough numbers" : ""},
            {"fma_gflops", number(fma_gf)}, {"fma_pct_peak", number(percent(fma_gf, peak))},
            {"fma_ms_median", number(fma.timing.ms_median * ran_fma)},
            {"fma_ms_min", number(fma.timing.ms_min * ran_fma)},
            {"fma_flops", integer(std::llround(fma.flops))}, {"fma_threads", integer(fma.threads)},
            {"sm_clock_ghz_under_load", number(clock), no_clock},
            {"fma_pct_peak_at_measured_clock", number(percent(fma_gf, peak * clock / g.facts.clock_ghz))},
            {"copy_kernel_gbs", number(copy_gbs)},
            {"copy_kernel_pct_peak", number(percent(copy_gbs, bw_peak))},
            {"copy_kernel_ms_median", number(copy.kernel.ms_median * ran_copy)},
            {"copy_kernel_ms_min", number(copy.kernel.ms_min * ran_copy)},
            {"memcpy_gbs", number(memcpy_gbs)}, {"memcpy_pct_peak", number(percent(memcpy_gbs, bw_peak))},
            {"memcpy_ms_median", number(copy.memcpy.ms_median * ran_copy)},
            {"memcpy_ms_min", number(copy.memcpy.ms_min * ran_copy)},
            {"copy_bytes", integer(std::llround(copy.bytes_moved)), "each byte read once, written once"},
            {"bandwidth_gbs", number(bw)}, {"bandwidth_pct_peak", number(percent(bw, bw_peak))},
            {"ridge_flop_per_byte", number(fma_gf / bw), "fewer FLOP per DRAM byte: memory bound"}};
}

// ---- the verdict --------------------------------------------------------------------------------

// Chapter 01 runs on the CPU and needs only what built this program: it is ready whenever this
// program runs. Problems stop the GPU chapters and set the exit status; notes block nothing.
struct Verdict {
    std::vector<std::string> problems, notes;
    int status = wb::kExitOk;  // kExitNoDevice, or kExitVerifyFailed when only cuBLAS failed
    bool ready() const { return problems.empty(); }
    void problem(int exit_status, const std::string& what) {
        problems.push_back(what);
        status = std::max(status, exit_status);
    }
    std::vector<std::string> first_lines() const {
        if (ready()) return {"ready for every chapter: 01 on the CPU, 02 and later on GPU 0."};
        return {"ready for chapter 01 (it runs on the CPU).",
                "NOT ready for the GPU chapters (02 and later). Fix first:"};
    }
};

// Below these percentages of theory something is wrong with the machine (another process on the
// GPU, clocks locked low, a power cap), not with the program.
constexpr double kLowFmaPercent = 70.0, kLowBandwidthPercent = 60.0;

inline Verdict judge(const Report& r) {
    Verdict v;
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    if (!versions.runs) v.problem(wb::kExitNoDevice, "CUDA versions: " + versions.text);
    if (versions.runs && r.driver_version < r.runtime_version)
        v.notes.push_back("update the NVIDIA driver: it is older than the CUDA runtime");
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
        const double fma_pct = percent(fma_gflops(g), f.peak_fp32_gflops);  // NaN: not measured, no note
        const double bw_pct = percent(best_bandwidth_gbs(g), f.peak_bandwidth_gbs);
        if (fma_pct < kLowFmaPercent)
            v.notes.push_back(strf("FP32 FMA reached only %.0f%% of theory: is another program using the "
                                   "GPU, or are its clocks or power capped? (nvidia-smi -q -d "
                                   "CLOCK,PERFORMANCE)", fma_pct));
        if (bw_pct < kLowBandwidthPercent)
            v.notes.push_back(strf("memory bandwidth reached only %.0f%% of theory: is another program "
                                   "using the GPU?", bw_pct));
    }
    for (const Tool& t : r.tools)
        if (!t.on_path) v.notes.push_back(t.path.empty() ? t.missing : t.name + ": " + describe(t));
    return v;
}

// ---- the JSON file ------------------------------------------------------------------------------

inline std::vector<Line> version_lines(int driver, int runtime) {  // the JSON's "cuda"
    using namespace json;
    const VersionMatch m = match_versions(driver, runtime);
    return {{"driver_version", integer(driver)}, {"driver", text(version_text(driver))},
            {"runtime_version", integer(runtime)}, {"runtime", text(version_text(runtime))},
            {"compatible", boolean(m.runs)}, {"note", text(m.text)}};
}

// A GPU's lines up to its measurements.
inline std::vector<Line> gpu_lines(const Gpu& g, const std::vector<int>& built) {
    using namespace json;
    const wb::DeviceFacts& f = g.facts;
    auto known = [](double peak) { return number(peak > 0 ? peak : kNotMeasured); };  // 0: unknown
    std::vector<Line> lines = {{"id", integer(f.id)}, {"name", text(f.name)}, {"cc", text(f.cc())},
                               {"sm", text(g.sm())}, {"query_error", text_or_null(g.query_error)}};
    lines.insert(lines.end(), g.limits.begin(), g.limits.end());
    const CodeMatch code = code_for(built, f.cc_number());
    lines.insert(lines.end(), {{"code", text(code.kind), code.text},
                               {"kernel_image", text_or_null(g.kernel_image)},
                               {"rebuild_hint", text(wb::rebuild_hint(f.cc_major, f.cc_minor))},
                               {"peak_fp32_gflops", number(f.peak_fp32_gflops), "SMs x lanes x 2 x clock"},
                               {"peak_bandwidth_gbs", number(f.peak_bandwidth_gbs), "bits / 8 x 2 x clock"},
                               {"peak_fp16_tc_gflops", known(f.peak_fp16_tc_gflops)},
                               {"peak_tf32_tc_gflops", known(f.peak_tf32_tc_gflops)}});
    return lines;
}

inline std::vector<Line> smoke_lines(const Gpu& g) {  // the cuBLAS smoke test (GPU 0)
    using namespace json;
    const bool ran = g.cublas.has_value();
    return {{"shape", text(wb::to_string(kSmokeShape))},
            {"status", text(ran && g.cublas->pass ? "PASS" : "FAIL")},
            {"rel_err", number(ran ? g.cublas->rel_err : kNotMeasured)},
            {"detail", text(ran ? g.cublas->what : "")}};
}

// The keys are documented in README.md ("The JSON file"); add new keys at the end of their object
// and never rename one: tools/ and the report read them.
inline std::string to_json(const Report& r) {
    using namespace json;
    std::vector<std::string> built, gpus;
    for (int a : r.built_for) built.push_back(strf("sm_%d", a));
    for (const Gpu& g : r.gpus) {
        std::vector<Line> lines = gpu_lines(g, r.built_for);
        lines.push_back({"measured", g.measure_ran ? object(ceiling_lines(g, r)) : null()});
        lines.push_back({"cublas_smoke", g.cublas ? object(smoke_lines(g)) : null()});
        gpus.push_back(object(lines));
    }
    std::vector<Line> tools;
    for (const Tool& t : r.tools) {  // "compute-sanitizer" -> "compute_sanitizer": easier in jq and Python
        std::string key = t.name;
        std::replace(key.begin(), key.end(), '-', '_');
        tools.push_back({key, object({{"path", text_or_null(t.path)}, {"on_path", boolean(t.on_path)}})});
    }
    const Verdict v = judge(r);
    const int admin = r.profiling_admin_only;
    return object({{"schema", integer(1)}, {"program", text("00_env_check")}, {"git", text(r.git)},
                   {"timestamp", text(r.timestamp)}, {"quick", boolean(r.quick)},
                   {"cuda", object(version_lines(r.driver_version, r.runtime_version))},
                   {"built_for", texts(built)}, {"gpu_count", integer((long long)r.gpus.size())},
                   {"gpu_error", text_or_null(r.device_error)}, {"gpus", array(gpus)},
                   {"tools", object(tools)}, {"profiling_admin_only", admin < 0 ? null() : boolean(admin)},
                   {"wsl", boolean(r.wsl)}, {"ready", boolean(v.ready())}, {"problems", texts(v.problems)},
                   {"notes", texts(v.notes)}}) +
           "\n";
}

}  // namespace ch00
