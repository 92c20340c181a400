// step9_mma_ldmatrix.cuh - chapter 06, step 9 (mma_ldmatrix): FP16 without WMMA. mma.sync m16n8k16
// on fragments that ldmatrix reads from shared tiles laid out with an XOR swizzle instead of
// padding, and the fragments of the next k-step loaded while the current ones multiply. The
// tiles, the guarded copies, the block order and the staged epilogue are those of steps 4 to 8.
#pragma once

#include "step8_tf32_mma_sync.cuh"

namespace ch06 {

// mma.sync.m16n8k16 with FP16 inputs exists from sm_80 on (sm_75 has only k = 8). In the sm_75
// pass of the default build the kernel compiles to a trap that the launcher never reaches.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define WB06_MMA_F16 0
#else
#define WB06_MMA_F16 1
#endif

// The FP16 inputs of steps 1 to 6, read by mma.sync instead of WMMA: Ampere and later.
struct Fp16MmaInputs : Fp16Inputs {
    static constexpr int kMinCc = 80;
    static constexpr bool kCompiled = WB06_MMA_F16 != 0;
};

// ---- What WMMA hides --------------------------------------------------------------------------------
// Step 6 already runs on these instructions: one FP16 wmma::mma_sync is two HMMA.16816 (two n = 8
// halves), one fragment load one ldmatrix.x4. What WMMA hides is the layout, so it works out every
// fragment address from a pointer and ldm, needs padded rows, and stores accumulators through
// store_matrix_sync. Written with the PTX instruction, the layout is ours (PTX ISA, "mma.m16n8k16",
// FP16). With lane = 4 g + t (g = lane / 4, t = lane % 4), each register holds two halves,
// (x, x + 1) along k for A and B and along n for C:
//
//   A, 16 x 16, row-major:  a0 = A[g][2t..]    a1 = A[g+8][2t..]    a2 = A[g][2t+8..]   a3 = A[g+8][2t+8..]
//   B, 16 x  8, "col":      b0 = B[2t..][g]    b1 = B[2t+8..][g]        (B[k][n], two k per register)
//   C, 16 x  8, FP32:       c0, c1 = C[g][2t], C[g][2t+1]     c2, c3 = C[g+8][2t], C[g+8][2t+1]
//
// ldmatrix.x4 reads four 8x8 matrices of halves; lanes 8q .. 8q + 7 give the addresses of the 8
// rows (16 bytes each) of matrix q, and lane 4 g + t receives, in register q, elements (g, 2t) and
// (g, 2t + 1) of matrix q. That is exactly a0..a3 above when matrix 0 is rows 0-7 / k 0-7 of the A
// tile, 1 is rows 8-15 / k 0-7, 2 is rows 0-7 / k 8-15, 3 is rows 8-15 / k 8-15: one instruction
// per 16x16 fragment of A. B sits in shared memory as k-rows of n (N contiguous), but b0 pairs two
// k of one n: the .trans form hands lane 4 g + t elements (2t, g) and (2t + 1, g) instead, which is
// b0 when the matrix is k 0-7 / n 0-7. One ldmatrix.x4.trans gives b0, b1 of two n8 tiles.
//
// Per warp tile of 64 x 64 and k-step of 16: 4 ldmatrix for A, 4 for B, then 4 x 8 = 32 mma.sync.

// ---- The swizzle: conflict-free without padding ----------------------------------------------------
// Shared memory has 32 banks of 4 bytes: a 128-byte line touches each bank once. ldmatrix reads 8
// rows of 16 bytes ("chunks") per matrix; they are served in one pass only if the 8 chunks sit in 8
// different 16-byte columns of the 128-byte lines (chunk index mod 8). In an unpadded tile they do
// not: every row of B (512 bytes) starts on bank 0, so chunk c of 8 consecutive k-rows is one
// column, 8 passes. Step 3 padded the rows; here the chunk's position inside its 128-byte line is
// XORed with a key that changes from one line-group to the next:
//
//   physical chunk = logical chunk ^ key,   key = (logical chunk / KEY_SPAN) % 8
//
// KEY_SPAN is the row (B: 32 chunks, key = k-row mod 8) or, for rows shorter than 128 bytes, the
// 128-byte line (A: 4 chunks per row, two rows per line, key = line mod 8). B, the first 128 bytes
// of k-rows 0..3: which logical chunk each of the 8 physical 16-byte columns holds:
//
//   k-row 0 (key 0):  0 1 2 3 4 5 6 7        ldmatrix.trans of chunk 0, k-rows 0..7, reads
//   k-row 1 (key 1):  1 0 3 2 5 4 7 6        physical columns 0,1,2,..,7: one pass
//   k-row 2 (key 2):  2 3 0 1 6 7 4 5        (unswizzled: column 0 eight times, 8 passes)
//   k-row 3 (key 3):  3 2 1 0 7 6 5 4
//
// The XOR only permutes chunks inside one 128-byte line, so the layout costs no memory, stays a
// bijection, and the cp.async stores stay conflict-free too: 8 lanes store the 8 chunks of one line.
// Without padding every row stays a power of two long (A 64 bytes, B 512), and every address a
// lane needs is one of a few per-lane bases plus a constant (mma16_a_lane_bytes, mma16_b_lane_bytes).
template <int ROW_CHUNKS>
__host__ __device__ constexpr int swizzle_chunk(int chunk) {
    static_assert(ROW_CHUNKS >= 2 && (ROW_CHUNKS & (ROW_CHUNKS - 1)) == 0,
                  "the swizzle needs rows of a power-of-two number of 16-byte chunks, at least 2");
    constexpr int KEY_SPAN = ROW_CHUNKS > 8 ? ROW_CHUNKS : 8;
    return chunk ^ (chunk / KEY_SPAN % 8);
}

// Rows after which the keys repeat: 8 rows of 128 bytes or more, 8 lines of shorter rows.
template <int ROW_CHUNKS>
__host__ __device__ constexpr int swizzle_period_rows() {
    return 8 * (ROW_CHUNKS > 8 ? ROW_CHUNKS : 8) / ROW_CHUNKS;
}

// Where element `e` (row-major, rows of ROW_CHUNKS chunks) of a tile lives, in elements; e is the
// first element of a chunk.
template <int ROW_CHUNKS, int CHUNK>
__host__ __device__ constexpr int swizzled(int e) {
    return swizzle_chunk<ROW_CHUNKS>(e / CHUNK) * CHUNK;
}

// 128x256 block tile, 8 warps of 64 x 64 (step 6's), BK = 32, 4 stages: 96 KB, which every GPU from
// sm_80 on grants one block (sm_86 and sm_89 stop at 99 KB), so one configuration runs everywhere
// the instruction exists. No padding (SKEW 0): the swizzle replaces it, and the fourth stage fits
// (padded as in step 6, 4 stages would take 106 KB).
using Mma128x256_k32_4stage = Tiling<Fp16MmaInputs, 128, 256, 32, 64, 64, 4, 0, 0>;

template <class Cfg>
struct SwizzledTiles {
    static constexpr int CHUNK = Cfg::Inputs::CHUNK;
    static constexpr int A_ROW_CHUNKS = Cfg::BK / CHUNK, B_ROW_CHUNKS = Cfg::BN / CHUNK;
    static constexpr int K_STEPS = Cfg::BK / 16;  // mma.sync k-steps per stage
    static_assert(Cfg::SKEW_A == 0 && Cfg::SKEW_B == 0, "the swizzle replaces the padding: SKEW 0");
    // The 8 keys cover 8 rows (rows of 128 bytes or more) or 8 lines (64-byte rows: 16 rows), so the
    // fragments of m-tile i (k-step s) lie a constant 16 i rows (16 s k-rows) after those of m-tile 0
    // (k-step 0).
    static_assert(16 % swizzle_period_rows<A_ROW_CHUNKS>() == 0, "the keys of A must repeat within 16 rows: BK >= 32");
    static_assert(16 % swizzle_period_rows<B_ROW_CHUNKS>() == 0, "the keys of B must repeat within 16 rows: BN >= 32");
    // Where the chunk that starts at element e of a stage's A (B) tile, row-major and unpadded, is stored.
    __host__ __device__ static constexpr int a_offset(int e) { return swizzled<A_ROW_CHUNKS, CHUNK>(e); }
    __host__ __device__ static constexpr int b_offset(int e) { return swizzled<B_ROW_CHUNKS, CHUNK>(e); }
};

// This lane's ldmatrix addresses inside a stage, in bytes (before the stage's base). Lanes 8q..8q+7
// name the rows of matrix q: row lane % 8 + 8 (lane / 8 % 2), chunk lane / 16 (see above).
//   a(s): the A fragment of m-tile 0 at k-step s; m-tile i adds 16 i rows.
//   b(p): the B fragments of n-tiles 2p, 2p + 1 at k-step 0; k-step s adds 16 s k-rows.
template <class Cfg>
__host__ __device__ inline unsigned mma16_a_lane_bytes(int warp_row, int lane, int s) {
    using S = SwizzledTiles<Cfg>;
    const int row = warp_row + lane % 8 + 8 * (lane / 8 % 2);
    const int col = 16 * s + S::CHUNK * (lane / 16);
    return unsigned(swizzled<S::A_ROW_CHUNKS, S::CHUNK>(row * Cfg::BK + col)) * 2u;
}
template <class Cfg>
__host__ __device__ inline unsigned mma16_b_lane_bytes(int warp_col, int lane, int p) {
    using S = SwizzledTiles<Cfg>;
    const int k = lane % 8 + 8 * (lane / 8 % 2);
    const int col = warp_col + 16 * p + S::CHUNK * (lane / 16);
    return unsigned(swizzled<S::B_ROW_CHUNKS, S::CHUNK>(k * Cfg::BN + col)) * 2u;
}

// The thread's chunks of the tiles starting at k0 (wmma_common.cuh, section 4), stored where the
// layout L puts them (L::a_offset, L::b_offset): this step's swizzle, or step 11's for TF32.
template <class Cfg, bool VEC, class L = SwizzledTiles<Cfg>>
__device__ __forceinline__ void copy_tiles_swizzled(const ChunkSources<Cfg>& src, int k0, typename Cfg::Element* As,
                                                    typename Cfg::Element* Bs) {
    using T = typename Cfg::Element;
#pragma unroll
    for (int i = 0; i < Cfg::AChunks::PER_THREAD; ++i) {
        const ChunkRef<T> ch = src.a_chunk(k0, i);
        copy_chunk_async<T, VEC>(As + L::a_offset(ch.smem), ch.src, ch.valid);
    }
    const T* b_tile = src.b_tile_start(k0);
#pragma unroll
    for (int i = 0; i < Cfg::BChunks::PER_THREAD; ++i) {
        const ChunkRef<T> ch = src.b_chunk(b_tile, k0, i);
        copy_chunk_async<T, VEC>(Bs + L::b_offset(ch.smem), ch.src, ch.valid);
    }
}

// The two new instructions, each one line of PTX (step 8 has ldmatrix_x4).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}
// d = a * b + d on one 16x8 tile, k = 16; b points at two registers (b0, b1).
__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4], const unsigned (&a)[4], const unsigned* b) {
#if WB06_MMA_F16
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// One k-step's fragments of a warp: FM of A (a0..a3 each) and FN pairs of n8 tiles of B
// (b0, b1 of n-tile 2p, then b0, b1 of n-tile 2p + 1).
template <class Cfg>
struct Fragments16 {
    unsigned a[Cfg::FM][4];
    unsigned b[Cfg::FN][4];
};

// a_stage / b_stage: shared addresses of the stage's tiles; a_lane[s] and b_lane[p] as above.
template <class Cfg>
__device__ __forceinline__ void load_fragments(Fragments16<Cfg>& f, unsigned a_stage, unsigned b_stage,
                                               const unsigned (&a_lane)[SwizzledTiles<Cfg>::K_STEPS],
                                               const unsigned (&b_lane)[Cfg::FN], int s) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i) ldmatrix_x4(f.a[i], a_stage + a_lane[s] + unsigned(16 * i * Cfg::BK) * 2u);
