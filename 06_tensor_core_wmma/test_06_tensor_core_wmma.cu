// test_06_tensor_core_wmma - every FP16 and TF32 ladder variant and every candidate of `best`
// against the double-precision reference on the spec's shapes and on shapes aimed at the WMMA rules;
// misaligned pointers and odd leading dimensions; planted bugs that the check must catch; the FP16
// range pitfalls; and CPU checks of the tables, the tile layouts, the padding arithmetic and the
// choice of `best`. The lab's configurations and the precision study: lab/test_06_lab.cu.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "cuda_handles.cuh"
#include "test_support_06.cuh"

namespace {

using namespace t06;

// The ladder, then the candidates of `best` that are not ladder rows, as variants of their own.
std::vector<wb::HgemmVariant> every_fp16() {
    std::vector<wb::HgemmVariant> all = wb::table(kHgemmVariants);
    for (const BestCandidate<HgemmFn>& c : kHgemmCandidates)
        if (std::none_of(all.begin(), all.end(), [&](const wb::HgemmVariant& v) { return v.run == c.run; }))
            all.push_back({c.name, c.run, "a candidate of wmma_best", {}, c.min_cc});
    return all;
}

std::vector<wb::SgemmVariant> every_tf32() {
    std::vector<wb::SgemmVariant> all = wb::table(kTf32Variants);
    for (const BestCandidate<SgemmFn>& c : kTf32Candidates)
        if (std::none_of(all.begin(), all.end(), [&](const wb::SgemmVariant& v) { return v.run == c.run; }))
            all.push_back({c.name, c.run, "a candidate of tf32_best", wb::Precision::tf32, {}, c.min_cc});
    return all;
}

// ---- planted bugs ----------------------------------------------------------------------------
// The real kernel, handed what a classic mistake would hand it: step 5's kernel for FP16 and
// step 7's (the same body on TF32 inputs), on their element-wise path.
using PlantedH = Wmma128x128_3stage;
using PlantedT = Tf32Wmma128x128_3stage;

template <class Cfg>
constexpr auto staged_kernel() {
    if constexpr (std::is_same<typename Cfg::Inputs, Fp16Inputs>::value)
        return wmma_smem_epilogue<Cfg, false>;
    else
        return tf32_wmma<Cfg, false>;
}

// The launcher with the cp.async ring, the staged epilogue and the banded block order.
template <class Cfg>
constexpr auto staged_launcher() {
    if constexpr (std::is_same<typename Cfg::Inputs, Fp16Inputs>::value)
        return launch_wmma_swizzle<Cfg>;
    else
        return launch_tf32_wmma<Cfg>;
}

// Only whole BK steps are walked: the last K % BK columns of A (rows of B) are dropped.
template <class Cfg>
void launch_drops_k_tail(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                         const typename Cfg::Element* B, float beta, float* C, cudaStream_t stream) {
    WmmaArgs<typename Cfg::Element> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, 1);
    g.k_tiles = K / Cfg::BK;
    wb::launch_tiled<staged_kernel<Cfg>(), Cfg::THREADS, Cfg::SMEM_BYTES>(g, tiled_grid<Cfg>(M, N), stream);
}

// The grid rounded down: the last partial row and column of tiles are never written.
template <class Cfg>
void launch_grid_rounded_down(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                              const typename Cfg::Element* B, float beta, float* C, cudaStream_t stream) {
    const WmmaArgs<typename Cfg::Element> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, 1);
    const dim3 grid(N / Cfg::BN, M / Cfg::BM);
    if (grid.x == 0 || grid.y == 0) return;  // a grid of zero blocks is a launch error
    wb::launch_tiled<staged_kernel<Cfg>(), Cfg::THREADS, Cfg::SMEM_BYTES>(g, grid, stream);
}

// An epilogue that always reads C. Planted by handing the kernel the smallest positive beta, which
// takes the reading branch while changing no finite result: the NaN the harness puts into C
// before a beta == 0 run comes through (0 * NaN is NaN).
template <class Cfg>
void launch_reads_c_when_beta_is_zero(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                                      const typename Cfg::Element* B, float beta, float* C,
                                      cudaStream_t stream) {
    const float b = beta == 0.0f ? std::numeric_limits<float>::denorm_min() : beta;
    staged_launcher<Cfg>()(M, N, K, alpha, A, B, b, C, stream);
}

// Step 8 (mma.sync) has its own kernel: the same classic mistake handed to it.
using PlantedM = Mma128x128_k32_2stage;
template <class Cfg>
void mma_drops_k_tail(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                      cudaStream_t stream) {
    WmmaArgs<float> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, 1);
    g.k_tiles = K / Cfg::BK;
    wb::launch_tiled<tf32_mma_sync<Cfg, false>, Cfg::THREADS, Cfg::SMEM_BYTES>(g, tiled_grid<Cfg>(M, N), stream);
}

// Step 11 with copies and fragment loads that disagree on B's key (CopiesKeyedLikeStep9).
using PlantedS = Mma128x128_k32_3stage_swizzled;
void swizzled_copies_keyed_like_step9(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                                      float* C, cudaStream_t stream) {
    const WmmaArgs<float> g = make_args(M, N, K, alpha, A, B, beta, C, PlantedS::BK, 1);
    wb::launch_tiled<tf32_swizzled<PlantedS, false, CopiesKeyedLikeStep9<PlantedS>>, PlantedS::THREADS,
                     PlantedS::SMEM_BYTES>(g, tiled_grid<PlantedS>(M, N), stream);
}

