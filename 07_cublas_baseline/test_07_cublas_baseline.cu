// test_07_cublas_baseline - the row-major trick (on a CPU model of the column-major contract, and
// on the GPU against the double-precision reference), the wrong call caught by the checker and
// shown to produce C^T, every math mode on the spec's shapes, what the math mode changes in the
// result, the stream and the math mode the launchers leave behind, and the cost measurements; the
// CUTLASS rows (where built): every spec shape, NaN in C with beta = 0, misaligned pointers, the
// padded path against the direct one, and the one line printed when they are not built.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "aligned_operands.cuh"
#include "cuda_handles.cuh"
#include "cublas_costs.cuh"
#include "kernels.cuh"
#include "testing.cuh"

using namespace ch07;

namespace {

// ---- a CPU model of what cublasSgemm computes ------------------------------------------------
// Column-major: element (i, j) of a matrix with leading dimension ld is at [i + j * ld].
// C = alpha * op(A) * op(B) + beta * C with op(A) m x k, op(B) k x n, C m x n, exactly as the
// cuBLAS documentation defines it, summed in double in the order l = 0 .. k-1.
double at_col_major(const std::vector<double>& X, int ld, bool transposed, int row, int col) {
    return transposed ? X[size_t(col) + size_t(row) * ld] : X[size_t(row) + size_t(col) * ld];
}

void model_cublas_sgemm(bool trans_a, bool trans_b, int m, int n, int k, double alpha,
                        const std::vector<double>& A, int lda, const std::vector<double>& B, int ldb,
                        double beta, std::vector<double>& C, int ldc) {
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double sum = 0.0;
            for (int l = 0; l < k; ++l)
                sum += at_col_major(A, lda, trans_a, i, l) * at_col_major(B, ldb, trans_b, l, j);
            double& c = C[size_t(i) + size_t(j) * ldc];
            c = beta == 0.0 ? alpha * sum : alpha * sum + beta * c;
        }
}

// Row-major C = A * B, the plain way, summed in the same order.
std::vector<double> row_major_product(const std::vector<double>& A, const std::vector<double>& B, int M,
                                      int N, int K) {
    std::vector<double> C(size_t(M) * N);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double sum = 0.0;
            for (int l = 0; l < K; ++l) sum += A[size_t(i) * K + l] * B[size_t(l) * N + j];
            C[size_t(i) * N + j] = sum;
        }
    return C;
}

std::vector<double> random_doubles(size_t count, uint64_t stream) {
    std::vector<float> f(count);
    wb::fill_random(f.data(), count, 11, stream);
    return std::vector<double>(f.begin(), f.end());
}

// Row-major R x C -> row-major C x R.
template <class T>
std::vector<T> transposed(const std::vector<T>& X, int rows, int cols) {
    std::vector<T> Y(X.size());
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) Y[size_t(j) * rows + i] = X[size_t(i) * cols + j];
    return Y;
}

// True when the GPU can run TF32 (sm_80 and later).
bool has_tf32() {
    return wb::query_device(0).cc_number() >= 80;
}

}  // namespace

// ---- on any machine ----------------------------------------------------------------------------

TEST_CASE("07: the row-major trick, on a CPU model of cuBLAS's column-major contract", "[07]") {
    for (wb::Shape s : {wb::Shape{1, 1, 1}, wb::Shape{2, 3, 5}, wb::Shape{17, 31, 7}, wb::Shape{33, 47, 65},
                        wb::Shape{8, 8, 8}}) {
        const int M = s.m, N = s.n, K = s.k;
        INFO("shape " << wb::to_string(s));
        const std::vector<double> A = random_doubles(size_t(M) * K, 1);  // row-major M x K
        const std::vector<double> B = random_doubles(size_t(K) * N, 2);  // row-major K x N
        const std::vector<double> want = row_major_product(A, B, M, N, K);

        // The trick: operands swapped, no transposes, m = N, n = M, ld's N, K, N.
        std::vector<double> C(size_t(M) * N, NAN);
        model_cublas_sgemm(false, false, N, M, K, 1.0, B, N, A, K, 0.0, C, N);
        CHECK(C == want);  // bit for bit: the same products, summed in the same order

        // The first attempt: transposes instead of the swap. The numbers are those of A * B, but
        // they are written column-major, so the buffer holds C^T (row-major N x M).
        std::vector<double> Ct(size_t(M) * N, NAN);
        model_cublas_sgemm(true, true, M, N, K, 1.0, A, K, B, N, 0.0, Ct, M);
        CHECK(Ct == transposed(want, M, N));
        if (M > 1 && N > 1) CHECK_FALSE(Ct == want);
    }
}

