// cpu_kernels.h - chapter 01: matrix multiplication on the CPU, from the textbook triple loop to
// a packed, cache-blocked, register-blocked kernel on every core, with OpenBLAS as the baseline.
//
// Every function here has the contract of the GPU chapters, on host pointers:
//   row-major, packed (leading dimensions K, N, N), C = alpha * A * B + beta * C,
//   any M, N, K >= 1, and beta == 0 never reads C (C may hold NaN).
// The variants do the same 2*M*N*K flops. What changes is how often each byte travels from
// memory to the FMA units, and how many FMA units are busy: that is the whole chapter.
//
// Host code only. It is compiled by nvcc (the workbook builds every program that way), which
// hands it to g++ with -O3 -march=native -ffp-contract=fast -fopenmp (see the Makefile).
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#ifdef WB_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace ch01 {

// The CPU twin of SgemmFn: the same arguments, minus the CUDA stream.
using CpuSgemmFn = void (*)(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C);

// "All cores": what OpenMP will use (the cores, or OMP_NUM_THREADS when set). The all-thread
// OpenBLAS baseline is given the same number, so the comparison is always like for like.
inline int all_threads() {
    return omp_get_max_threads();
}

// The final write of one element. With beta == 0 the old C is not read at all: 0 * NaN is NaN,
// so "alpha * acc + 0 * C" would let garbage in C poison the result.
inline float finish(float acc, float alpha, float beta, float c_old) {
    return beta == 0.0f ? alpha * acc : alpha * acc + beta * c_old;
}

// ---- 1. naive i-j-k ----------------------------------------------------------------------------
// One dot product per element of C, as on the blackboard. The inner loop walks DOWN a column of
// B: consecutive k are N floats apart, so every multiply-add touches a new 64-byte cache line and
// uses 4 of its bytes. When N is a power of two the column also lands in a handful of cache sets
// and evicts itself (try --size 1000 against --size 1024). g++ does not vectorize the k loop:
// that would reorder the sum, which IEEE rules forbid without -ffast-math.
inline void sgemm_naive_ijk(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                            float* C) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[size_t(i) * K + k] * B[size_t(k) * N + j];
            C[size_t(i) * N + j] = finish(acc, alpha, beta, C[size_t(i) * N + j]);
        }
}

// ---- 2. loop order i-k-j -----------------------------------------------------------------------
// The same three loops with j innermost: row i of C gets a(i,k) times row k of B added to it.
// Now the inner loop reads B and writes C with stride 1 (every byte of every cache line is
// used, the hardware prefetcher sees the stream), and the iterations are independent, so g++
// turns them into 16-wide AVX-512 FMAs. The row of C (4 KB at N = 1024) stays in L1; B is
// streamed once per row of C, from L2 or L3: that traffic is what limits this version.
inline void sgemm_loop_ikj(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           float* C) {
    for (int i = 0; i < M; ++i) {
        float* __restrict__ c = C + size_t(i) * N;
        for (int j = 0; j < N; ++j) c[j] = (beta == 0.0f) ? 0.0f : beta * c[j];
        for (int k = 0; k < K; ++k) {
            const float a = alpha * A[size_t(i) * K + k];  // alpha folded in: one multiply per row
            const float* __restrict__ b = B + size_t(k) * N;
            for (int j = 0; j < N; ++j) c[j] += a * b[j];
        }
    }
}

