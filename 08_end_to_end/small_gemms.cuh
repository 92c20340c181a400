// small_gemms.cuh - parts 4 and 6: thousands of small GEMMs (as the layers of a small network
// make them), where issuing the work costs more than doing it.
//
// A 64^3 product is 0.5 MFLOP: the GPU runs it in a few microseconds. Issuing it from the host
// (cuBLAS picks a kernel, the runtime builds the launch, the driver writes it to the GPU's queue)
// costs microseconds too, so a loop of small launches is limited by the host, not the GPU.
//
//   loop             one cublasSgemm per product on one stream, issued one by one
//   graph            the same calls captured once into a CUDA graph (cudaStreamBeginCapture ...
//                    cudaStreamEndCapture, cudaGraphInstantiate), then the whole graph launched
//                    with one call: the launches were prepared once, and are replayed by the GPU
//   strided_batched  one cublasSgemmStridedBatched: one kernel computes every product, A_i, B_i,
//                    C_i found at fixed distances (strides) from the first
//
// Cost per GEMM = host wall clock from the first call until the stream is done, divided by the
// count. The graph replays the loop's calls exactly, so its results are the loop's, bit for bit.
#pragma once

#include <string>
#include <vector>

#include "products.cuh"

namespace e2e {

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
    static size_t device_bytes(wb::Shape s, int n) { return product_bytes(s) * size_t(n); }
    std::vector<float> download_c() const {
        std::vector<float> out(C.size());
        WB_CUDA_CHECK(cudaMemcpy(out.data(), C.get(), C.bytes(), cudaMemcpyDeviceToHost));
        return out;
    }
};

// Every product of the batch, one cublasSgemm each, on the lane's stream.
inline void issue_loop(const Lane& lane, SmallBatch& b) {
    const wb::Shape s = b.s;
    for (int i = 0; i < b.count; ++i)
        lane.sgemm_rows(0, s.m, s.n, s.k, b.A.get() + a_count(s) * i, b.B.get() + b_count(s) * i,
                        b.C.get() + c_count(s) * i);
}

// The whole batch in one call, with the row-major trick of chapter 07 (C_i^T = B_i^T A_i^T).
inline void issue_strided_batched(const Lane& lane, SmallBatch& b) {
    const wb::Shape s = b.s;
    const float one = 1.0f, zero = 0.0f;
    WB_CUBLAS_CHECK(cublasSgemmStridedBatched(lane.handle(), CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one,
                                              b.B.get(), s.n, (long long)b_count(s), b.A.get(), s.k,
                                              (long long)a_count(s), &zero, b.C.get(), s.n,
                                              (long long)c_count(s), b.count));
}

