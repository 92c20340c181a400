// energy.h - the energy a GPU spends on a kernel, read from NVML (the driver's management library).
//
// Speed is one measure of a kernel; energy is the other one a data centre pays for. The number
// here is the whole board's (idle power and memory included, which is what the kernel really
// costs while it runs), found as power x time: the board's mean power while the kernel runs back
// to back, times the GPU time of one call.
//
// The power comes from the board's energy counter (nvmlDeviceGetTotalEnergyConsumption,
// millijoules since the driver loaded, Volta and later). The driver does not update that counter
// continuously: it refreshes it every so often (tens of milliseconds, up to about 100 ms), so a
// reading taken at an arbitrary moment is stale by up to one refresh period. Two such readings
// around a stretch of launches are each off by up to a whole period, and the stretch also starts
// on an idle GPU whose clocks are still ramping up. So the meter:
//   - keeps the GPU busy for the whole measurement: batches of calls of about kEnergyBatchMs each,
//     kEnergyBatchesAhead of them queued at all times, a new one launched as soon as an old one
//     has finished, so the queue never drains while the counter is read;
//   - after kEnergyRampUpMs of that, polls the counter until its value changes: that poll is a
//     refresh moment (E0 at T0, host steady clock);
//   - keeps launching for at least kMinEnergyWindowMs and then waits for the next change (E1, T1).
// Both ends are refresh moments, so the refresh delay is the same at both ends and cancels:
// P = (E1 - E0) / (T1 - T0), uncertain only by the poll interval at each end. The time of one
// call is measured with CUDA events around the batches launched between T0 and T1, on the same
// busy GPU. CounterWindow and counter_watts below hold that arithmetic apart from NVML and CUDA,
// so the CPU tests can feed them a counter that refreshes like the real one.
//
// Where the board has no counter, its power draw (nvmlDeviceGetPowerUsage, milliwatts) is sampled
// every millisecond on the same busy GPU, the first kEnergyRampUpMs of samples are dropped, and
// the rest are averaged over time (sampled_watts).
//
// A counter that does not move for kEnergyStallMs is a failure (-1, the column stays empty), never
// a hang.
//
// NVML ships with the driver, not the toolkit (and the toolkit no longer carries nvml.h): the
// library is loaded at run time and its five functions are declared here as the NVML API defines
// them. No driver library, no counter, no power reading: the meter says why and the caller leaves
// the column empty.
#pragma once

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_handles.cuh"
#include "timer.cuh"

namespace wb {

// The shortest stretch between the two refresh moments. Half a second is at least five refreshes
// of the slowest counter (about 100 ms): a refresh that is delivered a few milliseconds late then
// moves the result by well under 1 %, and the few-percent wander of the board's power while clocks
// and temperature settle is averaged out.
constexpr double kMinEnergyWindowMs = 500;
// One batch of launches lasts about this long: the host tops up the queue rarely, yet a batch is
// short next to the queue, so a late top-up never lets the GPU fall idle.
constexpr double kEnergyBatchMs = 10;
// Batches queued ahead of the GPU (about 40 ms of work): more than a host hiccup lasts. Calls
// longer than a batch queue fewer (two at least: one running, one waiting), so that a call of
// seconds does not leave many seconds of work behind the measurement.
constexpr int kEnergyBatchesAhead = 4;
// The first stretch of a busy GPU is not its steady state: clocks and power ramp up. Nothing is
// read from it.
constexpr double kEnergyRampUpMs = 50;
// A counter that has not changed for this long while the GPU is busy is broken, not slow.
constexpr double kEnergyStallMs = 2000;

// Finds the measurement window in a stream of counter polls (host seconds, counter millijoules)
// fed in time order. The first poll whose value differs from the poll before it is a refresh
// moment and opens the window (E0, T0); the first change at least min_window_s later closes it
// (E1, T1). Plain arithmetic (no NVML, no CUDA), so it can be tested with a made-up counter.
class CounterWindow {
public:
    explicit CounterWindow(double min_window_s) : min_window_s_(min_window_s) {}

