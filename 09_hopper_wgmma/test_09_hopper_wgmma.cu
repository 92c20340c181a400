// test_09_hopper_wgmma - every step of the Hopper ladder, FP16 and BF16, against the
// double-precision reference: the spec's shapes, shapes TMA cannot describe (the padded copy),
// misaligned pointers, rings that wrap many times, persistent blocks with many tiles each, and
// planted bugs the check must catch. CPU checks: the descriptor bits, the padding rule, the
// shared-memory budgets, the exit statuses.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "testing.cuh"

using namespace ch09;

namespace {

bool hopper_present() { return wb::query_device(0).cc_number() == 90; }

// GPU test cases of this chapter also need the GPU to be a Hopper; on another GPU they are skipped
// and counted as skipped (even with REQUIRE_GPU=1: no other GPU can run sm_90a code).
#define REQUIRE_HOPPER()                                                    \
    do {                                                                    \
        WB_REQUIRE_GPU();                                                   \
        if (!hopper_present()) {                                            \
            WB_SKIP_CASE("not a Hopper GPU (sm_90): chapter 09 test skipped"); \
        }                                                                   \
    } while (0)

// Shapes aimed at this chapter's machinery (in addition to the spec's list).
std::vector<wb::test::GemmCase> hopper_cases() {
    return {
        {{128, 256, 64}, 1.0f, 0.0f, "exactly one tile and one k-tile"},
        {{200, 300, 1000}, 1.0f, 0.0f, "16 k-tiles: the 4-stage ring wraps four times"},
        {{64, 128, 7}, 1.0f, 0.0f, "K = 7: A's rows are 14 bytes, A goes through the padded copy"},
        {{77, 13, 96}, 1.0f, 0.0f, "N = 13: B goes through the padded copy, odd N in the epilogue"},
        {{33, 45, 19}, 0.5f, -1.5f, "both padded, beta != 0"},
        {{1, 1024, 4096}, 1.0f, 0.0f, "one row, long K"},
        {{1500, 1700, 200}, 1.0f, 0.0f, "persistent: 84 tiles of 128 x 256, under one wave"},
        {{2048, 3000, 136}, 1.0f, 0.0f, "persistent: 192 tiles, some blocks take two"},
        {{1300, 1100, 300}, 0.75f, -0.5f, "11 tile rows: a cluster's second tile below C; beta via the staged epilogue"},
        {{520, 1028, 72}, 1.0f, 0.0f, "N % 4 == 0 but not a multiple of the tile: TMA stores clipped at the edge"},
        {{2048, 2048, 600}, 1.0f, 0.0f, "large: sample + cuBLAS check"},
    };
}

// A step run with K cut short by one k-step: the last products are missing.
template <class T>
void drops_last_k(int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C, cudaStream_t st) {
    run_step<Persistent128x256<T>>(M, N, K > 16 ? K - 16 : K, alpha, A, B, beta, C, st);
}
// The rows of A shifted by one: a wrong box coordinate.
template <class T>
void shifted_rows(int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C, cudaStream_t st) {
    run_step<Wgmma64x128<T>>(M - 1, N, K, alpha, A + K, B, beta, C, st);
}

}  // namespace

TEST_CASE("09: every step is right on every shape of the spec, FP16, BF16 and TF32", "[gpu][09]") {
    REQUIRE_HOPPER();
    wb::test::check_variants(kHgemmVariants);
    wb::test::check_variants(kBgemmVariants);
    wb::test::check_variants(kTf32Variants);
}

TEST_CASE("09: every step is right on the shapes of TMA's edges, rings and persistent tiles", "[gpu][09]") {
    REQUIRE_HOPPER();
    wb::test::check_variants(kHgemmVariants, hopper_cases(), 21);
    wb::test::check_variants(kBgemmVariants, hopper_cases(), 22);
    wb::test::check_variants(kTf32Variants, hopper_cases(), 23);
}