// ---- 3. and 4. packed, cache-blocked, register-blocked -------------------------------------------
// Three levels of blocking, from the inside out:
//  * registers: a micro-kernel keeps an MR x NR tile of C in registers for a whole pass over K.
//    Per step k it loads NR floats of B and MR of A and does MR * NR multiply-adds: with 8 x 32,
//    40 loaded floats feed 256 multiply-adds, where loop 2 needs two loads and a store for each.
//  * L2: K is cut into panels of at most KC. The MC x KC block of A (128 KB) stays in the L2
//    while all NC / NR slivers of B pass it; each KC x NR sliver of B (32 KB) is reused by the
//    MC / MR slivers of A right after it was first read. The micro-kernel needs 160 bytes per 16
//    FMA instructions, so L2 can feed it: nothing has to stay in L1.
//  * L3: an NC-wide panel of B (KC x NC, 2 MB) is reused by every row block of A.
// Packing copies each block into the exact order the micro-kernel reads it (contiguous, 64-byte
// aligned, zero-padded to whole tiles), so its inner loop has no strides, no edge tests, and no
// cache-set conflicts, whatever M, N, K are. The copy costs O(MK + KN) per pass; it is repaid by
// the O(MNK) work that reads it.
namespace blocked {

constexpr int MR = 8;       // rows of the register tile: MR broadcasts of A per step k
constexpr int NR = 32;      // columns of the register tile: two 16-float zmm vectors of B per step k
constexpr int KC = 256;     // the deepest packed panel (K is split into equal panels of at most KC)
constexpr int MC = 128;     // rows of the packed block of A
constexpr int NC = 2048;    // columns of the packed panel of B
constexpr int kAlign = 64;  // bytes: one cache line, and one zmm register

static_assert(NR % 16 == 0, "NR is a whole number of 16-float AVX-512 vectors");
static_assert(MR * NR / 16 <= 24,
              "the MR x NR accumulators must fit in the 32 zmm registers, "
              "with room left for the B vectors and the A broadcast");
static_assert(MC % MR == 0, "a block of A holds whole MR-row slivers");
static_assert(NC % NR == 0, "a panel of B holds whole NR-column slivers");

// A grow-only, cache-line aligned scratch buffer: allocated on first use and then reused, so
// the timed calls neither call malloc nor fault in fresh pages.
class PackBuffer {
public:
    ~PackBuffer() { std::free(data_); }
    float* get(size_t count) {
        if (count > count_) {
            std::free(data_);
            const size_t bytes = (count * sizeof(float) + kAlign - 1) / kAlign * kAlign;
            data_ = static_cast<float*>(std::aligned_alloc(kAlign, bytes));
            if (!data_) throw std::bad_alloc();
            count_ = count;
        }
        return data_;
    }

private:
    float* data_ = nullptr;
    size_t count_ = 0;
};

// Rows pc .. pc+kc of B, columns jc .. jc+nc, as NR-wide slivers: sliver s is kc rows of NR
// floats, Bp[s * kc * NR + p * NR + j] = B[pc + p][jc + s * NR + j]; columns past N are zero.
// Each sliver is one parallel task (`omp for` splits them when called inside a parallel region).
inline void pack_B(int kc, int nc, const float* B, int N, int pc, int jc, float* Bp) {
    const int slivers = (nc + NR - 1) / NR;
#pragma omp for schedule(static)
    for (int s = 0; s < slivers; ++s) {
        const int j0 = s * NR, width = std::min(NR, nc - j0);
        float* __restrict__ dst = Bp + size_t(s) * kc * NR;
        for (int p = 0; p < kc; ++p) {
            const float* __restrict__ src = B + size_t(pc + p) * N + jc + j0;
            for (int j = 0; j < NR; ++j) dst[p * NR + j] = j < width ? src[j] : 0.0f;
        }
    }
}

// Rows ic .. ic+mc of A, columns pc .. pc+kc, as MR-row slivers stored column by column:
// Ap[s * kc * MR + p * MR + i] = A[ic + s * MR + i][pc + p]; rows past M are zero. This is a
// transpose of each sliver: the micro-kernel wants the MR values of one column k side by side.
// Each thread packs its own block of A, so there is no `omp for` here.
inline void pack_A(int mc, int kc, const float* A, int K, int ic, int pc, float* Ap) {
    for (int i0 = 0; i0 < mc; i0 += MR) {
        const int height = std::min(MR, mc - i0);
        float* __restrict__ dst = Ap + size_t(i0) * kc;
        for (int i = 0; i < MR; ++i) {
            const float* __restrict__ src = A + size_t(ic + i0 + i) * K + pc;
            for (int p = 0; p < kc; ++p) dst[p * MR + i] = i < height ? src[p] : 0.0f;
        }
    }
}

// The register tile: acc(MR x NR) = sum over p of column p of the A sliver times row p of the
// B sliver, then C = alpha * acc + beta * C on the mr x nr entries that exist.
// The loops over i and j have compile-time bounds, so g++ unrolls them completely. With 512-bit
// vectors it keeps acc[][] in 16 zmm registers and emits MR * NR / 16 = 16 vfmadd231ps per step p;
// where it uses 256-bit vectors (AVX2, or its tuning for some AVX-512 CPUs) it emits 32 on ymm
// registers, and the tile no longer fits the registers (`make fma-count` shows which, see the
// notes). No edge tests inside the p loop: the packs are zero-padded.
inline void micro_kernel(int kc, const float* __restrict__ a, const float* __restrict__ b, float alpha,
                         float beta, float* __restrict__ C, int ldc, int mr, int nr) {
    float acc[MR][NR] = {};
    for (int p = 0; p < kc; ++p, a += MR, b += NR)
        for (int i = 0; i < MR; ++i)
            for (int j = 0; j < NR; ++j) acc[i][j] += a[i] * b[j];

    if (mr == MR && nr == NR) {  // the common case, with constant bounds so it vectorizes too
        for (int i = 0; i < MR; ++i)
            for (int j = 0; j < NR; ++j) {
                float* c = C + size_t(i) * ldc + j;
                *c = finish(acc[i][j], alpha, beta, *c);
            }
    } else {  // a tile on the bottom or right edge of C
        for (int i = 0; i < mr; ++i)
            for (int j = 0; j < nr; ++j) {
                float* c = C + size_t(i) * ldc + j;
                *c = finish(acc[i][j], alpha, beta, *c);
            }
    }
}

// The five-loop nest. With `threads` = 1 it is the single-thread kernel. With more, every thread
// runs the same jc and pc loops; they pack the shared panel of B together (`omp for` over its
// slivers) and then each takes whole MC-row blocks of C (`omp for` over ic), packs its own block
// of A into its own buffer and computes it alone. Only two barriers per panel of B (the ends of
// the two `omp for`): after the pack, so no one reads B half packed, and after the compute, so no
// one repacks B while another thread still reads it. Few barriers matter: a thread that loses
// its core to another program for a scheduler tick holds up everyone at the next barrier.
inline void sgemm_packed(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                         float* C, int threads) {
    static thread_local PackBuffer b_buffer;  // the caller's: reused call after call
    float* Bp = b_buffer.get(size_t(KC) * NC);
    // Rows per block: MC, or fewer so that every thread gets at least one block.
    const int per_thread = (M + threads - 1) / threads;
    const int mc_step = std::min(MC, (per_thread + MR - 1) / MR * MR);
    // K panels of equal depth (at most KC): K = 777 gives 195+195+195+192, not 256+256+256+9. A
    // 9-deep panel would cost a full read and write of C and a micro-kernel start per tile for
    // only 9 steps of work.
    const int k_panels = (K + KC - 1) / KC;
    const int kc_step = (K + k_panels - 1) / k_panels;

#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        static thread_local PackBuffer a_buffer;  // one per thread
        float* Ap = a_buffer.get(size_t(MC) * KC);
        for (int jc = 0; jc < N; jc += NC) {
            const int nc = std::min(NC, N - jc);
            for (int pc = 0; pc < K; pc += kc_step) {
                const int kc = std::min(kc_step, K - pc);
                // The first K panel applies the caller's beta; later ones add to what is there.
                const float beta_panel = (pc == 0) ? beta : 1.0f;
                pack_B(kc, nc, B, N, pc, jc, Bp);
#pragma omp for schedule(static)
                for (int ic = 0; ic < M; ic += mc_step) {
                    const int mc = std::min(mc_step, M - ic);
                    pack_A(mc, kc, A, K, ic, pc, Ap);
                    // jr outside ir: one KC x NR sliver of B is reused by every MR-row sliver of A.
                    for (int jr = 0; jr < nc; jr += NR)
                        for (int ir = 0; ir < mc; ir += MR)
                            micro_kernel(kc, Ap + size_t(ir) * kc, Bp + size_t(jr) * kc, alpha, beta_panel,
                                         C + size_t(ic + ir) * N + jc + jr, N, std::min(MR, mc - ir),
                                         std::min(NR, nc - jr));
                }
            }
        }
    }
}

}  // namespace blocked

