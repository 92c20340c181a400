// test_common.cu - tests of the shared harness: options, inputs, rounding, reference, checker,
// CSV, the JSON writer (CPU only, they run everywhere), and the GPU path of the harness with cuBLAS.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include "energy.h"
#include "json.h"
#include "testing.cuh"

using namespace wb;

namespace {

bool parse(std::vector<const char*> args, Options& opt, std::string& err,
           const std::vector<ExtraOption>& extras = {}) {
    args.insert(args.begin(), "prog");
    return parse_options(int(args.size()), args.data(), opt, err, extras);
}

bool rejects(std::vector<const char*> args) {
    Options opt;
    std::string err;
    const bool ok = parse(args, opt, err);
    INFO("error message: " << err);
    CHECK_FALSE(err.empty());
    CHECK(err.find('\n') == std::string::npos);  // one line
    return !ok;
}

// C = alpha * A * B + beta * C0 computed the way a plain FP32 kernel does (float accumulation).
std::vector<float> float_gemm(const GemmView& g) {
    std::vector<float> C(size_t(g.s.m) * g.s.n);
    for (int i = 0; i < g.s.m; ++i)
        for (int j = 0; j < g.s.n; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < g.s.k; ++k) acc = std::fma(g.A[size_t(i) * g.s.k + k], g.B[size_t(k) * g.s.n + j], acc);
            float c = g.alpha * acc;
            if (g.beta != 0.0f) c += g.beta * g.C0[size_t(i) * g.s.n + j];
            C[size_t(i) * g.s.n + j] = c;
        }
    return C;
}

struct HostProblem {
    Shape s;
    std::vector<float> A, B, C0;
    HostProblem(Shape shape, uint64_t seed) : s(shape), A(size_t(shape.m) * shape.k), B(size_t(shape.k) * shape.n), C0(size_t(shape.m) * shape.n) {
        fill_random(A.data(), A.size(), seed, 1);
        fill_random(B.data(), B.size(), seed, 2);
        fill_random(C0.data(), C0.size(), seed, 3);
    }
    GemmView view(float alpha = 1.0f, float beta = 0.0f) const {
        return GemmView{s, alpha, beta, A.data(), B.data(), C0.data()};
    }
};

CheckResult check(const GemmView& g, const std::vector<float>& C, Precision p) {
    std::vector<double> value, scale;
    reference_full(g, value, scale);
    return check_full(C.data(), g.s.m, g.s.n, value, scale, tolerance_for(p, g.s.k));
}

}  // namespace

// ---- options -----------------------------------------------------------------------------------

TEST_CASE("the parser accepts the documented options", "[options]") {
    Options opt;
    std::string err;
    REQUIRE(parse({"--sizes", "128,1000x1013x777", "--alpha", "1.5", "--beta", "-0.25", "--variant",
                   "tile32", "--warmup", "3", "--reps", "20", "--seed", "9", "--no-check", "--csv", "out.csv", "--energy"},
                  opt, err));
    CHECK(err.empty());
    REQUIRE(opt.shapes.size() == 2);
    CHECK(opt.shapes[0].m == 128);
    CHECK(opt.shapes[0].n == 128);
    CHECK(opt.shapes[0].k == 128);
    CHECK(opt.shapes[1].m == 1000);
    CHECK(opt.shapes[1].n == 1013);
    CHECK(opt.shapes[1].k == 777);
    CHECK(opt.alpha == 1.5f);
    CHECK(opt.beta == -0.25f);
    CHECK(opt.variant == "tile32");
    CHECK(opt.warmup == 3);
    CHECK(opt.reps == 20);
    CHECK(opt.seed == 9u);
    CHECK_FALSE(opt.check);
    CHECK(opt.csv == "out.csv");
    CHECK(opt.energy);

    Options one;
    REQUIRE(parse({"--m", "5", "--n", "7", "--k", "3"}, one, err));
    CHECK_FALSE(one.energy);  // off unless asked: it keeps the GPU busy for over half a second per measurement
    REQUIRE(one.shapes.size() == 1);
    CHECK(one.shapes[0].m == 5);
    CHECK(one.shapes[0].n == 7);
    CHECK(one.shapes[0].k == 3);

    Options eq;
    REQUIRE(parse({"--size=64"}, eq, err));
    REQUIRE(eq.shapes.size() == 1);
    CHECK(eq.shapes[0].k == 64);

    Options defaults;
    REQUIRE(parse({}, defaults, err));
    CHECK(defaults.shapes.empty());  // the chapter's own sweep
    CHECK(defaults.alpha == 1.0f);
    CHECK(defaults.beta == 0.0f);
    CHECK(defaults.warmup >= 2);
    CHECK(defaults.reps >= 10);
    CHECK(defaults.check);

    Options help;
    REQUIRE(parse({"--help"}, help, err));
    CHECK(help.help);
}

TEST_CASE("the parser rejects each kind of bad input with one line", "[options]") {
    CHECK(rejects({"--bogus"}));
    CHECK(rejects({"--size"}));               // missing value
    CHECK(rejects({"--size", "abc"}));        // not a number
    CHECK(rejects({"--size", "12abc"}));      // trailing garbage
    CHECK(rejects({"--size", "0"}));          // zero
    CHECK(rejects({"--size", "-5"}));         // negative
    CHECK(rejects({"--size", "1.5"}));        // not whole
    CHECK(rejects({"--sizes", "64,,128"}));   // empty item
    CHECK(rejects({"--sizes", "64,"}));
    CHECK(rejects({"--sizes", "10x20"}));     // two dimensions
    CHECK(rejects({"--sizes", "10x20x"}));
    CHECK(rejects({"--m", "10", "--n", "10"}));  // K missing
    CHECK(rejects({"--m", "10", "--n", "10", "--k", "10", "--size", "5"}));
    CHECK(rejects({"--size", "99999999999"}));   // overflows int
    CHECK(rejects({"--size", "65536"}));         // 2^32 elements per matrix
    CHECK(rejects({"--alpha", "x"}));
    CHECK(rejects({"--beta", "nan"}));
    CHECK(rejects({"--alpha", "1e40"}));         // not a finite float
    CHECK(rejects({"--reps", "0"}));
    CHECK(rejects({"--warmup", "-1"}));
    CHECK(rejects({"--seed", "-3"}));
    CHECK(rejects({"--variant", ""}));
    CHECK(rejects({"--csv"}));
}

TEST_CASE("a count out of range names the range it must lie in", "[options]") {
    for (const char* reps : {"1000000000000", "1000001", "0"}) {
        Options opt;
        std::string err;
        CHECK_FALSE(parse({"--reps", reps}, opt, err));
        INFO(err);
        CHECK(err.find("from 1 to 1000000") != std::string::npos);
        CHECK(err.find(reps) != std::string::npos);
    }
    Options opt;
    std::string err;
    CHECK(parse({"--reps", "1000000"}, opt, err));
    CHECK(opt.reps == 1000000);
}

TEST_CASE("chapter options are parsed and listed in --help", "[options]") {
    std::string json;
    bool tune = false;
    std::vector<ExtraOption> extras = {{"json", "FILE  write the facts as JSON", &json, nullptr},
                                       {"tune", "try every configuration", nullptr, &tune}};
    Options opt;
    std::string err;
    REQUIRE(parse({"--json", "env.json", "--tune"}, opt, err, extras));
    CHECK(json == "env.json");
    CHECK(tune);
    CHECK_FALSE(parse({"--json="}, opt, err, extras));  // an empty value is no file name
    CHECK(err == "option --json needs a value");
    const std::string text = usage("03_shared_tiling", extras);
    CHECK(text.find("--json") != std::string::npos);
    CHECK(text.find("--tune") != std::string::npos);
    CHECK(text.find("exit status") != std::string::npos);
    CHECK(text.find("untimed and timed launches (default 2 and 10)") != std::string::npos);
    Options other;
    other.warmup = 1;
    other.reps = 5;
    other.seed = 7;
    const std::string text2 = usage("01_cpu_matmul", {}, other);
    CHECK(text2.find("untimed and timed launches (default 1 and 5)") != std::string::npos);
    CHECK(text2.find("(default 7)") != std::string::npos);
}

