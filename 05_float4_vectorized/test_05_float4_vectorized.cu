// test_05_float4_vectorized - every variant of the ladder against the double-precision reference on
// the spec's shapes, misaligned pointers, planted bugs that the check must catch, and CPU checks of
// the ladder table, the thread layouts, the launch decisions and `best`'s wave rule. The tuning
// table's own tests are in lab/test_05_lab.cu; the shared block order and chunk maps are tested in
// common/tests/test_gemm_tiles.cu.
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "testing.cuh"

using namespace ch05;

namespace {

// ---- misaligned pointers ----------------------------------------------------------------------
// Runs a launcher on A + a_off, B + b_off, C + c_off (floats) inside larger buffers, so that no row
// starts on a 16-byte boundary even when K and N are multiples of 4: the launcher must see this
// and take the 4-byte path (a float4 load from such an address would fault). Every entry is
// compared with the CPU reference, and the floats around C must be left alone.
struct OffsetRun {
    wb::CheckResult check;
    bool guards_intact = true;
};

OffsetRun run_with_offsets(SgemmFn run, wb::Shape s, float alpha, float beta, int a_off, int b_off,
                           int c_off) {
    constexpr int kGuard = 16;  // floats after each matrix
    constexpr float kSentinel = 7.0f;
    const size_t na = size_t(s.m) * s.k, nb = size_t(s.k) * s.n, nc = size_t(s.m) * s.n;
    std::vector<float> A(na), B(nb), C0(nc);
    wb::fill_random(A.data(), na, 11, 1);
    wb::fill_random(B.data(), nb, 11, 2);
    wb::fill_random(C0.data(), nc, 11, 3);

    std::vector<float> hA(na + a_off + kGuard, kSentinel), hB(nb + b_off + kGuard, kSentinel);
    std::vector<float> hC(nc + c_off + kGuard, kSentinel);
    std::copy(A.begin(), A.end(), hA.begin() + a_off);
    std::copy(B.begin(), B.end(), hB.begin() + b_off);
    for (size_t i = 0; i < nc; ++i)
        hC[c_off + i] = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : C0[i];
    wb::DeviceBuffer<float> dA(hA.size()), dB(hB.size()), dC(hC.size());
    dA.upload(hA);
    dB.upload(hB);
    dC.upload(hC);

    run(s.m, s.n, s.k, alpha, dA.get() + a_off, dB.get() + b_off, beta, dC.get() + c_off, 0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> out = dC.download();

    OffsetRun r;
    for (int i = 0; i < c_off; ++i) r.guards_intact = r.guards_intact && out[i] == kSentinel;
    for (int i = 0; i < kGuard; ++i) r.guards_intact = r.guards_intact && out[c_off + nc + i] == kSentinel;
    wb::GemmView g;
    g.s = s;
    g.alpha = alpha;
    g.beta = beta;
    g.A = A.data();
    g.B = B.data();
    g.C0 = beta != 0.0f ? C0.data() : nullptr;
    std::vector<double> value, scale;
    wb::reference_full(g, value, scale);
    r.check = wb::check_full(out.data() + c_off, s.m, s.n, value, scale,
                             wb::tolerance_for(wb::Precision::fp32, s.k));
    return r;
}

// ---- planted bugs -----------------------------------------------------------------------------
using Planted = CpAsync128x128k8;

// The classic tail bug: only whole BK tiles are summed, the last K % BK columns are dropped. (The
// real kernel, told that its K range ends at the last multiple of BK.)
void launch_skips_k_tail(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                         float* C, cudaStream_t stream) {
    const SplitArgs g{{M, N, K, alpha, beta, A, B, C, 1}, K / Planted::BK * Planted::BK};
    const dim3 grid(wb::ceil_div(N, Planted::BN), wb::ceil_div(M, Planted::BM));
    launch_sgemm_float4<Planted, Pipeline::cp_async, false>(g, grid, stream);
}

// The grid rounded down instead of up: the last partial row and column of tiles are never written.
void launch_grid_rounded_down(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C, cudaStream_t stream) {
    const SplitArgs g{{M, N, K, alpha, beta, A, B, C, 1}, K};
    const dim3 grid(N / Planted::BN, M / Planted::BM);
    if (grid.x == 0 || grid.y == 0) return;
    launch_sgemm_float4<Planted, Pipeline::cp_async, false>(g, grid, stream);
}

// An epilogue that always reads C (alpha * acc + beta * C even for beta == 0): the harness fills C
// with NaN before a beta == 0 run, and 0 * NaN is NaN. Planted by handing the kernel the smallest
// positive beta, which takes the reading branch while changing no finite result.
void launch_reads_c_when_beta_is_zero(int M, int N, int K, float alpha, const float* A, const float* B,
                                      float beta, float* C, cudaStream_t stream) {
    const float b = beta == 0.0f ? std::numeric_limits<float>::denorm_min() : beta;
    sgemm_float4_launcher<Planted, Pipeline::cp_async>(M, N, K, alpha, A, B, b, C, stream);
}

// Forcing the float4 path on a shape it cannot handle (N % 4 != 0) is NOT run here: the first
// misaligned LDG.128 raises cudaErrorMisalignedAddress, which leaves the CUDA context unusable for
// every later test in this process. The decision that prevents it, float4_path_ok, is tested on the
// CPU below, and the misaligned-pointer test above runs every launcher where it would matter.

// ---- layouts (CPU) ------------------------------------------------------------------------------

// Every element of the block tile of C is computed by exactly one (thread, r, c).
template <class Cfg>
void check_result_layout(const char* name) {
    std::vector<int> hits(Cfg::BM * Cfg::BN, 0);
    for (int tid = 0; tid < Cfg::THREADS; ++tid)
        for (int r = 0; r < Cfg::THREAD_M; ++r)
            for (int c = 0; c < Cfg::THREAD_N; ++c) {
                const int row = Cfg::thread_row0(tid) + Cfg::row_offset(r);
                const int col = Cfg::thread_col0(tid) + Cfg::col_offset(c);
                REQUIRE(row < Cfg::BM);
                REQUIRE(col < Cfg::BN);
                ++hits[row * Cfg::BN + col];
            }
    int wrong = 0;
    for (int h : hits) wrong += h != 1;
    INFO(name << ": tile entries not computed exactly once");
    CHECK(wrong == 0);
}

// How many passes through the 32 banks one warp-wide 4-byte shared store needs: the largest
// number of distinct addresses that fall into the same bank.
int store_wavefronts(const std::vector<int>& word_addresses) {
    std::vector<std::set<int>> bank(32);
    for (int a : word_addresses) bank[a % 32].insert(a);
    size_t worst = 0;
    for (const auto& b : bank) worst = std::max(worst, b.size());
    return int(worst);
}

// The transposed store of A (StagedTiles::store in tiles.cuh) for warp 0: each store instruction (chunk
// i, element j) of the 32 lanes, addresses As[k][m] with row length a_ld.
template <class Cfg, int W>
int worst_transposed_store(int a_ld) {
    using Ch = wb::TileChunks<Cfg::BM, Cfg::BK, W, Cfg::THREADS>;
    int worst = 0;
    for (int i = 0; i < Ch::PER_THREAD; ++i)
        for (int j = 0; j < W; ++j) {
            std::vector<int> addr;
            for (int lane = 0; lane < 32; ++lane)
                addr.push_back((Ch::col(lane) + j) * a_ld + Ch::row(lane, i));
            worst = std::max(worst, store_wavefronts(addr));
        }
    return worst;
}

}  // namespace

TEST_CASE("05: every variant is right on every shape of the spec", "[gpu][05]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kSgemmVariants));
}

TEST_CASE("05: misaligned pointers take the 4-byte path and stay right", "[gpu][05]") {
    WB_REQUIRE_GPU();
    struct Case {
        wb::Shape s;
        float alpha, beta;
        int a_off, b_off, c_off;
    };
    const Case cases[] = {
        {{64, 64, 64}, 1.0f, 0.0f, 1, 1, 1},     // would take float4 loads if aligned
        {{128, 256, 64}, 1.0f, 0.5f, 2, 0, 0},   // only A misaligned
        {{128, 128, 32}, -1.0f, 0.0f, 0, 3, 0},  // only B misaligned
        {{130, 132, 40}, 1.0f, 2.0f, 0, 0, 1},   // only C misaligned, beta != 0
        {{67, 45, 33}, 1.0f, 0.0f, 1, 2, 3},     // odd shape, everything shifted
        {{300, 40, 1000}, 1.0f, 0.0f, 1, 1, 1},  // long K (split-K slices, the best variant)
    };
    // One check per variant after all its cases: a wrong variant is reported once, with how
    // many cases it failed and the first of them.
    const int cc = wb::query_device(0).cc_number();
    for (const wb::SgemmVariant& v : kSgemmVariants) {
        if (cc < v.min_cc) continue;  // e.g. more shared memory than this GPU gives a block
        int failed = 0;
        std::string first_failure;
        for (const Case& c : cases) {
            OffsetRun r;
            std::string error;
            try {
                r = run_with_offsets(v.run, c.s, c.alpha, c.beta, c.a_off, c.b_off, c.c_off);
            } catch (const std::exception& e) {
                error = e.what();
                r.check.pass = false;
            }
            if ((r.check.pass && r.guards_intact) || failed++ > 0) continue;
            std::ostringstream o;
            o << wb::to_string(c.s) << " with A+" << c.a_off << ", B+" << c.b_off << ", C+" << c.c_off << ": "
              << (error.empty() ? r.check.describe() : error)
              << (r.guards_intact ? "" : "; it wrote outside C (a guard changed)");
            first_failure = o.str();
        }
        INFO(v.name << " failed " << failed << " of " << std::size(cases) << " cases; the first: " << first_failure);
        CHECK(failed == 0);
    }
}

TEST_CASE("05: the check catches planted bugs", "[gpu][05]") {
    WB_REQUIRE_GPU();
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{1000, 1013, 777}, wb::Shape{31, 33, 4099}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(sgemm_float4_launcher<Planted, Pipeline::cp_async>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_skips_k_tail, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_reads_c_when_beta_is_zero, wb::Precision::fp32).pass);
    }
}

