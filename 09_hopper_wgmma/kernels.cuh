// kernels.cuh - chapter 09: tensor cores the way Hopper's cuBLAS drives them. FP16 and BF16 inputs,
// FP32 accumulation, FP32 C; sm_90a only.
//
// Chapter 06 reached about half of cuBLAS with WMMA and mma.sync: on Hopper those issue the
// previous generation's warp-level instruction, fed by ordinary loads. Hopper adds three things,
// and this chapter's ladder adds them one at a time:
//   TMA    a copy engine: one thread describes a whole tile, the hardware moves it into shared
//          memory (swizzled so the tensor cores read it without bank conflicts) and counts the
//          bytes on an mbarrier;
//   wgmma  a warpgroup-wide (128 threads) asynchronous multiply reading A and B straight from
//          shared memory: no fragment loads at all;
//   setmaxnreg  warpgroups of one block may hold different numbers of registers, so a block can
//          split into a copying warpgroup and computing warpgroups (warp specialization).
//
//   step 1  wgmma_64x128       one warpgroup, a 64 x 128 tile, a 4-stage TMA ring; thread 0 issues
//                              the copies between its wgmmas
//   step 2  wgmma_128x256      two warpgroups, a 128 x 256 tile (m64n256k16: 128 accumulators per
//                              thread), the same ring
//   step 3  warp_specialized   a producer warpgroup that only copies (40 registers) and two consumer
//                              warpgroups that only compute (232 registers); consumers keep one
//                              group of wgmmas in flight
//   step 4  persistent         one block per SM walks over the tiles in bands (L2 reuse); the
//                              producer loads the next tile while the consumers store this one
//   step 5  cluster_multicast  clusters of two blocks on vertically neighbouring tiles: each copies
//                              half of B's boxes into both (TMA multicast); C is staged through
//                              shared memory and written by TMA stores, alpha and beta applied
//   step 6  tf32_persistent    step 4's pipeline on FP32 inputs read as TF32 (m64n256k8), with a
//                              transposed copy of B (TF32 wgmma has no transposed operand)
//   step 7  fp8_e4m3           FP8 E4M3 A and B with per-tensor scales (m64n256k32, 32 values of k
//                              per instruction); B is given as N x K, because FP8 wgmma reads both
//                              operands K-major; step 4's pipeline with step 5's TMA-store epilogue
//   step 8  pingpong           step 4 with a 128 x 128 tile per consumer warpgroup: the two take
//                              turns on the tensor cores, so one's epilogue overlaps the other's
//                              main loop (FP16 and BF16)
//   step 9  tf32_rs            TF32 without B's transposed copy: the transposed product C^T = B^T A^T,
//                              wgmma's A (= B^T) loaded into registers from B's tile as TMA copies
//                              it, A's tile as wgmma's K-major B; the epilogue transposes back
//   step 10 fp8_multicast      step 7 in step 5's clusters: a K-major B^T tile is split by rows,
//                              each block multicasting its half (whole 1024-byte swizzle atoms)
//   step 11 tf32_multicast     step 9 in clusters of two tiles along n, which share A's tile (the
//                              larger one, 32 KB a stage): each block multicasts half of its rows
//   step 12 epilogue_overlap   step 5 whose epilogue borrows two slots of the ring: a tile's whole C
//                              fits in shared memory, a thread of the producer warpgroup stores it
//                              while the consumers run the next tile's k-loop (FP16 and BF16)
//
// The files, in reading order: hopper_ptx.cuh (each instruction, wrapped and explained),
// tensor_maps.cuh (the host side of TMA and the padded copy), wgmma_pipeline.cuh (what every step
// shares: the configuration, the ring of stages, one stage's copies and wgmmas, the epilogue), then
// one file per step, each holding that step's configuration and kernel: step1_wgmma_64x128.cuh,
// step2_wgmma_128x256.cuh, step3_warp_specialized.cuh, step4_persistent.cuh (also step 6's kernel),
// step5_cluster_multicast.cuh, step7_fp8_e4m3.cuh, step8_pingpong.cuh, step9_tf32_rs.cuh,
// step10_fp8_multicast.cuh, step11_tf32_multicast.cuh, step12_epilogue_overlap.cuh.
// `diff stepN_*.cuh stepN+1_*.cuh` shows what step N + 1 adds (step 8 is a diff against step 4, step
// 9 against step 6's kernel, step 4's, step 10 against steps 5 and 7, step 11 against step 9's kernel
// and step 10, step 12 against step 5).
// Last, this file: the launchers and the ladder table.
//
// Any shape: TMA fills boxes that reach past the matrix with zeros, the epilogue guards the edges of
// C, and a matrix TMA cannot describe (a row pitch or base address that is not a multiple of 16
// bytes: K or N not a multiple of 8 for FP16 and BF16, of 4 for TF32) is first copied to a padded
// pitch, inside the timed call.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <cstdint>
#include <vector>

