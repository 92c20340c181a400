// test_01_cpu_matmul - CPU tests (no GPU needed, none skipped): every variant against the
// double-precision reference on the spec's shapes with C poisoned by NaN, planted bugs that the
// check must catch, the variant table with and without OpenBLAS, and the option handling.
#include <cmath>
#include <string>
#include <vector>

#include "cpu_harness.h"
#include "cpu_kernels.h"
#include "testing.cuh"

namespace {

// Runs `fn` on one case of the spec: seeded inputs, C poisoned with NaN when beta == 0 (else set
// to C0), and every entry compared with wb::reference_full. (CpuProblem::verify does exactly
// this for every shape of the list: they are all below the full-reference limit.)
wb::CheckResult check_case(cpu::CpuProblem& prob, CpuSgemmFn fn) {
    REQUIRE(cpu::full_reference(prob.shape()));
    return prob.verify(fn);
}

// Planted bug 1, the classic blocking mistake: the K loop only visits whole KC panels, so the
// last K % KC terms of every dot product are lost (and with K < KC nothing is written at all).
void sgemm_blocked_drops_k_tail(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                float* C) {
    using namespace cpu::blocked;
    static PackBuffer a_buffer, b_buffer;
    float* Ap = a_buffer.get(size_t(MC) * KC);
    float* Bp = b_buffer.get(size_t(KC) * NC);
    for (int jc = 0; jc < N; jc += NC) {
        const int nc = std::min(NC, N - jc);
        for (int pc = 0; pc + KC <= K; pc += KC) {  // BUG: should be pc < K with kc = min(KC, K - pc)
            pack_B(KC, nc, B, N, pc, jc, Bp);
            for (int ic = 0; ic < M; ic += MC) {
                const int mc = std::min(MC, M - ic);
                pack_A(mc, KC, A, K, ic, pc, Ap);
                for (int jr = 0; jr < nc; jr += NR)
                    for (int ir = 0; ir < mc; ir += MR)
                        micro_kernel(KC, Ap + size_t(ir) * KC, Bp + size_t(jr) * KC, alpha,
                                     pc == 0 ? beta : 1.0f, C + size_t(ic + ir) * N + jc + jr, N,
                                     std::min(MR, mc - ir), std::min(NR, nc - jr));
            }
        }
    }
}

// Planted bug 2: "alpha * acc + beta * C" without the beta == 0 test reads C, and 0 * NaN is NaN.
void sgemm_reads_c_when_beta_is_zero(int M, int N, int K, float alpha, const float* A, const float* B,
                                     float beta, float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[size_t(i) * K + k] * B[size_t(k) * N + j];
            C[size_t(i) * N + j] = alpha * acc + beta * C[size_t(i) * N + j];
        }
}

// Planted bug 3: the right-edge micro-tiles are never computed (the jr loop rounds N down).
void sgemm_blocked_skips_right_edge(int M, int N, int K, float alpha, const float* A, const float* B,
                                    float beta, float* C) {
    const int whole = N / cpu::blocked::NR * cpu::blocked::NR;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < whole; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[size_t(i) * K + k] * B[size_t(k) * N + j];
            C[size_t(i) * N + j] = cpu::finish(acc, alpha, beta, C[size_t(i) * N + j]);
        }
}

bool parse(std::vector<const char*> args, wb::Options& opt, std::string& error) {
    args.insert(args.begin(), "01_cpu_matmul");
    return cpu::parse_cpu_options(int(args.size()), args.data(), cpu::variants(), opt, error);
}

}  // namespace

TEST_CASE("01: every variant is right on every shape of the spec", "[01]") {
    const std::vector<cpu::CpuVariant> variants = cpu::variants();
    for (const wb::test::GemmCase& c : wb::test::standard_cases()) {
        cpu::CpuProblem prob(c.s, c.alpha, c.beta, 7);
        for (const cpu::CpuVariant& v : variants) {
            const wb::CheckResult r = check_case(prob, v.run);
            INFO("variant " << v.name << " on " << wb::test::describe(c) << ": " << r.describe());
            CHECK(r.pass);
        }
    }
}

TEST_CASE("01: the blocked kernels are right around every tile and panel edge", "[01]") {
    using namespace cpu::blocked;
    // One below, at and one above MR, NR, KC, MC and NC (NC only in N, where it matters).
    const std::vector<wb::Shape> shapes = {{MR - 1, NR + 1, KC + 1},
                                           {MR + 1, NR - 1, KC - 1},
                                           {MC + 1, 2 * NR + 3, 2 * KC + 5},
                                           {MC - 1, NC + 1, 3},
                                           {2 * MC + MR + 1, 97, KC}};
    for (const wb::Shape& s : shapes)
        for (float beta : {0.0f, 0.5f}) {
            cpu::CpuProblem prob(s, 1.25f, beta, 11);
            for (CpuSgemmFn fn : {cpu::sgemm_blocked, cpu::sgemm_blocked_omp}) {
                const wb::CheckResult r = check_case(prob, fn);
                INFO(wb::to_string(s) << " beta=" << beta << ": " << r.describe());
                CHECK(r.pass);
            }
        }
}

TEST_CASE("01: the check catches planted bugs", "[01]") {
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{129, 65, 300}, wb::Shape{1000, 1013, 777}}) {
        cpu::CpuProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(check_case(prob, cpu::sgemm_blocked).pass);
        CHECK_FALSE(check_case(prob, sgemm_blocked_drops_k_tail).pass);
        CHECK_FALSE(check_case(prob, sgemm_reads_c_when_beta_is_zero).pass);
        CHECK_FALSE(check_case(prob, sgemm_blocked_skips_right_edge).pass);
    }
}