TEST_CASE("05: the ladder table is well formed", "[05]") {
    REQUIRE(std::size(kSgemmVariants) >= 5);
    std::set<std::string> names;
    for (const wb::SgemmVariant& v : kSgemmVariants) {
        INFO(v.name);
        CHECK(names.insert(v.name).second);
        CHECK(v.run != nullptr);
        CHECK(v.info.kernel != nullptr);
        CHECK(v.info.threads > 0);
        CHECK(v.info.threads % 32 == 0);
        CHECK(v.info.dynamic_smem <= 227u * 1024);
        CHECK(v.precision == wb::Precision::fp32);
    }
    CHECK(std::string(kSgemmVariants[std::size(kSgemmVariants) - 1].name) == "best");
}

namespace {
// Equal up to rounding (Catch2's Approx is spelled differently in v2 and v3).
bool same(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::fabs(b); }
// An H200 as wb::DeviceFacts describes it: 132 SMs, 128 FP32 lanes at 1.98 GHz, 4.8 TB/s.
const GpuModel kH200{90, 132, 128 * 2 * 1.98, 4814.3};

std::string pick(int M, int N, int K, bool vec, const GpuModel& gpu = kH200) {
    const BestChoice c = choose_best(M, N, K, vec, gpu);
    REQUIRE(c.rate != nullptr);
    return std::string(c.rate->candidate.lab_name) + (c.splits > 1 ? "_sk" + std::to_string(c.splits) : "");
}
}  // namespace

