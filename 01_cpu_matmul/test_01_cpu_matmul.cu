// test_01_cpu_matmul - CPU tests (no GPU needed, none skipped): every variant against the
// double-precision reference on the spec's shapes with C poisoned by NaN, planted bugs that the
// check must catch, the variant table with and without OpenBLAS, the option handling, and the
// FMA count of the micro-kernel (count_fma.sh) on the built program and on planted listings.
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_harness.h"
#include "cpu_kernels.h"
#include "testing.cuh"

namespace {

// Runs `fn` on one case of the spec: seeded inputs, C poisoned with NaN when beta == 0 (else set
// to C0), and every entry compared with wb::reference_full. (CpuProblem::verify does exactly
// this for every shape of the list: they are all below the full-reference limit.)
wb::CheckResult check_case(ch01::CpuProblem& prob, ch01::CpuSgemmFn fn) {
    REQUIRE(ch01::full_reference(prob.shape()));
    return prob.verify(fn);
}

// Planted bug 1, the classic blocking mistake: the K loop only visits whole KC panels, so the
// last K % KC terms of every dot product are lost (and with K < KC nothing is written at all).
void sgemm_blocked_drops_k_tail(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                float* C) {
    using namespace ch01::blocked;
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
    const int whole = N / ch01::blocked::NR * ch01::blocked::NR;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < whole; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[size_t(i) * K + k] * B[size_t(k) * N + j];
            C[size_t(i) * N + j] = ch01::finish(acc, alpha, beta, C[size_t(i) * N + j]);
        }
}

bool parse(std::vector<const char*> args, wb::Options& opt, std::string& error) {
    args.insert(args.begin(), "01_cpu_matmul");
    return ch01::parse_cpu_options(int(args.size()), args.data(), ch01::variants(), opt, error);
}

// The key=value pairs of count_fma.sh's "summary:" line ("width" holds xmm, ymm, zmm or none).
std::map<std::string, std::string> fma_summary(const std::string& out) {
    std::map<std::string, std::string> fields;
    const size_t at = out.find("summary: ");
    if (at == std::string::npos) return fields;
    std::istringstream line(out.substr(at + 9, out.find('\n', at) - at - 9));
    std::string pair;
    while (line >> pair) {
        const size_t eq = pair.find('=');
        if (eq != std::string::npos) fields[pair.substr(0, eq)] = pair.substr(eq + 1);
    }
    return fields;
}

// An `objdump -d --no-show-raw-insn -C` listing: a label line, then "  address:<TAB>instruction".
std::string listing_function(const std::string& address, const std::string& name,
                             const std::vector<std::pair<std::string, std::string>>& lines) {
    std::string text = std::string(16 - address.size(), '0') + address + " <" + name + ">:\n";
    for (const auto& l : lines) text += "  " + l.first + ":\t" + l.second + "\n";
    return text + "\n";
}

}  // namespace

TEST_CASE("01: every variant is right on every shape of the spec", "[01]") {
    // One check per variant, after every shape ran: a wrong variant is reported once, with how
    // many shapes it failed and the first of them, not once per shape.
    const std::vector<ch01::CpuVariant> variants = ch01::variants();
    const std::vector<wb::test::GemmCase> cases = wb::test::standard_cases();
    std::vector<int> failed(variants.size(), 0);
    std::vector<std::string> first_failure(variants.size());
    for (const wb::test::GemmCase& c : cases) {
        ch01::CpuProblem prob(c.s, c.alpha, c.beta, 7);  // its reference serves every variant
        for (size_t i = 0; i < variants.size(); ++i) {
            const wb::CheckResult r = check_case(prob, variants[i].run);
            if (!r.pass && failed[i]++ == 0) first_failure[i] = wb::test::describe(c) + ": " + r.describe();
        }
    }
    for (size_t i = 0; i < variants.size(); ++i) {
        INFO("variant " << variants[i].name << " failed " << failed[i] << " of " << cases.size()
                        << " shapes; the first: " << first_failure[i]);
        CHECK(failed[i] == 0);
    }
}

