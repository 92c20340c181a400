// test_06_tensor_core_wmma - every FP16 and TF32 variant and tile configuration against the
// double-precision reference on the spec's shapes and on shapes aimed at the WMMA rules; misaligned
// pointers and odd leading dimensions; planted bugs that the check must catch; the FP16 range
// pitfalls; and CPU checks of the tables, the tile layouts, the padding arithmetic and the default
// choice.
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "testing.cuh"

namespace {

std::vector<wb::HgemmVariant> every_fp16() {
    std::vector<wb::HgemmVariant> all = wb::table(kHgemmVariants);
    for (const wb::HgemmVariant& v : kHgemmConfigs) all.push_back(v);
    return all;
}

std::vector<wb::SgemmVariant> every_tf32() {
    std::vector<wb::SgemmVariant> all = wb::table(kTf32Variants);
    for (const wb::SgemmVariant& v : kTf32Configs) all.push_back(v);
    return all;
}

int device_cc() {
    return wb::query_device(0).cc_number();
}

// Shapes aimed at this chapter's paths; the spec's list (wb::test::standard_cases) has the rest.
std::vector<wb::test::GemmCase> wmma_cases() {
    return {
        {{16, 16, 16}, 1.0f, 0.0f, "exactly one fragment"},
        {{48, 40, 24}, 1.0f, 0.0f, "K a multiple of 8 but not of 16: half an FP16 k-step"},
        {{100, 72, 40}, 1.0f, 0.0f, "K % 32 == 8: the last BK step is a quarter full"},
        {{64, 64, 4}, 1.0f, 0.0f, "K = 4: one TF32 chunk, half an FP16 chunk"},
        {{129, 257, 520}, 1.0f, 0.0f, "N = 257: rows of B and C not 16-byte aligned"},
        {{130, 264, 1001}, 0.5f, 1.5f, "K = 1001: rows of A not aligned, beta != 0"},
        {{200, 136, 96}, 1.0f, 0.0f, "N % 16 == 8: fragments at the right edge are half outside"},
        {{257, 520, 64}, -1.0f, 0.25f, "more than one 128x256 tile each way, beta != 0"},
        {{520, 24, 72}, 1.0f, 0.0f, "C narrower than any block tile"},
    };
}

std::vector<__half> to_half(const std::vector<float>& v) {
    std::vector<__half> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        __half_raw raw;
        raw.x = wb::fp16_bits(v[i]);
        h[i] = __half(raw);
    }
    return h;
}

// ---- misaligned pointers and odd leading dimensions ----------------------------------------------
// A, B and C start a few elements into larger buffers, so that the fragment rules (32-byte
// pointers) or the 16-byte copies fail although the shape alone would allow them. The launchers
// must notice and take the element-wise paths. Every entry is checked against the CPU reference,
// the elements around C must stay untouched, and C is NaN before a beta == 0 run.
struct OffsetCase {
    wb::Shape s;
    float alpha, beta;
    int a_off, b_off, c_off;  // in elements
    const char* why;
};

const OffsetCase kOffsetCases[] = {
    {{64, 64, 64}, 1.0f, 0.0f, 1, 1, 1, "everything misaligned on a shape that would take every fast path"},
    {{128, 256, 64}, 1.0f, 0.5f, 2, 0, 0, "only A misaligned, beta != 0"},
    {{128, 128, 32}, -1.0f, 0.0f, 0, 3, 0, "only B misaligned"},
    {{130, 136, 40}, 1.0f, 2.0f, 0, 0, 1, "only C misaligned, beta != 0"},
    {{67, 45, 33}, 1.0f, 0.0f, 1, 2, 3, "odd shape, everything shifted"},
    // 16-byte but not 32-byte aligned: 16-byte copies are fine, WMMA on this memory is not.
    {{96, 96, 64}, 1.0f, 0.0f, -1, -1, -1, "16-byte aligned, not 32: the direct fragment paths are off"},
};

struct OffsetRun {
    wb::CheckResult check;
    bool guards_intact = true;
    std::string error;
};

