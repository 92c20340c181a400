// verify.cuh - is C right? Entries of C against an FP64 dot product of the same inputs.
//
// An entry passes when |C - C_ref| <= gamma * (|alpha| (|A||B|)_ij + |beta| |C0_ij|) + tiny, with
// gamma = n u / (1 - n u), n = K + 2, u the unit roundoff of the accumulation: the worst case of any
// summation order, so an honest kernel never fails it, while a wrong index or a stale value fails
// it by orders of magnitude. NaN and Inf never pass. Beside it, the checked entries' normwise error
// ||C - C_ref|| / ||C_ref|| must stay under 3 sqrt(n) u: an honest sum's error grows like sqrt(n) u,
// so an FP32 variant that multiplies in TF32 (2^-11) fails at every K, even where its entries stay
// inside their own bounds. (The 3: honest kernels reached at most 0.91 sqrt(n) u, in FP16.)
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>

#include "data.cuh"

namespace wb {

// FP16 and BF16: 16-bit inputs, FP32 accumulation. 09 adds FP8 E4M3 inputs.
enum class Precision : int { fp32, tf32, fp16, bf16, fp8 };
inline const char* name(Precision p) {
    const char* names[] = {"fp32", "tf32", "fp16", "bf16", "fp8_e4m3"};
    return names[int(p)];
}

// The value the arithmetic of precision p multiplies, given what a launcher received. TF32 keeps
// 10 mantissa bits, rounded to nearest with ties away from zero (cvt.rna.tf32.f32).
__host__ __device__ inline double seen_as(float x, Precision p) {
    if (p != Precision::tf32 || !(fabsf(x) <= FLT_MAX)) return x;
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xFFFFE000u;
    memcpy(&x, &u, 4);
    return x;
}
__host__ __device__ inline double seen_as(__half x, Precision) {
    return __half2float(x);
}
__host__ __device__ inline double seen_as(__nv_bfloat16 x, Precision) {
    return __bfloat162float(x);
}

// The most precision p can reach on this GPU, GFLOP/s (infinite where unknown): a rate above it is
// "implausible", never a result (the kernel skipped work). TF32 runs at half FP16's tensor rate, FP8 at twice.
inline double peak(const Gpu& g, Precision p) {
    const double tensor = g.tensor_peak * (p == Precision::tf32 ? 0.5 : p == Precision::fp8 ? 2 : 1);
    const double v = p == Precision::fp32 ? g.fp32_peak : tensor;
    return v > 0 ? v : INFINITY;
}

struct Tolerance {
    double factor = 0, tiny = 0, normwise = 0;
};
inline Tolerance tolerance_for(Precision p, int K) {
    // u: FP32 rounds to nearest (2^-24); tensor cores may truncate (2^-23); Hopper accumulates FP8
    // products in about 13 mantissa bits (2^-13). in: TF32 inputs a device truncates instead of
    // rounding differ by one TF32 ulp (2^-10) in each factor; FP8 scales add a few FP32 roundings.
    const double u = std::ldexp(1.0, p == Precision::fp32 ? -24 : p == Precision::fp8 ? -13 : -23);
    const double in = p == Precision::tf32 ? std::ldexp(1.0, -9) : p == Precision::fp8 ? std::ldexp(1.0, -21) : 0;
    const double n = K + 2.0, nu = std::min(n * u, 0.5);
    return {in + nu / (1 - nu), n * FLT_MIN, (p == Precision::tf32 ? 1.5 * in : 0) + 3 * std::sqrt(n) * u};
}

// One checked entry: where, what the kernel wrote, the exact value, and its error scale.
struct Entry {
    int i = 0, j = 0;
    double got = 0, want = 0, scale = 0;
};

struct Check {
    bool pass = true;
    long long checked = 0, failures = 0;
    Entry worst;                       // the entry furthest outside (or least inside) its bound
    double worst_ratio = 0;            // |error| / bound of that entry: above 1 fails
    double rel_err = 0, normwise = 0;  // the normwise error and its ceiling
    std::string what;                  // what was compared
    std::string describe() const {
        char line[320];
        if (failures)
            std::snprintf(line, sizeof line, "%lld of %lld entries wrong (%s); worst C[%d][%d] = %.7g, expected %.7g",
                          failures, checked, what.c_str(), worst.i, worst.j, worst.got, worst.want);
        else
            std::snprintf(line, sizeof line,
                          "normwise error %.3g ABOVE its ceiling %.3g (%s): the arithmetic is "
                          "coarser than the precision's",
                          rel_err, normwise, what.c_str());
        return line;
    }
};

// Judges entries; `slack` widens the bounds (2 against another library's result, which carries
// its own error).
inline Check judge(const std::vector<Entry>& entries, const Tolerance& tol, std::string what, double slack = 1) {
    Check r;
    double err2 = 0, ref2 = 0;
    for (const Entry& e : entries) {
        const double err = std::fabs(e.got - e.want), bound = slack * (tol.factor * e.scale + tol.tiny);
        const double ratio = std::isfinite(e.got) ? err / bound : INFINITY;
        r.failures += !(ratio <= 1);
        if (!(ratio <= r.worst_ratio)) r.worst_ratio = ratio, r.worst = e;
        err2 += std::isfinite(e.got) ? err * err : INFINITY;
        ref2 += e.want * e.want;
    }
    r.checked = (long long)entries.size();
    r.rel_err = std::sqrt(ref2 > 0 ? err2 / ref2 : err2);
    r.normwise = slack * tol.normwise;
    r.pass = r.failures == 0 && r.rel_err <= r.normwise;
    r.what = std::move(what);
    return r;
}

// Which entries a check looks at: all of them for a small C, else the corners, the middle, and
// `count` more drawn from `key` (tile-edge bugs live at the corners).
inline std::vector<Entry> positions(Shape s, size_t count, uint64_t key) {
    std::vector<Entry> out;
    if (size_t(s.m) * s.n <= count) {
        for (int i = 0; i < s.m; ++i)
            for (int j = 0; j < s.n; ++j) out.push_back({i, j});
        return out;
    }
    const int fixed[][2] = {{0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}, {s.m / 2, s.n / 2}};
    for (auto& f : fixed) out.push_back({f[0], f[1]});
    for (uint64_t t = 0; out.size() < count; ++t) {
        const uint64_t h = mix64(key + t);
        out.push_back({int((h >> 32) % uint64_t(s.m)), int(uint32_t(h) % uint64_t(s.n))});
    }
    return out;
}

// The reference of entry e: a dot product in FP64 of the inputs as the precision sees them. `a(k)`
// and `b(k)` give row e.i of A and column e.j of B; c0 is C0_ij (read only when beta != 0).
#pragma nv_exec_check_disable  // host code passes host lambdas, the check kernel device ones
template <class RowA, class ColB>
__host__ __device__ void reference(Entry& e, int K, float alpha, float beta, float c0, RowA a, ColB b, int from = 0,
                                   int step = 1) {
    double v = 0, s = 0;
    for (int k = from; k < K; k += step) {
        const double p = a(k) * b(k);
        v += p, s += fabs(p);
    }
    e.want = alpha * v + (beta != 0 ? double(beta) * c0 : 0);
    e.scale = fabs(double(alpha)) * s + (beta != 0 ? fabs(double(beta) * c0) : 0);
}

// The entries' references on the CPU, from host copies of the inputs the launchers received
// (row-major A: M x K, B: K x N, C0: M x N), and what the kernel wrote into C.
template <class T>
void check_on_cpu(std::vector<Entry>& entries, const std::vector<T>& A, const std::vector<T>& B,
                  const std::vector<float>& C0, const std::vector<float>& C, Shape s, float alpha, float beta,
                  Precision p) {
    for (Entry& e : entries) {
        reference(
            e, s.k, alpha, beta, C0[size_t(e.i) * s.n + e.j],
            [&](int k) { return seen_as(A[size_t(e.i) * s.k + k], p); },
            [&](int k) { return seen_as(B[size_t(k) * s.n + e.j], p); });
        e.got = C[size_t(e.i) * s.n + e.j];
    }
}

}  // namespace wb
