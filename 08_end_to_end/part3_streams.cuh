// part3_streams.cuh - part 3: copies that overlap the GEMM. One large product, split into row
// panels; panel i goes to stream i % L, where its copy in, its GEMM and its copy out
// follow each other. Operations of different streams may run at the same time, and the GPU has
// separate engines for host-to-device copies, device-to-host copies and kernels, so while panel i
// is multiplied, panel i+1 comes in and panel i-1 goes out.
//
//   serial     the same panels on ONE stream: nothing overlaps (the baseline of the picture)
//   pipelined  the panels on L streams
//   graph      the pipelined sequence captured once into a CUDA graph and replayed
//
// The three issue the same cuBLAS calls on the same panels with identically set-up handles, so
// their results must be the same bits; each is also checked against the double reference.
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "cuda_handles.cuh"
#include "products.cuh"
#include "timeline.cuh"
#include "timer.cuh"

namespace ch08 {

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

// L lanes (a stream, its cuBLAS handle and workspace each) and the events that order them. The
// events only order streams, so they carry no timestamps (cudaEventDisableTiming: cheaper).
class PanelPipeline {
public:
    explicit PanelPipeline(int lanes) : b_ready_(cudaEventDisableTiming) {
        for (int i = 0; i < lanes; ++i) {
            lanes_.push_back(std::make_unique<Lane>());
            done_.emplace_back(cudaEventDisableTiming);
        }
    }
    int lanes() const { return int(lanes_.size()); }
    const Lane& lane(int i) const { return *lanes_[i]; }

    // Issues C = A * B from pinned host memory to pinned host memory through device memory, on
    // the first `use` lanes. Returns at once (everything is asynchronous); sync() waits. With a
    // timeline every operation is bracketed by events; without one (graph capture) it is not.
    //
    // Lane 0 brings B in first, because every panel needs all of it; the other lanes wait for it
    // (an event, not a host synchronize), and lane 0 waits for them at the end, so lane 0's
    // stream alone says when the whole product is done. That fork and join is also what turns the
    // sequence into one graph when lane 0's stream is being captured.
    void issue(const Matrices& host, Matrices& dev, const std::vector<Panel>& panels, int use,
               EventTimeline* timeline) {
        auto op = [&](int l, const char* name, int panel, auto&& work) {
            if (timeline)
                timeline->record(l, lanes_[l]->stream(), name, panel, work);
            else
                work(lanes_[l]->stream());
        };
        op(0, "h2d B", -1, [&](cudaStream_t st) {
            WB_CUDA_CHECK(cudaMemcpyAsync(dev.B.get(), host.B.get(), host.B.bytes(), cudaMemcpyHostToDevice, st));
        });
        WB_CUDA_CHECK(cudaEventRecord(b_ready_, lanes_[0]->stream()));
        for (int l = 1; l < use; ++l) WB_CUDA_CHECK(cudaStreamWaitEvent(lanes_[l]->stream(), b_ready_, 0));

        for (size_t i = 0; i < panels.size(); ++i) {
            // BEGIN SOLUTION: panel i on lane i % use: rows of A in, multiply, rows of C out
            const int K = host.s.k, N = host.s.n;
            const Panel p = panels[i];
            const int l = int(i % size_t(use));
            const size_t a_off = size_t(p.row0) * K, c_off = size_t(p.row0) * N;
            op(l, "h2d A", int(i), [&](cudaStream_t st) {
                WB_CUDA_CHECK(cudaMemcpyAsync(dev.A.get() + a_off, host.A.get() + a_off,
                                              size_t(p.rows) * K * sizeof(float), cudaMemcpyHostToDevice, st));
            });
            op(l, "gemm", int(i), [&](cudaStream_t) {
                lanes_[l]->sgemm_rows(p.row0, p.rows, N, K, dev.A.get(), dev.B.get(), dev.C.get());
            });
            op(l, "d2h C", int(i), [&](cudaStream_t st) {
                WB_CUDA_CHECK(cudaMemcpyAsync(host.C.get() + c_off, dev.C.get() + c_off,
                                              size_t(p.rows) * N * sizeof(float), cudaMemcpyDeviceToHost, st));
            });
            // END SOLUTION
        }
        for (int l = 1; l < use; ++l) {
            WB_CUDA_CHECK(cudaEventRecord(done_[l], lanes_[l]->stream()));
            WB_CUDA_CHECK(cudaStreamWaitEvent(lanes_[0]->stream(), done_[l], 0));
        }
    }
    void sync() const { WB_CUDA_CHECK(cudaStreamSynchronize(lanes_[0]->stream())); }

