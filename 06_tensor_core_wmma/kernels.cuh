// kernels.cuh - chapter 06: tensor cores through WMMA. FP16 inputs with FP32 accumulation, and TF32.
//
// Chapters 02 to 05 multiplied on the FP32 units, one fused multiply-add per thread per instruction.
// A tensor core multiplies small matrices instead: in CUDA C++ a whole warp hands it a 16x16 tile of
// A, a 16x16 tile of B and a 16x16 tile of accumulators (nvcuda::wmma::mma_sync), and 4096
// multiply-adds happen in a few instructions. The ladder of this chapter:
//
//   step 1  wmma_naive            one warp per 16x16 tile of C, fragments read straight from global
//                                 memory (hgemm_wmma_naive).
//   step 2  wmma_smem             a 128x128 block tile in shared memory, moved with 16-byte loads;
//                                 8 warps, each owns 64x32 of C = 4x2 fragments and reuses every
//                                 fragment of A twice and every fragment of B four times.
//   step 3  wmma_smem_skewed      the same with every shared row padded by 16 bytes (SKEW): the
//                                 fragment loads (ldmatrix) stop colliding in the banks.
//   step 4  wmma_cp_async         a ring of STAGES tiles filled by cp.async (sm_80+), so the copies
//                                 of the next tiles run while the tensor cores work on this one.
//   step 5  wmma_smem_epilogue    the accumulators leave through shared memory: alpha/beta, bounds
//                                 and coalesced 16-byte stores of C.
//   step 6  wmma_128x256_swizzle  64x64 per warp (4x4 fragments), a 128x256 block tile, blocks
//                                 walked in bands of 8 tile rows so that A and B stay in L2.
//           wmma_best             per shape, the fastest of the candidates the time model of section 12
//                                 shortlists, timed once on the first call with that shape.
//   TF32    tf32_wmma             the same kernel on FP32 inputs rounded to TF32 (sm_80+); its
//                                 fragments are loaded with the address space spelled out (section 1).
//   step 7  tf32_mma_sync         TF32 without WMMA: mma.sync m16n8k8 with its documented register
//                                 layout, A loaded by ldmatrix (section 10).
//           tf32_best             the same choice among the TF32 candidates.
//
// The files, in reading order:
//   wmma_basics.cuh    1. the two kinds of input (FP16, TF32)  2. the WMMA rules and the kernel
//                      arguments  3. step 1
//   wmma_steps.cuh     steps 2 to 6 as ONE kernel template, wmma_gemm_tiled<Cfg, LOOP, EPI, VEC>:
//                      4. the tile configuration  5. the copies (VEC: 16-byte or element-wise)
//                      6. the block order and the tensor-core work on one stage  7. the main loops
//                      8. the epilogues  9. the kernel  11. the launchers
//   mma_sync_step.cuh  10. step 7, a second kernel built from the same tiles, copies, main loop and
//                      epilogue
//   kernels.cuh        (this file) the configurations by name, `best` (12) and the ladder (13).
// What exists to explore rather than to teach (tuning tables, the precision study, rounding
// experiments) lives in lab/ (`make tune-06`; README, "The best variant and the lab").
//
// Any shape: tiles hanging over an edge of A or B are zero-filled (zeros add nothing to a dot
// product), fragments of C that hang over the edge of C leave through a small staging area, and
// the fast paths are taken only where the WMMA rules (section 2) allow. Indices are int: the
// workbook keeps every matrix below 2^31 elements (options.h).
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "mma_sync_step.cuh"
#include "timer.cuh"

// ---- The configurations of the ladder and of `best` --------------------------------------------
// Tiling<inputs, BM, BN, BK, WM, WN, STAGES, SKEW_A, SKEW_B> (section 4). FP16: BK = 32 halves, 64
// bytes per row of A; TF32: BK = 16 or 32 floats.