TEST_CASE("07: the variant tables are well formed", "[07]") {
    const auto sgemm = wb::table(kSgemmVariants);
    const auto hgemm = wb::table(kHgemmVariants);
    const auto bgemm = wb::table(kBgemmVariants);
    REQUIRE(sgemm.size() == 4);
    REQUIRE(hgemm.size() == 1);
    REQUIRE(bgemm.size() == 1);
    CHECK(bgemm[0].run == wb::cublas_bgemm);
    CHECK(bgemm[0].min_cc >= 80);  // BF16 tensor cores arrived with Ampere
    const auto fp8 = wb::table(kFp8Variants);
    REQUIRE(fp8.size() == 1);
    CHECK(fp8[0].run == wb::cublaslt_fp8);  // the FP8 baseline's own call
    CHECK(fp8[0].min_cc >= 89);             // FP8 tensor cores arrived with Ada (8.9) and Hopper
    CHECK(chapter_tables().fp8.size() == fp8.size());
    std::vector<std::string> names;
    for (const auto& v : sgemm) {
        INFO("variant " << v.name);
        CHECK(v.run != nullptr);
        CHECK(std::string(v.what).size() > 0);
        // TF32 variants must say so (the harness checks them against TF32-rounded inputs and
        // compares them with the TF32 baseline), and must be skipped before Ampere.
        if (v.precision == wb::Precision::tf32) CHECK(v.min_cc >= 80);
        names.push_back(v.name);
    }
    for (const auto& v : hgemm) {
        CHECK(v.run != nullptr);
        names.push_back(v.name);
    }
    names.push_back(bgemm[0].name);
    names.push_back(fp8[0].name);
    CHECK(sgemm[0].run == wb::cublas_sgemm);  // the baseline's own call, to see the noise
    CHECK(sgemm[2].precision == wb::Precision::tf32);
    CHECK(sgemm[3].precision == wb::Precision::tf32);
    for (size_t i = 0; i < names.size(); ++i) {
        // The harness prints its baseline rows under these names: a variant must not look like one.
        for (const char* baseline : {"cublas_sgemm", "cublas_tf32", "cublas_hgemm", "cublas_bgemm", "cublaslt_fp8"})
            CHECK(names[i] != baseline);
        for (size_t j = i + 1; j < names.size(); ++j) CHECK(names[i] != names[j]);
    }
}

TEST_CASE("07: --costs-only and --no-costs", "[07]") {
    costs::Settings s;
    const auto extras = costs::extra_options(s);
    wb::Options opt;
    std::string error;
    const char* only[] = {"prog", "--costs-only"};
    REQUIRE(wb::parse_options(2, only, opt, error, extras));
    CHECK(s.costs_only);
    CHECK_FALSE(s.no_costs);
    CHECK(costs::check_settings(s, error));
    const char* both[] = {"prog", "--no-costs", "--size", "64"};
    REQUIRE(wb::parse_options(4, both, opt, error, extras));
    CHECK(s.no_costs);
    CHECK_FALSE(costs::check_settings(s, error));  // both flags set now
    CHECK(error.find("exclude") != std::string::npos);
    CHECK(wb::usage("07_cublas_baseline", extras).find("--costs-only") != std::string::npos);
}