TEST_CASE("05: best's rate table covers every GPU and stays within the lab's measurements", "[05]") {
    CHECK(best_generation(90) == 90);
    CHECK(best_generation(100) == 90);  // newer GPUs use the newest measured generation
    CHECK(best_generation(89) == 80);
    CHECK(best_generation(86) == 80);
    CHECK(best_generation(75) == 0);
    for (const MeasuredRate& r : kBestRates) {
        INFO(r.candidate.lab_name);
        CHECK(r.candidate.run != nullptr);
        CHECK(r.vec_share > 0.0);
        CHECK(r.vec_share < 1.0);  // a fraction of the FP32 peak
        CHECK(r.scalar_share > 0.0);
        CHECK(r.scalar_share < 1.0);
        // Turing has no cp.async: its rows must not be cp.async configurations.
        if (r.min_cc < 80) CHECK(std::strncmp(r.candidate.lab_name, "async", 5) != 0);
    }
}

TEST_CASE("05: best picks by waves on an H200", "[05]") {
    // 4096^3: 512 tiles of 128 x 256 fill 132 SMs evenly enough; it is the fastest tile per SM on
    // the float4 path, 128 x 128 x 16 on the 4-byte path.
    CHECK(pick(4096, 4096, 4096, true) == "async3_128x256x8");
    CHECK(pick(4096, 4096, 4096, false) == "async3_128x128x16");
    // 308 tiles of 128 x 128 are 2.33 rounds (3 for the busiest SM); in 3 slices, 924 tiles of a
    // third of the work are exactly 7 rounds (7 thirds = 2.33): the split wins.
    CHECK(pick(1713, 2764, 4260, false) == "async3_128x128x8_sk3");
    // 36 tiles: 7 slices would give 252 blocks (two per SM), 11 give 396 (three) of shorter slices.
    CHECK(pick(768, 768, 4096, true) == "async3_128x128x8_sk11");
    // 124 tiles of 128 x 128: one per SM, but a lone block does not reach the measured rate (it
    // needs a second one to hide latencies); two slices give every SM its two blocks.
    CHECK(pick(3861, 481, 6169, false) == "async3_128x128x8_sk2");
    CHECK(pick(1024, 1024, 1024, true) == "async3_128x128x8_sk4");
    // Short K: 195 tiles of 128 x 128 are 2 waves, 390 of 128 x 64 are 3 waves of half-size tiles.
    CHECK(pick(1838, 1608, 809, false) == "async3_128x64x8");
    // One tile of C, long K: four 64 x 64 tiles (four times the blocks), split as far as the table goes.
    CHECK(pick(128, 128, 100000, true) == "async3_64x64x8_sk16");
    CHECK(pick(100, 60, 100000, false) == "async3_64x64x8_sk16");
    // ... but never into slices shorter than kMinSliceK.
    CHECK(pick(128, 128, 500, true).find("_sk") == std::string::npos);
    CHECK(pick(128, 128, 1024, true) == "async3_64x64x8_sk4");
}

