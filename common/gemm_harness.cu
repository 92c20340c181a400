// gemm_harness.cu - see gemm_harness.cuh.
#include <cublasLt.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "gemm_harness.cuh"
#include "cuda_handles.cuh"
#include "energy.h"
#include "kernel_trace.h"

#ifndef WB_GIT_COMMIT
#define WB_GIT_COMMIT "unknown"
#endif

namespace wb {

std::vector<__half> to_half(const std::vector<float>& v) {
    std::vector<__half> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        __half_raw raw;
        raw.x = fp16_bits(v[i]);  // round to nearest even, the same rounding as the reference
        h[i] = __half(raw);
    }
    return h;
}

std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& v) {
    std::vector<__nv_bfloat16> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
        __nv_bfloat16_raw raw;
        raw.x = bf16_bits(v[i]);  // round to nearest even, the same rounding as the reference
        h[i] = __nv_bfloat16(raw);
    }
    return h;
}

std::vector<__nv_fp8_e4m3> to_e4m3(const std::vector<float>& v, float scale, int rows, int cols, bool transpose) {
    std::vector<__nv_fp8_e4m3> q(v.size());
    for (size_t r = 0; r < size_t(rows); ++r)
        for (size_t c = 0; c < size_t(cols); ++c) {
            __nv_fp8_storage_t bits = e4m3_bits(v[r * cols + c] / scale);  // the reference's rounding
            __nv_fp8_e4m3& out = transpose ? q[c * rows + r] : q[r * cols + c];
            out.__x = bits;
        }
    return q;
}

// ---- cuBLAS ----------------------------------------------------------------------------------

cublasHandle_t cublas_handle() {
    // Creating a handle costs milliseconds (chapter 07 measures it): do it once per process.
    static cublasHandle_t handle = [] {
        cublasHandle_t h = nullptr;
        WB_CUBLAS_CHECK(cublasCreate(&h));
        return h;
    }();
    return handle;
}

void cublas_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C, cudaStream_t stream) {
    cublasHandle_t h = cublas_handle();
    WB_CUBLAS_CHECK(cublasSetStream(h, stream));
    WB_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));  // plain FP32, no TF32
    // Column-major view: C^T (N x M) = B^T (N x K) * A^T (K x M); leading dimensions N, K, N.
    WB_CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
}

void cublas_tf32(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                 float* C, cudaStream_t stream) {
    cublasHandle_t h = cublas_handle();
    WB_CUBLAS_CHECK(cublasSetStream(h, stream));
    WB_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_32F, N, A,
                                 CUDA_R_32F, K, &beta, C, CUDA_R_32F, N,
                                 CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
}

void cublas_hgemm(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                  float* C, cudaStream_t stream) {
    cublasHandle_t h = cublas_handle();
    WB_CUBLAS_CHECK(cublasSetStream(h, stream));
    WB_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16F, N, A,
                                 CUDA_R_16F, K, &beta, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
}

void cublas_bgemm(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                  float beta, float* C, cudaStream_t stream) {
    cublasHandle_t h = cublas_handle();
    WB_CUBLAS_CHECK(cublasSetStream(h, stream));
    WB_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, N, A,
                                 CUDA_R_16BF, K, &beta, C, CUDA_R_32F, N, CUBLAS_COMPUTE_32F,
                                 CUBLAS_GEMM_DEFAULT));
}

namespace {

cublasLtHandle_t cublaslt_handle() {
    static cublasLtHandle_t handle = [] {
        cublasLtHandle_t h = nullptr;
        WB_CUBLAS_CHECK(cublasLtCreate(&h));
        return h;
    }();
    return handle;
}

// One cuBLASLt FP8 problem described once: the operation, the three layouts, the algorithm the
// heuristic picked. Describing costs host time that would otherwise fall inside every timed call.
struct LtFp8Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algo = {};
};

constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;
// cuBLASLt answers CUBLAS_STATUS_NOT_SUPPORTED to a scale pointer that is not 16-byte aligned
// (cuBLAS 13.1 on the H200): every FP8 scale the harness makes sits in a slot of its own, 16 bytes.
constexpr int kScaleSlot = 16 / int(sizeof(float));
struct LtWorkspace;  // tags of the scratch buffers (wb::scratch_buffer)
struct LtPaddedA;
struct LtPaddedB;
struct LtPaddedC;
struct LtScales;

// The plan of a packed M x N x K problem, or null when the heuristic has no FP8 algorithm for it.
const LtFp8Plan* lt_fp8_plan(int M, int N, int K) {
    static std::map<std::array<int, 3>, LtFp8Plan> plans;  // lives as long as the process
    static std::set<std::array<int, 3>> none;
    const std::array<int, 3> key = {M, N, K};
    if (none.count(key)) return nullptr;
    auto found = plans.find(key);
    if (found != plans.end()) return &found->second;
    LtFp8Plan p;
    WB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t t = CUBLAS_OP_T, n = CUBLAS_OP_N;
    WB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
    WB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_TRANSB, &n, sizeof n));
    // Fast accumulation: the tensor core's own FP8 adds all along K, as chapter 09's kernel does. By
    // default cuBLASLt moves partial sums into FP32 registers every few k-steps, which is more
    // accurate and slower: the comparison would not be between the same arithmetic.
    const int8_t fast_accum = 1;
    WB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum));
    // The row-major trick of chapter 07: C^T (N x M) = B^T A^T, all column-major. cuBLASLt's A is
    // our Bt (N x K row-major = column-major K x N, ld K), transposed: B^T, N x K. Its B is our A
    // (column-major K x M = A^T, ld K), not transposed. C^T is column-major N x M, ld N.
    WB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, CUDA_R_8F_E4M3, K, N, K));
    WB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, CUDA_R_8F_E4M3, K, M, K));
    WB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.c, CUDA_R_32F, N, M, N));
    cublasLtMatmulPreference_t pref = nullptr;
    WB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = kLtWorkspaceBytes;
    WB_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t result = {};
    int count = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(cublaslt_handle(), p.op, p.a, p.b, p.c, p.c, pref, 1,
                                                             &result, &count);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st != CUBLAS_STATUS_SUCCESS || count == 0) {
        cublasLtMatrixLayoutDestroy(p.a);
        cublasLtMatrixLayoutDestroy(p.b);
        cublasLtMatrixLayoutDestroy(p.c);
        cublasLtMatmulDescDestroy(p.op);
        none.insert(key);
        return nullptr;
    }
    p.algo = result.algo;
    return &plans.emplace(key, p).first->second;
}