// ---- the mma.sync fragment layout, one tile ------------------------------------------------------
// One m16n8k8 on a 16x8 A and an 8x8 B (row-major in global memory), each lane gathering its
// registers by the layout of step8_tf32_mma_sync.cuh. BUG = 1 swaps b0 and b1 (rows t and t + 4
// of B), BUG = 2 swaps a1 and a2: plausible misreadings of the layout table.
template <int BUG>
__global__ void one_mma_tile(const float* A, const float* B, float* C) {
    const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
    auto bits = [](float x) { return __float_as_uint(tf32_round(x)); };
    unsigned a[4] = {bits(A[g * 8 + t]), bits(A[(g + 8) * 8 + t]), bits(A[g * 8 + t + 4]),
                     bits(A[(g + 8) * 8 + t + 4])};
    unsigned b[2] = {bits(B[t * 8 + g]), bits(B[(t + 4) * 8 + g])};
    if (BUG == 1) {
        const unsigned x = b[0];
        b[0] = b[1];
        b[1] = x;
    }
    if (BUG == 2) {
        const unsigned x = a[1];
        a[1] = a[2];
        a[2] = x;
    }
    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    mma_m16n8k8_tf32(d, a, b);
    C[g * 8 + 2 * t] = d[0];
    C[g * 8 + 2 * t + 1] = d[1];
    C[(g + 8) * 8 + 2 * t] = d[2];
    C[(g + 8) * 8 + 2 * t + 1] = d[3];
}

// Small integers: exact in TF32, every product and sum exact in FP32, so the result must be exact.
template <int BUG>
int one_mma_tile_errors() {
    std::vector<float> a(16 * 8), b(8 * 8), want(16 * 8, 0.0f);
    for (int i = 0; i < 16 * 8; ++i) a[i] = float((i * 7) % 13 - 6);
    for (int i = 0; i < 8 * 8; ++i) b[i] = float((i * 5) % 11 - 5);
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 8; ++j)
            for (int k = 0; k < 8; ++k) want[i * 8 + j] += a[i * 8 + k] * b[k * 8 + j];
    wb::DeviceBuffer<float> dA(a.size()), dB(b.size()), dC(want.size());
    dA.upload(a);
    dB.upload(b);
    one_mma_tile<BUG><<<1, 32>>>(dA.get(), dB.get(), dC.get());
    WB_LAUNCH_CHECK();
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> c = dC.download();
    int wrong = 0;
    for (size_t i = 0; i < c.size(); ++i) wrong += c[i] != want[i];
    return wrong;
}

// tf32_round on the GPU, element by element, both tie rules.
__global__ void round_on_gpu(const float* in, float* away, float* even, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    away[i] = tf32_round<false>(in[i]);
    even[i] = tf32_round<true>(in[i]);
}

// Ties to even on the CPU: add just under half a TF32 unit, plus the last kept bit, then truncate.
float round_to_tf32_ties_even(float x) {
    if (!std::isfinite(x)) return x;
    unsigned u = 0;
    std::memcpy(&u, &x, sizeof u);
    u = (u + 0x0FFFu + ((u >> 13) & 1u)) & 0xFFFFE000u;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

// The 19 bits the tensor core reads (sign, exponent, 10 mantissa bits) agree; NaN matches any NaN.
bool same_tf32(float want, float got) {
    if (std::isnan(want)) return std::isnan(got);
    unsigned w = 0, g = 0;
    std::memcpy(&w, &want, sizeof w);
    std::memcpy(&g, &got, sizeof g);
    return (w & 0xFFFFE000u) == (g & 0xFFFFE000u);
}
}  // namespace

// ---- GPU: correctness ------------------------------------------------------------------------------

TEST_CASE("06: every FP16 variant and candidate is right on the spec's shapes", "[gpu][06]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(every_fp16());
}

TEST_CASE("06: every TF32 variant and candidate is right on the spec's shapes", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_CASE("TF32 tensor cores need sm_80");
    wb::test::check_variants(every_tf32());
}

TEST_CASE("06: every variant is right on shapes aimed at the WMMA rules", "[gpu][06]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(every_fp16(), wmma_cases());
    wb::test::check_variants(every_tf32(), wmma_cases());  // skipped below sm_80 (min_cc)
}

TEST_CASE("06: misaligned pointers and odd leading dimensions take the safe paths", "[gpu][06]") {
    WB_REQUIRE_GPU();
    check_offsets<__half>(every_fp16(), wb::Precision::fp16);
    check_offsets<float>(every_tf32(), wb::Precision::tf32);
}

TEST_CASE("06: the check catches planted bugs", "[gpu][06]") {
    WB_REQUIRE_GPU();
    const bool tf32 = device_cc() >= 80;
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{64, 48, 1}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(staged_launcher<PlantedH>()).pass);
        CHECK_FALSE(prob.verify(launch_drops_k_tail<PlantedH>).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down<PlantedH>).pass);
        CHECK_FALSE(prob.verify(launch_reads_c_when_beta_is_zero<PlantedH>).pass);
        if (!tf32) continue;
        CHECK(prob.verify(staged_launcher<PlantedT>(), wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(launch_drops_k_tail<PlantedT>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down<PlantedT>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(launch_reads_c_when_beta_is_zero<PlantedT>, wb::Precision::tf32).pass);
    }
}

