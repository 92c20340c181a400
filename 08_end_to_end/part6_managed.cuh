// part6_managed.cuh - part 6: unified (managed) memory against explicit copies, on one large product.
//
// cudaMallocManaged returns one pointer that the CPU and the GPU may both use. The pages live in
// one place at a time; when the other processor touches a page that is not there, it faults, the
// driver moves the page (on Linux with a GPU that supports concurrent managed access), and the
// access goes on. Correct without a single copy in the code, but each fault is a round trip
// through the driver: a kernel that faults on every page waits on the link far longer than a bulk
// copy of the same bytes would take. Two hints remove the faults:
//   cudaMemPrefetchAsync(ptr, bytes, location, ...)  move the pages now, in bulk, on a stream
//   cudaMemAdvise(ptr, bytes, advice, location)      what the pages are for: ReadMostly (copies
//        may exist on both sides, so the CPU can still read A after the GPU did), PreferredLocation
//
// Every scenario starts from fresh allocations, so the first GEMM sees pages that were never on
// the GPU (or were created there). Times are CUDA events for GPU work and the host clock for CPU
// work (a CPU read of C that faults the pages back).
#pragma once

#include <string>
#include <vector>

#include "cuda_handles.cuh"
#include "kernels.cuh"
#include "products.cuh"

namespace ch08 {

// The two hint calls, written for the CUDA 13 interface (a cudaMemLocation) and the older one
// (a device number, cudaCpuDeviceId for the host).
inline void prefetch(const void* p, size_t bytes, bool to_gpu, int dev, cudaStream_t stream) {
#if CUDART_VERSION >= 13000
    cudaMemLocation loc{};
    loc.type = to_gpu ? cudaMemLocationTypeDevice : cudaMemLocationTypeHost;
    loc.id = to_gpu ? dev : 0;
    WB_CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, loc, 0, stream));
#else
    WB_CUDA_CHECK(cudaMemPrefetchAsync(p, bytes, to_gpu ? dev : cudaCpuDeviceId, stream));
#endif
}
inline void advise(const void* p, size_t bytes, cudaMemoryAdvise advice, int dev) {
#if CUDART_VERSION >= 13000
    cudaMemLocation loc{};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = dev;
    WB_CUDA_CHECK(cudaMemAdvise(p, bytes, advice, loc));
#else
    WB_CUDA_CHECK(cudaMemAdvise(p, bytes, advice, dev));
#endif
}

struct ManagedRow {
    std::string scenario;
    double setup_ms = -1;        // copies in (explicit) or prefetch (managed); -1: none
    double first_gemm_ms = -1;   // the first GEMM on fresh memory, faults included
    double second_gemm_ms = -1;  // the same GEMM again, everything resident
    double c_to_cpu_ms = -1;     // C readable by the CPU and summed (copy + sum, or faults + sum)
    double cpu_reads_a_ms = -1;  // the CPU sums A after the GPU used it (-1: not measured)
    std::string status;          // PASS / FAIL against the reference, or skipped (...)
    bool same_as_explicit = false;
};

struct ManagedResult {
    wb::Shape shape;
    bool concurrent = false;  // cudaDevAttrConcurrentManagedAccess: GPU page faults and prefetch
    std::vector<ManagedRow> rows;
};

// Sums a host-readable array (the CPU touches every page; the sum keeps the compiler honest).
inline double host_sum(const float* p, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += p[i];
    return s;
}