void lt_fp8_run(const LtFp8Plan& p, float alpha, const void* a, const float* scale_a, const void* bt,
                const float* scale_b, float beta, float* C, cudaStream_t stream) {
    // The scales: cuBLASLt's A is our Bt, its B our A. They are read on the device at run time.
    WB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_b, sizeof scale_b));
    WB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_a, sizeof scale_a));
    WB_CUBLAS_CHECK(cublasLtMatmul(cublaslt_handle(), p.op, &alpha, bt, p.a, a, p.b, &beta, C, p.c, C, p.c, &p.algo,
                                   scratch_buffer<LtWorkspace>(kLtWorkspaceBytes), kLtWorkspaceBytes, stream));
}

}  // namespace

void cublaslt_fp8(int M, int N, int K, float alpha, Fp8Operand A, Fp8Operand Bt, float beta, float* C,
                  cudaStream_t stream) {
    auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    // Scales that are not 16-byte aligned (kScaleSlot) are copied into two aligned slots first.
    if (!aligned(A.scale) || !aligned(Bt.scale)) {
        float* slots = static_cast<float*>(scratch_buffer<LtScales>(2 * kScaleSlot * sizeof(float)));
        WB_CUDA_CHECK(cudaMemcpyAsync(slots, A.scale, sizeof(float), cudaMemcpyDeviceToDevice, stream));
        WB_CUDA_CHECK(cudaMemcpyAsync(slots + kScaleSlot, Bt.scale, sizeof(float), cudaMemcpyDeviceToDevice, stream));
        A.scale = slots;
        Bt.scale = slots + kScaleSlot;
    }
    // As given, when every operand meets cuBLASLt's FP8 rules (16-byte aligned, rows of multiples
    // of 16 bytes) and it has a kernel for the shape.
    if (aligned(A.data) && aligned(Bt.data) && aligned(C) && K % 16 == 0 && N % 4 == 0)
        if (const LtFp8Plan* p = lt_fp8_plan(M, N, K)) {
            lt_fp8_run(*p, alpha, A.data, A.scale, Bt.data, Bt.scale, beta, C, stream);
            return;
        }
    // Else the problem padded with zeros to multiples of 16 in M, N and K (zero products add
    // nothing to a sum), C copied in and out: inside the timed call, like chapter 09's padded copies.
    auto up16 = [](int x) { return (x + 15) / 16 * 16; };
    const int M16 = up16(M), N16 = up16(N), K16 = up16(K);
    const LtFp8Plan* p = lt_fp8_plan(M16, N16, K16);
    if (!p)
        throw std::runtime_error("cuBLASLt has no FP8 algorithm for " + std::to_string(M16) + " x " +
                                 std::to_string(N16) + " x " + std::to_string(K16) +
                                 " (FP8 needs compute capability 8.9 or newer)");
    void* a = scratch_buffer<LtPaddedA>(size_t(M16) * K16);
    void* bt = scratch_buffer<LtPaddedB>(size_t(N16) * K16);
    float* c = static_cast<float*>(scratch_buffer<LtPaddedC>(size_t(M16) * N16 * sizeof(float)));
    const size_t row_c = size_t(N) * sizeof(float), pitch_c = size_t(N16) * sizeof(float);
    WB_CUDA_CHECK(cudaMemsetAsync(a, 0, size_t(M16) * K16, stream));
    WB_CUDA_CHECK(cudaMemsetAsync(bt, 0, size_t(N16) * K16, stream));
    WB_CUDA_CHECK(cudaMemcpy2DAsync(a, K16, A.data, K, K, M, cudaMemcpyDeviceToDevice, stream));
    WB_CUDA_CHECK(cudaMemcpy2DAsync(bt, K16, Bt.data, K, K, N, cudaMemcpyDeviceToDevice, stream));
    if (beta != 0.0f)
        WB_CUDA_CHECK(cudaMemcpy2DAsync(c, pitch_c, C, row_c, row_c, M, cudaMemcpyDeviceToDevice, stream));
    else  // C may hold NaN: its padded copy starts from zeros, not from what the buffer held before
        WB_CUDA_CHECK(cudaMemsetAsync(c, 0, size_t(M16) * pitch_c, stream));
    lt_fp8_run(*p, alpha, a, A.scale, bt, Bt.scale, beta, c, stream);
    WB_CUDA_CHECK(cudaMemcpy2DAsync(C, row_c, c, pitch_c, row_c, M, cudaMemcpyDeviceToDevice, stream));
}

// ---- GemmProblem -----------------------------------------------------------------------------

namespace {
constexpr size_t kSampleCount = 1024;
int index_of(Precision p) { return static_cast<int>(p); }
}  // namespace