inline void sgemm_blocked(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                          float* C) {
    blocked::sgemm_packed(M, N, K, alpha, A, B, beta, C, 1);
}

inline void sgemm_blocked_omp(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C) {
    blocked::sgemm_packed(M, N, K, alpha, A, B, beta, C, all_threads());
}

// ---- 5. and 6. OpenBLAS ------------------------------------------------------------------------
// cblas_sgemm takes row-major operands directly (CblasRowMajor), with our leading dimensions.
// The thread count is set on every call: the 1-thread and the all-thread baselines share one
// library and one global setting.
#ifdef WB_HAVE_OPENBLAS
inline void openblas_sgemm(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           float* C, int threads) {
    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, alpha, A, K, B, N, beta, C, N);
}
inline void sgemm_openblas_1t(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                              float* C) {
    openblas_sgemm(M, N, K, alpha, A, B, beta, C, 1);
}
inline void sgemm_openblas_all(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                               float* C) {
    openblas_sgemm(M, N, K, alpha, A, B, beta, C, all_threads());
}
constexpr bool kHaveOpenBlas = true;
#else
constexpr bool kHaveOpenBlas = false;
#endif

// ---- the variant table ---------------------------------------------------------------------------
struct CpuVariant {
    std::string name;  // ends in _1t or _<all>t: a 1-thread figure is never compared with an all-thread one
    CpuSgemmFn run;
    const char* what;  // one line: the idea of this step
    int threads;       // 1, or all_threads()
    bool baseline;     // OpenBLAS: the "% of BLAS" of every variant with the same thread count
    bool slow;         // skipped above kSlowMaxMacs unless named with --variant
};