// Step 2: 8 warps of 64x32 (4x2 fragments), one stage, rows not padded.
using Wmma128x128_unpadded = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 1, 0, 0>;
// Step 3: the same with 16 bytes of padding per shared row.
using Wmma128x128_padded = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 1, 8, 8>;
// Steps 4 and 5: the same tiles in a ring of 3 stages (55.5 KB).
using Wmma128x128_3stage = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 3, 8, 8>;
// Step 6: 8 warps of 64x64 (4x4 fragments), 3 stages (79.5 KB).
using Wmma128x256_3stage = Tiling<Fp16Inputs, 128, 256, 32, 64, 64, 3, 8, 8>;
// A candidate of `best`: 4 warps of 64x64 on a 128x128 tile, 3 stages.
using Wmma128x128_4warps_3stage = Tiling<Fp16Inputs, 128, 128, 32, 64, 64, 3, 8, 8>;
// A candidate of `best` for few tiles: 4 warps of 32x32, more blocks to spread over the SMs.
using Wmma64x64_3stage = Tiling<Fp16Inputs, 64, 64, 32, 32, 32, 3, 8, 8>;
// TF32 WMMA: 8 warps of 64x32, BK = 16 floats, 3 stages; padding 4 floats on A, 8 on B.
using Tf32Wmma128x128_3stage = Tiling<Tf32Inputs, 128, 128, 16, 64, 32, 3, 4, 8>;
// Step 7: mma.sync, 4 warps of 64x64, BK = 32 floats, 2 stages (70 KB: every TF32 GPU grants it).
// SKEW_A 4 makes rows of A 4 (mod 8) floats long (ldmatrix), SKEW_B 8 makes rows of B 8 (mod 32).
using Mma128x128_k32_2stage = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 2, 4, 8>;
// A candidate of `best` for few tiles: 4 warps of 32x32, 3 stages.
using Mma64x64_k32_3stage = Tiling<Tf32MmaInputs, 64, 64, 32, 32, 32, 3, 4, 8>;

constexpr int kBand = 8;  // tile rows per band of the block order (section 6)

// Steps 5 and 6, and the candidates: the cp.async ring, the staged epilogue, the banded order.
template <class Cfg>
constexpr auto ring_launcher() {
    return launch_wmma_tiled<Cfg, wb::Pipeline::cp_async, Epilogue::staged_in_smem, kBand>;
}
template <class Cfg>
wb::KernelInfo ring_info() {
    return kernel_info<Cfg, wb::Pipeline::cp_async, Epilogue::staged_in_smem>();
}

// ---- 12. `best`: the model shortlists, one measurement decides ------------------------------------
// No single configuration is fastest everywhere, for two reasons the sweeps show (README, "best"):
//   - waves: a grid of T tiles on S SMs takes ceil(T / S) tile-times. 120 tiles of 128x256 on 132
//     SMs take one tile-time, like 132; 133 take two. A smaller tile can finish first.
//   - the path: where rows of A or B do not start on 16-byte boundaries the copies are element-wise
//     and the thread waits for them (section 5); the cp.async ring then overlaps nothing, and the
//     one-stage step 3, with its small shared footprint, is as fast as the ring.
// So every candidate carries a measured rate per path, and the model (wb::busiest_sm_time) says how
// long each would take. Rates: G multiply-adds per second per SM at full load, medians over sweeps
// of random shapes (lab/best_06.py computes them from the sweeps in lab/calib and the ladder sweeps
// of results/h200/sweeps).
//
// The model ranks well but cannot split near-ties: on the element-wise path four candidates are
// within a few percent of each other and which one wins a shape follows neither its waves nor its K.
// So `best` keeps the candidates the model puts within kShortlistMargin of its first, and when more
// than one is left it times them once, on the first call with that shape, and remembers the winner.
struct PathRates {
    double vec16;        // rows of A and B 16-byte aligned: 16-byte copies (cp.async from sm_80)
    double elementwise;  // otherwise
};

template <class Fn>
struct BestCandidate {
    const char* name;  // as the tests and the notes call it
    Fn run;
    int bm, bn;  // the block tile: what the number of waves depends on
    int min_cc;
    int smem_bytes;
    PathRates hopper;         // sm_90 and later, measured on the H200
    PathRates before_hopper;  // sm_70 to sm_89: not measured yet; the H200's rates stand in
};

