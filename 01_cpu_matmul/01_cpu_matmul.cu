// 01_cpu_matmul - matrix multiplication on the CPU: naive loops, loop order, cache and register
// blocking, all cores; OpenBLAS with the same thread count as the baseline.
// Run: make 01 && ./01_cpu_matmul [--size 1024] [--variant blocked_1t] (--help lists all)
//
// Host code only (nvcc hands it to g++). Options, reference, checker, table and CSV are the
// common ones; cpu_harness.h adds inputs, poisoning and timing for host functions.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cpu_harness.h"
#include "cpu_kernels.h"
#include "options.h"
#include "report.h"

#ifndef WB_GIT_COMMIT
#define WB_GIT_COMMIT "unknown"
#endif

namespace {

const char* const kChapter = "01_cpu_matmul";

[[noreturn]] void bad_input(const std::string& what) {
    std::fprintf(stderr, "%s: error: %s\n", kChapter, what.c_str());
    std::exit(wb::kExitBadInput);
}

void print_help(const std::vector<ch01::CpuVariant>& variants) {
    std::printf("%s", wb::usage(kChapter, {}, ch01::default_options()).c_str());
    std::printf(
        "chapter 01 runs on the CPU: exit status 3 does not occur. naive_ijk_1t is skipped above\n"
        "1024^3 multiply-adds unless named with --variant.\n");
    std::printf("variants (threads; %% BLAS compares with OpenBLAS on the same number of threads):\n");
    for (const ch01::CpuVariant& v : variants)
        std::printf("  %-18s %2d  %s\n", v.name.c_str(), v.threads, v.what);
    if (!ch01::kHaveOpenBlas) std::printf("  (built without OpenBLAS: no baseline rows, '-' in %% BLAS)\n");
}

// Host memory one shape needs: A, B, C, C0, a copy of C for the check, OpenBLAS's C for the
// full comparison, and the double-precision reference (value and scale) of small shapes.
double host_bytes(const wb::Shape& s, float beta) {
    const double mn = double(s.m) * s.n;
    double bytes = 4.0 * (double(s.m) * s.k + double(s.k) * s.n + 3.0 * mn);
    if (beta != 0.0f) bytes += 4.0 * mn;
    if (ch01::full_reference(s)) bytes += 16.0 * mn;
    return bytes;
}

void print_preamble(const wb::Options& opt, const wb::RunInfo& info, int all) {
    std::printf("%s on %s: %u hardware threads, %d used by the all-thread variants\n", kChapter,
                info.gpu.c_str(), std::thread::hardware_concurrency(), all);
#ifdef WB_HAVE_OPENBLAS
    std::printf("baseline: %s, kernel for %s", openblas_get_config(), openblas_get_corename());
    if (const char* core = std::getenv("OPENBLAS_CORETYPE"))
        std::printf(" (forced by OPENBLAS_CORETYPE=%s)", core);
    std::printf("\n");
    if (const std::string note = ch01::openblas_core_note(openblas_get_corename(), ch01::cpu_isa()); !note.empty())
        std::printf("%s\n", note.c_str());
#endif
    const double busy = ch01::busy_cores_elsewhere();
    if (busy > 0.25)
        std::printf("warning: other programs keep %.1f of %u cores busy: timings will be low and noisy\n",
                    busy, std::thread::hardware_concurrency());
    std::printf(
        "C = alpha*A*B + beta*C with alpha = %g, beta = %g; seed %llu; %d+ warm-up calls (at least %.2g s)"
        " + %d timed calls, median shown%s\n",
        opt.alpha, opt.beta, (unsigned long long)opt.seed, opt.warmup, ch01::kMinWarmupSeconds, opt.reps,
        opt.check ? "" : "; verification OFF");
    if (ch01::kHaveOpenBlas)
        std::printf(
            "%% BLAS: against OpenBLAS on as many threads (_1t rows: openblas_1t; _%dt rows: openblas_%dt)",
            all, all);
    else
        std::printf(
            "%% BLAS: none, this build has no OpenBLAS (sudo apt-get install libopenblas-dev; make clean; "
            "make)");
    std::printf(". %% peak: not computed on CPUs\n\n");
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<ch01::CpuVariant> variants = ch01::variants();
    wb::Options opt;
    std::string error;
    if (!ch01::parse_cpu_options(argc, argv, variants, opt, error)) bad_input(error);
    if (opt.help) {
        print_help(variants);
        return wb::kExitOk;
    }
    const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    for (const wb::Shape& s : opt.shapes)
        if (host_bytes(s, opt.beta) > memory) {
            char what[160];
            std::snprintf(
                what, sizeof what, "shape %s needs %.2f GiB of memory, but this machine has %.2f GiB",
                wb::to_string(s).c_str(), host_bytes(s, opt.beta) / 1073741824.0, memory / 1073741824.0);
            bad_input(what);
        }

    wb::RunInfo info;
    info.chapter = kChapter;
    info.gpu = ch01::cpu_model();  // the CSV's device column holds the CPU here; cc stays empty
    info.git = WB_GIT_COMMIT;
    info.student = wb::student_id();
    const int all = ch01::all_threads();
    print_preamble(opt, info, all);

    // Large shapes are also compared entry by entry with OpenBLAS (its all-thread variant).
    ch01::CpuSgemmFn library = nullptr;
    for (const ch01::CpuVariant& v : variants)
        if (v.baseline) library = v.run;

    wb::ResultTable table("BLAS");
    table.header();
    bool failed = false;
    for (const wb::Shape& s : opt.shapes) {
        ch01::CpuProblem prob(s, opt.alpha, opt.beta, opt.seed);
        // Single-thread rows first, then all-thread rows. In each group the baseline (listed first
        // in the table) is timed first, also when only another variant was asked for, and every
        // row of the group is compared with it alone: 1-thread and all-thread figures never mix.
        for (int threads : {1, all}) {
            bool wanted = false;
            for (const ch01::CpuVariant& v : variants)
                wanted =
                    wanted || (v.threads == threads && (opt.variant == "all" || ch01::named(opt, v.name)));
            if (!wanted) continue;
            double baseline_gflops = -1;
            for (const ch01::CpuVariant& v : variants) {
                if (v.threads != threads ||
                    (!v.baseline && opt.variant != "all" && !ch01::named(opt, v.name)))
                    continue;
                wb::ResultRow r;
                r.variant = v.name;
                r.dtype = "fp32";
                r.shape = s;
                r.alpha = opt.alpha;
                r.beta = opt.beta;
                wb::CheckResult c;
                std::string error_text;
                if (v.slow && double(s.m) * s.n * s.k > ch01::kSlowMaxMacs && !ch01::named(opt, v.name)) {
                    r.status = "skipped (too slow)";
                } else {
                    try {
                        if (opt.check) c = prob.verify(v.run, library);
                        const wb::Timing t = prob.time(v.run, opt.warmup, opt.reps);
                        r.ms_median = t.ms_median;
                        r.ms_min = t.ms_min;
                        r.status = !opt.check ? "unchecked" : c.pass ? "PASS" : "FAIL";
                        if (opt.check) r.rel_err = c.rel_err;
                        if (opt.check && !c.pass) error_text = c.describe();
                    } catch (const std::exception& e) {
                        r.status = "FAIL";
                        error_text = e.what();
                    }
                    failed = failed || r.status == "FAIL";
                }
                if (v.baseline && r.ms_median > 0) baseline_gflops = s.flops() / (r.ms_median * 1e6);
                r.baseline_gflops = baseline_gflops;
                wb::derive_rates(r, -1.0);  // no "% of peak" on the CPU (see the notes)
                table.row(r);
                if (!error_text.empty()) std::printf("    %s\n", error_text.c_str());
                if (!opt.csv.empty()) wb::append_csv(opt.csv, r, info);
            }
            if (all == 1) break;  // one core: the single group already held every variant
        }
    }
#ifdef WB_HAVE_OPENBLAS
    // Under the ratios too: a % BLAS against a generic kernel is the first thing a reader misreads.
    if (const std::string note = ch01::openblas_core_note(openblas_get_corename(), ch01::cpu_isa()); !note.empty())
        std::printf("\n%s\n", note.c_str());
#endif
    if (failed) std::printf("\nverification FAILED for at least one variant (exit status 1)\n");
    return failed ? wb::kExitVerifyFailed : wb::kExitOk;
}
