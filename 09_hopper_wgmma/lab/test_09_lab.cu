// test_09_lab - chapter 09's lab: every configuration lab/tune_09 sweeps (lab/tune_configs_09.cuh)
// against the double-precision reference on odd shapes, FP16 and BF16; and CPU checks of the tables.
// Build and run: make -C 09_hopper_wgmma lab && ./09_hopper_wgmma/lab/test_09_lab
#include <set>
#include <string>
#include <vector>

#include "../test_support_09.cuh"
#include "tune_configs_09.cuh"

using namespace ch09;

// ---- CPU ---------------------------------------------------------------------------------------------

TEST_CASE("09 lab: the sweep's tables are well formed and hold step 5 as shipped", "[09][lab]") {
    const std::vector<wb::HgemmVariant> h = tune_configs<__half>();
    const std::vector<wb::BgemmVariant> b = tune_configs<__nv_bfloat16>();
    CHECK(h.size() <= 10);  // each row of another configuration compiles one more kernel
    REQUIRE(h.size() == b.size());
    std::set<std::string> names;
    for (size_t i = 0; i < h.size(); ++i) {
        INFO(h[i].name);
        CHECK(names.insert(h[i].name).second);
        CHECK(std::string(h[i].name) == b[i].name);
        CHECK(h[i].min_cc == 90);
        CHECK(b[i].min_cc == 90);
        CHECK(h[i].info.dynamic_smem <= size_t(227 * 1024));
        CHECK(h[i].info.threads == 384);
    }
    // The ladder's row runs the ladder's kernel through the ladder's launcher (band kBand).
    REQUIRE(std::string(h[0].name) == "step5_c2_s4_b8");
    const wb::HgemmVariant* ladder = nullptr;
    for (const wb::HgemmVariant& v : kHgemmVariants)
        if (std::string(v.name) == "cluster_multicast") ladder = &v;
    REQUIRE(ladder != nullptr);
    CHECK(h[0].info.kernel == ladder->info.kernel);
    CHECK(h[0].run == ladder->run);
    CHECK(h[0].run == run_step<Cluster2Persistent128x256<__half>, kBand>);
    // The other bands share that kernel; only the launcher's band differs.
    CHECK(h[1].info.kernel == ladder->info.kernel);
    CHECK(h[1].run != ladder->run);
    // Clusters of 4 and the 3-stage ring are kernels of their own, still step 5's.
    CHECK(h.back().info.kernel == (const void*)cluster_multicast_kernel<Cluster4Persistent128x256<__half>>);
    // Three stages: one stage and its two 8-byte barriers less than the ladder's four.
    CHECK(Cluster2Stages3<__half>::SMEM_BYTES + Cluster2Stages3<__half>::STAGE_BYTES + 2 * 8 ==
          Cluster2Persistent128x256<__half>::SMEM_BYTES);
}

// ---- GPU ---------------------------------------------------------------------------------------------

// Shapes aimed at the knobs: clusters of 4 whose groups reach past C, bands longer than C, rings of
// 3 stages that wrap, the padded copies, and the epilogue without TMA stores.
std::vector<wb::test::GemmCase> tune_cases() {
    return {
        {{1, 1, 1}, 1.0f, 0.0f, "one element: one group, every other tile of it past C"},
        {{300, 520, 200}, 1.0f, 0.0f, "3 x 3 tiles: a cluster of 4's last tile past C; 4 k-tiles"},
        {{1000, 1013, 4097}, 0.5f, -1.5f, "N odd and K % 8 != 0: padded copies, no TMA stores; beta != 0"},
        {{2100, 2200, 136}, 1.0f, 0.0f, "17 x 9 tiles: several groups per cluster, short last band"},
    };
}

TEST_CASE("09 lab: every configuration of the sweep is right on odd shapes, FP16 and BF16", "[gpu][09][lab]") {
    REQUIRE_HOPPER();
    wb::test::check_variants(tune_configs<__half>(), tune_cases(), 41);
    wb::test::check_variants(tune_configs<__nv_bfloat16>(), tune_cases(), 42);
}