#include "../common/device.cuh"
#include "../common/gemm_harness.cuh"
#include "step1_wgmma_64x128.cuh"
#include "step2_wgmma_128x256.cuh"
#include "step3_warp_specialized.cuh"
#include "step4_persistent.cuh"
#include "step5_cluster_multicast.cuh"
#include "step7_fp8_e4m3.cuh"
#include "step8_pingpong.cuh"
#include "step9_tf32_rs.cuh"
#include "step10_fp8_multicast.cuh"
#include "step11_tf32_multicast.cuh"
#include "step12_epilogue_overlap.cuh"
#include "tensor_maps.cuh"

namespace ch09 {

// The ladder's configurations are named in the step files: Wgmma64x128, Wgmma128x256,
// WarpSpecialized128x256, Persistent128x256 (steps 4 and 6), Cluster2Persistent128x256,
// Fp8Persistent128x256 (step 7), Pingpong128x128 (step 8) and Fp8Cluster2Persistent128x256 (step 10),
// each a
// WgmmaTiling<T, BM, BN, STAGES, CONSUMERS, PRODUCER, PERSISTENT, CLUSTER, TMA_STORE, PINGPONG>
// (wgmma_pipeline.cuh); EpilogueOverlap128x256 (step 12) is step 5's with the epilogue's barriers.
// Shared memory per stage: (BM + BN) * 128 bytes, whatever the input type.

constexpr int kBand = 8;  // tile rows per band of the tile order (wb::tile_of_block)

// Which step's kernel runs a configuration: the one written for its roles (each kernel checks them
// again with a static_assert). This is machinery, not a step. Steps 1 and 2 differ only in their
// configurations: one consumer warpgroup runs step 1's kernel, more run step 2's. A persistent
// configuration with a cluster or with the staged epilogue runs step 5's kernel (lab/step5_parts_09
// uses both halves): with TMA_STORE false it keeps step 4's epilogue (p.c_tma is never set), with
// CLUSTER = 1 each cluster is a single block. A PINGPONG configuration runs step 8's kernel. An FP8
// configuration runs step 7's kernel, or in clusters step 10's.
template <class Cfg>
constexpr auto kernel_for() {
    if constexpr (Cfg::ELEM == 1) {
        if constexpr (Cfg::CLUSTER == 1)
            return fp8_persistent_kernel<Cfg>;
        else
            return fp8_multicast_kernel<Cfg>;
    } else if constexpr (!Cfg::PRODUCER) {
        if constexpr (Cfg::CONSUMERS == 1)
            return wgmma_64x128_kernel<Cfg>;
        else
            return wgmma_128x256_kernel<Cfg>;
    } else if constexpr (!Cfg::PERSISTENT) {
        return warp_specialized_kernel<Cfg>;
    } else if constexpr (Cfg::PINGPONG) {
        return pingpong_kernel<Cfg>;
    } else if constexpr (Cfg::CLUSTER == 1 && !Cfg::TMA_STORE) {
        return persistent_kernel<Cfg>;
    } else {
        return cluster_multicast_kernel<Cfg>;
    }
}

// How many clusters of Cfg::CLUSTER blocks the GPU runs at once (each block wants a whole SM's
// shared memory). Without clusters that is the SM count; with them it can be less, because a cluster
// must fit inside one GPC and a GPC's SM count need not be a multiple of the cluster size.
template <class Cfg, auto KERNEL>
int resident_clusters() {
    if constexpr (Cfg::CLUSTER == 1) {
        return wb::current_device().sms;
    } else {
        static const int clusters = [] {
            WB_CUDA_CHECK(cudaFuncSetAttribute(KERNEL, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::SMEM_BYTES));
            cudaLaunchConfig_t config = {};
            config.gridDim = dim3(Cfg::CLUSTER * wb::current_device().sms);
            config.blockDim = dim3(Cfg::THREADS);
            config.dynamicSmemBytes = Cfg::SMEM_BYTES;
            cudaLaunchAttribute cluster;
            cluster.id = cudaLaunchAttributeClusterDimension;
            cluster.val.clusterDim.x = Cfg::CLUSTER;
            cluster.val.clusterDim.y = 1;
            cluster.val.clusterDim.z = 1;
            config.attrs = &cluster;
            config.numAttrs = 1;
            int n = 0;
            WB_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, KERNEL, &config));
            if (n < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
            return n;
        }();
        return clusters;
    }
}