#pragma unroll
    for (int p = 0; p < Cfg::FN; ++p) ldmatrix_x4_trans(f.b[p], b_stage + b_lane[p] + unsigned(16 * s * Cfg::BN) * 2u);
}

template <class Cfg>
__device__ __forceinline__ void mma_fragments(MmaAccumulators<Cfg>& acc, const Fragments16<Cfg>& f) {
#pragma unroll
    for (int i = 0; i < Cfg::FM; ++i)
#pragma unroll
        for (int j = 0; j < 2 * Cfg::FN; ++j) mma_m16n8k16_f16(acc[i][j], f.a[i], &f.b[j / 2][2 * (j % 2)]);
}

// The cp.async ring of step 4 with the fragments double-buffered in registers (steps 9 and 10), and
// one change: the barrier moves from the top of a stage to just before its last k-step, so that the
// first fragments of the next stage can be loaded (after the barrier) while the last k-step of this
// one multiplies. Iteration kt first refills stage (kt - 1) % STAGES, which every warp finished
// reading before the barrier of iteration kt - 1. What a step puts in it:
//   copy(k0, stage)     this thread's copies of the tiles starting at k0 into `stage`
//   load(f, stage, s)   the warp's fragments of k-step s of `stage` into the register set f
//   mma(f)              the warp's mma.sync on the register set f
template <int STAGES, int K_STEPS, class Fragments, class Copy, class Load, class Mma>
__device__ __forceinline__ void double_buffered_ring(int k_tiles, int bk, Copy&& copy, Load&& load, Mma&& mma) {
    static_assert(STAGES >= 2, "the cp.async ring needs at least two stages");
    static_assert(K_STEPS % 2 == 0, "the fragments alternate between two register sets: an even number of "
                                    "k-steps per stage keeps that pattern the same in every stage");
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles) copy(s * bk, s);
        wb::cp_async_commit();
    }
    wb::cp_async_wait<STAGES - 2>();
    __syncthreads();
    Fragments frag[2];  // the k-step being multiplied and the next one
    load(frag[0], 0, 0);
    for (int kt = 0; kt < k_tiles; ++kt) {
        const int ahead = kt + STAGES - 1;
        if (ahead < k_tiles) copy(ahead * bk, ahead % STAGES);
        wb::cp_async_commit();
        // BEGIN SOLUTION: per k-step: prefetch the next fragments (barrier before the last), then mma
        const int stage = kt % STAGES;
#pragma unroll
        for (int s = 0; s < K_STEPS; ++s) {
            if (s + 1 < K_STEPS) {
                load(frag[(s + 1) % 2], stage, s + 1);
            } else {
                // Tile kt + 1 has landed (the same count as step 4's ring), and every warp has
                // read its last fragments of stage kt, which the next iteration refills.
                wb::cp_async_wait<STAGES - 2>();
                __syncthreads();
                if (kt + 1 < k_tiles) load(frag[(s + 1) % 2], (kt + 1) % STAGES, 0);
            }
            mma(frag[s % 2]);
        }
        // END SOLUTION
    }
    wb::cp_async_wait<0>();  // only empty groups are left; leave no copy in flight behind us
}

