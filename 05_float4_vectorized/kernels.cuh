// kernels.cuh - chapter 05: float4 loads, a transposed A tile, warp tiling, double buffering.
//
// Chapter 04 gave every thread a small block of C in registers, so that each value read from
// shared memory feeds several multiply-adds. This chapter keeps that idea and removes, one step
// at a time, what still stands between it and the FP32 units:
//
//   step 1  float4_transposed_a  global loads of 16 bytes (LDG.128); the A tile is stored
//                                transposed, so a thread's column of A is contiguous in shared
//                                memory and comes in with 16-byte reads (LDS.128) too.
//   step 2  warptile             the same arithmetic, but the lanes of a warp are arranged so that
//                                their shared-memory reads never collide in a bank, and every
//                                store of C is a full 128-byte line per quarter warp.
//   step 3a warptile_db_regs     two shared buffers: the next tile travels through registers while
//                                the current one is multiplied; one barrier per K step.
//   step 3b warptile_cp_async    cp.async copies global memory straight into shared memory
//                                (Ampere and later), STAGES tiles in flight.
//   step 4  ..._swizzle          blocks are numbered so that neighbours share panels of A and B
//                                in the L2 cache.
//   step 5  splitk               small C, long K: several blocks share one tile of C, each summing
//                                one slice of K, and a second kernel adds the slices.
//   best                         the tile (and K split) that finishes first on this GPU and shape,
//                                by counting the waves of tiles per SM (section 3).
//
// All of them are ONE kernel template, sgemm_float4<Tiling, Pipeline, VEC>: a tile configuration
// (section 1 below), one of three main loops and the alignment choice VEC. The files, by idea:
//   kernels.cuh    the tile configuration, the launchers, `best`, the ladder (this file)
//   tiles.cuh      what a block works on; moving tiles global -> (registers ->) shared memory
//   mainloops.cuh  multiplying a tile, the three main loops, the epilogue, the kernel
//   lab/           the tuning table and `make tune`: exploration, not part of the lesson
//
// Any shape: every tile load is guarded and zero-filled at the edges, every store is guarded. The
// float4 path (VEC = true) is taken only when it is safe: K and N multiples of 4 (so every row of A,
// B and C starts on a 16-byte boundary) and 16-byte aligned pointers. Otherwise the same tiling
// runs with 4-byte loads and stores. Indices are int: the workbook keeps every matrix below 2^31
// elements (options.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>

#include "cuda_check.cuh"
#include "device.cuh"
#include "gemm_device.cuh"
#include "gemm_harness.cuh"
#include "gemm_tiles.cuh"
#include "mainloops.cuh"
#include "tiles.cuh"

namespace ch05 {

// ---- 1. The tile configuration --------------------------------------------------------------
//
//   block tile  BM x BN of C, computed by THREADS threads; K is walked BK columns at a time.
//   warp tile   WM x WN of the block tile belongs to one warp (WARPS_M x WARPS_N warps).
//   lanes       the 32 lanes of a warp form a LANES_M x LANES_N grid (LANES_N given, LANES_M = 32 / it).
//   sub-block   each lane owns TM x TN contiguous results; the lane grid covers
//               (LANES_M * TM) x (LANES_N * TN), and is repeated WM_ITER x WN_ITER times to fill
//               the warp tile. A lane thus holds THREAD_M x THREAD_N accumulators.
//   STAGES      how many A/B tile pairs live in shared memory at once (1: load, then compute;
//               2: double buffering; 3+: the cp.async pipeline).
//
// Example, step 2 (Tiling<128, 128, 8, 32, 64, 4, 4, 8, 1>): 8 warps as 4 x 2, each owns 32 x 64;
// its lanes form 4 x 8, each lane a 4 x 4 block, so one pass of the warp covers 16 x 32 and the
// warp repeats it 2 x 2 times: every lane computes 8 x 8 results in four 4 x 4 pieces.
//
//   warp tile 32 x 64: lane 9 (row 1, column 1 of the lane grid) owns the four blocks marked 9
//     columns 0..3  4..7         32..35 36..39
//        +-----+-----+--  --+-----+-----+--  --+
//        |  0  |  1  |  ..  |  0  |  1  |  ..  |  rows 0..3
//        |  8  |  9  |  ..  |  8  |  9  |  ..  |  rows 4..7
//        |  .. lanes 16..31: rows 8..15        |
//        +-----+-----+--  --+-----+-----+--  --+
//        |  0  |  1  |  ..  |  0  |  1  |  ..  |  rows 16..19: the lane grid again
//        |  8  |  9  |  ..  |  8  |  9  |  ..  |  rows 20..23
//        |  ..                                 |
template <int BM_, int BN_, int BK_, int WM_, int WN_, int TM_, int TN_, int LANES_N_, int STAGES_>
struct Tiling {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;
    static constexpr int WM = WM_, WN = WN_;
    static constexpr int TM = TM_, TN = TN_;
    static constexpr int LANES_N = LANES_N_, LANES_M = 32 / LANES_N_;
    static constexpr int STAGES = STAGES_;

    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int THREADS = WARPS_M * WARPS_N * 32;
    static constexpr int WM_ITER = WM / (LANES_M * TM), WN_ITER = WN / (LANES_N * TN);
    static constexpr int THREAD_M = WM_ITER * TM, THREAD_N = WN_ITER * TN;

