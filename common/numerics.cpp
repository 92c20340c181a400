// numerics.cpp - see numerics.h for the policy.
#include "numerics.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include "mix64.h"

namespace wb {

const char* to_string(Precision p) {
    switch (p) {
        case Precision::tf32: return "tf32";
        case Precision::fp16: return "fp16";
        case Precision::bf16: return "bf16";
        case Precision::fp8_e4m3: return "fp8_e4m3";
        default: return "fp32";
    }
}

// ---- inputs ----------------------------------------------------------------------------------

namespace {

// Runs body(begin, end) over [0, count) on all hardware threads.
template <class Body>
void parallel_for(size_t count, Body body) {
    size_t workers = std::max(1u, std::thread::hardware_concurrency());
    workers = std::min(workers, std::max<size_t>(1, count / 64));
    if (workers <= 1) {
        body(size_t(0), count);
        return;
    }
    std::vector<std::thread> pool;
    size_t chunk = (count + workers - 1) / workers;
    for (size_t w = 0; w < workers; ++w) {
        size_t b = w * chunk, e = std::min(count, b + chunk);
        if (b < e) pool.emplace_back(body, b, e);
    }
    for (auto& t : pool) t.join();
}

float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
uint32_t float_to_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

}  // namespace

void fill_random(float* data, size_t count, uint64_t seed, uint64_t stream) {
    const uint64_t base = mix64(seed ^ mix64(stream + 0x1234567ull));
    parallel_for(count, [&](size_t b, size_t e) {
        for (size_t i = b; i < e; ++i) data[i] = unit_value(mix64(base + i));
    });
}

float round_to_tf32(float x) {
    if (!std::isfinite(x)) return x;
    // Add half of the dropped range (ties go away from zero because the magnitude bits round up),
    // then clear the 13 low mantissa bits.
    uint32_t u = float_to_bits(x);
    u = (u + 0x1000u) & 0xFFFFE000u;
    return bits_to_float(u);
}

float round_to_fp16(float x) {
    if (!std::isfinite(x)) return x;
    const float a = std::fabs(x);
    if (a >= 65520.0f) return std::copysign(INFINITY, x);  // rounds past the largest half, 65504
    int e = 0;
    std::frexp(a, &e);  // a = f * 2^e with f in [0.5, 1): the leading bit has weight 2^(e-1)
    const int lead = std::max(e - 1, -14);           // below 2^-14 the spacing stays 2^-24
    const float spacing = std::ldexp(1.0f, lead - 10);  // 10 mantissa bits after the leading one
    const float r = std::nearbyint(a / spacing) * spacing;  // ties to even (default mode)
    return std::copysign(r, x);
}

uint16_t fp16_bits(float x) {
    const float r = round_to_fp16(x);
    const uint32_t sign = (float_to_bits(r) >> 16) & 0x8000u;
    const float a = std::fabs(r);
    if (std::isnan(r)) return 0x7E00u;
    if (std::isinf(r)) return static_cast<uint16_t>(sign | 0x7C00u);
    if (a < 6.103515625e-05f)  // subnormal half: a = m * 2^-24
        return static_cast<uint16_t>(sign | static_cast<uint32_t>(a * 16777216.0f));
    int e = 0;
    float f = std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
    const uint32_t exponent = static_cast<uint32_t>(e - 1 + 15);
    const uint32_t mantissa = static_cast<uint32_t>((f * 2.0f - 1.0f) * 1024.0f);
    return static_cast<uint16_t>(sign | (exponent << 10) | mantissa);
}

float round_to_bf16(float x) {
    if (std::isnan(x)) return x;
    // Keep the upper 16 bits, rounding to nearest even on the 16 dropped ones: add 0x7FFF plus the
    // lowest kept bit, so an exact tie rounds up only when that makes the kept part even. A carry
    // into the exponent is the right answer (and reaches Inf past the largest BF16).
    uint32_t u = float_to_bits(x);
    u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
    return bits_to_float(u);
}

uint16_t bf16_bits(float x) { return static_cast<uint16_t>(float_to_bits(round_to_bf16(x)) >> 16); }

uint8_t e4m3_bits(float x) {
    const uint8_t sign = std::signbit(x) ? 0x80u : 0x00u;
    if (std::isnan(x)) return static_cast<uint8_t>(sign | 0x7Fu);
    const float a = std::fabs(x);
    if (a >= kE4m3Max) return static_cast<uint8_t>(sign | 0x7Eu);  // 1111.110 = 1.75 * 2^8
    int e = 0;
    std::frexp(a, &e);                                 // leading bit of a has weight 2^(e-1)
    const int lead = std::max(e - 1, -6);              // below 2^-6 the spacing stays 2^-9
    const float spacing = std::ldexp(1.0f, lead - 3);  // 3 mantissa bits after the leading one
    const float r = std::nearbyint(a / spacing) * spacing;  // ties to even; at most 448 here
    if (r < 0.015625f)  // subnormal (or zero): r = m * 2^-9, exponent field 0
        return static_cast<uint8_t>(sign | static_cast<uint32_t>(r * 512.0f));
    const float f = std::frexp(r, &e);  // r = f * 2^e, f in [0.5, 1)
    const uint32_t exponent = static_cast<uint32_t>(e - 1 + 7);
    const uint32_t mantissa = static_cast<uint32_t>((f * 2.0f - 1.0f) * 8.0f);
    return static_cast<uint8_t>(sign | (exponent << 3) | mantissa);
}

float e4m3_value(uint8_t bits) {
    const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
    const int exponent = (bits >> 3) & 0xF, mantissa = bits & 0x7;
    if (exponent == 0xF && mantissa == 0x7) return NAN;
    if (exponent == 0) return sign * std::ldexp(float(mantissa), -9);
    return sign * std::ldexp(1.0f + mantissa / 8.0f, exponent - 7);
}

float e4m3_scale(const float* v, size_t count) {
    float amax = 0.0f;
    for (size_t i = 0; i < count; ++i) amax = std::max(amax, std::fabs(v[i]));  // NaN is skipped
    return (amax > 0.0f && std::isfinite(amax)) ? amax / kE4m3Max : 1.0f;
}

void round_to(Precision p, std::vector<float>& v) {
    switch (p) {
        case Precision::fp32: return;
        case Precision::tf32: for (float& x : v) x = round_to_tf32(x); return;
        case Precision::fp16: for (float& x : v) x = round_to_fp16(x); return;
        case Precision::bf16: for (float& x : v) x = round_to_bf16(x); return;
        case Precision::fp8_e4m3: {
            const float s = e4m3_scale(v.data(), v.size());
            for (float& x : v) x = round_to_e4m3(x / s) * s;
            return;
        }
    }
}

// ---- reference ---------------------------------------------------------------------------------

void reference_full(const GemmView& g, std::vector<double>& value, std::vector<double>& scale) {
    const int M = g.s.m, N = g.s.n, K = g.s.k;
    value.assign(size_t(M) * N, 0.0);
    scale.assign(size_t(M) * N, 0.0);
    const bool use_c0 = g.beta != 0.0f;
    parallel_for(size_t(M), [&](size_t row_begin, size_t row_end) {
        for (size_t i = row_begin; i < row_end; ++i) {
            double* v = &value[i * N];
            double* s = &scale[i * N];
            // i-k-j order: the inner loop walks B and the output with stride 1.
            for (int k = 0; k < K; ++k) {
                const double a = g.A[i * K + k], abs_a = std::fabs(a);
                const float* b = &g.B[size_t(k) * N];
                for (int j = 0; j < N; ++j) {
                    v[j] += a * b[j];
                    s[j] += abs_a * std::fabs(double(b[j]));
                }
            }
            for (int j = 0; j < N; ++j) {
                v[j] *= g.alpha;
                s[j] *= std::fabs(double(g.alpha));
                if (use_c0) {
                    const double c0 = g.C0[i * N + j];
                    v[j] += double(g.beta) * c0;
                    s[j] += std::fabs(double(g.beta) * c0);
                }
            }
        }
    });
}

std::vector<RefEntry> reference_sample(const GemmView& g, size_t count, uint64_t seed) {
    const int M = g.s.m, N = g.s.n, K = g.s.k;
    std::vector<RefEntry> out;
    // Corners and edges first: that is where tile-boundary bugs live.
    const int fixed[][2] = {{0, 0}, {0, N - 1}, {M - 1, 0}, {M - 1, N - 1}, {M / 2, N / 2}};
    for (auto& ij : fixed) out.push_back({ij[0], ij[1], 0.0, 0.0});
    for (size_t t = 0; out.size() < count; ++t) {
        const uint64_t r = mix64(seed * 0x51ED27ull + t);
        out.push_back({int((r >> 32) % uint64_t(M)), int((r & 0xFFFFFFFFull) % uint64_t(N)), 0.0, 0.0});
    }
    parallel_for(out.size(), [&](size_t b, size_t e) {
        for (size_t t = b; t < e; ++t) {
            RefEntry& x = out[t];
            double v = 0.0, s = 0.0;
            for (int k = 0; k < K; ++k) {
                const double a = g.A[size_t(x.i) * K + k], bb = g.B[size_t(k) * N + x.j];
                v += a * bb;
                s += std::fabs(a * bb);
            }
            x.value = g.alpha * v;
            x.scale = std::fabs(double(g.alpha)) * s;
            if (g.beta != 0.0f) {
                const double c0 = g.C0[size_t(x.i) * N + x.j];
                x.value += double(g.beta) * c0;
                x.scale += std::fabs(double(g.beta) * c0);
            }
        }
    });
    return out;
}

// ---- checking ----------------------------------------------------------------------------------

Tolerance tolerance_for(Precision p, int K) {
    // Unit roundoff of the accumulation: IEEE FP32 on the CUDA cores rounds to nearest (2^-24);
    // tensor cores may truncate inside their dot products, which doubles it (2^-23). Hopper's
    // tensor core keeps only about 14 significant bits when it accumulates FP8 products, and
    // truncates (measured by others: the accumulator behaves like 8 exponent and 13 mantissa
    // bits): 2^-13. The E4M3 products themselves are exact.
    const double u = (p == Precision::fp32)       ? std::ldexp(1.0, -24)
                     : (p == Precision::fp8_e4m3) ? std::ldexp(1.0, -13)
                                                  : std::ldexp(1.0, -23);
    // TF32 inputs: we round to nearest, a device may truncate instead; the two differ by at most
    // one TF32 ulp (2^-10 relative) in each of the two factors of a product. FP8: the reference
    // reads the dequantized inputs rounded to FP32 (e4m3 * scale, one rounding each), and the
    // kernel applies scale_a * scale_b as one more FP32 product: a few FP32 roundings, 2^-21.
    const double c_in = (p == Precision::tf32)       ? std::ldexp(1.0, -9)
                        : (p == Precision::fp8_e4m3) ? std::ldexp(1.0, -21)
                                                     : 0.0;
    const double n = double(K) + 2.0;  // K products and sums, then alpha and beta
    const double nu = std::min(n * u, 0.5);
    Tolerance t;
    t.factor = c_in + nu / (1.0 - nu);
    t.tiny = (double(K) + 2.0) * double(FLT_MIN);
    // TF32 inputs rounded otherwise than the reference (truncated) move each product by less than
    // 2^-9 of itself; 1.5 of that covers a sample of a few dozen entries where C0 cancels part of C.
    const double inputs = (p == Precision::tf32) ? 1.5 * std::ldexp(1.0, -9) : 0.0;
    t.normwise = inputs + kNormwiseConstant * std::sqrt(n) * u;
    return t;
}

namespace {

struct Accumulator {
    CheckResult r;
    double err2 = 0.0, ref2 = 0.0;
    void add(int i, int j, double got, double want, double bound) {
        ++r.checked;
        const double err = std::fabs(got - want);
        const bool ok = std::isfinite(got) && err <= bound;
        const double ratio = std::isfinite(got) ? err / bound : INFINITY;
        if (!ok) ++r.failures;
        if (!(ratio <= r.worst_ratio)) {  // also true for the first NaN
            r.worst_ratio = ratio;
            r.worst_i = i;
            r.worst_j = j;
            r.worst_got = got;
            r.worst_want = want;
        }
        err2 += std::isfinite(got) ? err * err : INFINITY;
        ref2 += want * want;
    }
    CheckResult finish(std::string what, double normwise_limit) {
        r.rel_err = ref2 > 0.0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
        r.normwise_limit = normwise_limit;
        r.pass = r.failures == 0 && r.rel_err <= normwise_limit;  // false for a NaN rel_err too
        r.what = std::move(what);
        return r;
    }
};

}  // namespace

CheckResult check_full(const float* C, int M, int N, const std::vector<double>& value,
                       const std::vector<double>& scale, const Tolerance& tol) {
    Accumulator acc;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            const size_t at = size_t(i) * N + j;
            acc.add(i, j, C[at], value[at], tol.factor * scale[at] + tol.tiny);
        }
    return acc.finish("all " + std::to_string(M) + "x" + std::to_string(N) + " entries against the CPU reference",
                      tol.normwise);
}