TEST_CASE("07: the cost table prints '-' for what was not measured", "[07]") {
    costs::ProcessStart start;  // nothing measured
    costs::Costs c;
    c.create_first_ms = 12.5;
    c.reps = 10;
    const std::string text = costs::format(start, c);
    CHECK(text.find("12.500 ms") != std::string::npos);
    CHECK(text.find("median of 10") != std::string::npos);
    CHECK(text.find("cublasCreate, the first in this process") != std::string::npos);
    CHECK(costs::cost_line("x", -1).find(" -\n") != std::string::npos);
}

TEST_CASE("07: bad input exits 2, no GPU exits 3, --help exits 0", "[07]") {
    wb::test::check_program_exit_statuses("07_cublas_baseline");
    wb::test::TempDir dir;
    const wb::test::RunResult both =
        wb::test::run_program("07_cublas_baseline", "--costs-only --no-costs", dir);
    CHECK(both.status == wb::kExitBadInput);
    const wb::test::RunResult costs_no_gpu =
        wb::test::run_program("07_cublas_baseline", "--costs-only", dir, "CUDA_VISIBLE_DEVICES=-1");
    CHECK(costs_no_gpu.status == wb::kExitNoDevice);
}

TEST_CASE("07: the CUTLASS rows are either built and well formed, or named in one line", "[07][cutlass]") {
    const CutlassRows rows = cutlass_rows();
    const ChapterTables t = chapter_tables();
    const size_t count = rows.sgemm.size() + rows.hgemm.size() + rows.bgemm.size();
    INFO("CUTLASS rows built: " << count << "; not built: '" << rows.not_built << "'");
    // The chapter's tables are the cuBLAS rows followed by exactly these.
    CHECK(t.sgemm.size() == wb::table(kSgemmVariants).size() + rows.sgemm.size());
    CHECK(t.hgemm.size() == wb::table(kHgemmVariants).size() + rows.hgemm.size());
    CHECK(t.bgemm.size() == wb::table(kBgemmVariants).size() + rows.bgemm.size());
    CHECK(t.not_built == rows.not_built);
    if (count == 0) {
        // Without CUTLASS: one line that says what is missing and how to get it.
        CHECK(rows.not_built.find("CUTLASS rows not built") == 0);
        CHECK(rows.not_built.find("pip install nvidia-cutlass") != std::string::npos);
        CHECK(rows.not_built.find("CUTLASS_INC") != std::string::npos);
    } else {
        // The three CUTLASS 2.x rows come together; the Hopper rows come together or say why not.
        CHECK(rows.sgemm.size() == 2);
        const bool hopper = rows.bgemm.size() == 1;
        CHECK(rows.hgemm.size() == (hopper ? 2u : 1u));
        CHECK(rows.not_built.empty() == hopper);
        if (!hopper) CHECK(rows.not_built.find("sm_90") != std::string::npos);
        CHECK(rows.sgemm[0].precision == wb::Precision::fp32);
        CHECK(rows.sgemm[1].precision == wb::Precision::tf32);
        for (const auto& v : rows.sgemm) CHECK(v.min_cc >= 80);
        for (const auto& v : rows.hgemm) CHECK(v.min_cc >= 80);
        for (const auto& v : rows.bgemm) CHECK(v.min_cc == 90);
    }
    CHECK(rows.not_built.find('\n') == std::string::npos);
    std::vector<std::string> names;
    for (const auto& v : t.sgemm) names.push_back(v.name);
    for (const auto& v : t.hgemm) names.push_back(v.name);
    for (const auto& v : t.bgemm) names.push_back(v.name);
    std::vector<std::string> sorted = names;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());  // unique names
}