// ---- inputs and rounding -------------------------------------------------------------------------

TEST_CASE("random inputs are seeded, in [-1, 1) and not constant", "[numerics]") {
    std::vector<float> a(10000), b(10000), c(10000);
    fill_random(a.data(), a.size(), 1, 1);
    fill_random(b.data(), b.size(), 1, 1);
    fill_random(c.data(), c.size(), 2, 1);
    CHECK(a == b);
    CHECK(a != c);
    double sum = 0, sum2 = 0;
    for (float x : a) {
        REQUIRE(x >= -1.0f);
        REQUIRE(x < 1.0f);
        sum += x;
        sum2 += double(x) * x;
    }
    CHECK(std::fabs(sum / a.size()) < 0.05);                // mean near 0
    CHECK(std::fabs(sum2 / a.size() - 1.0 / 3.0) < 0.02);  // variance of U(-1,1) is 1/3
}

TEST_CASE("FP16, BF16 and TF32 rounding match IEEE and the device", "[numerics]") {
    CHECK(round_to_fp16(1.0f) == 1.0f);
    CHECK(round_to_fp16(65504.0f) == 65504.0f);
    CHECK(std::isinf(round_to_fp16(65520.0f)));
    CHECK(round_to_fp16(65519.0f) == 65504.0f);
    CHECK(round_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 1.0f);  // tie -> even
    CHECK(round_to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
    CHECK(round_to_fp16(std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));  // smallest subnormal
    CHECK(round_to_fp16(std::ldexp(1.0f, -26)) == 0.0f);
    CHECK(round_to_fp16(-0.1f) == -0.0999755859375f);
    CHECK(fp16_bits(1.0f) == 0x3C00);
    CHECK(fp16_bits(-2.0f) == 0xC000);
    CHECK(fp16_bits(65504.0f) == 0x7BFF);
    CHECK(fp16_bits(std::ldexp(1.0f, -24)) == 0x0001);
    CHECK(fp16_bits(1e6f) == 0x7C00);
    CHECK(fp16_bits(0.333251953125f) == 0x3555);

    CHECK(round_to_bf16(1.0f) == 1.0f);
    CHECK(round_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 1.0f);                     // tie -> even (down)
    CHECK(round_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 1.0f + std::ldexp(1.0f, -6));  // tie -> even (up)
    CHECK(round_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 1.0f + std::ldexp(1.0f, -7));
    CHECK(round_to_bf16(-0.1f) == -0.10009765625f);
    CHECK(round_to_bf16(1e30f) > 0.99e30f);  // FP32's exponent range: no overflow at 1e30
    CHECK(std::isinf(round_to_bf16(3.4028235e38f)));  // past the largest BF16
    CHECK(std::isnan(round_to_bf16(NAN)));
    CHECK(bf16_bits(1.0f) == 0x3F80);
    CHECK(bf16_bits(-2.0f) == 0xC000);
    CHECK(bf16_bits(std::ldexp(1.0f, -133)) == 0x0001);  // BF16 subnormals are FP32's
    CHECK(bf16_bits(0.333251953125f) == 0x3EAB);  // 0x3EAAA000: above the tie, rounds up

    CHECK(round_to_tf32(1.0f) == 1.0f);
    CHECK(round_to_tf32(1.0f + std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -10));  // tie -> away
    CHECK(round_to_tf32(1.0f + std::ldexp(1.0f, -12)) == 1.0f);
    CHECK(round_to_tf32(-(1.0f + std::ldexp(1.0f, -11))) == -(1.0f + std::ldexp(1.0f, -10)));
}

// ---- reference -----------------------------------------------------------------------------------

TEST_CASE("the reference is right on hand-checked products", "[reference]") {
    // [1 2 3]   [ 7  8]   [ 58  64]
    // [4 5 6] x [ 9 10] = [139 154]
    //           [11 12]
    const float A[] = {1, 2, 3, 4, 5, 6}, B[] = {7, 8, 9, 10, 11, 12}, C0[] = {1, -1, 0.5f, 2};
    std::vector<double> v, s;
    reference_full(GemmView{{2, 2, 3}, 1.0f, 0.0f, A, B, nullptr}, v, s);
    CHECK(v == std::vector<double>{58, 64, 139, 154});
    CHECK(s == std::vector<double>{58, 64, 139, 154});
    reference_full(GemmView{{2, 2, 3}, 2.0f, -3.0f, A, B, C0}, v, s);
    CHECK(v == std::vector<double>{113, 131, 276.5, 302});
    CHECK(s == std::vector<double>{119, 131, 279.5, 314});

    const float An[] = {1, -2}, Bn[] = {3, 4};  // 1x1x2: 1*3 + (-2)*4 = -5, |.|: 3 + 8 = 11
    reference_full(GemmView{{1, 1, 2}, 1.0f, 0.0f, An, Bn, nullptr}, v, s);
    CHECK(v[0] == -5);
    CHECK(s[0] == 11);

    // The sample agrees with the full reference and covers the corners.
    HostProblem p({37, 29, 41}, 5);
    reference_full(p.view(1.5f, 0.5f), v, s);
    auto sample = reference_sample(p.view(1.5f, 0.5f), 64, 3);
    REQUIRE(sample.size() == 64);
    CHECK(sample[0].i == 0);
    CHECK(sample[3].i == 36);
    CHECK(sample[3].j == 28);
    for (const RefEntry& e : sample) {
        INFO("sampled entry (" << e.i << ", " << e.j << ")");
        REQUIRE(std::fabs(e.value - v[size_t(e.i) * 29 + e.j]) <= 1e-12 * s[size_t(e.i) * 29 + e.j]);
    }
}

// ---- checker -------------------------------------------------------------------------------------

TEST_CASE("correct FP32, TF32, FP16 and BF16 results pass at K = 1, 17, 4096", "[checker]") {
    for (int K : {1, 17, 4096}) {
        HostProblem p({9, 13, K}, 11);
        INFO("K = " << K);
        // FP32: plain float accumulation, alpha and beta.
        GemmView g = p.view(1.25f, -0.5f);
        CHECK(check(g, float_gemm(g), Precision::fp32).pass);
        // TF32: inputs rounded (to nearest, and truncated as some hardware does), float sums.
        for (bool truncate : {false, true}) {
            std::vector<float> A = p.A, B = p.B;
            for (std::vector<float>* x : {&A, &B})
                for (float& y : *x) {
                    if (!truncate) {
                        y = round_to_tf32(y);
                    } else {
                        uint32_t u;
                        std::memcpy(&u, &y, 4);
                        u &= 0xFFFFE000u;
                        std::memcpy(&y, &u, 4);
                    }
                }
            GemmView device = g;
            device.A = A.data();
            device.B = B.data();
            std::vector<float> At = p.A, Bt = p.B;
            round_to(Precision::tf32, At);
            round_to(Precision::tf32, Bt);
            GemmView ref = g;  // the reference always uses round-to-nearest inputs
            ref.A = At.data();
            ref.B = Bt.data();
            std::vector<double> v, s;
            reference_full(ref, v, s);
            CHECK(check_full(float_gemm(device).data(), 9, 13, v, s, tolerance_for(Precision::tf32, K)).pass);
        }
        // FP16 inputs, FP32 accumulation.
        std::vector<float> A = p.A, B = p.B;
        round_to(Precision::fp16, A);
        round_to(Precision::fp16, B);
        GemmView h = g;
        h.A = A.data();
        h.B = B.data();
        CHECK(check(h, float_gemm(h), Precision::fp16).pass);
        // BF16 inputs, FP32 accumulation.
        std::vector<float> Ab = p.A, Bb = p.B;
        round_to(Precision::bf16, Ab);
        round_to(Precision::bf16, Bb);
        GemmView b = g;
        b.A = Ab.data();
        b.B = Bb.data();
        CHECK(check(b, float_gemm(b), Precision::bf16).pass);
    }
}

TEST_CASE("the checker catches planted errors", "[checker]") {
    HostProblem p({24, 24, 17}, 3);
    const GemmView g = p.view();
    const std::vector<float> good = float_gemm(g);
    REQUIRE(check(g, good, Precision::fp32).pass);

    SECTION("one wrong element") {
        std::vector<float> bad = good;
        bad[5 * 24 + 7] += 1e-3f;
        CheckResult r = check(g, bad, Precision::fp32);
        CHECK_FALSE(r.pass);
        CHECK(r.failures == 1);
        CHECK(r.worst_i == 5);
        CHECK(r.worst_j == 7);
    }
    SECTION("a transposed result") {
        std::vector<float> bad(good.size());
        for (int i = 0; i < 24; ++i)
            for (int j = 0; j < 24; ++j) bad[size_t(j) * 24 + i] = good[size_t(i) * 24 + j];
        CHECK_FALSE(check(g, bad, Precision::fp32).pass);
    }
    SECTION("an unwritten (poisoned) element") {
        std::vector<float> bad = good;
        bad.back() = std::nanf("");
        CheckResult r = check(g, bad, Precision::fp32);
        CHECK_FALSE(r.pass);
        CHECK(r.worst_i == 23);
        CHECK(r.worst_j == 23);
    }
    SECTION("NaN and Inf never pass") {
        std::vector<float> bad = good;
        bad[0] = INFINITY;
        CHECK_FALSE(check(g, bad, Precision::fp32).pass);
        bad[0] = -INFINITY;
        CHECK_FALSE(check(g, bad, Precision::fp32).pass);
    }
    SECTION("a missing term of the dot product") {
        GemmView short_k = g;
        short_k.s.k = 16;  // same data layout needs K columns: rebuild A without its last column
        std::vector<float> A16(24 * 16);
        for (int i = 0; i < 24; ++i)
            for (int k = 0; k < 16; ++k) A16[i * 16 + k] = p.A[i * 17 + k];
        short_k.A = A16.data();
        CHECK_FALSE(check(g, float_gemm(short_k), Precision::fp32).pass);
    }
    SECTION("beta * C0 left out") {
        const GemmView gb = p.view(1.0f, 0.5f);
        CHECK(check(gb, float_gemm(gb), Precision::fp32).pass);
        CHECK_FALSE(check(gb, float_gemm(p.view(1.0f, 0.0f)), Precision::fp32).pass);
    }
    SECTION("a sampled check catches a wrong corner") {
        auto sample = reference_sample(g, 32, 1);
        CHECK(check_sample(good.data(), 24, sample, tolerance_for(Precision::fp32, 17)).pass);
        std::vector<float> bad = good;
        bad.back() += 0.01f;
        CHECK_FALSE(check_sample(bad.data(), 24, sample, tolerance_for(Precision::fp32, 17)).pass);
    }
    SECTION("comparison with another library's result") {
        std::vector<float> other = good;
        other[3] = std::nextafter(other[3], 10.0f);  // a last-bit difference is fine
        CHECK(check_against(good.data(), other.data(), g, tolerance_for(Precision::fp32, 17)).pass);
        std::vector<float> bad = good;
        bad[100] += 0.01f;
        CHECK_FALSE(check_against(bad.data(), other.data(), g, tolerance_for(Precision::fp32, 17)).pass);
    }
}

TEST_CASE("products rounded to TF32 or FP16 fail an FP32 check at every K, by the normwise ceiling", "[checker]") {
    for (int K : {1, 17, 512, 1024, 4096}) {
        HostProblem p({16, 24, K}, 5);
        INFO("K = " << K);
        const GemmView g = p.view(1.25f, -0.5f);
        const CheckResult honest = check(g, float_gemm(g), Precision::fp32);
        CHECK(honest.pass);
        CHECK(honest.rel_err <= honest.normwise_limit);
        for (Precision coarse : {Precision::tf32, Precision::fp16}) {
            INFO("products of inputs rounded to " << to_string(coarse));
            std::vector<float> A = p.A, B = p.B;
            round_to(coarse, A);
            round_to(coarse, B);
            GemmView device = g;
            device.A = A.data();
            device.B = B.data();
            const CheckResult r = check(g, float_gemm(device), Precision::fp32);
            CHECK_FALSE(r.pass);
            CHECK(r.rel_err > r.normwise_limit);  // whatever the componentwise bound said
            CHECK(r.describe().find("ABOVE its ceiling") != std::string::npos);
        }
    }
    // The ceiling grows like sqrt(K): an honest FP32 sum at a large K stays under it.
    HostProblem big({4, 4, 65536}, 9);
    CHECK(check(big.view(), float_gemm(big.view()), Precision::fp32).pass);
}

TEST_CASE("an FP16 variant that adds in FP16 fails the FP16 check at every K", "[checker]") {
    for (int K : {16, 256, 4096}) {
        HostProblem p({8, 8, K}, 7);
        INFO("K = " << K);
        std::vector<float> A = p.A, B = p.B;
        round_to(Precision::fp16, A);
        round_to(Precision::fp16, B);
        GemmView g = p.view();
        g.A = A.data();
        g.B = B.data();
        CHECK(check(g, float_gemm(g), Precision::fp16).pass);
        std::vector<float> half_sums(size_t(8) * 8);
        for (int i = 0; i < 8; ++i)
            for (int j = 0; j < 8; ++j) {
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) acc = round_to_fp16(acc + A[size_t(i) * K + k] * B[size_t(k) * 8 + j]);
                half_sums[size_t(i) * 8 + j] = acc;
            }
        CHECK_FALSE(check(g, half_sums, Precision::fp16).pass);
    }
}

