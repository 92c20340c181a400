// env_checks.h - chapter 00's rules: do the driver and the runtime fit, which compiled-in code
// runs on this GPU, where the tools are, which options apply, and the verdict over all of it.
// Host code only, tested without a GPU.
#pragma once

#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "env_report.h"
#include "options.h"

namespace env {

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

// Chapter 01 runs on the CPU: it needs only what built this program, so it is ready whenever this
// program runs. Problems stop the GPU chapters (02 and later) and set the exit status; notes are
// worth knowing but block nothing.
struct Verdict {
    std::vector<std::string> problems;
    std::vector<std::string> notes;
    bool ready() const { return problems.empty(); }  // for every chapter, the GPU ones included
};

// The verdict's first lines: which chapters can start now.
inline std::vector<std::string> readiness(const Verdict& v) {
    if (v.ready()) return {"ready for every chapter: 01 on the CPU, 02 and later on GPU 0."};
    return {"ready for chapter 01 (it runs on the CPU).",
            "NOT ready for the GPU chapters (02 and later). Fix first:"};
}

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
        const double bw_pct = percent(best_bandwidth_gbs(g.ceilings), g.peak_bandwidth_gbs);
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

}  // namespace env