TEST_CASE("07: the program prints the CUTLASS 'not built' line once, or nothing", "[07][cutlass]") {
    wb::test::TempDir dir;
    // --no-costs goes straight to the rows: the line comes before the device check (exit 3 here).
    const wb::test::RunResult r = wb::test::run_program("07_cublas_baseline", "--no-costs --size 64", dir,
                                                        "CUDA_VISIBLE_DEVICES=-1");
    CHECK(r.status == wb::kExitNoDevice);
    const std::string line = cutlass_rows().not_built;
    if (line.empty()) {
        CHECK(r.out.find("not built") == std::string::npos);
    } else {
        const size_t at = r.out.find(line);
        CHECK(at != std::string::npos);
        CHECK(r.out.find(line, at + 1) == std::string::npos);
    }
}

// ---- on a GPU ----------------------------------------------------------------------------------

TEST_CASE("07: every mode is right on every shape of the spec", "[gpu][07]") {
    WB_REQUIRE_GPU();
    wb::test::check_variants(wb::table(kSgemmVariants));
    wb::test::check_variants(wb::table(kHgemmVariants));
    wb::test::check_variants(wb::table(kFp8Variants));  // skipped below compute capability 8.9
}

TEST_CASE("07: the row-major trick passes; transposing instead of swapping fails", "[gpu][07]") {
    WB_REQUIRE_GPU();
    // Non-square shapes, a square one (where the wrong result is exactly C^T), and beta != 0.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{64, 64, 64}, wb::Shape{1000, 1013, 777}}) {
        for (float beta : {0.0f, 0.5f}) {
            wb::GemmProblem prob(s, 1.0f, beta, 5);
            INFO("shape " << wb::to_string(s) << ", beta " << beta);
            CHECK(prob.verify(wb::cublas_sgemm, wb::Precision::fp32).pass);
            CHECK(prob.verify(launch_sgemm_math_mode<CUBLAS_DEFAULT_MATH>, wb::Precision::fp32).pass);
            CHECK_FALSE(prob.verify(launch_sgemm_transposed_not_swapped, wb::Precision::fp32).pass);
        }
    }
}

TEST_CASE("07: the wrong call writes C^T, exactly", "[gpu][07]") {
    WB_REQUIRE_GPU();
    // Its numbers are right, only their layout is not: transposed back on the host, the buffer
    // passes the same check that the buffer as it is fails.
    for (wb::Shape s : {wb::Shape{33, 47, 65}, wb::Shape{64, 64, 64}}) {
        INFO("shape " << wb::to_string(s));
        const int M = s.m, N = s.n, K = s.k;
        std::vector<float> A(size_t(M) * K), B(size_t(K) * N);
        wb::fill_random(A.data(), A.size(), 9, 1);
        wb::fill_random(B.data(), B.size(), 9, 2);
        wb::DeviceBuffer<float> dA(A.size()), dB(B.size()), dC(size_t(M) * N);
        dA.upload(A);
        dB.upload(B);
        launch_sgemm_transposed_not_swapped(M, N, K, 1.0f, dA.get(), dB.get(), 0.0f, dC.get(), nullptr);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> buffer = dC.download();

        wb::GemmView g;
        g.s = s;
        g.A = A.data();
        g.B = B.data();
        std::vector<double> value, scale;
        wb::reference_full(g, value, scale);
        const wb::Tolerance tol = wb::tolerance_for(wb::Precision::fp32, K);
        CHECK_FALSE(wb::check_full(buffer.data(), M, N, value, scale, tol).pass);
        // The buffer is the row-major N x M matrix C^T; transposing it gives C.
        const std::vector<float> back = transposed(buffer, N, M);
        const wb::CheckResult r = wb::check_full(back.data(), M, N, value, scale, tol);
        INFO(r.describe());
        CHECK(r.pass);
    }
}

