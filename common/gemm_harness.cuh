// gemm_harness.cuh - the one harness every GPU chapter hands its variant table to.
//
// A chapter's kernels.cuh defines launchers with the GEMM contract of docs/CONTRACT.md
// (row-major, packed, C = alpha * A * B + beta * C, any M, N, K >= 1) and lists them:
//
//   inline const wb::SgemmVariant kSgemmVariants[] = {
//       {"coalesced_32x32", launch_coalesced<32, 32>, "consecutive threads walk along a row of C"},
//   };
//
// and its main is a few lines:
//
//   int main(int argc, char** argv) {
//       return wb::chapter_main({"02_naive_kernel", wb::table(kSgemmVariants)}, argc, argv);
//   }
//
// The harness parses the options, checks the device, makes seeded random inputs, verifies every
// variant against the double-precision reference, times it and cuBLAS on the same shape, prints
// one table and appends CSV rows. The same GemmProblem class is used by the Catch2 tests.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device.cuh"
#include "fresh_inputs.cuh"
#include "numerics.h"
#include "options.h"
#include "report.h"
#include "timer.cuh"

// The kernel interface of every chapter (docs/CONTRACT.md, "The GEMM contract").
using SgemmFn = void (*)(int M, int N, int K, float alpha, const float* A, const float* B,
                         float beta, float* C, cudaStream_t stream);
// The 16-bit input types share one signature: T in, FP32 accumulate, FP32 C.
template <class T>
using Gemm16Fn = void (*)(int M, int N, int K, float alpha, const T* A, const T* B, float beta,
                          float* C, cudaStream_t stream);
using HgemmFn = Gemm16Fn<__half>;         // FP16 in, FP32 accumulate
using BgemmFn = Gemm16Fn<__nv_bfloat16>;  // BF16 in, FP32 accumulate

namespace wb {
// An FP8 E4M3 operand: its bytes and its per-tensor scale, a device pointer (the value of an entry
// is byte * *scale; a scale stays on the device, as it comes out of an amax reduction there).
struct Fp8Operand {
    const __nv_fp8_e4m3* data;
    const float* scale;
};
}  // namespace wb
// FP8 E4M3 in, FP32 accumulate, FP32 C: C = alpha * scale_a * scale_b * (A8 * B8) + beta * C. B
// comes as Bt, N x K row-major (B transposed): FP8 tensor cores read both operands along K, and
// cuBLASLt's FP8 GEMM asks for the same layout.
using Fp8gemmFn = void (*)(int M, int N, int K, float alpha, wb::Fp8Operand A, wb::Fp8Operand Bt, float beta,
                           float* C, cudaStream_t stream);