// A persistent grid: one block per tile, or per tile group of CLUSTER tiles (TileGroups), up to as
// many clusters as run at once; a multiple of CLUSTER either way.
template <class Cfg, auto KERNEL>
dim3 persistent_grid(int M, int N) {
    const int groups =
        TileGroups{wb::ceil_div(M, Cfg::BM), wb::ceil_div(N, Cfg::BN), Cfg::CLUSTER, Cfg::CLUSTER_ALONG_N}.count();
    return dim3(std::min(groups, resident_clusters<Cfg, KERNEL>()) * Cfg::CLUSTER);
}

// What every launcher tells the epilogue: the shape, alpha and beta, C and how C may be written.
// pairs: whether the epilogue stores two neighbouring columns at once where C allows it; box_rows x
// box_cols: the box of its TMA stores (0 rows: it stores without TMA). band: the tile order's band
// (the ladder's kBand; lab/tune_09 sweeps it).
inline void describe_c(WgmmaParams& p, int M, int N, int K, float alpha, float beta, float* C, bool pairs,
                       int box_rows, int box_cols, int band = kBand) {
    p.M = M;
    p.N = N;
    p.K = K;
    p.alpha = alpha;
    p.beta = beta;
    p.C = C;
    p.group_rows = band;
    p.c_pairs = pairs && reinterpret_cast<uintptr_t>(C) % 8 == 0 && N % 2 == 0;
    p.c_tma = box_rows > 0 && tma_can_read(C, size_t(N));
    if (p.c_tma) p.map_c = make_tile_map(C, M, N, N, box_rows, box_cols);
}
// The WgmmaTiling steps: pairs where C allows them, step 5's 64-row chunks for the TMA stores.
template <class Cfg>
void describe_c(WgmmaParams& p, int M, int N, int K, float alpha, float beta, float* C, int band = kBand) {
    describe_c(p, M, N, K, alpha, beta, C, true, Cfg::TMA_STORE ? 64 : 0, Cfg::C_CHUNK_COLS, band);
}

