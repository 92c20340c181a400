// test_toolbox.cu - tests of the header-only toolbox (options, data, verify, timing, cublas, csv):
// the CPU cases run everywhere, the GPU cases where a GPU is (REQUIRE_GPU=1: a missing one fails).
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "catch_compat.hpp"
#include "csv.cuh"
#include "cublas.cuh"
#include "timing.cuh"

namespace wb {
namespace test {
void mark_skipped_no_gpu();  // test_main.cpp: the case counts as skipped for lack of a GPU
bool gpu_required();
}  // namespace test
}  // namespace wb

using namespace wb;

#define TOOLBOX_REQUIRE_GPU()                                                                   \
    do {                                                                                        \
        int n_ = 0;                                                                             \
        if (cudaGetDeviceCount(&n_) != cudaSuccess || n_ == 0) {                                \
            if (::wb::test::gpu_required()) FAIL("REQUIRE_GPU=1 but no CUDA device is usable"); \
            ::wb::test::mark_skipped_no_gpu();                                                  \
            WB_SKIP_NOW("no usable CUDA device");                                               \
        }                                                                                       \
    } while (0)

namespace {

Options parsed(std::vector<const char*> args, const std::vector<ExtraOption>& extras = {}) {
    args.insert(args.begin(), "prog");
    return parse(int(args.size()), args.data(), Options{}, extras);
}

std::string rejection(std::vector<const char*> args) {
    try {
        parsed(args);
    } catch (const BadInput& e) {
        return e.what();
    }
    return "";
}

// A row-major product in FP32 the way a plain kernel computes it, optionally on TF32-rounded products.
std::vector<float> float_gemm(const std::vector<float>& A, const std::vector<float>& B, Shape s, bool tf32 = false) {
    std::vector<float> C(size_t(s.m) * s.n);
    for (int i = 0; i < s.m; ++i)
        for (int j = 0; j < s.n; ++j) {
            float acc = 0;
            for (int k = 0; k < s.k; ++k) {
                const float a = A[size_t(i) * s.k + k], b = B[size_t(k) * s.n + j];
                acc += tf32 ? float(seen_as(a, Precision::tf32) * seen_as(b, Precision::tf32)) : a * b;
            }
            C[size_t(i) * s.n + j] = acc;
        }
    return C;
}

std::vector<float> host_matrix(uint64_t key, int which, size_t count) {
    std::vector<float> v(count);
    for (size_t i = 0; i < count; ++i) v[i] = value(key, which, i);
    return v;
}

Check check_float(const std::vector<float>& C, const std::vector<float>& A, const std::vector<float>& B, Shape s,
                  Precision p = Precision::fp32) {
    std::vector<Entry> e = positions(s, 4096, 11);
    check_on_cpu(e, A, B, std::vector<float>(C.size()), C, s, 1.0f, 0.0f, p);
    return judge(e, tolerance_for(p, s.k), "test");
}

}  // namespace

TEST_CASE("toolbox: the options of every chapter program", "[toolbox]") {
    Options o = parsed({"--size", "1024"});
    REQUIRE(o.shapes.size() == 1);
    CHECK((o.shapes[0].m == 1024 && o.shapes[0].n == 1024 && o.shapes[0].k == 1024));
    o = parsed({"--sizes=1000x1013x4097,7", "--alpha", "-1.5", "--beta", "0.5", "--seed", "9", "--reps", "3"});
    REQUIRE(o.shapes.size() == 2);
    CHECK((o.shapes[0].m == 1000 && o.shapes[0].n == 1013 && o.shapes[0].k == 4097 && o.shapes[1].k == 7));
    CHECK((o.alpha == -1.5f && o.beta == 0.5f && o.seed == 9 && o.reps == 3 && o.warmup == 2 && o.check));
    o = parsed({"--m", "3", "--n", "5", "--k", "7", "--no-check", "--variant", "a,b"});
    CHECK((o.shapes.size() == 1 && o.shapes[0].m == 3 && o.shapes[0].n == 5 && o.shapes[0].k == 7));
    CHECK((!o.check && o.variant == "a,b"));
    std::string json;
    bool quick = false;
    o = parsed({"--json", "out.json", "--quick"}, {{"json", "FILE", &json}, {"quick", "", nullptr, &quick}});
    CHECK((json == "out.json" && quick && o.shapes.empty()));
    CHECK(parsed({"--help"}).help);

    const std::vector<std::pair<std::vector<const char*>, std::string>> bad = {
        {{"--size", "10x"}, "option --size: '10x' is not a size: write S or MxNxK, e.g. 1024 or 1000x1013x777"},
        {{"--size", "0"}, "option --size needs a whole number from 1 to 500000, got '0'"},
        {{"--size", "-3"}, "option --size needs a whole number from 1 to 500000, got '-3'"},
        {{"--size", "600000"}, "option --size needs a whole number from 1 to 500000, got '600000'"},
        {{"--size", "50000x50000x1"}, "option --size: shape 50000x50000x1 has a matrix of more than 2^31-1 elements"},
        {{"--reps", "1000000000000"}, "option --reps needs a whole number from 1 to 1000000, got '1000000000000'"},
        {{"--warmup", "0"}, "option --warmup needs a whole number from 1 to 1000000, got '0'"},
        {{"--m", "3"}, "--m, --n and --k go together: give all three"},
        {{"--m", "3", "--n", "3", "--k", "3", "--size", "4"}, "give either --m/--n/--k or --size/--sizes, not both"},
        {{"--beta", "nan"}, "option --beta needs a finite number, got 'nan'"},
        {{"--alpha", "1e99"}, "option --alpha needs a finite number, got '1e99'"},
        {{"--variant"}, "option --variant needs a value"},
        {{"--csv="}, "option --csv needs a value"},
        {{"--frobnicate"}, "unknown option '--frobnicate' (see --help)"},
        {{"--csv", "/nonexistent-folder/x.csv"},
         "option --csv: cannot write '/nonexistent-folder/x.csv': No such file or directory"},
    };
    for (const auto& [args, message] : bad) {
        INFO(args[0]);
        CHECK(rejection(args) == message);
    }
}