    // Takes one poll; true once the window is closed (later polls change nothing).
    bool add(double seconds, unsigned long long millijoules) {
        if (closed_ || failed_) return closed_;
        if (!polled_) {
            last_change_s_ = seconds;  // the first value only says where the counter stands
        } else if (millijoules < last_mj_) {
            failed_ = true;  // an energy total never goes down: a reset or a wrong device
        } else if (millijoules != last_mj_) {
            last_change_s_ = seconds;
            if (!open_) {
                open_ = true;
                t0_ = seconds;
                e0_ = millijoules;
            } else if (seconds - t0_ >= min_window_s_) {
                closed_ = true;
                t1_ = seconds;
                e1_ = millijoules;
            }
        }
        polled_ = true;
        last_mj_ = millijoules;
        last_s_ = seconds;
        return closed_;
    }

    bool open() const { return open_; }      // the first refresh was seen
    bool closed() const { return closed_; }  // the second one too: watts() is the answer
    bool failed() const { return failed_; }
    // Seconds the counter has shown the same value, up to the latest poll.
    double unchanged_s() const { return polled_ ? last_s_ - last_change_s_ : 0; }
    double window_s() const { return closed_ ? t1_ - t0_ : 0; }
    // Mean power between the two refresh moments, in watts; -1 until the window is closed.
    double watts() const {
        return closed_ && t1_ > t0_ ? double(e1_ - e0_) / 1000.0 / (t1_ - t0_) : -1;
    }

private:
    double min_window_s_;
    bool polled_ = false, open_ = false, closed_ = false, failed_ = false;
    unsigned long long last_mj_ = 0, e0_ = 0, e1_ = 0;
    double last_s_ = 0, last_change_s_ = 0, t0_ = 0, t1_ = 0;
};

// The mean power, in watts, from a whole list of counter polls (see CounterWindow); -1 when the
// list never shows two refreshes min_window_s apart.
inline double counter_watts(const std::vector<std::pair<double, unsigned long long>>& polls, double min_window_s) {
    CounterWindow window(min_window_s);
    for (const auto& [seconds, millijoules] : polls)
        if (window.add(seconds, millijoules)) break;
    return window.watts();
}

// The mean power, in watts, from power samples (host seconds, watts) in time order: the samples
// of the first ramp_up_s after the first one are dropped, the rest are integrated with
// trapezoids and divided by the time they span. -1 with fewer than two samples left.
inline double sampled_watts(const std::vector<std::pair<double, double>>& samples, double ramp_up_s) {
    if (samples.empty()) return -1;
    const double from = samples.front().first + ramp_up_s;
    double joules = 0, first = -1, last = -1;
    for (size_t i = 0; i < samples.size(); ++i) {
        if (samples[i].first < from) continue;
        if (first < 0) {
            first = samples[i].first;
        } else {
            joules += 0.5 * (samples[i].second + samples[i - 1].second) * (samples[i].first - samples[i - 1].first);
        }
        last = samples[i].first;
    }
    return last > first && first >= 0 ? joules / (last - first) : -1;
}

class EnergyMeter {
public:
    // The process's meter for the current CUDA device (NVML found and opened on first use).
    static EnergyMeter& get() {
        static EnergyMeter meter;
        return meter;
    }
    bool ready() const { return why_not_.empty(); }
    const std::string& why_not() const { return why_not_; }  // one line when not ready

    // Joules per call of `launch(stream)`: the board's mean power while the calls run back to back
    // (see the top of the file), times the GPU time of one call measured meanwhile. ms_per_call
    // (the timed median) sizes the batches. With a guard (fresh_inputs.cuh), each call gets fresh
    // inputs first, as a timed launch does: the batches then time the fills too, so the power is
    // multiplied by ms_per_call, the call's own time between its events. -1 when the meter is not
    // ready or the reading failed.
    template <class Launch>
    double joules_per_call(Launch&& launch, double ms_per_call, cudaStream_t stream, LaunchGuard* guard = nullptr) {
        if (!guard) return measure(launch, ms_per_call, stream);
        auto fresh = [&](cudaStream_t st) {
            guard->before(st);
            launch(st);
        };
        const double joules = measure(fresh, ms_per_call, stream);
        return joules > 0 ? joules / busy_ms_ * ms_per_call : -1;
    }