// The shared part of every launcher: make A and B readable by TMA (padded or transposed copies
// where needed), describe them, and launch KERNEL with the grid the configuration asks for. BAND:
// the tile order's band, a launch parameter (the kernel reads it from p.group_rows), not a kernel's.
template <class Cfg, auto KERNEL, int BAND = kBand>
void launch_wgmma(int M, int N, int K, float alpha, const typename Cfg::T* A, const typename Cfg::T* B, float beta,
                  float* C, cudaStream_t stream) {
    using T = typename Cfg::T;
    // Scratch for the copies, A's first (both may be needed at once). TF32 always copies B: its
    // transpose, N x K, with the pitch rounded up to 16 bytes.
    const bool pad_a = !tma_can_read(A, size_t(K));
    const bool copy_b = Cfg::B_K_MAJOR || !tma_can_read(B, size_t(N));
    const size_t a_elems = pad_a ? size_t(M) * padded_pitch<T>(K) : 0;
    const size_t b_elems = !copy_b ? 0 : Cfg::B_K_MAJOR ? size_t(N) * padded_pitch<T>(K) : size_t(K) * padded_pitch<T>(N);
    T* scratch = (pad_a || copy_b) ? static_cast<T*>(pad_workspace((a_elems + b_elems) * sizeof(T) + 16)) : nullptr;
    const TmaOperand<T> a = tma_operand(A, M, K, scratch, stream);

    WgmmaParams p;
    p.map_a = make_tile_map(a.base, M, K, a.pitch, Cfg::BM, Cfg::BK);
    if constexpr (Cfg::B_K_MAJOR) {
        const TmaOperand<T> bt = transposed_operand(B, K, N, scratch + a_elems, stream);
        p.map_b = make_tile_map(bt.base, N, K, bt.pitch, Cfg::B_BOX_ROWS, Cfg::BK);
    } else {
        const TmaOperand<T> b = tma_operand(B, K, N, scratch + a_elems, stream);
        p.map_b = make_tile_map(b.base, K, N, b.pitch, Cfg::BK, 64);
    }
    describe_c<Cfg>(p, M, N, K, alpha, beta, C, BAND);

    const int tiles_m = wb::ceil_div(M, Cfg::BM), tiles_n = wb::ceil_div(N, Cfg::BN);
    dim3 grid;
    if constexpr (Cfg::PERSISTENT)  // one block per SM, or as many clusters as fit at once
        grid = persistent_grid<Cfg, KERNEL>(M, N);
    else if constexpr (Cfg::PRODUCER)
        grid = dim3(tiles_m * tiles_n);  // warp_specialized_kernel numbers its tiles itself
    else
        grid = dim3(tiles_n, tiles_m);   // wb::this_block_tile reads (x, y)
    wb::launch_tiled<KERNEL, Cfg::THREADS, Cfg::SMEM_BYTES>(p, grid, stream);
}

// The launcher of a ladder row: the harness's signature for the configuration's input type. The
// ladder runs every row with the band kBand; lab/tune_09 names others.
template <class Cfg, int BAND = kBand>
void run_step(int M, int N, int K, float alpha, const typename Cfg::T* A, const typename Cfg::T* B, float beta,
              float* C, cudaStream_t stream) {
    static_assert(BAND >= 1, "a band holds at least one row of tiles (or of tile groups)");
    launch_wgmma<Cfg, kernel_for<Cfg>(), BAND>(M, N, K, alpha, A, B, beta, C, stream);
}

template <class Cfg>
wb::KernelInfo info() {
    return {(const void*)kernel_for<Cfg>(), Cfg::THREADS, Cfg::SMEM_BYTES};
}

// Step 12's launcher: step 5's configuration and roles (EpilogueOverlap128x256 is step 5's
// configuration with the epilogue's barriers added), so it names its own kernel rather than going
// through kernel_for.
template <class T>
void run_epilogue_overlap(int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C,
                          cudaStream_t stream) {
    using Cfg = EpilogueOverlap128x256<T>;
    launch_wgmma<Cfg, epilogue_overlap_kernel<Cfg>>(M, N, K, alpha, A, B, beta, C, stream);
}

// The launcher of steps 7 and 10 (FP8 E4M3): A is M x K, Bt is N x K, both read along K by TMA; a
// row of fewer than a multiple of 16 bytes (K % 16 != 0) or a pointer off 16 bytes goes through the
// padded copy, inside the timed call. The scales stay device pointers for the kernel to read. Bt's
// box is B_BOX_ROWS rows: the whole tile, or in a cluster each block's share of it.
template <class Cfg>
void run_fp8(int M, int N, int K, float alpha, wb::Fp8Operand A, wb::Fp8Operand Bt, float beta, float* C,
             cudaStream_t stream) {
    using T = typename Cfg::T;
    static_assert(sizeof(T) == 1 && Cfg::B_K_MAJOR, "an FP8 configuration");
    const bool pad_a = !tma_can_read(A.data, size_t(K)), pad_b = !tma_can_read(Bt.data, size_t(K));
    const size_t a_elems = pad_a ? size_t(M) * padded_pitch<T>(K) : 0;
    const size_t b_elems = pad_b ? size_t(N) * padded_pitch<T>(K) : 0;
    T* scratch = (pad_a || pad_b) ? static_cast<T*>(pad_workspace(a_elems + b_elems + 16)) : nullptr;
    const TmaOperand<T> a = tma_operand(A.data, M, K, scratch, stream);
    const TmaOperand<T> bt = tma_operand(Bt.data, N, K, scratch + a_elems, stream);

    Fp8Params p;
    p.map_a = make_tile_map(a.base, M, K, a.pitch, Cfg::BM, Cfg::BK);
    p.map_b = make_tile_map(bt.base, N, K, bt.pitch, Cfg::B_BOX_ROWS, Cfg::BK);
    describe_c<Cfg>(p, M, N, K, alpha, beta, C);
    p.scale_a = A.scale;
    p.scale_b = Bt.scale;
    constexpr auto kernel = kernel_for<Cfg>();
    wb::launch_tiled<kernel, Cfg::THREADS, Cfg::SMEM_BYTES>(p, persistent_grid<Cfg, kernel>(M, N), stream);
}

