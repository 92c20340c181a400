// cuda_handles.cuh - CUDA events, streams and graphs that destroy themselves, and a graph capture
// that always ends.
//
//   wb::Stream stream(cudaStreamNonBlocking);
//   wb::Event start, stop;                            // timing events (cudaEventDefault)
//   WB_CUDA_CHECK(cudaEventRecord(start, stream));    // they convert to cudaEvent_t / cudaStream_t
//   ...
//   wb::GraphExec graph = wb::capture_graph(stream, [&](cudaStream_t s) { issue_the_work(s); });
//   WB_CUDA_CHECK(cudaGraphLaunch(graph, stream));
//
// Why. Every cudaEventCreate, cudaStreamCreate and cudaGraphInstantiate needs its destroy call on
// every way out of the code that made it, and with WB_CUDA_CHECK every checked call is a way out
// (it throws wb::CudaError). By hand that is a try/catch or a cleanup lambda per function, written
// again in every part of every chapter, and the one that gets forgotten leaks an event per timed
// run. Here the destructor does it, so code that uses these reads like the plain CUDA it is.
//
// A capture needs the same care for another reason: a stream left in capture mode records, and
// does not run, whatever is issued on it next, so one failed capture would turn every later
// call on that stream into an error far from the cause. capture_graph ends the capture on every
// path: when the body throws, and when the body made a call a capture cannot record (the capture
// is then invalidated, and cudaStreamEndCapture reports it).
//
// The handles are move-only (one owner, like std::unique_ptr). They convert to the raw handle so
// they can be handed to the runtime as they are; a temporary cannot convert, so a raw handle never
// outlives its owner by accident (`cudaEvent_t e = wb::Event();` does not compile).
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "cuda_check.cuh"

namespace wb {

namespace detail {
// One owned handle of type H, destroyed by `destroy` (cudaEventDestroy, ...). A default-made or
// moved-from owner holds nothing and destroys nothing.
template <class H, cudaError_t (*destroy)(H)>
class Owned {
public:
    Owned() = default;
    explicit Owned(H handle) : h_(handle) {}
    // A destructor must not throw, so the status of the destroy call is dropped: it only fails
    // for a handle that is already invalid, and the error that made it so was reported then.
    ~Owned() { reset(); }
    Owned(const Owned&) = delete;
    Owned& operator=(const Owned&) = delete;
    Owned(Owned&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
    Owned& operator=(Owned&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, nullptr);
        }
        return *this;
    }
    H get() const { return h_; }
    operator H() const& { return h_; }
    operator H() const&& = delete;
    void reset() {
        if (h_) (void)destroy(h_);
        h_ = nullptr;
    }

private:
    H h_ = nullptr;
};
}  // namespace detail

// A CUDA event. cudaEventDefault records timestamps (for cudaEventElapsedTime);
// cudaEventDisableTiming makes one that only orders streams: cheaper to record and wait on.
class Event : public detail::Owned<cudaEvent_t, cudaEventDestroy> {
public:
    explicit Event(unsigned flags = cudaEventDefault) : Owned(create(flags)) {}

private:
    static cudaEvent_t create(unsigned flags) {
        cudaEvent_t e = nullptr;
        WB_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
        return e;
    }
};

// Milliseconds between two recorded timing events (both must have completed).
inline double elapsed_ms(cudaEvent_t start, cudaEvent_t stop) {
    float ms = 0;
    WB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

// A CUDA stream. cudaStreamNonBlocking: the stream does not wait for the legacy default stream
// (stream 0), so a stray call on stream 0 elsewhere cannot serialize it.
class Stream : public detail::Owned<cudaStream_t, cudaStreamDestroy> {
public:
    explicit Stream(unsigned flags = cudaStreamDefault) : Owned(create(flags)) {}

private:
    static cudaStream_t create(unsigned flags) {
        cudaStream_t s = nullptr;
        WB_CUDA_CHECK(cudaStreamCreateWithFlags(&s, flags));
        return s;
    }
};

// A captured graph (the recorded operations) and an instantiated one (ready to launch).
using Graph = detail::Owned<cudaGraph_t, cudaGraphDestroy>;
using GraphExec = detail::Owned<cudaGraphExec_t, cudaGraphExecDestroy>;

// Captures what `body(stream)` issues on `stream` (and on the streams that an event recorded on
// it brings into the capture, which must join it again before the body returns) into a graph, and
// instantiates it. Nothing runs: the operations are recorded, to be run with cudaGraphLaunch.
// ThreadLocal mode: calls of other threads cannot invalidate this capture, and this thread may not
// make calls that would be unsafe during it (cudaMalloc, a synchronous copy, a synchronize).
// Throws wb::CudaError (or what the body threw) with the stream out of capture mode.
template <class Body>
GraphExec capture_graph(cudaStream_t stream, Body&& body,
                        cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal) {
    WB_CUDA_CHECK(cudaStreamBeginCapture(stream, mode));
    try {
        body(stream);
    } catch (...) {
        cudaGraph_t partial = nullptr;
        (void)cudaStreamEndCapture(stream, &partial);  // the body's error is the one to report
        Graph discard(partial);
        (void)cudaGetLastError();  // an invalidated capture must not be reported by a later check
        throw;
    }
    cudaGraph_t recorded = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &recorded);  // out of capture mode now
    const Graph graph(recorded);
    if (ended != cudaSuccess) {
        (void)cudaGetLastError();  // reported here, once, and not again by a later check
        cuda_check(ended, "cudaStreamEndCapture (a call in the capture that it cannot record?)", __FILE__, __LINE__);
    }
    cudaGraphExec_t exec = nullptr;
    WB_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    return GraphExec(exec);
}

}  // namespace wb