struct GemmProblem::Impl {
    Shape s;
    float alpha, beta;
    uint64_t seed;
    std::vector<float> A, B, C0;  // FP32 inputs as generated
    DeviceBuffer<float> dA, dB, dC, dC0;
    DeviceBuffer<__half> dA16, dB16;  // made on first use by an FP16 variant
    DeviceBuffer<__nv_bfloat16> dAbf, dBbf;  // made on first use by a BF16 variant
    DeviceBuffer<__nv_fp8_e4m3> dA8, dBt8;   // made on first use by an FP8 variant: A, and B transposed
    DeviceBuffer<float> dScales;             // scale_a, scale_b

    // The reference for one input precision, computed on first use.
    struct Reference {
        bool ready = false;
        std::vector<float> A, B;  // inputs rounded to the precision (empty for fp32)
        std::vector<double> value, scale;  // full reference (small problems)
        std::vector<RefEntry> sample;      // sampled reference (large problems)
        std::vector<float> library;        // cuBLAS result (large problems)
    } refs[kPrecisionCount];

    GemmView view(Precision p) {
        Reference& r = refs[index_of(p)];
        GemmView g;
        g.s = s;
        g.alpha = alpha;
        g.beta = beta;
        g.A = r.A.empty() ? A.data() : r.A.data();
        g.B = r.B.empty() ? B.data() : r.B.data();
        g.C0 = beta != 0.0f ? C0.data() : nullptr;
        return g;
    }

    void reset_output(cudaStream_t stream) {
        if (beta == 0.0f)  // all bytes 0xFF: a NaN in every entry
            WB_CUDA_CHECK(cudaMemsetAsync(dC.get(), 0xFF, dC.size() * sizeof(float), stream));
        else
            WB_CUDA_CHECK(cudaMemcpyAsync(dC.get(), dC0.get(), dC.size() * sizeof(float),
                                          cudaMemcpyDeviceToDevice, stream));
    }

    // The seeded 16-bit and FP8 inputs are converted once and kept on the host, so that putting
    // them back after a timing (seeded) is one upload.
    std::vector<__half> hA16, hB16;
    std::vector<__nv_bfloat16> hAbf, hBbf;
    std::vector<__nv_fp8_e4m3> hA8, hBt8;
    std::vector<float> hScales;
    void ensure_fp16() {
        if (dA16.get()) return;
        hA16 = to_half(A);
        hB16 = to_half(B);
        dA16 = DeviceBuffer<__half>(A.size());
        dB16 = DeviceBuffer<__half>(B.size());
        upload_fp16();
    }
    void upload_fp16() {
        dA16.upload(hA16);
        dB16.upload(hB16);
    }
    void ensure_bf16() {
        if (dAbf.get()) return;
        hAbf = to_bf16(A);
        hBbf = to_bf16(B);
        dAbf = DeviceBuffer<__nv_bfloat16>(A.size());
        dBbf = DeviceBuffer<__nv_bfloat16>(B.size());
        upload_bf16();
    }
    void upload_bf16() {
        dAbf.upload(hAbf);
        dBbf.upload(hBbf);
    }

    // The same scales as round_to(Precision::fp8_e4m3, ...), so the reference's dequantized values
    // are exactly the device's bytes times these.
    void ensure_fp8() {
        if (dA8.get()) return;
        const float scales[2] = {e4m3_scale(A.data(), A.size()), e4m3_scale(B.data(), B.size())};
        hA8 = to_e4m3(A, scales[0], s.m, s.k, false);
        hBt8 = to_e4m3(B, scales[1], s.k, s.n, true);
        hScales.assign(2 * kScaleSlot, 0.0f);
        hScales[0] = scales[0];
        hScales[kScaleSlot] = scales[1];
        dA8 = DeviceBuffer<__nv_fp8_e4m3>(A.size());
        dBt8 = DeviceBuffer<__nv_fp8_e4m3>(B.size());
        dScales = DeviceBuffer<float>(2 * kScaleSlot);
        upload_fp8();
    }
    void upload_fp8() {
        dA8.upload(hA8);
        dBt8.upload(hBt8);
        dScales.upload(hScales);
    }
    Fp8Operand a8() const { return {dA8.get(), dScales.get()}; }
    Fp8Operand bt8() const { return {dBt8.get(), dScales.get() + kScaleSlot}; }

    // Whether a timing has overwritten the device inputs of one input type (fp32 serves TF32 too).
    enum Inputs { kF32, kF16, kBf16, kF8, kInputsCount };
    bool overwritten[kInputsCount] = {};
    static Inputs inputs_of(Precision p) {
        return p == Precision::fp16 ? kF16 : p == Precision::bf16 ? kBf16 : p == Precision::fp8_e4m3 ? kF8 : kF32;
    }
    // Puts the seeded inputs of precision p back on the device where a timing replaced them.
    void seeded(Precision p) {
        const Inputs in = inputs_of(p);
        if (!overwritten[in]) return;
        overwritten[in] = false;
        switch (in) {
            case kF16: upload_fp16(); break;
            case kBf16: upload_bf16(); break;
            case kF8: upload_fp8(); break;
            default: dA.upload(A); dB.upload(B);
        }
    }

    template <class Launch>
    std::vector<float> run_once(Launch&& launch, cudaStream_t stream) {
        reset_output(stream);
        launch(stream);
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        return dC.download();
    }

