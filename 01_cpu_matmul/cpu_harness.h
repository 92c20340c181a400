// cpu_harness.h - what the GPU chapters get from common/gemm_harness, for host functions:
// seeded inputs, a poisoned output, verification against the double-precision reference of
// common/numerics, and timing with the host clock. Used by the program and by the tests.
//
// (This is chapter 01's only host-side harness; it belongs in common/ once a second CPU
// program needs it. It reuses wb::Timing and wb::summarize from common/timer.cuh.)
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cpu_kernels.h"
#include "numerics.h"
#include "options.h"
#include "timer.cuh"

namespace ch01 {

// ---- options -----------------------------------------------------------------------------------
// The common command line (wb::parse_options) with this chapter's defaults. The naive loop takes
// seconds per call at 1024^3, so warm-up and repetitions are fewer than the GPU chapters' 2 and
// 10; ask for more (--reps 20) when you want steadier numbers.
constexpr int kDefaultWarmup = 1;
constexpr int kDefaultReps = 5;
inline std::vector<wb::Shape> default_shapes() {
    return {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}};
}


// True when --variant lists `name` itself ("all" does not count).
inline bool named(const wb::Options& opt, const std::string& name) {
    for (const std::string& n : wb::split_list(opt.variant))
        if (n == name) return true;
    return false;
}

// The shared options with this chapter's defaults (fewer repetitions: CPU runs are long).
inline wb::Options default_options() {
    wb::Options opt;
    opt.warmup = kDefaultWarmup;
    opt.reps = kDefaultReps;
    return opt;
}

// Parses argv into `opt` with the defaults above; an unknown variant name is bad input too.
// On failure returns false with one sentence in `error` (the program prints it and exits 2).
inline bool parse_cpu_options(int argc, const char* const* argv, const std::vector<CpuVariant>& variants,
                              wb::Options& opt, std::string& error) {
    opt = default_options();
    if (!wb::parse_options(argc, argv, opt, error)) return false;
    if (opt.shapes.empty()) opt.shapes = default_shapes();
    if (opt.variant == "all") return true;
    for (const std::string& name : wb::split_list(opt.variant)) {
        bool known = false;
        std::string names;
        for (const CpuVariant& v : variants) {
            known = known || name == v.name;
            names += (names.empty() ? "" : ", ") + v.name;
        }
        if (!known) {
            error = "unknown variant '" + name + "' (this chapter has: " + names + ")";
            return false;
        }
    }
    return true;
}

// ---- facts about the machine --------------------------------------------------------------------

// Same rule as the GPU harness: the full reference while it is cheap, a sample above that.
inline bool full_reference(wb::Shape s) { return wb::use_full_reference(s); }

// The "model name" line of /proc/cpuinfo (e.g. "AMD EPYC 9454P 48-Core Processor"); goes into
// the CSV's gpu column. Virtual machines often show a shortened name.
inline std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    return "unknown CPU";
}

// The widest vector unit a kernel uses: OpenBLAS picks one kernel family ("core") per CPU, and an
// OpenBLAS older than the CPU falls back to a generic or older core (Prescott: SSE only) that runs
// at a fraction of the CPU's speed. A ratio against it looks like a win and is not.
enum class VectorIsa { sse, avx, avx2, avx512 };
inline const char* to_string(VectorIsa v) {
    return v == VectorIsa::avx512 ? "AVX-512" : v == VectorIsa::avx2 ? "AVX2" : v == VectorIsa::avx ? "AVX" : "SSE";
}
// The ISA of an OpenBLAS core name (openblas_get_corename(), case as OpenBLAS prints it).
inline VectorIsa openblas_core_isa(std::string core) {
    for (char& c : core) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (const char* n : {"skylakex", "cooperlake", "sapphirerapids", "zen4", "zen5"})
        if (core == n) return VectorIsa::avx512;
    for (const char* n : {"haswell", "zen", "zen2", "zen3", "excavator", "steamroller", "piledriver"})
        if (core == n) return VectorIsa::avx2;
    for (const char* n : {"sandybridge", "bulldozer"})
        if (core == n) return VectorIsa::avx;
    return VectorIsa::sse;  // prescott, core2, penryn, dunnington, nehalem, atom, barcelona, generic...
}
// The widest vector unit this CPU offers.
inline VectorIsa cpu_isa() {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_cpu_supports("avx512f")) return VectorIsa::avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorIsa::avx2;
    if (__builtin_cpu_supports("avx")) return VectorIsa::avx;
