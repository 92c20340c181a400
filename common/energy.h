// energy.h - the energy a GPU spends on a kernel, read from NVML (the driver's management library).
//
// Speed is one measure of a kernel; energy is the other one a data centre pays for. The board's
// energy counter (nvmlDeviceGetTotalEnergyConsumption, millijoules since the driver loaded,
// Volta and later) is read before and after a stretch of launches; where the board has no counter,
// its power draw (nvmlDeviceGetPowerUsage, milliwatts) is sampled while the launches run and
// integrated over time. Either number is the whole board's: idle power and memory included, which
// is what the kernel really costs while it runs.
//
// The counter ticks in coarse steps (and a power reading is an average over tens of milliseconds),
// so the launches are repeated until they take at least kMinEnergyWindowMs.
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
#include <string>
#include <thread>
#include <vector>

#include "cuda_check.cuh"

namespace wb {

constexpr double kMinEnergyWindowMs = 200;

class EnergyMeter {
public:
    // The process's meter for the current CUDA device (NVML found and opened on first use).
    static EnergyMeter& get() {
        static EnergyMeter meter;
        return meter;
    }
    bool ready() const { return why_not_.empty(); }
    const std::string& why_not() const { return why_not_; }  // one line when not ready

    // Joules per call of `launch(stream)`, from ceil(kMinEnergyWindowMs / ms_per_call) calls (at
    // least 1); -1 when the meter is not ready or the reading failed.
    template <class Launch>
    double joules_per_call(Launch&& launch, double ms_per_call, cudaStream_t stream) {
        if (!ready()) return -1;
        const int calls = std::max(1, int(std::ceil(kMinEnergyWindowMs / std::max(ms_per_call, 1e-3))));
        WB_CUDA_CHECK(cudaStreamSynchronize(stream));
        double joules = -1;
        if (has_counter_) {
            unsigned long long before = 0, after = 0;
            if (energy_(device_, &before) != 0) return -1;
            for (int i = 0; i < calls; ++i) launch(stream);
            WB_CUDA_CHECK(cudaStreamSynchronize(stream));
            if (energy_(device_, &after) != 0 || after < before) return -1;
            joules = double(after - before) / 1000.0;
        } else {
            joules = sampled_joules([&] {
                for (int i = 0; i < calls; ++i) launch(stream);
                WB_CUDA_CHECK(cudaStreamSynchronize(stream));
            });
        }
        return joules > 0 ? joules / calls : -1;
    }

    EnergyMeter(const EnergyMeter&) = delete;
    EnergyMeter& operator=(const EnergyMeter&) = delete;

private:
    using Device = void*;  // nvmlDevice_t: an opaque handle
    using Ret = int;       // nvmlReturn_t: 0 is NVML_SUCCESS
    Ret (*init_)() = nullptr;
    Ret (*by_bus_id_)(const char*, Device*) = nullptr;
    Ret (*energy_)(Device, unsigned long long*) = nullptr;
    Ret (*power_)(Device, unsigned int*) = nullptr;
    Device device_ = nullptr;
    bool has_counter_ = false;
    std::string why_not_;

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

    // Integrates the board's power over the time `work` runs, sampled every millisecond on a
    // second thread (trapezoids between samples; the ends at the first and last sample).
    template <class Work>
    double sampled_joules(Work&& work) {
        std::atomic<bool> done{false};
        std::vector<std::pair<double, double>> samples;  // (seconds, watts)
        const auto t0 = std::chrono::steady_clock::now();
        std::thread sampler([&] {
            while (!done.load()) {
                unsigned int mw = 0;
                if (power_(device_, &mw) == 0)
                    samples.emplace_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
                                         mw / 1000.0);
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
        });
        try {
            work();
        } catch (...) {
            done = true;
            sampler.join();
            throw;
        }
        done = true;
        sampler.join();
        double joules = 0;
        for (size_t i = 1; i < samples.size(); ++i)
            joules += 0.5 * (samples[i].second + samples[i - 1].second) * (samples[i].first - samples[i - 1].first);
        return samples.size() > 1 ? joules : -1;
    }
};

}  // namespace wb