TEST_CASE("09: misaligned pointers go through the padded copy and stay right", "[gpu][09]") {
    REQUIRE_HOPPER();
    // A, B and C one element past an aligned start: TMA cannot read A or B from there, and C's
    // pairs are not 8-byte aligned.
    const wb::Shape s{100, 136, 72};
    std::vector<float> A(size_t(s.m) * s.k), B(size_t(s.k) * s.n);
    wb::fill_random(A.data(), A.size(), 5, 1);
    wb::fill_random(B.data(), B.size(), 5, 2);
    wb::round_to(wb::Precision::fp16, A);
    wb::round_to(wb::Precision::fp16, B);
    const std::vector<__half> hA = wb::to_half(A), hB = wb::to_half(B);
    wb::DeviceBuffer<__half> dA(hA.size() + 8), dB(hB.size() + 8);
    wb::DeviceBuffer<float> dC(size_t(s.m) * s.n + 8);
    WB_CUDA_CHECK(cudaMemcpy(dA.get() + 1, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice));
    WB_CUDA_CHECK(cudaMemcpy(dB.get() + 1, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice));
    wb::GemmView g;
    g.s = s;
    g.A = A.data();
    g.B = B.data();
    std::vector<double> value, scale;
    wb::reference_full(g, value, scale);
    for (const wb::HgemmVariant& v : kHgemmVariants) {
        INFO("variant " << v.name);
        WB_CUDA_CHECK(cudaMemset(dC.get(), 0xFF, dC.size() * sizeof(float)));
        v.run(s.m, s.n, s.k, 1.0f, dA.get() + 1, dB.get() + 1, 0.0f, dC.get() + 1, 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> out = dC.download();
        const wb::CheckResult r = wb::check_full(out.data() + 1, s.m, s.n, value, scale,
                                                 wb::tolerance_for(wb::Precision::fp16, s.k));
        INFO(r.describe());
        CHECK(r.pass);
    }
}

TEST_CASE("09: the check catches planted bugs", "[gpu][09]") {
    REQUIRE_HOPPER();
    for (wb::Shape s : {wb::Shape{300, 520, 200}, wb::Shape{2048, 2048, 600}}) {
        INFO("shape " << wb::to_string(s));
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        CHECK(prob.verify(run_step<Persistent128x256<__half>>).pass);
        CHECK(prob.verify(run_step<Persistent128x256<float>>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(drops_last_k<float>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(drops_last_k<__half>).pass);
        CHECK_FALSE(prob.verify(shifted_rows<__half>).pass);
        CHECK_FALSE(prob.verify(drops_last_k<__nv_bfloat16>).pass);
    }
}

TEST_CASE("09: the program's exit statuses", "[09]") {
    wb::test::check_program_exit_statuses("09_hopper_wgmma");
}

TEST_CASE("09: matrix descriptors hold the fields the PTX ISA defines", "[09]") {
    // start 0x12400 (bytes) -> 0x1240 in bits 0-13; LBO 8192 -> 512 at bit 16; SBO 1024 -> 64 at
    // bit 32; 128-byte swizzle = 1 at bit 62.
    const uint64_t d = make_smem_desc(0x12400, 8192, 1024);
    CHECK((d & 0x3FFF) == 0x1240);
    CHECK(((d >> 16) & 0x3FFF) == 512);
    CHECK(((d >> 32) & 0x3FFF) == 64);
    CHECK((d >> 62) == 1);
    CHECK(((d >> 46) & 0xFFFF) == 0);  // base offset 0: every tile starts on a 1024-byte atom
    // Addresses are taken modulo 256 KB and in 16-byte units.
    CHECK(make_smem_desc(0x40000 + 0x100, 16, 1024) == make_smem_desc(0x100, 16, 1024));
}

TEST_CASE("09: the padded copy is used exactly when TMA cannot read a matrix", "[09]") {
    alignas(16) static __half buf[64];
    CHECK(tma_can_read(buf, 8));        // 16-byte rows
    CHECK(tma_can_read(buf, 4096));
    CHECK_FALSE(tma_can_read(buf, 7));  // 14-byte rows
    CHECK_FALSE(tma_can_read(buf, 12));
    CHECK_FALSE(tma_can_read(buf + 1, 8));  // base off 16 bytes
    CHECK(padded_pitch<__half>(7) == 8);
    CHECK(padded_pitch<__half>(8) == 8);
    CHECK(padded_pitch<__half>(4097) == 4104);
    CHECK(padded_pitch<float>(5) == 8);
}

TEST_CASE("09: every step's shared memory and threads fit one H200 block", "[09]") {
    CHECK(Wgmma64x128<__half>::SMEM_BYTES == 4 * (64 + 128) * 128 + 64 + 1024);
    CHECK(Wgmma64x128<__half>::THREADS == 128);
    CHECK(Wgmma128x256<__half>::THREADS == 256);
    CHECK(WarpSpecialized128x256<__half>::THREADS == 384);
    CHECK(Persistent128x256<__half>::SMEM_BYTES <= 227 * 1024);
    // Step 5: the ring plus two 8 KB chunks of C per consumer still fit.
    CHECK(Cluster2Persistent128x256<__half>::SMEM_BYTES == 4 * 384 * 128 + 2 * 2 * 8192 + 64 + 1024);
    CHECK(Cluster2Persistent128x256<__half>::SMEM_BYTES <= 227 * 1024);
    // TF32: the same bytes per stage (128 bytes of k), half the k.
    CHECK(Persistent128x256<float>::SMEM_BYTES == Persistent128x256<__half>::SMEM_BYTES);
    CHECK(Persistent128x256<float>::BK == 32);
    CHECK(Persistent128x256<float>::K_STEP == 8);
    CHECK(Persistent128x256<float>::B_K_MAJOR);
    CHECK_FALSE(Persistent128x256<__nv_bfloat16>::B_K_MAJOR);
    // Registers after setmaxnreg: 128 * 40 (producer) + 256 * 232 (consumers) within the SM's 64 K.
    CHECK(128 * 40 + 2 * 128 * 232 <= 65536);
    CHECK(kHgemmVariants.size() == kBgemmVariants.size());
    for (size_t i = 0; i < kHgemmVariants.size(); ++i) {
        CHECK(std::string(kHgemmVariants[i].name) == kBgemmVariants[i].name);
        CHECK(kHgemmVariants[i].min_cc == 90);
    }
}