#endif
    return VectorIsa::sse;
}
// One line when OpenBLAS's core uses a narrower vector unit than the CPU has (empty otherwise):
// what that means for % BLAS, and how to ask OpenBLAS for the right core.
inline std::string openblas_core_note(const std::string& core, VectorIsa cpu) {
    const VectorIsa blas = openblas_core_isa(core);
    if (blas >= cpu) return "";
    const char* suggest = cpu == VectorIsa::avx512 ? "SkylakeX" : cpu == VectorIsa::avx2 ? "Haswell" : "Sandybridge";
    return std::string("note: OpenBLAS runs its ") + core + " kernel (" + to_string(blas) + ") on a CPU with " +
           to_string(cpu) + ": this OpenBLAS is older than the CPU, so % BLAS compares with a slow baseline and " +
           "reads high. Run with OPENBLAS_CORETYPE=" + suggest + " (or install a newer OpenBLAS) for a fair one.";
}

// Warm-up lasts at least this long, however many calls that takes: the CPU clock ramps up, and a
// thread library that just finished (OpenBLAS, OpenMP) keeps its idle threads spinning for up
// to ~0.1 s, where they compete with the next variant's threads for the cores.
constexpr double kMinWarmupSeconds = 0.25;

// Times `run()`: at least `warmup` untimed calls (and kMinWarmupSeconds), then `reps` calls, each
// timed on its own with steady_clock (monotonic; system_clock may jump when the clock is set).
// `before_each` runs outside the timed span.
template <class Run, class Prepare>
wb::Timing time_host(Run&& run, Prepare&& before_each, int warmup, int reps) {
    using clock = std::chrono::steady_clock;
    const auto warmup_start = clock::now();
    for (int i = 0;
         i < warmup || clock::now() - warmup_start < std::chrono::duration<double>(kMinWarmupSeconds); ++i) {
        before_each();
        run();
    }
    std::vector<float> ms;
    for (int i = 0; i < reps; ++i) {
        before_each();
        const auto start = clock::now();
        run();
        const auto stop = clock::now();
        ms.push_back(std::chrono::duration<float, std::milli>(stop - start).count());
    }
    return wb::summarize(std::move(ms));
}