namespace wb {

// What the harness needs to print a kernel's resources (registers, shared memory, spills,
// occupancy). Optional: leave `kernel` null for variants that launch several kernels or none.
struct KernelInfo {
    const void* kernel = nullptr;  // (const void*)my_kernel<...>
    int threads = 0;               // threads per block of the launch
    size_t dynamic_smem = 0;       // dynamic shared memory per block in bytes
};

struct SgemmVariant {
    const char* name;  // short, unique in the chapter, used by --variant
    SgemmFn run;
    const char* what;  // one line: the idea of this step
    Precision precision = Precision::fp32;  // tf32 for tensor-core variants on FP32 inputs
    KernelInfo info = {};
    int min_cc = 0;  // e.g. 80: needs compute capability 8.0; skipped (and said so) below
};

// A variant on 16-bit inputs (FP16 or BF16); its precision is the input type's.
template <class T>
struct Gemm16Variant {
    const char* name;
    Gemm16Fn<T> run;
    const char* what;
    KernelInfo info = {};
    int min_cc = 0;
};
using HgemmVariant = Gemm16Variant<__half>;
using BgemmVariant = Gemm16Variant<__nv_bfloat16>;

// A variant on FP8 E4M3 inputs with per-tensor scales (precision fp8_e4m3).
struct Fp8gemmVariant {
    const char* name;
    Fp8gemmFn run;
    const char* what;
    KernelInfo info = {};
    int min_cc = 0;
};

// A variant table as a vector: wb::table(kSgemmVariants).
template <class T, size_t N>
std::vector<T> table(const T (&rows)[N]) {
    return std::vector<T>(rows, rows + N);
}

struct Chapter {
    std::string name;  // "03_shared_tiling"
    std::vector<SgemmVariant> sgemm = {};
    std::vector<HgemmVariant> hgemm = {};
    std::vector<BgemmVariant> bgemm = {};
    std::vector<Shape> default_shapes = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
    std::vector<ExtraOption> extras = {};
    std::vector<Fp8gemmVariant> fp8 = {};  // last, so that the chapters' brace lists above stay valid
};

// ---- cuBLAS with the row-major trick, as launchers with the chapter signatures ---------------
// cuBLAS is column-major. A row-major M x N matrix is the same bytes as a column-major N x M
// matrix (its transpose), so C^T = B^T A^T is one column-major call with the operands swapped.
cublasHandle_t cublas_handle();  // created once per process
void cublas_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                  float* C, cudaStream_t stream);  // FP32 on the CUDA cores
void cublas_tf32(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                 float* C, cudaStream_t stream);   // TF32 tensor cores, FP32 in and out
void cublas_hgemm(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                  float* C, cudaStream_t stream);  // FP16 in, FP32 accumulate and out
void cublas_bgemm(int M, int N, int K, float alpha, const __nv_bfloat16* A, const __nv_bfloat16* B,
                  float beta, float* C, cudaStream_t stream);  // BF16 in, FP32 accumulate and out
// FP8 E4M3 in (scales on the device), FP32 accumulate and out, through cublasLtMatmul: cublasGemmEx
// has no FP8. cuBLASLt's FP8 kernels want "TN" (its A transposed, its B not) and 16-byte aligned
// operands with leading dimensions of multiples of 16 bytes; any other shape or address is run as
// the problem padded with zeros to multiples of 16 (copies in and out inside the call).
void cublaslt_fp8(int M, int N, int K, float alpha, Fp8Operand A, Fp8Operand Bt, float beta, float* C,
                  cudaStream_t stream);

// FP32 values rounded to FP16 / BF16 (to nearest even), as the 16-bit variants receive them.
std::vector<__half> to_half(const std::vector<float>& v);
std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& v);
// FP32 values divided by `scale` and rounded to E4M3 (wb::e4m3_bits), optionally transposed: a rows
// x cols matrix becomes cols x rows (B -> Bt for the FP8 launchers).
std::vector<__nv_fp8_e4m3> to_e4m3(const std::vector<float>& v, float scale, int rows, int cols, bool transpose);

// ---- device memory ---------------------------------------------------------------------------
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t count) : count_(count) {
        WB_CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
    }
    ~DeviceBuffer() {
        if (ptr_) cudaFree(ptr_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) { o.ptr_ = nullptr; }
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(count_, o.count_);
        return *this;
    }
    T* get() const { return ptr_; }
    size_t size() const { return count_; }
    void upload(const std::vector<T>& host) {
        WB_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), count_ * sizeof(T), cudaMemcpyHostToDevice));
    }
    std::vector<T> download() const {
        std::vector<T> host(count_);
        WB_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, count_ * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }

private:
    T* ptr_ = nullptr;
    size_t count_ = 0;
};

// ---- one problem: inputs, reference, verification, timing ------------------------------------
// Holds seeded random A, B (and C0 when beta != 0) on the host and the device, and computes the
// reference lazily, once per precision. Before every verified run the output is poisoned with
// NaN when beta == 0 (so an unwritten entry, or a kernel that reads C, fails) or reset to C0.
class GemmProblem {
public:
    GemmProblem(Shape shape, float alpha, float beta, uint64_t seed);
    ~GemmProblem();
    GemmProblem(const GemmProblem&) = delete;
    GemmProblem& operator=(const GemmProblem&) = delete;

    const Shape& shape() const { return shape_; }
    // Device bytes this problem needs, with `copies16` 16-bit copies of A and B (one per 16-bit
    // input type the selected variants use: FP16, BF16), and 1-byte copies when `fp8`.
    static size_t device_bytes(Shape s, float beta, int copies16, bool fp8 = false);
    // True when the reference is computed in full on the CPU (else: sample + cuBLAS).
    static bool full_reference(Shape s);