    // Shared memory, in floats. The A tile is stored transposed, As[k][m], each row padded by one
    // float4 (see the transposed stores in tiles.cuh); the B tile is stored as it is, Bs[k][n].
    static constexpr int A_LD = BM + 4, B_LD = BN;
    static constexpr int A_STAGE = BK * A_LD, B_STAGE = BK * B_LD;
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * int(sizeof(float));

    // For __launch_bounds__: with up to 64 accumulators per thread, ask for two blocks per SM when
    // two fit in the 64K registers at 128 registers per thread (the compiler then stays within
    // 128); the big 128-accumulator tiles, and 512-thread blocks, get one block per SM.
    static constexpr int MIN_BLOCKS = THREAD_M * THREAD_N <= 64 && 2 * THREADS * 128 <= 65536 ? 2 : 1;

    static_assert(32 % LANES_N == 0, "LANES_N must divide the 32 lanes of a warp");
    static_assert(BM % WM == 0 && BN % WN == 0, "the block tile must be a whole number of warp tiles");
    static_assert(THREADS <= 1024, "a block holds at most 1024 threads");
    static_assert(TM % 4 == 0 && TN % 4 == 0,
                  "TM and TN must be multiples of 4: a lane reads its pieces of A and B as float4");
    static_assert(WM % (LANES_M * TM) == 0 && WN % (LANES_N * TN) == 0,
                  "the warp tile must be a whole number of lane-grid passes (LANES_M*TM x LANES_N*TN)");
    static_assert(BK % 4 == 0, "BK must be a multiple of 4: one float4 load of A covers 4 columns of k");
    static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0,
                  "each tile must split into float4 loads evenly over the threads, so that every "
                  "thread loads the same number of A and of B values and no thread idles");
    static_assert(THREADS % BK == 0 && THREADS % BN == 0,
                  "the 4-byte path moves one float per thread along a tile row (BK floats of A, BN "
                  "floats of B): THREADS must be a multiple of BK and of BN");
    static_assert(BM >= 8, "at least 8 rows of C per block keep grid.y within 65535 (options.h)");
    static_assert(STAGES >= 1, "at least one tile in shared memory");
    static_assert(SMEM_BYTES <= 227 * 1024, "more shared memory than one block can get (227 KB on sm_90)");

    // Where lane `tid` of the block starts inside the block tile: its warp's corner plus its
    // place in the lane grid. (Host and device: the CPU tests enumerate these maps.)
    __host__ __device__ static constexpr int thread_row0(int tid) {
        return (tid / 32 / WARPS_N) * WM + (tid % 32 / LANES_N) * TM;
    }
    __host__ __device__ static constexpr int thread_col0(int tid) {
        return (tid / 32 % WARPS_N) * WN + (tid % 32 % LANES_N) * TN;
    }
    // Accumulator row r of a lane lies `row_offset(r)` rows below its first row: TM contiguous
    // rows, then a jump over the other lanes' rows (a pass of the lane grid) to the next piece.
    __host__ __device__ static constexpr int row_offset(int r) { return (r / TM) * (LANES_M * TM) + r % TM; }
    __host__ __device__ static constexpr int col_offset(int c) { return (c / TN) * (LANES_N * TN) + c % TN; }
};