inline ManagedResult measure_managed(wb::Shape s, uint64_t seed) {
    ManagedResult res;
    res.shape = s;
    int dev = 0, concurrent = 0, managed = 0;
    WB_CUDA_CHECK(cudaGetDevice(&dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, dev));
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev));
    res.concurrent = concurrent != 0;

    Matrices host(s, Memory::pinned, seed, true);  // the data as the program has it
    Lane lane;
    cudaStream_t st = lane.stream();
    const wb::Event start, stop;
    auto gpu_ms = [&](auto&& work) {
        WB_CUDA_CHECK(cudaEventRecord(start, st));
        work();
        WB_CUDA_CHECK(cudaEventRecord(stop, st));
        WB_CUDA_CHECK(cudaEventSynchronize(stop));
        return wb::elapsed_ms(start, stop);
    };
    auto host_ms = [&](auto&& work) {
        const Clock::time_point t0 = Clock::now();
        work();
        return ms_since(t0);
    };
    auto gemm = [&](Matrices& m) { lane.sgemm_rows(0, s.m, s.n, s.k, m.A.get(), m.B.get(), m.C.get()); };
    const ProductReference ref(s, host.A.get(), host.B.get(), seed);
    std::vector<float> explicit_c;
    volatile double sink = 0;

    {  // explicit: device memory, copies from and to pinned host memory
        ManagedRow r;
        r.scenario = "explicit_copies";
        Matrices d(s, Memory::device, seed, false);
        r.setup_ms = gpu_ms([&] {
            WB_CUDA_CHECK(cudaMemcpyAsync(d.A.get(), host.A.get(), d.A.bytes(), cudaMemcpyHostToDevice, st));
            WB_CUDA_CHECK(cudaMemcpyAsync(d.B.get(), host.B.get(), d.B.bytes(), cudaMemcpyHostToDevice, st));
        });
        poison_device(d.C.get(), d.C.size(), st);
        r.first_gemm_ms = gpu_ms([&] { gemm(d); });
        r.second_gemm_ms = gpu_ms([&] { gemm(d); });
        explicit_c.resize(d.C.size());
        r.c_to_cpu_ms = host_ms([&] {
            WB_CUDA_CHECK(cudaMemcpyAsync(explicit_c.data(), d.C.get(), d.C.bytes(), cudaMemcpyDeviceToHost, st));
            WB_CUDA_CHECK(cudaStreamSynchronize(st));
            sink = sink + host_sum(explicit_c.data(), explicit_c.size());
        });
        r.status = ref.check(explicit_c.data()).pass ? "PASS" : "FAIL";
        r.same_as_explicit = true;
        res.rows.push_back(r);
    }
    // The managed scenarios: how A and B got their values, and which hints were given.
    enum class Start { gpu_writes, cpu_writes };
    struct Scenario {
        const char* name;
        Start start;
        bool prefetch, read_mostly;
    };
    const Scenario scenarios[] = {
        {"managed_gpu_first_touch", Start::gpu_writes, false, false},
        {"managed_cpu_written", Start::cpu_writes, false, false},
        {"managed_prefetch", Start::cpu_writes, true, false},
        {"managed_advise_prefetch", Start::cpu_writes, true, true},
    };
    for (const Scenario& sc : scenarios) {
        ManagedRow r;
        r.scenario = sc.name;
        if (!managed || (sc.prefetch && !concurrent)) {
            r.status = !managed ? "skipped (no managed memory on this device)"
                                : "skipped (no concurrent managed access: no GPU page faults or prefetch here)";
            res.rows.push_back(r);
            continue;
        }
        Matrices m(s, Memory::managed, seed, false);
        if (sc.start == Start::cpu_writes) {
            std::memcpy(m.A.get(), host.A.get(), m.A.bytes());  // the CPU touches the pages first
            std::memcpy(m.B.get(), host.B.get(), m.B.bytes());
        } else {
            Matrices staged(s, Memory::device, seed, false);  // the GPU touches the pages first
            WB_CUDA_CHECK(cudaMemcpy(staged.A.get(), host.A.get(), staged.A.bytes(), cudaMemcpyHostToDevice));
            WB_CUDA_CHECK(cudaMemcpy(staged.B.get(), host.B.get(), staged.B.bytes(), cudaMemcpyHostToDevice));
            copy_on_gpu(m.A.get(), staged.A.get(), m.A.size(), st);
            copy_on_gpu(m.B.get(), staged.B.get(), m.B.size(), st);
            WB_CUDA_CHECK(cudaStreamSynchronize(st));
        }
        if (sc.read_mostly) {
            advise(m.A.get(), m.A.bytes(), cudaMemAdviseSetReadMostly, dev);
            advise(m.B.get(), m.B.bytes(), cudaMemAdviseSetReadMostly, dev);
            advise(m.C.get(), m.C.bytes(), cudaMemAdviseSetPreferredLocation, dev);
        }
        if (sc.prefetch)
            r.setup_ms = gpu_ms([&] {
                prefetch(m.A.get(), m.A.bytes(), true, dev, st);
                prefetch(m.B.get(), m.B.bytes(), true, dev, st);
                prefetch(m.C.get(), m.C.bytes(), true, dev, st);
            });
        r.first_gemm_ms = gpu_ms([&] { gemm(m); });
        r.second_gemm_ms = gpu_ms([&] { gemm(m); });
        r.c_to_cpu_ms = host_ms([&] {
            if (sc.prefetch) {
                prefetch(m.C.get(), m.C.bytes(), false, dev, st);
                WB_CUDA_CHECK(cudaStreamSynchronize(st));
            }
            sink = sink + host_sum(m.C.get(), m.C.size());  // faults the pages not yet here
        });
        r.cpu_reads_a_ms = host_ms([&] { sink = sink + host_sum(m.A.get(), m.A.size()); });
        r.status = ref.check(m.C.get()).pass ? "PASS" : "FAIL";
        r.same_as_explicit = same_bits(m.C.get(), explicit_c.data(), explicit_c.size());
        res.rows.push_back(r);
    }
    return res;
}

}  // namespace ch08
