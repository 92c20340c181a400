// testing.cuh - what every chapter's Catch2 tests share: the GPU skip rule, the shape list of
// docs/CONTRACT.md, "The GEMM contract", and a check of a whole variant table against the
// double-precision reference.
//
//   TEST_CASE("every variant is right on every shape", "[gpu]") {
//       WB_REQUIRE_GPU();
//       wb::test::check_variants(wb::table(kSgemmVariants));
//   }
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "gemm_harness.cuh"
#include "test_support.h"

namespace wb {
namespace test {

// The running test case counts as skipped (test_main.cpp): for lack of a usable GPU, or for another
// reason (a GPU too old for it, an optional library not built), which the summary keeps apart.
void mark_skipped();
void mark_skipped_no_gpu();
bool gpu_required();  // REQUIRE_GPU=1 is set: a missing GPU is a failure

// One GEMM to verify and why it is on the list.
struct GemmCase {
    Shape s;
    float alpha = 1.0f, beta = 0.0f;
    const char* why = "";
};

// The spec's list. beta == 0 cases run with C poisoned with NaN (see GemmProblem), so each of
// them also proves that C is not read when beta == 0.
inline std::vector<GemmCase> standard_cases() {
    return {
        {{1, 1, 1}, 1.0f, 0.0f, "smallest problem"},
        {{2, 3, 5}, 1.0f, 0.0f, "smaller than any tile"},
        {{17, 31, 7}, 1.0f, 0.0f, "primes"},
        {{17, 31, 7}, 0.5f, 2.0f, "primes, beta != 0"},
        {{64, 48, 1}, 1.0f, 0.0f, "K = 1"},
        {{33, 47, 65}, 1.0f, 0.0f, "not multiples of 16 or 32"},
        {{33, 47, 65}, 0.0f, 1.0f, "alpha = 0: C stays C0"},
        {{129, 65, 97}, 1.5f, -0.75f, "one past the tile, beta != 0"},
        {{64, 64, 67}, 1.0f, 0.0f, "K not a multiple of 4"},
        {{30, 62, 36}, 1.0f, 0.0f, "N not a multiple of 4"},
        {{61, 63, 70}, 1.0f, 0.0f, "nothing a multiple of 4"},
        {{128, 128, 128}, 1.0f, 0.0f, "exact tile multiple"},
        {{256, 256, 256}, -1.0f, 0.5f, "exact multiple, beta != 0"},
        {{257, 255, 259}, 1.0f, 0.0f, "one off large tiles"},
        {{4096, 8, 300}, 1.0f, 0.0f, "tall and skinny"},
        {{8, 4096, 300}, 1.0f, 0.0f, "short and wide"},
        {{31, 33, 4099}, 1.0f, 0.0f, "long K, not a multiple of 4"},
        {{1000, 1013, 777}, 1.0f, 0.0f, "large, odd"},
        {{1000, 1013, 777}, 2.0f, -1.0f, "large, odd, beta != 0"},
    };
}

inline std::string describe(const GemmCase& c) {
    std::ostringstream o;
    o << to_string(c.s) << " alpha=" << c.alpha << " beta=" << c.beta << " (" << c.why << ")";
    return o.str();
}

// Shared body of the two checks below: one CHECK per (case, variant).
template <class Variant>
void check_each(const std::vector<Variant>& variants, const std::vector<GemmCase>& cases, uint64_t seed) {
    const int cc = query_device(0).cc_number();
    for (const GemmCase& c : cases) {
        GemmProblem prob(c.s, c.alpha, c.beta, seed);
        for (const Variant& v : variants) {
            if (cc < v.min_cc) continue;  // e.g. TF32 on a pre-Ampere GPU
            CheckResult r;
            std::string error;
            try {
                r = prob.verify(v);
            } catch (const std::exception& e) {
                r.pass = false;
                error = e.what();
            }
            INFO("variant " << v.name << " on " << describe(c) << ": "
                            << (error.empty() ? r.describe() : error));
            CHECK(r.pass);
        }
    }
}

inline void check_variants(const std::vector<SgemmVariant>& variants,
                           const std::vector<GemmCase>& cases = standard_cases(), uint64_t seed = 7) {
    check_each(variants, cases, seed);
}
template <class T>
void check_variants(const std::vector<Gemm16Variant<T>>& variants,
                    const std::vector<GemmCase>& cases = standard_cases(), uint64_t seed = 7) {
    check_each(variants, cases, seed);
}
inline void check_variants(const std::vector<Fp8gemmVariant>& variants,
                           const std::vector<GemmCase>& cases = standard_cases(), uint64_t seed = 7) {
    check_each(variants, cases, seed);
}

}  // namespace test
}  // namespace wb

// First statement of every GPU test case: without a usable GPU the test is skipped (and counted
// as skipped), unless REQUIRE_GPU=1 is set, which turns a missing GPU into a failure.
#define WB_REQUIRE_GPU()                                                               \
    do {                                                                               \
        if (!::wb::cuda_device_available()) {                                          \
            if (::wb::test::gpu_required()) FAIL("REQUIRE_GPU=1 but no CUDA device is usable"); \
            ::wb::test::mark_skipped_no_gpu();                                         \
            WB_SKIP_NOW("no CUDA device: GPU test skipped");                           \
        }                                                                              \
    } while (0)

// Skips the running test case for a reason other than a missing GPU, and counts it as skipped
// (a bare WB_SKIP_NOW would count it as passed).
#define WB_SKIP_CASE(msg)              \
    do {                               \
        ::wb::test::mark_skipped();    \
        WB_SKIP_NOW(msg);              \
    } while (0)
