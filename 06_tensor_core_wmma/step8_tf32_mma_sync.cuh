// step8_tf32_mma_sync.cuh - chapter 06, step 8 (tf32_mma_sync): TF32 without WMMA. mma.sync
// m16n8k8 with its documented register layout, A loaded by ldmatrix, B by plain shared loads, the
// accumulators written straight into the staging area. The tiles, copies, block order, cp.async
// ring and the second half of the staged epilogue are those of steps 4 to 7.
#pragma once

#include "step7_tf32_wmma.cuh"

namespace ch06 {

// WMMA hides which element of a tile each lane holds, so every TF32 fragment load goes through
// wmma.load: 4 loads of 4 bytes per fragment, each with its own address arithmetic, and the rounding
// is applied to an opaque array; and on sm_90 one TF32 wmma::mma_sync becomes four HMMA.1684 (k = 4)
// instructions. The PTX instruction mma.sync.m16n8k8 with .tf32 inputs is one HMMA.1688 (k = 8),
// and the PTX ISA documents its layout. With lane = 4 g + t (g = lane / 4 in 0..7, t = lane % 4):
//
//   A, 16 x 8, row-major:    a0 = A[g][t]    a1 = A[g+8][t]    a2 = A[g][t+4]    a3 = A[g+8][t+4]
//   B,  8 x 8, "col":        b0 = B[t][g]    b1 = B[t+4][g]
//   C, 16 x 8:               c0 = C[g][2t]   c1 = C[g][2t+1]   c2 = C[g+8][2t]   c3 = C[g+8][2t+1]
//
// Knowing the layout buys three more things:
//   - A in one instruction. ldmatrix (made for 16-bit data) hands lane 4 g + t the 4-byte word t of
//     row g of an 8 x 16-byte matrix: read as floats, that is A[g][t] of an 8 x 4 block, exactly a0.
//     One ldmatrix.x4 fetches a0..a3 (four 8 x 4 blocks) instead of 4 separate loads.
//   - B as plain 4-byte shared loads whose addresses are a per-lane base plus constants: no
//     per-load address arithmetic.
//   - The accumulators written straight into the epilogue's staging area, no fragment store.
// A warp tile of WM x WN is (WM / 16) x (WN / 8) mma.sync tiles.
struct Tf32MmaInputs {
    using Element = float;
    static constexpr int FRAG_K = 8;
    static constexpr int CHUNK = 16 / int(sizeof(Element));
    static constexpr int kMinCc = 80;
    static constexpr bool kCompiled = WB06_TF32_WMMA != 0;
    // Every element of A and B is rounded once, right after its load from shared memory (to
    // nearest; ties to even on sm_90, step 7). A policy of the input type, so that an experiment
    // (the lab's ties-away rounding) is another input type, not a branch in the kernel.
    __device__ __forceinline__ static unsigned round_loaded(unsigned bits) {
        return __float_as_uint(tf32_round(__uint_as_float(bits)));
    }
};

// 4 warps of 64x64, BK = 32 floats, 2 stages (70 KB: every TF32 GPU grants it). SKEW_A 4 makes rows
// of A 4 (mod 8) floats long (ldmatrix), SKEW_B 8 makes rows of B 8 (mod 32).
using Mma128x128_k32_2stage = Tiling<Tf32MmaInputs, 128, 128, 32, 64, 64, 2, 4, 8>;

template <class Cfg>
using MmaAccumulators = float[Cfg::FM][2 * Cfg::FN][4];  // [m-tile of 16][n-tile of 8][c0..c3]

template <class Cfg>
__device__ __forceinline__ void zero_mma_accumulators(MmaAccumulators<Cfg>& acc) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < 2 * Cfg::FN; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;
}

// The instructions, each one line of PTX. Shared addresses are 32-bit byte offsets
// (__cvta_generic_to_shared). The loads are volatile with a "memory" clobber, like
// Tf32Inputs::load_shared: they must stay between the main loop's barriers.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}
__device__ __forceinline__ unsigned lds32(unsigned addr) {
    unsigned v;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
// d = a * b + d on one 16x8 tile, k = 8.
__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if WB06_TF32_WMMA
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Where this lane's loads start inside a stage, in bytes; every load of the stage adds a constant.
//   A: ldmatrix.x4 takes 4 matrices of 8 rows; lanes 8 q .. 8 q + 7 name the rows of matrix q.
//      Matrix 0 = rows 0-7, columns 0-3 (a0); 1 = rows 8-15 (a1); 2 = rows 0-7, columns 4-7 (a2);
//      3 = rows 8-15, columns 4-7 (a3).
//   B: lane (g, t) reads B[t][g] and B[t + 4][g].
template <class Cfg>
__device__ __forceinline__ unsigned mma_a_lane_offset(int warp_row, int lane) {
    const int row = warp_row + lane % 8 + 8 * (lane / 8 % 2);
    const int col = 4 * (lane / 16);
    return unsigned(row * Cfg::A_LD + col) * 4u;
}
template <class Cfg>
__device__ __forceinline__ unsigned mma_b_lane_offset(int warp_col, int lane) {
    return unsigned((lane % 4) * Cfg::B_LD + warp_col + lane / 4) * 4u;
}

// One k-step's fragments of a warp: FM of A (a0..a3 each) and 2 FN n8 tiles of B (b0, b1 each),
// already rounded to TF32.
template <class Cfg>
struct Tf32Fragments {
    unsigned a[Cfg::FM][4];
    unsigned b[2 * Cfg::FN][2];
};

// k-step kk (a multiple of 8) of the stage whose tiles start at this lane's a_lane / b_lane: FM
// ldmatrix.x4 for A and 2 FN pairs of loads for B, every element rounded once after its load
// (Op::round_loaded).
template <class Cfg>
__device__ __forceinline__ void load_tf32_fragments(Tf32Fragments<Cfg>& f, unsigned a_lane, unsigned b_lane, int kk) {
    // BEGIN SOLUTION: ldmatrix_x4 per m-tile, lds32 pairs per n-tile, each element Op::round_loaded
    using Op = typename Cfg::Inputs;
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) {
        ldmatrix_x4(f.a[i], a_lane + 4u * unsigned(16 * i * Cfg::A_LD + kk));
#pragma unroll
        for (int e = 0; e < 4; ++e) f.a[i][e] = Op::round_loaded(f.a[i][e]);
    }
#pragma unroll
    for (int j = 0; j < 2 * Cfg::FN; ++j) {
        f.b[j][0] = Op::round_loaded(lds32(b_lane + 4u * unsigned(kk * Cfg::B_LD + 8 * j)));
        f.b[j][1] = Op::round_loaded(lds32(b_lane + 4u * unsigned((kk + 4) * Cfg::B_LD + 8 * j)));
    }
    // END SOLUTION
}