TEST_CASE("07: TF32 changes the result of the same cublasSgemm call", "[gpu][07]") {
    WB_REQUIRE_GPU();
    if (!has_tf32()) {
        WB_SKIP_CASE("TF32 needs sm_80 or later");
    }
    // Against the FP32 reference (inputs NOT rounded), FP32 arithmetic is accurate to ~1e-7;
    // TF32 keeps 10 of the 23 mantissa bits of each input, so its products are off by ~1e-4.
    // The bound of the TF32 check is computed from the TF32-rounded inputs: both TF32 calls pass
    // it. (512^3: large enough that cuBLAS picks tensor-core kernels when it is allowed to.)
    wb::GemmProblem prob(wb::Shape{512, 512, 512}, 1.0f, 0.0f, 5);
    const wb::CheckResult fp32 = prob.verify(wb::cublas_sgemm, wb::Precision::fp32);
    const wb::CheckResult pedantic =
        prob.verify(launch_sgemm_math_mode<CUBLAS_PEDANTIC_MATH>, wb::Precision::fp32);
    const wb::CheckResult tf32_mode =
        prob.verify(launch_sgemm_math_mode<CUBLAS_TF32_TENSOR_OP_MATH>, wb::Precision::fp32);
    const wb::CheckResult gemmex_tf32 = prob.verify(wb::cublas_tf32, wb::Precision::fp32);
    INFO("normwise relative error against FP32 inputs: sgemm "
         << fp32.rel_err << ", pedantic " << pedantic.rel_err << ", TF32 math mode " << tf32_mode.rel_err
         << ", GemmEx TF32 " << gemmex_tf32.rel_err);
    CHECK(fp32.pass);
    CHECK(pedantic.pass);
    CHECK(fp32.rel_err < 1e-6);
    CHECK(pedantic.rel_err < 1e-6);
    CHECK(tf32_mode.rel_err > 20 * fp32.rel_err);
    CHECK(gemmex_tf32.rel_err > 20 * fp32.rel_err);
    CHECK(tf32_mode.rel_err < 1e-2);
    CHECK(prob.verify(launch_sgemm_math_mode<CUBLAS_TF32_TENSOR_OP_MATH>, wb::Precision::tf32).pass);
    CHECK(prob.verify(wb::cublas_tf32, wb::Precision::tf32).pass);
}

TEST_CASE("07: a math-mode variant leaves the shared handle as it found it", "[gpu][07]") {
    WB_REQUIRE_GPU();
    wb::GemmProblem prob(wb::Shape{64, 48, 40}, 1.0f, 0.0f, 5);
    cublasHandle_t h = wb::cublas_handle();
    REQUIRE(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH) == CUBLAS_STATUS_SUCCESS);
    CHECK(prob.verify(launch_sgemm_math_mode<CUBLAS_PEDANTIC_MATH>, wb::Precision::fp32).pass);
    cublasMath_t mode = CUBLAS_PEDANTIC_MATH;
    REQUIRE(cublasGetMathMode(h, &mode) == CUBLAS_STATUS_SUCCESS);
    CHECK(mode == CUBLAS_DEFAULT_MATH);
    if (has_tf32()) {
        CHECK(prob.verify(launch_sgemm_math_mode<CUBLAS_TF32_TENSOR_OP_MATH>, wb::Precision::tf32).pass);
        REQUIRE(cublasGetMathMode(h, &mode) == CUBLAS_STATUS_SUCCESS);
        CHECK(mode == CUBLAS_DEFAULT_MATH);
    }
}

TEST_CASE("07: cuBLAS runs on the stream it is given", "[gpu][07]") {
    WB_REQUIRE_GPU();
    const wb::Stream stream;
    {
        wb::GemmProblem prob(wb::Shape{65, 33, 17}, 1.0f, 0.0f, 5);
        for (const wb::SgemmVariant& v : wb::table(kSgemmVariants)) {
            if (wb::query_device(0).cc_number() < v.min_cc) continue;
            INFO("variant " << v.name);
            CHECK(prob.verify(v, stream).pass);  // poisoned, run and read back on `stream`
            cudaStream_t used = nullptr;
            REQUIRE(cublasGetStream(wb::cublas_handle(), &used) == CUBLAS_STATUS_SUCCESS);
            CHECK(used == stream);
        }
        CHECK(prob.verify(kHgemmVariants[0], stream).pass);
    }
    // The handle keeps a stream that is about to be destroyed: point it back at the default one.
    REQUIRE(cublasSetStream(wb::cublas_handle(), nullptr) == CUBLAS_STATUS_SUCCESS);
}

