// test_support_06.cuh - what the chapter's tests (test_06_tensor_core_wmma.cu) and the lab's tests
// (lab/test_06_lab.cu) share: shapes aimed at the WMMA rules, misaligned pointers and odd leading
// dimensions, and the CPU checks of a tile configuration's copies and shared-memory banks.
#pragma once

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "testing.cuh"

namespace t06 {

using namespace ch06;

inline int device_cc() {
    return wb::query_device(0).cc_number();
}

// Shapes aimed at this chapter's paths; the spec's list (wb::test::standard_cases) has the rest.
inline std::vector<wb::test::GemmCase> wmma_cases() {
    return {
        {{16, 16, 16}, 1.0f, 0.0f, "exactly one fragment"},
        {{48, 40, 24}, 1.0f, 0.0f, "K a multiple of 8 but not of 16: half an FP16 k-step"},
        {{100, 72, 40}, 1.0f, 0.0f, "K % 32 == 8: the last BK step is a quarter full"},
        {{64, 64, 4}, 1.0f, 0.0f, "K = 4: one TF32 chunk, half an FP16 chunk"},
        {{129, 257, 520}, 1.0f, 0.0f, "N = 257: rows of B and C not 16-byte aligned"},
        {{130, 264, 1001}, 0.5f, 1.5f, "K = 1001: rows of A not aligned, beta != 0"},
        {{200, 136, 96}, 1.0f, 0.0f, "N % 16 == 8: fragments at the right edge are half outside"},
        {{257, 520, 64}, -1.0f, 0.25f, "more than one 128x256 tile each way, beta != 0"},
        {{520, 24, 72}, 1.0f, 0.0f, "C narrower than any block tile"},
    };
}

// ---- misaligned pointers and odd leading dimensions ----------------------------------------------
// A, B and C start a few elements into larger buffers, so that the fragment rules (32-byte
// pointers) or the 16-byte copies fail although the shape alone would allow them. The launchers
// must notice and take the element-wise paths. Every entry is checked against the CPU reference,
// the elements around C must stay untouched, and C is NaN before a beta == 0 run.
struct OffsetCase {
    wb::Shape s;
    float alpha, beta;
    int a_off, b_off, c_off;  // in elements
    const char* why;
};

inline const OffsetCase kOffsetCases[] = {
    {{64, 64, 64}, 1.0f, 0.0f, 1, 1, 1, "everything misaligned on a shape that would take every fast path"},
    {{128, 256, 64}, 1.0f, 0.5f, 2, 0, 0, "only A misaligned, beta != 0"},
    {{128, 128, 32}, -1.0f, 0.0f, 0, 3, 0, "only B misaligned"},
    {{130, 136, 40}, 1.0f, 2.0f, 0, 0, 1, "only C misaligned, beta != 0"},
    {{67, 45, 33}, 1.0f, 0.0f, 1, 2, 3, "odd shape, everything shifted"},
    // 16-byte but not 32-byte aligned: 16-byte copies are fine, WMMA on this memory is not.
    {{96, 96, 64}, 1.0f, 0.0f, -1, -1, -1, "16-byte aligned, not 32: the direct fragment paths are off"},
};

struct OffsetRun {
    wb::CheckResult check;
    bool guards_intact = true;
    std::string error;
};

template <class T>
class OffsetProblem {
public:
    OffsetProblem(const OffsetCase& c, wb::Precision p) : c_(c), p_(p) {
        // -1: half a 32-byte unit, i.e. 16 bytes: 8 halves or 4 floats.
        const int half_unit = 16 / int(sizeof(T));
        a_off_ = c.a_off < 0 ? half_unit : c.a_off;
        b_off_ = c.b_off < 0 ? half_unit : c.b_off;
        c_off_ = c.c_off < 0 ? 16 / int(sizeof(float)) : c.c_off;
        const wb::Shape s = c.s;
        A_.resize(size_t(s.m) * s.k);
        B_.resize(size_t(s.k) * s.n);
        C0_.resize(size_t(s.m) * s.n);
        wb::fill_random(A_.data(), A_.size(), 11, 1);
        wb::fill_random(B_.data(), B_.size(), 11, 2);
        wb::fill_random(C0_.data(), C0_.size(), 11, 3);
        std::vector<float> a = A_, b = B_;
        wb::round_to(p, a);
        wb::round_to(p, b);
        wb::GemmView g;
        g.s = s;
        g.alpha = c.alpha;
        g.beta = c.beta;
        g.A = a.data();
        g.B = b.data();
        g.C0 = c.beta != 0.0f ? C0_.data() : nullptr;
        wb::reference_full(g, value_, scale_);
    }