    // The pipelined sequence captured into a graph (recorded, not run) and instantiated. Lane 0's
    // stream is captured; the event B is ready on brings the other lanes into the capture (a fork)
    // and their done events bring them back (the join), so the graph holds the whole pipeline.
    wb::GraphExec capture(const Matrices& host, Matrices& dev, const std::vector<Panel>& panels, int use) {
        return wb::capture_graph(lanes_[0]->stream(), [&](cudaStream_t) { issue(host, dev, panels, use, nullptr); });
    }

private:
    std::vector<std::unique_ptr<Lane>> lanes_;
    wb::Event b_ready_;
    std::vector<wb::Event> done_;
};

// ---- the measurement of part 3 -----------------------------------------------------------------
struct StreamsResult {
    wb::Shape shape;
    int panels = 0, lanes = 0, reps = 0;
    std::vector<TimelineRow> serial, pipelined;  // the timelines of the median runs
    double serial_ms = 0, pipelined_ms = 0;      // median span, first start to last end (events)
    double graph_ms = 0;                         // median of a graph launch until done (events)
    double instantiate_ms = 0;                   // capture + instantiate, once (host clock)
    double h2d_ms = 0, gemm_ms = 0, d2h_ms = 0;  // busy time per kind, from the serial run
    wb::CheckResult check;                       // the pipelined result against the reference
    bool pipelined_equals_serial = false, graph_equals_serial = false;
    std::string timeline_problem;  // "" when both timelines are ordered within each stream

    double copy_ms() const { return h2d_ms + d2h_ms; }
    // The issue's goal: the pipelined run within 15% of max(total copy time, total kernel time).
    double goal_bound_ms() const { return std::max(copy_ms(), gemm_ms); }
    // What two copy engines and the SMs could do at best: each kind of work back to back.
    double engine_bound_ms() const { return std::max(std::max(h2d_ms, d2h_ms), gemm_ms); }
};

// One run of `use` lanes with a timeline; returns the rows.
inline std::vector<TimelineRow> timed_run(PanelPipeline& pipe, const Matrices& host, Matrices& dev,
                                          const std::vector<Panel>& panels, int use) {
    EventTimeline tl(pipe.lane(0).stream());
    pipe.issue(host, dev, panels, use, &tl);
    pipe.sync();
    return tl.rows();
}

// Runs serial, pipelined and graph `reps` times each (after one untimed run of each) and keeps
// the timeline of the median run. Throws AllocError when the buffers do not fit.
inline StreamsResult measure_streams(wb::Shape s, int panel_count, int lanes, int reps, uint64_t seed) {
    StreamsResult r;
    r.shape = s;
    r.reps = reps;
    const std::vector<Panel> panels = split_rows(s.m, panel_count);
    r.panels = int(panels.size());
    r.lanes = lanes;
    Matrices host(s, Memory::pinned, seed, true);
    Matrices dev(s, Memory::device, seed, false);
    PanelPipeline pipe(lanes);

    auto run_mode = [&](int use, double& ms_out) {
        timed_run(pipe, host, dev, panels, use);  // untimed: handles, cuBLAS heuristics, clocks
        poison_host(host.C.get(), host.C.size());
        poison_device(dev.C.get(), dev.C.size(), pipe.lane(0).stream());
        std::vector<std::vector<TimelineRow>> runs;
        std::vector<double> spans;
        for (int i = 0; i < reps; ++i) {
            runs.push_back(timed_run(pipe, host, dev, panels, use));
            spans.push_back(span_ms(runs.back()));
        }
        ms_out = median(spans);
        size_t pick = 0;  // the run closest to the median
        for (size_t i = 1; i < runs.size(); ++i)
            if (std::abs(spans[i] - ms_out) < std::abs(spans[pick] - ms_out)) pick = i;
        return runs[pick];
    };

    r.serial = run_mode(1, r.serial_ms);
    const std::vector<float> serial_c(host.C.get(), host.C.get() + host.C.size());
    r.h2d_ms = busy_ms(r.serial, "h2d");
    r.gemm_ms = busy_ms(r.serial, "gemm");
    r.d2h_ms = busy_ms(r.serial, "d2h");

    r.pipelined = run_mode(lanes, r.pipelined_ms);
    r.pipelined_equals_serial = same_bits(host.C.get(), serial_c.data(), serial_c.size());
    r.check = verify_product(s, host.A.get(), host.B.get(), host.C.get(), seed);
    r.timeline_problem = timeline_problem(r.serial);
    if (r.timeline_problem.empty()) r.timeline_problem = timeline_problem(r.pipelined);

    const Clock::time_point t0 = Clock::now();
    const wb::GraphExec graph = pipe.capture(host, dev, panels, lanes);
    r.instantiate_ms = ms_since(t0);
    cudaStream_t s0 = pipe.lane(0).stream();
    WB_CUDA_CHECK(cudaGraphLaunch(graph, s0));  // untimed: the first launch uploads the graph
    pipe.sync();
    poison_host(host.C.get(), host.C.size());
    poison_device(dev.C.get(), dev.C.size(), s0);
    r.graph_ms =
        wb::time_launches([&](cudaStream_t st) { WB_CUDA_CHECK(cudaGraphLaunch(graph, st)); }, 0, reps, s0).ms_median;
    pipe.sync();
    r.graph_equals_serial = same_bits(host.C.get(), serial_c.data(), serial_c.size());
    return r;
}

}  // namespace ch08