template <class T>
class OffsetProblem {
public:
    OffsetProblem(const OffsetCase& c, wb::Precision p) : c_(c), p_(p) {
        // -1: half a 32-byte unit, i.e. 16 bytes: 8 halves or 4 floats.
        const int half_unit = 16 / int(sizeof(T));
        a_off_ = c.a_off < 0 ? half_unit : c.a_off;
        b_off_ = c.b_off < 0 ? half_unit : c.b_off;
        c_off_ = c.c_off < 0 ? 16 / int(sizeof(float)) : c.c_off;
        const wb::Shape s = c.s;
        A_.resize(size_t(s.m) * s.k);
        B_.resize(size_t(s.k) * s.n);
        C0_.resize(size_t(s.m) * s.n);
        wb::fill_random(A_.data(), A_.size(), 11, 1);
        wb::fill_random(B_.data(), B_.size(), 11, 2);
        wb::fill_random(C0_.data(), C0_.size(), 11, 3);
        std::vector<float> a = A_, b = B_;
        wb::round_to(p, a);
        wb::round_to(p, b);
        wb::GemmView g;
        g.s = s;
        g.alpha = c.alpha;
        g.beta = c.beta;
        g.A = a.data();
        g.B = b.data();
        g.C0 = c.beta != 0.0f ? C0_.data() : nullptr;
        wb::reference_full(g, value_, scale_);
    }

    template <class Fn>
    OffsetRun run(Fn launch) const {
        constexpr int kGuard = 16;
        constexpr float kSentinel = 7.0f;
        const wb::Shape s = c_.s;
        const size_t nc = C0_.size();
        std::vector<T> hA(A_.size() + a_off_ + kGuard), hB(B_.size() + b_off_ + kGuard);
        const std::vector<T> a = convert(A_), b = convert(B_);
        std::copy(a.begin(), a.end(), hA.begin() + a_off_);
        std::copy(b.begin(), b.end(), hB.begin() + b_off_);
        std::vector<float> hC(nc + c_off_ + kGuard, kSentinel);
        for (size_t i = 0; i < nc; ++i)
            hC[c_off_ + i] = c_.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : C0_[i];
        wb::DeviceBuffer<T> dA(hA.size()), dB(hB.size());
        wb::DeviceBuffer<float> dC(hC.size());
        dA.upload(hA);
        dB.upload(hB);
        dC.upload(hC);

        OffsetRun r;
        try {
            launch(s.m, s.n, s.k, c_.alpha, dA.get() + a_off_, dB.get() + b_off_, c_.beta, dC.get() + c_off_,
                   0);
            WB_CUDA_CHECK(cudaDeviceSynchronize());
        } catch (const std::exception& e) {
            r.error = e.what();
            r.check.pass = false;
            return r;
        }
        const std::vector<float> out = dC.download();
        for (int i = 0; i < c_off_; ++i) r.guards_intact = r.guards_intact && out[i] == kSentinel;
        for (int i = 0; i < kGuard; ++i)
            r.guards_intact = r.guards_intact && out[c_off_ + nc + i] == kSentinel;
        r.check = wb::check_full(out.data() + c_off_, s.m, s.n, value_, scale_, wb::tolerance_for(p_, s.k));
        return r;
    }

    std::string describe() const {
        return wb::to_string(c_.s) + " with A+" + std::to_string(a_off_) + ", B+" + std::to_string(b_off_) +
               ", C+" + std::to_string(c_off_) + " elements (" + c_.why + ")";
    }

private:
    static std::vector<T> convert(const std::vector<float>& v) {
        if constexpr (std::is_same<T, __half>::value)
            return to_half(v);
        else
            return v;  // TF32 variants take FP32 inputs and round them themselves
    }

    OffsetCase c_;
    wb::Precision p_;
    int a_off_ = 0, b_off_ = 0, c_off_ = 0;
    std::vector<float> A_, B_, C0_;
    std::vector<double> value_, scale_;
};