    Reference& reference(Precision p, cudaStream_t stream) {
        Reference& r = refs[index_of(p)];
        if (r.ready) return r;
        if (p != Precision::fp32) {
            r.A = A;
            r.B = B;
            round_to(p, r.A);
            round_to(p, r.B);
        }
        const GemmView g = view(p);
        seeded(p);
        if (GemmProblem::full_reference(s)) {
            reference_full(g, r.value, r.scale);
        } else {
            // Large: a CPU sample, and the whole result of cuBLAS (which must agree with the sample).
            r.sample = reference_sample(g, kSampleCount, seed);
            if (p == Precision::fp16) {
                ensure_fp16();
                r.library = run_once([&](cudaStream_t st) { cublas_hgemm(s.m, s.n, s.k, alpha, dA16.get(), dB16.get(), beta, dC.get(), st); }, stream);
            } else if (p == Precision::bf16) {
                ensure_bf16();
                r.library = run_once([&](cudaStream_t st) { cublas_bgemm(s.m, s.n, s.k, alpha, dAbf.get(), dBbf.get(), beta, dC.get(), st); }, stream);
            } else if (p == Precision::fp8_e4m3) {
                ensure_fp8();
                r.library = run_once([&](cudaStream_t st) { cublaslt_fp8(s.m, s.n, s.k, alpha, a8(), bt8(), beta, dC.get(), st); }, stream);
            } else {
                SgemmFn lib = p == Precision::tf32 ? cublas_tf32 : cublas_sgemm;
                r.library = run_once([&](cudaStream_t st) { lib(s.m, s.n, s.k, alpha, dA.get(), dB.get(), beta, dC.get(), st); }, stream);
            }
            CheckResult lib_ok = check_sample(r.library.data(), s.n, r.sample, tolerance_for(p, s.k));
            if (!lib_ok.pass)
                throw std::runtime_error("cuBLAS disagrees with the CPU reference: " + lib_ok.describe());
        }
        r.ready = true;
        return r;
    }

    CheckResult check(Precision p, const std::vector<float>& C, cudaStream_t stream) {
        Reference& r = reference(p, stream);
        const Tolerance tol = tolerance_for(p, s.k);
        if (GemmProblem::full_reference(s)) return check_full(C.data(), s.m, s.n, r.value, r.scale, tol);
        return combine(check_sample(C.data(), s.n, r.sample, tol),
                       check_against(C.data(), r.library.data(), view(p), tol));
    }
};

GemmProblem::GemmProblem(Shape shape, float alpha, float beta, uint64_t seed)
    : impl_(new Impl()), shape_(shape) {
    Impl& d = *impl_;
    d.s = shape;
    d.alpha = alpha;
    d.beta = beta;
    d.seed = seed;
    d.A.resize(size_t(shape.m) * shape.k);
    d.B.resize(size_t(shape.k) * shape.n);
    fill_random(d.A.data(), d.A.size(), seed, 1);
    fill_random(d.B.data(), d.B.size(), seed, 2);
    d.dA = DeviceBuffer<float>(d.A.size());
    d.dB = DeviceBuffer<float>(d.B.size());
    d.dC = DeviceBuffer<float>(size_t(shape.m) * shape.n);
    d.dA.upload(d.A);
    d.dB.upload(d.B);
    if (beta != 0.0f) {
        d.C0.resize(size_t(shape.m) * shape.n);
        fill_random(d.C0.data(), d.C0.size(), seed, 3);
        d.dC0 = DeviceBuffer<float>(d.C0.size());
        d.dC0.upload(d.C0);
    }
}

GemmProblem::~GemmProblem() = default;

size_t GemmProblem::device_bytes(Shape s, float beta, int copies16, bool fp8) {
    const size_t a = size_t(s.m) * s.k, b = size_t(s.k) * s.n, c = size_t(s.m) * s.n;
    size_t bytes = (a + b + c) * sizeof(float);
    if (beta != 0.0f) bytes += c * sizeof(float);
    bytes += size_t(copies16) * (a + b) * sizeof(__half);
    if (fp8) bytes += a + b;
    return bytes + (64u << 20);  // cuBLAS workspace and context slack
}

bool GemmProblem::full_reference(Shape s) { return use_full_reference(s); }

void GemmProblem::prepare_reference(Precision p, cudaStream_t stream) { impl_->reference(p, stream); }

CheckResult GemmProblem::verify(SgemmFn run, Precision p, cudaStream_t stream) {
    Impl& d = *impl_;
    d.seeded(p);
    const std::vector<float> C = d.run_once([&](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.dA.get(), d.dB.get(), d.beta, d.dC.get(), st); }, stream);
    return d.check(p, C, stream);
}

CheckResult GemmProblem::verify(HgemmFn run, cudaStream_t stream) {
    Impl& d = *impl_;
    d.ensure_fp16();
    d.seeded(Precision::fp16);
    const std::vector<float> C = d.run_once([&](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.dA16.get(), d.dB16.get(), d.beta, d.dC.get(), st); }, stream);
    return d.check(Precision::fp16, C, stream);
}

CheckResult GemmProblem::verify(BgemmFn run, cudaStream_t stream) {
    Impl& d = *impl_;
    d.ensure_bf16();
    d.seeded(Precision::bf16);
    const std::vector<float> C = d.run_once([&](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.dAbf.get(), d.dBbf.get(), d.beta, d.dC.get(), st); }, stream);
    return d.check(Precision::bf16, C, stream);
}

CheckResult GemmProblem::verify(Fp8gemmFn run, cudaStream_t stream) {
    Impl& d = *impl_;
    d.ensure_fp8();
    d.seeded(Precision::fp8_e4m3);
    const std::vector<float> C = d.run_once([&](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.a8(), d.bt8(), d.beta, d.dC.get(), st); }, stream);
    return d.check(Precision::fp8_e4m3, C, stream);
}