TEST_CASE("check_entries: each entry against its bound, and the sample against the normwise ceiling", "[checker]") {
    const Tolerance tol = tolerance_for(Precision::fp32, 100);
    std::vector<EntryCheck> entries;
    for (int e = 0; e < 48; ++e) entries.push_back({e, 2 * e, 1.0 + e, 1.0 + e, 10.0});
    CHECK(check_entries(entries, tol, "exact").pass);
    std::vector<EntryCheck> one_off = entries;
    one_off[7].got += 1e-3;  // far outside 102 u * 10
    const CheckResult r = check_entries(one_off, tol, "one entry");
    CHECK_FALSE(r.pass);
    CHECK(r.worst_i == 7);
    CHECK(r.worst_j == 14);
    std::vector<EntryCheck> nan = entries;
    nan[0].got = std::nan("");
    CHECK_FALSE(check_entries(nan, tol, "NaN").pass);
    // Each entry inside a loose bound (a huge scale), the whole too far off: the ceiling fails it.
    std::vector<EntryCheck> coarse = entries;
    for (EntryCheck& e : coarse) {
        e.scale = 1e6;
        e.got = e.want * (1.0 + 1e-4);
    }
    const CheckResult c = check_entries(coarse, tol, "coarse");
    CHECK(c.failures == 0);
    CHECK_FALSE(c.pass);
}

TEST_CASE("the keys of fresh inputs come from the OS's entropy, never twice the same", "[numerics]") {
    std::vector<uint64_t> keys;
    for (int i = 0; i < 4096; ++i) keys.push_back(entropy_key());
    std::sort(keys.begin(), keys.end());
    CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
    int high = 0;  // all 64 bits are used: about half of the keys have the top bit set
    for (uint64_t k : keys) high += int(k >> 63);
    CHECK(high > 1700);
    CHECK(high < 2400);
}

TEST_CASE("the tolerance grows with K and with coarser arithmetic", "[checker]") {
    CHECK(tolerance_for(Precision::fp32, 4096).factor > tolerance_for(Precision::fp32, 17).factor);
    CHECK(tolerance_for(Precision::tf32, 17).factor > tolerance_for(Precision::fp16, 17).factor);
    CHECK(tolerance_for(Precision::fp16, 17).factor > tolerance_for(Precision::fp32, 17).factor);
    // FP32 with K = 4096: (K + 2) * 2^-24, about 2.4e-4 of |A||B|.
    CHECK(std::fabs(tolerance_for(Precision::fp32, 4096).factor - 4098 * std::ldexp(1.0, -24)) < 1e-7);
}

// ---- CSV -----------------------------------------------------------------------------------------

namespace {
std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
                cur += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    out.push_back(cur);
    return out;
}
}  // namespace