CheckResult check_sample(const float* C, int N, const std::vector<RefEntry>& sample,
                         const Tolerance& tol) {
    Accumulator acc;
    for (const RefEntry& x : sample)
        acc.add(x.i, x.j, C[size_t(x.i) * N + x.j], x.value, tol.factor * x.scale + tol.tiny);
    return acc.finish(std::to_string(sample.size()) + " sampled entries against the CPU reference", tol.normwise);
}

CheckResult check_against(const float* C, const float* other, const GemmView& g,
                          const Tolerance& tol, const std::string& library) {
    const int M = g.s.m, N = g.s.n, K = g.s.k;
    std::vector<double> row_norm(M, 0.0), col_norm(N, 0.0);
    for (int i = 0; i < M; ++i) {
        double s = 0.0;
        for (int k = 0; k < K; ++k) s += double(g.A[size_t(i) * K + k]) * g.A[size_t(i) * K + k];
        row_norm[i] = std::sqrt(s);
    }
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) col_norm[j] += double(g.B[size_t(k) * N + j]) * g.B[size_t(k) * N + j];
    for (double& c : col_norm) c = std::sqrt(c);
    // Slightly above 1 to absorb the rounding of the norms themselves.
    const double factor = 2.0 * tol.factor * 1.0001;
    Accumulator acc;
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            const size_t at = size_t(i) * N + j;
            double scale = std::fabs(double(g.alpha)) * row_norm[i] * col_norm[j];
            if (g.beta != 0.0f) scale += std::fabs(double(g.beta) * g.C0[at]);
            const double want = other[at];
            if (!std::isfinite(want)) {  // the baseline itself is broken: make that visible
                acc.add(i, j, NAN, 0.0, 1.0);
                continue;
            }
            acc.add(i, j, C[at], want, factor * scale + 2.0 * tol.tiny);
        }
    // Two honest results each carry their own error: their difference may reach twice the ceiling.
    return acc.finish("all " + std::to_string(M) + "x" + std::to_string(N) + " entries against " + library,
                      2.0 * tol.normwise);
}