// How many cores other programs keep busy, sampled from /proc/stat over `seconds` while this
// program sleeps, minus what this process itself used meanwhile (OpenBLAS's idle threads spin
// for a while after they start). A CPU benchmark shares the cores with everything else: a
// compile running next to it takes a core away from the all-thread variants, and their barriers
// then wait for the thread that lost its core.
inline double busy_cores_elsewhere(double seconds = 0.2) {
    auto busy_and_total = [](double& busy, double& total) {
        std::ifstream in("/proc/stat");
        std::string cpu;
        double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
        in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
        busy = user + nice + system + irq + softirq + steal;
        total = busy + idle + iowait;
        return bool(in);
    };
    auto own_cpu_seconds = [] {
        timespec t{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
    };
    double b0 = 0, t0 = 0, b1 = 0, t1 = 0;
    const double own0 = own_cpu_seconds();
    const auto start = std::chrono::steady_clock::now();
    if (!busy_and_total(b0, t0)) return -1.0;
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    if (!busy_and_total(b1, t1) || t1 <= t0) return -1.0;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double all_busy = (b1 - b0) / (t1 - t0) * std::thread::hardware_concurrency();
    return std::max(0.0, all_busy - (own_cpu_seconds() - own0) / wall);
}

// One GEMM: seeded random A, B (and C0 when beta != 0), the output C, and the reference, made on
// first use. The data is the same as the GPU harness makes for the same seed and shape.
class CpuProblem {
public:
    CpuProblem(wb::Shape s, float alpha, float beta, uint64_t seed)
        : s_(s),
          alpha_(alpha),
          beta_(beta),
          seed_(seed),
          A_(size_t(s.m) * s.k),
          B_(size_t(s.k) * s.n),
          C_(size_t(s.m) * s.n) {
        wb::fill_random(A_.data(), A_.size(), seed, 1);
        wb::fill_random(B_.data(), B_.size(), seed, 2);
        if (beta != 0.0f) {
            C0_.resize(C_.size());
            wb::fill_random(C0_.data(), C0_.size(), seed, 3);
        }
    }

    const wb::Shape& shape() const { return s_; }
    const std::vector<float>& output() const { return C_; }

    // Before a verified run: NaN in every entry when beta == 0 (an entry the kernel forgets, or a
    // kernel that reads C, then fails), else the initial C0.
    void reset_output() {
        if (beta_ == 0.0f)
            std::fill(C_.begin(), C_.end(), std::nanf(""));
        else
            C_ = C0_;
    }

    void run(CpuSgemmFn fn) { fn(s_.m, s_.n, s_.k, alpha_, A_.data(), B_.data(), beta_, C_.data()); }

    // Small problems: every entry against the full double-precision reference. Large ones: a
    // sample of entries against the CPU reference plus every entry against `library` (OpenBLAS),
    // whose own result must agree with the sample; without a library, the sample alone.
    wb::CheckResult verify(CpuSgemmFn fn, CpuSgemmFn library = nullptr) {
        reset_output();
        run(fn);
        const std::vector<float> got = C_;
        return check(got, library);
    }

    wb::CheckResult check(const std::vector<float>& got, CpuSgemmFn library = nullptr) {
        const wb::Tolerance tol = wb::tolerance_for(wb::Precision::fp32, s_.k);
        if (full_reference(s_)) {
            if (value_.empty()) wb::reference_full(view(), value_, scale_);
            return wb::check_full(got.data(), s_.m, s_.n, value_, scale_, tol);
        }
        if (sample_.empty()) sample_ = wb::reference_sample(view(), kSampleCount, seed_);
        wb::CheckResult r = wb::check_sample(got.data(), s_.n, sample_, tol);
        if (!library) return r;
        if (library_result_.empty()) {
            reset_output();
            run(library);
            library_result_ = C_;
            const wb::CheckResult lib_ok = wb::check_sample(library_result_.data(), s_.n, sample_, tol);
            if (!lib_ok.pass)
                throw std::runtime_error("OpenBLAS disagrees with the CPU reference: " + lib_ok.describe());
        }
        wb::CheckResult all = wb::check_against(got.data(), library_result_.data(), view(), tol, "OpenBLAS");
        return wb::combine(r, all);
    }

    // beta != 0: C is reset to C0 before every call, outside the timed span, so every timed call
    // does the same work on the same data (and C does not grow call after call).
    wb::Timing time(CpuSgemmFn fn, int warmup, int reps) {
        return time_host([&] { run(fn); },
                         [&] {
                             if (beta_ != 0.0f) C_ = C0_;
                         },
                         warmup, reps);
    }

private:
    static constexpr size_t kSampleCount = 1024;
    wb::GemmView view() const {
        return wb::GemmView{s_, alpha_, beta_, A_.data(), B_.data(), C0_.empty() ? nullptr : C0_.data()};
    }

    wb::Shape s_;
    float alpha_, beta_;
    uint64_t seed_;
    std::vector<float> A_, B_, C0_, C_;
    std::vector<double> value_, scale_;  // full reference
    std::vector<wb::RefEntry> sample_;   // sampled reference
    std::vector<float> library_result_;  // OpenBLAS's C, for the full comparison
};

}  // namespace ch01