TEST_CASE("CSV rows follow the schema", "[csv]") {
    const std::vector<std::string> header = split_csv(kCsvHeader);
    REQUIRE(header.size() == 24);
    CHECK(header.front() == "chapter");
    CHECK(header[8] == "ms_median");
    CHECK(header[22] == "student");
    CHECK(header.back() == "gflops_per_j");

    ResultRow r;
    r.variant = "tile32";
    r.dtype = "fp32";
    r.shape = {1000, 1013, 777};
    r.alpha = 1.5f;
    r.beta = 0.0f;
    r.ms_median = 2.0;
    r.ms_min = 1.5;
    r.baseline_gflops = 1574.2;
    derive_rates(r, 10000.0);
    r.rel_err = 1.25e-7;
    r.status = "PASS";
    CHECK(std::fabs(r.gflops - 2.0 * 1000 * 1013 * 777 / 2e6) < 1e-6);
    CHECK(std::fabs(r.pct_baseline - 100.0 * r.gflops / 1574.2) < 1e-9);
    RunInfo info{"03_shared_tiling", "NVIDIA H200, rev \"A\"", "9.0", "13.0", "13.0", "abc123", "s42"};

    const std::string path = "test_common_csv.tmp";
    std::remove(path.c_str());
    REQUIRE(append_csv(path, r, info));
    r.gflops_per_j = 123.456;
    REQUIRE(append_csv(path, r, info));
    std::ifstream in(path);
    std::string line;
    std::vector<std::string> lines;
    while (std::getline(in, line)) lines.push_back(line);
    std::remove(path.c_str());
    REQUIRE(lines.size() == 3);  // header once, then two rows
    CHECK(lines[0] == kCsvHeader);
    const std::vector<std::string> f = split_csv(lines[1]);
    REQUIRE(f.size() == header.size());
    CHECK(f[0] == "03_shared_tiling");
    CHECK(f[1] == "tile32");
    CHECK(f[2] == "fp32");
    CHECK(f[3] == "1000");
    CHECK(f[4] == "1013");
    CHECK(f[5] == "777");
    CHECK(f[6] == "1.5");
    CHECK(f[7] == "0");
    CHECK(std::stod(f[8]) == 2.0);
    CHECK(std::stod(f[10]) > 0);
    CHECK(f[15] == "PASS");
    CHECK(f[16] == "NVIDIA H200, rev \"A\"");  // quoted and unquoted correctly
    CHECK(f[17] == "9.0");
    CHECK(f[20] == "abc123");
    CHECK(f[21].size() == 20);  // 2026-11-29T16:40:21Z
    CHECK(f[22] == "s42");
    CHECK(f[23] == "");  // energy not measured: empty, not a number
    CHECK(split_csv(lines[2])[23] == "123.46");

    // A file written under another header gets no rows of this schema appended.
    {
        std::ofstream old(path);
        old << "chapter,variant,dtype,M,N,K\n03_shared_tiling,tile32,fp32,1,1,1\n";
    }
    CHECK_FALSE(append_csv(path, r, info));
    std::ifstream again(path);
    int n = 0;
    while (std::getline(again, line)) ++n;
    CHECK(n == 2);
    std::remove(path.c_str());
}

// ---- device facts (pure functions, no GPU needed) ----------------------------------------------