// What `best` does on the first call with a shape: it times its shortlist into a scratch C. The
// caller's C must come out of that untouched (with beta != 0 a trial into C would add to it), the
// choice must be one of the shortlist and be remembered, and while a stream records a graph nothing
// may be timed: the model's first choice is captured instead.
TEST_CASE("06: best times its shortlist once per shape, never into C, and not while capturing", "[gpu][06]") {
    WB_REQUIRE_GPU();
    const wb::DeviceFacts& gpu = wb::current_device();
    const int M = 700, N = 901, K = 333;  // element-wise path: N and K odd
    const auto list = shortlist(kHgemmCandidates, M, N, K, false, gpu.cc_number(), gpu.sms, gpu.smem_per_block_optin);
    REQUIRE(list.size() > 1);  // else there is nothing to time
    std::vector<float> a(size_t(M) * K), b(size_t(K) * N);
    wb::fill_random(a.data(), a.size(), 11, 0);
    wb::fill_random(b.data(), b.size(), 11, 1);
    wb::DeviceBuffer<__half> dA(a.size()), dB(b.size());
    dA.upload(wb::to_half(a));
    dB.upload(wb::to_half(b));
    const std::vector<float> sentinel(size_t(M) * N, 7.0f);
    wb::DeviceBuffer<float> dC(sentinel.size());
    dC.upload(sentinel);
    const BestCandidate<HgemmFn>& first =
        pick_best(kHgemmCandidates, M, N, K, 1.0f, dA.get(), dB.get(), 0.5f, dC.get(), 0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(dC.download() == sentinel);
    CHECK(std::count(list.begin(), list.end(), &first) == 1);
    CHECK(&pick_best(kHgemmCandidates, M, N, K, 1.0f, dA.get(), dB.get(), 0.5f, dC.get(), 0) == &first);

    // The same kind of shape, never seen before, while a stream captures.
    const int M2 = M - 1;
    const wb::Stream stream(cudaStreamNonBlocking);
    const BestCandidate<HgemmFn>* captured = nullptr;
    const wb::GraphExec exec = wb::capture_graph(stream, [&](cudaStream_t s) {
        captured = &pick_best(kHgemmCandidates, M2, N, K, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), s);
        launch_hgemm_best(M2, N, K, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), s);
    });
    CHECK(captured == &choose_best(kHgemmCandidates, M2, N, K, false, gpu.cc_number(), gpu.sms,
                                   gpu.smem_per_block_optin));
    WB_CUDA_CHECK(cudaGraphLaunch(exec, stream));
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    // The graph ran the chosen kernel: the first M2 rows of C now hold A B, finite; the last row
    // is still the sentinel.
    const std::vector<float> c = dC.download();
    CHECK(std::all_of(c.begin(), c.begin() + size_t(M2) * N, [](float x) { return std::isfinite(x) && x != 7.0f; }));
    CHECK(std::all_of(c.begin() + size_t(M2) * N, c.end(), [](float x) { return x == 7.0f; }));
}

TEST_CASE("06: tf32_mma_sync follows the documented mma.sync layout, and a misread layout fails", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_CASE("TF32 mma.sync needs sm_80");
    CHECK(one_mma_tile_errors<0>() == 0);
    CHECK(one_mma_tile_errors<1>() > 0);
    CHECK(one_mma_tile_errors<2>() > 0);
    // The whole kernel, handed a K loop that drops the tail, must fail the check too.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{64, 48, 1}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(launch_tf32_mma_sync<PlantedM>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(mma_drops_k_tail<PlantedM>, wb::Precision::tf32).pass);
    }
}

TEST_CASE("06: tf32_swizzled fails when its copies and loads disagree on the swizzle key", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_CASE("TF32 mma.sync needs sm_80");
    // K >= 2: with one k-row of B, row 0 has key 0 under both keys and the bug hides.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{130, 136, 8}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(launch_tf32_swizzled<PlantedS>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(swizzled_copies_keyed_like_step9, wb::Precision::tf32).pass);
    }
}

TEST_CASE("06: mma_ldmatrix follows the documented m16n8k16 layout, and a misread layout fails", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_CASE("mma.sync m16n8k16 with FP16 inputs needs sm_80");
    CHECK(one_mma16_tile_errors<0>() == 0);
    CHECK(one_mma16_tile_errors<1>() > 0);
    CHECK(one_mma16_tile_errors<2>() > 0);
}

TEST_CASE("06: the GPU rounds to TF32 exactly like the reference", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_CASE("TF32 rounding instructions need sm_80");
    const float inf = std::numeric_limits<float>::infinity();
    std::vector<float> in = {0.0f, -0.0f, 1.0f, -1.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                             std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                             std::numeric_limits<float>::min()};
    // Ties (the 13 dropped bits exactly 0x1000) and their neighbours, both signs.
    for (unsigned base : {0x3F800000u, 0x3F802000u, 0x40490000u, 0x00000000u, 0x7F7FE000u})
        for (unsigned low : {0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu})
            for (unsigned sign : {0u, 0x80000000u}) {
                const unsigned u = (base | low) ^ sign;
                float f;
                std::memcpy(&f, &u, sizeof f);
                in.push_back(f);
            }
    std::vector<float> random(4096);
    wb::fill_random(random.data(), random.size(), 5, 1);
    in.insert(in.end(), random.begin(), random.end());
    wb::DeviceBuffer<float> dIn(in.size()), dAway(in.size()), dEven(in.size());
    dIn.upload(in);
    round_on_gpu<<<wb::ceil_div(int(in.size()), 256), 256>>>(dIn.get(), dAway.get(), dEven.get(), int(in.size()));
    WB_LAUNCH_CHECK();
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> away = dAway.download(), even = dEven.download();
    // cvt.rna leaves the 13 low bits unspecified (nvcc's code keeps what its add left there); the
    // tensor core ignores them, so same_tf32 compares the rest. Ties to even exists on sm_90 only;
    // below, tf32_round<true> falls back to ties away.
    const bool has_even = device_cc() >= 90;
    int wrong_away = 0, wrong_even = 0, ties_differ = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        const float want_away = wb::round_to_tf32(in[i]);
        const float want_even = has_even ? round_to_tf32_ties_even(in[i]) : want_away;
        if (!same_tf32(want_away, away[i]) && wrong_away++ < 5)
            WARN("ties away: " << in[i] << " -> " << away[i] << ", reference " << want_away);
        if (!same_tf32(want_even, even[i]) && wrong_even++ < 5)
            WARN("ties to even: " << in[i] << " -> " << even[i] << ", reference " << want_even);
        ties_differ += !same_tf32(away[i], even[i]);
    }
    CHECK(wrong_away == 0);
    CHECK(wrong_even == 0);
    // The two rules differ only on ties: 0x3F801000 rounds down to even, 0x3F803000 up either way.
    if (has_even) CHECK(ties_differ > 0);
}