TEST_CASE("05: best on the shapes the H200 sweeps caught it out", "[05]") {
    // 289 rows are 3 tiles of 128 (384 rows computed) or 5 of 64 (320): short M, long K, 4-byte
    // path. 128 x 128 in 15 slices ran at 74% of cuBLAS (seed 4242); 64 x 64 tiles compute 17% fewer
    // rows, and 7 slices of them fill the SMs as well as 15 of 128 x 128.
    CHECK(pick(289, 2868, 7557, false) == "async3_64x64x8_sk7");
    CHECK(pick(264, 7104, 5520, true) == "async3_64x64x8_sk4");
    // 336 tiles of 128 x 128: 3 for the busiest SM; in 3 slices 8 of a third each (2.67). The split
    // ran 3.8% slower than the unsplit tile (seed 4242); at the 4-byte rate of 59 shapes the deeper
    // 128 x 128 x 16 tile, unsplit, is expected first.
    CHECK(pick(1729, 3015, 1248, false) == "async3_128x128x16");
    // The same at 6242 x 2433 x 2808 (before_random: 128 x 128 x 16 3% of cuBLAS ahead of the split).
    CHECK(pick(6242, 2433, 2808, false) == "async3_128x128x16");
    // Shapes with many tiles keep the tile that is fastest per SM.
    CHECK(pick(8192, 8192, 8192, true) == "async3_128x256x8");
    CHECK(pick(4096, 4096, 1024, true) == "async3_128x256x8");
    CHECK(pick(1000, 1013, 4097, false) == "async3_128x128x8_sk4");
}

TEST_CASE("05: best's estimate counts the busiest SM", "[05]") {
    const MeasuredRate& wide = kBestRates[0];
    REQUIRE(std::string(wide.candidate.lab_name) == "async3_128x256x8");
    // 132 tiles and 133 tiles: the 133rd needs a second round on one SM, doubling the time.
    const double one_wave = estimate_ms(wide, true, 128 * 12, 256 * 11, 4096, 1, kH200);
    const double a_tile_more = estimate_ms(wide, true, 128 * 12 + 1, 256 * 11, 4096, 1, kH200);
    CHECK(same(a_tile_more, 2 * one_wave));
    CHECK(same(estimate_ms(wide, true, 128 * 24, 256 * 11, 4096, 1, kH200), 2 * one_wave));
    // The same work at the 4-byte rate takes longer.
    CHECK(estimate_ms(wide, false, 4096, 4096, 4096, 1, kH200) >
          estimate_ms(wide, true, 4096, 4096, 4096, 1, kH200));
    // A lone block per SM is charged as two (fill_blocks): 66 tiles cost as much as 264.
    const MeasuredRate& deep = kBestRates[1];
    REQUIRE(deep.candidate.fill_blocks == 2);
    CHECK(same(estimate_ms(deep, true, 128 * 6, 128 * 11, 4096, 1, kH200),
               estimate_ms(deep, true, 128 * 24, 128 * 11, 4096, 1, kH200)));
    CHECK(wide.candidate.fill_blocks == 1);  // 128 x 256 runs one block per SM by design
    // A split pays for its partial sums: with ample tiles it only loses.
    const MeasuredRate& split = kBestRates[4];
    REQUIRE(split.candidate.may_split);
    CHECK(estimate_ms(split, true, 8192, 8192, 1024, 2, kH200) >
          estimate_ms(split, true, 8192, 8192, 1024, 1, kH200));
}