template <class T, class Variant>
void check_offsets(const std::vector<Variant>& variants, wb::Precision p) {
    const int cc = device_cc();
    for (const OffsetCase& c : kOffsetCases) {
        const OffsetProblem<T> prob(c, p);
        for (const Variant& v : variants) {
            if (cc < v.min_cc) continue;
            const OffsetRun r = prob.run(v.run);
            INFO(v.name << " on " << prob.describe() << ": "
                        << (r.error.empty() ? r.check.describe() : r.error));
            CHECK(r.check.pass);
            CHECK(r.guards_intact);
        }
    }
}

// ---- planted bugs ----------------------------------------------------------------------------
// The real kernel, handed what a classic mistake would hand it.
using PlantedH = H128S3;
using PlantedT = T128S3;

// Only whole BK steps are walked: the last K % BK columns of A (rows of B) are dropped.
template <class Cfg>
void launch_drops_k_tail(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                         const typename Cfg::Element* B, float beta, float* C, cudaStream_t stream) {
    WmmaArgs<typename Cfg::Element> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, 1);
    g.k_tiles = K / Cfg::BK;
    launch_wmma_kernel<Cfg, Mainloop::cp_async_ring, Epilogue::staged_in_smem, false>(
        g, tiled_grid<Cfg>(M, N), stream);
}

// The grid rounded down: the last partial row and column of tiles are never written.
template <class Cfg>
void launch_grid_rounded_down(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                              const typename Cfg::Element* B, float beta, float* C, cudaStream_t stream) {
    const WmmaArgs<typename Cfg::Element> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, 1);
    const dim3 grid(N / Cfg::BN, M / Cfg::BM);
    if (grid.x == 0 || grid.y == 0) return;  // a grid of zero blocks is a launch error
    launch_wmma_kernel<Cfg, Mainloop::cp_async_ring, Epilogue::staged_in_smem, false>(g, grid, stream);
}

// An epilogue that always reads C. Planted by handing the kernel the smallest positive beta, which
// takes the reading branch while changing no finite result: the NaN the harness puts into C
// before a beta == 0 run comes through (0 * NaN is NaN).
template <class Cfg>
void launch_reads_c_when_beta_is_zero(int M, int N, int K, float alpha, const typename Cfg::Element* A,
                                      const typename Cfg::Element* B, float beta, float* C,
                                      cudaStream_t stream) {
    const float b = beta == 0.0f ? std::numeric_limits<float>::denorm_min() : beta;
    config_launcher<Cfg>()(M, N, K, alpha, A, B, b, C, stream);
}

// Step 7 (mma.sync) has its own kernel: the same classic mistake handed to it.
using PlantedM = M128W64S3;
template <class Cfg>
void mma_drops_k_tail(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                      cudaStream_t stream) {
    WmmaArgs<float> g = make_args(M, N, K, alpha, A, B, beta, C, Cfg::BK, 1);
    g.k_tiles = K / Cfg::BK;
    launch_tiled_kernel<Cfg, mma_tf32_gemm<Cfg, false>>(g, tiled_grid<Cfg>(M, N), stream);
}

// ---- the mma.sync fragment layout, one tile ------------------------------------------------------
// One m16n8k8 on a 16x8 A and an 8x8 B (row-major in global memory), each lane gathering its
// registers by the layout of kernels.cuh, section 10. BUG = 1 swaps b0 and b1 (rows t and t + 4
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

// ---- layouts and bank arithmetic (CPU) ----------------------------------------------------------

// Every element of a ROWS x COLS tile is moved by exactly one (thread, chunk, element).
template <class Grid, int ROWS, int COLS, int CHUNK, int THREADS>
void check_chunk_grid(const char* what) {
    std::vector<int> hits(ROWS * COLS, 0);
    for (int tid = 0; tid < THREADS; ++tid)
        for (int i = 0; i < Grid::PER_THREAD; ++i)
            for (int e = 0; e < CHUNK; ++e) {
                const int r = Grid::row(tid, i), c = Grid::col(tid) + e;
                REQUIRE(r < ROWS);
                REQUIRE(c < COLS);
                ++hits[r * COLS + c];
            }
    int wrong = 0;
    for (int h : hits) wrong += h != 1;
    INFO(what << ": tile elements not moved exactly once");
    CHECK(wrong == 0);
}

