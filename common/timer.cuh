// timer.cuh - timing GPU work with CUDA events.
//
// Launches are asynchronous: a host clock read right after a launch measures only the launch.
// Events are recorded into the stream around the work and read after it finished, so they time
// the GPU itself. We warm up first (module load, cuBLAS heuristics, clocks ramping up), then time
// each launch between its own pair of events and report the median (robust to a stray slow run)
// and the minimum.
// A variant compared with a baseline is timed in rounds alternating with it (time_paired), more
// rounds for a short call (paired_more_rounds). A GEMM is timed with a LaunchGuard: fresh inputs
// before every launch and a check after it (fresh_inputs.cuh).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_handles.cuh"

namespace wb {

struct Timing {
    double ms_median = 0;
    double ms_min = 0;
    std::vector<float> ms_all;  // in launch order
};

// Median and minimum of a list of times (the median of an even count is the mean of the middle two).
inline Timing summarize(std::vector<float> ms) {
    Timing t;
    t.ms_all = ms;
    if (ms.empty()) return t;
    std::sort(ms.begin(), ms.end());
    const size_t n = ms.size();
    t.ms_median = n % 2 ? ms[n / 2] : 0.5 * (double(ms[n / 2 - 1]) + ms[n / 2]);
    t.ms_min = ms.front();
    return t;
}

// What runs around each timed launch, outside its events. For a GEMM that is FreshInputs
// (fresh_inputs.cuh): new inputs before every launch and a check of its result after it, so that
// no launch can be served from earlier work. Timings of other things (a copy, a graph, a ceiling
// loop) run without one.
class LaunchGuard {
public:
    virtual ~LaunchGuard() = default;
    // Called once before a batch of `launches` launches is queued (not between them).
    virtual void batch(int launches, cudaStream_t stream) = 0;
    virtual void before(cudaStream_t stream) = 0;
    // `side` tells the two sides of a paired timing apart: 0 the variant, 1 the baseline.
    virtual void after(cudaStream_t stream, int side) = 0;
};
constexpr int kVariantSide = 0, kBaselineSide = 1;

namespace detail {
// One launch with its guard's work around it (none without a guard).
template <class Launch>
void guarded(Launch& launch, cudaStream_t stream, LaunchGuard* guard, int side, cudaEvent_t start = nullptr,
             cudaEvent_t stop = nullptr) {
    if (guard) guard->before(stream);
    if (start) WB_CUDA_CHECK(cudaEventRecord(start, stream));
    launch(stream);
    if (stop) WB_CUDA_CHECK(cudaEventRecord(stop, stream));
    if (guard) guard->after(stream, side);
}

// Appends the GPU times of `n` launches to `ms`. The launches are queued back to back, each between
// its own two events, and read once at the end; one untimed launch goes first. So each pair of
// events brackets the GPU's own work: were the host to wait after every launch, the GPU would sit
// idle while the next launch is submitted, and those few microseconds would land inside the next
// measurement (a tenth of a 1024^3 FP16 GEMM). A guard's work (a fill, a check) runs between the
// pairs, never inside one.
template <class Launch>
void time_each(Launch& launch, int n, cudaStream_t stream, std::vector<float>& ms, LaunchGuard* guard = nullptr,
               int side = kVariantSide) {
    if (n <= 0) return;
    if (guard) guard->batch(n + 1, stream);
    std::vector<Event> starts(n), stops(n);
    guarded(launch, stream, guard, side);
    for (int i = 0; i < n; ++i) guarded(launch, stream, guard, side, starts[i], stops[i]);
    WB_CUDA_CHECK(cudaEventSynchronize(stops[n - 1]));
    for (int i = 0; i < n; ++i) ms.push_back(float(elapsed_ms(starts[i], stops[i])));
}

// `n` untimed launches (warm-ups), each with its guard's work.
template <class Launch>
void warm_up(Launch& launch, int n, cudaStream_t stream, LaunchGuard* guard, int side) {
    if (n <= 0) return;
    if (guard) guard->batch(n, stream);
    for (int i = 0; i < n; ++i) guarded(launch, stream, guard, side);
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
}
}  // namespace detail

// Times `launch(stream)`: `warmup` untimed calls, then `reps` calls each between its own pair of
// events; with a guard, each call (warm-ups too) gets its work around it. Any CUDA error during
// the runs throws wb::CudaError.
template <class Launch>
Timing time_launches(Launch&& launch, int warmup, int reps, cudaStream_t stream, LaunchGuard* guard = nullptr) {
    std::vector<float> ms;
    detail::warm_up(launch, warmup, stream, guard, kVariantSide);
    detail::time_each(launch, reps, stream, ms, guard);
    return summarize(std::move(ms));
}

// A variant timed against its baseline in the same stretch of time.
struct PairedTiming {
    Timing variant;   // every timed launch of the variant
    Timing baseline;  // every timed launch of the baseline, from the same rounds
    double ratio = 0; // median over the rounds of (baseline's median / variant's median) in that round
    int rounds = 0;   // paired_rounds(reps), plus the ones paired_more_rounds added
    int per_round = 0;  // timed launches of each side per round
};

// The GPU's clock follows its power and temperature, so a baseline timed once at the start and a
// variant timed a minute later can differ by 10% with identical code. Timing them in alternating
// rounds (A B, B A, A B, ...) puts both under the same clock, and the median of the per-round
// ratios ignores a round that a clock change cut in two. An even number of rounds gives each
// order as often as the other: whatever the side timed second gains (a clock that has ramped up)
// cannot lean the ratio one way.
constexpr int kPairedRounds = 6;
// The ratio is the median of the rounds' ratios. For a short call the six rounds last a few ms each,
// a few tens of ms in all: too little time to average out the clock's own wander, and two runs of
// the same pair can read a few percent apart. So a short call gets two more rounds at a time (one of
// each order: the count stays even) while both sides together have run less than kMinPairedMs of
// timed launches, up to kMaxPairedRounds in all. A long call passes kMinPairedMs within its first
// rounds and keeps kPairedRounds; so does a short baseline (kMinRoundMs per round) beside a variant
// three or more times slower than it: 6 x (2 + 6) ms = 48 ms.
constexpr double kMinPairedMs = 48.0;
constexpr int kMaxPairedRounds = 16;
// A round of a short call would be a few tens of microseconds, where the time the GPU takes to
// come back from idle between two sides is as large as a difference worth measuring: each side
// runs for at least this long per round (more launches of a short call), at most kMaxPerRound.
constexpr double kMinRoundMs = 2.0;
constexpr int kMaxPerRound = 1000;

// The rounds time_paired runs first for `reps` timed calls: min(reps, kPairedRounds), at least 1.
inline int paired_rounds(int reps) { return std::max(1, std::min(reps, kPairedRounds)); }

// Whether time_paired, after `rounds` rounds whose timed launches (both sides) took `total_ms`,
// runs two more. An odd count (fewer reps than kPairedRounds) stays as it is: two more would not
// even out the orders.
inline bool paired_more_rounds(int rounds, double total_ms) {
    return rounds % 2 == 0 && rounds + 2 <= kMaxPairedRounds && total_ms < kMinPairedMs;
}

// Timed launches of each side per round: enough that each side gets >= reps in all, and that a
// round lasts >= kMinRoundMs for a call of `call_ms` (at most kMaxPerRound, unless reps needs more).
inline int paired_per_round(int reps, double call_ms) {
    const int rounds = paired_rounds(reps);
    const int for_reps = std::max(1, (reps + rounds - 1) / rounds);
    const int for_time = call_ms > 0 ? int(std::min<double>(kMaxPerRound, std::ceil(kMinRoundMs / call_ms))) : 1;
    return std::max(for_reps, for_time);
}

// Times `variant` against `baseline`: `warmup` untimed calls of each, three timed calls of the
// baseline that size the rounds (paired_per_round), then paired_rounds(reps) rounds in alternating
// order, and two more at a time while paired_more_rounds says so. `in_window(f)` runs f, the
// variant's launches only (e.g. inside a kernel trace window); the baseline's launches run outside it.
// The guard (both sides share the operands) works around every launch of both, tagged by side.
template <class Baseline, class Variant, class InWindow>
PairedTiming time_paired(Baseline&& baseline, Variant&& variant, int warmup, int reps, cudaStream_t stream,
                         InWindow&& in_window, LaunchGuard* guard = nullptr) {
    detail::warm_up(baseline, warmup, stream, guard, kBaselineSide);
    in_window([&] { detail::warm_up(variant, warmup, stream, guard, kVariantSide); });
    std::vector<float> probe;
    detail::time_each(baseline, 3, stream, probe, guard, kBaselineSide);
    PairedTiming t;
    t.rounds = paired_rounds(reps);
    t.per_round = paired_per_round(reps, summarize(probe).ms_median);
    std::vector<float> base_ms, var_ms;
    std::vector<float> ratios;
    double total_ms = 0;  // the timed launches of both sides so far
    for (int r = 0; r < t.rounds; ++r) {
        std::vector<float> b, v;
        auto time_base = [&] { detail::time_each(baseline, t.per_round, stream, b, guard, kBaselineSide); };
        auto time_var = [&] { in_window([&] { detail::time_each(variant, t.per_round, stream, v, guard); }); };
        if (r % 2 == 0) {
            time_base();
            time_var();
        } else {
            time_var();
            time_base();
        }
        const double vm = summarize(v).ms_median;
        ratios.push_back(vm > 0 ? float(summarize(b).ms_median / vm) : 0.0f);
        base_ms.insert(base_ms.end(), b.begin(), b.end());
        var_ms.insert(var_ms.end(), v.begin(), v.end());
        for (float ms : b) total_ms += ms;
        for (float ms : v) total_ms += ms;
        // After the last round, two more where the rule asks: t.rounds grows, the loop goes on.
        if (r + 1 == t.rounds && paired_more_rounds(t.rounds, total_ms)) t.rounds += 2;
    }
    t.variant = summarize(std::move(var_ms));
    t.baseline = summarize(std::move(base_ms));
    t.ratio = summarize(std::move(ratios)).ms_median;
    return t;
}

}  // namespace wb