    template <class Fn>
    OffsetRun run(Fn launch) const {
        constexpr int kGuard = 16;
        constexpr float kSentinel = 7.0f;
        const wb::Shape s = c_.s;
        const size_t nc = C0_.size();
        std::vector<T> hA(A_.size() + a_off_ + kGuard), hB(B_.size() + b_off_ + kGuard);
        const std::vector<T> a = convert(A_), b = convert(B_);
        std::copy(a.begin(), a.end(), hA.begin() + a_off_);
        std::copy(b.begin(), b.end(), hB.begin() + b_off_);
        std::vector<float> hC(nc + c_off_ + kGuard, kSentinel);
        for (size_t i = 0; i < nc; ++i)
            hC[c_off_ + i] = c_.beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : C0_[i];
        wb::DeviceBuffer<T> dA(hA.size()), dB(hB.size());
        wb::DeviceBuffer<float> dC(hC.size());
        dA.upload(hA);
        dB.upload(hB);
        dC.upload(hC);

        OffsetRun r;
        try {
            launch(s.m, s.n, s.k, c_.alpha, dA.get() + a_off_, dB.get() + b_off_, c_.beta, dC.get() + c_off_,
                   0);
            WB_CUDA_CHECK(cudaDeviceSynchronize());
        } catch (const std::exception& e) {
            r.error = e.what();
            r.check.pass = false;
            return r;
        }
        const std::vector<float> out = dC.download();
        for (int i = 0; i < c_off_; ++i) r.guards_intact = r.guards_intact && out[i] == kSentinel;
        for (int i = 0; i < kGuard; ++i)
            r.guards_intact = r.guards_intact && out[c_off_ + nc + i] == kSentinel;
        r.check = wb::check_full(out.data() + c_off_, s.m, s.n, value_, scale_, wb::tolerance_for(p_, s.k));
        return r;
    }

    std::string describe() const {
        return wb::to_string(c_.s) + " with A+" + std::to_string(a_off_) + ", B+" + std::to_string(b_off_) +
               ", C+" + std::to_string(c_off_) + " elements (" + c_.why + ")";
    }

private:
    static std::vector<T> convert(const std::vector<float>& v) {
        if constexpr (std::is_same<T, __half>::value)
            return wb::to_half(v);
        else
            return v;  // TF32 variants take FP32 inputs and round them themselves
    }

