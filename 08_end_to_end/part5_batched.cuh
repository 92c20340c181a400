// part5_batched.cuh - part 5: the small GEMMs of part 4 as one batched call.
//
// When every product has the same shape and the matrices sit at fixed distances in memory
// (A_i = A + i * strideA, and so on), cublasSgemmStridedBatched computes them all in one call:
// one launch, one kernel whose blocks cover every product, so the issue cost that bounds part 4's
// loop is paid once for the batch. A graph (part 4) is the tool when the work is a fixed sequence
// of different calls; the batched call when it is many copies of one.
#pragma once

#include <vector>

#include "part4_graphs.cuh"

namespace ch08 {

// The whole batch in one call, with the row-major trick of chapter 07 (C_i^T = B_i^T A_i^T): cuBLAS
// sees column-major B_i^T (N x K, leading dimension N) times A_i^T (K x M, leading dimension K).
inline void issue_strided_batched(const Lane& lane, const SmallBatch& batch) {
    const wb::Shape s = batch.s;
    const float one = 1.0f, zero = 0.0f;
    WB_CUBLAS_CHECK(cublasSgemmStridedBatched(lane.handle(), CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one,
                                              batch.b(0), s.n, (long long)b_count(s),  // B_i, stride K * N
                                              batch.a(0), s.k, (long long)a_count(s),  // A_i, stride M * K
                                              &zero, batch.c(0), s.n, (long long)c_count(s), batch.count));
}

// The batched call timed like part 4's loop; its result is compared bit for bit with the loop's,
// run once here (untimed) on the same data.
inline SmallRow measure_batched(wb::Shape s, int count, int warmup, int reps, uint64_t seed) {
    SmallBatch batch(s, count, seed);
    const Lane lane;
    issue_loop(lane, batch);
    const std::vector<float> loop_c = download_c(lane, batch);
    SmallRow row = time_batch("strided_batched", lane, batch, warmup, reps, [&] { issue_strided_batched(lane, batch); });
    check_batch(row, batch, download_c(lane, batch), loop_c, seed);
    return row;
}

}  // namespace ch08