// The tilings of the ladder and of `best`. Parameters: BM, BN, BK, WM, WN, TM, TN, LANES_N, STAGES.
// Step 1: every thread owns one contiguous 8 x 8 block; the 256 threads are a 16 x 16 grid (a warp
// is 2 rows of 16 lanes). Expressed in the same terms: 8 warps stacked vertically, 16 x 128 each.
using Contiguous128x128k8 = Tiling<128, 128, 8, 16, 128, 8, 8, 16, 1>;
// Step 2 onwards: 4 x 2 warps of 32 x 64, lanes 4 x 8, each lane 2 x 2 pieces of 4 x 4.
using Warp128x128k8 = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 1>;          // one stage: load, then compute
using DoubleBuffer128x128k8 = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 2>;  // step 3a's two buffers
using CpAsync128x128k8 = Tiling<128, 128, 8, 32, 64, 4, 4, 8, 3>;       // step 3b: 3 tiles in flight
// `best`'s other candidates, all on the cp.async loop with 3 stages:
// BK = 16 halves the barriers per FFMA; 48.8 KB of shared memory, so it needs the opt-in above 48 KB.
using CpAsync128x128k16 = Tiling<128, 128, 16, 32, 64, 4, 4, 8, 3>;
// 8 warps of 64 x 64, 16 x 8 results per lane: the most FFMA per shared load, one block per SM.
using CpAsync128x256k8 = Tiling<128, 256, 8, 64, 64, 4, 4, 8, 3>;
// Half and a quarter of the 128 x 128 tile (4 warps each): more, smaller tiles for a short last wave.
using CpAsync128x64k8 = Tiling<128, 64, 8, 32, 64, 4, 4, 8, 3>;
using CpAsync64x64k8 = Tiling<64, 64, 8, 32, 32, 4, 4, 8, 3>;

// ---- 2. Launchers --------------------------------------------------------------------------------

// The float4 path reads and writes 16 bytes at a time: every row of A (K floats), B and C (N
// floats) must start on a 16-byte boundary, and so must the pointers. A sub-matrix view such as
// A + 1, or K = 4097, falls back to 4-byte accesses with the same tiling.
inline bool float4_path_ok(int N, int K, const float* A, const float* B, const float* C) {
    auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
    return K % 4 == 0 && N % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C);
}

// Split-K needs room for the partial sums: one buffer per process, grown on demand (the first,
// untimed warm-up launch pays for the allocation). Launches on several streams at once would need
// one each.
inline float* splitk_workspace(size_t floats) {
    static wb::DeviceBuffer<float> buffer;
    if (buffer.size() < floats) buffer = wb::DeviceBuffer<float>(floats);
    return buffer.get();
}

// Step 5's own rule: how many K slices fill the GPU. Only when the tiles of C alone leave SMs idle,
// no more than fits at once, and no slice shorter than kMinSliceK (below that the pipeline never
// fills). `best` chooses its split by the wave model instead (section 4).
constexpr int kSplitAuto = 0;
constexpr int kMaxSplits = 16;
constexpr int kMinSliceK = 256;
template <class Cfg>
int auto_splits(int M, int N, int K, int sms) {
    const int tiles = wb::ceil_div(M, Cfg::BM) * wb::ceil_div(N, Cfg::BN);
    if (tiles >= sms) return 1;
    const int fill = sms * Cfg::MIN_BLOCKS / tiles;
    return std::max(1, std::min({fill, K / kMinSliceK, kMaxSplits}));
}

// One instantiation of the kernel, launched with the >48 KB opt-in where its tile needs it.
template <class Cfg, Pipeline P, bool VEC>
void launch_sgemm_float4(const SplitArgs& g, dim3 grid, cudaStream_t stream) {
    wb::launch_tiled<sgemm_float4<Cfg, P, VEC>, Cfg::THREADS, Cfg::SMEM_BYTES>(g, grid, stream);
}