TEST_CASE("07: the cost measurements are plausible", "[gpu][07]") {
    WB_REQUIRE_GPU();
    const wb::DeviceFacts dev = wb::query_device(0);
    const costs::Costs c = costs::measure(dev, 3);
    for (double ms : {c.create_first_ms, c.first_call_ms, c.second_call_ms, c.steady_wall_ms, c.steady_gpu_ms,
                      c.new_shape_first_ms, c.fp16_first_ms, c.create_second_ms, c.second_handle_first_ms,
                      c.destroy_ms, c.create_again_ms, c.destroy_again_ms}) {
        CHECK(std::isfinite(ms));
        CHECK(ms > 0);
    }
    CHECK((c.tf32_first_ms > 0) == (dev.cc_number() >= 80));
    // A call and its synchronize take at least the GPU time of the call.
    CHECK(c.steady_wall_ms >= 0.9 * c.steady_gpu_ms);
    CHECK(c.first_call_ms >= 0.9 * c.steady_gpu_ms);
    const std::string text = costs::format(costs::ProcessStart{}, c);
    CHECK(text.find("steady state") != std::string::npos);
}

// ---- the CUTLASS rows, on a GPU ------------------------------------------------------------------

TEST_CASE("07: every CUTLASS row is right on every shape of the spec (NaN in C when beta = 0)", "[gpu][07][cutlass]") {
    WB_REQUIRE_GPU();
    const CutlassRows rows = cutlass_rows();
    if (rows.sgemm.empty() && rows.hgemm.empty() && rows.bgemm.empty()) {
        WB_SKIP_CASE(rows.not_built);
    }
    // The spec's list has beta = 0 cases (C poisoned with NaN: reading it fails), shapes whose K
    // or N is no multiple of 8 (the padded path) and multiples (the direct path).
    wb::test::check_variants(rows.sgemm);
    wb::test::check_variants(rows.hgemm);
    wb::test::check_variants(rows.bgemm);
}