template <class Cfg, class Fn>
constexpr BestCandidate<Fn> candidate(const char* name, Fn run, PathRates hopper, PathRates before_hopper) {
    return {name, run, Cfg::BM, Cfg::BN, min_cc_of<Cfg>(), Cfg::SMEM_BYTES, hopper, before_hopper};
}

// clang-format off
inline const BestCandidate<HgemmFn> kHgemmCandidates[] = {
    candidate<Wmma128x128_4warps_3stage>("wmma_128x128_4warps", ring_launcher<Wmma128x128_4warps_3stage>(),
                                         {1170, 452}, {1170, 452}),
    candidate<Wmma128x256_3stage>("wmma_128x256_swizzle", ring_launcher<Wmma128x256_3stage>(),
                                  {1079, 480}, {1079, 480}),
    candidate<Wmma128x128_padded>("wmma_smem_skewed",
        launch_wmma_tiled<Wmma128x128_padded, wb::Pipeline::single_buffer, Epilogue::fragments_to_global>,
        {783, 458}, {783, 458}),
    candidate<Wmma128x128_3stage>("wmma_cp_async",
        launch_wmma_tiled<Wmma128x128_3stage, wb::Pipeline::cp_async, Epilogue::fragments_to_global>,
        {1041, 447}, {1041, 447}),
    candidate<Wmma128x128_3stage>("wmma_smem_epilogue",
        launch_wmma_tiled<Wmma128x128_3stage, wb::Pipeline::cp_async, Epilogue::staged_in_smem>,
        {1030, 440}, {1030, 440}),
    candidate<Wmma64x64_3stage>("wmma_64x64", ring_launcher<Wmma64x64_3stage>(), {604, 255}, {604, 255}),
};
inline const BestCandidate<SgemmFn> kTf32Candidates[] = {
    candidate<Mma128x128_k32_2stage>("tf32_mma_sync", launch_mma_tf32<Mma128x128_k32_2stage, kBand>,
                                     {591, 431}, {591, 431}),
    candidate<Mma64x64_k32_3stage>("mma_64x64", launch_mma_tf32<Mma64x64_k32_3stage, kBand>,
                                   {433, 236}, {433, 236}),
};
// clang-format on

// A candidate the model expects to be at most 15% slower than its first is worth timing: on the
// H200 sweeps the fastest candidate of every shape lies within that margin (lab/best_06.py
// --margin replays it), and it leaves out the tiles whose waves clearly lose.
constexpr double kShortlistMargin = 1.15;

// The candidates that run on a GPU of compute capability `cc` with `sms` SMs granting `smem_optin`
// bytes of shared memory per block and whose modelled time is within kShortlistMargin of the
// smallest, fastest first (a tie keeps the table's order). Throws when no candidate runs there.
template <class Fn, size_t COUNT>
std::vector<const BestCandidate<Fn>*> shortlist(const BestCandidate<Fn> (&candidates)[COUNT], int M, int N,
                                                int K, bool vec16, int cc, int sms, int smem_optin) {
    std::vector<std::pair<double, const BestCandidate<Fn>*>> timed;
    for (const BestCandidate<Fn>& c : candidates) {
        if (cc < c.min_cc || c.smem_bytes > smem_optin) continue;
        const PathRates& rates = cc >= 90 ? c.hopper : c.before_hopper;
        timed.push_back({wb::busiest_sm_time(M, N, K, c.bm, c.bn, 1, sms, vec16 ? rates.vec16 : rates.elementwise),
                         &c});
    }
    if (timed.empty())
        throw std::runtime_error("no candidate of `best` runs on this GPU (compute capability " +
                                 std::to_string(cc) + ")");
    std::stable_sort(timed.begin(), timed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<const BestCandidate<Fn>*> out;
    for (const auto& [t, c] : timed)
        if (t <= timed.front().first * kShortlistMargin) out.push_back(c);
    return out;
}

// The model's own first choice.
template <class Fn, size_t COUNT>
const BestCandidate<Fn>& choose_best(const BestCandidate<Fn> (&candidates)[COUNT], int M, int N, int K,
                                     bool vec16, int cc, int sms, int smem_optin) {
    return *shortlist(candidates, M, N, K, vec16, cc, sms, smem_optin).front();
}

// True while `stream` records a CUDA graph: nothing may be timed or waited for then.
inline bool stream_is_capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
        (void)cudaGetLastError();  // the legacy stream while another one captures: treat as capturing
        return true;
    }
    return status != cudaStreamCaptureStatusNone;
}

