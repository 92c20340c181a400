// test_06_lab - chapter 06's lab: every tuning configuration (lab/lab_configs.cuh) against the
// double-precision reference on the spec's shapes, on shapes aimed at the WMMA rules and with
// misaligned pointers; the ties-away rounding experiment; CPU checks of the configurations' copies
// and padding; and the precision study (what FP16 and TF32 inputs cost).
// Build and run: make -C 06_tensor_core_wmma lab && ./06_tensor_core_wmma/lab/test_06_lab
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "../test_support_06.cuh"
#include "lab_configs.cuh"

using namespace t06;

// ---- CPU ---------------------------------------------------------------------------------------------

TEST_CASE("06 lab: the configuration tables are well formed", "[06][lab]") {
    std::set<std::string> names;
    auto check = [&](const char* name, const wb::KernelInfo& info, int min_cc) {
        INFO(name);
        CHECK(names.insert(name).second);
        REQUIRE(info.kernel != nullptr);
        CHECK(info.threads % 32 == 0);
        CHECK(info.dynamic_smem <= size_t(kSmemLimitSm90));
        if (info.dynamic_smem > size_t(kSmemLimitSm80)) CHECK(min_cc >= 90);
        if (info.dynamic_smem > size_t(kSmemLimitSm75)) CHECK(min_cc >= 80);
        CHECK(min_cc >= 70);
    };
    for (const wb::HgemmVariant& v : kHgemmConfigs) check(v.name, v.info, v.min_cc);
    for (const wb::SgemmVariant& v : kTf32Configs) {
        check(v.name, v.info, v.min_cc);
        CHECK(v.precision == wb::Precision::tf32);
        CHECK(v.min_cc >= 80);
    }
    // lab/best_06.py reads the sweeps by these names: the candidates of best must be among them.
    for (const char* name : {"h_128x128_w64x64_s3", "h_64x64_w32x32_s3", "m_64x64_w32x32_s3"}) {
        INFO(name);
        const bool found =
            std::any_of(std::begin(kHgemmConfigs), std::end(kHgemmConfigs),
                        [&](const wb::HgemmVariant& v) { return std::string(v.name) == name; }) ||
            std::any_of(std::begin(kTf32Configs), std::end(kTf32Configs),
                        [&](const wb::SgemmVariant& v) { return std::string(v.name) == name; });
        CHECK(found);
    }
}

TEST_CASE("06 lab: every configuration's copies and warps cover its tiles exactly once", "[06][lab]") {
    check_tiling<Wmma128x128_4stage>("Wmma128x128_4stage");
    check_tiling<Wmma256x128_3stage>("Wmma256x128_3stage");
    check_tiling<Tf32Wmma64x64_3stage>("Tf32Wmma64x64_3stage");
    check_tiling<Tf32Wmma128x128_4stage>("Tf32Wmma128x128_4stage");
    check_tiling<Tf32Wmma128x128_4warps_3stage>("Tf32Wmma128x128_4warps_3stage");
    check_tiling<Tf32Wmma128x256_3stage>("Tf32Wmma128x256_3stage");
    check_tiling<Tf32Wmma256x128_3stage>("Tf32Wmma256x128_3stage");
    check_tiling<Tf32Wmma128x128_k32_3stage>("Tf32Wmma128x128_k32_3stage");
    check_tiling<Tf32Wmma128x256_k32_3stage>("Tf32Wmma128x256_k32_3stage");
    check_tiling<Mma128x128_3stage>("Mma128x128_3stage");
    check_tiling<Mma128x128_8warps_3stage>("Mma128x128_8warps_3stage");
    check_tiling<Mma128x128_k32_3stage>("Mma128x128_k32_3stage");
    check_tiling<Mma128x128_k32_4stage>("Mma128x128_k32_4stage");
    check_tiling<Mma128x256_3stage>("Mma128x256_3stage");
    check_tiling<Mma128x256_k32_3stage>("Mma128x256_k32_3stage");
    check_tiling<Mma256x128_k32_3stage>("Mma256x128_k32_3stage");
    check_tiling<Mma128x128_k32_3stage_tiesaway>("Mma128x128_k32_3stage_tiesaway");
    check_tiling<Mma16_128x256_3stage>("Mma16_128x256_3stage");
    check_tiling<Mma16_256x128_4stage>("Mma16_256x128_4stage");
    check_tiling<Mma16_128x128_4warps_4stage>("Mma16_128x128_4warps_4stage");
    check_tiling<Mma16_128x256_k64_3stage>("Mma16_128x256_k64_3stage");
    CHECK(min_cc_of<Mma16_128x256_k64_3stage>() == 90);
    CHECK(min_cc_of<Tf32Wmma128x128_k32_3stage>() == 90);  // 105 KB: Hopper (sm_90 grants 227 KB)
    CHECK(min_cc_of<Mma128x256_k32_3stage>() == 90);
}

TEST_CASE("06 lab: the padding of the BK = 32 and 128x256 configurations is conflict-free", "[06][lab]") {
    CHECK(tf32_b_wavefronts(Tf32Wmma128x256_3stage::B_LD) == 1);
    CHECK(tf32_a_wavefronts(Tf32Wmma128x128_k32_3stage::A_LD) == 1);  // 36 floats, 4 (mod 8) again
    CHECK(ldmatrix_wavefronts(Mma128x128_3stage::A_LD * 4) == 1);     // 80 bytes: 5 units
    CHECK(tf32_b_wavefronts(Mma128x256_k32_3stage::B_LD) == 1);
}