TEST_CASE("05: best on GPUs that were not measured keeps the previous choices", "[05]") {
    const GpuModel a100{80, 108, 64 * 2 * 1.41, 1555};
    const GpuModel t4{75, 40, 64 * 2 * 1.59, 320};
    CHECK(pick(4096, 4096, 1024, true, a100) == "async3_128x128x8");
    CHECK(pick(1000, 1013, 4097, true, a100).rfind("async3_128x128x8_sk", 0) == 0);  // 64 tiles on 108 SMs
    CHECK(pick(4096, 4096, 4096, true, t4) == "regs2_128x128x8");
    CHECK(pick(128, 128, 100000, true, t4) == "regs2_128x128x8");  // never split
}
TEST_CASE("05: the float4 path is taken only when it is safe", "[05]") {
    alignas(16) static float buf[64];
    const float* a = buf;  // 16-byte aligned
    CHECK(float4_path_ok(1024, 1024, a, a, buf));
    CHECK_FALSE(float4_path_ok(1013, 1024, a, a, buf));  // N % 4: rows of B and C misaligned
    CHECK_FALSE(float4_path_ok(1024, 4097, a, a, buf));  // K % 4: rows of A misaligned
    CHECK_FALSE(float4_path_ok(1024, 1024, a + 1, a, buf));
    CHECK_FALSE(float4_path_ok(1024, 1024, a, a + 2, buf));
    CHECK_FALSE(float4_path_ok(1024, 1024, a, a, buf + 3));
    CHECK(float4_path_ok(1024, 1024, a + 4, a + 8, buf + 12));  // offsets of whole float4s are fine
}

TEST_CASE("05: split-K is used only when the tiles leave SMs idle", "[05]") {
    CHECK(auto_splits<CpAsync128x128k8>(4096, 4096, 4096, 132) == 1);  // 1024 tiles: no split
    CHECK(auto_splits<CpAsync128x128k8>(4096, 4096, 1024, 132) == 1);
    CHECK(auto_splits<CpAsync128x128k8>(1000, 1013, 4097, 132) == 4);  // 64 tiles, 2 blocks/SM: 264 / 64
    CHECK(auto_splits<CpAsync128x128k8>(1000, 1013, 300, 132) == 1);   // K too short to slice
    CHECK(auto_splits<CpAsync128x128k8>(128, 128, 100000, 132) == kMaxSplits);
    CHECK(auto_splits<CpAsync64x64k8>(1000, 1013, 4097, 132) == 1);  // 256 tiles of 64x64
}

TEST_CASE("05: every thread layout covers its tile of C exactly once", "[05]") {
    check_result_layout<Contiguous128x128k8>("Contiguous128x128k8");
    check_result_layout<Warp128x128k8>("Warp128x128k8");
    check_result_layout<CpAsync128x128k16>("CpAsync128x128k16");
    check_result_layout<CpAsync128x256k8>("CpAsync128x256k8");
    check_result_layout<CpAsync128x64k8>("CpAsync128x64k8");
    check_result_layout<CpAsync64x64k8>("CpAsync64x64k8");
}

TEST_CASE("05: padding the transposed A tile removes its store bank conflicts", "[05]") {
    // float4 loads (4 STS.32 each) and 4-byte loads / cp.async, with and without the padding.
    CHECK(worst_transposed_store<Warp128x128k8, 4>(Warp128x128k8::A_LD) == 1);
    CHECK(worst_transposed_store<Warp128x128k8, 1>(Warp128x128k8::A_LD) == 1);
    CHECK(worst_transposed_store<Warp128x128k8, 4>(Warp128x128k8::BM) == 2);  // unpadded: lane pairs collide
    CHECK(worst_transposed_store<Warp128x128k8, 1>(Warp128x128k8::BM) == 8);  // unpadded: 8 rows in one bank
}