struct BestTrialOutput {};  // the tag of the scratch C the trials write (wb::scratch_buffer)
constexpr int kTrialLaunches = 3;  // timed launches per candidate, after one untimed round

// The candidate `best` runs for this call: the model's shortlist, and where it holds more than one,
// the fastest of them as timed on the first call with the same device, shape, beta == 0 or not and
// alignment of A, B and C (what the kernels choose their paths by). The trials write a scratch C
// placed at C's alignment, never C itself: with beta != 0 each trial would add to it. While the
// stream captures a graph, the model's first is used and nothing is remembered. Setting the
// environment variable WB_SHOW_BEST prints each decision on stderr.
template <class T, class Fn, size_t COUNT>
const BestCandidate<Fn>& pick_best(const BestCandidate<Fn> (&candidates)[COUNT], int M, int N, int K, float alpha,
                                   const T* A, const T* B, float beta, const float* C, cudaStream_t stream) {
    const wb::DeviceFacts& gpu = wb::current_device();
    const bool vec16 = chunk_access_ok(A, K) && chunk_access_ok(B, N);
    const std::vector<const BestCandidate<Fn>*> list =
        shortlist(candidates, M, N, K, vec16, gpu.cc_number(), gpu.sms, gpu.smem_per_block_optin);
    if (list.size() == 1 || stream_is_capturing(stream)) return *list.front();

    constexpr uintptr_t kAlign = 256;  // cudaMalloc's alignment: a residue mod 256 fixes every path
    int device = 0;
    WB_CUDA_CHECK(cudaGetDevice(&device));
    const auto key = std::make_tuple(device, M, N, K, beta == 0.0f, uintptr_t(A) % kAlign, uintptr_t(B) % kAlign,
                                     uintptr_t(C) % kAlign);
    static std::mutex mutex;
    static std::map<decltype(key), const BestCandidate<Fn>*> chosen;
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = chosen.find(key); it != chosen.end()) return *it->second;

    char* scratch = static_cast<char*>(wb::scratch_buffer<BestTrialOutput>(size_t(M) * N * sizeof(float) + kAlign));
    float* trial_c = reinterpret_cast<float*>(scratch + uintptr_t(C) % kAlign);
    for (const BestCandidate<Fn>* c : list) c->run(M, N, K, alpha, A, B, beta, trial_c, stream);
    const BestCandidate<Fn>* winner = nullptr;
    double winner_ms = 0.0;
    std::string log;
    for (const BestCandidate<Fn>* c : list) {
        const double ms = wb::time_launches(
            [&](cudaStream_t s) { c->run(M, N, K, alpha, A, B, beta, trial_c, s); }, 0, kTrialLaunches, stream)
                              .ms_median;
        log += std::string(" ") + c->name + " " + std::to_string(ms) + " ms;";
        if (!winner || ms < winner_ms) {
            winner = c;
            winner_ms = ms;
        }
    }
    chosen.emplace(key, winner);
    if (std::getenv("WB_SHOW_BEST"))
        std::fprintf(stderr, "best %dx%dx%d (%s path): timed%s runs %s\n", M, N, K, vec16 ? "16-byte" : "element-wise",
                     log.c_str(), winner->name);
    return *winner;
}

template <class T, class Fn, size_t COUNT>
void launch_best(const BestCandidate<Fn> (&candidates)[COUNT], int M, int N, int K, float alpha, const T* A,
                 const T* B, float beta, float* C, cudaStream_t stream) {
    pick_best(candidates, M, N, K, alpha, A, B, beta, C, stream).run(M, N, K, alpha, A, B, beta, C, stream);
}

inline void launch_hgemm_best(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta,
                              float* C, cudaStream_t stream) {
    launch_best(kHgemmCandidates, M, N, K, alpha, A, B, beta, C, stream);
}

