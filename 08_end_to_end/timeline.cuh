// timeline.cuh - what every stream did, drawn from CUDA events, and the facts such a timeline must
// show. Part 3 (streams) records one around every copy and GEMM of its pipeline.
//
// The checks are plain host code, so the tests run them on machines without a GPU.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "cuda_handles.cuh"

namespace ch08 {

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
    // The time zero of every row, recorded before the first operation on a stream that all others
    // are ordered after (or on any stream when the device is idle).
    explicit EventTimeline(cudaStream_t stream) { WB_CUDA_CHECK(cudaEventRecord(origin_, stream)); }

    // Records `work(stream)` between two events, labelled for the picture.
    template <class Work>
    void record(int stream_index, cudaStream_t stream, const std::string& op, int panel, Work&& work) {
        entries_.push_back({stream_index, op, panel, wb::Event(), wb::Event()});
        const Entry& e = entries_.back();
        WB_CUDA_CHECK(cudaEventRecord(e.start, stream));
        work(stream);
        WB_CUDA_CHECK(cudaEventRecord(e.end, stream));
    }
    // After the work finished (synchronize first): every operation, in the order recorded.
    std::vector<TimelineRow> rows() const {
        std::vector<TimelineRow> out;
        for (const Entry& e : entries_)
            out.push_back({e.stream, e.op, e.panel, wb::elapsed_ms(origin_, e.start), wb::elapsed_ms(origin_, e.end)});
        return out;
    }

private:
    struct Entry {
        int stream;
        std::string op;
        int panel;
        wb::Event start, end;
    };
    wb::Event origin_;
    std::vector<Entry> entries_;
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

}  // namespace ch08
