// part4_graphs.cuh - part 4: thousands of small GEMMs (as the layers of a small network make
// them), where issuing the work costs more than doing it, and a CUDA graph that issues it once.
//
// A 64^3 product is 0.5 MFLOP: the GPU runs it in a few microseconds. Issuing it from the host
// (cuBLAS picks a kernel, the runtime builds the launch, the driver writes it to the GPU's queue)
// costs microseconds too, so a loop of small launches is limited by the host, not the GPU.
//
//   loop   one cublasSgemm per product on one stream, issued one by one
//   graph  the same calls captured once into a CUDA graph (cudaStreamBeginCapture ...
//          cudaStreamEndCapture, cudaGraphInstantiate), then the whole graph launched with one
//          call: the launches were prepared once, and are replayed by the GPU
//
// Cost per GEMM = host wall clock from the first call until the stream is done, divided by the
// count. The graph replays the loop's calls exactly, so its results are the loop's, bit for bit.
// Part 5 (part5_batched.cuh) runs the same batch as one batched call.
#pragma once

#include <string>
#include <vector>

#include "cuda_handles.cuh"
#include "products.cuh"

namespace ch08 {

// `count` products of one shape, stored one after another: A_i at A + i * M * K, and so on.
struct SmallBatch {
    wb::Shape s;
    int count = 0;
    std::vector<float> hostA, hostB;
    Buffer<float> A, B, C;
    SmallBatch(wb::Shape shape, int n, uint64_t seed)
        : s(shape), count(n),
          A(a_count(shape) * n, Memory::device), B(b_count(shape) * n, Memory::device),
          C(c_count(shape) * n, Memory::device) {
        hostA.resize(A.size());
        hostB.resize(B.size());
        wb::fill_random(hostA.data(), hostA.size(), seed, kStreamA);
        wb::fill_random(hostB.data(), hostB.size(), seed, kStreamB);
        WB_CUDA_CHECK(cudaMemcpy(A.get(), hostA.data(), A.bytes(), cudaMemcpyHostToDevice));
        WB_CUDA_CHECK(cudaMemcpy(B.get(), hostB.data(), B.bytes(), cudaMemcpyHostToDevice));
    }
    float* a(int i) const { return A.get() + a_count(s) * i; }
    float* b(int i) const { return B.get() + b_count(s) * i; }
    float* c(int i) const { return C.get() + c_count(s) * i; }
};

// Every product of the batch, one cublasSgemm each, on the lane's stream.
inline void issue_loop(const Lane& lane, const SmallBatch& batch) {
    for (int i = 0; i < batch.count; ++i)
        lane.sgemm_rows(0, batch.s.m, batch.s.n, batch.s.k, batch.a(i), batch.b(i), batch.c(i));
}

// The same loop, recorded into a graph on the lane's stream instead of run. cuBLAS allocates
// nothing inside the capture, because the lane gave its handle a workspace of its own.
inline wb::GraphExec capture_loop(const Lane& lane, const SmallBatch& batch) {
    return wb::capture_graph(lane.stream(), [&](cudaStream_t) { issue_loop(lane, batch); });
}

// ---- the measurement of parts 4 and 5 ----------------------------------------------------------
struct SmallRow {
    std::string path;           // loop, graph, strided_batched
    double us_per_gemm = 0;     // median host wall clock of the batch / count
    double gpu_us_per_gemm = 0; // median GPU time of the batch (events) / count
    std::string status;         // PASS / FAIL (sampled products against the reference)
    bool same_as_loop = false;  // bit for bit
};

// `issue()` puts the whole batch on the lane's stream: `warmup` untimed times, then `reps` timed
// ones, each between two events (GPU time) and inside the host clock until the stream is done.
template <class Issue>
SmallRow time_batch(const char* path, const Lane& lane, SmallBatch& batch, int warmup, int reps, Issue&& issue) {
    const wb::Event start, stop;
    for (int i = 0; i < warmup; ++i) issue();
    poison_device(batch.C.get(), batch.C.size(), lane.stream());  // the timed runs must write C
    WB_CUDA_CHECK(cudaStreamSynchronize(lane.stream()));
    std::vector<double> wall, gpu;
    for (int r = 0; r < reps; ++r) {
        const Clock::time_point t0 = Clock::now();
        WB_CUDA_CHECK(cudaEventRecord(start, lane.stream()));
        issue();
        WB_CUDA_CHECK(cudaEventRecord(stop, lane.stream()));
        WB_CUDA_CHECK(cudaStreamSynchronize(lane.stream()));
        wall.push_back(ms_since(t0));
        gpu.push_back(wb::elapsed_ms(start, stop));
    }
    SmallRow row;
    row.path = path;
    row.us_per_gemm = median(wall) * 1000.0 / batch.count;
    row.gpu_us_per_gemm = median(gpu) * 1000.0 / batch.count;
    return row;
}

// The products compared with the double reference: the first, the last and every
// (count / 20)-th in between; the others are covered by the bit-for-bit comparisons.
inline std::vector<int> sampled_products(int count) {
    std::vector<int> out;
    const int step = std::max(1, count / 20);
    for (int i = 0; i < count; i += step) out.push_back(i);
    if (out.back() != count - 1) out.push_back(count - 1);
    return out;
}

// The batch's C in host memory, once the lane's work is done. (A plain cudaMemcpy would not wait
// for it: it runs on the legacy stream 0, which a non-blocking stream does not synchronize with.)
inline std::vector<float> download_c(const Lane& lane, const SmallBatch& batch) {
    std::vector<float> out(batch.C.size());
    WB_CUDA_CHECK(cudaMemcpyAsync(out.data(), batch.C.get(), batch.C.bytes(), cudaMemcpyDeviceToHost, lane.stream()));
    WB_CUDA_CHECK(cudaStreamSynchronize(lane.stream()));
    return out;
}

// Fills the row's status (sampled products against the reference) and, given the loop's result,
// whether it holds the same bits.
inline void check_batch(SmallRow& row, const SmallBatch& batch, const std::vector<float>& C,
                        const std::vector<float>& loop_c, uint64_t seed) {
    bool pass = true;
    for (int i : sampled_products(batch.count))
        pass = pass && verify_product(batch.s, batch.hostA.data() + a_count(batch.s) * i,
                                      batch.hostB.data() + b_count(batch.s) * i, C.data() + c_count(batch.s) * i, seed)
                           .pass;
    row.status = pass ? "PASS" : "FAIL";
    row.same_as_loop = same_bits(C.data(), loop_c.data(), loop_c.size());
}

struct GraphsResult {
    wb::Shape shape;
    int count = 0;
    double capture_ms = 0;  // capture + instantiate, once (host clock)
    SmallRow loop, graph;
    double speedup() const { return graph.us_per_gemm > 0 ? loop.us_per_gemm / graph.us_per_gemm : 0; }
};

inline GraphsResult measure_graphs(wb::Shape s, int count, int warmup, int reps, uint64_t seed) {
    GraphsResult res;
    res.shape = s;
    res.count = count;
    SmallBatch batch(s, count, seed);
    const Lane lane;

    res.loop = time_batch("loop", lane, batch, warmup, reps, [&] { issue_loop(lane, batch); });
    const std::vector<float> loop_c = download_c(lane, batch);
    check_batch(res.loop, batch, loop_c, loop_c, seed);

    const Clock::time_point t0 = Clock::now();
    const wb::GraphExec graph = capture_loop(lane, batch);
    res.capture_ms = ms_since(t0);
    res.graph = time_batch("graph", lane, batch, warmup, reps,
                           [&] { WB_CUDA_CHECK(cudaGraphLaunch(graph, lane.stream())); });
    check_batch(res.graph, batch, download_c(lane, batch), loop_c, seed);
    return res;
}

}  // namespace ch08