CheckResult GemmProblem::verify(const Fp8gemmVariant& v, cudaStream_t stream) { return verify(v.run, stream); }
CheckResult GemmProblem::verify(const SgemmVariant& v, cudaStream_t stream) { return verify(v.run, v.precision, stream); }
CheckResult GemmProblem::verify(const HgemmVariant& v, cudaStream_t stream) { return verify(v.run, stream); }
CheckResult GemmProblem::verify(const BgemmVariant& v, cudaStream_t stream) { return verify(v.run, stream); }

namespace {
template <class Launch>
Timing time_fresh(GemmProblem& prob, Precision p, Launch launch, int warmup, int reps, cudaStream_t stream) {
    FreshInputs fresh(prob.operands(p));
    const Timing t = time_launches(launch, warmup, reps, stream, &fresh);
    const CheckResult c = fresh.collect()[kVariantSide];
    if (!c.pass) throw std::runtime_error("wrong in a timed run: " + c.describe());
    return t;
}
}  // namespace

Timing GemmProblem::time(SgemmFn run, int warmup, int reps, cudaStream_t stream, Precision p) {
    return time_fresh(*this, p, launch(run), warmup, reps, stream);
}

Timing GemmProblem::time(HgemmFn run, int warmup, int reps, cudaStream_t stream) {
    return time_fresh(*this, Precision::fp16, launch(run), warmup, reps, stream);
}

Timing GemmProblem::time(BgemmFn run, int warmup, int reps, cudaStream_t stream) {
    return time_fresh(*this, Precision::bf16, launch(run), warmup, reps, stream);
}

Timing GemmProblem::time(Fp8gemmFn run, int warmup, int reps, cudaStream_t stream) {
    return time_fresh(*this, Precision::fp8_e4m3, launch(run), warmup, reps, stream);
}

GemmOperands GemmProblem::operands(Precision p) {
    Impl& d = *impl_;
    GemmOperands g;
    g.precision = p;
    g.s = d.s;
    g.alpha = d.alpha;
    g.beta = d.beta;
    g.C = d.dC.get();
    switch (p) {
        case Precision::fp16: d.ensure_fp16(); g.A = d.dA16.get(); g.B = d.dB16.get(); break;
        case Precision::bf16: d.ensure_bf16(); g.A = d.dAbf.get(); g.B = d.dBbf.get(); break;
        case Precision::fp8_e4m3:
            d.ensure_fp8();
            g.A = d.dA8.get();
            g.B = d.dBt8.get();
            g.b_transposed = true;
            g.scale_a = d.dScales.get();
            g.scale_b = d.dScales.get() + kScaleSlot;
            break;
        default: g.A = d.dA.get(); g.B = d.dB.get();
    }
    d.overwritten[Impl::inputs_of(p)] = true;
    return g;
}

std::function<void(cudaStream_t)> GemmProblem::launch(SgemmFn run) {
    Impl& d = *impl_;
    return [&d, run](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.dA.get(), d.dB.get(), d.beta, d.dC.get(), st); };
}

std::function<void(cudaStream_t)> GemmProblem::launch(HgemmFn run) {
    Impl& d = *impl_;
    d.ensure_fp16();
    return [&d, run](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.dA16.get(), d.dB16.get(), d.beta, d.dC.get(), st); };
}

std::function<void(cudaStream_t)> GemmProblem::launch(BgemmFn run) {
    Impl& d = *impl_;
    d.ensure_bf16();
    return [&d, run](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.dAbf.get(), d.dBbf.get(), d.beta, d.dC.get(), st); };
}

std::function<void(cudaStream_t)> GemmProblem::launch(Fp8gemmFn run) {
    Impl& d = *impl_;
    d.ensure_fp8();
    return [&d, run](cudaStream_t st) { run(d.s.m, d.s.n, d.s.k, d.alpha, d.a8(), d.bt8(), d.beta, d.dC.get(), st); };
}

// ---- the chapter program -----------------------------------------------------------------------

std::string build_git_commit() { return WB_GIT_COMMIT; }

RunInfo run_info(const std::string& chapter, const DeviceFacts& dev) {
    RunInfo info;
    info.chapter = chapter;
    info.gpu = dev.name;
    info.cc = dev.cc();
    info.driver = cuda_version_string(dev.driver_version);
    info.runtime = cuda_version_string(dev.runtime_version);
    info.git = build_git_commit();
    info.student = student_id();
    return info;
}

namespace {

bool selected(const Options& opt, const char* name) {
    if (opt.variant == "all") return true;
    for (const std::string& n : split_list(opt.variant))
        if (n == name) return true;
    return false;
}

std::string gib(size_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / 1073741824.0);
    return buf;
}

}  // namespace