TEST_CASE("JSON values: escaped text, exact whole numbers, no NaN, short arrays on one line", "[json]") {
    using namespace wb::json;
    CHECK(text("say \"hi\" C:\\cuda") == "\"say \\\"hi\\\" C:\\\\cuda\"");
    CHECK(text("a\nb\tc\rd") == "\"a\\u000ab\\u0009c\\u000dd\"");
    CHECK(text(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
    CHECK(text("H200 \xe2\x9c\x93") == "\"H200 \xe2\x9c\x93\"");  // UTF-8 passes through
    CHECK(text_or_null("") == "null");
    CHECK(number(NAN) == "null");  // JSON has no NaN
    CHECK(number(INFINITY) == "null");
    CHECK(number(1.0 / 3) == "0.3333333");
    CHECK(number(150119866368.0) == "150119866368");  // bytes stay exact
    CHECK(number(-2) == "-2");
    CHECK(array({}) == "[]");
    CHECK(object({}) == "{}");
    CHECK(texts({"a", "b"}) == "[\"a\", \"b\"]");
    CHECK(texts({std::string(80, 'x')}) == "[\n  \"" + std::string(80, 'x') + "\"\n]");
    const std::string nested = object({{"a", "1"}, {"b", object({{"c", boolean(true)}})}});
    CHECK(nested == "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": true\n  }\n}");  // one step deeper
}

TEST_CASE("no device: no driver, an old driver and no GPU each get their own reason", "[device]") {
    const std::string none = no_device_reason(cudaErrorInsufficientDriver, 0, 13000);
    CHECK(none.find("no NVIDIA driver was found") != std::string::npos);
    CHECK(none.find("nvidia-smi") != std::string::npos);
    const std::string old = no_device_reason(cudaErrorInsufficientDriver, 12040, 13000);
    CHECK(old.find("supports CUDA 12.4, older than the CUDA 13.0 runtime") != std::string::npos);
    CHECK(no_device_reason(cudaErrorNoDevice, 13000, 13000).find("no CUDA-capable device") != std::string::npos);
    CHECK(no_device_reason(cudaSuccess, 13000, 13000).find("the driver reports none") != std::string::npos);
    for (const std::string& r : {none, old}) CHECK(r.find('\n') == std::string::npos);
}

TEST_CASE("FP32 lanes and versions by compute capability", "[device]") {
    CHECK(fp32_lanes_per_sm(7, 5) == 64);
    CHECK(fp32_lanes_per_sm(8, 0) == 64);
    CHECK(fp32_lanes_per_sm(8, 6) == 128);
    CHECK(fp32_lanes_per_sm(8, 9) == 128);
    CHECK(fp32_lanes_per_sm(9, 0) == 128);
    CHECK(tensor_flops_per_clock_per_sm(9, 0, false) == 4096);
    CHECK(tensor_flops_per_clock_per_sm(7, 5, true) == 0);  // Turing has no TF32
    CHECK(cuda_version_string(13000) == "13.0");
    CHECK(cuda_version_string(12080) == "12.8");
    CHECK(rebuild_hint(8, 6) == "make clean && make ARCH=sm_86");
}

// ---- the GPU side of the harness -----------------------------------------------------------------

namespace {
// cuBLAS, then one entry overwritten: what a kernel with an edge bug looks like.
void cublas_with_one_wrong_entry(int M, int N, int K, float alpha, const float* A, const float* B,
                                 float beta, float* C, cudaStream_t stream) {
    cublas_sgemm(M, N, K, alpha, A, B, beta, C, stream);
    const float wrong = 0.0f;
    WB_CUDA_CHECK(cudaMemcpyAsync(C + size_t(M - 1) * N + (N - 1), &wrong, sizeof wrong,
                                  cudaMemcpyHostToDevice, stream));
}
// Writes nothing at all: the poisoned output must fail.
void writes_nothing(int, int, int, float, const float*, const float*, float, float*, cudaStream_t) {}
}  // namespace

TEST_CASE("cuBLAS passes the checker on every standard case", "[gpu]") {
    WB_REQUIRE_GPU();
    const std::vector<SgemmVariant> fp32 = {{"cublas_sgemm", cublas_sgemm, "cuBLAS FP32"},
                                            {"cublas_tf32", cublas_tf32, "cuBLAS TF32", Precision::tf32, {}, 80}};
    const std::vector<HgemmVariant> fp16 = {{"cublas_hgemm", cublas_hgemm, "cuBLAS FP16"}};
    const std::vector<BgemmVariant> bf16 = {{"cublas_bgemm", cublas_bgemm, "cuBLAS BF16", {}, 80}};
    test::check_variants(fp32);
    test::check_variants(fp16);
    test::check_variants(bf16);
}

TEST_CASE("the harness catches planted GPU bugs, small and large shapes", "[gpu]") {
    WB_REQUIRE_GPU();
    for (Shape s : {Shape{65, 33, 17}, Shape{2048, 2048, 600}}) {
        INFO("shape " << to_string(s) << (GemmProblem::full_reference(s) ? " (full reference)" : " (sample + cuBLAS)"));
        GemmProblem prob(s, 1.0f, 0.0f, 1);
        CHECK(prob.verify(cublas_sgemm, Precision::fp32).pass);
        CheckResult r = prob.verify(cublas_with_one_wrong_entry, Precision::fp32);
        CHECK_FALSE(r.pass);
        CHECK(r.worst_i == s.m - 1);
        CHECK(r.worst_j == s.n - 1);
        CHECK_FALSE(prob.verify(writes_nothing, Precision::fp32).pass);
    }
    CHECK_FALSE(GemmProblem::full_reference({2048, 2048, 600}));
}

TEST_CASE("paired timing: an even number of rounds, each long enough to time a short call") {
    CHECK(paired_rounds(10) == kPairedRounds);
    CHECK(kPairedRounds % 2 == 0);
    CHECK(paired_rounds(3) == 3);
    CHECK(paired_rounds(0) == 1);
    CHECK(paired_per_round(10, 5.0) == 2);      // a long call: reps alone decide (2 x 6 >= 10)
    CHECK(paired_per_round(10, 0.015) == 134);  // 15 us: 2 ms per side and round
    CHECK(paired_per_round(10, 1e-6) == kMaxPerRound);
    CHECK(paired_per_round(10, 0.0) == 2);      // no estimate: reps alone
    CHECK(paired_per_round(12000, 1e-6) == 2000);  // reps above the cap still get their launches
}

TEST_CASE("paired timing: a short call gets two more rounds at a time, up to a cap") {
    CHECK(kMaxPairedRounds % 2 == 0);
    CHECK(kMaxPairedRounds > kPairedRounds);
    // A short A/A pair (kMinRoundMs per side and round): six rounds make half of kMinPairedMs.
    CHECK(paired_more_rounds(kPairedRounds, kPairedRounds * 2 * kMinRoundMs));
    CHECK(paired_more_rounds(kPairedRounds, kMinPairedMs - 0.01));
    CHECK_FALSE(paired_more_rounds(kPairedRounds, kMinPairedMs));  // "less than": the boundary stops
    // Long calls: six rounds of 5 ms per side are well past it.
    CHECK_FALSE(paired_more_rounds(kPairedRounds, kPairedRounds * 2 * 5.0));
    // A variant three times slower than a short baseline: 6 x (2 + 6) ms keeps six rounds; one
    // twice as slow (6 x (2 + 4) ms) gets more.
    CHECK_FALSE(paired_more_rounds(kPairedRounds, kPairedRounds * (kMinRoundMs + 3 * kMinRoundMs)));
    CHECK(paired_more_rounds(kPairedRounds, kPairedRounds * (kMinRoundMs + 2 * kMinRoundMs)));
    // The cap, and an odd count (fewer reps than kPairedRounds) that two more would not even out.
    CHECK(paired_more_rounds(kMaxPairedRounds - 2, 1.0));
    CHECK_FALSE(paired_more_rounds(kMaxPairedRounds, 1.0));
    CHECK_FALSE(paired_more_rounds(3, 1.0));
    CHECK_FALSE(paired_more_rounds(1, 0.0));
    // What time_paired makes of it: rounds of `round_ms` (both sides) until the rule stops.
    auto rounds_for = [](double round_ms) {
        int rounds = kPairedRounds;
        while (paired_more_rounds(rounds, rounds * round_ms)) rounds += 2;
        return rounds;
    };
    CHECK(rounds_for(2 * 2.01) == 12);             // a short A/A pair: 48 ms in 12 rounds
    CHECK(rounds_for(2 * 1.0) == kMaxPairedRounds);  // kMaxPerRound launches of 1 us: 1 ms a side
    CHECK(rounds_for(2 * 2.0 + 6.0) == 6);         // a variant three times slower
    CHECK(rounds_for(2 * 10.0) == 6);              // long calls
}

TEST_CASE("the event timer reports plausible times", "[gpu]") {
    WB_REQUIRE_GPU();
    GemmProblem prob({512, 512, 512}, 1.0f, 0.0f, 1);
    Timing t = prob.time(cublas_sgemm, 2, 10, 0);
    REQUIRE(t.ms_all.size() == 10);
    CHECK(t.ms_min > 0);
    CHECK(t.ms_min <= t.ms_median);
    CHECK(t.ms_median < 100);
}

namespace {
// The rounds time_paired ran follow paired_more_rounds: recomputed from the launches it timed
// (ms_all, in launch order, per_round of each side per round), it added two at a time exactly while
// the rule asked for them.
void check_rounds_follow_the_rule(const PairedTiming& t, int reps) {
    INFO("rounds " << t.rounds << ", " << t.per_round << " launches per side and round");
    REQUIRE(t.baseline.ms_all.size() == size_t(t.rounds) * size_t(t.per_round));
    REQUIRE(t.variant.ms_all.size() == size_t(t.rounds) * size_t(t.per_round));
    double total_ms = 0;  // summed as time_paired sums it: per round the baseline's, then the variant's
    auto add_round = [&](int r) {
        for (int i = r * t.per_round; i < (r + 1) * t.per_round; ++i) total_ms += t.baseline.ms_all[i];
        for (int i = r * t.per_round; i < (r + 1) * t.per_round; ++i) total_ms += t.variant.ms_all[i];
    };
    int rounds = paired_rounds(reps);
    REQUIRE(t.rounds >= rounds);
    for (int r = 0; r < rounds; ++r) add_round(r);
    while (rounds < t.rounds && paired_more_rounds(rounds, total_ms)) {
        add_round(rounds);
        add_round(rounds + 1);
        rounds += 2;
    }
    CHECK(rounds == t.rounds);                          // it did not stop early, nor add without cause
    CHECK_FALSE(paired_more_rounds(rounds, total_ms));  // and it stopped where the rule says
    CHECK(t.rounds <= std::max(kMaxPairedRounds, paired_rounds(reps)));
}
}  // namespace

TEST_CASE("paired timing alternates baseline and variant, and only the variant runs in the window", "[gpu]") {
    WB_REQUIRE_GPU();
    DeviceBuffer<char> buf(1 << 20);
    bool inside = false;
    int windows = 0, base_outside = 0, var_inside = 0, base_calls = 0, var_calls = 0;
    std::vector<char> order;  // 'b' or 'v' per timed call, to see the alternation
    auto baseline = [&](cudaStream_t st) {
        base_outside += !inside;
        ++base_calls;
        order.push_back('b');
        WB_CUDA_CHECK(cudaMemsetAsync(buf.get(), 1, buf.size(), st));
    };
    auto variant = [&](cudaStream_t st) {
        var_inside += inside;
        ++var_calls;
        order.push_back('v');
        WB_CUDA_CHECK(cudaMemsetAsync(buf.get(), 2, buf.size(), st));
    };
    auto window = [&](auto&& body) {
        ++windows;
        inside = true;
        body();
        inside = false;
    };
    const PairedTiming t = time_paired(baseline, variant, 2, 12, 0, window);
    check_rounds_follow_the_rule(t, 12);
    CHECK(t.rounds % 2 == 0);
    const int per_round = t.per_round;
    CHECK(per_round >= (12 + kPairedRounds - 1) / kPairedRounds);  // each side gets >= 12
    CHECK(per_round <= kMaxPerRound);
    // warm-ups, the 3 timed calls (+ 1 untimed) that size the rounds, then per round one untimed call
    // and per_round timed ones of each side
    CHECK(base_calls == 2 + 4 + t.rounds * (per_round + 1));
    CHECK(var_calls == 2 + t.rounds * (per_round + 1));
    CHECK(base_outside == base_calls);  // no baseline launch inside a trace window
    CHECK(var_inside == var_calls);     // every variant launch inside one
    CHECK(windows == 1 + t.rounds);
    // After the warm-ups and the probe (b b v v b b b b): round 0 b..v.., round 1 v..b.., round 2 b..v..,
    // and the last round, odd (the count is even), added or not, v..b..
    const std::string seq(order.begin() + 8, order.end());
    const size_t side = size_t(per_round) + 1;
    REQUIRE(seq.size() == 2 * side * size_t(t.rounds));
    CHECK(seq.substr(0, 2 * side) == std::string(side, 'b') + std::string(side, 'v'));
    CHECK(seq.substr(2 * side, 2 * side) == std::string(side, 'v') + std::string(side, 'b'));
    CHECK(seq.substr(seq.size() - 2 * side) == std::string(side, 'v') + std::string(side, 'b'));
    CHECK(t.ratio > 0);
    // Fewer reps than kPairedRounds: an odd count of rounds stays as asked.
    CHECK(time_paired(baseline, variant, 1, 3, 0, window).rounds == 3);

    // A/A: cuBLAS against itself reads close to 1 (loose: this is a correctness test, not a noise check).
    GemmProblem prob({1024, 1024, 1024}, 1.0f, 0.0f, 1);
    const PairedTiming aa = time_paired(prob.launch(cublas_sgemm), prob.launch(cublas_sgemm), 2, 10, 0,
                                        [](auto&& body) { body(); });
    CHECK(aa.ratio > 0.7);
    CHECK(aa.ratio < 1.4);
    check_rounds_follow_the_rule(aa, 10);
    // SGEMM 1024^3 takes ~0.04 ms: 2 ms per round asks for dozens of launches per side, not 10 / 6.
    CHECK(aa.per_round > 2);
    CHECK(aa.variant.ms_all.size() == size_t(aa.rounds * aa.per_round));
    CHECK(aa.variant.ms_all.size() >= 10);
}

// ---- every timed launch does the work (fresh_inputs.cuh) -----------------------------------------

namespace cheats {
constexpr int kTile = 16;

// Chapter 03's idea at its plainest: one block per 16 x 16 tile of C, each thread one entry.
// kReplay adds the one line of a result replay: a block whose tile corner already holds a number
// (not NaN) skips its tile, so a launch after the poisoned correctness run "finishes" at once.
template <bool kReplay>
__global__ void tile_kernel(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    if (kReplay && beta == 0.0f) {
        const float c0 = C[size_t(blockIdx.y * kTile) * N + blockIdx.x * kTile];
        if (c0 == c0) return;
    }
    const int i = blockIdx.y * kTile + threadIdx.y, j = blockIdx.x * kTile + threadIdx.x;
    if (i >= M || j >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(A[size_t(i) * K + k], B[size_t(k) * N + j], acc);
    C[size_t(i) * N + j] = beta == 0.0f ? alpha * acc : alpha * acc + beta * C[size_t(i) * N + j];
}
template <bool kReplay>
void tile(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C, cudaStream_t st) {
    tile_kernel<kReplay><<<dim3((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), dim3(kTile, kTile), 0, st>>>(
        M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

// An FP32 variant that multiplies on TF32-rounded inputs (what a tensor core would do).
__global__ void tf32_products_kernel(int M, int N, int K, float alpha, const float* A, const float* B, float* C) {
    const int i = blockIdx.y * kTile + threadIdx.y, j = blockIdx.x * kTile + threadIdx.x;
    if (i >= M || j >= N) return;
    // Round to 10 mantissa bits, ties away (cvt.rna.tf32.f32, written out: it needs sm_80).
    auto tf32 = [](float x) { return __uint_as_float((__float_as_uint(x) + 0x1000u) & 0xFFFFE000u); };
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(tf32(A[size_t(i) * K + k]), tf32(B[size_t(k) * N + j]), acc);
    C[size_t(i) * N + j] = alpha * acc;
}
void tf32_products(int M, int N, int K, float alpha, const float* A, const float* B, float, float* C, cudaStream_t st) {
    tf32_products_kernel<<<dim3((N + kTile - 1) / kTile, (M + kTile - 1) / kTile), dim3(kTile, kTile), 0, st>>>(
        M, N, K, alpha, A, B, C);
    WB_LAUNCH_CHECK();
}

// Caches in static device memory: the last result, and what it was computed for. Keyed on the A
// pointer, a launch on the same buffer copies it back; keyed on a checksum of A, a launch whose A
// sums to the same bits does. hits counts the launches served from the cache.
__device__ const float* cached_a;
__device__ unsigned long long cached_sum, current_sum;
__device__ unsigned hits[2];  // [0]: by pointer, [1]: by checksum
float* cache = nullptr;
size_t cache_size = 0;

__global__ void checksum_kernel(const float* A, size_t count) {
    unsigned long long h = 0;
    for (size_t i = 0; i < count; ++i) h = h * 1000003ull + __float_as_uint(A[i]);
    current_sum = h;
}
template <bool kByChecksum>
__global__ void replay_or_keep(const float* A, float* C, const float* saved, float* keep, size_t count, int keep_now) {
    const bool hit = kByChecksum ? cached_sum == current_sum : cached_a == A;
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += size_t(gridDim.x) * blockDim.x) {
        if (hit && !keep_now) C[i] = saved[i];
        if (keep_now) keep[i] = C[i];
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        if (hit && !keep_now) ++hits[kByChecksum];
        if (keep_now) {
            cached_a = A;
            cached_sum = current_sum;
        }
    }
}
// Replays when the key matches; else computes and keeps the result with its key.
template <bool kByChecksum>
void cached(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C, cudaStream_t st) {
    const size_t count = size_t(M) * N;
    if (cache_size < count) {
        if (cache) cudaFree(cache);
        WB_CUDA_CHECK(cudaMalloc(&cache, count * sizeof(float)));
        cache_size = count;
    }
    if (kByChecksum) checksum_kernel<<<1, 1, 0, st>>>(A, size_t(M) * K);
    unsigned h_before = 0, h_after = 0;
    WB_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&h_before, hits, sizeof h_before, kByChecksum * sizeof(unsigned), cudaMemcpyDeviceToHost, st));
    replay_or_keep<kByChecksum><<<64, 256, 0, st>>>(A, C, cache, cache, count, 0);
    WB_CUDA_CHECK(cudaMemcpyFromSymbolAsync(&h_after, hits, sizeof h_after, kByChecksum * sizeof(unsigned), cudaMemcpyDeviceToHost, st));
    WB_CUDA_CHECK(cudaStreamSynchronize(st));
    if (h_after > h_before) return;  // served from the cache
    tile<false>(M, N, K, alpha, A, B, beta, C, st);
    replay_or_keep<kByChecksum><<<64, 256, 0, st>>>(A, C, cache, cache, count, 1);
    WB_LAUNCH_CHECK();
}
// Launches the checksum cache served from its cache.
unsigned checksum_hits() {
    unsigned h = 0;
    WB_CUDA_CHECK(cudaMemcpyFromSymbol(&h, hits, sizeof h, sizeof(unsigned)));
    return h;
}
void forget() {
    const float* none = nullptr;
    const unsigned long long zero = 0;
    WB_CUDA_CHECK(cudaMemcpyToSymbol(cached_a, &none, sizeof none));
    WB_CUDA_CHECK(cudaMemcpyToSymbol(cached_sum, &zero, sizeof zero));
    WB_CUDA_CHECK(cudaMemcpyToSymbol(current_sum, &zero, sizeof zero));
}

// A run of the chapter program's loop (run_chapter) over `variants` on one shape: its rows.
std::vector<ResultRow> program_rows(const std::vector<SgemmVariant>& variants, Shape s) {
    Chapter ch{"test_cheats"};
    ch.sgemm = variants;
    Options opt;
    opt.shapes = {s};
    opt.warmup = 2;
    opt.reps = 10;
    std::vector<ResultRow> rows;
    run_chapter(ch, opt, &rows);
    return rows;
}
const ResultRow& row_of(const std::vector<ResultRow>& rows, const std::string& variant) {
    for (const ResultRow& r : rows)
        if (r.variant == variant) return r;
    FAIL("no row for " << variant);
    return rows.front();
}
}  // namespace cheats

namespace {
// A 64-bit hash of every element of A and B, appended to seen[] (one entry per launch).
__global__ void hash_inputs(const float* A, size_t na, const float* B, size_t nb, unsigned long long* seen,
                            unsigned* count) {
    __shared__ unsigned long long part[256];
    unsigned long long h = 0;
    for (size_t i = threadIdx.x; i < na; i += blockDim.x) h += mix64(__float_as_uint(A[i]) + (i << 32));
    for (size_t i = threadIdx.x; i < nb; i += blockDim.x) h += mix64(__float_as_uint(B[i]) ^ (~i << 32));
    part[threadIdx.x] = h;
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int t = 1; t < 256; ++t) h += part[t];
    const unsigned at = atomicAdd(count, 1u);
    if (at < 4096) seen[at] = h;
}
}  // namespace

TEST_CASE("no two launches, warm-ups and the energy meter's included, see the same A or B", "[gpu]") {
    WB_REQUIRE_GPU();
    // A launcher that hashes the A and B it is handed, then computes C with cuBLAS (so its checks pass).
    DeviceBuffer<unsigned long long> seen(4096);
    DeviceBuffer<unsigned> count(1);
    WB_CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned)));
    static unsigned long long* seen_at;
    static unsigned* count_at;
    seen_at = seen.get();
    count_at = count.get();
    auto spy = [](int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                  cudaStream_t st) {
        hash_inputs<<<1, 256, 0, st>>>(A, size_t(M) * K, B, size_t(K) * N, seen_at, count_at);
        WB_LAUNCH_CHECK();
        cublas_sgemm(M, N, K, alpha, A, B, beta, C, st);
    };
    for (float beta : {0.0f, 0.5f}) {
        INFO("beta = " << beta);
        WB_CUDA_CHECK(cudaMemset(count.get(), 0, sizeof(unsigned)));
        GemmProblem prob({96, 80, 72}, 1.0f, beta, 1);
        FreshInputs fresh(prob.operands(Precision::fp32));
        const SgemmFn fn = spy;
        const PairedTiming t = time_paired(prob.launch(fn), prob.launch(fn), 2, 10, 0, [](auto&& body) { body(); }, &fresh);
        const Timing alone = time_launches(prob.launch(fn), 3, 5, 0, &fresh);
        const std::array<CheckResult, 2> checks = fresh.collect();
        CHECK(checks[kVariantSide].pass);
        CHECK(checks[kBaselineSide].pass);
        double joules = -1;
        if (EnergyMeter::get().ready()) joules = EnergyMeter::get().joules_per_call(prob.launch(fn), 0.05, 0, &fresh);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        unsigned n = 0;
        WB_CUDA_CHECK(cudaMemcpy(&n, count.get(), sizeof n, cudaMemcpyDeviceToHost));
        // paired: warm-ups 2 + 2, the probe 3 + 1, per round (per_round + 1) of each side; alone: 3 + 5 + 1
        const size_t expected = 4 + 4 + 2 * size_t(t.rounds) * (t.per_round + 1) + 9;
        INFO(n << " launches recorded, " << expected << " timed or warm-up, energy " << joules);
        REQUIRE(n >= expected);
        CHECK(alone.ms_all.size() == 5);
        const size_t kept = std::min<size_t>(n, seen.size());
        std::vector<unsigned long long> hashes(kept);
        WB_CUDA_CHECK(cudaMemcpy(hashes.data(), seen.get(), kept * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        std::sort(hashes.begin(), hashes.end());
        CHECK(std::adjacent_find(hashes.begin(), hashes.end()) == hashes.end());
    }
}

TEST_CASE("a result replay, a cache keyed on the A pointer and TF32 products are named; a checksum cache never hits",
          "[gpu]") {
    WB_REQUIRE_GPU();
    using namespace cheats;
    for (Shape s : {Shape{256, 256, 256}, Shape{67, 45, 4097}}) {
        INFO("shape " << to_string(s));
        forget();
        const unsigned hits_before = checksum_hits();
        const std::vector<SgemmVariant> variants = {
            {"honest_tile", tile<false>, "one entry per thread"},
            {"replay_tile", tile<true>, "skips a tile whose corner holds a number"},
            {"pointer_cache", cached<false>, "replays the result kept for this A pointer"},
            {"checksum_cache", cached<true>, "replays the result kept for a checksum of A"},
            {"tf32_products", tf32_products, "FP32 variant on TF32-rounded inputs"},
        };
        const std::vector<ResultRow> rows = program_rows(variants, s);
        CHECK(row_of(rows, "honest_tile").status == "PASS");
        // The correctness run passed (C poisoned, inputs seeded), a timed launch did not.
        CHECK(row_of(rows, "replay_tile").status == "FAIL (wrong in a timed run)");
        CHECK(row_of(rows, "replay_tile").ms_median < 0);  // no time reported
        CHECK(row_of(rows, "pointer_cache").status == "FAIL (wrong in a timed run)");
        // Fresh inputs every launch: the checksum never matches, every launch computes (honest).
        CHECK(row_of(rows, "checksum_cache").status == "PASS");
        CHECK(checksum_hits() == hits_before);  // not one launch served from the checksum cache
        // Normwise above FP32's ceiling, at K = 256 and at K = 4097 alike.
        CHECK(row_of(rows, "tf32_products").status.rfind("FAIL", 0) == 0);
    }
    // Without fresh inputs the checksum cache does hit: the test above would see it.
    forget();
    GemmProblem prob({64, 64, 64}, 1.0f, 0.0f, 3);
    const auto run = prob.launch(SgemmFn(cheats::cached<true>));
    const unsigned before = checksum_hits();
    run(0);
    run(0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(checksum_hits() == before + 1);
}

TEST_CASE("GemmProblem::time names a wrong timed launch; verify after a timing uses the seeded inputs again", "[gpu]") {
    WB_REQUIRE_GPU();
    cheats::forget();
    GemmProblem prob({128, 96, 64}, 1.0f, 0.0f, 2);
    CHECK(prob.verify(cheats::tile<true>, Precision::fp32).pass);
    std::string why;
    try {
        prob.time(cheats::tile<true>, 2, 10);
    } catch (const std::runtime_error& e) {
        why = e.what();
    }
    CHECK(why.find("wrong in a timed run") != std::string::npos);
    CHECK_NOTHROW(prob.time(cheats::tile<false>, 2, 10));
    CHECK(prob.verify(cublas_sgemm, Precision::fp32).pass);  // after the timings overwrote A and B
    for (float beta : {0.0f, -1.5f}) {
        GemmProblem half({130, 70, 33}, 0.75f, beta, 4);
        CHECK_NOTHROW(half.time(cublas_hgemm, 1, 5));
        CHECK(half.verify(cublas_hgemm).pass);
        CHECK_NOTHROW(half.time(cublas_bgemm, 1, 5));
        CHECK(half.verify(cublas_bgemm).pass);
        CHECK_NOTHROW(half.time(cublas_tf32, 1, 5, 0, Precision::tf32));
    }
}

// ---- shapes and the --csv file (host only) ---------------------------------------------------

TEST_CASE("shapes: S is a cube, MxNxK is read in that order, the rest is refused", "[shape]") {
    Shape s;
    std::string err;
    REQUIRE(parse_shape("1000x1013x777", s, err));
    CHECK(s.m == 1000);
    CHECK(s.n == 1013);
    CHECK(s.k == 777);
    CHECK(to_string(s) == "1000x1013x777");
    CHECK(s.flops() == 2.0 * 1000 * 1013 * 777);
    REQUIRE(parse_shape("1", s, err));
    CHECK((s.m == 1 && s.n == 1 && s.k == 1));
    REQUIRE(parse_shape("500000x4294x1", s, err));  // the largest M; A and C still below 2^31
    CHECK(s.m == 500000);

    for (const char* bad : {"", "x", "8x", "8x8", "8x8x", "x8x8", "8x8x8x8", "+8", " 8", "8 ", "-8", "0",
                            "8x0x8", "1e3", "0x10", "500001", "65536", "99999999999999999999"}) {
        Shape keep{3, 4, 5};
        err.clear();
        const bool ok = parse_shape(bad, keep, err);
        INFO("text '" << bad << "', error: " << err);
        CHECK_FALSE(ok);
        CHECK_FALSE(err.empty());
        CHECK(err.find('\n') == std::string::npos);
        CHECK((keep.m == 3 && keep.n == 4 && keep.k == 5));  // a refused text leaves the shape alone
    }
    CHECK_FALSE(parse_shape("-8", s, err));
    CHECK(err == "sizes must be at least 1, got -8");
    CHECK_FALSE(parse_shape("65536", s, err));
    CHECK(err.find("2^31-1") != std::string::npos);
    int d = 0;
    CHECK(parse_dim("42", d, err));
    CHECK(d == 42);
    CHECK_FALSE(parse_dim("4x2", d, err));
}

TEST_CASE("--csv must be writable when the options are parsed", "[options][csv]") {
    test::TempDir dir;
    std::string err;

    // A new file: accepted, and not left behind (the first row writes it with its header).
    Options fresh;
    const std::string new_csv = dir / "new.csv";
    REQUIRE(parse({"--csv", new_csv.c_str()}, fresh, err));
    CHECK(fresh.csv == new_csv);
    CHECK_FALSE(std::ifstream(new_csv).good());

    // An existing file: accepted and left exactly as it was (appending, never truncating).
    const std::string old_csv = dir / "old.csv";
    test::write_file(old_csv, "chapter,variant\n03,tiled_32\n");
    Options existing;
    REQUIRE(parse({"--csv", old_csv.c_str()}, existing, err));
    CHECK(test::read_file(old_csv) == "chapter,variant\n03,tiled_32\n");

    // A folder that does not exist, a folder, and a path below a plain file: one line each.
    // (Below a file fails even for root, who may write anywhere else.)
    for (const std::string& bad : {dir / "no/such/folder/x.csv", dir.path, old_csv + "/x.csv"}) {
        Options opt;
        err.clear();
        const bool ok = parse({"--csv", bad.c_str()}, opt, err);
        INFO("--csv " << bad << ": " << err);
        CHECK_FALSE(ok);
        CHECK(err.find(bad) != std::string::npos);
        CHECK(err.find('\n') == std::string::npos);
    }
    CHECK_FALSE(std::ifstream(dir / "no").good());  // nothing was created on the way

    // --help still works next to a bad path.
    Options help;
    const std::string bad = dir / "no/x.csv";
    CHECK(parse({"--help", "--csv", bad.c_str()}, help, err));
    CHECK(help.help);
}

namespace {
// A made-up energy counter like the driver's: a board drawing `watts` whose total (millijoules,
// from `start_mj`) is brought up to date only at the refreshes phase_s + k * period_s, and read
// between refreshes shows the total at the latest one.
struct FakeCounter {
    double watts, period_s, phase_s;
    unsigned long long start_mj = 987654321;
    unsigned long long at(double seconds) const {
        const double refreshed = phase_s + period_s * std::floor((seconds - phase_s) / period_s);
        return start_mj + (unsigned long long)std::llround(watts * refreshed * 1000);
    }
};

// Polls about every `every_s` for `for_s` seconds, with an uneven jitter of up to 0.4 of the
// interval, as a host thread that sleeps between NVML calls would.
std::vector<std::pair<double, unsigned long long>> poll_counter(const FakeCounter& c, double every_s, double for_s) {
    std::vector<std::pair<double, unsigned long long>> polls;
    for (int i = 0; i * every_s < for_s; ++i) {
        const double t = 1.0 + i * every_s + 0.4 * every_s * ((i * 7919) % 13) / 13.0;
        polls.emplace_back(t, c.at(t));
    }
    return polls;
}
}  // namespace

TEST_CASE("the energy window runs from one counter refresh to another", "[energy]") {
    const double window_s = kMinEnergyWindowMs / 1000;
    for (double period_s : {0.1, 0.02, 0.037}) {
        for (double phase_s : {0.0, 0.0013, 0.0371, 0.0642, 0.0999}) {
            const FakeCounter counter{500, period_s, phase_s};
            const auto polls = poll_counter(counter, 0.001, 2.0);
            const double watts = counter_watts(polls, window_s);
            INFO("refresh every " << period_s << " s, phase " << phase_s << " s: " << watts << " W");
            CHECK(std::fabs(watts - 500) < 5);  // within 1 %

            // The arithmetic this replaces: the counter read at an arbitrary moment and again
            // once a stretch of launches (here 250 ms) has run, divided by the host time between.
            // Each end is stale by up to a refresh period, so with a 100 ms refresh the stretch
            // holds two or three refreshes' worth of energy: 400 W or 600 W, never 500 W.
            if (period_s == 0.1) {
                size_t end = 0;
                while (polls[end].first - polls[0].first < 0.25) ++end;
                const double old_way =
                    double(polls[end].second - polls[0].second) / 1000 / (polls[end].first - polls[0].first);
                INFO("arbitrary ends: " << old_way << " W");
                CHECK(std::fabs(old_way - 500) > 50);
            }
        }
    }

    // The window is at least the minimum, and both of its ends are refreshes.
    CounterWindow w(window_s);
    for (const auto& [t, mj] : poll_counter(FakeCounter{300, 0.1, 0.05}, 0.001, 2.0))
        if (w.add(t, mj)) break;
    REQUIRE(w.closed());
    CHECK(w.window_s() >= window_s);
    CHECK(w.window_s() < window_s + 0.1 + 0.002);
    CHECK(std::fabs(w.watts() - 300) < 3);
}

TEST_CASE("a counter that stands still, changes once or runs backwards gives no power", "[energy]") {
    const double window_s = kMinEnergyWindowMs / 1000;
    // Stuck: no window, and the time it has stood still is what the meter's guard reads.
    std::vector<std::pair<double, unsigned long long>> stuck;
    CounterWindow w(window_s);
    for (int i = 0; i <= 3000; ++i) {
        stuck.emplace_back(i * 0.001, 42000);
        w.add(i * 0.001, 42000);
    }
    CHECK(counter_watts(stuck, window_s) == -1);
    CHECK_FALSE(w.open());
    CHECK(w.unchanged_s() * 1000 > kEnergyStallMs);

    // One refresh, then nothing: the window opens and never closes.
    auto once = stuck;
    for (auto& p : once)
        if (p.first >= 0.5) p.second += 100;
    CHECK(counter_watts(once, window_s) == -1);

    // A total that goes down is not energy.
    CounterWindow back(window_s);
    back.add(0.0, 5000);
    back.add(0.1, 6000);
    back.add(0.2, 4000);
    CHECK(back.failed());
    CHECK(back.watts() == -1);

    CHECK(counter_watts({}, window_s) == -1);
}

TEST_CASE("sampled power drops the ramp-up and averages the rest over time", "[energy]") {
    // 80 W for the first 50 ms (clocks ramping up), then 400 W, sampled every millisecond.
    std::vector<std::pair<double, double>> samples;
    for (int i = 0; i <= 600; ++i) samples.emplace_back(3.0 + i * 0.001, i < 50 ? 80.0 : 400.0);
    CHECK(std::fabs(sampled_watts(samples, kEnergyRampUpMs / 1000) - 400) < 0.5);
    // Keeping the ramp-up would pull the mean down by several percent.
    CHECK(sampled_watts(samples, 0) < 380);
    // Uneven spacing is weighted by time, not by count: 100 W for 0.1 s, 300 W for 0.3 s.
    CHECK(std::fabs(sampled_watts({{0, 100}, {0.1, 100}, {0.1, 300}, {0.4, 300}}, 0) - 250) < 1e-9);
    CHECK(sampled_watts({}, 0.05) == -1);
    CHECK(sampled_watts({{0, 100}}, 0) == -1);
    CHECK(sampled_watts({{0, 100}, {0.01, 100}}, 0.05) == -1);  // all of it is ramp-up
}

TEST_CASE("the energy meter reads a plausible energy per call, or says why it cannot", "[gpu]") {
    WB_REQUIRE_GPU();
    EnergyMeter& meter = EnergyMeter::get();
    if (!meter.ready()) {
        CHECK_FALSE(meter.why_not().empty());
        WARN("no energy meter here: " << meter.why_not());
        return;
    }
    GemmProblem prob({2048, 2048, 2048}, 1.0f, 0.0f, 1);
    const auto run = prob.launch(cublas_sgemm);
    const double ms = prob.time(cublas_sgemm, 2, 5, 0).ms_median;
    const double joules = meter.joules_per_call(run, ms, 0);
    // A board draws somewhere between 10 W and 2 kW while it computes.
    CHECK(joules > 10.0 * ms / 1000);
    CHECK(joules < 2000.0 * ms / 1000);
}