TEST_CASE("01: the blocked kernels are right around every tile and panel edge", "[01]") {
    using namespace ch01::blocked;
    // One below, at and one above MR, NR, KC, MC and NC (NC only in N, where it matters).
    const std::vector<wb::Shape> shapes = {{MR - 1, NR + 1, KC + 1},
                                           {MR + 1, NR - 1, KC - 1},
                                           {MC + 1, 2 * NR + 3, 2 * KC + 5},
                                           {MC - 1, NC + 1, 3},
                                           {2 * MC + MR + 1, 97, KC}};
    for (const wb::Shape& s : shapes)
        for (float beta : {0.0f, 0.5f}) {
            ch01::CpuProblem prob(s, 1.25f, beta, 11);
            for (ch01::CpuSgemmFn fn : {ch01::sgemm_blocked, ch01::sgemm_blocked_omp}) {
                const wb::CheckResult r = check_case(prob, fn);
                INFO((fn == ch01::sgemm_blocked ? "sgemm_blocked " : "sgemm_blocked_omp ")
                     << wb::to_string(s) << " beta=" << beta << ": " << r.describe());
                REQUIRE(r.pass);  // the first edge that breaks is the one to look at
            }
        }
}

TEST_CASE("01: the check catches planted bugs", "[01]") {
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{129, 65, 300}, wb::Shape{1000, 1013, 777}}) {
        ch01::CpuProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(check_case(prob, ch01::sgemm_blocked).pass);
        CHECK_FALSE(check_case(prob, sgemm_blocked_drops_k_tail).pass);
        CHECK_FALSE(check_case(prob, sgemm_reads_c_when_beta_is_zero).pass);
        CHECK_FALSE(check_case(prob, sgemm_blocked_skips_right_edge).pass);
    }
}

TEST_CASE("01: a large shape is checked on a sample plus, with OpenBLAS, every entry", "[01]") {
    // 1500^3 is above the full-reference limit: the program's path for big shapes.
    const wb::Shape s{1500, 1500, 1500};
    REQUIRE_FALSE(ch01::full_reference(s));
    ch01::CpuProblem prob(s, 1.0f, 0.0f, 5);
    ch01::CpuSgemmFn library = nullptr;
    for (const ch01::CpuVariant& v : ch01::variants())
        if (v.baseline) library = v.run;
    const wb::CheckResult good = prob.verify(ch01::sgemm_blocked_omp, library);
    INFO(good.describe());
    CHECK(good.pass);
    CHECK(good.checked > (library ? 1500LL * 1500 : 0));
    CHECK_FALSE(prob.verify(sgemm_blocked_drops_k_tail, library).pass);
}