TEST_CASE("toolbox: the data follow from the key alone", "[toolbox]") {
    std::set<float> seen;
    for (size_t i = 0; i < 10000; ++i) {
        const float v = value(42, kA, i);
        REQUIRE((v >= -1.0f && v < 1.0f));
        REQUIRE(v * 8388608.0f == std::floor(v * 8388608.0f));  // a multiple of 2^-23: exact in FP32
        REQUIRE(v == value(42, kA, i));
        seen.insert(v);
    }
    CHECK(seen.size() > 9990);
    int same = 0;
    for (size_t i = 0; i < 1000; ++i)
        same += value(42, kA, i) == value(43, kA, i) || value(42, kA, i) == value(42, kB, i);
    CHECK(same < 5);
    CHECK(float(store_as<__half>(0.1f)) == __half2float(__float2half_rn(0.1f)));
}

TEST_CASE("toolbox: the check catches wrong entries and coarse arithmetic", "[toolbox]") {
    const Shape s{37, 29, 301};
    const std::vector<float> A = host_matrix(5, kA, size_t(s.m) * s.k), B = host_matrix(5, kB, size_t(s.k) * s.n);
    std::vector<float> C = float_gemm(A, B, s);
    Check r = check_float(C, A, B, s);
    CHECK(r.pass);
    CHECK(r.checked == s.m * s.n);
    CHECK(r.rel_err < r.normwise / 3);

    std::vector<float> one_off = C;
    one_off[5 * s.n + 7] += 0.1f;
    r = check_float(one_off, A, B, s);
    CHECK((!r.pass && r.failures == 1 && r.worst.i == 5 && r.worst.j == 7));
    CHECK(r.describe().find("1 of 1073 entries wrong") == 0);
    std::vector<float> nan = C;
    nan.back() = NAN;
    CHECK_FALSE(check_float(nan, A, B, s).pass);

    // TF32 products in an FP32 variant: inside the componentwise bound at large K, never under the
    // normwise ceiling.
    for (int K : {1, 8, 64, 512, 4096}) {
        const Shape t{8, 8, K};
        const std::vector<float> a = host_matrix(K, kA, size_t(8) * K), b = host_matrix(K, kB, size_t(K) * 8);
        INFO("K = " << K);
        CHECK(check_float(float_gemm(a, b, t), a, b, t).pass);
        const Check tf = check_float(float_gemm(a, b, t, true), a, b, t);
        CHECK_FALSE(tf.pass);
        if (K >= 4096) CHECK(tf.failures == 0);  // only the normwise ceiling sees it
        CHECK(check_float(float_gemm(a, b, t, true), a, b, t, Precision::tf32).pass);  // right for a TF32 variant
    }
}

TEST_CASE("toolbox: the peak a rate must stay under", "[toolbox]") {
    Gpu g;
    g.fp32_peak = 60000, g.tensor_peak = 1000000;
    CHECK(peak(g, Precision::fp32) == 60000);
    CHECK(peak(g, Precision::tf32) == 500000);
    CHECK(peak(g, Precision::fp16) == 1000000);
    CHECK(peak(g, Precision::bf16) == 1000000);
    CHECK(peak(g, Precision::fp8) == 2000000);
    g.tensor_peak = 0;  // a GPU the table does not know: no ceiling rather than a wrong one
    CHECK(std::isinf(peak(g, Precision::fp16)));
}

TEST_CASE("toolbox: which entries a check looks at", "[toolbox]") {
    CHECK(positions({3, 4, 5}, 100, 1).size() == 12);
    const std::vector<Entry> e = positions({5000, 3000, 7}, 200, 1);
    REQUIRE(e.size() == 200);
    CHECK(((e[0].i == 0 && e[0].j == 0) && (e[3].i == 4999 && e[3].j == 2999)));
    for (const Entry& x : e) REQUIRE((x.i >= 0 && x.i < 5000 && x.j >= 0 && x.j < 3000));
    CHECK(seen_as(1.0f + 4.0f / 8192, Precision::tf32) == 1.0f + 1.0f / 1024);  // half a TF32 ulp: away
    CHECK(seen_as(1.0f + 3.0f / 8192, Precision::tf32) == 1.0f);
    CHECK(seen_as(1.0f + 1.0f / 4096, Precision::fp32) == 1.0f + 1.0f / 4096);
}