namespace {

// Runs `run` on A, B (and C0 when beta != 0) placed `offset` elements past a 256-byte aligned
// allocation, C poisoned with NaN when beta == 0; returns C.
template <class T, class Fn>
std::vector<float> run_at_offset(Fn run, int M, int N, int K, const std::vector<T>& A, const std::vector<T>& B,
                                 float beta, const std::vector<float>& C0, size_t offset) {
    wb::DeviceBuffer<T> dA(A.size() + offset), dB(B.size() + offset);
    wb::DeviceBuffer<float> dC(C0.size() + offset);
    WB_CUDA_CHECK(cudaMemcpy(dA.get() + offset, A.data(), A.size() * sizeof(T), cudaMemcpyHostToDevice));
    WB_CUDA_CHECK(cudaMemcpy(dB.get() + offset, B.data(), B.size() * sizeof(T), cudaMemcpyHostToDevice));
    if (beta != 0.0f) {
        WB_CUDA_CHECK(cudaMemcpy(dC.get() + offset, C0.data(), C0.size() * sizeof(float), cudaMemcpyHostToDevice));
    } else {
        WB_CUDA_CHECK(cudaMemset(dC.get(), 0xFF, dC.size() * sizeof(float)));  // all NaN
    }
    run(M, N, K, 1.25f, dA.get() + offset, dB.get() + offset, beta, dC.get() + offset, nullptr);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> C(C0.size());
    WB_CUDA_CHECK(cudaMemcpy(C.data(), dC.get() + offset, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return C;
}

template <class T>
std::vector<T> random_inputs(size_t count, uint64_t stream);
template <>
std::vector<float> random_inputs<float>(size_t count, uint64_t stream) {
    std::vector<float> v(count);
    wb::fill_random(v.data(), count, 21, stream);
    return v;
}
template <>
std::vector<__half> random_inputs<__half>(size_t count, uint64_t stream) {
    return wb::to_half(random_inputs<float>(count, stream));
}
template <>
std::vector<__nv_bfloat16> random_inputs<__nv_bfloat16>(size_t count, uint64_t stream) {
    return wb::to_bf16(random_inputs<float>(count, stream));
}

// Misaligned pointers force the padded path on a shape the kernel could run directly: the result
// must be bit for bit the direct one (same kernel, same problem, same order of sums).
template <class T, class Fn>
void check_offsets(const char* name, Fn run) {
    const int M = 72, N = 96, K = 64;  // multiples of 8: aligned pointers need no copy
    const std::vector<T> A = random_inputs<T>(size_t(M) * K, 1), B = random_inputs<T>(size_t(K) * N, 2);
    const std::vector<float> C0 = random_inputs<float>(size_t(M) * N, 3);
    for (float beta : {0.0f, 0.5f}) {
        INFO(name << ", beta " << beta);
        const std::vector<float> direct = run_at_offset(run, M, N, K, A, B, beta, C0, 0);
        const std::vector<float> shifted = run_at_offset(run, M, N, K, A, B, beta, C0, 1);
        CHECK(std::all_of(direct.begin(), direct.end(), [](float x) { return std::isfinite(x); }));
        CHECK(std::equal(direct.begin(), direct.end(), shifted.begin(),
                         [](float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }));
    }
}

}  // namespace

TEST_CASE("07: CUTLASS rows on misaligned pointers give the aligned result", "[gpu][07][cutlass]") {
    WB_REQUIRE_GPU();
    const CutlassRows rows = cutlass_rows();
    const int cc = wb::query_device(0).cc_number();
    int ran = 0;
    for (const auto& v : rows.sgemm)
        if (cc >= v.min_cc) check_offsets<float>(v.name, v.run), ++ran;
    for (const auto& v : rows.hgemm)
        if (cc >= v.min_cc) check_offsets<__half>(v.name, v.run), ++ran;
    for (const auto& v : rows.bgemm)
        if (cc >= v.min_cc) check_offsets<__nv_bfloat16>(v.name, v.run), ++ran;
    if (ran == 0) {
        WB_SKIP_CASE("no CUTLASS row built for this GPU");
    }
}

TEST_CASE("07: the padded workspace is used only when the operands do not fit", "[gpu][07][cutlass]") {
    WB_REQUIRE_GPU();
    wb::DeviceBuffer<__half> A(64 * 72 + 8), B(72 * 80 + 8);
    wb::DeviceBuffer<float> C(64 * 80 + 8);
    using Op = AlignedOperands<__half, 8>;
    const Op aligned(64, 80, 72, A.get(), B.get(), 0.0f, C.get(), nullptr);
    CHECK_FALSE(aligned.copies());  // the sweep's shapes: the caller's buffers, untouched
    CHECK(aligned.A() == A.get());
    CHECK(aligned.C() == C.get());
    const Op odd_k(64, 80, 67, A.get(), B.get(), 0.0f, C.get(), nullptr);
    CHECK(odd_k.copies());
    CHECK(odd_k.K() == 72);
    CHECK(odd_k.N() == 80);
    CHECK(odd_k.C() == C.get());  // N fits: C is written in place
    const Op odd_n(64, 77, 72, A.get(), B.get(), 0.0f, C.get(), nullptr);
    CHECK(odd_n.N() == 80);
    CHECK(odd_n.A() == A.get());  // K fits: A is read in place
    CHECK(odd_n.C() != C.get());
    odd_n.finish();  // before the next AlignedOperands, which may grow (and move) the workspace
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const Op shifted(64, 80, 72, A.get() + 1, B.get(), 0.0f, C.get(), nullptr);
    CHECK(shifted.copies());
    CHECK(shifted.A() != A.get() + 1);
    CHECK(shifted.B() == B.get());  // only the misaligned operand is copied
}