template <class Cfg>
void check_tiling(const char* name) {
    INFO(name);
    check_chunk_grid<typename Cfg::AChunks, Cfg::BM, Cfg::BK, Cfg::Inputs::CHUNK, Cfg::THREADS>("A tile");
    check_chunk_grid<typename Cfg::BChunks, Cfg::BK, Cfg::BN, Cfg::Inputs::CHUNK, Cfg::THREADS>("B tile");
    CHECK(Cfg::WARPS_M * Cfg::FM * 16 == Cfg::BM);  // the warps' fragments tile the block exactly
    CHECK(Cfg::WARPS_N * Cfg::FN * 16 == Cfg::BN);
    CHECK(Cfg::SMEM_BYTES >= Cfg::STAGE_BYTES);  // the epilogue's staging fits
    CHECK(Cfg::SMEM_BYTES <= kSmemLimitSm90);
    CHECK((Cfg::SMEM_BYTES <= kSmemLimitSm80 || min_cc_of<Cfg>() == 90));  // above 99 KB: Hopper only
}

// Passes ("wavefronts") one shared-memory access of a warp needs: the largest number of distinct
// 4-byte words that fall into the same one of the 32 banks. `bytes` lists each lane's (or each
// row's) first byte and `width` the bytes it reads from there.
int wavefronts(const std::vector<int>& bytes, int width) {
    std::vector<std::set<int>> bank(32);
    for (int b : bytes)
        for (int w = 0; w < width; w += 4) bank[(b + w) / 4 % 32].insert((b + w) / 4);
    size_t worst = 0;
    for (const auto& words : bank) worst = std::max(worst, words.size());
    return int(worst);
}

// ldmatrix (what load_matrix_sync of an FP16 fragment compiles to, LDSM in the machine code) reads
// an 8x8 matrix as 8 rows of 16 bytes in one pass when the rows are conflict-free.
int ldmatrix_wavefronts(int row_bytes) {
    std::vector<int> rows;
    for (int r = 0; r < 8; ++r) rows.push_back(r * row_bytes);
    return wavefronts(rows, 16);
}

// A TF32 fragment load reads 4 bytes per lane. In the code CUDA 13.0 generates for sm_80+, lane
// (g = lane / 4, t = lane % 4) reads A[g][t] and B[t][g] first (then the same pattern further on).
int tf32_a_wavefronts(int a_ld) {
    std::vector<int> lanes;
    for (int lane = 0; lane < 32; ++lane) lanes.push_back(4 * ((lane / 4) * a_ld + lane % 4));
    return wavefronts(lanes, 4);
}
int tf32_b_wavefronts(int b_ld) {
    std::vector<int> lanes;
    for (int lane = 0; lane < 32; ++lane) lanes.push_back(4 * ((lane % 4) * b_ld + lane / 4));
    return wavefronts(lanes, 4);
}

// The accumulator store into the epilogue's staging area compiles to STS.64: lane (g, t) writes
// columns 2t, 2t + 1 of row g, and a warp's 256 bytes go in two passes of 16 lanes (rows 0-3, 4-7).
int accumulator_store_wavefronts(int stage_ld) {
    std::vector<int> half_warp;
    for (int lane = 0; lane < 16; ++lane) half_warp.push_back(4 * ((lane / 4) * stage_ld + 2 * (lane % 4)));
    return wavefronts(half_warp, 8);
}

}  // namespace

// ---- GPU: correctness ------------------------------------------------------------------------------

TEST_CASE("06: every FP16 variant and configuration is right on the spec's shapes", "[gpu][06]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(every_fp16());
}

TEST_CASE("06: every TF32 variant and configuration is right on the spec's shapes", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_NOW("TF32 tensor cores need sm_80");
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
        CHECK(prob.verify(config_launcher<PlantedH>()).pass);
        CHECK_FALSE(prob.verify(launch_drops_k_tail<PlantedH>).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down<PlantedH>).pass);
        CHECK_FALSE(prob.verify(launch_reads_c_when_beta_is_zero<PlantedH>).pass);
        if (!tf32) continue;
        CHECK(prob.verify(config_launcher<PlantedT>(), wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(launch_drops_k_tail<PlantedT>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down<PlantedT>, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(launch_reads_c_when_beta_is_zero<PlantedT>, wb::Precision::tf32).pass);
    }
}

