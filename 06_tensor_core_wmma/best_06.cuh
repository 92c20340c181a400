// best_06.cuh - chapter 06's `best` variants (wmma_best, tf32_best): not a step of the ladder but
// machinery that chooses among the steps' kernels at run time. A time model shortlists the
// candidates for a shape; where it cannot split them, one measurement on the first call with that
// shape decides. The rates and how they were fitted: lab/README.md, lab/best_06.py.
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

#include "step11_tf32_swizzled.cuh"
#include "timer.cuh"

namespace ch06 {

// The candidates that are not ladder rows. FP16: 4 warps of 64x64 on a 128x128 tile, 3 stages;
// and 4 warps of 32x32 on 64x64, more blocks to spread over the SMs when C has few tiles.
using Wmma128x128_4warps_3stage = Tiling<Fp16Inputs, 128, 128, 32, 64, 64, 3, 8, 8>;
using Wmma64x64_3stage = Tiling<Fp16Inputs, 64, 64, 32, 32, 32, 3, 8, 8>;
// Step 9's kernel on two more tiles: BK = 64 halves in 3 stages (144 KB, so sm_90 only: min_cc_of),
// and 4 warps of 32x64 on 64x128 for shapes with few tiles of C.
using Mma16_128x256_k64_3stage = Tiling<Fp16MmaInputs, 128, 256, 64, 64, 64, 3, 0, 0>;
using Mma16_64x128_4stage = Tiling<Fp16MmaInputs, 64, 128, 32, 32, 64, 4, 0, 0>;
// TF32 mma.sync for few tiles: 4 warps of 32x32, 3 stages.
using Mma64x64_k32_3stage = Tiling<Tf32MmaInputs, 64, 64, 32, 32, 32, 3, 4, 8>;

// No single configuration is fastest everywhere:
//   - waves: a grid of T tiles on S SMs takes ceil(T / S) tile-times (wb::busiest_sm_time). A
//     smaller tile can finish first.
//   - the path: where rows of A or B do not start on 16-byte boundaries the copies are element-wise
//     and the thread waits for them; the cp.async ring then overlaps nothing, and the one-stage
//     step 3, with its small shared footprint, is as fast as the ring.
// So every candidate carries a measured rate per path (G multiply-adds per second per SM at full
// load; lab/best_06.py fits them), and the model says how long each would take.
struct PathRates {
    double vec16;        // rows of A and B 16-byte aligned: 16-byte copies (cp.async from sm_80)
    double elementwise;  // otherwise; 0: not fitted on this path, so never shortlisted there
};

template <class Fn>
struct BestCandidate {
    const char* name;  // as the tests and the notes call it
    Fn run;
    int bm, bn;  // the block tile: what the number of waves depends on
    int min_cc;
    int smem_bytes;
    PathRates hopper;         // sm_90 and later
    PathRates before_hopper;  // sm_70 to sm_89 (lab/README.md says where these come from)
};

template <class Cfg, class Fn>
constexpr BestCandidate<Fn> candidate(const char* name, Fn run, PathRates hopper, PathRates before_hopper) {
    return {name, run, Cfg::BM, Cfg::BN, min_cc_of<Cfg>(), Cfg::SMEM_BYTES, hopper, before_hopper};
}

// clang-format off
inline const BestCandidate<HgemmFn> kHgemmCandidates[] = {
    candidate<Wmma128x128_4warps_3stage>("wmma_128x128_4warps", launch_wmma_swizzle<Wmma128x128_4warps_3stage>,
                                         {1170, 452}, {1170, 452}),
    candidate<Wmma128x256_3stage>("wmma_128x256_swizzle", launch_wmma_swizzle<Wmma128x256_3stage>,
                                  {1079, 480}, {1079, 480}),
    candidate<Wmma128x128_padded>("wmma_smem_skewed", launch_wmma_smem_skewed<Wmma128x128_padded>,
                                  {783, 458}, {783, 458}),
    candidate<Wmma128x128_3stage>("wmma_cp_async", launch_wmma_cp_async<Wmma128x128_3stage>,
                                  {1041, 447}, {1041, 447}),
    candidate<Wmma128x128_3stage>("wmma_smem_epilogue", launch_wmma_smem_epilogue<Wmma128x128_3stage>,
                                  {1030, 440}, {1030, 440}),
    candidate<Wmma64x64_3stage>("wmma_64x64", launch_wmma_swizzle<Wmma64x64_3stage>, {604, 255}, {604, 255}),
    // Step 9's tiles, fitted on lab/calib/mma16_configs.csv (lab/README.md). The one element-wise
    // shape swept there (1000x1013x4097) gives a 128x256 grid 32 tiles for 132 SMs, too idle to
    // measure a full-load rate: those two are left out of the element-wise path.
    candidate<Mma128x256_k32_4stage>("mma_ldmatrix", launch_mma_ldmatrix<Mma128x256_k32_4stage>, {1738, 0},
                                     {1738, 0}),
    candidate<Mma16_128x256_k64_3stage>("mma_128x256_k64", launch_mma_ldmatrix<Mma16_128x256_k64_3stage>,
                                        {1570, 0}, {1570, 0}),
    candidate<Mma16_64x128_4stage>("mma_64x128", launch_mma_ldmatrix<Mma16_64x128_4stage>, {1230, 287},
                                   {1230, 287}),
};
inline const BestCandidate<SgemmFn> kTf32Candidates[] = {
    // Steps 11 and 10, 16-byte path only: on the element-wise path the copies dominate and step 8,
    // their twin there, keeps that path. Step 11 is fitted on its three 16-byte shapes of
    // results/h200/runs_cae70aa_2c4580d.csv, step 10 on those of results/h200/tune06_step10.csv
    // (lab/README.md). Their rates lie within the margin of each other, so on a shape where they
    // have the same waves (the same tile) both are shortlisted and the first call times them: the
    // fits come from different runs, and before sm_90 (rates not measured there) the order may
    // differ. Step 11's 96 KB (3 stages) fit every TF32 GPU's 99 KB or more; a GPU granting less
    // drops it (shortlist), and step 10 (70 KB) leads.
    candidate<Mma128x128_k32_3stage_swizzled>("tf32_swizzled", launch_tf32_swizzled<Mma128x128_k32_3stage_swizzled>,
                                              {712, 0}, {712, 0}),
    candidate<Mma128x128_k32_2stage>("tf32_pipelined", launch_tf32_pipelined<Mma128x128_k32_2stage>, {691, 0},
                                     {691, 0}),
    candidate<Mma128x128_k32_2stage>("tf32_mma_sync", launch_tf32_mma_sync<Mma128x128_k32_2stage>,
                                     {591, 431}, {591, 431}),
    candidate<Mma64x64_k32_3stage>("mma_64x64", launch_tf32_mma_sync<Mma64x64_k32_3stage>,
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
        const double rate = vec16 ? rates.vec16 : rates.elementwise;
        if (rate <= 0) continue;
        timed.push_back({wb::busiest_sm_time(M, N, K, c.bm, c.bn, 1, sms, rate), &c});
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

}  // namespace ch06