TEST_CASE("01: a large shape is checked on a sample plus, with OpenBLAS, every entry", "[01]") {
    // 1500^3 is above the full-reference limit: the program's path for big shapes.
    const wb::Shape s{1500, 1500, 1500};
    REQUIRE_FALSE(cpu::full_reference(s));
    cpu::CpuProblem prob(s, 1.0f, 0.0f, 5);
    CpuSgemmFn library = nullptr;
    for (const cpu::CpuVariant& v : cpu::variants())
        if (v.baseline) library = v.run;
    const wb::CheckResult good = prob.verify(cpu::sgemm_blocked_omp, library);
    INFO(good.describe());
    CHECK(good.pass);
    CHECK(good.checked > (library ? 1500LL * 1500 : 0));
    CHECK_FALSE(prob.verify(sgemm_blocked_drops_k_tail, library).pass);
}

TEST_CASE("01: the variant table is well formed, with or without OpenBLAS", "[01]") {
    const std::vector<cpu::CpuVariant> variants = cpu::variants();
    const int all = cpu::all_threads();
    REQUIRE(all >= 1);
    int baselines = 0;
    for (size_t i = 0; i < variants.size(); ++i) {
        const cpu::CpuVariant& v = variants[i];
        INFO("variant " << v.name);
        CHECK(v.run != nullptr);
        CHECK((v.threads == 1 || v.threads == all));
        // The thread count is part of the name, so a CSV row says what it measured.
        const std::string suffix = "_" + std::to_string(v.threads) + "t";
        CHECK(v.name.size() > suffix.size());
        CHECK(v.name.compare(v.name.size() - suffix.size(), suffix.size(), suffix) == 0);
        for (size_t j = i + 1; j < variants.size(); ++j) CHECK(v.name != variants[j].name);
        if (v.baseline) ++baselines;
    }
    if (cpu::kHaveOpenBlas) {
        // One baseline per thread count, listed before the variants it is compared with.
        CHECK(baselines == (all > 1 ? 2 : 1));
        for (size_t i = 0; i < variants.size(); ++i) {
            if (variants[i].baseline) continue;
            bool before = false;
            for (size_t j = 0; j < i; ++j)
                before = before || (variants[j].baseline && variants[j].threads == variants[i].threads);
            INFO("variant " << variants[i].name);
            CHECK(before);
        }
    } else {
        CHECK(baselines == 0);  // built with OPENBLAS=0 or without libopenblas-dev
    }
    CHECK(variants.size() == size_t(4 + baselines));
}

TEST_CASE("01: options: defaults, variant names and bad input", "[01][options]") {
    wb::Options opt;
    std::string error;
    REQUIRE(parse({}, opt, error));
    CHECK(opt.warmup == cpu::kDefaultWarmup);
    CHECK(opt.reps == cpu::kDefaultReps);
    CHECK(opt.shapes.size() == cpu::default_shapes().size());
    // --help names this chapter's defaults, not the GPU chapters' 2 and 10.
    const std::string help = wb::usage("01_cpu_matmul", {}, cpu::default_options());
    CHECK(help.find("(default " + std::to_string(cpu::kDefaultWarmup) + " and " +
                    std::to_string(cpu::kDefaultReps) + ")") != std::string::npos);
    CHECK(opt.variant == "all");

    REQUIRE(
        parse({"--variant", "blocked_1t,loop_ikj_1t", "--size", "100x200x300", "--reps", "3"}, opt, error));
    CHECK(cpu::named(opt, "blocked_1t"));
    CHECK(cpu::named(opt, "loop_ikj_1t"));
    CHECK_FALSE(cpu::named(opt, "naive_ijk_1t"));
    REQUIRE(opt.shapes.size() == 1);
    CHECK(opt.shapes[0].k == 300);
    CHECK(opt.reps == 3);

    const std::string omp = "blocked_omp_" + std::to_string(cpu::all_threads()) + "t";
    CHECK(parse({"--variant", omp.c_str()}, opt, error));

    for (std::vector<const char*> bad : std::vector<std::vector<const char*>>{
             {"--variant", "blocked"},  // the thread count is part of the name
             {"--variant", "blocked_1t,nope_1t"},
             {"--size", "0"},
             {"--size", "12abc"},
             {"--reps", "0"},
             {"--frobnicate"}}) {
        INFO("arguments " << bad[0] << (bad.size() > 1 ? std::string(" ") + bad[1] : std::string()));
        error.clear();
        CHECK_FALSE(parse(bad, opt, error));
        CHECK_FALSE(error.empty());
        CHECK(error.find('\n') == std::string::npos);  // one line on stderr
    }
    CHECK_FALSE(parse({"--variant", "nope_1t"}, opt, error));
    CHECK(error.find("blocked_1t") != std::string::npos);  // the message lists the real names

    REQUIRE(parse({"--help"}, opt, error));
    CHECK(opt.help);
}

TEST_CASE("01: timing reports the median and the minimum of the timed calls", "[01]") {
    int calls = 0;
    const wb::Timing t = cpu::time_host([&] { ++calls; }, [] {}, 2, 7);
    CHECK(t.ms_all.size() == 7);
    CHECK(calls >= 2 + 7);  // the warm-up runs for at least kMinWarmupSeconds, so usually many more
    CHECK(t.ms_min <= t.ms_median);
}