// Runs one GEMM with the K range cut into `splits` slices (1: not split). GROUP: tile rows per band
// of the block order (1: plain row order). It checks the alignment itself and takes the 4-byte path
// when the float4 one would be unsafe.
template <class Cfg, Pipeline P, int GROUP = 1>
void run_sgemm_float4(int splits, int M, int N, int K, float alpha, const float* A, const float* B,
                      float beta, float* C, cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    SplitArgs g{{M, N, K, alpha, beta, A, B, C, GROUP}, K};
    dim3 grid(wb::ceil_div(N, Cfg::BN), wb::ceil_div(M, Cfg::BM), 1);
    if (splits > 1) {
        // Slices are whole BK tiles, so each starts on a float4 boundary; the last may be shorter.
        g.k_slice = wb::ceil_div(wb::ceil_div(K, splits), Cfg::BK) * Cfg::BK;
        grid.z = wb::ceil_div(K, g.k_slice);
    }
    if (grid.z > 1) {  // the GEMM writes raw partial sums; alpha and beta are applied when adding
        g.C = splitk_workspace(size_t(grid.z) * M * N);
        g.alpha = 1.0f;
        g.beta = 0.0f;
    }
    if (float4_path_ok(N, K, A, B, g.C))
        launch_sgemm_float4<Cfg, P, true>(g, grid, stream);
    else
        launch_sgemm_float4<Cfg, P, false>(g, grid, stream);
    if (grid.z > 1) {
        const int MN = M * N;
        splitk_sum_slices<<<wb::ceil_div(MN, 256), 256, 0, stream>>>(MN, int(grid.z), alpha, g.C, beta, C);
        WB_LAUNCH_CHECK();
    }
}

// The launcher of a table row (wb::SgemmFn): SPLITS K slices (1: none, kSplitAuto: auto_splits).
template <class Cfg, Pipeline P, int SPLITS = 1, int GROUP = 1>
void sgemm_float4_launcher(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                           float* C, cudaStream_t stream) {
    static_assert(SPLITS >= 0 && SPLITS <= kMaxSplits,
                  "SPLITS: 1 for none, 0 for automatic, at most kMaxSplits");
    const int splits = SPLITS == kSplitAuto ? auto_splits<Cfg>(M, N, K, wb::current_device().sms) : SPLITS;
    run_sgemm_float4<Cfg, P, GROUP>(splits, M, N, K, alpha, A, B, beta, C, stream);
}

// The resources the harness prints for a configuration (the float4 instantiation).
template <class Cfg, Pipeline P>
wb::KernelInfo kernel_info() {
    return {(const void*)sgemm_float4<Cfg, P, true>, Cfg::THREADS, size_t(Cfg::SMEM_BYTES)};
}

// ---- 3. best: the tile that finishes first -------------------------------------------------------
//
// A GEMM's tiles go out to the SMs in waves, and the SM that gets the most tiles decides when the
// kernel ends (wb::busiest_sm_time, common/gemm_tiles.cuh). So the fastest tile at 4096^3 (the one
// with the best rate per SM) is not the fastest everywhere: where its tiles fill the last wave
// badly, a smaller tile or a K split in slices wins although each of its tiles runs slower. `best`
// estimates the time of each candidate of this GPU generation, each K split it may use, and runs
// the smallest estimate:
//
//   time = busiest_sm_time(tile, splits) at the candidate's measured rate, at least fill_blocks tiles
//        + (splits > 1) the partial sums written and read back once, at kSumBandwidthShare of DRAM
//
// The rates are fractions of the SM's FP32 peak (wb::DeviceFacts: lanes x 2 x clock), measured at
// full load on this chapter's own kernels: `make tune-05` measures them (lab/), the notes' section
// "Waves" says how they were fitted.

// A candidate: a tiling and main loop, launched with the K split chosen for the call.
using SplitLauncher = void (*)(int splits, int M, int N, int K, float alpha, const float* A, const float* B,
                               float beta, float* C, cudaStream_t stream);
struct BestCandidate {
    const char* lab_name;  // the row of lab/configs.cuh that measures it unsplit
    int bm, bn;            // its tile of C
    int fill_blocks;       // blocks one SM needs at once to run at the measured rate (MIN_BLOCKS)
    bool may_split;        // also try K in 2 to kMaxSplits slices
    SplitLauncher run;
};
template <class Cfg, Pipeline P>
constexpr BestCandidate candidate(const char* lab_name, bool may_split) {
    return {lab_name, Cfg::BM, Cfg::BN, Cfg::MIN_BLOCKS, may_split, run_sgemm_float4<Cfg, P>};
}