    EnergyMeter(const EnergyMeter&) = delete;
    EnergyMeter& operator=(const EnergyMeter&) = delete;

private:
    template <class Launch>
    double measure(Launch& launch, double ms_per_call, cudaStream_t stream) {
        if (!ready()) return -1;
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        const double ramp_up_s = kEnergyRampUpMs / 1000;
        const auto origin = std::chrono::steady_clock::now();
        auto seconds = [origin] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count();
        };
        double watts = -1, ms = -1;
        if (has_counter_) {
            CounterWindow window(kMinEnergyWindowMs / 1000);
            // The NVML call takes a moment: its middle is when the value was read.
            auto poll = [&] {
                if (seconds() < ramp_up_s) return Phase::settling;
                unsigned long long mj = 0;
                const double before = seconds();
                if (energy_(device_, &mj) != 0) return Phase::failed;
                window.add(0.5 * (before + seconds()), mj);
                if (window.failed() || window.unchanged_s() * 1000 > kEnergyStallMs) return Phase::failed;
                return window.closed() ? Phase::done : window.open() ? Phase::measuring : Phase::settling;
            };
            // A fine poll: the error at each end of the window is one poll interval.
            ms = run_busy(launch, ms_per_call, stream, poll, std::chrono::microseconds(200));
            watts = window.watts();
        } else {
            std::vector<std::pair<double, double>> samples;
            auto poll = [&] {
                const double now = seconds();
                unsigned int mw = 0;
                if (power_(device_, &mw) == 0) samples.emplace_back(now, mw / 1000.0);
                return now < ramp_up_s                                 ? Phase::settling
                       : now < ramp_up_s + kMinEnergyWindowMs / 1000 ? Phase::measuring
                                                                       : Phase::done;
            };
            ms = run_busy(launch, ms_per_call, stream, poll, std::chrono::milliseconds(1));
            watts = sampled_watts(samples, ramp_up_s);
        }
        busy_ms_ = ms;
        return watts > 0 && ms > 0 ? watts * ms / 1000 : -1;
    }

    using Device = void*;  // nvmlDevice_t: an opaque handle
    using Ret = int;       // nvmlReturn_t: 0 is NVML_SUCCESS
    Ret (*init_)() = nullptr;
    Ret (*by_bus_id_)(const char*, Device*) = nullptr;
    Ret (*energy_)(Device, unsigned long long*) = nullptr;
    Ret (*power_)(Device, unsigned int*) = nullptr;
    Device device_ = nullptr;
    bool has_counter_ = false;
    double busy_ms_ = 0;  // the GPU time per call of the last measurement's batches
    std::string why_not_;

    // What a poll says about the measurement: the GPU is still settling (nothing counts yet), the
    // window is open, it is done, or the reading failed.
    enum class Phase { settling, measuring, done, failed };