// FM x 2 FN mma.sync on one k-step's fragments.
template <class Cfg>
__device__ __forceinline__ void mma_tf32_fragments(MmaAccumulators<Cfg>& acc, const Tf32Fragments<Cfg>& f) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < 2 * Cfg::FN; ++j) mma_m16n8k8_tf32(acc[i][j], f.a[i], f.b[j]);
}

// One stage: per k-step of 8, its fragments, then its mma.sync.
template <class Cfg>
__device__ __forceinline__ void mma_sync_stage(unsigned a_lane, unsigned b_lane, MmaAccumulators<Cfg>& acc) {
#pragma unroll
    for (int kk = 0; kk < Cfg::BK; kk += 8) {
        Tf32Fragments<Cfg> f;
        load_tf32_fragments<Cfg>(f, a_lane, b_lane, kk);
        mma_tf32_fragments<Cfg>(acc, f);
    }
}

// The staged epilogue with a known layout: lane (g, t) writes c0, c1 to row g and c2, c3 to row
// g + 8 of the staging area, 8 bytes each (STS.64), then stage_row_to_c moves the row to C.
// (Step 9 uses it too, on FP16 inputs: T is the input type.)
template <class Cfg, class T>
__device__ __forceinline__ void epilogue_mma(const WmmaArgs<T>& g, const BlockCoord& t, int warp_row,
                                             int warp_col, MmaAccumulators<Cfg>& acc, float* warp_stage) {
    const int lane = threadIdx.x % 32, gr = lane / 4, tc = lane % 4;
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) {
#pragma unroll
        for (int j = 0; j < 2 * Cfg::FN; ++j) {
            float* p = warp_stage + gr * Cfg::STAGE_LD + 8 * j + 2 * tc;
            *reinterpret_cast<float2*>(p) = make_float2(acc[i][j][0], acc[i][j][1]);
            *reinterpret_cast<float2*>(p + 8 * Cfg::STAGE_LD) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
        __syncwarp();
        stage_row_to_c<Cfg>(g, t.m0 + warp_row + 16 * i, t.n0 + warp_col, warp_stage);
        __syncwarp();
    }
}

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) tf32_mma_sync(WmmaArgs<float> g) {
    static_assert(std::is_base_of<Tf32MmaInputs, typename Cfg::Inputs>::value, "a Tiling of Tf32MmaInputs");
    static_assert(Cfg::SKEW_A % 8 == 4, "ldmatrix reads 8 rows of 16 bytes: rows of A must be 4 (mod 8) "
                                        "floats long to be conflict-free");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Cfg::Inputs::kCompiled) {
        float* smem = reinterpret_cast<float*>(smem_bytes);
        const BlockCoord t = block_coord<Cfg>(g);
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;
        const unsigned a_lane = mma_a_lane_offset<Cfg>(warp_row, lane);
        const unsigned b_lane = mma_b_lane_offset<Cfg>(warp_col, lane);

        MmaAccumulators<Cfg> acc;
        zero_mma_accumulators<Cfg>(acc);

        mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const float* As, const float* Bs) {
            mma_sync_stage<Cfg>(static_cast<unsigned>(__cvta_generic_to_shared(As)) + a_lane,
                                static_cast<unsigned>(__cvta_generic_to_shared(Bs)) + b_lane, acc);
        });

        __syncthreads();
        epilogue_mma<Cfg>(g, t, warp_row, warp_col, acc,
                          reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE);
    } else {
        __trap();  // sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// SgemmFn. GROUP: tile rows per band of the block order (step 6).
template <class Cfg, int GROUP = kBand>
void launch_tf32_mma_sync(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                          cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, tf32_mma_sync<Cfg, true>, tf32_mma_sync<Cfg, false>>("TF32 mma.sync", GROUP, M, N, K,
                                                                              alpha, A, B, beta, C, stream);
}

}  // namespace ch06
