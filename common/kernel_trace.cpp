// kernel_trace.cpp - see kernel_trace.h.
#include "kernel_trace.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "options.h"  // kExitBadInput

#if __has_include(<cupti_activity.h>)
#include <cupti_activity.h>
#define WB_HAVE_CUPTI_HEADERS 1
#else
#define WB_HAVE_CUPTI_HEADERS 0
#endif

namespace wb {

namespace {

[[noreturn]] void trace_fail(const std::string& why) {
    std::fprintf(stderr, "error: WB_KERNEL_TRACE is set but the kernels cannot be traced: %s\n", why.c_str());
    std::exit(kExitBadInput);
}

#if WB_HAVE_CUPTI_HEADERS
// Records of this CUPTI version's layout; the fields read here sit at the same place in every
// version since CUDA 11 (later versions append fields).
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
#else
using KernelRecord = CUpti_ActivityKernel9;
#endif

struct Cupti {
    CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
    CUptiResult (*flush_all)(uint32_t) = nullptr;
    CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
    CUptiResult (*timestamp)(uint64_t*) = nullptr;
};

struct Kernel {
    std::string name;
    uint64_t start;
    int static_smem, dynamic_smem, registers, block;
    long long grid;
};

struct Span {
    std::string label;
    uint64_t begin, end;
};

struct State {
    Cupti api;
    std::string path;
    std::mutex lock;  // CUPTI hands completed buffers over from its own thread
    std::vector<Kernel> kernels;
    std::vector<Span> windows;
    uint64_t open_at = 0;
    std::string open_label;
    bool written = false;
};

State& state() {
    static State s;
    return s;
}

constexpr size_t kBufferBytes = 4 << 20;
constexpr size_t kBufferAlign = 8;  // CUPTI wants record buffers 8-byte aligned

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(kBufferAlign, kBufferBytes));
    *size = kBufferBytes;
    *max_records = 0;  // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    State& s = state();
    CUpti_Activity* record = nullptr;
    std::lock_guard<std::mutex> guard(s.lock);
    while (s.api.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
        if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
        const auto* k = reinterpret_cast<const KernelRecord*>(record);
        s.kernels.push_back({k->name ? k->name : "?", k->start, k->staticSharedMemory, k->dynamicSharedMemory,
                             k->registersPerThread, k->blockX * k->blockY * k->blockZ,
                             (long long)k->gridX * k->gridY * k->gridZ});
    }
    std::free(buffer);
}

void* open_cupti() {
    std::vector<std::string> candidates;
    if (const char* lib = std::getenv("WB_CUPTI_LIB")) candidates.push_back(lib);
    candidates.insert(candidates.end(), {"libcupti.so", "libcupti.so.13", "libcupti.so.12"});
    const char* roots[] = {std::getenv("CUDA_PATH"), "/usr/local/cuda"};
    for (const char* root : roots) {
        if (!root) continue;
        candidates.push_back(std::string(root) + "/extras/CUPTI/lib64/libcupti.so");
        candidates.push_back(std::string(root) + "/lib64/libcupti.so");
    }
    for (const std::string& c : candidates)
        if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    return nullptr;
}

template <class F>
void bind(void* lib, const char* name, F& fn) {
    fn = reinterpret_cast<F>(dlsym(lib, name));
    if (!fn) trace_fail(std::string("libcupti has no ") + name);
}

uint64_t now(State& s) {
    uint64_t t = 0;
    s.api.timestamp(&t);
    return t;
}

void write_at_exit() { KernelTrace::get().write(); }
#endif

}  // namespace

KernelTrace& KernelTrace::get() {
    static KernelTrace trace;
    return trace;
}

KernelTrace::KernelTrace() {
    const char* path = std::getenv("WB_KERNEL_TRACE");
    if (!path || !*path) return;
#if WB_HAVE_CUPTI_HEADERS
    State& s = state();
    s.path = path;
    void* lib = open_cupti();
    if (!lib) trace_fail("libcupti.so was not found (set WB_CUPTI_LIB to its path; it ships with the CUDA toolkit)");
    bind(lib, "cuptiActivityEnable", s.api.enable);
    bind(lib, "cuptiActivityRegisterCallbacks", s.api.register_callbacks);
    bind(lib, "cuptiActivityFlushAll", s.api.flush_all);
    bind(lib, "cuptiActivityGetNextRecord", s.api.next_record);
    bind(lib, "cuptiGetTimestamp", s.api.timestamp);
    if (s.api.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
        s.api.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS)
        trace_fail("CUPTI refused to record kernel activity (is another profiler attached?)");
    active_ = true;
    std::atexit(write_at_exit);
#else
    trace_fail("this build has no CUPTI headers (cupti_activity.h was not found when common/ was compiled)");
#endif
}

KernelTrace::Window::Window(const std::string& label) {
#if WB_HAVE_CUPTI_HEADERS
    if (!KernelTrace::get().active()) return;
    State& s = state();
    cudaDeviceSynchronize();
    s.open_label = label;
    s.open_at = now(s);
    open_ = true;
#else
    (void)label;
#endif
}

KernelTrace::Window::~Window() {
#if WB_HAVE_CUPTI_HEADERS
    if (!open_) return;
    State& s = state();
    cudaDeviceSynchronize();
    std::lock_guard<std::mutex> guard(s.lock);
    s.windows.push_back({s.open_label, s.open_at, now(s)});
#endif
}

void KernelTrace::write() {
#if WB_HAVE_CUPTI_HEADERS
    State& s = state();
    if (!active_ || s.written) return;
    s.written = true;
    cudaDeviceSynchronize();
    s.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    std::lock_guard<std::mutex> guard(s.lock);
    // (label, kernel) -> launches, with the resources of the first launch.
    std::map<std::tuple<std::string, std::string>, std::pair<int, Kernel>> seen;
    std::vector<std::tuple<std::string, std::string>> order;
    for (const Kernel& k : s.kernels) {
        // The timing's own kernels (fresh inputs, checks, the hold: namespace wb::fresh) run inside
        // a variant's window between its launches; they are the harness's, not the variant's.
        if (k.name.rfind("_ZN2wb5fresh", 0) == 0) continue;
        for (const Span& w : s.windows)
            if (k.start >= w.begin && k.start <= w.end) {
                auto key = std::make_tuple(w.label, k.name);
                auto it = seen.find(key);
                if (it == seen.end()) {
                    seen.emplace(key, std::make_pair(1, k));
                    order.push_back(key);
                } else {
                    ++it->second.first;
                }
                break;
            }
    }
    FILE* f = std::fopen(s.path.c_str(), "a");
    if (!f) {
        std::fprintf(stderr, "error: cannot append to WB_KERNEL_TRACE file %s\n", s.path.c_str());
        std::_Exit(kExitBadInput);
    }
    // Windows in which nothing ran are written too (kernel "-"): "launched nothing" is an answer.
    for (const Span& w : s.windows) {
        bool any = false;
        for (const auto& key : order) any = any || std::get<0>(key) == w.label;
        if (!any) std::fprintf(f, "%s\t-\t0\t0\t0\t0\t0\t0\n", w.label.c_str());
    }
    for (const auto& key : order) {
        const auto& [count, k] = seen.at(key);
        std::fprintf(f, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%lld\n", std::get<0>(key).c_str(), k.name.c_str(), count,
                     k.static_smem, k.dynamic_smem, k.registers, k.block, k.grid);
    }
    std::fclose(f);
#endif
}

}  // namespace wb