TEST_CASE("toolbox: against another library's result", "[toolbox]") {
    const Shape s{20, 30, 1000};
    const std::vector<float> A = host_matrix(8, kA, size_t(s.m) * s.k), B = host_matrix(8, kB, size_t(s.k) * s.n);
    const std::vector<float> C = float_gemm(A, B, s), C0(C.size());
    std::vector<float> other = C;
    std::reverse(other.begin(), other.end());
    CHECK(judge(against(C, A, B, C0, C, s, 1, 0, Precision::fp32), tolerance_for(Precision::fp32, s.k), "", 2).pass);
    CHECK_FALSE(
        judge(against(other, A, B, C0, C, s, 1, 0, Precision::fp32), tolerance_for(Precision::fp32, s.k), "", 2).pass);
}

TEST_CASE("toolbox: CSV rows", "[toolbox]") {
    const std::string path = "test_toolbox_rows.csv";
    std::remove(path.c_str());
    Gpu g;
    g.name = "Test GPU", g.major = 9, g.driver = 13000, g.runtime = 13000;
    setenv("WB_GIT_COMMIT", "abc123", 1);
    setenv("STUDENT_ID", "s42", 1);
    append_csv(path, "03_shared_tiling,tiled_16,fp32,1,2,3,1,0,0.1,0.1,1,1,100,1,0,PASS", g);
    append_csv(path, "03_shared_tiling,tiled_32,fp32,1,2,3,1,0,0.1,0.1,1,1,100,1,0,PASS", g);
    unsetenv("WB_GIT_COMMIT");
    unsetenv("STUDENT_ID");
    std::ifstream f(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(f, line);) lines.push_back(line);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == kCsvHeader);
    for (const std::string& l : lines) CHECK(std::count(l.begin(), l.end(), ',') == 23);
    CHECK(lines[2].find(",PASS,Test GPU,9.0,13.0,13.0,abc123,") != std::string::npos);
    CHECK(lines[2].find(",s42,") != std::string::npos);
    std::remove(path.c_str());
}

TEST_CASE("toolbox: every timed launch gets fresh inputs and is checked", "[toolbox][gpu]") {
    TOOLBOX_REQUIRE_GPU();
    const Shape s{300, 200, 129};
    float *A, *B, *C;
    REQUIRE(cudaMalloc(&A, 4 * size_t(s.m) * s.k) == cudaSuccess);
    REQUIRE(cudaMalloc(&B, 4 * size_t(s.k) * s.n) == cudaSuccess);
    REQUIRE(cudaMalloc(&C, 4 * size_t(s.m) * s.n) == cudaSuccess);
    auto sgemm = [&](cudaStream_t st) { cublas_sgemm(s.m, s.n, s.k, 1, A, B, 0.5f, C, st); };

    SECTION("an honest launch passes, and no two launches see the same A") {
        FreshInputs<float> fresh(A, B, C, s, 1, 0.5f, Precision::fp32);
        std::set<float> firsts;
        auto hashing = [&](cudaStream_t st) {
            float a0 = 0;
            WB_CUDA_CHECK(cudaMemcpyAsync(&a0, A, 4, cudaMemcpyDeviceToHost, st));
            WB_CUDA_CHECK(cudaStreamSynchronize(st));
            firsts.insert(a0);
            sgemm(st);
        };
        const Timing t = time_fresh<float>(hashing, 3, 20, fresh, 0);
        CHECK(t.ms.size() == 20);
        CHECK((t.min > 0 && t.median >= t.min));
        CHECK(firsts.size() == 23);
        const Check v = fresh.verdict();
        INFO(v.describe());
        CHECK(v.pass);
        CHECK(v.checked == kCheckedPerLaunch);
    }
    SECTION("a launch that does nothing after the first is wrong in a timed run") {
        FreshInputs<float> fresh(A, B, C, s, 1, 0, Precision::fp32);
        int calls = 0;
        auto lazy = [&](cudaStream_t st) {
            if (calls++ == 0) sgemm(st);
        };
        time_fresh<float>(lazy, 1, 5, fresh, 0);
        const Check v = fresh.verdict();
        CHECK_FALSE(v.pass);
        CHECK(v.what.find("launch 2 of the timed run") == 0);
    }
    SECTION("the GPU's fill is the host's value()") {
        fill(A, B, C, s, CFill::c0, 77, 0);
        std::vector<float> a(size_t(s.m) * s.k);
        REQUIRE(cudaMemcpy(a.data(), A, 4 * a.size(), cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(a == host_matrix(77, kA, a.size()));
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
}