CheckResult check_entries(const std::vector<EntryCheck>& entries, const Tolerance& tol, const std::string& what) {
    Accumulator acc;
    for (const EntryCheck& e : entries) acc.add(e.i, e.j, e.got, e.want, tol.factor * e.scale + tol.tiny);
    return acc.finish(what, tol.normwise);
}

CheckResult combine(const CheckResult& a, const CheckResult& b) {
    CheckResult r = a.worst_ratio >= b.worst_ratio || std::isnan(a.worst_ratio) ? a : b;
    r.pass = a.pass && b.pass;
    r.checked = a.checked + b.checked;
    r.failures = a.failures + b.failures;
    r.rel_err = std::max(a.rel_err, b.rel_err);
    r.normwise_limit = r.rel_err == a.rel_err ? a.normwise_limit : b.normwise_limit;
    r.what = a.what + "; " + b.what;
    return r;
}

std::string CheckResult::describe() const {
    std::ostringstream out;
    out << (pass ? "PASS" : "FAIL") << ": " << failures << " of " << checked
        << " entries outside the bound (" << what << ")";
    if (worst_i >= 0)
        out << "; worst C[" << worst_i << "][" << worst_j << "] = " << worst_got << ", expected "
            << worst_want << " (error/bound = " << worst_ratio << ")";
    out << "; normwise relative error " << rel_err;
    if (!(rel_err <= normwise_limit))
        out << " ABOVE its ceiling " << normwise_limit << " (the arithmetic is coarser than the precision's)";
    return out.str();
}

}  // namespace wb