TEST_CASE("06: step 7 follows the documented mma.sync layout, and a misread layout fails", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_NOW("TF32 mma.sync needs sm_80");
    CHECK(one_mma_tile_errors<0>() == 0);
    CHECK(one_mma_tile_errors<1>() > 0);
    CHECK(one_mma_tile_errors<2>() > 0);
    // The whole kernel, handed a K loop that drops the tail, must fail the check too.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{64, 48, 1}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(mma_launcher<PlantedM>(), wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(mma_drops_k_tail<PlantedM>, wb::Precision::tf32).pass);
    }
}

TEST_CASE("06: the GPU rounds to TF32 exactly like the reference", "[gpu][06]") {
    WB_REQUIRE_GPU();
    if (device_cc() < 80) WB_SKIP_NOW("TF32 rounding instructions need sm_80");
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
    dA16.upload(to_half(a));
    dB16.upload(to_half(b));
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
    dA.upload(to_half(a));
    dB.upload(to_half(b));
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

TEST_CASE("06: FP16 and TF32 inputs cost about 2^-11 of accuracy, FP32 accumulation almost none",
          "[gpu][06]") {
    WB_REQUIRE_GPU();
    // The same measurement as `06_tensor_core_wmma --precision`, small enough for a test: errors
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
    dA16.upload(to_half(A));
    dB16.upload(to_half(B));

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

// ---- CPU: tables, rules, layouts ------------------------------------------------------------------

TEST_CASE("06: the tables are well formed", "[06]") {
    std::set<std::string> names;
    auto common_checks = [&](const char* name, const wb::KernelInfo& info, int min_cc) {
        INFO(name);
        CHECK(names.insert(name).second);  // unique across all four tables
        // The resource table gets a row per kernel; the *_best variants run one of several kernels
        // (a configuration chosen per shape) and have none of their own.
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
    for (const wb::HgemmVariant& v : every_fp16()) {
        common_checks(v.name, v.info, v.min_cc);
        CHECK(v.run != nullptr);
        CHECK(std::string(v.what).size() > 0);
    }
    for (const wb::SgemmVariant& v : every_tf32()) {
        common_checks(v.name, v.info, v.min_cc);
        CHECK(v.run != nullptr);
        CHECK(v.precision == wb::Precision::tf32);  // verified against TF32-rounded inputs
        CHECK(v.min_cc >= 80);                      // TF32 tensor cores: Ampere and later
    }
    CHECK(std::string(kHgemmVariants[std::size(kHgemmVariants) - 1].name) == "wmma_best");
    CHECK(std::string(kTf32Variants[std::size(kTf32Variants) - 1].name) == "tf32_best");
    // Every default names a configuration whose requirements its line meets; the last line of each
    // table catches every GPU.
    for (const DefaultChoice& d : kHgemmDefaults)
        for (const char* name : {d.large, d.medium, d.small}) {
            INFO(name);
            REQUIRE_NOTHROW(find_config(kHgemmConfigs, name));
            CHECK(find_config(kHgemmConfigs, name).min_cc <= std::max(d.min_cc, 75));
        }
    for (const DefaultChoice& d : kTf32Defaults)
        for (const char* name : {d.large, d.medium, d.small}) {
            INFO(name);
            REQUIRE_NOTHROW(find_config(kTf32Configs, name));
            CHECK(find_config(kTf32Configs, name).min_cc <= std::max(d.min_cc, 80));
        }
    CHECK(kHgemmDefaults[std::size(kHgemmDefaults) - 1].min_cc == 0);
    CHECK(kTf32Defaults[std::size(kTf32Defaults) - 1].min_cc == 0);
    CHECK_THROWS(find_config(kHgemmConfigs, "no_such_configuration"));
}

TEST_CASE("06: the default configuration follows the GPU and the shape", "[06]") {
    const DefaultChoice& hopper = default_choice(kHgemmDefaults, 90);
    CHECK(std::string(default_name(hopper, 132, 4096, 4096)) == hopper.large);   // 512 tiles of 128x256
    CHECK(std::string(default_name(hopper, 132, 2048, 2048)) == hopper.medium);  // 128 of 128x256 < 132 SMs
    CHECK(std::string(default_name(hopper, 132, 1024, 1024)) == hopper.small);   // 64 of 128x128 < 132 SMs
    // Turing (64 KB of shared memory per block) never gets a configuration above that.
    const DefaultChoice& turing = default_choice(kHgemmDefaults, 75);
    for (const char* name : {turing.large, turing.medium, turing.small}) {
        INFO(name);
        CHECK(find_config(kHgemmConfigs, name).info.dynamic_smem <= size_t(kSmemLimitSm75));
    }
    CHECK(min_cc_of<H128S3>() == 70);      // 55.5 KB: fits sm_75
    CHECK(min_cc_of<H128x256S3>() == 80);  // 79.5 KB: does not
    CHECK(min_cc_of<T64S3>() == 80);       // TF32
    CHECK(min_cc_of<T128W64K32S3>() == 90);  // 105 KB: Hopper (sm_90 grants 227 KB per block)
    CHECK(min_cc_of<M128W64K32S2>() == 80);  // step 7's default: 70 KB, every TF32 GPU
    // Every TF32 default of every line runs on every GPU of that line (99 KB from sm_80 on).
    for (const DefaultChoice& d : kTf32Defaults)
        for (const char* name : {d.large, d.medium, d.small}) {
            INFO(name);
            CHECK(find_config(kTf32Configs, name).min_cc <= std::max(d.min_cc, 80));
        }
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
    check_tiling<H128Plain>("H128Plain");
    check_tiling<H128Skewed>("H128Skewed");
    check_tiling<H64S3>("H64S3");
    check_tiling<H128S3>("H128S3");
    check_tiling<H128S4>("H128S4");
    check_tiling<H128W64S3>("H128W64S3");
    check_tiling<H128x256S3>("H128x256S3");
    check_tiling<H256x128S3>("H256x128S3");
    check_tiling<T64S3>("T64S3");
    check_tiling<T128S3>("T128S3");
    check_tiling<T128S4>("T128S4");
    check_tiling<T128W64S3>("T128W64S3");
    check_tiling<T128x256S3>("T128x256S3");
    check_tiling<T256x128S3>("T256x128S3");
    check_tiling<T128W64K32S3>("T128W64K32S3");
    check_tiling<T128W64K32S3Rs>("T128W64K32S3Rs");
    check_tiling<T128x256K32S3>("T128x256K32S3");
    check_tiling<M128W64S3>("M128W64S3");
    check_tiling<M128W64x32S3>("M128W64x32S3");
    check_tiling<M128W64K32S3>("M128W64K32S3");
    check_tiling<M128W64K32S4>("M128W64K32S4");
    check_tiling<M128x256K32S3>("M128x256K32S3");
    check_tiling<M128x256S3>("M128x256S3");
    check_tiling<M256x128K32S3>("M256x128K32S3");
    check_tiling<M128W64S3Rs>("M128W64S3Rs");
    check_tiling<M128x256K32S3Rs>("M128x256K32S3Rs");
    check_tiling<M128W64K32S3Rna>("M128W64K32S3Rna");
    check_tiling<M64S3>("M64S3");
    check_tiling<M128W64K32S2>("M128W64K32S2");
}

TEST_CASE("06: the banded block order visits every tile exactly once", "[06]") {
    for (int group : {1, 2, 8, 16})
        for (auto [tm, tn] : {std::pair<int, int>{1, 1}, {32, 32}, {8, 64}, {37, 5}, {5, 37}, {9, 8}}) {
            std::vector<int> hits(tm * tn, 0);
            for (int b = 0; b < tm * tn; ++b) {
                const TileIndex t = swizzled_tile(b, tm, tn, group);
                REQUIRE(t.row >= 0);
                REQUIRE(t.row < tm);
                REQUIRE(t.col >= 0);
                REQUIRE(t.col < tn);
                ++hits[t.row * tn + t.col];
            }
            int wrong = 0;
            for (int h : hits) wrong += h != 1;
            INFO("group " << group << ", " << tm << " x " << tn << " tiles");
            CHECK(wrong == 0);
        }
    // group 1 is plain row-major order; group 8 walks down 8 tile rows before moving right.
    CHECK(swizzled_tile(5, 4, 4, 1).row == 1);
    CHECK(swizzled_tile(5, 4, 4, 1).col == 1);
    CHECK(swizzled_tile(1, 32, 32, 8).row == 1);
    CHECK(swizzled_tile(1, 32, 32, 8).col == 0);
    CHECK(swizzled_tile(8, 32, 32, 8).col == 1);
}

TEST_CASE("06: the padding (SKEW) makes the fragment loads conflict-free", "[06]") {
    // FP16, ldmatrix: 8 rows of 16 bytes. Unpadded rows of A are 64 bytes (BK = 32 halves): rows
    // 0, 2, 4, 6 share banks. Unpadded rows of B are 256 bytes: all 8 rows share 4 banks.
    CHECK(ldmatrix_wavefronts(H128Plain::A_LD * 2) == 4);
    CHECK(ldmatrix_wavefronts(H128Plain::B_LD * 2) == 8);
    CHECK(ldmatrix_wavefronts(H128Skewed::A_LD * 2) == 1);  // 80 bytes: 5 units of 16, odd
    CHECK(ldmatrix_wavefronts(H128Skewed::B_LD * 2) == 1);  // 272 bytes: 17 units
    CHECK(ldmatrix_wavefronts(H128x256S3::B_LD * 2) == 1);  // 528 bytes: 33 units
    CHECK(ldmatrix_wavefronts(H64S3::B_LD * 2) == 1);       // 144 bytes: 9 units
    // TF32: 4 bytes per lane, 8 rows x 4 columns of A, 4 rows x 8 columns of B.
    CHECK(tf32_a_wavefronts(16) == 4);            // unpadded BK = 16
    CHECK(tf32_b_wavefronts(128) == 4);           // unpadded BN = 128
    CHECK(tf32_a_wavefronts(T128S3::A_LD) == 1);  // 20 floats
    CHECK(tf32_b_wavefronts(T128S3::B_LD) == 1);  // 136 floats
    CHECK(tf32_b_wavefronts(T128x256S3::B_LD) == 1);
    CHECK(tf32_a_wavefronts(T128W64K32S3::A_LD) == 1);  // BK = 32: 36 floats, 4 (mod 8) again
    CHECK(tf32_b_wavefronts(128 + 4) == 2);  // why B needs 8 floats, not 4
    CHECK(tf32_a_wavefronts(16 + 8) == 2);   // and why A needs 4, not 8
    // Step 7: ldmatrix on 16-byte rows of A (4 floats), 4-byte loads of B in the same lane pattern.
    CHECK(ldmatrix_wavefronts(M128W64K32S3::A_LD * 4) == 1);  // 144 bytes: 9 units of 16
    CHECK(ldmatrix_wavefronts(M128W64S3::A_LD * 4) == 1);     // 80 bytes: 5 units
    CHECK(ldmatrix_wavefronts(32 * 4) == 8);                  // unpadded BK = 32: one bank group
    CHECK(tf32_b_wavefronts(M128W64K32S3::B_LD) == 1);
    CHECK(tf32_b_wavefronts(M128x256K32S3::B_LD) == 1);
    // The epilogue's staging rows: WN + 8 floats, not WN + 4.
    CHECK(accumulator_store_wavefronts(H128x256S3::STAGE_LD) == 1);
    CHECK(accumulator_store_wavefronts(H128S3::STAGE_LD) == 1);
    CHECK(accumulator_store_wavefronts(64 + 4) == 2);
    CHECK(accumulator_store_wavefronts(kStageLd) == 1);
}

TEST_CASE("06: bad input exits 2, no GPU exits 3, --help exits 0", "[06]") {
    wb::test::check_program_exit_statuses("06_tensor_core_wmma");
}