TEST_CASE("06: shapes that are exact tile multiples hide the tail bugs", "[gpu][06]") {
    WB_REQUIRE_GPU();
    // Why the shape lists are full of odd sizes: on a multiple of every tile the planted bugs compute
    // the right answer, so such a test proves nothing about the edges.
    wb::GemmProblem prob(wb::Shape{256, 256, 128}, 1.0f, 0.0f, 3);
    CHECK(prob.verify(launch_drops_k_tail<PlantedH>).pass);
    CHECK(prob.verify(launch_grid_rounded_down<PlantedH>).pass);
}

// ---- GPU: the FP16 range -------------------------------------------------------------------------

TEST_CASE("06: products above 65504 do not overflow: the accumulation is FP32", "[gpu][06]") {
    WB_REQUIRE_GPU();
    // Every input is 300 (exact in FP16 and TF32); every product is 90000, beyond FP16's largest
    // finite value 65504, and every sum is an integer below 2^24, exact in FP32 in any order.
    const int M = 48, N = 40, K = 64;
    const float expected = 300.0f * 300.0f * K;
    const std::vector<float> a(size_t(M) * K, 300.0f), b(size_t(K) * N, 300.0f);
    wb::DeviceBuffer<__half> dA16(a.size()), dB16(b.size());
    wb::DeviceBuffer<float> dA(a.size()), dB(b.size()), dC(size_t(M) * N);
    dA16.upload(wb::to_half(a));
    dB16.upload(wb::to_half(b));
    dA.upload(a);
    dB.upload(b);
    auto all_equal = [&](float want) {
        const std::vector<float> c = dC.download();
        return std::all_of(c.begin(), c.end(), [&](float x) { return x == want; });
    };
    const int cc = device_cc();
    for (const wb::HgemmVariant& v : every_fp16()) {
        if (cc < v.min_cc) continue;
        v.run(M, N, K, 1.0f, dA16.get(), dB16.get(), 0.0f, dC.get(), 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        INFO(v.name);
        CHECK(all_equal(expected));
    }
    for (const wb::SgemmVariant& v : every_tf32()) {
        if (cc < v.min_cc) continue;
        v.run(M, N, K, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        INFO(v.name);
        CHECK(all_equal(expected));
    }
}

TEST_CASE("06: one input above 65504 turns a whole row of C into Inf", "[gpu][06]") {
    WB_REQUIRE_GPU();
    // A is all ones except A[0][0] = 70000, which rounds to +Inf in FP16; B is all ones. Row 0 of C
    // becomes +Inf, every other entry is K. The same data in TF32 (FP32's range) stays finite.
    const int M = 33, N = 20, K = 24;
    std::vector<float> a(size_t(M) * K, 1.0f), b(size_t(K) * N, 1.0f);
    a[0] = 70000.0f;
    wb::DeviceBuffer<__half> dA(a.size()), dB(b.size());
    wb::DeviceBuffer<float> dC(size_t(M) * N);
    dA.upload(wb::to_half(a));
    dB.upload(wb::to_half(b));
    const int cc = device_cc();
    for (const wb::HgemmVariant& v : every_fp16()) {
        if (cc < v.min_cc) continue;
        v.run(M, N, K, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> c = dC.download();
        int wrong = 0;
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                const float x = c[size_t(i) * N + j];
                wrong += i == 0 ? !(std::isinf(x) && x > 0) : x != float(K);
            }
        INFO(v.name);
        CHECK(wrong == 0);
    }
}

// ---- CPU: tables, rules, layouts ------------------------------------------------------------------

TEST_CASE("06: the tables are well formed", "[06]") {
    std::set<std::string> names;
    auto common_checks = [&](const char* name, const wb::KernelInfo& info, int min_cc) {
        INFO(name);
        CHECK(names.insert(name).second);  // unique across both tables
        // The resource table gets a row per kernel; the *_best variants run one of several kernels
        // (a candidate chosen per shape) and have none of their own.
        const bool best = std::string(name).find("_best") != std::string::npos;
        CHECK((info.kernel != nullptr) != best);
        if (best) return;
        CHECK(info.threads > 0);
        CHECK(info.threads % 32 == 0);
        CHECK(info.dynamic_smem <= size_t(kSmemLimitSm90));
        if (info.dynamic_smem > size_t(kSmemLimitSm80)) CHECK(min_cc >= 90);  // sm_86/sm_89 grant 99 KB
        if (info.dynamic_smem > size_t(kSmemLimitSm75)) CHECK(min_cc >= 80);  // sm_75 grants 64 KB
        CHECK(min_cc >= 70);                                                  // WMMA needs Volta or later
    };
    for (const wb::HgemmVariant& v : kHgemmVariants) {
        common_checks(v.name, v.info, v.min_cc);
        CHECK(v.run != nullptr);
        CHECK(std::string(v.what).size() > 0);
    }
    for (const wb::SgemmVariant& v : kTf32Variants) {
        common_checks(v.name, v.info, v.min_cc);
        CHECK(v.run != nullptr);
        CHECK(v.precision == wb::Precision::tf32);  // verified against TF32-rounded inputs
        CHECK(v.min_cc >= 80);                      // TF32 tensor cores: Ampere and later
    }
    CHECK(std::string(kHgemmVariants[std::size(kHgemmVariants) - 1].name) == "wmma_best");
    CHECK(std::string(kTf32Variants[std::size(kTf32Variants) - 1].name) == "tf32_best");
    // Every candidate has a positive 16-byte rate (an element-wise rate of 0 keeps it off that path),
    // and one candidate of each precision runs on every GPU of that precision (Volta for FP16,
    // Ampere for TF32), on both paths.
    auto rates_ok = [](const PathRates& r) { return r.vec16 > 0 && r.elementwise >= 0; };
    int fp16_anywhere = 0, tf32_anywhere = 0;
    for (const BestCandidate<HgemmFn>& c : kHgemmCandidates) {
        INFO(c.name);
        CHECK(c.run != nullptr);
        CHECK((rates_ok(c.hopper) && rates_ok(c.before_hopper)));
        fp16_anywhere += c.min_cc <= 70 && c.hopper.elementwise > 0 && c.before_hopper.elementwise > 0;
    }
    for (const BestCandidate<SgemmFn>& c : kTf32Candidates) {
        INFO(c.name);
        CHECK(c.run != nullptr);
        CHECK((rates_ok(c.hopper) && rates_ok(c.before_hopper)));
        tf32_anywhere += c.min_cc <= 80 && c.smem_bytes <= kSmemLimitSm80 && c.hopper.elementwise > 0 &&
                         c.before_hopper.elementwise > 0;
    }
    CHECK(fp16_anywhere > 0);
    CHECK(tf32_anywhere > 0);
}

// Shapes of the H200 sweeps (lab/calib) and what the rule picks there; lab/best_06.py replays the
// same rule on every shape of the sweeps.
TEST_CASE("06: best follows the waves and the copy path", "[06]") {
    constexpr int kH200Sms = 132, kH200Smem = 227 * 1024;
    auto fp16 = [&](int M, int N, int K) {
        const bool vec16 = N % 8 == 0 && K % 8 == 0;  // rows of 16 bytes, from a cudaMalloc'd pointer
        return std::string(choose_best(kHgemmCandidates, M, N, K, vec16, 90, kH200Sms, kH200Smem).name);
    };
    auto tf32 = [&](int M, int N, int K) {
        const bool vec16 = N % 4 == 0 && K % 4 == 0;
        return std::string(choose_best(kTf32Candidates, M, N, K, vec16, 90, kH200Sms, kH200Smem).name);
    };
    // 16-byte path: step 9's kernel (mma.sync from ldmatrix), the 64x128 tile where 128x256 would
    // leave a wave half empty (2128x3904: 17 x 16 = 272 tiles, 2.06 waves).
    CHECK(fp16(2128, 3904, 3904) == "mma_64x128");
    CHECK(fp16(264, 7104, 5520) == "mma_ldmatrix");
    CHECK(fp16(4096, 4096, 4096) == "mma_ldmatrix");
    // Element-wise path, 195 tiles of 128x128 (two waves on 132 SMs) against 98 of 128x256 (one):
    // the same busiest-SM work, and 128x256 runs it faster.
    CHECK(fp16(1838, 1608, 809) == "wmma_128x256_swizzle");
    // 120 tiles of 128x128 fit one wave; 60 of 128x256 would leave half the SMs idle.
    CHECK(fp16(1241, 1533, 4389) == "wmma_smem_skewed");
    // 308 tiles of 128x128 (3 per SM) against 154 of 128x256 (2 per SM, 4 tile-equivalents).
    CHECK(fp16(1713, 2764, 4260) == "wmma_smem_skewed");
    // A small problem: 4 tiles of 128x128 leave 128 SMs idle; 8 of 64x128 (and 16 of 64x64) spread
    // further.
    CHECK(fp16(256, 256, 256) == "mma_64x128");
    // Element-wise path with 128 tiles of 64x128 for 132 SMs (1000x1013x4097): step 9's small tile.
    CHECK(fp16(1000, 1013, 4097) == "mma_64x128");
    // TF32: step 11 on large shapes of the 16-byte path, step 8 on the element-wise path (N = 7651),
    // the 64x64 tile where 128x128 leaves most SMs idle.
    CHECK(tf32(4096, 4096, 4096) == "tf32_swizzled");
    CHECK(tf32(1417, 7651, 8179) == "tf32_mma_sync");
    CHECK(tf32(256, 256, 256) == "mma_64x64");
    // Turing (sm_75, 64 KB per block): the 79.5 KB tile is never chosen; a GPU with no candidate
    // is an error, not a crash.
    for (int M : {1838, 4096, 8192}) {
        const BestCandidate<HgemmFn>& c = choose_best(kHgemmCandidates, M, M, M, true, 75, 40, 64 * 1024);
        INFO(c.name);
        CHECK(c.smem_bytes <= 64 * 1024);
    }
    CHECK_THROWS(choose_best(kTf32Candidates, 512, 512, 512, true, 75, 40, 64 * 1024));
    // The model itself: one more tile than SMs doubles the busiest SM's work.
    CHECK(wb::busiest_sm_time(128 * 132, 128, 64, 128, 128, 1, 132, 1.0) * 2 ==
          wb::busiest_sm_time(128 * 133, 128, 64, 128, 128, 1, 132, 1.0));
}

// The FP16 shapes of the H200 sweeps where the model's first choice ran 3-7% behind a ladder row.
// All are on the element-wise path, where four candidates are modelled within a few percent of each
// other and the measured winner follows neither the waves nor K; the shortlist holds every one of
// them, so the first call's measurement can find the row that won the sweep.
TEST_CASE("06: best's shortlist holds the winners the model alone missed", "[06]") {
    auto names = [](int M, int N, int K) {
        std::set<std::string> out;
        for (const BestCandidate<HgemmFn>* c : shortlist(kHgemmCandidates, M, N, K, false, 90, 132, 227 * 1024))
            out.insert(c->name);
        return out;
    };
    struct Miss {
        int M, N, K;
        const char* winner;  // the fastest ladder row of the sweep (median of its rounds)
    };
    const Miss misses[] = {
        {4299, 452, 6921, "wmma_smem_epilogue"}, {1634, 4489, 3010, "wmma_cp_async"},
        {1087, 6214, 3351, "wmma_smem_skewed"},  {4841, 4228, 2451, "wmma_smem_epilogue"},
        {6986, 7989, 355, "wmma_smem_skewed"},   {1563, 6641, 6223, "wmma_smem_skewed"},
        {3197, 4994, 797, "wmma_cp_async"},      {497, 3741, 7477, "wmma_smem_epilogue"},
    };
    for (const Miss& m : misses) {
        INFO(m.M << "x" << m.N << "x" << m.K);
        const std::set<std::string> list = names(m.M, m.N, m.K);
        CHECK(list.count(m.winner) == 1);
        CHECK(list.count("wmma_64x64") == 0);  // its waves lose clearly on shapes this large
    }
    // The model's order: its first choice leads the list.
    CHECK(shortlist(kHgemmCandidates, 4299, 452, 6921, false, 90, 132, 227 * 1024).front()->name ==
          std::string(choose_best(kHgemmCandidates, 4299, 452, 6921, false, 90, 132, 227 * 1024).name));
    // 16-byte path at 4096^3: step 9 first, its BK = 64 tile (11% slower in the model) timed beside
    // it; the WMMA tiles (a third slower or more) are not worth a trial. Before sm_90 the 144 KB tile
    // drops out (min_cc_of).
    const auto square = shortlist(kHgemmCandidates, 4096, 4096, 4096, true, 90, 132, 227 * 1024);
    auto holds = [](const std::vector<const BestCandidate<HgemmFn>*>& list, const std::string& name) {
        return std::any_of(list.begin(), list.end(), [&](const BestCandidate<HgemmFn>* c) { return c->name == name; });
    };
    CHECK(std::string(square.front()->name) == "mma_ldmatrix");
    CHECK(holds(square, "mma_128x256_k64"));
    CHECK_FALSE(holds(square, "wmma_128x128_4warps"));
    CHECK_FALSE(holds(shortlist(kHgemmCandidates, 4096, 4096, 4096, true, 80, 108, 163 * 1024), "mma_128x256_k64"));
    // Element-wise path: the two 128x256 tiles of step 9 have no rate there and never appear.
    for (wb::Shape s : {wb::Shape{4096, 4096, 4095}, wb::Shape{8191, 8191, 8191}}) {
        const auto list = shortlist(kHgemmCandidates, s.m, s.n, s.k, false, 90, 132, 227 * 1024);
        CHECK_FALSE(holds(list, "mma_ldmatrix"));
        CHECK_FALSE(holds(list, "mma_128x256_k64"));
    }
    // TF32 on a large shape: steps 11 and 10 (the same tile, rates a few percent apart), timed on the
    // first call; step 8 is modelled more than the margin slower. On the element-wise path steps 11
    // and 10 have no rate and step 8 leads.
    auto tf32_names = [](const std::vector<const BestCandidate<SgemmFn>*>& list) {
        std::vector<std::string> out;
        for (const BestCandidate<SgemmFn>* c : list) out.push_back(c->name);
        return out;
    };
    using Names = std::vector<std::string>;
    CHECK(tf32_names(shortlist(kTf32Candidates, 4096, 4096, 4096, true, 90, 132, 227 * 1024)) ==
          Names{"tf32_swizzled", "tf32_pipelined"});
    const Names tf32_elementwise = tf32_names(shortlist(kTf32Candidates, 4096, 4096, 4095, false, 90, 132, 227 * 1024));
    CHECK(tf32_elementwise.front() == "tf32_mma_sync");
    CHECK(std::count(tf32_elementwise.begin(), tf32_elementwise.end(), "tf32_swizzled") == 0);
    CHECK(std::count(tf32_elementwise.begin(), tf32_elementwise.end(), "tf32_pipelined") == 0);
    // Step 11 needs 96 KB per block: sm_86 and sm_89 grant 99 KB and keep it; a block granted less
    // (80 KB here) drops it, and step 10 (70 KB) leads.
    CHECK(tf32_names(shortlist(kTf32Candidates, 4096, 4096, 4096, true, 86, 84, 99 * 1024)) ==
          Names{"tf32_swizzled", "tf32_pipelined"});
    CHECK(tf32_names(shortlist(kTf32Candidates, 4096, 4096, 4096, true, 86, 84, 80 * 1024)) == Names{"tf32_pipelined"});
    // Every entry lies within the margin of the first, in the model's order.
    for (bool vec16 : {true, false})
        for (wb::Shape s : {wb::Shape{300, 5000, 700}, wb::Shape{2000, 2000, 2000}, wb::Shape{8000, 300, 4000}}) {
            const auto list = shortlist(kHgemmCandidates, s.m, s.n, s.k, vec16, 90, 132, 227 * 1024);
            auto modelled = [&](const BestCandidate<HgemmFn>* c) {
                return wb::busiest_sm_time(s.m, s.n, s.k, c->bm, c->bn, 1, 132,
                                           vec16 ? c->hopper.vec16 : c->hopper.elementwise);
            };
            for (size_t i = 1; i < list.size(); ++i) {
                INFO(wb::to_string(s) << (vec16 ? " vec16" : " elementwise") << ", entry " << i << ": " << list[i]->name);
                REQUIRE(modelled(list[i]) >= modelled(list[i - 1]));  // the first entry out of order stops it
                REQUIRE(modelled(list[i]) <= modelled(list[0]) * kShortlistMargin);
            }
        }
}

TEST_CASE("06: the smallest GPU of each configuration", "[06]") {
    CHECK(min_cc_of<Wmma128x128_3stage>() == 70);  // 55.5 KB: fits sm_75
    CHECK(min_cc_of<Wmma128x256_3stage>() == 80);  // 79.5 KB: does not
    CHECK(min_cc_of<Tf32Wmma128x128_3stage>() == 80);  // TF32
    CHECK(min_cc_of<Mma128x128_k32_2stage>() == 80);   // step 8: 70 KB, every TF32 GPU
    CHECK(min_cc_of<Mma128x256_k32_4stage>() == 80);   // step 9: 96 KB, every sm_80+ GPU grants it
    CHECK(min_cc_of<Mma128x128_k32_3stage_swizzled>() == 80);  // step 11: 96 KB, the same
    CHECK(Mma128x128_k32_3stage_swizzled::SMEM_BYTES == 96 * 1024);
}

TEST_CASE("06: FP16 overflows above 65504 and underflows below 2^-24; TF32 does not", "[06]") {
    // The half-precision pitfall: FP16 stores 10 mantissa bits, like TF32, but only 5 exponent bits.
    // Its largest finite value is 65504; anything from 65520 up rounds to Inf (65520 lies halfway
    // to 65536, and the tie goes to the even neighbour, 65536, which does not exist: Inf).
    CHECK(wb::round_to_fp16(65504.0f) == 65504.0f);
    CHECK(wb::round_to_fp16(65519.0f) == 65504.0f);
    CHECK(std::isinf(wb::round_to_fp16(65520.0f)));
    CHECK(std::isinf(wb::round_to_fp16(70000.0f)));
    CHECK(wb::round_to_fp16(-70000.0f) == -std::numeric_limits<float>::infinity());
    // The CUDA conversion agrees (host code of cuda_fp16.h, the same rounding the GPU does).
    CHECK(std::isinf(__half2float(__float2half(70000.0f))));
    CHECK(__half2float(__float2half(65504.0f)) == 65504.0f);
    // At the other end: 2^-24 is the smallest subnormal half; a quarter of it is lost.
    CHECK(wb::round_to_fp16(std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));
    CHECK(wb::round_to_fp16(std::ldexp(1.0f, -26)) == 0.0f);
    // TF32 has FP32's 8 exponent bits: the same values stay finite (and nonzero), only coarser.
    CHECK(std::isfinite(wb::round_to_tf32(70000.0f)));
    CHECK(wb::round_to_tf32(std::ldexp(1.0f, -26)) == std::ldexp(1.0f, -26));
    // Both keep 10 mantissa bits: 1 + 2^-11 is a tie that rounds away (TF32) or to even (FP16).
    CHECK(wb::round_to_fp16(1.0f + std::ldexp(1.0f, -11)) == 1.0f);
    CHECK(wb::round_to_tf32(1.0f + std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -10));
}

TEST_CASE("06: the launchers take the fast paths only where the WMMA rules allow", "[06]") {
    alignas(256) static float f[1024];
    alignas(256) static __half h[1024];
    // Fragments: 32-byte pointers and a leading dimension that is a multiple of 16 bytes.
    CHECK(fragment_access_ok(h, 1024));
    CHECK(fragment_access_ok(h, 8));               // 8 halves = 16 bytes
    CHECK_FALSE(fragment_access_ok(h, 1020));      // 2040 bytes per row: not a multiple of 16
    CHECK_FALSE(fragment_access_ok(h + 8, 1024));  // 16-byte aligned is not enough
    CHECK(fragment_access_ok(h + 16, 1024));
    CHECK(fragment_access_ok(f, 4));  // 4 floats = 16 bytes
    CHECK_FALSE(fragment_access_ok(f, 6));
    CHECK_FALSE(fragment_access_ok(f + 4, 64));
    // 16-byte chunks: 16-byte pointers and rows.
    CHECK(chunk_access_ok(h + 8, 1024));
    CHECK_FALSE(chunk_access_ok(h + 1, 1024));
    CHECK_FALSE(chunk_access_ok(h, 1001));
    CHECK(chunk_access_ok(f + 4, 1024));
    CHECK_FALSE(chunk_access_ok(f + 2, 1024));
    CHECK_FALSE(chunk_access_ok(f, 1022));
    // What a launcher derives for C (FP32 output): direct fragment stores and float4 stores.
    const WmmaArgs<__half> g1 = make_args(64, 1024, 64, 1.0f, h, h, 0.0f, f, 32, 1);
    CHECK(g1.c_direct);
    CHECK(g1.c_vec);
    CHECK(g1.k_tiles == 2);
    const WmmaArgs<__half> g2 = make_args(64, 1024, 64, 1.0f, h, h, 0.0f, f + 4, 32, 1);
    CHECK_FALSE(g2.c_direct);  // 16-byte aligned only
    CHECK(g2.c_vec);
    const WmmaArgs<__half> g3 = make_args(64, 1023, 65, 1.0f, h, h, 0.0f, f, 32, 1);
    CHECK_FALSE(g3.a_direct);  // K = 65
    CHECK_FALSE(g3.b_direct);  // N = 1023
    CHECK_FALSE(g3.c_vec);
    CHECK(g3.k_tiles == 3);  // ceil_div(65, 32): the partial step counts
    CHECK_THROWS(make_args(0, 16, 16, 1.0f, h, h, 0.0f, f, 32, 1));
}

TEST_CASE("06: every tile configuration's copies and warps cover its tiles exactly once", "[06]") {
    check_tiling<Wmma128x128_unpadded>("Wmma128x128_unpadded");
    check_tiling<Wmma128x128_padded>("Wmma128x128_padded");
    check_tiling<Wmma128x128_3stage>("Wmma128x128_3stage");
    check_tiling<Wmma128x256_3stage>("Wmma128x256_3stage");
    check_tiling<Wmma128x128_4warps_3stage>("Wmma128x128_4warps_3stage");
    check_tiling<Wmma64x64_3stage>("Wmma64x64_3stage");
    check_tiling<Tf32Wmma128x128_3stage>("Tf32Wmma128x128_3stage");
    check_tiling<Mma128x128_k32_2stage>("Mma128x128_k32_2stage");
    check_tiling<Mma128x128_k32_3stage_swizzled>("Mma128x128_k32_3stage_swizzled");
    check_tiling<Mma64x64_k32_3stage>("Mma64x64_k32_3stage");
    check_tiling<Mma128x256_k32_4stage>("Mma128x256_k32_4stage");
}

// The block order itself (every tile once, row-major for bands of 1) is tested with the shared
// machinery (common/tests/test_gemm_tiles.cu); here only what this chapter chooses: bands of kBand.
TEST_CASE("06: blocks walk bands of kBand tile rows", "[06]") {
    CHECK(wb::tile_of_block(1, 32, 32, kBand).m == 1);
    CHECK(wb::tile_of_block(1, 32, 32, kBand).n == 0);
    CHECK(wb::tile_of_block(kBand, 32, 32, kBand).n == 1);
}

TEST_CASE("06: the padding (SKEW) makes the fragment loads conflict-free", "[06]") {
    // FP16, ldmatrix: 8 rows of 16 bytes. Unpadded rows of A are 64 bytes (BK = 32 halves): rows
    // 0, 2, 4, 6 share banks. Unpadded rows of B are 256 bytes: all 8 rows share 4 banks.
    CHECK(ldmatrix_wavefronts(Wmma128x128_unpadded::A_LD * 2) == 4);
    CHECK(ldmatrix_wavefronts(Wmma128x128_unpadded::B_LD * 2) == 8);
    CHECK(ldmatrix_wavefronts(Wmma128x128_padded::A_LD * 2) == 1);  // 80 bytes: 5 units of 16, odd
    CHECK(ldmatrix_wavefronts(Wmma128x128_padded::B_LD * 2) == 1);  // 272 bytes: 17 units
    CHECK(ldmatrix_wavefronts(Wmma128x256_3stage::B_LD * 2) == 1);  // 528 bytes: 33 units
    CHECK(ldmatrix_wavefronts(Wmma64x64_3stage::B_LD * 2) == 1);    // 144 bytes: 9 units
    // TF32: 4 bytes per lane, 8 rows x 4 columns of A, 4 rows x 8 columns of B.
    CHECK(tf32_a_wavefronts(16) == 4);   // unpadded BK = 16
    CHECK(tf32_b_wavefronts(128) == 4);  // unpadded BN = 128
    CHECK(tf32_a_wavefronts(Tf32Wmma128x128_3stage::A_LD) == 1);  // 20 floats
    CHECK(tf32_b_wavefronts(Tf32Wmma128x128_3stage::B_LD) == 1);  // 136 floats
    CHECK(tf32_b_wavefronts(128 + 4) == 2);  // why B needs 8 floats, not 4
    CHECK(tf32_a_wavefronts(16 + 8) == 2);   // and why A needs 4, not 8
    // Step 8: ldmatrix on 16-byte rows of A (4 floats), 4-byte loads of B in the same lane pattern.
    CHECK(ldmatrix_wavefronts(Mma128x128_k32_2stage::A_LD * 4) == 1);  // 144 bytes: 9 units of 16
    CHECK(ldmatrix_wavefronts(Mma64x64_k32_3stage::A_LD * 4) == 1);
    CHECK(ldmatrix_wavefronts(32 * 4) == 8);  // unpadded BK = 32: one bank group
    CHECK(tf32_b_wavefronts(Mma128x128_k32_2stage::B_LD) == 1);
    CHECK(tf32_b_wavefronts(Mma64x64_k32_3stage::B_LD) == 1);
    // The epilogue's staging rows: WN + 8 floats, not WN + 4.
    CHECK(accumulator_store_wavefronts(Wmma128x256_3stage::STAGE_LD) == 1);
    CHECK(accumulator_store_wavefronts(Wmma128x128_3stage::STAGE_LD) == 1);
    CHECK(accumulator_store_wavefronts(64 + 4) == 2);
    CHECK(accumulator_store_wavefronts(kStageLd) == 1);
}

TEST_CASE("06: step 9's swizzle is a bijection and makes its copies and ldmatrix reads conflict-free", "[06]") {
    // Unswizzled, the tiles conflict: rows of A are 64 bytes, rows of B 512.
    CHECK(ldmatrix_wavefronts(Mma128x256_k32_4stage::BK * 2) == 4);
    CHECK(ldmatrix_wavefronts(Mma128x256_k32_4stage::BN * 2) == 8);
    CHECK(swizzle_misplaced<2>(64) == 0);
    CHECK(swizzle_misplaced<4>(128) == 0);
    CHECK(swizzle_misplaced<8>(32) == 0);
    CHECK(swizzle_misplaced<32>(32) == 0);
    const SwizzleReport r = check_swizzled_tiles<Mma128x256_k32_4stage>();
    CHECK(r.worst_load_wavefronts == 1);
    CHECK(r.worst_store_wavefronts == 1);
    CHECK(r.wrong_addresses == 0);
}

TEST_CASE("06: step 11's swizzle is a bijection and makes its copies and TF32 fragment loads conflict-free", "[06]") {
    using S = SwizzledTf32Tiles<PlantedS>;
    // Unpadded and unswizzled: ldmatrix on rows of 128 bytes, the loads of B on rows of 512.
    CHECK(ldmatrix_wavefronts(PlantedS::BK * 4) == 8);
    CHECK(tf32_b_wavefronts(PlantedS::BN) == 4);
    // Every chunk stays in its 128-byte line, and no two land on one place.
    CHECK(chunks_misplaced(PlantedS::BM * S::A_ROW_CHUNKS, [](int c) { return S::a_offset(4 * c) / 4; }) == 0);
    CHECK(chunks_misplaced(PlantedS::BK * S::B_ROW_CHUNKS, [](int c) { return S::b_offset(4 * c) / 4; }) == 0);
    // B: step 9's key (k-row mod 8) leaves k-rows 0 and 1 on one pair of chunks; 2 * (k-row mod 4) does not.
    CHECK(tf32_b_swizzled_wavefronts([](int c) { return swizzle_chunk<32>(c); }) == 2);
    CHECK(tf32_b_swizzled_wavefronts([](int c) { return swizzle_chunk_pairs<32>(c); }) == 1);
    const SwizzleReport r = check_swizzled_tf32_tiles<PlantedS, S>();
    CHECK(r.worst_load_wavefronts == 1);
    CHECK(r.worst_store_wavefronts == 1);
    CHECK(r.wrong_addresses == 0);
    // The planted layout (copies keyed like step 9): the loads no longer find their elements.
    CHECK(check_swizzled_tf32_tiles<PlantedS, CopiesKeyedLikeStep9<PlantedS>>().wrong_addresses > 0);
}

TEST_CASE("06: bad input exits 2, no GPU exits 3, --help exits 0", "[06]") {
    wb::test::check_program_exit_statuses("06_tensor_core_wmma");
}