    OffsetCase c_;
    wb::Precision p_;
    int a_off_ = 0, b_off_ = 0, c_off_ = 0;
    std::vector<float> A_, B_, C0_;
    std::vector<double> value_, scale_;
};

template <class T, class Variant>
void check_offsets(const std::vector<Variant>& variants, wb::Precision p) {
    const int cc = device_cc();
    for (const OffsetCase& c : kOffsetCases) {
        const OffsetProblem<T> prob(c, p);
        for (const Variant& v : variants) {
            if (cc < v.min_cc) continue;
            const OffsetRun r = prob.run(v.run);
            INFO(v.name << " on " << prob.describe() << ": "
                        << (r.error.empty() ? r.check.describe() : r.error));
            CHECK(r.check.pass);
            CHECK(r.guards_intact);
        }
    }
}

// ---- layouts and bank arithmetic (CPU) ----------------------------------------------------------

// Every element of a ROWS x COLS tile is moved by exactly one (thread, chunk, element).
template <class Grid, int ROWS, int COLS, int CHUNK, int THREADS>
void check_chunk_grid(const char* what) {
    std::vector<int> hits(ROWS * COLS, 0);
    for (int tid = 0; tid < THREADS; ++tid)
        for (int i = 0; i < Grid::PER_THREAD; ++i)
            for (int e = 0; e < CHUNK; ++e) {
                const int r = Grid::row(tid, i), c = Grid::col(tid) + e;
                REQUIRE(r < ROWS);
                REQUIRE(c < COLS);
                ++hits[r * COLS + c];
            }
    int wrong = 0;
    for (int h : hits) wrong += h != 1;
    INFO(what << ": tile elements not moved exactly once");
    CHECK(wrong == 0);
}

template <class Cfg>
void check_tiling(const char* name) {
    INFO(name);
    check_chunk_grid<typename Cfg::AChunks, Cfg::BM, Cfg::BK, Cfg::Inputs::CHUNK, Cfg::THREADS>("A tile");
    check_chunk_grid<typename Cfg::BChunks, Cfg::BK, Cfg::BN, Cfg::Inputs::CHUNK, Cfg::THREADS>("B tile");
    CHECK(Cfg::WARPS_M * Cfg::FM * 16 == Cfg::BM);  // the warps' fragments tile the block exactly
    CHECK(Cfg::WARPS_N * Cfg::FN * 16 == Cfg::BN);
    CHECK(Cfg::SMEM_BYTES >= Cfg::STAGE_BYTES);  // the epilogue's staging fits
    CHECK(Cfg::SMEM_BYTES <= kSmemLimitSm90);
    CHECK((Cfg::SMEM_BYTES <= kSmemLimitSm80 || min_cc_of<Cfg>() == 90));  // above 99 KB: Hopper only
}

// Passes ("wavefronts") one shared-memory access of a warp needs: the largest number of distinct
// 4-byte words that fall into the same one of the 32 banks. `bytes` lists each lane's (or each
// row's) first byte and `width` the bytes it reads from there.
inline int wavefronts(const std::vector<int>& bytes, int width) {
    std::vector<std::set<int>> bank(32);
    for (int b : bytes)
        for (int w = 0; w < width; w += 4) bank[(b + w) / 4 % 32].insert((b + w) / 4);
    size_t worst = 0;
    for (const auto& words : bank) worst = std::max(worst, words.size());
    return int(worst);
}

// ldmatrix (what load_matrix_sync of an FP16 fragment compiles to, LDSM in the machine code) reads
// an 8x8 matrix as 8 rows of 16 bytes in one pass when the rows are conflict-free.
inline int ldmatrix_wavefronts(int row_bytes) {
    std::vector<int> rows;
    for (int r = 0; r < 8; ++r) rows.push_back(r * row_bytes);
    return wavefronts(rows, 16);
}

// A TF32 fragment load reads 4 bytes per lane. In the code CUDA 13.0 generates for sm_80+, lane
// (g = lane / 4, t = lane % 4) reads A[g][t] and B[t][g] first (then the same pattern further on).
inline int tf32_a_wavefronts(int a_ld) {
    std::vector<int> lanes;
    for (int lane = 0; lane < 32; ++lane) lanes.push_back(4 * ((lane / 4) * a_ld + lane % 4));
    return wavefronts(lanes, 4);
}
inline int tf32_b_wavefronts(int b_ld) {
    std::vector<int> lanes;
    for (int lane = 0; lane < 32; ++lane) lanes.push_back(4 * ((lane % 4) * b_ld + lane / 4));
    return wavefronts(lanes, 4);
}

// The accumulator store into the epilogue's staging area compiles to STS.64: lane (g, t) writes
// columns 2t, 2t + 1 of row g, and a warp's 256 bytes go in two passes of 16 lanes (rows 0-3, 4-7).
inline int accumulator_store_wavefronts(int stage_ld) {
    std::vector<int> half_warp;
    for (int lane = 0; lane < 16; ++lane) half_warp.push_back(4 * ((lane / 4) * stage_ld + 2 * (lane % 4)));
    return wavefronts(half_warp, 8);
}

// ---- step 9: the swizzled tiles ----------------------------------------------------------------
// The swizzle on a tile of `rows` rows of ROW_CHUNKS chunks: how many chunks are not moved to a
// distinct place inside their own 128-byte line (0: a bijection that costs no memory).
// `where` maps a chunk index of the tile to the chunk it is stored at (step 11 passes its layouts).
template <class Where>
int chunks_misplaced(int chunks, Where where) {
    std::vector<int> hits(chunks, 0);
    int bad = 0;
    for (int c = 0; c < chunks; ++c) {
        const int p = where(c);
        if (p / 8 != c / 8 || p < 0 || p >= chunks) { ++bad; continue; }
        ++hits[p];
    }
    for (int h : hits) bad += h > 1;
    return bad;
}
template <int ROW_CHUNKS>
int swizzle_misplaced(int rows) {
    return chunks_misplaced(rows * ROW_CHUNKS, [](int c) { return swizzle_chunk<ROW_CHUNKS>(c); });
}

// Step 9's ldmatrix reads, every warp, k-step, tile and matrix: the worst number of passes, and the
// number of lane addresses that do not hold the element the mma.sync layout asks for (the swizzle
// undone on the host: the logical chunk at each physical place).
struct SwizzleReport {
    int worst_load_wavefronts = 0, worst_store_wavefronts = 0, wrong_addresses = 0;
};

template <class Cfg>
SwizzleReport check_swizzled_tiles() {
    using S = SwizzledTiles<Cfg>;
    SwizzleReport r;
    std::vector<int> a_logical(Cfg::BM * S::A_ROW_CHUNKS), b_logical(Cfg::BK * S::B_ROW_CHUNKS);
    for (int c = 0; c < int(a_logical.size()); ++c) a_logical[swizzle_chunk<S::A_ROW_CHUNKS>(c)] = c;
    for (int c = 0; c < int(b_logical.size()); ++c) b_logical[swizzle_chunk<S::B_ROW_CHUNKS>(c)] = c;
    auto note = [&](std::vector<int>& rows, int& worst) {
        worst = std::max(worst, wavefronts(rows, 16));
        rows.clear();
    };
    std::vector<int> rows;
    for (int warp = 0; warp < Cfg::WARPS; ++warp) {
        const int warp_row = warp / Cfg::WARPS_N * Cfg::WM, warp_col = warp % Cfg::WARPS_N * Cfg::WN;
        for (int s = 0; s < S::K_STEPS; ++s) {
            for (int i = 0; i < Cfg::FM; ++i)
                for (int lane = 0; lane < 32; ++lane) {
                    const int bytes = int(mma16_a_lane_bytes<Cfg>(warp_row, lane, s)) + 16 * i * Cfg::BK * 2;
                    const int row = warp_row + 16 * i + lane % 8 + 8 * (lane / 8 % 2);
                    r.wrong_addresses += a_logical[bytes / 16] != row * S::A_ROW_CHUNKS + 2 * s + lane / 16;
                    rows.push_back(bytes);
                    if (lane % 8 == 7) note(rows, r.worst_load_wavefronts);  // one 8x8 matrix
                }
            for (int p = 0; p < Cfg::FN; ++p)
                for (int lane = 0; lane < 32; ++lane) {
                    const int bytes = int(mma16_b_lane_bytes<Cfg>(warp_col, lane, p)) + 16 * s * Cfg::BN * 2;
                    const int k = 16 * s + lane % 8 + 8 * (lane / 8 % 2);
                    r.wrong_addresses += b_logical[bytes / 16] != k * S::B_ROW_CHUNKS + (warp_col + 16 * p) / 8 + lane / 16;
                    rows.push_back(bytes);
                    if (lane % 8 == 7) note(rows, r.worst_load_wavefronts);
                }
        }
        // The 16-byte stores of the copies (cp.async), 8 lanes per pass.
        for (int i = 0; i < Cfg::AChunks::PER_THREAD; ++i)
            for (int lane = 0; lane < 32; ++lane) {
                const int tid = 32 * warp + lane;
                const int e = Cfg::AChunks::row(tid, i) * Cfg::BK + Cfg::AChunks::col(tid);
                rows.push_back(swizzled<S::A_ROW_CHUNKS, S::CHUNK>(e) * 2);
                if (lane % 8 == 7) note(rows, r.worst_store_wavefronts);
            }
        for (int i = 0; i < Cfg::BChunks::PER_THREAD; ++i)
            for (int lane = 0; lane < 32; ++lane) {
                const int tid = 32 * warp + lane;
                const int e = Cfg::BChunks::row(tid, i) * Cfg::BN + Cfg::BChunks::col(tid);
                rows.push_back(swizzled<S::B_ROW_CHUNKS, S::CHUNK>(e) * 2);
                if (lane % 8 == 7) note(rows, r.worst_store_wavefronts);
            }
    }
    return r;
}

// ---- step 11: the swizzled TF32 tiles ------------------------------------------------------------
// Step 11's fragment loads on the layout L, every warp, k-step and tile, at the addresses the kernel
// forms (a lane base plus a constant): the worst number of passes of an ldmatrix matrix (8 rows of
// 16 bytes) and of a 4-byte load of B (32 lanes); the worst for the 16-byte cp.async stores (8 lanes
// per pass); and the lane addresses that do not hold the element the mma.sync layout asks for, with
// the element at each place taken from what the copies store there (L::a_offset, L::b_offset).
template <class Cfg, class L>
SwizzleReport check_swizzled_tf32_tiles() {
    SwizzleReport r;
    std::vector<int> a_logical(Cfg::BM * Cfg::BK, -1), b_logical(Cfg::BK * Cfg::BN, -1);
    for (int e = 0; e < int(a_logical.size()); ++e) a_logical[L::a_offset(e)] = e;
    for (int e = 0; e < int(b_logical.size()); ++e) b_logical[L::b_offset(e)] = e;
    auto note = [](std::vector<int>& lanes, int width, int& worst) {
        worst = std::max(worst, wavefronts(lanes, width));
        lanes.clear();
    };
    std::vector<int> lanes;
    for (int warp = 0; warp < Cfg::WARPS; ++warp) {
        const int warp_row = warp / Cfg::WARPS_N * Cfg::WM, warp_col = warp % Cfg::WARPS_N * Cfg::WN;
        for (int s = 0; s < L::K_STEPS; ++s) {
            for (int i = 0; i < Cfg::FM; ++i)
                for (int lane = 0; lane < 32; ++lane) {
                    const int bytes = int((L::a_lane_bytes(warp_row, lane) ^ L::a_step_xor(s)) + L::a_tile_bytes(i));
                    const int row = warp_row + 16 * i + lane % 8 + 8 * (lane / 8 % 2);
                    r.wrong_addresses += a_logical[bytes / 4] != row * Cfg::BK + 8 * s + 4 * (lane / 16);
                    lanes.push_back(bytes);
                    if (lane % 8 == 7) note(lanes, 16, r.worst_load_wavefronts);  // one 8x8 matrix
                }
            for (int j = 0; j < 2 * Cfg::FN; ++j)
                for (int h = 0; h < 2; ++h) {  // b0, then b1
                    for (int lane = 0; lane < 32; ++lane) {
                        const unsigned base = L::b_lane_bytes(warp_col, lane, j % L::B_BASES);
                        const int bytes = int(base + L::b_tile_bytes(j, s, h));
                        const int k = 8 * s + 4 * h + lane % 4, n = warp_col + 8 * j + lane / 4;
                        r.wrong_addresses += b_logical[bytes / 4] != k * Cfg::BN + n;
                        lanes.push_back(bytes);
                    }
                    note(lanes, 4, r.worst_load_wavefronts);
                }
        }
        for (int i = 0; i < Cfg::AChunks::PER_THREAD; ++i)
            for (int lane = 0; lane < 32; ++lane) {
                const int tid = 32 * warp + lane;
                lanes.push_back(4 * L::a_offset(Cfg::AChunks::row(tid, i) * Cfg::BK + Cfg::AChunks::col(tid)));
                if (lane % 8 == 7) note(lanes, 16, r.worst_store_wavefronts);
            }
        for (int i = 0; i < Cfg::BChunks::PER_THREAD; ++i)
            for (int lane = 0; lane < 32; ++lane) {
                const int tid = 32 * warp + lane;
                lanes.push_back(4 * L::b_offset(Cfg::BChunks::row(tid, i) * Cfg::BN + Cfg::BChunks::col(tid)));
                if (lane % 8 == 7) note(lanes, 16, r.worst_store_wavefronts);
            }
    }
    return r;
}

// One 4-byte load of b0 (lane (g, t) reads B[t][g], rows of 128 floats) with the chunks of each
// row moved by `where`: why B needs step 11's key and not step 9's.
template <class Where>
int tf32_b_swizzled_wavefronts(Where where) {
    std::vector<int> lanes;
    for (int lane = 0; lane < 32; ++lane) {
        const int e = (lane % 4) * 128 + lane / 4;
        lanes.push_back(4 * (where(e / 4) * 4 + e % 4));
    }
    return wavefronts(lanes, 4);
}

// A planted bug: the copies store B with step 9's key (k-row mod 8) while the fragment loads still
// read step 11's places (b_lane_bytes is the base's, which uses the base's b_offset).
template <class Cfg>
struct CopiesKeyedLikeStep9 : SwizzledTf32Tiles<Cfg> {
    using Base = SwizzledTf32Tiles<Cfg>;
    __host__ __device__ static constexpr int b_offset(int e) {
        return swizzle_chunk<Base::B_ROW_CHUNKS>(e / Base::CHUNK) * Base::CHUNK + e % Base::CHUNK;
    }
};

// ---- step 9: one m16n8k16 tile on the GPU ----------------------------------------------------------
// A 16x16 times B 16x16 (two n8 tiles), each lane fetching its registers with step 9's instructions
// and lane addresses (unswizzled rows of 32 bytes here) and writing C by the documented layout.
// BUG = 1 reads B without .trans; BUG = 2 gives lanes 8-15 the k 8-15 chunk of rows 0-7 (matrices 1
// and 2 swapped): plausible misreadings of the layout.
template <int BUG>
__global__ void one_mma16_tile(const __half* A, const __half* B, float* C) {
    __shared__ __align__(16) __half as[16 * 16], bs[16 * 16];
    const int lane = threadIdx.x;
    for (int i = lane; i < 16 * 16; i += 32) {
        as[i] = A[i];
        bs[i] = B[i];
    }
    __syncwarp();
    const int row = lane % 8 + 8 * (lane / 8 % 2), col = 8 * (lane / 16);
    const int a_row = BUG == 2 ? lane % 8 + 8 * (lane / 16) : row, a_col = BUG == 2 ? 8 * (lane / 8 % 2) : col;
    unsigned a[4], b[4];
    ldmatrix_x4(a, static_cast<unsigned>(__cvta_generic_to_shared(&as[a_row * 16 + a_col])));
    const unsigned b_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bs[row * 16 + col]));
    if (BUG == 1)
        ldmatrix_x4(b, b_addr);
    else
        ldmatrix_x4_trans(b, b_addr);
    float d[2][4] = {};
    mma_m16n8k16_f16(d[0], a, &b[0]);
    mma_m16n8k16_f16(d[1], a, &b[2]);
    const int g = lane / 4, t = lane % 4;
    for (int j = 0; j < 2; ++j) {
        C[g * 16 + 8 * j + 2 * t] = d[j][0];
        C[g * 16 + 8 * j + 2 * t + 1] = d[j][1];
        C[(g + 8) * 16 + 8 * j + 2 * t] = d[j][2];
        C[(g + 8) * 16 + 8 * j + 2 * t + 1] = d[j][3];
    }
}

// Small integers: exact in FP16, every product and sum exact in FP32, so the result must be exact.
template <int BUG>
int one_mma16_tile_errors() {
    std::vector<__half> a(16 * 16), b(16 * 16);
    std::vector<float> want(16 * 16, 0.0f);
    for (int i = 0; i < 16 * 16; ++i) {
        a[i] = __float2half(float((i * 7) % 13 - 6));
        b[i] = __float2half(float((i * 5) % 11 - 5));
    }
    for (int i = 0; i < 16; ++i)
        for (int j = 0; j < 16; ++j)
            for (int k = 0; k < 16; ++k) want[i * 16 + j] += __half2float(a[i * 16 + k]) * __half2float(b[k * 16 + j]);
    wb::DeviceBuffer<__half> dA(a.size()), dB(b.size());
    wb::DeviceBuffer<float> dC(want.size());
    dA.upload(a);
    dB.upload(b);
    one_mma16_tile<BUG><<<1, 32>>>(dA.get(), dB.get(), dC.get());
    WB_LAUNCH_CHECK();
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> c = dC.download();
    int wrong = 0;
    for (size_t i = 0; i < c.size(); ++i) wrong += c[i] != want[i];
    return wrong;
}

}  // namespace t06
