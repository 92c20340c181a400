// test_02_naive_kernel - every variant against the double-precision reference on the spec's
// shapes, and proof that the check catches a kernel with a planted bug.
#include "kernels.cuh"
#include "testing.cuh"

using namespace ch02;

namespace {

// BEGIN INSTRUCTOR ONLY: planted-bug kernels, near-copies of the solution
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
// END INSTRUCTOR ONLY

}  // namespace

TEST_CASE("02: every variant is right on every shape of the spec", "[gpu][02]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kSgemmVariants));
}

// BEGIN INSTRUCTOR ONLY: the check must catch the planted bugs above
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
// END INSTRUCTOR ONLY

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

// ---- 02_first_program: the whole CUDA flow written out, without the harness ------------------
// The standalone program keeps the workbook's exit statuses. Its sizes are read before any GPU
// work, so bad input gets 2 with or without a GPU; a machine with no usable GPU gets 3.
TEST_CASE("02: the first program: bad input exits 2, no GPU exits 3, --help exits 0", "[02]") {
    const std::string prog = "02_first_program";
    wb::test::TempDir dir;
    const wb::test::RunResult help = wb::test::run_program(prog, "--help", dir);
    REQUIRE(help.status == wb::kExitOk);  // and so the program was built next to this test
    CHECK(help.out.find("usage: 02_first_program [M N K] [--plant-error]") != std::string::npos);
    for (const char* args : {"abc 5 5", "0 5 5", "5 -3 5", "5 5 7x", "1e3 1 1", "5 5", "1 2 3 4", "--bogus",
                             "--plant-error 5 5 5", "600000 1 1", "50000 50000 1"}) {
        for (const char* env : {"", "CUDA_VISIBLE_DEVICES=-1"}) {
            const wb::test::RunResult r = wb::test::run_program(prog, args, dir, env);
            INFO(env << " " << prog << " " << args << " -> status " << r.status << ", stderr: " << r.err);
            CHECK(r.status == wb::kExitBadInput);
            CHECK(r.err.rfind(prog + ": error: ", 0) == 0);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
            CHECK(r.out.empty());
        }
    }
    for (const char* args : {"", "8 8 8", "8 8 8 --plant-error"}) {
        const wb::test::RunResult r = wb::test::run_program(prog, args, dir, "CUDA_VISIBLE_DEVICES=-1");
        INFO("no GPU: " << prog << " " << args << " -> status " << r.status << ", stderr: " << r.err);
        CHECK(r.status == wb::kExitNoDevice);
        CHECK(r.err.rfind(prog + ": error: no usable CUDA device", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());
    }
}

// On odd shapes (the grid's last blocks overhang C in both directions, K = 1 and 2 included) the
// program must say PASS; with one entry of C changed after the copy back it must say FAIL, or its
// check proves nothing. 2048^3 costs too much to check on the CPU in full, so rows are sampled,
// and the planted error (in the last row, always among them) must still be found.
TEST_CASE("02: the first program passes on odd shapes, and its check catches a planted error", "[gpu][02]") {
    WB_REQUIRE_GPU();
    const std::string prog = "02_first_program";
    wb::test::TempDir dir;
    for (const std::string shape :
         {"1 1 1", "67 45 33", "130 97 75", "1 300 2", "257 1 513", "33 47 1", "2048 2048 2048"}) {
        const wb::test::RunResult good = wb::test::run_program(prog, shape, dir);
        INFO(prog << " " << shape << " -> status " << good.status << "\n" << good.out << good.err);
        CHECK(good.status == wb::kExitOk);
        CHECK(good.out.find("\nPASS: ") != std::string::npos);
        CHECK(good.out.find("FAIL") == std::string::npos);
        CHECK(good.err.empty());
        if (shape == "2048 2048 2048") {  // a sample of the rows, not all of them
            CHECK(good.out.find(" of 2048 rows)") != std::string::npos);
            CHECK(good.out.find("(2048 of 2048 rows)") == std::string::npos);
        }
        const wb::test::RunResult bad = wb::test::run_program(prog, shape + " --plant-error", dir);
        INFO(prog << " " << shape << " --plant-error -> status " << bad.status << "\n" << bad.out << bad.err);
        CHECK(bad.status == wb::kExitVerifyFailed);
        CHECK(bad.out.find("\nFAIL: 1 of ") != std::string::npos);
    }
}
