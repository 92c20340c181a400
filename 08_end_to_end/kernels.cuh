// kernels.cuh - chapter 08: the GEMM inside a whole program.
//
// Chapters 02-07 time the kernel alone, with the data already on the GPU. A real program starts
// with its data in host memory and wants the answer back there, so here the clock also runs for
// the copies, the launches and the waiting. The chapter has no new GEMM kernel: it runs cuBLAS and
// chapter 05's `best`, and teaches how to feed them. Its parts, one header each:
//
//   1 transfers.cuh     the host link (read from the device), pageable vs pinned copies
//   2 crossover.cuh     end to end, copies included, GPU vs chapter 01's CPU code and OpenBLAS,
//                       32^3 to 8192^3: from which size the GPU wins, and why not below it
//   3 streams.cuh       a large product in row panels on several streams: copies overlap GEMMs
//                       (timeline drawn from CUDA events), and the same captured as a CUDA graph
//   4 small_gemms.cuh   thousands of small GEMMs launched one by one vs replayed from a graph,
//   6                   vs cublasSgemmStridedBatched
//   5 managed.cuh       cudaMallocManaged: page faults, prefetch and advice vs explicit copies
//
// and the machinery they share: pipeline_parts.cuh (pinned/device/managed buffers that report a
// failed allocation, the row-panel split, the event timeline and its checks) and products.cuh
// (inputs, cuBLAS handles bound to streams, the reference check). parts.cuh runs the parts and
// writes their tables and CSV files.
//
// The GEMM contract is the one of every chapter (docs/CONTRACT.md): row-major, packed, any
// M, N, K >= 1. The variant table below lists the GEMMs the crossover runs end to end.
#pragma once

#include "../05_float4_vectorized/kernels.cuh"
#include "crossover.cuh"
#include "gemm_harness.cuh"
#include "managed.cuh"
#include "small_gemms.cuh"
#include "streams.cuh"
#include "transfers.cuh"

namespace e2e {

// The table the program, the tests and a grader iterate (namespace e2e: chapter 05's header,
// included for `best`, has its own kSgemmVariants at global scope).
// clang-format off
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"cublas", wb::cublas_sgemm, "cublasSgemm (FP32), the library a program would call"},
    {"best", launch_best, "chapter 05's best: the tile and K split chosen for this GPU and shape"},
};
// clang-format on

}  // namespace e2e