inline void launch_tf32_best(int M, int N, int K, float alpha, const float* A, const float* B, float beta,
                             float* C, cudaStream_t stream) {
    launch_best(kTf32Candidates, M, N, K, alpha, A, B, beta, C, stream);
}

// ---- 13. The ladder ------------------------------------------------------------------------------
// clang-format off
inline const wb::HgemmVariant kHgemmVariants[] = {
    {"wmma_naive", launch_wmma_naive,
     "one warp per 16x16 tile of C, fragments loaded from global memory",
     {(const void*)hgemm_wmma_naive, kNaiveThreads, 0}, Fp16Inputs::kMinCc},
    {"wmma_smem", launch_wmma_tiled<Wmma128x128_unpadded, wb::Pipeline::single_buffer, Epilogue::fragments_to_global>,
     "128x128x32 tiles in shared memory (16-byte loads), 8 warps of 4x2 fragments",
     kernel_info<Wmma128x128_unpadded, wb::Pipeline::single_buffer, Epilogue::fragments_to_global>(),
     min_cc_of<Wmma128x128_unpadded>()},
    {"wmma_smem_skewed", launch_wmma_tiled<Wmma128x128_padded, wb::Pipeline::single_buffer, Epilogue::fragments_to_global>,
     "+ 16 bytes of padding per shared row: conflict-free fragment loads",
     kernel_info<Wmma128x128_padded, wb::Pipeline::single_buffer, Epilogue::fragments_to_global>(),
     min_cc_of<Wmma128x128_padded>()},
    {"wmma_cp_async", launch_wmma_tiled<Wmma128x128_3stage, wb::Pipeline::cp_async, Epilogue::fragments_to_global>,
     "+ a 3-stage cp.async ring: copies overlap the tensor-core work",
     kernel_info<Wmma128x128_3stage, wb::Pipeline::cp_async, Epilogue::fragments_to_global>(),
     min_cc_of<Wmma128x128_3stage>()},
    {"wmma_smem_epilogue", launch_wmma_tiled<Wmma128x128_3stage, wb::Pipeline::cp_async, Epilogue::staged_in_smem>,
     "+ accumulators staged in shared memory, 16-byte coalesced stores of C",
     kernel_info<Wmma128x128_3stage, wb::Pipeline::cp_async, Epilogue::staged_in_smem>(),
     min_cc_of<Wmma128x128_3stage>()},
    {"wmma_128x256_swizzle", ring_launcher<Wmma128x256_3stage>(),
     "+ 128x256 tiles, 64x64 per warp (4x4 fragments), blocks in bands of 8 tile rows",
     ring_info<Wmma128x256_3stage>(), min_cc_of<Wmma128x256_3stage>()},
    // The *_best variants run one of several kernels (chosen per shape), so they have no row of
    // their own in the resource table.
    {"wmma_best", launch_hgemm_best, "per shape, the fastest of the candidates the wave model shortlists (section 12)",
     {}, Fp16Inputs::kMinCc},
};
inline const wb::SgemmVariant kTf32Variants[] = {
    {"tf32_wmma", ring_launcher<Tf32Wmma128x128_3stage>(),
     "TF32 m16n16k8 on FP32 inputs, same kernel: 128x128x16 tiles, 3 stages, staged epilogue",
     wb::Precision::tf32, ring_info<Tf32Wmma128x128_3stage>(), min_cc_of<Tf32Wmma128x128_3stage>()},
    {"tf32_mma_sync", launch_mma_tf32<Mma128x128_k32_2stage, kBand>,
     "step 7: the instruction under WMMA, mma.sync m16n8k8 with its documented layout, 128x128x32, 2 stages",
     wb::Precision::tf32, mma_kernel_info<Mma128x128_k32_2stage>(), min_cc_of<Mma128x128_k32_2stage>()},
    {"tf32_best", launch_tf32_best, "per shape, the fastest of the TF32 candidates the wave model shortlists (section 12)",
     wb::Precision::tf32, {}, Tf32Inputs::kMinCc},
};
// clang-format on