template <class Cfg, bool VEC>
__global__ void __launch_bounds__(Cfg::THREADS, Cfg::MIN_BLOCKS) mma_ldmatrix(WmmaArgs<__half> g) {
    static_assert(std::is_base_of<Fp16MmaInputs, typename Cfg::Inputs>::value, "a Tiling of Fp16MmaInputs");
    using S = SwizzledTiles<Cfg>;
    constexpr int STAGES = Cfg::STAGES;
    extern __shared__ __align__(128) unsigned char smem_bytes[];
    if constexpr (Cfg::Inputs::kCompiled) {
        const BlockCoord t = block_coord<Cfg>(g);  // bands of kBand tile rows (step 6)
        const int warp = threadIdx.x / 32;
        const int warp_row = (warp / Cfg::WARPS_N) * Cfg::WM;
        const int warp_col = (warp % Cfg::WARPS_N) * Cfg::WN;
        MmaAccumulators<Cfg> acc;
        zero_mma_accumulators<Cfg>(acc);

        __half* smem = reinterpret_cast<__half*>(smem_bytes);
        const unsigned smem_base = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        auto a_addr = [&](int stage) { return smem_base + unsigned(stage * Cfg::A_STAGE) * 2u; };
        auto b_addr = [&](int stage) { return smem_base + unsigned(STAGES * Cfg::A_STAGE + stage * Cfg::B_STAGE) * 2u; };
        const int lane = threadIdx.x % 32;
        unsigned a_lane[S::K_STEPS], b_lane[Cfg::FN];
#pragma unroll
        for (int s = 0; s < S::K_STEPS; ++s) a_lane[s] = mma16_a_lane_bytes<Cfg>(warp_row, lane, s);
#pragma unroll
        for (int p = 0; p < Cfg::FN; ++p) b_lane[p] = mma16_b_lane_bytes<Cfg>(warp_col, lane, p);
        const ChunkSources<Cfg> src(g, t);
        double_buffered_ring<STAGES, S::K_STEPS, Fragments16<Cfg>>(
            g.k_tiles, Cfg::BK,
            [&](int k0, int stage) {
                copy_tiles_swizzled<Cfg, VEC>(src, k0, a_stage<Cfg>(smem, stage), b_stage<Cfg>(smem, stage));
            },
            [&](Fragments16<Cfg>& f, int stage, int s) {
                load_fragments<Cfg>(f, a_addr(stage), b_addr(stage), a_lane, b_lane, s);
            },
            [&](const Fragments16<Cfg>& f) { mma_fragments<Cfg>(acc, f); });

        __syncthreads();  // the staging areas reuse the ring's memory
        epilogue_mma<Cfg>(g, t, warp_row, warp_col, acc, reinterpret_cast<float*>(smem_bytes) + warp * Cfg::WARP_STAGE);
    } else {
        __trap();  // sm_75 build: unreachable, the launcher refuses such GPUs
    }
}

// HgemmFn. GROUP: tile rows per band of the block order (step 6).
template <class Cfg, int GROUP = kBand>
void launch_mma_ldmatrix(int M, int N, int K, float alpha, const __half* A, const __half* B, float beta, float* C,
                         cudaStream_t stream) {
    static_assert(GROUP >= 1, "GROUP: at least one tile row per band");
    launch_two_paths<Cfg, mma_ldmatrix<Cfg, true>, mma_ldmatrix<Cfg, false>>("FP16 mma.sync", GROUP, M, N, K, alpha,
                                                                             A, B, beta, C, stream);
}

}  // namespace ch06