// The loop captured into a graph and instantiated; the caller destroys it.
inline cudaGraphExec_t capture_loop(const Lane& lane, SmallBatch& b) {
    WB_CUDA_CHECK(cudaStreamBeginCapture(lane.stream(), cudaStreamCaptureModeThreadLocal));
    cudaGraph_t graph = nullptr;
    try {
        issue_loop(lane, b);
    } catch (...) {
        cudaStreamEndCapture(lane.stream(), &graph);
        if (graph) cudaGraphDestroy(graph);
        throw;
    }
    WB_CUDA_CHECK(cudaStreamEndCapture(lane.stream(), &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    WB_CUDA_CHECK(err);
    return exec;
}

struct SmallRow {
    std::string path;           // loop, graph, strided_batched
    double us_per_gemm = 0;     // median host wall clock of the batch / count
    double gpu_us_per_gemm = 0; // median GPU time of the batch (events) / count
    std::string status;         // PASS / FAIL (sampled products against the reference)
    bool same_as_loop = false;  // bit for bit
};

struct SmallResult {
    wb::Shape shape;
    int count = 0, reps = 0;
    double capture_ms = 0;  // capture + instantiate, once
    std::vector<SmallRow> rows;
    double speedup() const {  // loop / graph, per GEMM
        return rows.size() > 1 && rows[1].us_per_gemm > 0 ? rows[0].us_per_gemm / rows[1].us_per_gemm : 0;
    }
};

// The products compared with the double reference: the first, the last and every
// (count / 20)-th in between; the others are covered by the bit-for-bit comparisons.
inline std::vector<int> sampled_products(int count) {
    std::vector<int> out;
    const int step = std::max(1, count / 20);
    for (int i = 0; i < count; i += step) out.push_back(i);
    if (out.back() != count - 1) out.push_back(count - 1);
    return out;
}

inline bool check_batch(const SmallBatch& b, const std::vector<float>& C, uint64_t seed) {
    for (int i : sampled_products(b.count)) {
        const wb::CheckResult r = verify_product(b.s, b.hostA.data() + a_count(b.s) * i,
                                                 b.hostB.data() + b_count(b.s) * i, C.data() + c_count(b.s) * i, seed);
        if (!r.pass) return false;
    }
    return true;
}

inline SmallResult measure_small_gemms(wb::Shape s, int count, int warmup, int reps, uint64_t seed) {
    SmallResult res;
    res.shape = s;
    res.count = count;
    res.reps = reps;
    SmallBatch b(s, count, seed);
    Lane lane;
    cudaEvent_t e0, e1;
    WB_CUDA_CHECK(cudaEventCreate(&e0));
    WB_CUDA_CHECK(cudaEventCreate(&e1));
    cudaGraphExec_t exec = nullptr;
    auto cleanup = [&] {
        if (exec) cudaGraphExecDestroy(exec);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    };
    auto measure = [&](const char* name, auto&& issue) {
        for (int i = 0; i < warmup; ++i) issue();
        WB_CUDA_CHECK(cudaStreamSynchronize(lane.stream()));
        poison_device(b.C.get(), b.C.size(), lane.stream());
        WB_CUDA_CHECK(cudaStreamSynchronize(lane.stream()));
        std::vector<double> wall, gpu;
        for (int r = 0; r < reps; ++r) {
            const Clock::time_point t0 = Clock::now();
            WB_CUDA_CHECK(cudaEventRecord(e0, lane.stream()));
            issue();
            WB_CUDA_CHECK(cudaEventRecord(e1, lane.stream()));
            WB_CUDA_CHECK(cudaStreamSynchronize(lane.stream()));
            wall.push_back(ms_since(t0));
            float g = 0;
            WB_CUDA_CHECK(cudaEventElapsedTime(&g, e0, e1));
            gpu.push_back(g);
        }
        SmallRow row;
        row.path = name;
        row.us_per_gemm = median(wall) * 1000.0 / count;
        row.gpu_us_per_gemm = median(gpu) * 1000.0 / count;
        return row;
    };
    try {
        SmallRow loop = measure("loop", [&] { issue_loop(lane, b); });
        const std::vector<float> loop_c = b.download_c();
        loop.status = check_batch(b, loop_c, seed) ? "PASS" : "FAIL";
        loop.same_as_loop = true;

        const Clock::time_point t0 = Clock::now();
        exec = capture_loop(lane, b);
        res.capture_ms = ms_since(t0);
        SmallRow graph = measure("graph", [&] { WB_CUDA_CHECK(cudaGraphLaunch(exec, lane.stream())); });
        const std::vector<float> graph_c = b.download_c();
        graph.status = check_batch(b, graph_c, seed) ? "PASS" : "FAIL";
        graph.same_as_loop = same_bits(graph_c.data(), loop_c.data(), loop_c.size());

        SmallRow batched = measure("strided_batched", [&] { issue_strided_batched(lane, b); });
        const std::vector<float> batched_c = b.download_c();
        batched.status = check_batch(b, batched_c, seed) ? "PASS" : "FAIL";
        batched.same_as_loop = same_bits(batched_c.data(), loop_c.data(), loop_c.size());
        res.rows = {loop, graph, batched};
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
    return res;
}

}  // namespace e2e