TEST_CASE("01: the variant table is well formed, with or without OpenBLAS", "[01]") {
    const std::vector<ch01::CpuVariant> variants = ch01::variants();
    const int all = ch01::all_threads();
    REQUIRE(all >= 1);
    int baselines = 0;
    for (size_t i = 0; i < variants.size(); ++i) {
        const ch01::CpuVariant& v = variants[i];
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
    if (ch01::kHaveOpenBlas) {
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
    CHECK(opt.warmup == ch01::kDefaultWarmup);
    CHECK(opt.reps == ch01::kDefaultReps);
    CHECK(opt.shapes.size() == ch01::default_shapes().size());
    // --help names this chapter's defaults, not the GPU chapters' 2 and 10.
    const std::string help = wb::usage("01_cpu_matmul", {}, ch01::default_options());
    CHECK(help.find("(default " + std::to_string(ch01::kDefaultWarmup) + " and " +
                    std::to_string(ch01::kDefaultReps) + ")") != std::string::npos);
    CHECK(opt.variant == "all");

    REQUIRE(
        parse({"--variant", "blocked_1t,loop_ikj_1t", "--size", "100x200x300", "--reps", "3"}, opt, error));
    CHECK(ch01::named(opt, "blocked_1t"));
    CHECK(ch01::named(opt, "loop_ikj_1t"));
    CHECK_FALSE(ch01::named(opt, "naive_ijk_1t"));
    REQUIRE(opt.shapes.size() == 1);
    CHECK(opt.shapes[0].k == 300);
    CHECK(opt.reps == 3);

    const std::string omp = "blocked_omp_" + std::to_string(ch01::all_threads()) + "t";
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

TEST_CASE("01: an OpenBLAS core older than the CPU is said beside the ratios, with the way out", "[01]") {
    using ch01::VectorIsa;
    CHECK(ch01::openblas_core_isa("Prescott") == VectorIsa::sse);
    CHECK(ch01::openblas_core_isa("Haswell") == VectorIsa::avx2);
    CHECK(ch01::openblas_core_isa("SKYLAKEX") == VectorIsa::avx512);
    CHECK(ch01::openblas_core_isa("Zen") == VectorIsa::avx2);
    const std::string note = ch01::openblas_core_note("Prescott", VectorIsa::avx512);
    CHECK(note.find("Prescott kernel (SSE) on a CPU with AVX-512") != std::string::npos);
    CHECK(note.find("OPENBLAS_CORETYPE=SkylakeX") != std::string::npos);
    CHECK(note.find('\n') == std::string::npos);
    CHECK(ch01::openblas_core_note("Sandybridge", VectorIsa::avx2).find("OPENBLAS_CORETYPE=Haswell") != std::string::npos);
    CHECK(ch01::openblas_core_note("Haswell", VectorIsa::avx2).empty());      // the right core: nothing to say
    CHECK(ch01::openblas_core_note("SkylakeX", VectorIsa::avx2).empty());
}

TEST_CASE("01: timing reports the median and the minimum of the timed calls", "[01]") {
    int calls = 0;
    const wb::Timing t = ch01::time_host([&] { ++calls; }, [] {}, 2, 7);
    CHECK(t.ms_all.size() == 7);
    CHECK(calls >= 2 + 7);  // the warm-up runs for at least kMinWarmupSeconds, so usually many more
    CHECK(t.ms_min <= t.ms_median);
}

TEST_CASE("01: count_fma.sh finds the micro-kernel's FMAs in the program, whatever their width", "[01][fma]") {
    // The built program: -O3 -march=native gives packed FMAs on any x86-64 CPU with FMA (AVX2 or
    // AVX-512), xmm, ymm or zmm as the compiler chose, and its k loop does at least the MR x NR
    // multiply-adds of one step k. (Not always a whole number of steps: g++ 13 on the GPU machine
    // merged a few edge FMAs into the hottest loop, 292 = 256 + 36 multiply-adds.)
    wb::test::TempDir dir;
    const std::string program = wb::test::program_path("01_cpu_matmul");
    const wb::test::RunResult r = wb::test::run_program("count_fma.sh", "'" + program + "'", dir);
    INFO("count_fma.sh " << program << " -> status " << r.status << "\n" << r.out << r.err);
    REQUIRE(r.status == 0);
    std::map<std::string, std::string> f = fma_summary(r.out);
    REQUIRE(f.count("width") == 1);
    const std::string width = f["width"];
    CHECK((width == "xmm" || width == "ymm" || width == "zmm"));
    CHECK(std::stoi(f["packed"]) == std::stoi(f["xmm"]) + std::stoi(f["ymm"]) + std::stoi(f["zmm"]));
    CHECK(std::stoi(f[width]) > 0);
    const int tile = ch01::blocked::MR * ch01::blocked::NR;
    const int loop_madds = std::stoi(f["loop_madds"]);
    CHECK(loop_madds > 0);
    CHECK(loop_madds >= tile);
    // The summary names the width it found, in words a student can check against the table.
    CHECK(r.out.find("vector width: " + width) != std::string::npos);
}

TEST_CASE("01: count_fma.sh counts every vector width, and only the function's own instructions", "[01][fma]") {
    wb::test::TempDir dir;
    const std::string kernel = "ch01::blocked::micro_kernel(int, float const*, float const*, float, float, float*, int, int, int)";
    // A caller that calls the micro-kernel and has zmm FMAs of its own: a line that merely names the
    // function must not start the count (nor must the caller's FMAs end up in it).
    const std::string caller = listing_function(
        "1000", "ch01::blocked::sgemm_packed(int)",
        {{"1000", "call   2000 <" + kernel + ">"},
         {"1005", "vfmadd231ps %zmm1,%zmm2,%zmm3"},
         {"100b", "vfmadd231ps %zmm1,%zmm2,%zmm4"},
         {"1011", "ret"}});
    // What an AVX2 machine (or an AVX-512 one tuned for 256-bit vectors) gets: a k loop of ymm FMAs,
    // one accumulator kept on the stack, then a scalar FMA in the edge store.
    const std::string avx2_kernel = listing_function(
        "2000", kernel,
        {{"2000", "vmovups (%r15),%ymm3"},
         {"2005", "vbroadcastss (%r14),%ymm4"},
         {"200a", "vfmadd231ps %ymm3,%ymm4,%ymm0"},
         {"2010", "vfmadd231ps %ymm3,%ymm4,%ymm1"},
         {"2016", "vfmadd213ps 0x20(%rsp),%ymm4,%ymm2"},
         {"201d", "vmovaps %ymm2,0x20(%rsp)"},
         {"2023", "add    $0x20,%r14"},
         {"2027", "jne    2000 <" + kernel + "+0x0>"},
         {"202d", "vfmadd231ss (%rax),%xmm1,%xmm0"},
         {"2032", "ret"}});
    wb::test::write_file(dir / "avx2.txt", caller + avx2_kernel);
    wb::test::RunResult r = wb::test::run_program("count_fma.sh", "- < '" + (dir / "avx2.txt") + "'", dir);
    INFO("ymm listing -> status " << r.status << "\n" << r.out << r.err);
    CHECK(r.status == 0);
    std::map<std::string, std::string> f = fma_summary(r.out);
    CHECK(f["width"] == "ymm");
    CHECK(f["packed"] == "3");
    CHECK(f["ymm"] == "3");
    CHECK(f["zmm"] == "0");
    CHECK(f["scalar"] == "1");
    CHECK(f["loop_fmas"] == "3");
    CHECK(f["loop_madds"] == "24");
    CHECK(f["loop_stack"] == "2");

    // An AVX-512 build with 512-bit vectors: zmm, 16 floats each.
    const std::string zmm_kernel = listing_function(
        "3000", kernel,
        {{"3000", "vbroadcastss (%r14),%zmm4"},
         {"3006", "vfmadd231ps %zmm3,%zmm4,%zmm0"},
         {"300c", "vfmadd231ps (%r15),%zmm4,%zmm1"},
         {"3012", "jne    3000 <" + kernel + "+0x0>"},
         {"3018", "vfmadd231ps %ymm3,%ymm4,%ymm0"},
         {"301e", "ret"}});
    wb::test::write_file(dir / "zmm.txt", caller + zmm_kernel);
    r = wb::test::run_program("count_fma.sh", "- < '" + (dir / "zmm.txt") + "'", dir);
    INFO("zmm listing -> status " << r.status << "\n" << r.out << r.err);
    CHECK(r.status == 0);
    f = fma_summary(r.out);
    CHECK(f["width"] == "zmm");
    CHECK(f["zmm"] == "2");
    CHECK(f["ymm"] == "1");
    CHECK(f["loop_madds"] == "32");
    CHECK(f["loop_stack"] == "0");

    // Not vectorized (an -O1 build): the function is there, without packed FMAs: status 1.
    const std::string scalar_kernel = listing_function(
        "4000", kernel,
        {{"4000", "vmulss %xmm1,%xmm0,%xmm0"}, {"4004", "vaddss %xmm0,%xmm2,%xmm2"}, {"4008", "ret"}});
    wb::test::write_file(dir / "scalar.txt", scalar_kernel);
    r = wb::test::run_program("count_fma.sh", "- < '" + (dir / "scalar.txt") + "'", dir);
    INFO("scalar listing -> status " << r.status << "\n" << r.out << r.err);
    CHECK(r.status == 1);
    CHECK(fma_summary(r.out)["width"] == "none");

    // No such function (only a call to it), or no program: status 2 and one line on stderr.
    wb::test::write_file(dir / "caller.txt", caller);
    r = wb::test::run_program("count_fma.sh", "- < '" + (dir / "caller.txt") + "'", dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("no function ch01::blocked::micro_kernel") != std::string::npos);
    r = wb::test::run_program("count_fma.sh", "'" + (dir / "no_such_program") + "'", dir);
    CHECK(r.status == 2);
    CHECK(r.err.find("does not exist") != std::string::npos);
}
