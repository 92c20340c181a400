// test_04_register_unroll - every variant against the double-precision reference on the spec's
// shapes; proof that the check catches the two classic edge bugs of thread tiling; and the
// resources the notes talk about (which variant spills, how many registers the 8x8 tile takes).
#include <stdexcept>
#include <string>

#include "kernels.cuh"
#include "testing.cuh"

using namespace ch04;

namespace {

// BEGIN INSTRUCTOR ONLY: planted-bug kernels, near-copies of the solution
// The two edge mistakes of a thread-tiled kernel, each planted in a copy of the 2D kernel
// (128 x 128 block tile, BK = 8, 8 x 8 thread tile). Both are invisible when M, N and K are
// multiples of the tiles, which is why the spec's shapes are odd.
enum class Bug {
    last_k_tile_dropped,      // the K loop runs over whole BK tiles only: the last K % BK terms are lost
    partial_tiles_unwritten,  // the epilogue writes a thread tile only when all of it lies inside C
};

constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kBugThreads = threads_per_block(kBM, kBN, kTM, kTN);

template <Bug kBug>
__global__ void sgemm_2d_with_bug(int M, int N, int K, float alpha, const float* A, const float* B,
                                  float beta, float* C) {
    __shared__ __align__(16) float As[kBK][kBM + kATilePad];
    __shared__ __align__(16) float Bs[kBK][kBN];
    const int tcol = threadIdx.x % (kBN / kTN) * kTN;
    const int trow = threadIdx.x / (kBN / kTN) * kTM;
    const int row0 = blockIdx.y * kBM;
    const int col0 = blockIdx.x * kBN;

    float acc[kTM][kTN] = {};
    const int k_end = kBug == Bug::last_k_tile_dropped ? K / kBK * kBK : K;  // BUG: rounds K down
    for (int k0 = 0; k0 < k_end; k0 += kBK) {
        load_tile_transposed<kBugThreads, kBM>(A, M, K, row0, k0, As);
        load_tile<kBugThreads>(B, K, N, k0, col0, Bs);
        __syncthreads();
        accumulate_tile(As, Bs, trow, tcol, acc);
        __syncthreads();
    }
    // BUG: a thread tile that hangs over the edge of C is skipped whole.
    if (kBug == Bug::partial_tiles_unwritten && (row0 + trow + kTM > M || col0 + tcol + kTN > N)) return;
    store_thread_tile(acc, M, N, row0 + trow, col0 + tcol, alpha, beta, C);
}

template <Bug kBug>
void launch_with_bug(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                     cudaStream_t stream) {
    const dim3 grid(wb::ceil_div(N, kBN), wb::ceil_div(M, kBM));
    sgemm_2d_with_bug<kBug><<<grid, kBugThreads, 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}
// END INSTRUCTOR ONLY

const wb::SgemmVariant& variant_named(const std::string& name) {
    for (const wb::SgemmVariant& v : kSgemmVariants)
        if (name == v.name) return v;
    FAIL("no variant named " << name);
    throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("04: every variant is right on every shape of the spec", "[gpu][04]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kSgemmVariants));
}

// BEGIN INSTRUCTOR ONLY: the check must catch the planted bugs; tile multiples hide them
TEST_CASE("04: the check catches planted edge bugs", "[gpu][04]") {
    WB_REQUIRE_GPU();
    // K % 8 != 0 and M, N not multiples of 128 (or of 8): both bugs must fail.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{257, 255, 259}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 5);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(launch_2d_thread_tile<kBM, kBN, kBK, kTM, kTN>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_with_bug<Bug::last_k_tile_dropped>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_with_bug<Bug::partial_tiles_unwritten>, wb::Precision::fp32).pass);
    }
    // On a multiple of every tile the same bugs go unnoticed: a test on such shapes proves nothing.
    wb::GemmProblem round(wb::Shape{256, 256, 256}, 1.0f, 0.0f, 5);
    CHECK(round.verify(launch_with_bug<Bug::last_k_tile_dropped>, wb::Precision::fp32).pass);
    CHECK(round.verify(launch_with_bug<Bug::partial_tiles_unwritten>, wb::Precision::fp32).pass);
}
// END INSTRUCTOR ONLY

TEST_CASE("04: the resources match the notes: only the 16x16 tile spills", "[gpu][04]") {
    WB_REQUIRE_GPU();
    for (const wb::SgemmVariant& v : kSgemmVariants) {
        cudaFuncAttributes a{};
        WB_CUDA_CHECK(cudaFuncGetAttributes(&a, v.info.kernel));
        INFO("variant " << v.name << ": " << a.numRegs << " registers, " << a.localSizeBytes
                        << " bytes of local memory per thread");
        if (std::string(v.name) == "2d_128x128x8_16x16") {
            CHECK(a.localSizeBytes > 0);  // 256 accumulators cannot fit in 255 registers
        } else {
            CHECK(a.localSizeBytes == 0);
        }
    }
    // Two 256-thread blocks per SM need at most 65536 / 512 = 128 registers per thread; with one
    // block per SM there is nothing to switch to while that block waits at a barrier. (The BK = 16
    // variant is left out: ptxas gives it 128 registers for sm_86 to sm_90 but 146 for sm_75 and
    // sm_80, see the notes.)
    cudaFuncAttributes a{};
    WB_CUDA_CHECK(cudaFuncGetAttributes(&a, variant_named("2d_128x128x8_8x8").info.kernel));
    INFO("2d_128x128x8_8x8: " << a.numRegs << " registers");
    CHECK(a.numRegs <= 128);
}

TEST_CASE("04: the variant table is well formed", "[04]") {
    const auto variants = wb::table(kSgemmVariants);
    REQUIRE(variants.size() >= 4);
    for (size_t i = 0; i < variants.size(); ++i) {
        INFO("variant " << variants[i].name);
        CHECK(variants[i].run != nullptr);
        CHECK(variants[i].info.kernel != nullptr);  // the harness prints its registers and spills
        CHECK(variants[i].info.threads % 32 == 0);
        CHECK(variants[i].info.threads <= 1024);
        CHECK(variants[i].precision == wb::Precision::fp32);
        for (size_t j = i + 1; j < variants.size(); ++j)
            CHECK(std::string(variants[i].name) != variants[j].name);
    }
    // The thread count is derived from the tiles: one thread per thread tile.
    CHECK(variant_named("1d_64x64x8_8x1").info.threads == 64 * 64 / 8);
    CHECK(variant_named("2d_128x128x8_8x8").info.threads == (128 / 8) * (128 / 8));
    CHECK(variant_named("2d_128x128x8_16x16").info.threads == (128 / 16) * (128 / 16));
}

TEST_CASE("04: bad input exits 2, no GPU exits 3, --help exits 0", "[04]") {
    wb::test::check_program_exit_statuses("04_register_unroll");
}
