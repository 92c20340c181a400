// timer.cuh - timing GPU work with CUDA events.
//
// Launches are asynchronous: a host clock read right after a launch measures only the launch.
// Events are recorded into the stream around the work and read after it finished, so they time
// the GPU itself. We warm up first (module load, cuBLAS heuristics, clocks ramping up), then time
// each launch between its own pair of events and report the median (robust to a stray slow run)
// and the minimum.
// A variant compared with a baseline is timed in rounds alternating with it (time_paired), more
// rounds for a short call (paired_more_rounds).
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

namespace detail {
// Appends the GPU times of `n` launches to `ms`. The launches are queued back to back, each between
// two events, and read once at the end; one untimed launch goes first. So each pair of events
// brackets the GPU's own work: were the host to wait after every launch, the GPU would sit idle
// while the next launch is submitted, and those few microseconds would land inside the next
// measurement (a tenth of a 1024^3 FP16 GEMM).
template <class Launch>
void time_each(Launch& launch, int n, cudaStream_t stream, std::vector<float>& ms) {
    if (n <= 0) return;
    std::vector<Event> marks(n + 1);
    launch(stream);
    WB_CUDA_CHECK(cudaEventRecord(marks[0], stream));
    for (int i = 0; i < n; ++i) {
        launch(stream);
        WB_CUDA_CHECK(cudaEventRecord(marks[i + 1], stream));
    }
    WB_CUDA_CHECK(cudaEventSynchronize(marks[n]));
    for (int i = 0; i < n; ++i) ms.push_back(float(elapsed_ms(marks[i], marks[i + 1])));
}
}  // namespace detail

// Times `launch(stream)`: `warmup` untimed calls, then `reps` calls each between its own pair of
// events. Any CUDA error during the runs throws wb::CudaError.
template <class Launch>
Timing time_launches(Launch&& launch, int warmup, int reps, cudaStream_t stream) {
    std::vector<float> ms;
    for (int i = 0; i < warmup; ++i) launch(stream);
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    detail::time_each(launch, reps, stream, ms);
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
template <class Baseline, class Variant, class InWindow>
PairedTiming time_paired(Baseline&& baseline, Variant&& variant, int warmup, int reps, cudaStream_t stream,
                         InWindow&& in_window) {
    for (int i = 0; i < warmup; ++i) baseline(stream);
    WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    in_window([&] {
        for (int i = 0; i < warmup; ++i) variant(stream);
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
    });
    std::vector<float> probe;
    detail::time_each(baseline, 3, stream, probe);
    PairedTiming t;
    t.rounds = paired_rounds(reps);
    t.per_round = paired_per_round(reps, summarize(probe).ms_median);
    std::vector<float> base_ms, var_ms;
    std::vector<float> ratios;
    double total_ms = 0;  // the timed launches of both sides so far
    for (int r = 0; r < t.rounds; ++r) {
        std::vector<float> b, v;
        auto time_base = [&] { detail::time_each(baseline, t.per_round, stream, b); };
        auto time_var = [&] { in_window([&] { detail::time_each(variant, t.per_round, stream, v); }); };
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