// Step 9's launcher (TF32, A in registers): B is read as it is, K x N, by boxes of BK rows x 32
// columns; A by boxes of BM rows x BK k, as every step reads it (in step 11's clusters, BM / CLUSTER
// rows: each block's share). Neither is transposed; either is padded where TMA cannot read it. C gets
// its own map, boxes of 32 x 32 (the transposing epilogue's). The grid: persistent, one block per SM
// at most, or as many clusters as run at once.
template <class Cfg, auto KERNEL>
void launch_tf32_rs(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                    cudaStream_t stream) {
    const bool pad_a = !tma_can_read(A, size_t(K)), pad_b = !tma_can_read(B, size_t(N));
    const size_t a_elems = pad_a ? size_t(M) * padded_pitch<float>(K) : 0;
    const size_t b_elems = pad_b ? size_t(K) * padded_pitch<float>(N) : 0;
    float* scratch = (pad_a || pad_b) ? static_cast<float*>(pad_workspace((a_elems + b_elems) * sizeof(float) + 16))
                                      : nullptr;
    const TmaOperand<float> a = tma_operand(A, M, K, scratch, stream);
    const TmaOperand<float> b = tma_operand(B, K, N, scratch + a_elems, stream);

    WgmmaParams p;
    p.map_a = make_tile_map(a.base, M, K, a.pitch, Cfg::BM / Cfg::CLUSTER, Cfg::BK);
    p.map_b = make_tile_map(b.base, K, N, b.pitch, Cfg::BK, Cfg::B_BOX_COLS);
    // No pairs: the epilogue writes single floats, whose neighbours are rows of C, not columns.
    describe_c(p, M, N, K, alpha, beta, C, false, Cfg::C_BOX_ROWS, Cfg::C_BOX_COLS);
    wb::launch_tiled<KERNEL, Cfg::THREADS, Cfg::SMEM_BYTES>(p, persistent_grid<Cfg, KERNEL>(M, N), stream);
}
inline void run_tf32_rs(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                        cudaStream_t stream) {
    launch_tf32_rs<Tf32RsTiling, tf32_rs_kernel<Tf32RsTiling>>(M, N, K, alpha, A, B, beta, C, stream);
}

// Step 11's launcher: step 9's, in clusters of two blocks along n that share A's tile.
inline void run_tf32_multicast(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                               cudaStream_t stream) {
    launch_tf32_rs<Tf32MulticastTiling, tf32_multicast_kernel<Tf32MulticastTiling>>(M, N, K, alpha, A, B, beta, C,
                                                                                      stream);
}

