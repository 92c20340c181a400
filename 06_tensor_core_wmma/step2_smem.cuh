// step2_smem.cuh - chapter 06, step 2 (wmma_smem): a 128x128 block tile in shared memory, moved
// with 16-byte loads. 8 warps, each owns 64x32 of C = 4x2 fragments, and reuses every fragment of A
// it loads twice and every fragment of B four times. Load, barrier, compute, barrier.
#pragma once

#include "step1_naive.cuh"

namespace ch06 {

// 8 warps of 64x32 (4x2 fragments), one stage, rows not padded. BK = 32 halves: 64 bytes per row
// of A.
using Wmma128x128_unpadded = Tiling<Fp16Inputs, 128, 128, 32, 64, 32, 1, 0, 0>;

// The heart of every tiled WMMA step (2 to 7). Per k-step of FRAG_K a warp loads its FM fragments
// of A and FN fragments of B ONCE and issues FM x FN mma_sync with them. Loads per mma_sync:
// (FM + FN) / (FM * FN), 0.75 for 4x2 fragments instead of 2 in step 1. Fully unrolled: all
// shared-memory offsets are constants, the fragments stay in registers, and the compiler can load
// the next k-step's fragments while this one's mma_sync run.
template <class Cfg>
__device__ __forceinline__ void mma_stage(const typename Cfg::Element* As, const typename Cfg::Element* Bs,
                                          int warp_row, int warp_col, Accumulators<Cfg>& acc) {
    // BEGIN SOLUTION: per FRAG_K: FM A, FN B fragments (Op::load_shared, round_inputs); FMxFN mma_sync
    using Op = typename Cfg::Inputs;
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += Op::FRAG_K) {
        typename Op::FragA a[Cfg::FM];
        typename Op::FragB b[Cfg::FN];
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i) {
            Op::load_shared(a[i], As + (warp_row + 16 * i) * Cfg::A_LD + kk, Cfg::A_LD);
            Op::round_inputs(a[i]);
        }
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j) {
            Op::load_shared(b[j], Bs + kk * Cfg::B_LD + warp_col + 16 * j, Cfg::B_LD);
            Op::round_inputs(b[j]);
        }
#pragma unroll
        for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
            for (int j = 0; j < Cfg::FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    // END SOLUTION
}

// The thread's chunks of the next tiles pass through registers. All loads are issued first
// (load), then all stores (store): the loads of one thread are in flight together.
template <class Cfg, bool VEC>
struct TileRegisters {
    using T = typename Cfg::Element;
    uint4 a[Cfg::AChunks::PER_THREAD];
    uint4 b[Cfg::BChunks::PER_THREAD];

    __device__ __forceinline__ void load(const ChunkSources<Cfg>& src, int k0) {
#pragma unroll
        for (int i = 0; i < Cfg::AChunks::PER_THREAD; ++i) {
            const ChunkRef<T> ch = src.a_chunk(k0, i);
            a[i] = load_chunk<T, VEC>(ch.src, ch.valid);
        }
        const T* b_tile = src.b_tile_start(k0);
#pragma unroll
        for (int i = 0; i < Cfg::BChunks::PER_THREAD; ++i) {
            const ChunkRef<T> ch = src.b_chunk(b_tile, k0, i);
            b[i] = load_chunk<T, VEC>(ch.src, ch.valid);
        }
    }
    __device__ __forceinline__ void store(T* As, T* Bs) const {
        const int tid = threadIdx.x;
        using AC = typename Cfg::AChunks;
        using BC = typename Cfg::BChunks;
#pragma unroll
        for (int i = 0; i < AC::PER_THREAD; ++i)  // STS.128
            *reinterpret_cast<uint4*>(&As[AC::row(tid, i) * Cfg::A_LD + AC::col(tid)]) = a[i];
#pragma unroll
        for (int i = 0; i < BC::PER_THREAD; ++i)
            *reinterpret_cast<uint4*>(&Bs[BC::row(tid, i) * Cfg::B_LD + BC::col(tid)]) = b[i];
    }
};

// The main loop of steps 2 and 3. While a block waits for its loads here, the tensor cores of its
// SM idle unless another block is resident: the reason for step 4.
template <class Cfg, bool VEC>
__device__ __forceinline__ void mainloop_load_then_compute(const WmmaArgs<typename Cfg::Element>& g,
                                                           const BlockCoord& t, typename Cfg::Element* smem,
                                                           int warp_row, int warp_col,
                                                           Accumulators<Cfg>& acc) {
    static_assert(Cfg::STAGES == 1, "the load-then-compute loop uses one stage");
    // BEGIN SOLUTION: per kt: TileRegisters load/store to stage 0, sync, mma_stage, sync
    const ChunkSources<Cfg> src(g, t);
    for (int kt = 0; kt < g.k_tiles; ++kt) {
        TileRegisters<Cfg, VEC> next;
        next.load(src, kt * Cfg::BK);
        next.store(a_stage<Cfg>(smem, 0), b_stage<Cfg>(smem, 0));
        __syncthreads();  // the tiles are complete before any warp loads a fragment from them
        mma_stage<Cfg>(a_stage<Cfg>(smem, 0), b_stage<Cfg>(smem, 0), warp_row, warp_col, acc);
        __syncthreads();  // every warp is done with them before the next tiles overwrite them
    }
    // END SOLUTION
}

// The epilogue of steps 2 to 4: each fragment on its own (store_fragment, step 1). A fragment store
// writes 8 bytes per lane (STG.64), 8 rows of 32 bytes per instruction; with beta != 0, C is read
// the same way.
template <class Cfg>
__device__ __forceinline__ void epilogue_fragments(const WmmaArgs<typename Cfg::Element>& g,
                                                   const BlockCoord& t, int warp_row, int warp_col,
                                                   Accumulators<Cfg>& acc, float* warp_stage) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::FN; ++j)
            store_fragment(acc[i][j], g, t.m0 + warp_row + 16 * i, t.n0 + warp_col + 16 * j, warp_stage);
}

// Cfg: a Tiling of Fp16Inputs with one stage. VEC: 16-byte copies of A and B (true) or
// element-wise ones (false, for rows that do not start on 16-byte boundaries). The shared memory
// is dynamic (Cfg::SMEM_BYTES), so tiles above 48 KB work.
template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) wmma_smem(WmmaArgs<__half> g) {
    static_assert(std::is_same<typename Cfg::Inputs, Fp16Inputs>::value, "a Tiling of Fp16Inputs");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    __half* smem = reinterpret_cast<__half*>(smem_bytes);
    const BlockCoord t = block_coord<Cfg>(g);
    const int warp = threadIdx.x / 32;
    const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;  // the warp's tile inside the block tile
    const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

    Accumulators<Cfg> acc;
    zero_accumulators<Cfg>(acc);
    mainloop_load_then_compute<Cfg, VEC>(g, t, smem, warp_row, warp_col, acc);

    __syncthreads();  // all warps are done with the tiles: their memory becomes staging areas
    float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
    epilogue_fragments<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
}

// HgemmFn: any shape, any alignment.
template <class Cfg>
void launch_wmma_smem(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta, float* C,
                      cudaStream_t stream) {
    launch_two_paths<Cfg, wmma_smem<Cfg, true>, wmma_smem<Cfg, false>>("WMMA", 1, M, N, K, alpha, A, B, beta, C,
                                                                      stream);
}

}  // namespace ch06