Options parse_or_exit(const Chapter& ch, int argc, char** argv) {
    Options opt;
    std::string error;
    if (!parse_options(argc, argv, opt, error, ch.extras)) {
        std::fprintf(stderr, "%s: error: %s\n", ch.name.c_str(), error.c_str());
        std::exit(kExitBadInput);
    }
    if (opt.help) {
        std::printf("%s", usage(ch.name, ch.extras).c_str());
        std::printf("variants:\n");
        for (const SgemmVariant& v : ch.sgemm) std::printf("  %-24s %s: %s\n", v.name, to_string(v.precision), v.what);
        for (const HgemmVariant& v : ch.hgemm) std::printf("  %-24s fp16: %s\n", v.name, v.what);
        for (const BgemmVariant& v : ch.bgemm) std::printf("  %-24s bf16: %s\n", v.name, v.what);
        for (const Fp8gemmVariant& v : ch.fp8) std::printf("  %-24s fp8_e4m3: %s\n", v.name, v.what);
        std::exit(kExitOk);
    }
    if (opt.shapes.empty()) opt.shapes = ch.default_shapes;
    if (opt.variant != "all") {
        for (const std::string& name : split_list(opt.variant)) {
            bool known = false;
            for (const SgemmVariant& v : ch.sgemm) known = known || name == v.name;
            for (const HgemmVariant& v : ch.hgemm) known = known || name == v.name;
            for (const BgemmVariant& v : ch.bgemm) known = known || name == v.name;
            for (const Fp8gemmVariant& v : ch.fp8) known = known || name == v.name;
            if (!known) {
                std::string names;
                for (const SgemmVariant& v : ch.sgemm) names += std::string(names.empty() ? "" : ", ") + v.name;
                for (const HgemmVariant& v : ch.hgemm) names += std::string(names.empty() ? "" : ", ") + v.name;
                for (const BgemmVariant& v : ch.bgemm) names += std::string(names.empty() ? "" : ", ") + v.name;
                for (const Fp8gemmVariant& v : ch.fp8) names += std::string(names.empty() ? "" : ", ") + v.name;
                std::fprintf(stderr, "%s: error: unknown variant '%s' (this chapter has: %s)\n",
                             ch.name.c_str(), name.c_str(), names.c_str());
                std::exit(kExitBadInput);
            }
        }
    }
    return opt;
}

void print_kernel_resources(const Chapter& ch, const DeviceFacts& dev) {
    bool any = false;
    auto print = [&](const char* name, const KernelInfo& k, int min_cc) {
        if (!k.kernel || dev.cc_number() < min_cc) return;  // e.g. a kernel that needs 8.0's shared memory
        cudaFuncAttributes a{};
        WB_CUDA_CHECK(cudaFuncGetAttributes(&a, k.kernel));
        if (k.dynamic_smem > 48 * 1024)  // the launcher raises this limit too; do it for the query
            WB_CUDA_CHECK(cudaFuncSetAttribute(k.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(k.dynamic_smem)));
        int blocks = 0;
        WB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k.kernel, k.threads, k.dynamic_smem));
        if (!any) {
            std::printf("%-26s %8s %9s %11s %10s %9s %10s %10s\n", "kernel resources", "threads",
                        "regs/thr", "smem/block", "local B", "blocks/SM", "warps/SM", "occupancy");
            any = true;
        }
        const int warps = blocks * ((k.threads + 31) / 32);
        std::printf("%-26s %8d %9d %11zu %10zu %9d %10d %9.0f%%\n", name, k.threads, a.numRegs,
                    a.sharedSizeBytes + k.dynamic_smem, size_t(a.localSizeBytes), blocks, warps,
                    100.0 * warps * 32 / dev.max_threads_per_sm);
    };
    for (const SgemmVariant& v : ch.sgemm) print(v.name, v.info, v.min_cc);
    for (const HgemmVariant& v : ch.hgemm) print(v.name, v.info, v.min_cc);
    for (const BgemmVariant& v : ch.bgemm) print(v.name, v.info, v.min_cc);
    for (const Fp8gemmVariant& v : ch.fp8) print(v.name, v.info, v.min_cc);
    if (any) std::printf("\n");
}