    // Computes the reference for precision p now (verify does it on first use): for large shapes
    // this runs cuBLAS, which must not fall inside a variant's kernel trace window.
    void prepare_reference(Precision p, cudaStream_t stream = 0);
    CheckResult verify(const SgemmVariant& v, cudaStream_t stream = 0);
    CheckResult verify(const HgemmVariant& v, cudaStream_t stream = 0);
    // Verifies a launcher that is not in a table (used by tests, e.g. a planted bug).
    CheckResult verify(SgemmFn run, Precision p, cudaStream_t stream = 0);
    CheckResult verify(HgemmFn run, cudaStream_t stream = 0);
    CheckResult verify(const BgemmVariant& v, cudaStream_t stream = 0);
    CheckResult verify(BgemmFn run, cudaStream_t stream = 0);
    // FP8: A and B quantized with per-tensor scales (amax / 448), B handed over transposed; the
    // reference is computed from the dequantized values, so quantization error is not counted.
    CheckResult verify(const Fp8gemmVariant& v, cudaStream_t stream = 0);
    CheckResult verify(Fp8gemmFn run, cudaStream_t stream = 0);
    // Times `run` with fresh inputs before every launch and a check after it (fresh_inputs.cuh);
    // throws std::runtime_error("wrong in a timed run: ...") when a launch's check fails.
    Timing time(SgemmFn run, int warmup, int reps, cudaStream_t stream = 0, Precision p = Precision::fp32);
    Timing time(HgemmFn run, int warmup, int reps, cudaStream_t stream = 0);
    Timing time(BgemmFn run, int warmup, int reps, cudaStream_t stream = 0);
    Timing time(Fp8gemmFn run, int warmup, int reps, cudaStream_t stream = 0);
    // The device operands of precision p, for a FreshInputs guard: the launchers of launch() below
    // read exactly these buffers. A timing overwrites them; the next verify() puts the seeded
    // inputs back first.
    GemmOperands operands(Precision p);
    // One call of `run` on this problem's buffers, as a callable of the stream (for time_paired,
    // the energy meter, or any timing of one's own).
    std::function<void(cudaStream_t)> launch(SgemmFn run);
    std::function<void(cudaStream_t)> launch(HgemmFn run);
    std::function<void(cudaStream_t)> launch(BgemmFn run);
    std::function<void(cudaStream_t)> launch(Fp8gemmFn run);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Shape shape_;
};

// Parses the options (chapter defaults applied); on bad input prints one line and exits 2,
// on --help prints the usage and exits 0. Unknown variant names are bad input too.
Options parse_or_exit(const Chapter& ch, int argc, char** argv);
// Runs every selected variant on every shape. Returns the exit status (0, or 1 when a
// verification failed; 2 and 3 exit directly). Rows are also returned when `rows` is given.
int run_chapter(const Chapter& ch, const Options& opt, std::vector<ResultRow>* rows = nullptr);
inline int chapter_main(const Chapter& ch, int argc, char** argv) {
    return run_chapter(ch, parse_or_exit(ch, argc, argv));
}

// For the labs' tuning sweeps: runs every variant of `ch` on the selected shapes (as run_chapter),
// then prints the fastest verified variant per precision and shape, under a line naming what to do
// with the result (`next_step`). Returns run_chapter's exit status.
int run_and_print_fastest(const Chapter& ch, const Options& opt, const char* next_step);

// Prints the resource table of the variants that carry a KernelInfo: registers per thread, shared
// memory per block, "local B" = local memory per thread (register spills, or arrays the compiler
// could not keep in registers), blocks and warps per SM, and the occupancy that gives.
void print_kernel_resources(const Chapter& ch, const DeviceFacts& dev);

// The run facts for CSV rows: device, versions, the git commit the program was built from.
RunInfo run_info(const std::string& chapter, const DeviceFacts& dev);
std::string build_git_commit();

}  // namespace wb
