// step7_tf32_wmma.cuh - chapter 06, step 7 (tf32_wmma): step 6's kernel on FP32 inputs, which the
// tensor core reads as TF32 (sm_80+): m16n16k8 fragments, each element rounded once after its load,
// and the fragments loaded with their address space spelled out.
#pragma once

#include "step6_128x256_swizzle.cuh"

namespace ch06 {

// TF32 is not a storage type: a TF32 fragment holds ordinary floats, and the tensor core uses only
// their sign, exponent and top 10 mantissa bits. tf32_round (below) rounds a float to the nearest
// of those; without it the hardware simply ignores the low 13 bits, which truncates. The
// reference of the harness rounds to nearest too.
//
// The TF32 types exist only where the compiler targets sm_80 or newer. nvcc compiles this header
// once for the host and once per GPU architecture; in the sm_75 pass Tf32Inputs has no fragments,
// and its kernels compile to a trap that the launchers never reach (they refuse GPUs below 8.0).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WB06_TF32_WMMA 0
#else
#define WB06_TF32_WMMA 1
#endif

// Rounding a float to TF32. wmma::__float_to_tf32 is PTX cvt.rna.tf32.f32: to nearest, ties away
// from zero, 2 instructions per element: a compare that leaves Inf and NaN alone, and an integer
// add of half a TF32 unit (the result keeps its 13 low bits: the tensor core ignores them). Hopper
// added cvt.rn.tf32.f32, to nearest with ties to even (PTX 7.8, sm_90): one instruction (F2FP).
// The two differ only on a tie, when the 13 dropped bits are exactly 1 0000 0000 0000 (one input in
// 8192), by one TF32 unit; the checker's tolerance allows that (it allows truncation,
// common/numerics.cpp). The kernels round with TIES_EVEN = true: ties to even on sm_90, ties away
// (the only choice there) on sm_80 to sm_89.
template <bool TIES_EVEN = true>
__device__ __forceinline__ float tf32_round(float x) {
#if WB06_TF32_WMMA
    unsigned r;
#if __CUDA_ARCH__ >= 900
    if constexpr (TIES_EVEN) {
        asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
        return __uint_as_float(r);
    }
#endif
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
#else
    return x;  // sm_75 pass: never reached (no TF32 kernel runs there)
#endif
}

struct Tf32Inputs {
    using Element = float;
    static constexpr int FRAG_K = 8;
    static constexpr int CHUNK = 16 / int(sizeof(Element));
    static constexpr int kMinCc = 80;  // TF32 tensor cores: Ampere and later
#if WB06_TF32_WMMA
    static constexpr bool kCompiled = true;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, 8, float>;
    // Every element of a fragment once, right after its load: each fragment of A is then used FN
    // times and each fragment of B FM times, so the rounding is paid once per use of many.
    template <class Frag>
    __device__ static void round_inputs(Frag& f) {
#pragma unroll
        for (int e = 0; e < f.num_elements; ++e) f.x[e] = tf32_round(f.x[e]);
    }
    // A fragment of A or B from shared memory. wmma::load_matrix_sync on a TF32 fragment takes a
    // generic pointer, and nvcc keeps the load generic even when the pointer points into shared
    // memory: each fragment becomes 4 generic loads (LD.E) with 64-bit address arithmetic, where
    // FP16 gets one ldmatrix. The PTX instruction behind load_matrix_sync, wmma.load, takes a state
    // space: naming .shared, with a 32-bit shared address, gives 4 shared loads (LDS). Same
    // instruction, same opaque fragment. (volatile and the "memory" clobber keep the compiler from
    // moving a load across the main loop's barriers.)
    template <class Frag>
    __device__ static void load_shared(Frag& f, const float* p, unsigned ldm) {
        static_assert(std::is_same<Frag, FragA>::value || std::is_same<Frag, FragB>::value, "A or B");
        const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
        unsigned r[4];
        if constexpr (std::is_same<Frag, FragA>::value)
            asm volatile("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;\n"
                         : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                         : "r"(addr), "r"(ldm)
                         : "memory");
        else
            asm volatile("wmma.load.b.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;\n"
                         : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                         : "r"(addr), "r"(ldm)
                         : "memory");
#pragma unroll
        for (int e = 0; e < 4; ++e) f.x[e] = __uint_as_float(r[e]);
    }
    static_assert(FragA::num_elements == 4 && FragB::num_elements == 4,
                  "a TF32 m16n16k8 fragment of A or B is 4 floats");
#else
    static constexpr bool kCompiled = false;  // sm_75 pass: no TF32 tensor cores
#endif
};

// 8 warps of 64x32, BK = 16 floats, 3 stages. The padding differs from FP16 because the fragments
// are read 4 bytes per lane, lanes spread over 8 rows and 4 columns of A (4 rows and 8 columns of
// B): the row length in floats must be 4 (mod 8) for A (SKEW_A 4) and 8 (mod 32) for B (SKEW_B 8).
using Tf32Wmma128x128_3stage = Tiling<Tf32Inputs, 128, 128, 16, 64, 32, 3, 4, 8>;

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) tf32_wmma(WmmaArgs<float> g) {
    static_assert(std::is_base_of<Tf32Inputs, typename Cfg::Inputs>::value, "a Tiling of Tf32Inputs");
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Cfg::Inputs::kCompiled) {
        float* smem = reinterpret_cast<float*>(smem_bytes);
        const BlockCoord t = block_coord<Cfg>(g);
        const int warp = threadIdx.x / 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;

        Accumulators<Cfg> acc;
        zero_accumulators<Cfg>(acc);
        mainloop_cp_async_ring<Cfg, VEC>(g, t, smem, [&](const float* As, const float* Bs) {
            mma_stage<Cfg>(As, Bs, warp_row, warp_col, acc);  // Tf32Inputs::load_shared, round_inputs
        });

        __syncthreads();
        float* warp_stage = reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE;
        epilogue_staged<Cfg>(g, t, warp_row, warp_col, acc, warp_stage);
    } else {
        __trap();  // TF32 in an sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// SgemmFn. GROUP: tile rows per band of the block order (step 6).
template <class Cfg, int GROUP = kBand>
void launch_tf32_wmma(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C,
                      cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, tf32_wmma<Cfg, true>, tf32_wmma<Cfg, false>>("TF32 WMMA", GROUP, M, N, K, alpha, A, B,
                                                                      beta, C, stream);
}

}  // namespace ch06