// The naive loop needs seconds at 1024^3 and minutes at 4096^3.
constexpr double kSlowMaxMacs = 1024.0 * 1024.0 * 1024.0;

// Built at run time because the all-thread names carry the thread count, e.g. blocked_omp_2t.
// Without OpenBLAS the table simply has no baseline rows.
inline std::vector<CpuVariant> variants() {
    const int all = all_threads();
    const std::string all_t = "_" + std::to_string(all) + "t";
    std::vector<CpuVariant> v;
#ifdef WB_HAVE_OPENBLAS
    v.push_back({"openblas_1t", sgemm_openblas_1t, "OpenBLAS cblas_sgemm on one thread", 1, true, false});
#endif
    v.push_back({"naive_ijk_1t", sgemm_naive_ijk,
                 "i-j-k: inner loop walks down a column of B, one cache line per FMA", 1, false, true});
    v.push_back({"loop_ikj_1t", sgemm_loop_ikj,
                 "i-k-j: stride-1 rows of B and C, vectorized; B streamed once per row of C", 1, false,
                 false});
    v.push_back({"blocked_1t", sgemm_blocked,
                 "packed KCxNR / MCxKC panels, 8x32 register tile of AVX-512 FMAs", 1, false, false});
#ifdef WB_HAVE_OPENBLAS
    if (all > 1)  // with one core the all-thread baseline is openblas_1t itself
        v.push_back(
            {"openblas" + all_t, sgemm_openblas_all, "OpenBLAS cblas_sgemm on all cores", all, true, false});
#endif
    v.push_back({"blocked_omp" + all_t, sgemm_blocked_omp,
                 "blocked_1t with OpenMP: B packed together, row blocks of C split over all cores", all,
                 false, false});
    return v;
}

}  // namespace ch01
