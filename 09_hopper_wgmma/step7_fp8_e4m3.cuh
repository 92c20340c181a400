// step7_fp8_e4m3.cuh - step 7 of chapter 09 (variant fp8_e4m3): step 4's persistent pipeline and
// step 5's TMA-store epilogue on 1-byte inputs. A and B are FP8 E4M3 (4 exponent bits, 3 mantissa
// bits), each with one FP32 scale for the whole tensor; wgmma multiplies 32 values of k per
// instruction and accumulates in FP32; the epilogue gives back the scales:
//
//     C = alpha * scale_a * scale_b * (A8 * B8) + beta * C
//
// The ring, the copies and the descriptors do not change: a stage still holds 128 bytes of k per
// row (now 128 values), and a wgmma still reads 32 bytes of k. What changes is the shape of B. FP8
// wgmma reads both operands K-major only, so B is handed over as N x K (B^T, row-major), the layout
// cuBLASLt asks for as well ("TN"); it is copied like A, in boxes of BN rows x 128 bytes.
// No clusters yet: step 5 splits B's 64-column boxes over the two blocks, and a K-major B tile has
// no columns to split; step 10 splits it by rows instead.
#pragma once

#include "step5_cluster_multicast.cuh"
#include "wgmma_pipeline.cuh"

namespace ch09 {

// Step 7's configuration: step 4's tile and ring (4 stages of (128 + 256) x 128 bytes) and step 5's
// two 8 KB buffers of C per consumer: 225 KB of shared memory.
using Fp8Persistent128x256 = WgmmaTiling<__nv_fp8_e4m3, 128, 256, 4, 2, true, true, 1, true>;

// WgmmaParams plus the two per-tensor scales. They stay on the device (as cuBLASLt takes them):
// in a training step they come out of an amax reduction on the GPU, and reading them here costs
// no synchronisation with the host.
struct Fp8Params : WgmmaParams {
    const float* scale_a;
    const float* scale_b;
};

// Block q takes tiles q, q + gridDim.x, ... as in step 4. After a tile's last k-tile each consumer
// multiplies its accumulators by scale_a * scale_b once (the sums of E4M3 products are in "scaled
// units" until then), and the shared epilogue applies alpha and beta.
template <class Cfg>
__global__ void __launch_bounds__(Cfg::THREADS, 1) fp8_persistent_kernel(const __grid_constant__ Fp8Params p) {
    static_assert(Cfg::PRODUCER && Cfg::PERSISTENT && Cfg::CLUSTER == 1 && Cfg::TMA_STORE && Cfg::WG_MMAS == 1,
                  "step 7: a producer warpgroup, persistent blocks, one 64-row slice per consumer");
    static_assert(Cfg::ELEM == 1 && Cfg::B_K_MAJOR && Cfg::K_STEP == 32, "step 7: 1-byte inputs, B given as N x K");
    extern __shared__ uint8_t smem_raw[];
    const StageRing<Cfg> ring(smem_raw);
    const int wg = threadIdx.x / 128, lane = threadIdx.x % 32;
    const int tiles_m = wb::ceil_div(p.M, Cfg::BM), tiles_n = wb::ceil_div(p.N, Cfg::BN);
    const int tiles = tiles_m * tiles_n;
    const int first = int(blockIdx.x), step = int(gridDim.x);  // this block's tiles: first, first + step, ...
    const int k_tiles = wb::ceil_div(p.K, Cfg::BK);

    if (threadIdx.x == 0) {
        ring.init();
        tma_prefetch_map(&p.map_a);
        tma_prefetch_map(&p.map_b);
    }
    __syncthreads();

    if (wg == 0) {
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            int use = 0;  // k-tiles loaded so far by this block, over all its tiles
            for (int tile = first; tile < tiles; tile += step) {
                const wb::TileIndex t = wb::tile_of_block(tile, tiles_m, tiles_n, p.group_rows);
                for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                    const int s = use % Cfg::STAGES;
                    mbar_wait(ring.empty(s), ((use / Cfg::STAGES) & 1) ^ 1);
                    load_stage(ring, s, p, t.m * Cfg::BM, t.n * Cfg::BN, kt);
                }
            }
        }
    } else {
        setmaxnreg_inc<232>();
        const int consumer = wg - 1, wg_row0 = consumer * Cfg::WG_ROWS;
        const float scale_ab = *p.scale_a * *p.scale_b;
        auto release = [&](int s) {
            if (lane == 0) mbar_arrive(ring.empty(s));
        };
        int use = 0;  // must step exactly as the producer's
        float acc[Cfg::WG_MMAS][Cfg::BN / 2];
        for (int tile = first; tile < tiles; tile += step) {
            const wb::TileIndex t = wb::tile_of_block(tile, tiles_m, tiles_n, p.group_rows);
            zero<Cfg>(acc);
            int previous = -1;  // the slot whose wgmmas may still be running
            for (int kt = 0; kt < k_tiles; ++kt, ++use) {
                const int s = use % Cfg::STAGES;
                mbar_wait(ring.full(s), (use / Cfg::STAGES) & 1);
                mma_stage_overlapped<Cfg>(acc, ring, s, wg_row0);
                if (previous >= 0) release(previous);
                previous = s;
            }
            wgmma_wait<0>();
            fence_accumulators(acc);
            release(previous);
#pragma unroll
            for (int i = 0; i < Cfg::BN / 2; ++i) acc[0][i] *= scale_ab;
            if (p.c_tma)
                store_tile_tma<Cfg>(acc, p, ring, consumer, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
            else
                store_tile<Cfg>(acc, p, t.m * Cfg::BM + wg_row0, t.n * Cfg::BN);
        }
        if (threadIdx.x % 128 == 0) bulk_wait_group_read<0>();  // shared memory must outlive the stores
    }
    __syncwarp();
}

}  // namespace ch09
