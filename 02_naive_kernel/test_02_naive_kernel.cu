// test_02_naive_kernel - every variant against the double-precision reference on the spec's
// shapes, and proof that the check catches a kernel with a planted bug.
#include "kernels.cuh"
#include "testing.cuh"

namespace {

// The classic bug of this chapter: `k < K - 1` drops the last term of every dot product.
__global__ void sgemm_naive_off_by_one(int M, int N, int K, float alpha, const float* A,
                                       const float* B, float beta, float* C) {
    const int col = blockIdx.x * 32 + threadIdx.x;
    const int row = blockIdx.y * 8 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K - 1; ++k) acc += A[row * K + k] * B[k * N + col];
    wb::store_c(&C[row * N + col], acc, alpha, beta);
}
void launch_off_by_one(int M, int N, int K, float alpha, const float* A, const float* B,
                       float beta, float* C, cudaStream_t stream) {
    sgemm_naive_off_by_one<<<dim3(wb::ceil_div(N, 32), wb::ceil_div(M, 8)), dim3(32, 8), 0, stream>>>(
        M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

// Forgets the bounds check's partner: the grid is rounded DOWN, so edge rows/columns stay unwritten.
void launch_grid_rounded_down(int M, int N, int K, float alpha, const float* A, const float* B,
                              float beta, float* C, cudaStream_t stream) {
    const dim3 grid(N / 32, M / 8);
    if (grid.x == 0 || grid.y == 0) return;
    sgemm_naive_coalesced<32, 8><<<grid, dim3(32, 8), 0, stream>>>(M, N, K, alpha, A, B, beta, C);
    WB_LAUNCH_CHECK();
}

}  // namespace

TEST_CASE("02: every variant is right on every shape of the spec", "[gpu][02]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kSgemmVariants));
}

TEST_CASE("02: the check catches planted bugs", "[gpu][02]") {
    WB_REQUIRE_GPU();
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{1000, 1013, 777}}) {
        wb::GemmProblem prob(s, 1.0f, 0.0f, 3);
        INFO("shape " << wb::to_string(s));
        CHECK(prob.verify(launch_naive_coalesced<32, 8>, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_off_by_one, wb::Precision::fp32).pass);
        CHECK_FALSE(prob.verify(launch_grid_rounded_down, wb::Precision::fp32).pass);
    }
}

TEST_CASE("02: the variant table is well formed", "[02]") {
    const auto variants = wb::table(kSgemmVariants);
    REQUIRE(variants.size() >= 3);
    for (size_t i = 0; i < variants.size(); ++i) {
        CHECK(variants[i].run != nullptr);
        CHECK(variants[i].info.kernel != nullptr);
        for (size_t j = i + 1; j < variants.size(); ++j) CHECK(std::string(variants[i].name) != variants[j].name);
    }
}

TEST_CASE("02: bad input exits 2, no GPU exits 3, --help exits 0", "[02]") {
    wb::test::check_program_exit_statuses("02_naive_kernel");
}