// ---- The ladder ---------------------------------------------------------------------------------------
// Every row needs compute capability 9.0 exactly (sm_90a code runs on no other GPU); the program
// checks that before it starts (09_hopper_wgmma.cu).
// One table per 16-bit input type, built from the same rows.
template <class T>
std::vector<wb::Gemm16Variant<T>> hopper_ladder() {
    return {
        {"wgmma_64x128", run_step<Wgmma64x128<T>>,
         "TMA ring of 4 stages + one warpgroup issuing m64n128k16 wgmmas; thread 0 copies", info<Wgmma64x128<T>>(), 90},
        {"wgmma_128x256", run_step<Wgmma128x256<T>>,
         "two warpgroups, 128 x 256 tile, m64n256k16 (128 accumulators per thread)", info<Wgmma128x256<T>>(), 90},
        {"warp_specialized", run_step<WarpSpecialized128x256<T>>,
         "producer warpgroup (TMA only, setmaxnreg 40) + two consumer warpgroups (232)",
         info<WarpSpecialized128x256<T>>(), 90},
        {"persistent", run_step<Persistent128x256<T>>,
         "one block per SM over all tiles in bands of 8 rows; copies run ahead into the next tile",
         info<Persistent128x256<T>>(), 90},
        {"cluster_multicast", run_step<Cluster2Persistent128x256<T>>,
         "clusters of 2 blocks share each B box by TMA multicast; C leaves through shared memory by TMA stores",
         info<Cluster2Persistent128x256<T>>(), 90},
        {"pingpong", run_step<Pingpong128x128<T>>,
         "a 128 x 128 tile per consumer; consumers take turns on the tensor cores, one's stores under the other's math",
         info<Pingpong128x128<T>>(), 90},
        // Step 12.
        {"epilogue_overlap", run_epilogue_overlap<T>,
         "step 5 whose epilogue borrows 2 ring slots: C staged whole, stored by another thread under the next k-loop",
         {(const void*)epilogue_overlap_kernel<EpilogueOverlap128x256<T>>, EpilogueOverlap128x256<T>::THREADS,
          EpilogueOverlap128x256<T>::SMEM_BYTES},
         90},
    };
}

inline const std::vector<wb::HgemmVariant> kHgemmVariants = hopper_ladder<__half>();
inline const std::vector<wb::BgemmVariant> kBgemmVariants = hopper_ladder<__nv_bfloat16>();

// Step 6: TF32 through wgmma (k = 8) on FP32 inputs, the persistent pipeline of step 4; B reaches
// it transposed (a copy inside the timed call: TF32 wgmma has no transposed B). Step 9: the same
// pipeline on the transposed product, B read as it is. Step 11: step 9 in clusters sharing A.
inline const std::vector<wb::SgemmVariant> kTf32Variants = {
    {"tf32_persistent", run_step<Persistent128x256<float>>,
     "step 4's pipeline on FP32 inputs read as TF32 (m64n256k8), B transposed first", wb::Precision::tf32,
     info<Persistent128x256<float>>(), 90},
    {"tf32_rs", run_tf32_rs,
     "C^T = B^T A^T: wgmma's A loaded into registers from B as it is (no transposed copy), A's tile as wgmma's B",
     wb::Precision::tf32, {(const void*)tf32_rs_kernel<Tf32RsTiling>, Tf32RsTiling::THREADS, Tf32RsTiling::SMEM_BYTES},
     90},
    {"tf32_multicast", run_tf32_multicast,
     "step 9 in clusters of 2 along n: each block multicasts half of A's tile into both (A read once per two tiles)",
     wb::Precision::tf32,
     {(const void*)tf32_multicast_kernel<Tf32MulticastTiling>, Tf32MulticastTiling::THREADS,
      Tf32MulticastTiling::SMEM_BYTES},
     90},
};

// Step 7: FP8 E4M3 inputs with per-tensor scales (m64n256k32), B given as N x K, step 4's
// persistent pipeline with step 5's TMA-store epilogue. Step 10: the same in step 5's clusters.
inline const std::vector<wb::Fp8gemmVariant> kFp8Variants = {
    {"fp8_e4m3", run_fp8<Fp8Persistent128x256>,
     "E4M3 A and B^T (N x K) with per-tensor scales, m64n256k32; step 4's pipeline, step 5's TMA-store epilogue",
     info<Fp8Persistent128x256>(), 90},
    {"fp8_multicast", run_fp8<Fp8Cluster2Persistent128x256>,
     "step 7 in clusters of 2: each block multicasts half of B^T's rows into both (B read once per two tiles)",
     info<Fp8Cluster2Persistent128x256>(), 90},
};

}  // namespace ch09