int run_chapter(const Chapter& ch, const Options& opt, std::vector<ResultRow>* rows_out) {
    const DeviceFacts dev = require_device(ch.name);
    const RunInfo info = run_info(ch.name, dev);
    KernelTrace& trace = KernelTrace::get();  // after the device is up: see kernel_trace.h

    std::vector<const SgemmVariant*> sv;
    std::vector<const HgemmVariant*> hv;
    for (const SgemmVariant& v : ch.sgemm) if (selected(opt, v.name)) sv.push_back(&v);
    std::vector<const BgemmVariant*> bv;
    for (const HgemmVariant& v : ch.hgemm) if (selected(opt, v.name)) hv.push_back(&v);
    for (const BgemmVariant& v : ch.bgemm) if (selected(opt, v.name)) bv.push_back(&v);
    std::vector<const Fp8gemmVariant*> fv;
    for (const Fp8gemmVariant& v : ch.fp8) if (selected(opt, v.name)) fv.push_back(&v);
    std::set<Precision> precisions;
    for (auto* v : sv) precisions.insert(v->precision);
    if (!hv.empty()) precisions.insert(Precision::fp16);
    if (!bv.empty()) precisions.insert(Precision::bf16);
    if (!fv.empty()) precisions.insert(Precision::fp8_e4m3);

    // Every shape must fit before anything is allocated.
    size_t free_bytes = 0, total_bytes = 0;
    WB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    for (const Shape& s : opt.shapes) {
        const size_t need = GemmProblem::device_bytes(s, opt.beta, int(!hv.empty()) + int(!bv.empty()), !fv.empty());
        if (need > free_bytes) {
            std::fprintf(stderr, "%s: error: shape %s needs %s of device memory, but only %s of %s is free\n",
                         ch.name.c_str(), to_string(s).c_str(), gib(need).c_str(), gib(free_bytes).c_str(),
                         gib(total_bytes).c_str());
            std::exit(kExitBadInput);
        }
    }

    std::printf("%s on %s (sm_%d%d, %d SMs, %.2f GHz): FP32 peak %.1f TFLOP/s, driver CUDA %s, runtime %s\n",
                ch.name.c_str(), dev.name.c_str(), dev.cc_major, dev.cc_minor, dev.sms, dev.clock_ghz,
                dev.peak_fp32_gflops / 1000, info.driver.c_str(), info.runtime.c_str());
    std::printf("C = alpha*A*B + beta*C with alpha = %g, beta = %g; seed %llu; %d warm-up + %d timed launches, median shown%s\n",
                opt.alpha, opt.beta, (unsigned long long)opt.seed, opt.warmup, opt.reps,
                opt.check ? "" : "; verification OFF");
    const int rounds = paired_rounds(opt.reps);
    std::printf("each variant is timed in %d round%s alternating with cuBLAS (each side >= %.0f ms per round; "
                "up to %d rounds while both sides together have run < %.0f ms); "
                "%% of cuBLAS is the median of the rounds' ratios\n"
                "every launch gets fresh inputs (a key from the OS, never the seed) and a poisoned C; after each "
                "timed one, %d entries at positions drawn then are checked in FP64\n\n",
                rounds, rounds == 1 ? "" : "s", kMinRoundMs, kMaxPairedRounds, kMinPairedMs, fresh::kEntriesPerLaunch);
    print_kernel_resources(ch, dev);

    // FP8 tensor cores (compute capability 8.9 and 9.x) run at twice the FP16 rate.
    const double peak_fp8 = dev.cc_number() >= 89 ? 2 * dev.peak_fp16_tc_gflops : 0.0;
    auto peak_for = [&](Precision p) {
        return p == Precision::fp32       ? dev.peak_fp32_gflops
               : p == Precision::tf32     ? dev.peak_tf32_tc_gflops
               : p == Precision::fp8_e4m3 ? peak_fp8
                                          : dev.peak_fp16_tc_gflops;  // BF16 runs at the FP16 rate
    };

    ResultTable table("cuBLAS");
    table.header();
    bool failed = false;
    const Stream stream;

    for (const Shape& s : opt.shapes) {
        GemmProblem prob(s, opt.alpha, opt.beta, opt.seed);
        double baseline[kPrecisionCount];
        std::fill(baseline, baseline + kPrecisionCount, -1.0);

        // A paired timing (rounds > 0) carries its own baseline: the row's cuBLAS rate is that of
        // the baseline's launches interleaved with the variant's, and % of cuBLAS is the median of
        // the rounds' ratios.
        auto emit = [&](ResultRow r, Precision p, const PairedTiming* t, const CheckResult* c, double joules) {
            r.dtype = to_string(p);
            r.shape = s;
            r.alpha = opt.alpha;
            r.beta = opt.beta;
            if (t) {
                r.ms_median = t->variant.ms_median;
                r.ms_min = t->variant.ms_min;
            }
            const bool paired = t && t->rounds > 0 && t->baseline.ms_median > 0;
            r.baseline_gflops = paired ? s.flops() / (t->baseline.ms_median * 1e6) : baseline[index_of(p)];
            derive_rates(r, peak_for(p));
            if (paired && r.gflops > 0) r.pct_baseline = 100.0 * t->ratio;
            if (joules > 0) r.gflops_per_j = s.flops() / 1e9 / joules;
            if (c) r.rel_err = c->rel_err;
            // Faster than the GPU's own peak for the precision (its SMs at their highest clock)
            // is no result: the time did not come from the work. Printed as such, never as a rate.
            std::string implausible;
            if (peak_for(p) > 0 && r.gflops > peak_for(p)) {
                implausible = "implausible: " + format_number(r.gflops, 0) + " GFLOP/s is above this GPU's " +
                              to_string(p) + " peak of " + format_number(peak_for(p), 0) +
                              " GFLOP/s; no time or rate is reported";
                r.status = "IMPLAUSIBLE";
                r.ms_median = r.ms_min = r.gflops = r.pct_baseline = r.pct_peak = r.gflops_per_j = -1;
                failed = true;
            }
            table.row(r);
            if (c && !c->pass) std::printf("    %s\n", c->describe().c_str());
            if (!implausible.empty()) std::printf("    %s\n", implausible.c_str());
            if (!opt.csv.empty()) append_csv(opt.csv, r, info);
            if (rows_out) rows_out->push_back(r);
        };

        // Runs one variant (or cuBLAS): verify, then time; a variant in rounds alternating with
        // `base`, its precision's cuBLAS call (time_paired), when that baseline ran on this shape.
        // A CUDA error fails the variant; an error that leaves the context broken (e.g. an
        // illegal address) ends the program.
        using Launch = std::function<void(cudaStream_t)>;
        auto measure = [&](const std::string& name, Precision p, int min_cc, auto verify, Launch run, Launch base) {
            ResultRow r;
            r.variant = name;
            if (dev.cc_number() < min_cc) {
                r.status = "skipped (needs sm_" + std::to_string(min_cc) + ")";
                emit(r, p, nullptr, nullptr, -1);
                return;
            }
            try {
                CheckResult c;
                bool checked = opt.check;
                // The trace windows hold the variant's own launches only: the reference (which
                // may call cuBLAS) is computed before the first one opens, and the baseline's
                // launches of a paired timing run outside them.
                const std::string label = name + " " + to_string(p) + " " + to_string(s);
                auto in_window = [&label](auto&& body) {
                    KernelTrace::Window w(label);
                    body();
                };
                if (checked) {
                    prob.prepare_reference(p, stream);
                    in_window([&] { c = verify(); });
                }
                // Every launch timed (warm-ups and the energy meter's too) on fresh inputs, every
                // timed one checked (fresh_inputs.cuh); the verify above ran on the seeded ones.
                FreshInputs fresh(prob.operands(p));
                PairedTiming t;
                if (base && baseline[index_of(p)] > 0)
                    t = time_paired(base, run, opt.warmup, opt.reps, stream, in_window, &fresh);
                else
                    in_window([&] { t.variant = time_launches(run, opt.warmup, opt.reps, stream, &fresh); });
                const std::array<CheckResult, 2> timed = fresh.collect();
                if (!timed[kBaselineSide].pass)
                    throw std::runtime_error("the baseline was wrong in a timed run: " + timed[kBaselineSide].describe());
                if (!timed[kVariantSide].pass) {  // no time is reported; a failed verify says more
                    failed = true;
                    const bool verify_failed = checked && !c.pass;
                    r.status = verify_failed ? "FAIL" : "FAIL (wrong in a timed run)";
                    emit(r, p, nullptr, verify_failed ? &c : &timed[kVariantSide], -1);
                    return;
                }
                if (!base) baseline[index_of(p)] = s.flops() / (t.variant.ms_median * 1e6);
                double joules = -1;
                if (opt.energy)
                    in_window([&] { joules = EnergyMeter::get().joules_per_call(run, t.variant.ms_median, stream, &fresh); });
                r.status = !checked ? "unchecked" : c.pass ? "PASS" : "FAIL";
                failed = failed || (checked && !c.pass);
                emit(r, p, &t, checked ? &c : nullptr, joules);
            } catch (const std::exception& e) {
                failed = true;
                r.status = "FAIL";
                emit(r, p, nullptr, nullptr, -1);
                std::printf("    error: %s\n", e.what());
                cudaGetLastError();
                if (cudaDeviceSynchronize() != cudaSuccess) {
                    std::fprintf(stderr, "%s: error: the CUDA context is broken after '%s'; stopping\n",
                                 ch.name.c_str(), name.c_str());
                    std::exit(kExitVerifyFailed);
                }
            }
        };

        // The baselines first, alone: their own rows, and the check that each can run here.
        auto sgemm_lib = [](Precision p) { return p == Precision::tf32 ? SgemmFn(cublas_tf32) : SgemmFn(cublas_sgemm); };
        auto baseline_of = [&](Precision p) {
            return p == Precision::fp16       ? prob.launch(cublas_hgemm)
                   : p == Precision::bf16     ? prob.launch(cublas_bgemm)
                   : p == Precision::fp8_e4m3 ? prob.launch(cublaslt_fp8)
                                              : prob.launch(sgemm_lib(p));
        };
        for (Precision p : precisions) {
            if (p == Precision::fp16)
                measure("cublas_hgemm", p, 0, [&] { return prob.verify(cublas_hgemm, stream); }, baseline_of(p), {});
            else if (p == Precision::bf16)
                measure("cublas_bgemm", p, 80, [&] { return prob.verify(cublas_bgemm, stream); }, baseline_of(p), {});
            else if (p == Precision::fp8_e4m3)
                measure("cublaslt_fp8", p, 89, [&] { return prob.verify(cublaslt_fp8, stream); }, baseline_of(p), {});
            else
                measure(p == Precision::tf32 ? "cublas_tf32" : "cublas_sgemm", p, p == Precision::tf32 ? 80 : 0,
                        [&] { return prob.verify(sgemm_lib(p), p, stream); }, baseline_of(p), {});
        }
        for (const SgemmVariant* v : sv)
            measure(v->name, v->precision, v->min_cc, [&] { return prob.verify(*v, stream); }, prob.launch(v->run),
                    baseline_of(v->precision));
        for (const HgemmVariant* v : hv)
            measure(v->name, Precision::fp16, v->min_cc, [&] { return prob.verify(*v, stream); }, prob.launch(v->run),
                    baseline_of(Precision::fp16));
        for (const BgemmVariant* v : bv)
            measure(v->name, Precision::bf16, v->min_cc, [&] { return prob.verify(*v, stream); }, prob.launch(v->run),
                    baseline_of(Precision::bf16));
        for (const Fp8gemmVariant* v : fv)
            measure(v->name, Precision::fp8_e4m3, v->min_cc, [&] { return prob.verify(*v, stream); },
                    prob.launch(v->run), baseline_of(Precision::fp8_e4m3));
    }
    if (opt.energy && !EnergyMeter::get().ready())
        std::printf("\nno energy figures (gflops_per_j left empty): %s\n", EnergyMeter::get().why_not().c_str());
    trace.write();
    if (failed) std::printf("\nverification FAILED for at least one variant (exit status 1)\n");
    return failed ? kExitVerifyFailed : kExitOk;
}

