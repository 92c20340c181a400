// test_09_hopper_wgmma - every step of the Hopper ladder, FP16, BF16, TF32 and FP8 E4M3, against
// the double-precision reference: the spec's shapes, shapes TMA cannot describe (the padded copy),
// misaligned pointers, rings that wrap many times, persistent blocks with many tiles each, clusters
// whose second tile lies past C, and planted bugs the check must catch. CPU checks: the descriptor
// bits, the padding rule, the shared-memory budgets, the exit statuses, E4M3 rounding, the FP8 error
// bound, the clusters' tile groups and row shares.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels.cuh"
#include "test_support_09.cuh"
#include "testing.cuh"

using namespace ch09;

namespace {

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
        {{1100, 900, 1000}, 1.0f, 0.0f, "pingpong: 72 tiles of 128 x 128, one per block: consumer 1 has none"},
        {{2000, 1900, 333}, 0.5f, 1.0f, "pingpong: 240 tiles, one or two per block, beta != 0"},
        {{4100, 4100, 136}, 1.0f, 0.0f, "pingpong: 33 x 33 tiles, 8 or 9 per block; 3 k-tiles a tile, 7 stages"},
        {{4100, 2100, 64}, 1.0f, 0.0f, "epilogue_overlap: one k-tile a tile, 2-3 tiles per block: lent slots after it"},
        {{3000, 3000, 128}, 0.5f, 1.0f, "epilogue_overlap: two k-tiles a tile (lead = K), beta != 0 read beside the stores"},
        {{8200, 4100, 200}, 1.0f, 0.0f, "epilogue_overlap: 4 k-tiles, 8-9 tiles per block: staging_free's phases wrap"},
        {{2100, 4099, 130}, 1.0f, 0.0f, "epilogue_overlap: N % 4 != 0, no TMA stores: the consumers release the lent slots"},
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

// Step 9 with K cut short by one k-step (8 values of k).
void rs_drops_last_k(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                     cudaStream_t st) {
    run_tf32_rs(M, N, K > 8 ? K - 8 : K, alpha, A, B, beta, C, st);
}

// Steps 7 and 10 with K cut short by one wgmma (32 values of k), and with the scales left out.
template <class Cfg>
void fp8_drops_last_k(int M, int N, int K, float alpha, wb::Fp8Operand A, wb::Fp8Operand Bt, float beta, float* C,
                      cudaStream_t st) {
    run_fp8<Cfg>(M, N, K > 32 ? K - 32 : K, alpha, A, Bt, beta, C, st);
}
__device__ float kOne = 1.0f;
template <class Cfg>
void fp8_unscaled(int M, int N, int K, float alpha, wb::Fp8Operand A, wb::Fp8Operand Bt, float beta, float* C,
                  cudaStream_t st) {
    float* one = nullptr;
    WB_CUDA_CHECK(cudaGetSymbolAddress(reinterpret_cast<void**>(&one), kOne));
    run_fp8<Cfg>(M, N, K, alpha, {A.data, one}, {Bt.data, one}, beta, C, st);
}

// Shapes aimed at the FP8 step: k-steps of 32 values, rows of 16 bytes for TMA.
std::vector<wb::test::GemmCase> fp8_cases() {
    return {
        {{64, 128, 16}, 1.0f, 0.0f, "K = 16: rows TMA reads, half of one wgmma's k"},
        {{64, 128, 31}, 1.0f, 0.0f, "K = 31: not a multiple of 16 (padded copy) nor of 32"},
        {{97, 251, 48}, 0.5f, 1.5f, "K = 48: one and a half wgmmas, beta != 0"},
        {{131, 263, 130}, 1.0f, 0.0f, "K = 130: two k-tiles of 128, the second almost empty"},
        {{300, 500, 1040}, 1.0f, 0.0f, "K = 1040: the ring wraps twice"},
    };
}

// Shapes aimed at step 10's clusters: tile groups of two tile rows, B^T split by rows. (beta == 0
// runs with C poisoned with NaN.)
std::vector<wb::test::GemmCase> fp8_cluster_cases() {
    return {
        {{1100, 900, 1000}, 1.0f, 0.0f, "9 tile rows: the last group's second tile lies below C; K % 16 = 8 (padded)"},
        {{1100, 1000, 520}, 0.75f, -0.5f, "9 tile rows, N % 256 = 232, beta != 0"},
        {{100, 520, 200}, 1.0f, 0.0f, "one tile row: every second tile lies below C"},
        {{128, 300, 77}, 0.5f, 2.0f, "exactly one tile row, K = 77 (padded), beta != 0"},
        {{200, 130, 256}, 1.0f, 0.0f, "N = 130: rank 1's half of B^T (rows 128-255) is almost all past N"},
        {{2000, 3000, 520}, 1.0f, 0.0f, "96 tile groups: some clusters take two"},
        {{4100, 700, 136}, 1.0f, 0.0f, "33 tile rows: 17 groups a column, many per cluster, phantom tiles"},
    };
}

// Shapes aimed at step 11's clusters: tile groups of two tile columns (128 columns each) sharing
// A's tile. Where tiles_n is odd the last group of every tile row has one tile inside C and one
// past it. (beta == 0 runs with C poisoned with NaN.)
std::vector<wb::test::GemmCase> tf32_cluster_cases() {
    return {
        {{300, 300, 200}, 1.0f, 0.0f, "3 tile columns: the last group's second tile lies past C"},
        {{300, 100, 77}, 0.5f, 2.0f, "one tile column: every group's second tile lies past C; K = 77, beta != 0"},
        {{513, 260, 33}, 1.0f, 0.0f, "N = 260: the second tile of the last group holds 4 columns of C; 2 k-tiles"},
        {{100, 1000, 1000}, 1.0f, 0.0f, "one tile row of 8 tiles: 4 groups, A's tile mostly past M"},
        {{1000, 1013, 130}, 0.75f, -0.5f, "N = 1013: 8 tile columns, the last one short; odd K; beta != 0"},
        {{2100, 3000, 96}, 1.0f, 0.0f, "9 x 24 tiles: 108 groups, some clusters take two"},
        {{4100, 1150, 136}, 1.0f, 0.0f, "17 x 9 tiles: 85 groups, 17 with a tile past C, many per cluster"},
    };
}

// Step 11 with K cut short by one k-step, and step 11's kernel with its tile groups down a column
// of tiles (step 5's direction): the two blocks then share A's tile although they cover different
// rows of C, so each multiplies half of its rows by its partner's rows of A.
void multicast_drops_last_k(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                            cudaStream_t st) {
    run_tf32_multicast(M, N, K > 8 ? K - 8 : K, alpha, A, B, beta, C, st);
}
struct Tf32MulticastAlongM : Tf32MulticastTiling {
    static constexpr bool CLUSTER_ALONG_N = false;
};
void multicast_along_m(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                       cudaStream_t st) {
    launch_tf32_rs<Tf32MulticastAlongM, tf32_multicast_kernel<Tf32MulticastAlongM>>(M, N, K, alpha, A, B, beta, C, st);
}

// A model of step 12's protocol on the CPU: the producer, the two consumers and the store thread of
// one block, each a list of the waits and arrivals its kernel code makes, built with the kernel's
// RingSchedule and run in a random interleaving against counting barriers. A wait checks the parity
// rule the hardware applies (the phase of that parity completed) and that the barrier is neither
// behind the phase before the one waited for nor past it (where a parity wait would misread it).
// Returns "" when every role finishes, else what went wrong.
struct ModelBarrier {
    int expected = 1, arrived = 0, completed = 0;
    void arrive() {
        if (++arrived == expected) arrived = 0, ++completed;
    }
};
struct ModelOp {
    int bar;         // index into the barriers
    int phase;       // wait: the phase that must complete (-1: the one before a fresh barrier's first)
    int arrivals;    // arrive: how many; 0 for a wait
};
template <class Cfg>
std::string run_ring_model(const RingSchedule<Cfg>& ring_uses, int tiles, unsigned seed) {
    constexpr int S = Cfg::STAGES, C = Cfg::CONSUMERS, J = Cfg::C_CHUNKS;
    // Barriers: full[S], empty[S], chunk_ready[C][J], staging_free.
    auto full = [](int u) { return u % S; };
    auto empty = [](int u) { return S + u % S; };
    auto chunk = [](int c, int j) { return 2 * S + c * J + j; };
    const int staging_free = 2 * S + C * J;
    std::vector<ModelBarrier> bars(staging_free + 1);
    for (int s = 0; s < S; ++s) bars[empty(s)].expected = C;  // one arrival per consumer in the model
    auto wait = [](int bar, int phase) { return ModelOp{bar, phase, 0}; };
    auto arrive = [](int bar, int n = 1) { return ModelOp{bar, 0, n}; };
    std::vector<std::vector<ModelOp>> roles(2 + C);
    std::vector<ModelOp>& producer = roles[0];
    std::vector<ModelOp>& store = roles[1];
    auto lend = [&](int e) {
        for (int u = e; u < e + Cfg::EPI_SLOTS; ++u) {
            producer.push_back(wait(empty(u), u / S - 1));
            producer.push_back(arrive(full(u)));
        }
    };
    int use = 0;
    for (int n = 0; n < tiles; ++n)
        for (int kt = 0; kt < ring_uses.k_tiles; ++kt) {
            producer.push_back(wait(empty(use), use / S - 1));
            producer.push_back(arrive(full(use)));
            const int next = ring_uses.after_k_tile(use, kt, n == 0);
            if (next != use + 1) lend(use + 1);
            use = next;
        }
    lend(ring_uses.epilogue_use(use, true));
    for (int c = 0; c < C; ++c) {
        std::vector<ModelOp>& consumer = roles[2 + c];
        use = 0;
        for (int n = 0; n < tiles; ++n) {
            int previous = -1;
            for (int kt = 0; kt < ring_uses.k_tiles; ++kt) {
                consumer.push_back(wait(full(use), use / S));
                if (previous >= 0) consumer.push_back(arrive(empty(previous)));
                previous = use;
                use = ring_uses.after_k_tile(use, kt, n == 0);
            }
            consumer.push_back(arrive(empty(previous)));
            const int e = ring_uses.epilogue_use(use, n == tiles - 1);
            for (int u = e; u < e + Cfg::EPI_SLOTS; ++u) consumer.push_back(wait(full(u), u / S));
            consumer.push_back(wait(staging_free, n - 1));
            for (int j = 0; j < J; ++j) consumer.push_back(arrive(chunk(c, j)));
        }
    }
    use = 0;
    for (int n = 0; n < tiles; ++n) {
        use = ring_uses.after_tile(use, n == 0);
        const int e = ring_uses.epilogue_use(use, n == tiles - 1);
        for (int j = 0; j < J; ++j)
            for (int c = 0; c < C; ++c) store.push_back(wait(chunk(c, j), n));
        for (int u = e; u < e + Cfg::EPI_SLOTS; ++u) store.push_back(arrive(empty(u), C));
        store.push_back(arrive(staging_free));
    }
    std::vector<size_t> pc(roles.size(), 0);
    unsigned state = seed * 2654435761u + 1;
    for (;;) {
        std::vector<int> ready;
        bool all_done = true;
        for (size_t r = 0; r < roles.size(); ++r) {
            if (pc[r] == roles[r].size()) continue;
            all_done = false;
            const ModelOp& op = roles[r][pc[r]];
            if (op.arrivals > 0) {
                ready.push_back(int(r));
                continue;
            }
            const int done = bars[op.bar].completed;
            if (done < op.phase || done > op.phase + 1)
                return "role " + std::to_string(r) + " waits for phase " + std::to_string(op.phase) + " of barrier " +
                       std::to_string(op.bar) + ", which has completed " + std::to_string(done);
            if ((done & 1) != (op.phase & 1)) ready.push_back(int(r));  // hardware: parity of phase + 1
        }
        if (all_done) return "";
        if (ready.empty()) return "deadlock";
        state = state * 1664525u + 1013904223u;
        const int r = ready[(state >> 8) % ready.size()];
        const ModelOp& op = roles[r][pc[r]++];
        for (int i = 0; i < op.arrivals; ++i) bars[op.bar].arrive();
    }
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

// Every variant on A, B and C one element past an aligned start, against the FP64 reference of the
// inputs rounded to `p`: TMA cannot read A or B from there (the padded copies), and C is neither 8-
// nor 16-byte aligned (no pairs, no TMA stores).
template <class T, class Variant>
void check_misaligned(const wb::Shape& s, wb::Precision p, const std::vector<Variant>& variants, int seed) {
    INFO("shape " << wb::to_string(s));
    std::vector<float> A(size_t(s.m) * s.k), B(size_t(s.k) * s.n);
    wb::fill_random(A.data(), A.size(), seed, 1);
    wb::fill_random(B.data(), B.size(), seed, 2);
    wb::round_to(p, A);
    wb::round_to(p, B);
    auto as_inputs = [](const std::vector<float>& v) {
        if constexpr (std::is_same_v<T, __half>)
            return wb::to_half(v);
        else if constexpr (std::is_same_v<T, __nv_bfloat16>)
            return wb::to_bf16(v);
        else
            return v;
    };
    const std::vector<T> tA = as_inputs(A), tB = as_inputs(B);
    wb::DeviceBuffer<T> dA(tA.size() + 8), dB(tB.size() + 8);
    wb::DeviceBuffer<float> dC(size_t(s.m) * s.n + 8);
    WB_CUDA_CHECK(cudaMemcpy(dA.get() + 1, tA.data(), tA.size() * sizeof(T), cudaMemcpyHostToDevice));
    WB_CUDA_CHECK(cudaMemcpy(dB.get() + 1, tB.data(), tB.size() * sizeof(T), cudaMemcpyHostToDevice));
    wb::GemmView g;
    g.s = s;
    g.A = A.data();
    g.B = B.data();
    std::vector<double> value, scale;
    wb::reference_full(g, value, scale);
    for (const Variant& v : variants) {
        INFO("variant " << v.name);
        WB_CUDA_CHECK(cudaMemset(dC.get(), 0xFF, dC.size() * sizeof(float)));
        v.run(s.m, s.n, s.k, 1.0f, dA.get() + 1, dB.get() + 1, 0.0f, dC.get() + 1, 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> out = dC.download();
        const wb::CheckResult r = wb::check_full(out.data() + 1, s.m, s.n, value, scale, wb::tolerance_for(p, s.k));
        INFO(r.describe());
        CHECK(r.pass);
    }
}

TEST_CASE("09: misaligned pointers go through the padded copy and stay right", "[gpu][09]") {
    REQUIRE_HOPPER();
    check_misaligned<__half>({100, 136, 72}, wb::Precision::fp16, kHgemmVariants, 5);
    check_misaligned<__nv_bfloat16>({100, 136, 72}, wb::Precision::bf16, kBgemmVariants, 6);
}

TEST_CASE("09: TF32 steps read A and B from any address and write C at any address", "[gpu][09]") {
    REQUIRE_HOPPER();
    // N % 4 != 0 as well in the second shape.
    for (const wb::Shape& s : {wb::Shape{100, 136, 72}, wb::Shape{300, 517, 45}})
        check_misaligned<float>(s, wb::Precision::tf32, kTf32Variants, 7);
}

TEST_CASE("09: the check catches planted bugs", "[gpu][09]") {
    REQUIRE_HOPPER();
    for (wb::Shape s : {wb::Shape{300, 520, 200}, wb::Shape{2048, 2048, 600}}) {
        INFO("shape " << wb::to_string(s));
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        CHECK(prob.verify(run_step<Persistent128x256<__half>>).pass);
        CHECK(prob.verify(run_step<Persistent128x256<float>>, wb::Precision::tf32).pass);
        CHECK(prob.verify(run_step<Pingpong128x128<__half>>).pass);
        CHECK_FALSE(prob.verify(drops_last_k<float>, wb::Precision::tf32).pass);
        CHECK(prob.verify(run_tf32_rs, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(rs_drops_last_k, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(drops_last_k<__half>).pass);
        CHECK_FALSE(prob.verify(shifted_rows<__half>).pass);
        CHECK_FALSE(prob.verify(drops_last_k<__nv_bfloat16>).pass);
    }
}

TEST_CASE("09: step 7 (FP8 E4M3) and cuBLASLt's FP8 GEMM are right on every shape", "[gpu][09]") {
    REQUIRE_HOPPER();
    wb::test::check_variants(kFp8Variants);
    wb::test::check_variants(kFp8Variants, hopper_cases(), 24);
    wb::test::check_variants(kFp8Variants, fp8_cases(), 25);
    wb::test::check_variants(kFp8Variants, fp8_cluster_cases(), 28);
    const std::vector<wb::Fp8gemmVariant> lt = {{"cublaslt_fp8", wb::cublaslt_fp8, "the baseline", {}, 89}};
    wb::test::check_variants(lt, fp8_cases(), 26);
    wb::test::check_variants(lt, {{{17, 31, 7}, 0.5f, 2.0f, "primes, beta != 0"}}, 27);
}

TEST_CASE("09: steps 7 and 10 read FP8 operands from any address", "[gpu][09]") {
    REQUIRE_HOPPER();
    // A and Bt one byte past an aligned start (TMA cannot read them there): both padded copies.
    const wb::Shape s{100, 136, 64};
    std::vector<float> A(size_t(s.m) * s.k), B(size_t(s.k) * s.n);
    wb::fill_random(A.data(), A.size(), 6, 1);
    wb::fill_random(B.data(), B.size(), 6, 2);
    const float scales[2] = {wb::e4m3_scale(A.data(), A.size()), wb::e4m3_scale(B.data(), B.size())};
    const std::vector<__nv_fp8_e4m3> qA = wb::to_e4m3(A, scales[0], s.m, s.k, false);
    const std::vector<__nv_fp8_e4m3> qBt = wb::to_e4m3(B, scales[1], s.k, s.n, true);
    wb::round_to(wb::Precision::fp8_e4m3, A);
    wb::round_to(wb::Precision::fp8_e4m3, B);
    wb::DeviceBuffer<__nv_fp8_e4m3> dA(qA.size() + 16), dBt(qBt.size() + 16);
    wb::DeviceBuffer<float> dC(size_t(s.m) * s.n), dScales(2);
    WB_CUDA_CHECK(cudaMemcpy(dA.get() + 1, qA.data(), qA.size(), cudaMemcpyHostToDevice));
    WB_CUDA_CHECK(cudaMemcpy(dBt.get() + 1, qBt.data(), qBt.size(), cudaMemcpyHostToDevice));
    dScales.upload(std::vector<float>(scales, scales + 2));
    wb::GemmView g;
    g.s = s;
    g.A = A.data();
    g.B = B.data();
    std::vector<double> value, scale;
    wb::reference_full(g, value, scale);
    // The kernel, and cuBLASLt's baseline, which must also cope with the scale of Bt 4 bytes past
    // a 16-byte boundary (cuBLASLt itself takes only aligned scale pointers).
    std::vector<wb::Fp8gemmVariant> runs = kFp8Variants;
    runs.push_back({"cublaslt_fp8", wb::cublaslt_fp8, "the baseline", {}, 89});
    for (const wb::Fp8gemmVariant& v : runs) {
        WB_CUDA_CHECK(cudaMemset(dC.get(), 0xFF, dC.size() * sizeof(float)));
        v.run(s.m, s.n, s.k, 1.0f, {dA.get() + 1, dScales.get()}, {dBt.get() + 1, dScales.get() + 1}, 0.0f, dC.get(),
              0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> out = dC.download();
        const wb::CheckResult r =
            wb::check_full(out.data(), s.m, s.n, value, scale, wb::tolerance_for(wb::Precision::fp8_e4m3, s.k));
        INFO(v.name << ": " << r.describe());
        CHECK(r.pass);
    }
}

TEST_CASE("09: the FP8 check catches planted bugs", "[gpu][09]") {
    REQUIRE_HOPPER();
    for (wb::Shape s : {wb::Shape{300, 520, 200}, wb::Shape{129, 257, 96}}) {
        INFO("shape " << wb::to_string(s));
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        CHECK(prob.verify(run_fp8<Fp8Persistent128x256>).pass);
        CHECK_FALSE(prob.verify(fp8_drops_last_k<Fp8Persistent128x256>).pass);
        CHECK_FALSE(prob.verify(fp8_unscaled<Fp8Persistent128x256>).pass);
        // Step 10: the missing k-step and scales, and (M = 300: 3 tile rows) a phantom tile.
        CHECK(prob.verify(run_fp8<Fp8Cluster2Persistent128x256>).pass);
        CHECK_FALSE(prob.verify(fp8_drops_last_k<Fp8Cluster2Persistent128x256>).pass);
        CHECK_FALSE(prob.verify(fp8_unscaled<Fp8Cluster2Persistent128x256>).pass);
    }
}

TEST_CASE("09: step 11 (TF32 in clusters sharing A) is right where a cluster's second tile lies past C", "[gpu][09]") {
    REQUIRE_HOPPER();
    wb::test::check_variants(kTf32Variants, tf32_cluster_cases(), 29);
}

TEST_CASE("09: the check catches step 11's planted bugs", "[gpu][09]") {
    REQUIRE_HOPPER();
    // 300 x 520: 2 x 5 tiles, so each tile row ends in a group with one tile past C.
    for (wb::Shape s : {wb::Shape{300, 520, 200}, wb::Shape{2048, 2048, 600}}) {
        INFO("shape " << wb::to_string(s));
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        CHECK(prob.verify(run_tf32_multicast, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(multicast_drops_last_k, wb::Precision::tf32).pass);
        CHECK_FALSE(prob.verify(multicast_along_m, wb::Precision::tf32).pass);
    }
}

// Every block of every cluster, walking its groups as the kernel does: each tile of C is computed
// exactly once, a group's tiles share the operand the cluster multicasts, and the tiles past C are
// exactly the second tiles of groups that reach past the last tile row (column).
void check_tile_walk(int tiles_m, int tiles_n, int cluster, bool along_n, int band, int clusters) {
    INFO("tiles " << tiles_m << " x " << tiles_n << ", cluster " << cluster << (along_n ? " along n" : " along m")
                  << ", band " << band << ", " << clusters << " clusters");
    const TileGroups grid{tiles_m, tiles_n, cluster, along_n};
    std::vector<int> seen(size_t(tiles_m) * tiles_n, 0);
    int past = 0, walked = 0;
    for (int q = 0; q < clusters; ++q)
        for (int g = q; g < grid.count(); g += clusters) {
            const wb::TileIndex first = grid.tile(g, 0, band);
            for (int rank = 0; rank < cluster; ++rank) {
                const wb::TileIndex t = grid.tile(g, rank, band);
                ++walked;
                CHECK((along_n ? t.m == first.m && t.n == first.n + rank : t.n == first.n && t.m == first.m + rank));
                REQUIRE(t.m >= 0);
                REQUIRE(t.n >= 0);
                REQUIRE(t.m < (along_n ? tiles_m : wb::ceil_div(tiles_m, cluster) * cluster));
                REQUIRE(t.n < (along_n ? wb::ceil_div(tiles_n, cluster) * cluster : tiles_n));
                if (t.m >= tiles_m || t.n >= tiles_n) {
                    CHECK(rank > 0);  // a group's first tile is always inside C
                    ++past;
                    continue;
                }
                ++seen[size_t(t.m) * tiles_n + t.n];
            }
        }
    for (int n : seen) CHECK(n == 1);
    CHECK(walked == grid.count() * cluster);
    CHECK(past == grid.count() * cluster - tiles_m * tiles_n);
}

TEST_CASE("09: tile groups cover C once along m (steps 5 and 10) and along n (step 11)", "[09]") {
    for (bool along_n : {false, true})
        for (int clusters : {1, 3, 66})
            for (int band : {1, 8}) {
                check_tile_walk(1, 1, 2, along_n, band, clusters);
                check_tile_walk(16, 32, 2, along_n, band, clusters);  // 4096 x 4096 in step 11's tiles
                check_tile_walk(9, 3, 2, along_n, band, clusters);
                check_tile_walk(17, 9, 2, along_n, band, clusters);
                check_tile_walk(2, 5, 2, along_n, band, clusters);
            }
    // Which neighbours: step 11's groups lie along n (tile columns 2g and 2g + 1 of one tile row).
    const TileGroups rs{16, 32, 2, true};
    CHECK(rs.count() == 16 * 16);
    CHECK(rs.tile(0, 1, 8).m == 0);
    CHECK(rs.tile(0, 1, 8).n == 1);
    CHECK(rs.tile(1, 0, 8).m == 1);  // down the band first, as wb::tile_of_block walks
    CHECK(rs.tile(1, 0, 8).n == 0);
    const TileGroups odd{2, 5, 2, true};
    CHECK(odd.count() == 6);
    CHECK(odd.tile(5, 1, 8).n == 5);  // past C's last tile column (4)
}

// How many tiles of C a walk computes exactly once when `ranks` blocks of each cluster walk `grid`'s
// groups (ranks == grid.cluster in the kernel). The planted bugs below walk with the wrong count.
int tiles_computed_once(const TileGroups& grid, int band, int clusters, int ranks) {
    std::vector<int> seen(size_t(grid.tiles_m) * grid.tiles_n, 0);
    for (int q = 0; q < clusters; ++q)
        for (int g = q; g < grid.count(); g += clusters)
            for (int rank = 0; rank < ranks; ++rank) {
                const wb::TileIndex t = grid.tile(g, rank, band);
                if (t.m < grid.tiles_m && t.n < grid.tiles_n) ++seen[size_t(t.m) * grid.tiles_n + t.n];
            }
    return int(std::count(seen.begin(), seen.end(), 1));
}

// lab/tune_09 runs step 5's kernel in clusters of 4. Nothing in it is written for 2: the groups,
// the multicast mask, the barriers' counts and B's split all follow Cfg::CLUSTER. These check that
// on the CPU for 4.
TEST_CASE("09: clusters of 4 (lab/tune_09): tile groups cover C once, B splits into whole boxes", "[09]") {
    for (int clusters : {1, 3, 33})
        for (int band : {1, 2, 4, 8, 32}) {
            check_tile_walk(1, 1, 4, false, band, clusters);
            check_tile_walk(3, 5, 4, false, band, clusters);    // one group, its last tile past C
            check_tile_walk(32, 16, 4, false, band, clusters);  // 4096 x 4096 in 128 x 256 tiles
            check_tile_walk(64, 32, 4, false, band, clusters);  // 8192 x 8192
            check_tile_walk(17, 9, 4, false, band, clusters);   // 5 group rows, 3 tiles past C in the last
        }
    const TileGroups four{17, 9, 4, false};
    CHECK(four.rows() == 5);
    CHECK(four.tile(0, 3, 8).m == 3);  // a group's tiles: down one column of tiles
    CHECK(four.tile(0, 3, 8).n == 0);
    CHECK(four.tile(1, 0, 8).m == 4);  // the walk goes down the band of groups first
    CHECK(tiles_computed_once(four, 8, 33, 4) == 17 * 9);
    // Planted bugs: blocks of a cluster of 4 walking as if the cluster held 2 (half the tiles are
    // never computed), or walking a grid made for clusters of 2 (tiles computed twice).
    CHECK(tiles_computed_once(four, 8, 33, 2) < 17 * 9);
    CHECK(tiles_computed_once(TileGroups{17, 9, 2, false}, 8, 33, 4) < 17 * 9);

    // B (MN-major): four 64-column boxes, one per block, each whole 1024-byte swizzle atoms; every
    // block still receives a whole stage; the ring still fits. The empty barriers count a release
    // from every consumer warp of all 4 blocks.
    using C4 = WgmmaTiling<__half, 128, 256, 4, 2, true, true, 4, true>;
    using C2 = Cluster2Persistent128x256<__half>;
    CHECK((C4::BN / 64) % C4::CLUSTER == 0);
    CHECK(C4::BN / 64 / C4::CLUSTER == 1);
    CHECK(C4::B_BOX_BYTES % 1024 == 0);
    CHECK(C4::B_BOX_BYTES * (C4::BN / 64) == C4::B_BYTES);
    CHECK(C4::STAGE_BYTES == C2::STAGE_BYTES);
    CHECK(C4::SMEM_BYTES == C2::SMEM_BYTES);
    CHECK(C4::SMEM_BYTES <= 227 * 1024);
    CHECK(C4::STAGE_READERS * 4 * C4::CLUSTER == 32);
    CHECK(((1u << C4::CLUSTER) - 1) == 0xFu);  // the multicast mask: every block of the cluster
    // K-major B (step 10's split) would also divide: 64 rows of 128 bytes, whole atoms per block.
    std::vector<int> seen(256, 0);
    for (int rank = 0; rank < 4; ++rank) {
        const RowShare share = row_share(256, 4, rank);
        CHECK(share.rows == 64);
        CHECK(share.offset % 1024 == 0);
        for (int r = share.first_row; r < share.first_row + share.rows; ++r) ++seen[r];
    }
    for (int n : seen) CHECK(n == 1);
}

TEST_CASE("09: a tile split by rows over a cluster: shares cover it once on whole swizzle atoms", "[09]") {
    // Step 10 splits B^T's tile (BN rows), step 11 A's tile (BM rows), both 128 bytes a row.
    using Fc = Fp8Cluster2Persistent128x256;
    using Mc = Tf32MulticastTiling;
    for (int tile_rows : {Fc::BN, Mc::BM}) {
        INFO(tile_rows << " rows");
        std::vector<int> seen(tile_rows, 0);
        for (int rank = 0; rank < 2; ++rank) {
            const RowShare share = row_share(tile_rows, 2, rank);
            CHECK(share.rows == tile_rows / 2);
            CHECK(share.offset == share.first_row * 128);
            CHECK(share.offset % 1024 == 0);
            CHECK(share.rows * 128 % 1024 == 0);
            for (int r = share.first_row; r < share.first_row + share.rows; ++r) ++seen[r];
        }
        for (int n : seen) CHECK(n == 1);
    }
    // Each share is one box of the map its launcher makes.
    CHECK(row_share(Fc::BN, Fc::CLUSTER, 1).rows == Fc::B_BOX_ROWS);
    CHECK(row_share(Mc::BM, Mc::CLUSTER, 1).rows == Mc::BM / Mc::CLUSTER);
    CHECK(row_share(Mc::BM, Mc::CLUSTER, 1).rows * 128 == 16 * 1024);
    CHECK(Mc::CLUSTER * row_share(Mc::BM, Mc::CLUSTER, 0).rows * 128 == Mc::A_BYTES);
    // Step 11: step 9's stages and epilogue (each block still receives whole 48 KB stages), in
    // clusters of 2 along n, sharing the operand whose tile is the larger (A: 32 KB against 16 KB).
    CHECK(Mc::CLUSTER == 2);
    CHECK(Mc::CLUSTER_ALONG_N);
    CHECK_FALSE(Tf32RsTiling::CLUSTER_ALONG_N);
    CHECK(Mc::A_BYTES == 2 * Mc::B_BYTES);
    CHECK(Mc::STAGE_BYTES == Tf32RsTiling::STAGE_BYTES);
    CHECK(Mc::SMEM_BYTES == Tf32RsTiling::SMEM_BYTES);
    CHECK(Mc::SMEM_BYTES <= 227 * 1024);
    REQUIRE(kTf32Variants.size() >= 3);
    CHECK(std::string(kTf32Variants[2].name) == "tf32_multicast");
    CHECK(kTf32Variants[2].precision == wb::Precision::tf32);
    CHECK(kTf32Variants[2].min_cc == 90);
    CHECK(kTf32Variants[2].info.kernel == (const void*)tf32_multicast_kernel<Mc>);
}

TEST_CASE("09: E4M3 rounding: every value round-trips, ties go to even, 448 saturates, NaN stays", "[09]") {
    int nans = 0;
    for (int b = 0; b < 256; ++b) {
        const float v = wb::e4m3_value(uint8_t(b));
        if (std::isnan(v)) {
            ++nans;
            CHECK((b & 0x7F) == 0x7F);
            continue;
        }
        INFO("byte " << b << " value " << v);
        CHECK(wb::e4m3_bits(v) == b);  // -0 included: its sign bit survives
        // CUDA's own conversion agrees on every representable value.
        CHECK(__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3) == b);
    }
    CHECK(nans == 2);
    CHECK(wb::e4m3_value(0x7E) == 448.0f);
    CHECK(wb::e4m3_value(0x08) == std::ldexp(1.0f, -6));  // smallest normal
    CHECK(wb::e4m3_value(0x01) == std::ldexp(1.0f, -9));  // smallest subnormal
    // Ties to even: 1 + 1/16 lies halfway between 1 and 1.125; 1 + 3/16 between 1.125 and 1.25.
    CHECK(wb::round_to_e4m3(1.0625f) == 1.0f);
    CHECK(wb::round_to_e4m3(1.1875f) == 1.25f);
    CHECK(wb::round_to_e4m3(std::ldexp(1.0f, -10)) == 0.0f);                        // half the smallest
    CHECK(wb::round_to_e4m3(3 * std::ldexp(1.0f, -10)) == std::ldexp(1.0f, -8));    // 1.5 subnormal steps
    // Saturation: anything past 448, Inf included, becomes +-448 (E4M3 has no Inf).
    for (float big : {448.0f, 449.0f, 464.0f, 480.0f, 1e6f, std::numeric_limits<float>::infinity()}) {
        CHECK(wb::e4m3_bits(big) == 0x7E);
        CHECK(wb::e4m3_bits(-big) == 0xFE);
    }
    CHECK(wb::e4m3_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7F);
    CHECK(std::isnan(wb::round_to_e4m3(std::numeric_limits<float>::quiet_NaN())));
    // The host conversion of CUDA agrees on values between the grid points too.
    std::vector<float> r(4096);
    wb::fill_random(r.data(), r.size(), 11, 1);
    for (size_t i = 0; i < r.size(); ++i) {
        const float x = r[i] * std::ldexp(1.0f, int(i % 24) - 12);
        INFO("x = " << x);
        CHECK(wb::e4m3_bits(x) == __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3));
    }
}

TEST_CASE("09: per-tensor scaling maps amax to 448 and the FP8 bound holds for a truncating accumulator", "[09]") {
    std::vector<float> v(1000);
    wb::fill_random(v.data(), v.size(), 12, 1);
    for (float& x : v) x *= 37.0f;
    float amax = 0;
    for (float x : v) amax = std::max(amax, std::fabs(x));
    const float s = wb::e4m3_scale(v.data(), v.size());
    CHECK(s == amax / 448.0f);
    CHECK(wb::e4m3_scale(std::vector<float>(8, 0.0f).data(), 8) == 1.0f);  // all zeros: no division by 0
    std::vector<float> q = v;
    wb::round_to(wb::Precision::fp8_e4m3, q);
    for (size_t i = 0; i < v.size(); ++i) {
        CHECK(std::fabs(q[i]) <= amax * (1 + 1e-6f));
        // 3 mantissa bits: within 1/16 relative above the subnormals (2^-6 * s).
        CHECK(std::fabs(q[i] - v[i]) <= std::max(std::fabs(v[i]) / 16, std::ldexp(s, -10)) * (1 + 1e-6f));
    }
    // A model of the FP8 tensor core's accumulator: every addition truncated to 14 significant bits.
    // Correct sums pass the bound; sums missing their last 32 products fail it, where K is small
    // enough for the bound to see 32 products (the bound grows with K, the missing part does not).
    auto truncate14 = [](double x) {
        if (x == 0) return 0.0;
        int e = 0;
        std::frexp(x, &e);
        const double ulp = std::ldexp(1.0, e - 14);
        return std::trunc(x / ulp) * ulp;
    };
    for (int K : {16, 100, 200, 1000, 4096}) {
        INFO("K = " << K);
        const wb::Tolerance t = wb::tolerance_for(wb::Precision::fp8_e4m3, K);
        int caught = 0;
        for (int trial = 0; trial < 64; ++trial) {
            std::vector<float> a(K), b(K);
            wb::fill_random(a.data(), K, 13 + trial, 1);
            wb::fill_random(b.data(), K, 13 + trial, 2);
            wb::round_to(wb::Precision::fp8_e4m3, a);
            wb::round_to(wb::Precision::fp8_e4m3, b);
            double exact = 0, scale = 0, acc = 0, short_acc = 0;
            for (int k = 0; k < K; ++k) {
                exact += double(a[k]) * b[k];
                scale += std::fabs(double(a[k]) * b[k]);
                acc = truncate14(acc + double(a[k]) * b[k]);
                if (k < K - 32) short_acc = acc;
            }
            CHECK(std::fabs(double(float(acc)) - exact) <= t.factor * scale + t.tiny);
            caught += std::fabs(short_acc - exact) > t.factor * scale + t.tiny;
        }
        if (K <= 200) CHECK(caught > 32);
    }
    // The bound is wider than FP16's (2^-13 against 2^-23 per addition) and grows with K.
    CHECK(wb::tolerance_for(wb::Precision::fp8_e4m3, 1000).factor > wb::tolerance_for(wb::Precision::fp16, 1000).factor);
    CHECK(wb::tolerance_for(wb::Precision::fp8_e4m3, 2000).factor > wb::tolerance_for(wb::Precision::fp8_e4m3, 1000).factor);
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
    // Step 8: each consumer owns a whole 128 x 128 tile (two 64-row wgmmas, still 128 accumulators
    // per thread); a stage is read by one consumer, so its empty barrier counts 4 warps; the ring of
    // 7 stages of 32 KB, the two turn barriers and the alignment still fit.
    using Pp = Pingpong128x128<__half>;
    CHECK(Pp::THREADS == 384);
    CHECK(Pp::WG_ROWS == 128);
    CHECK(Pp::WG_MMAS == 2);
    CHECK(Pp::WG_MMAS * Pp::BN / 2 == 128);
    CHECK(Pp::STAGE_READERS == 1);
    CHECK(Pp::STAGE_BYTES == 32 * 1024);
    CHECK(Pp::SMEM_BYTES == 7 * 256 * 128 + (2 * 7 + 2) * 8 + 1024);
    CHECK(Pp::SMEM_BYTES <= 227 * 1024);
    CHECK(Pp::SMEM_BYTES + Pp::STAGE_BYTES > 227 * 1024);  // an eighth stage would not fit
    CHECK(Pingpong128x128<__nv_bfloat16>::SMEM_BYTES == Pp::SMEM_BYTES);
    CHECK(Persistent128x256<__half>::STAGE_READERS == 2);  // steps 1-7: every consumer reads every stage
    // Registers after setmaxnreg: 128 * 40 (producer) + 256 * 232 (consumers) within the SM's 64 K.
    CHECK(128 * 40 + 2 * 128 * 232 <= 65536);
    // FP8: 128 values of k per stage (still 128 bytes), 32 per wgmma, B read K-major like TF32's.
    CHECK(Fp8Persistent128x256::BK == 128);
    CHECK(Fp8Persistent128x256::K_STEP == 32);
    CHECK(Fp8Persistent128x256::B_K_MAJOR);
    CHECK(Fp8Persistent128x256::SMEM_BYTES == Cluster2Persistent128x256<__half>::SMEM_BYTES);
    CHECK(Fp8Persistent128x256::SMEM_BYTES <= 227 * 1024);
    CHECK(Fp8Persistent128x256::B_BOX_ROWS == 256);  // step 7: one box, the whole B^T tile
    // Step 10: the same ring in clusters of 2; B^T's tile goes as two boxes of 128 rows x 128 bytes,
    // each a whole number of 1024-byte swizzle atoms, so each lands in phase at its offset.
    using Fc = Fp8Cluster2Persistent128x256;
    CHECK(Fc::CLUSTER == 2);
    CHECK(Fc::SMEM_BYTES == Fp8Persistent128x256::SMEM_BYTES);
    CHECK(Fc::SMEM_BYTES <= 227 * 1024);
    CHECK(Fc::B_BOX_ROWS == 128);
    CHECK(Fc::B_BOX_BYTES == 16 * 1024);
    CHECK(Fc::B_BOX_BYTES % 1024 == 0);
    CHECK(Fc::CLUSTER * Fc::B_BOX_BYTES == Fc::B_BYTES);
    CHECK(Fc::A_BYTES % 1024 == 0);  // B's tile, and so each share, starts on an atom too
    CHECK(Fc::STAGE_BYTES == Fp8Persistent128x256::STAGE_BYTES);  // each block still receives whole stages
    CHECK(Cluster2Persistent128x256<__half>::B_BOX_BYTES == 64 * 128);  // step 5's boxes are unchanged
    CHECK(kFp8Variants.size() == 2);
    CHECK(std::string(kFp8Variants[0].name) == "fp8_e4m3");
    CHECK(std::string(kFp8Variants[1].name) == "fp8_multicast");
    for (const wb::Fp8gemmVariant& v : kFp8Variants) CHECK(v.min_cc == 90);
    CHECK(kFp8Variants[1].info.kernel == (const void*)fp8_multicast_kernel<Fc>);
    CHECK(kFp8Variants[0].info.kernel == (const void*)fp8_persistent_kernel<Fp8Persistent128x256>);
    CHECK(kHgemmVariants.size() == kBgemmVariants.size());
    for (size_t i = 0; i < kHgemmVariants.size(); ++i) {
        CHECK(std::string(kHgemmVariants[i].name) == kBgemmVariants[i].name);
        CHECK(kHgemmVariants[i].min_cc == 90);
    }
}

TEST_CASE("09: step 12's ring schedule: every role walks the same uses, without deadlock or a misread phase", "[09]") {
    using Cfg = EpilogueOverlap128x256<__half>;
    for (int k_tiles = 1; k_tiles <= 9; ++k_tiles)
        for (int tiles = 1; tiles <= 5; ++tiles) {
            INFO("k-tiles " << k_tiles << ", tiles " << tiles);
            const RingSchedule<Cfg> ring_uses(k_tiles);
            // The uses, as the producer walks them: every k-tile and every epilogue use exactly
            // once, in order, 0 .. tiles * (k_tiles + EPI_SLOTS) - 1.
            std::vector<int> order;
            std::vector<int> epilogue, end;  // each tile's first epilogue use, the use after its k-tiles
            int use = 0;
            for (int n = 0; n < tiles; ++n) {
                const int start = use;
                for (int kt = 0; kt < k_tiles; ++kt) {
                    order.push_back(use);
                    const int next = ring_uses.after_k_tile(use, kt, n == 0);
                    for (int u = use + 1; u < next; ++u) order.push_back(u);
                    use = next;
                }
                CHECK(use == ring_uses.after_tile(start, n == 0));
                end.push_back(use);
                epilogue.push_back(ring_uses.epilogue_use(use, n == tiles - 1));
            }
            for (int u = use; u < use + Cfg::EPI_SLOTS; ++u) order.push_back(u);
            REQUIRE(int(order.size()) == tiles * (k_tiles + Cfg::EPI_SLOTS));
            for (size_t i = 0; i < order.size(); ++i) CHECK(order[i] == int(i));
            // A tile's epilogue borrows slots whose previous uses came before the next tile's first
            // k-tile: the consumers are done with them when they reach the epilogue.
            for (int n = 0; n < tiles; ++n) CHECK(epilogue[n] + Cfg::EPI_SLOTS - 1 - Cfg::STAGES < end[n]);
            for (unsigned seed = 0; seed < 20; ++seed) CHECK(run_ring_model(ring_uses, tiles, seed) == "");
        }
    // Planted bug: a lead of 3 k-tiles puts the second borrowed slot on the next tile's first
    // k-tile's slot; the producer waits for a release the consumers make only after the epilogue.
    RingSchedule<Cfg> too_far(6);
    too_far.lead = Cfg::LEAD + 1;
    CHECK(run_ring_model(too_far, 3, 1) != "");
}

TEST_CASE("09: step 12's epilogue puts each chunk of C in its own place: the borrowed slots and the buffers", "[09]") {
    using Cfg = EpilogueOverlap128x256<__half>;
    CHECK(Cfg::C_CHUNKS == 8);
    CHECK(Cfg::SLOT_CHUNKS == 3);
    CHECK(Cfg::BUFFER_CHUNKS == 2);
    CHECK(Cfg::LEAD == 2);
    // Step 5's ring and buffers, 17 barriers more: still one H200 block.
    CHECK(Cfg::SMEM_BYTES == Cluster2Persistent128x256<__half>::SMEM_BYTES + 17 * 8);
    CHECK(Cfg::SMEM_BYTES <= 227 * 1024);
    CHECK(EpilogueOverlap128x256<__nv_bfloat16>::SMEM_BYTES == Cfg::SMEM_BYTES);
    const int buffers = Cfg::STAGES * Cfg::STAGE_BYTES;
    for (int e = 0; e < Cfg::STAGES; ++e) {
        INFO("first epilogue use " << e);
        const int slot0 = e % Cfg::STAGES, slot1 = (e + 1) % Cfg::STAGES;
        std::vector<int> owner(buffers + Cfg::EPI_BYTES, -1);  // which chunk covers each byte
        for (int c = 0; c < Cfg::CONSUMERS; ++c)
            for (int j = 0; j < Cfg::C_CHUNKS; ++j) {
                const int off = epilogue_chunk_offset<Cfg>(e, c, j);
                CHECK(off % 1024 == 0);  // the swizzle's atom
                REQUIRE(off >= 0);
                REQUIRE(off + Cfg::C_CHUNK_BYTES <= buffers + Cfg::EPI_BYTES);
                // Chunks 0-5 in the two borrowed slots only (the other two hold the next tile's
                // k-tiles meanwhile), 6-7 in the buffers.
                const int slot = off / Cfg::STAGE_BYTES;
                if (j < 3) CHECK(slot == slot0);
                else if (j < 6) CHECK(slot == slot1);
                else CHECK(off >= buffers);
                for (int b = off; b < off + Cfg::C_CHUNK_BYTES; ++b) {
                    CHECK(owner[b] == -1);
                    owner[b] = c * Cfg::C_CHUNKS + j;
                }
            }
        // 16 chunks of 8 KB: the two slots and the buffers, entirely.
        int covered = 0;
        for (int o : owner) covered += o >= 0;
        CHECK(covered == 2 * Cfg::STAGE_BYTES + Cfg::EPI_BYTES);
    }
    // The ladder's row names step 12's kernel.
    const wb::HgemmVariant& v = kHgemmVariants.back();
    CHECK(std::string(v.name) == "epilogue_overlap");
    CHECK(v.info.kernel == (const void*)epilogue_overlap_kernel<Cfg>);
    CHECK(v.info.dynamic_smem == Cfg::SMEM_BYTES);
}

TEST_CASE("09: step 9's A fragments: each element once, from its swizzled address, without bank conflicts", "[09]") {
    using Cfg = Tf32RsTiling;
    // TMA's 128-byte swizzle read backwards: the (k, column) of B's tile that a byte offset holds.
    // B's tile is BN / 32 boxes of BK rows x 32 floats, side by side; in each 1024-byte atom the
    // 16-byte chunk c of row r is stored at chunk c ^ (r % 8).
    auto decode = [](uint32_t off, int& k, int& col) {
        const int box = int(off) / Cfg::B_BOX_BYTES, in_box = int(off) % Cfg::B_BOX_BYTES;
        k = in_box / 128;
        const int chunk = ((in_box % 128) / 16) ^ (k % 8);
        col = box * Cfg::B_BOX_COLS + chunk * 4 + (in_box % 16) / 4;
    };
    // The column of the tile that wgmma row i of a consumer stands for: a bijection onto the
    // consumer's 64 columns, each warp pair inside one 32-column box of C (the epilogue's).
    auto column_of_row = [](int c, int i) { return rs_tile_column(c, i / 16, (i / 8) % 2, i % 8); };
    std::vector<int> owner(Cfg::BN, -1);
    for (int c = 0; c < Cfg::CONSUMERS; ++c)
        for (int i = 0; i < 64; ++i) {
            const int col = column_of_row(c, i);
            REQUIRE(col >= 0);
            REQUIRE(col < Cfg::BN);
            CHECK(owner[col] == -1);
            owner[col] = 64 * c + i;
            CHECK(col / 64 == c);
            CHECK(col % 64 / 32 == i / 16 / 2);
        }
    // The PTX ISA's m64nNk8 register fragment of A: lane 4g + t of warp w holds a_v at row
    // 16w + g + 8 (v % 2), k = t + 4 (v / 2).
    int checked = 0;
    for (int c = 0; c < Cfg::CONSUMERS; ++c)
        for (int kk = 0; kk < Cfg::BK / Cfg::K_STEP; ++kk) {
            std::vector<int> seen(64 * 8, 0);
            for (int w = 0; w < 4; ++w)
                for (int v = 0; v < 4; ++v) {
                    std::vector<int> bank_users(32, 0);
                    for (int lane = 0; lane < 32; ++lane) {
                        const int i = 16 * w + lane / 4 + 8 * (v % 2), k = lane % 4 + 4 * (v / 2);
                        const uint32_t off = rs_fragment_offset(c, w, lane, kk, v);
                        INFO("consumer " << c << " k-step " << kk << " warp " << w << " lane " << lane << " a" << v);
                        REQUIRE(off % 4 == 0);
                        REQUIRE(off < uint32_t(Cfg::B_BYTES));
                        int kd = -1, col = -1;
                        decode(off, kd, col);
                        CHECK(kd == Cfg::K_STEP * kk + k);
                        CHECK(col == column_of_row(c, i));
                        // The kernel computes k-step 0's offsets once and adds 1024 bytes per k-step.
                        CHECK(off == rs_fragment_offset(c, w, lane, 0, v) + uint32_t(kk * Cfg::K_STEP * 128));
                        ++seen[i * 8 + k];
                        ++bank_users[(off / 4) % 32];
                        ++checked;
                    }
                    for (int b = 0; b < 32; ++b) CHECK(bank_users[b] == 1);  // one load, one wavefront
                }
            for (int n : seen) CHECK(n == 1);
        }
    CHECK(checked == Cfg::CONSUMERS * 4 * 4 * 4 * 32);
}

TEST_CASE("09: step 9's epilogue fills each 32 x 32 box of C exactly once per round", "[09]") {
    using Cfg = Tf32RsTiling;
    // A warp pair writes one box per round: lane 4g + t of warp w, half h, slice jj, element e puts
    // row 8 jj + 2t + e, column rs_tile_column(...) % 32 at swizzle128_offset(row, column).
    for (int c = 0; c < Cfg::CONSUMERS; ++c)
        for (int pair = 0; pair < 2; ++pair) {
            std::vector<int> seen(Cfg::C_BOX_ROWS * Cfg::C_BOX_COLS, 0);
            for (int w = 2 * pair; w < 2 * pair + 2; ++w)
                for (int lane = 0; lane < 32; ++lane)
                    for (int jj = 0; jj < Cfg::C_BOX_ROWS / 8; ++jj)
                        for (int h = 0; h < 2; ++h)
                            for (int e = 0; e < 2; ++e) {
                                const int r = 8 * jj + 2 * (lane % 4) + e;
                                const int x = rs_tile_column(c, w, h, lane / 4) % Cfg::C_BOX_COLS;
                                const uint32_t off = swizzle128_offset(r, x);
                                REQUIRE(off < uint32_t(Cfg::C_BOX_BYTES));
                                CHECK(off / 128 == uint32_t(r));  // the swizzle moves 16-byte chunks within a row
                                ++seen[off / 4];
                            }
            for (int n : seen) CHECK(n == 1);
        }
    // The configuration: 48 KB per stage, 4 stages, the epilogue's 32 KB, within one H200 block.
    CHECK(Cfg::STAGE_BYTES == 48 * 1024);
    CHECK(Cfg::SMEM_BYTES == 4 * 48 * 1024 + 32 * 1024 + 64 + 1024);
    CHECK(Cfg::SMEM_BYTES <= 227 * 1024);
    CHECK(Cfg::THREADS == 384);
    REQUIRE(kTf32Variants.size() >= 2);
    CHECK(std::string(kTf32Variants[0].name) == "tf32_persistent");
    CHECK(std::string(kTf32Variants[1].name) == "tf32_rs");
    CHECK(kTf32Variants[1].precision == wb::Precision::tf32);
    CHECK(kTf32Variants[1].min_cc == 90);
}
