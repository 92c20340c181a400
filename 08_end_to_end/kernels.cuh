// kernels.cuh - chapter 08: the GEMM inside a whole program.
//
// Chapters 02-07 time the kernel alone, with the data already on the GPU. A real program starts
// with its data in host memory and wants the answer back there, so here the clock also runs for
// the copies, the launches and the waiting. The chapter has no new GEMM kernel: it runs cuBLAS and
// chapter 05's `best`, and teaches how to feed them. Its six parts, one file each, each opening
// with the CUDA it teaches:
//
//   1 part1_transfers.cuh  pageable vs pinned copies, against the host link read from the device
//   2 part2_crossover.cuh  end to end, copies included, GPU vs chapter 01's CPU code and OpenBLAS,
//                          32^3 to 8192^3: from which size the GPU wins, and why not below it
//   3 part3_streams.cuh    a large product in row panels on several streams: copies overlap GEMMs
//                          (timeline drawn from CUDA events), and the same captured as a CUDA graph
//   4 part4_graphs.cuh     thousands of small GEMMs launched one by one vs replayed from a graph
//   5 part5_batched.cuh    the same small GEMMs as one cublasSgemmStridedBatched
//   6 part6_managed.cuh    cudaMallocManaged: page faults, prefetch and advice vs explicit copies
//
// What they share: products.cuh (device, pinned and managed buffers that report a failed
// allocation, cuBLAS handles bound to streams, inputs, the reference check), timeline.cuh (a
// timeline from CUDA events and its checks) and host_link.cuh (the link, read from the device); common/cuda_handles.cuh owns the events, streams and
// graphs. program.cuh is the program (options, the parts in order) and output.cuh its one table
// writer (printed tables and the CSV files of --out DIR).
//
// This header holds what the contract puts in every kernels.cuh: the chapter's own kernel (a copy
// that lets the GPU touch managed pages first, part 6) and the variant table. The GEMM contract
// is the one of every chapter (docs/CONTRACT.md): row-major, packed, any M, N, K >= 1.
#pragma once

#include <cuda_runtime.h>

#include "../05_float4_vectorized/kernels.cuh"
#include "cuda_check.cuh"
#include "gemm_harness.cuh"

namespace ch08 {

// A grid-stride copy: the GPU writes (and so first touches) managed pages, as a GPU-side producer
// of the data would.
__global__ void copy_floats(float* __restrict__ dst, const float* __restrict__ src, size_t n) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
        dst[i] = src[i];
}
inline void copy_on_gpu(float* dst, const float* src, size_t n, cudaStream_t stream) {
    constexpr int kThreads = 256, kBlocks = 1024;  // enough to keep the copy at DRAM speed
    copy_floats<<<kBlocks, kThreads, 0, stream>>>(dst, src, n);
    WB_LAUNCH_CHECK();
}

// The table the program, the tests and a grader iterate: the GPU GEMMs of the crossover (part 2).
// clang-format off
inline const wb::SgemmVariant kSgemmVariants[] = {
    {"cublas", wb::cublas_sgemm, "cublasSgemm (FP32), the library a program would call"},
    {"best", ch05::launch_best, "chapter 05's best: the tile and K split chosen for this GPU and shape"},
};
// clang-format on

}  // namespace ch08