int run_and_print_fastest(const Chapter& ch, const Options& opt, const char* next_step) {
    std::vector<ResultRow> rows;
    const int status = run_chapter(ch, opt, &rows);
    // "dtype shape" -> the fastest verified variant, ranked by the figure printed beside it: the
    // paired % of cuBLAS (each variant's own rounds against cuBLAS), by time where a row has none.
    std::map<std::string, const ResultRow*> fastest;
    auto faster = [](const ResultRow& a, const ResultRow& b) {
        if (a.pct_baseline > 0 && b.pct_baseline > 0) return a.pct_baseline > b.pct_baseline;
        return a.ms_median < b.ms_median;
    };
    for (const ResultRow& r : rows) {
        if (r.variant.rfind("cublas", 0) == 0 || r.ms_median <= 0 || (r.status != "PASS" && r.status != "unchecked"))
            continue;
        const ResultRow*& f = fastest[r.dtype + " " + to_string(r.shape)];
        if (!f || faster(r, *f)) f = &r;
    }
    std::printf("\nfastest configuration per precision and shape (%s):\n", next_step);
    for (const auto& [key, r] : fastest)
        std::printf("  %-22s %-28s %10.1f GFLOP/s  %5.1f%% of cuBLAS\n", key.c_str(), r->variant.c_str(), r->gflops,
                    r->pct_baseline);
    return status;
}

}  // namespace wb