struct MeasuredRate {
    int min_cc;  // the generation: a GPU uses the rows of the largest min_cc it reaches
    BestCandidate candidate;
    double vec_share;     // float4 path: fraction of the SM's FP32 peak at full load
    double scalar_share;  // 4-byte path (N or K not a multiple of 4, or unaligned pointers)
};

// The candidates. The rows of lab/configs.cuh with these names measure them (`make tune-05`).
constexpr BestCandidate kWide128x256k8 =
    candidate<CpAsync128x256k8, Pipeline::cp_async>("async3_128x256x8", false);
constexpr BestCandidate kDeep128x128k16 =
    candidate<CpAsync128x128k16, Pipeline::cp_async>("async3_128x128x16", false);
constexpr BestCandidate kHalf128x64k8 = candidate<CpAsync128x64k8, Pipeline::cp_async>("async3_128x64x8", false);
constexpr BestCandidate kQuarter64x64k8 = candidate<CpAsync64x64k8, Pipeline::cp_async>("async3_64x64x8", true);
constexpr BestCandidate kSplit128x128k8 =
    candidate<CpAsync128x128k8, Pipeline::cp_async>("async3_128x128x8", true);
constexpr BestCandidate kRegs128x128k8 =
    candidate<DoubleBuffer128x128k8, Pipeline::prefetch_regs>("regs2_128x128x8", false);

// Hopper: measured on H200, the median over the random shapes of each path in the sweeps of
// results/h200/sweeps (59 shapes for 128 x 128 x 8 on the 4-byte path, 29 to 31 for the others;
// notes, "Waves"; lab/eval_best.py --fit). The 128 x 256 tile is the fastest per SM on the float4
// path, 128 x 128 x 16 on the 4-byte path; the smaller tiles and the split tiles are for shapes whose
// last wave is short. The 64 x 64 tile may split too: where M (or N) is just over a multiple of 128,
// every slice of a 128-row tile computes the padding rows, 64-row tiles far fewer (289 rows: 384
// computed vs 320), and a C of a few tiles gets four times the blocks.
// Ampere, Ada: not measured; the previous default (128 x 128 on cp.async, split when SMs idle).
// Turing: not measured; no cp.async, so the register-staged double buffer, never split.
inline constexpr MeasuredRate kBestRates[] = {
    // min_cc, candidate, vec_share, scalar_share
    {90, kWide128x256k8, 0.739, 0.667},
    {90, kDeep128x128k16, 0.710, 0.694},
    {90, kHalf128x64k8, 0.649, 0.636},
    {90, kQuarter64x64k8, 0.586, 0.574},
    {90, kSplit128x128k8, 0.683, 0.666},
    {80, kSplit128x128k8, 0.6, 0.6},
    {0, kRegs128x128k8, 0.5, 0.5},
};
// How fast split-K's partial sums are written and read back, as a share of the DRAM peak. Fitted on
// H200 sweeps of small C with long K, where the choice of split depends on it; the partial sums of
// such a C mostly stay in the L2 cache, so the fit comes out near the DRAM peak.
constexpr double kSumBandwidthShare = 1.0;

// What the rule needs to know about the GPU (from wb::DeviceFacts; the CPU tests make their own).
struct GpuModel {
    int cc;                 // 90 for sm_90
    int sms;                // multiprocessors
    double sm_peak_gflops;  // FP32 peak of one SM
    double bandwidth_gbs;   // DRAM peak
};
inline GpuModel gpu_model(const wb::DeviceFacts& d) {
    return {d.cc_number(), d.sms, d.peak_fp32_gflops / d.sms, d.peak_bandwidth_gbs};
}