TEST_CASE("06 lab: step 9's swizzle is conflict-free and reads the right elements on every lab tile", "[06][lab]") {
    auto check = [](const char* name, const SwizzleReport& r) {
        INFO(name);
        CHECK(r.worst_load_wavefronts == 1);
        CHECK(r.worst_store_wavefronts == 1);
        CHECK(r.wrong_addresses == 0);
    };
    check("Mma16_128x256_3stage", check_swizzled_tiles<Mma16_128x256_3stage>());
    check("Mma16_256x128_4stage", check_swizzled_tiles<Mma16_256x128_4stage>());
    check("Mma16_128x128_4warps_4stage", check_swizzled_tiles<Mma16_128x128_4warps_4stage>());
    check("Mma16_128x256_k64_3stage", check_swizzled_tiles<Mma16_128x256_k64_3stage>());
}

// ---- GPU ---------------------------------------------------------------------------------------------

TEST_CASE("06 lab: every configuration is right on the spec's shapes and the WMMA shapes", "[gpu][06][lab]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kHgemmConfigs));
    wb::test::check_variants(wb::table(kHgemmConfigs), wmma_cases());
    if (device_cc() < 80) WB_SKIP_CASE("TF32 tensor cores need sm_80");
    wb::test::check_variants(wb::table(kTf32Configs));
    wb::test::check_variants(wb::table(kTf32Configs), wmma_cases());
}

TEST_CASE("06 lab: misaligned pointers and odd leading dimensions take the safe paths", "[gpu][06][lab]") {
    WB_REQUIRE_GPU();
    check_offsets<__half>(wb::table(kHgemmConfigs), wb::Precision::fp16);
    check_offsets<float>(wb::table(kTf32Configs), wb::Precision::tf32);
}

TEST_CASE("06 lab: FP16 and TF32 inputs cost about 2^-11 of accuracy, FP32 accumulation almost none",
          "[gpu][06][lab]") {
    WB_REQUIRE_GPU();
    // The same measurement as `lab/tune_06 --precision`, small enough for a test: errors
    // against the exact product of the FP32 inputs and against that of the rounded inputs.
    const wb::Shape s{256, 256, 512};
    std::vector<float> A(size_t(s.m) * s.k), B(size_t(s.k) * s.n);
    wb::fill_random(A.data(), A.size(), 5, 1);
    wb::fill_random(B.data(), B.size(), 5, 2);
    auto reference = [&](wb::Precision p, std::vector<double>& value, std::vector<double>& scale) {
        std::vector<float> a = A, b = B;
        wb::round_to(p, a);
        wb::round_to(p, b);
        wb::GemmView g;
        g.s = s;
        g.A = a.data();
        g.B = b.data();
        wb::reference_full(g, value, scale);
    };
    std::vector<double> exact, exact_scale, r16, r16_scale, r32, r32_scale;
    reference(wb::Precision::fp32, exact, exact_scale);
    reference(wb::Precision::fp16, r16, r16_scale);
    reference(wb::Precision::tf32, r32, r32_scale);
    const wb::Tolerance tol = wb::tolerance_for(wb::Precision::fp32, s.k);
    auto err = [&](const std::vector<float>& C, const std::vector<double>& v, const std::vector<double>& sc) {
        return wb::check_full(C.data(), s.m, s.n, v, sc, tol).rel_err;
    };

    wb::DeviceBuffer<float> dA(A.size()), dB(B.size()), dC(size_t(s.m) * s.n);
    wb::DeviceBuffer<__half> dA16(A.size()), dB16(B.size());
    dA.upload(A);
    dB.upload(B);
    dA16.upload(wb::to_half(A));
    dB16.upload(wb::to_half(B));

    wb::cublas_sgemm(s.m, s.n, s.k, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), 0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const double sgemm = err(dC.download(), exact, exact_scale);

    launch_hgemm_best(s.m, s.n, s.k, 1.0f, dA16.get(), dB16.get(), 0.0f, dC.get(), 0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> c16 = dC.download();
    const double fp16_exact = err(c16, exact, exact_scale), fp16_rounded = err(c16, r16, r16_scale);

    INFO("cuBLAS SGEMM " << sgemm << "; wmma_best vs exact " << fp16_exact << ", vs rounded inputs "
                         << fp16_rounded);
    CHECK(sgemm < 1e-5);
    CHECK(fp16_exact > 1e-5);  // 10 mantissa bits: each input is off by up to 2^-11 relative
    CHECK(fp16_exact < 3e-3);
    CHECK(fp16_exact > 10 * fp16_rounded);  // the rounding of the inputs dominates
    if (device_cc() >= 80) {
        launch_tf32_best(s.m, s.n, s.k, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> c32 = dC.download();
        const double tf32_exact = err(c32, exact, exact_scale), tf32_rounded = err(c32, r32, r32_scale);
        INFO("tf32_best vs exact " << tf32_exact << ", vs rounded inputs " << tf32_rounded);
        CHECK(tf32_exact > 1e-5);  // the same 10 mantissa bits as FP16, with FP32's exponent range
        CHECK(tf32_exact < 3e-3);
        CHECK(tf32_exact > 10 * tf32_rounded);
    }
}

