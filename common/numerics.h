// numerics.h - random inputs, the double-precision reference and the checker.
//
// Host-only code (compiled by g++, tested without a GPU). The verification policy is the one of
// docs/CONTRACT.md, "Verifying": an entry of C passes when
//
//     |C - C_ref| <= bound = (c_in + gamma_{K+2}) * scale + tiny,
//     scale       = |alpha| * (|A| |B|)_ij + |beta| * |C0_ij|,
//     gamma_n     = n u / (1 - n u)      (the classic worst-case bound of a length-n dot product),
//
// where u is the unit roundoff of the accumulation and c_in covers inputs that a device may round
// differently from us (TF32 only). The bound holds for any summation order, FMA or not, so a
// correct kernel can never fail it, while a wrong index, a missing term or a stale value fails it
// by orders of magnitude on random data. NaN and Inf never pass.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.h"

namespace wb {

// The arithmetic a variant uses. FP16 and BF16 mean 16-bit inputs with FP32 accumulation;
// FP8_E4M3 means E4M3 inputs with one FP32 scale per tensor, accumulated by the tensor core.
enum class Precision { fp32, tf32, fp16, bf16, fp8_e4m3 };
constexpr int kPrecisionCount = 5;
const char* to_string(Precision p);  // "fp32", "tf32", "fp16", "bf16", "fp8_e4m3"

// ---- inputs ----------------------------------------------------------------------------------

// Fills `count` floats with values uniform in [-1, 1), each a pure function of (seed, stream,
// index): the same data on every machine and for any thread count. Each value has at most 24
// significant bits, so it is exact in FP32.
void fill_random(float* data, size_t count, uint64_t seed, uint64_t stream);

// Rounding to the input precision of the tensor cores, as the device does it:
// TF32 keeps 10 mantissa bits, round to nearest with ties away from zero (cvt.rna.tf32.f32);
// FP16 rounds to nearest even, overflows to +-Inf beyond 65504 and keeps subnormals.
float round_to_tf32(float x);
float round_to_fp16(float x);
uint16_t fp16_bits(float x);  // the IEEE binary16 bit pattern of round_to_fp16(x)
// BF16 keeps FP32's exponent and 8 significant bits: round to nearest even; NaN stays NaN.
float round_to_bf16(float x);
uint16_t bf16_bits(float x);  // the upper 16 bits of round_to_bf16(x)
// FP8 E4M3 (the "FN" variant of the OCP FP8 format): 1 sign, 4 exponent (bias 7), 3 mantissa
// bits; no infinities, one NaN pattern per sign (S.1111.111); largest finite 448, smallest normal
// 2^-6, smallest subnormal 2^-9. Round to nearest even; a finite value beyond 448 (and +-Inf)
// saturates to +-448, as the scaled casts of FP8 training do; NaN stays NaN (0x7F with its sign).
constexpr float kE4m3Max = 448.0f;
uint8_t e4m3_bits(float x);
float e4m3_value(uint8_t bits);
inline float round_to_e4m3(float x) { return e4m3_value(e4m3_bits(x)); }
// The per-tensor scale: amax / 448, so the largest magnitude lands on E4M3's largest value and
// the grid covers the tensor's range. 1 when the tensor is all zeros (or amax is not finite).
float e4m3_scale(const float* v, size_t count);
// Rounds every element in place (fp32: no change). FP8_E4M3: quantizes with the tensor's own
// scale and dequantizes, x -> e4m3(x / s) * s: the values the FP8 kernels compute with.
void round_to(Precision p, std::vector<float>& v);

// ---- reference ---------------------------------------------------------------------------------

// One GEMM as the kernel sees it: row-major, packed, host copies of the (already rounded) inputs.
// C0 is the initial C; it is only read when beta != 0.
struct GemmView {
    Shape s;
    float alpha = 1.0f, beta = 0.0f;
    const float* A = nullptr;
    const float* B = nullptr;
    const float* C0 = nullptr;
};

// Exact-in-double value and error scale (|alpha| |A||B| + |beta| |C0|) of one entry.
struct RefEntry {
    int i = 0, j = 0;
    double value = 0.0;
    double scale = 0.0;
};

// The full reference, all M*N entries, computed with all hardware threads.
void reference_full(const GemmView& g, std::vector<double>& value, std::vector<double>& scale);
// A sample of entries: the four corners, the last row and column, and random ones
// (deterministic for a given seed). Cost: count * K.
std::vector<RefEntry> reference_sample(const GemmView& g, size_t count, uint64_t seed);

// Above this many multiply-adds the harness checks a sample on the CPU plus every entry against
// cuBLAS, instead of computing the whole reference on the CPU.
constexpr double kFullReferenceMaxMacs = 2.2e9;
// True when the whole reference of `s` is computed on the CPU: cheap enough in time (multiply-adds)
// and in memory (two doubles per entry of C).
inline bool use_full_reference(Shape s) {
    return double(s.m) * s.n * s.k <= kFullReferenceMaxMacs && double(s.m) * s.n <= double(1 << 25);
}

// ---- checking ----------------------------------------------------------------------------------

struct Tolerance {
    double factor = 0.0;  // c_in + gamma_{K+2}
    double tiny = 0.0;    // absolute slack for results near underflow
    // The ceiling on the normwise relative error ||C - C_ref|| / ||C_ref|| of the checked entries:
    // kNormwiseConstant * sqrt(K + 2) * u, plus the input rounding a TF32 device may do otherwise.
    // The componentwise bound grows like K u, the error of an honest sum like sqrt(K) u: at large
    // K the first lets through products rounded to TF32 (2^-11) in an FP32 variant; this does not.
    double normwise = 0.0;
};
// The constant of the normwise ceiling. In the committed results (results/, PASS rows, K up to
// 8192, each compared with a second library's result that carries its own error) the honest
// kernels reached at most 0.31 sqrt(K + 2) u in FP32, 0.91 in FP16, 0.81 in BF16 and 0.18 in FP8;
// TF32 at most 7.9e-4 in all, from its inputs' rounding. 3 leaves that margin again, and keeps an
// FP32 variant on TF32 products (normwise error about 2.7e-4) out at every K up to kMaxDim.
constexpr double kNormwiseConstant = 3.0;
Tolerance tolerance_for(Precision p, int K);

struct CheckResult {
    bool pass = true;
    long long checked = 0;
    long long failures = 0;
    // The worst entry: |error| / bound (above 1 fails; NaN counts as infinite).
    double worst_ratio = 0.0;
    int worst_i = -1, worst_j = -1;
    double worst_got = 0.0, worst_want = 0.0;
    // Normwise relative error ||C - C_ref||_F / ||C_ref||_F over the checked entries, and the
    // ceiling it was held to (Tolerance::normwise): above it the result fails even where every
    // entry is inside its own bound.
    double rel_err = 0.0;
    double normwise_limit = 0.0;
    std::string what;  // what was compared, e.g. "all 1024x1024 entries against the CPU"
    std::string describe() const;  // one line for a failure message
};

// Compares a row-major M x N result with the full reference.
CheckResult check_full(const float* C, int M, int N, const std::vector<double>& value,
                       const std::vector<double>& scale, const Tolerance& tol);
// Compares the sampled entries only.
CheckResult check_sample(const float* C, int N, const std::vector<RefEntry>& sample,
                         const Tolerance& tol);
// Compares every entry with another library's result (e.g. cuBLAS) computed from the same inputs.
// Both results carry their own rounding error, so the bound is doubled, and |A||B| is bounded by
// Cauchy-Schwarz, (|A||B|)_ij <= ||A_i,:||_2 ||B_:,j||_2, which costs O(MK + KN) instead of O(MNK).
CheckResult check_against(const float* C, const float* other, const GemmView& g,
                          const Tolerance& tol, const std::string& library = "cuBLAS");

// One entry of C checked on its own: where, what the kernel wrote, the exact value and the error
// scale |alpha| (|A||B|)_ij + |beta| |C0_ij| (the per-launch checks of fresh_inputs.cuh).
struct EntryCheck {
    int i = 0, j = 0;
    double got = 0.0, want = 0.0, scale = 0.0;
};
CheckResult check_entries(const std::vector<EntryCheck>& entries, const Tolerance& tol, const std::string& what);

// Merges two checks of the same result (e.g. sample against the CPU, all against cuBLAS).
CheckResult combine(const CheckResult& a, const CheckResult& b);

}  // namespace wb