// The estimated time of one candidate with `splits` K slices, in milliseconds.
inline double estimate_ms(const MeasuredRate& r, bool vec, int M, int N, int K, int splits,
                          const GpuModel& gpu) {
    const double flops_per_s = (vec ? r.vec_share : r.scalar_share) * gpu.sm_peak_gflops * 1e9;
    // busiest_sm_time counts multiply-adds (BM * BN * K of them per tile), two flops each.
    const BestCandidate& c = r.candidate;
    double s = wb::busiest_sm_time(M, N, K, c.bm, c.bn, splits, gpu.sms, flops_per_s / 2);
    // An SM given fewer blocks than it needs to hide its latencies does not reach the measured rate:
    // it is charged as if it held fill_blocks (a lone 128 x 64 block is about as slow as two).
    const double one_tile = double(c.bm) * c.bn * wb::ceil_div(K, splits) / (flops_per_s / 2);
    s = std::max(s, c.fill_blocks * one_tile);
    if (splits > 1)
        s += 2.0 * splits * double(M) * N * sizeof(float) / (kSumBandwidthShare * gpu.bandwidth_gbs * 1e9);
    return s * 1e3;
}

// The rows of the generation a GPU of compute capability `cc` uses.
inline int best_generation(int cc) {
    int gen = 0;
    for (const MeasuredRate& r : kBestRates)
        if (r.min_cc <= cc) gen = std::max(gen, r.min_cc);
    return gen;
}

struct BestChoice {
    const MeasuredRate* rate;
    int splits;
    double estimate_ms;
};

// The candidate and K split with the smallest estimate. Every split from 2 to kMaxSplits is tried
// (the count that fills the last round best is often an odd one, 3 or 7), as long as every slice
// keeps at least kMinSliceK of K.
inline BestChoice choose_best(int M, int N, int K, bool vec, const GpuModel& gpu) {
    const int gen = best_generation(gpu.cc);
    BestChoice best{nullptr, 1, 0.0};
    auto consider = [&](const MeasuredRate& r, int splits) {
        const double t = estimate_ms(r, vec, M, N, K, splits, gpu);
        if (!best.rate || t < best.estimate_ms) best = {&r, splits, t};
    };
    for (const MeasuredRate& r : kBestRates) {
        if (r.min_cc != gen) continue;
        consider(r, 1);
        if (r.candidate.may_split)
            for (int s = 2; s <= kMaxSplits && K / s >= kMinSliceK; ++s) consider(r, s);
    }
    return best;
}

inline void launch_best(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                        float* C, cudaStream_t stream) {
    const BestChoice c =
        choose_best(M, N, K, float4_path_ok(N, K, A, B, C), gpu_model(wb::current_device()));
    c.rate->candidate.run(c.splits, M, N, K, alpha, A, B, beta, C, stream);
}

// ---- 4. The ladder ---------------------------------------------------------------------------------
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"float4_transposed_a", sgemm_float4_launcher<Contiguous128x128k8, Pipeline::single_buffer>,
     "LDG.128 tile loads, A stored transposed for LDS.128; 8x8 contiguous per thread", wb::Precision::fp32,
     kernel_info<Contiguous128x128k8, Pipeline::single_buffer>()},
    {"warptile", sgemm_float4_launcher<Warp128x128k8, Pipeline::single_buffer>,
     "warp tiles of 32x64, lanes 4x8, 2x2 pieces of 4x4: conflict-free LDS.128", wb::Precision::fp32,
     kernel_info<Warp128x128k8, Pipeline::single_buffer>()},
    {"warptile_db_regs", sgemm_float4_launcher<DoubleBuffer128x128k8, Pipeline::prefetch_regs>,
     "+ double buffering: next tile staged in registers, one barrier per K step", wb::Precision::fp32,
     kernel_info<DoubleBuffer128x128k8, Pipeline::prefetch_regs>()},
    {"warptile_cp_async", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async>,
     "+ cp.async ring of 3 stages, global -> shared without registers", wb::Precision::fp32,
     kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"warptile_cp_async_swizzle", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async, 1, 8>,
     "+ blocks walk the tiles in bands of 8 rows, for L2 reuse", wb::Precision::fp32,
     kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"splitk", sgemm_float4_launcher<CpAsync128x128k8, Pipeline::cp_async, kSplitAuto>,
     "+ K split over blocks when C has fewer tiles than SMs, slices added by a 2nd kernel",
     wb::Precision::fp32, kernel_info<CpAsync128x128k8, Pipeline::cp_async>()},
    {"best", launch_best, "the tile and K split with the fewest waves for this GPU and shape (kBestRates)",
     wb::Precision::fp32, kernel_info<CpAsync128x256k8, Pipeline::cp_async>()},
};

}  // namespace ch05