    // Keeps the GPU busy with `launch` (batches of about kEnergyBatchMs, up to kEnergyBatchesAhead
    // of them queued, one launched whenever one has finished) while a second thread calls `poll()`
    // every `every` until it says done or failed. Polling on its own thread keeps its interval
    // fine even when a launch blocks the host (a full launch queue). Returns the GPU milliseconds
    // per call of the batches launched while the poll said measuring (of the whole stretch when
    // none was: calls longer than the window), or -1 when the poll failed.
    template <class Launch, class Poll, class Interval>
    double run_busy(Launch& launch, double ms_per_call, cudaStream_t stream, Poll& poll, Interval every) {
        struct Batch {
            Event done;
            int calls;
        };
        const double call_ms = std::max(ms_per_call, 1e-4);  // a zero from a failed timing sizes nothing
        const int calls_per_batch = std::max(1, int(std::lround(kEnergyBatchMs / call_ms)));
        const double batch_ms = calls_per_batch * call_ms;
        const size_t ahead = size_t(std::clamp(int(std::ceil(kEnergyBatchesAhead * kEnergyBatchMs / batch_ms)), 2,
                                               kEnergyBatchesAhead));
        std::atomic<Phase> phase{Phase::settling};
        std::atomic<bool> stop{false};
        std::thread poller([&] {
            while (!stop.load()) {
                const Phase p = poll();
                phase.store(p);
                if (p == Phase::done || p == Phase::failed) return;
                std::this_thread::sleep_for(every);
            }
        });
        // The poller must be joined on every way out, a throwing launch included.
        struct Join {
            std::atomic<bool>& stop;
            std::thread& t;
            ~Join() {
                stop.store(true);
                if (t.joinable()) t.join();
            }
        } join{stop, poller};

        Event start;
        WB_CUDA_CHECK(cudaEventRecord(start, stream));
        std::vector<Batch> batches;
        size_t finished = 0;                     // batches known to have completed
        size_t first = SIZE_MAX, last = SIZE_MAX;  // the measured batches: [first, last)
        for (;;) {
            const Phase p = phase.load();
            if (p == Phase::measuring && first == SIZE_MAX) first = batches.size();
            if (p == Phase::done || p == Phase::failed) {
                if (first != SIZE_MAX) last = batches.size();
                break;
            }
            while (finished < batches.size()) {
                const cudaError_t q = cudaEventQuery(batches[finished].done);
                if (q == cudaErrorNotReady) {
                    // "Not yet" is an answer, not an error; clear it in case the runtime kept it as
                    // the last error, where the next launcher's own check would take it for one.
                    (void)cudaGetLastError();
                    break;
                }
                WB_CUDA_CHECK(q);
                ++finished;
            }
            if (batches.size() - finished < ahead) {
                for (int i = 0; i < calls_per_batch; ++i) launch(stream);
                batches.push_back({Event(), calls_per_batch});
                WB_CUDA_CHECK(cudaEventRecord(batches.back().done, stream));
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(100));
            }
        }
        stop.store(true);
        poller.join();
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        if (phase.load() == Phase::failed || batches.empty()) return -1;
        // The queue never drained, so a batch starts the moment the one before it ends: the
        // measured batches run from the end of the batch before them to the end of their last.
        if (first >= last) {
            first = 0;
            last = batches.size();
        }
        long long calls = 0;
        for (size_t i = first; i < last; ++i) calls += batches[i].calls;
        const cudaEvent_t from = first == 0 ? cudaEvent_t(start) : cudaEvent_t(batches[first - 1].done);
        return elapsed_ms(from, batches[last - 1].done) / double(calls);
    }

    EnergyMeter() {
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            why_not_ = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) was not found";
            return;
        }
        init_ = reinterpret_cast<Ret (*)()>(dlsym(lib, "nvmlInit_v2"));
        by_bus_id_ = reinterpret_cast<Ret (*)(const char*, Device*)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
        energy_ = reinterpret_cast<Ret (*)(Device, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
        power_ = reinterpret_cast<Ret (*)(Device, unsigned int*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
        if (!init_ || !by_bus_id_ || !energy_ || !power_) {
            why_not_ = "this NVML lacks the energy or power functions (driver too old)";
            return;
        }
        if (init_() != 0) {
            why_not_ = "NVML did not initialize (no permission, or a driver/library mismatch)";
            return;
        }
        // NVML numbers the GPUs its own way: the PCI bus id names the device CUDA is using.
        int dev = 0;
        char bus[32] = {};
        if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess ||
            by_bus_id_(bus, &device_) != 0) {
            why_not_ = "NVML does not know the CUDA device";
            return;
        }
        unsigned long long mj = 0;
        unsigned int mw = 0;
        has_counter_ = energy_(device_, &mj) == 0;
        if (!has_counter_ && power_(device_, &mw) != 0)
            why_not_ = "this GPU reports neither an energy counter nor its power draw through NVML";
    }
};

}  // namespace wb
