// pipeline_parts.cuh - the pieces a whole GPU program is built from once copies count: pinned
// host buffers, the split of a matrix into row panels, and a timeline of CUDA events per stream.
//
// Nothing here is a GEMM. The panel split and the timeline checks are plain host code, so the
// tests run them on machines without a GPU.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"

namespace e2e {

// An allocation that failed: a size the machine cannot give (device, pinned or managed memory).
// The program turns it into one line on stderr and exit status 2, like any other bad input.
class AllocError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

inline std::string mib_text(size_t bytes) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / (1 << 20));
    return buf;
}

// What kind of memory a Buffer holds.
enum class Memory { device, pinned, managed };
inline const char* to_string(Memory m) {
    return m == Memory::device ? "device" : m == Memory::pinned ? "pinned host" : "managed";
}

// One allocation of `count` T, freed by the destructor.
//   device   cudaMalloc: GPU memory only.
//   pinned   cudaMallocHost: page-locked host memory. The copy engines read and write it directly
//            (DMA), so copies reach the link's rate and may run asynchronously; pageable memory
//            (a std::vector) is first copied by the CPU into a pinned staging buffer.
//   managed  cudaMallocManaged: one address valid on the CPU and the GPU; pages move to whoever
//            touches them (on a page fault) or where they are sent (cudaMemPrefetchAsync).
// A failed allocation throws AllocError naming the size and the kind, never a crash later.
template <class T>
class Buffer {
public:
    Buffer() = default;
    Buffer(size_t count, Memory kind) : count_(count), kind_(kind) {
        const size_t bytes = count * sizeof(T);
        void* p = nullptr;
        cudaError_t err = kind == Memory::device   ? cudaMalloc(&p, bytes)
                          : kind == Memory::pinned ? cudaMallocHost(&p, bytes)
                                                   : cudaMallocManaged(&p, bytes, cudaMemAttachGlobal);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();  // an allocation failure is not sticky: clear it and go on
            throw AllocError(std::string(to_string(kind)) + " allocation of " + mib_text(bytes) +
                             " failed: " + cudaGetErrorString(err));
        }
        ptr_ = static_cast<T*>(p);
    }
    ~Buffer() { release(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { *this = std::move(o); }
    Buffer& operator=(Buffer&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(count_, o.count_);
        std::swap(kind_, o.kind_);
        return *this;
    }
    T* get() const { return ptr_; }
    size_t size() const { return count_; }
    size_t bytes() const { return count_ * sizeof(T); }

private:
    void release() {
        if (!ptr_) return;
        if (kind_ == Memory::pinned)
            cudaFreeHost(ptr_);
        else
            cudaFree(ptr_);
        ptr_ = nullptr;
    }
    T* ptr_ = nullptr;
    size_t count_ = 0;
    Memory kind_ = Memory::device;
};

// ---- the panel split ---------------------------------------------------------------------------
// C = A * B row panel by row panel: rows [row0, row0 + rows) of C need the same rows of A and all
// of B. So a product can be copied in, computed and copied out panel by panel, and the copies of
// one panel overlap the GEMM of another.
struct Panel {
    int row0 = 0;
    int rows = 0;
};

// `panels` panels over M rows, as even as possible: the first M % p panels get one row more.
// Any M works (p need not divide M); p is clamped to 1..M so that no panel is empty.
inline std::vector<Panel> split_rows(int M, int panels) {
    std::vector<Panel> out;
    if (M < 1) return out;
    const int p = std::max(1, std::min(panels, M));
    const int base = M / p, extra = M % p;
    int row = 0;
    for (int i = 0; i < p; ++i) {
        const int rows = base + (i < extra ? 1 : 0);
        out.push_back({row, rows});
        row += rows;
    }
    return out;
}

// ---- a timeline from CUDA events ---------------------------------------------------------------
// Nsight Systems draws what every stream did; it is not installed everywhere. The same picture
// can be drawn from CUDA events: one pair around every operation, read after the work finished,
// relative to one origin event recorded before the first operation. Events are timestamped by the
// GPU when the stream reaches them, so start and end bracket the operation as the GPU ran it.
struct TimelineRow {
    int stream = 0;         // 0, 1, ...: which of the program's streams
    std::string op;         // "h2d A", "gemm", "d2h C", ...
    int panel = -1;         // the panel, or -1 for whole-matrix work (B)
    double start_ms = 0.0;  // from the origin
    double end_ms = 0.0;
};

class EventTimeline {
public:
    EventTimeline() = default;
    ~EventTimeline() { clear(); }
    EventTimeline(const EventTimeline&) = delete;
    EventTimeline& operator=(const EventTimeline&) = delete;

    // The time zero of every row: call before the first operation, on a stream that all others
    // are ordered after (or on any stream when the device is idle).
    void start(cudaStream_t stream) {
        clear();
        origin_ = make_event();
        WB_CUDA_CHECK(cudaEventRecord(origin_, stream));
    }
    // Records `work(stream)` between two events, labelled for the picture.
    template <class Work>
    void record(int stream_index, cudaStream_t stream, const std::string& op, int panel, Work&& work) {
        Entry e{stream_index, op, panel, make_event(), make_event()};
        entries_.push_back(e);  // owned from here on, even when `work` throws
        WB_CUDA_CHECK(cudaEventRecord(e.start, stream));
        work(stream);
        WB_CUDA_CHECK(cudaEventRecord(e.end, stream));
    }
    // After the work finished (synchronize first): every operation, in the order recorded.
    std::vector<TimelineRow> rows() const {
        std::vector<TimelineRow> out;
        for (const Entry& e : entries_) {
            float s = 0, t = 0;
            WB_CUDA_CHECK(cudaEventElapsedTime(&s, origin_, e.start));
            WB_CUDA_CHECK(cudaEventElapsedTime(&t, origin_, e.end));
            out.push_back({e.stream, e.op, e.panel, s, t});
        }
        return out;
    }

private:
    struct Entry {
        int stream;
        std::string op;
        int panel;
        cudaEvent_t start, end;
    };
    cudaEvent_t make_event() {
        cudaEvent_t e = nullptr;
        WB_CUDA_CHECK(cudaEventCreate(&e));
        owned_.push_back(e);
        return e;
    }
    void clear() {
        for (cudaEvent_t e : owned_) cudaEventDestroy(e);
        owned_.clear();
        entries_.clear();
        origin_ = nullptr;
    }
    cudaEvent_t origin_ = nullptr;
    std::vector<Entry> entries_;
    std::vector<cudaEvent_t> owned_;
};

// The facts a timeline must show: every operation ends after it starts, and within one stream
// the operations run one after another in the order they were issued (a stream is a queue). The
// event timestamps have a resolution of about half a microsecond, so two neighbours may touch.
// Returns "" when all hold, else a sentence naming the first offender.
inline std::string timeline_problem(const std::vector<TimelineRow>& rows, double slack_ms = 1e-3) {
    std::vector<const TimelineRow*> last_of_stream;
    for (size_t i = 0; i < rows.size(); ++i) {
        const TimelineRow& r = rows[i];
        const std::string where = "row " + std::to_string(i) + " (" + r.op + ", stream " +
                                  std::to_string(r.stream) + ")";
        if (r.stream < 0) return where + " has no stream";
        if (!(r.end_ms >= r.start_ms) || r.start_ms < -slack_ms) return where + " ends before it starts";
        if (size_t(r.stream) >= last_of_stream.size()) last_of_stream.resize(r.stream + 1, nullptr);
        const TimelineRow* prev = last_of_stream[r.stream];
        if (prev && r.start_ms + slack_ms < prev->end_ms)
            return where + " starts before the previous operation of its stream (" + prev->op + ") ended";
        last_of_stream[r.stream] = &r;
    }
    return "";
}

// Busy time of one kind of operation: the sum of its rows' durations (ops whose name starts with
// `prefix`, e.g. "h2d", "gemm", "d2h").
inline double busy_ms(const std::vector<TimelineRow>& rows, const std::string& prefix) {
    double sum = 0;
    for (const TimelineRow& r : rows)
        if (r.op.compare(0, prefix.size(), prefix) == 0) sum += r.end_ms - r.start_ms;
    return sum;
}

// From the first start to the last end.
inline double span_ms(const std::vector<TimelineRow>& rows) {
    if (rows.empty()) return 0;
    double lo = rows[0].start_ms, hi = rows[0].end_ms;
    for (const TimelineRow& r : rows) {
        lo = std::min(lo, r.start_ms);
        hi = std::max(hi, r.end_ms);
    }
    return hi - lo;
}

}  // namespace e2e
