// lab/test_05_lab - the tuning table of lab/configs.cuh: every configuration against the
// double-precision reference on the spec's shapes and with misaligned pointers (GPU), and on the
// CPU, that the table is well formed and measures every choice `best` can make.
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "configs.cuh"
#include "testing.cuh"

using namespace ch05;

namespace {

bool in_lab_table(const std::string& name) {
    for (const wb::SgemmVariant& v : kTuneConfigs)
        if (name == v.name) return true;
    return false;
}

}  // namespace

TEST_CASE("05 lab: every tile configuration is right on every shape of the spec", "[gpu][05]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kTuneConfigs));
}

TEST_CASE("05 lab: misaligned pointers take the 4-byte path and stay right", "[gpu][05]") {
    WB_REQUIRE_GPU();
    // A + 1, B + 1, C + 1 inside larger buffers: no row starts on a 16-byte boundary, although
    // K and N are multiples of 4. A float4 access would fault; the launchers must see it.
    // One check per configuration after all its shapes: a wrong one is reported once, with the
    // first shape it failed.
    const wb::Shape shapes[] = {{64, 64, 64}, {130, 132, 40}, {300, 40, 1000}};
    for (const wb::SgemmVariant& v : kTuneConfigs) {
        int failed = 0;
        std::string first_failure;
        for (const wb::Shape& s : shapes) {
            const size_t na = size_t(s.m) * s.k, nb = size_t(s.k) * s.n, nc = size_t(s.m) * s.n;
            std::vector<float> A(na + 1), B(nb + 1), C(nc + 1, std::numeric_limits<float>::quiet_NaN());
            wb::fill_random(A.data() + 1, na, 5, 1);
            wb::fill_random(B.data() + 1, nb, 5, 2);
            wb::DeviceBuffer<float> dA(A.size()), dB(B.size()), dC(C.size());
            dA.upload(A);
            dB.upload(B);
            dC.upload(C);
            v.run(s.m, s.n, s.k, 1.0f, dA.get() + 1, dB.get() + 1, 0.0f, dC.get() + 1, 0);
            WB_CUDA_CHECK(cudaDeviceSynchronize());
            const std::vector<float> out = dC.download();
            wb::GemmView g;
            g.s = s;
            g.alpha = 1.0f;
            g.beta = 0.0f;
            g.A = A.data() + 1;
            g.B = B.data() + 1;
            g.C0 = nullptr;
            std::vector<double> value, scale;
            wb::reference_full(g, value, scale);
            const wb::CheckResult r = wb::check_full(out.data() + 1, s.m, s.n, value, scale,
                                                     wb::tolerance_for(wb::Precision::fp32, s.k));
            if (!r.pass && failed++ == 0) first_failure = wb::to_string(s) + ": " + r.describe();
        }
        INFO(v.name << " failed " << failed << " of " << std::size(shapes) << " shapes; the first: " << first_failure);
        CHECK(failed == 0);
    }
}

TEST_CASE("05 lab: the tuning table is well formed", "[05]") {
    std::set<std::string> names;
    for (const wb::SgemmVariant& v : kSgemmVariants) names.insert(v.name);
    for (const wb::SgemmVariant& v : kTuneConfigs) {
        INFO(v.name);
        CHECK(names.insert(v.name).second);  // unique, and no ladder name reused
        CHECK(v.run != nullptr);
        CHECK(v.info.kernel != nullptr);
        CHECK(v.info.threads % 32 == 0);
        CHECK(v.info.dynamic_smem <= 227u * 1024);
        CHECK(v.precision == wb::Precision::fp32);
    }
}

TEST_CASE("05 lab: one sweep measures every choice best can make", "[05]") {
    // lab/eval_best.py scores the rule on a sweep of this table: each candidate unsplit, and the
    // split candidates in every split from 2 to kMaxSplits.
    // A list of what is missing, checked once: a table that lost its split entries is one failure.
    std::vector<std::string> missing;
    for (const MeasuredRate& r : kBestRates) {
        if (!in_lab_table(r.candidate.lab_name)) missing.push_back(r.candidate.lab_name);
        if (r.candidate.may_split)
            for (int s = 2; s <= kMaxSplits; ++s) {
                const std::string name = std::string(r.candidate.lab_name) + "_sk" + std::to_string(s);
                if (!in_lab_table(name)) missing.push_back(name);
            }
    }
    INFO(missing.size() << " missing from kTuneConfigs; the first: " << (missing.empty() ? "" : missing.front()));
    CHECK(missing.empty());
}
