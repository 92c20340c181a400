// hopper_ptx.cuh - the Hopper instructions chapter 09 is built from, one small wrapper each, and
// why each exists. Everything here is PTX through inline asm (no CUTLASS, no CuTe): the point of
// the chapter is to see the machinery cuBLAS uses on sm_90. The notes (section 2) walk through each
// instruction with a picture; this file says what the kernels rely on.
//
// Built for sm_90a only (the "a" = architecture-specific features: wgmma and setmaxnreg exist on
// sm_90a and nowhere else, not even on later GPUs).
#pragma once

#include <cuda.h>  // CUtensorMap (a 128-byte opaque descriptor made on the host)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace ch09 {

// A shared-memory address as the 32-bit offset the PTX shared-state space uses.
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier: a barrier object in shared memory ----------------------------------------------
// An mbarrier counts two things per phase: arrivals (threads saying "I am done") and bytes of
// asynchronous copies still owed to it (the TMA "transaction count"). A phase completes when the
// expected arrivals have happened AND the byte count is back to zero; then the barrier flips to the
// next phase. Waiters name the phase by its parity (0, 1, 0, ...) because a ring of stages reuses
// each barrier: stage s is on its u-th use at parity u & 1.

__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(arrivals));
}

// Makes the initialised barriers visible to the other threads and to the TMA unit (the "async
// proxy") before anyone uses them; a __syncthreads() must follow.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// One arrival that also announces `bytes` of TMA traffic the current phase must wait for.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// True once the phase of parity `parity` has completed. try_wait may sleep the thread for a
// bounded time inside the instruction, so the loop around it does not burn issue slots.
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, unsigned parity) {
    uint32_t done;
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    return done != 0;
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, unsigned parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}

// ---- TMA: the tensor memory accelerator ---------------------------------------------------------
// One thread asks the TMA unit to copy a whole box of a matrix (described by a CUtensorMap made on
// the host: base address, sizes, row pitch, box size, swizzle) into shared memory. Elements outside
// the matrix are written as zeros, so the edges of any shape need no code at all. When the bytes
// have landed, the unit subtracts them from the mbarrier's transaction count.
// c0 is the column (the contiguous dimension), c1 the row.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(
            smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
}

// Fetches the descriptor into the TMA unit's cache before the first copy needs it.
__device__ __forceinline__ void tma_prefetch_map(const CUtensorMap* map) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// ---- Clusters (step 5) -----------------------------------------------------------------------------
// A thread-block cluster is a group of blocks (here 2) scheduled together on one GPC, which can read,
// write and signal each other's shared memory ("distributed shared memory"). Step 5 uses it so that
// one TMA copy of a B box lands in both blocks' shared memory ("multicast"): B is read from L2 once
// for two tiles of C.

__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

// Every thread of every block of the cluster: no block goes on (or exits) before all arrive.
// release/acquire: shared-memory writes before it (barrier initialisation) are seen after it.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// The box lands at the same shared-memory offset in every block of `mask` (bit i = cluster rank i),
// and each of them has its mbarrier at `bar`'s offset credited with the bytes it received.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                                      uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}

// An arrival on the mbarrier at `bar`'s offset in block `cta` of the cluster (mapa turns a local
// shared address into that block's address in the cluster's shared window). The arrival keeps the
// default semantics, release at CTA scope: what it announces is that this warpgroup's wgmmas have
// finished reading a slot (wgmma.wait_group already guarantees that), not data written by these
// threads that the other block must see. `.release.cluster` would make every arrival wait for a
// cluster-wide memory fence first; Nsight Compute showed step 5's consumers stalled on that fence
// ("membar") 44 % of the time.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t cta) {
    asm volatile(
        "{\n"
        ".reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
        "}\n" ::"r"(smem_u32(bar)),
        "r"(cta)
        : "memory");
}

// ---- TMA stores (step 5's epilogue) ---------------------------------------------------------------
// Ordinary stores to shared memory go through the "generic proxy", TMA reads shared memory through
// the "async proxy"; the two are not ordered with each other. fence.proxy.async makes this thread's
// earlier shared-memory writes visible to the async proxy: every writer runs it, then a barrier,
// then one thread starts the TMA store.
__device__ __forceinline__ void fence_proxy_async_smem() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// A barrier for `threads` threads only (one warpgroup), so that consumers do not wait for each other.
// Id 0 is __syncthreads()'s.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// The box at `src` to the matrix at (c0, c1): parts outside the matrix are not written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(
                     reinterpret_cast<uint64_t>(map)),
                 "r"(smem_u32(src)), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N committed stores are still READING shared memory (their buffer is free).
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// ---- wgmma: warpgroup matrix multiply-accumulate -------------------------------------------------
// A warpgroup is 4 consecutive warps (128 threads, the first warp's index a multiple of 4). One
// wgmma.mma_async computes a 64 x N x 16 product for the whole warpgroup: A and B are read straight
// from shared memory through 64-bit "matrix descriptors", D lives in registers spread over the 128
// threads (N/2 floats each). It is asynchronous: the instruction is issued and the warps go on.
//   wgmma.fence        before the first wgmma that reads accumulators written by ordinary code
//   commit_group       closes a group of issued wgmmas
//   wait_group N       waits until at most N groups are still running (their smem reads included)

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset >> 4 (LBO)
//   bits 32-45  stride-dimension byte offset >> 4 (SBO)
//   bits 62-63  swizzle: 1 = 128-byte
// With the 128-byte swizzle a tile is made of 8-row x 128-byte atoms (1024 bytes), the layout the
// TMA writes with CU_TENSOR_MAP_SWIZZLE_128B.
//   K-major operand (A here: a row holds 64 consecutive k): SBO = 1024, the step from one group
//     of 8 rows to the next; LBO is unused because 16 k (32 bytes) never leave one 128-byte row.
//   MN-major operand (B here, row-major K x N: a row holds 64 consecutive n): SBO = 1024, the step
//     from 8 k to the next 8 k; LBO = the step from one 64-column block of n to the next.
__host__ __device__ constexpr uint64_t make_smem_desc(uint32_t smem_address, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    return uint64_t((smem_address & 0x3FFFFu) >> 4) | uint64_t((lbo_bytes >> 4) & 0x3FFFu) << 16 |
           uint64_t((sbo_bytes >> 4) & 0x3FFFu) << 32 | uint64_t(1) << 62;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

// The compiler does not know that an accumulator register is being written by a wgmma still in
// flight; this empty asm "uses and redefines" it, so no read or write of it is moved across.
template <int ROWS, int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[ROWS][N]) {
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
        for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[r][i])::"memory");
}

// The same for one 64 x N accumulator held as a plain array (step 9).
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// ---- setmaxnreg: moving registers between warpgroups ----------------------------------------------
// Registers are allocated per warp at launch, the same for every warp. A producer warpgroup that
// only issues TMA copies needs few; consumers holding a 64 x 256 accumulator need many. These hand
// registers back to the SM's pool and take them from it (all 128 threads of the warpgroup execute
// it; the counts are multiples of 8 in 24..256).
template <int REGS>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(REGS));
}

// ---- The wgmma instructions the ladder uses ------------------------------------------------------
// FP16 / BF16: m64nNk16 with FP32 accumulators. The trailing immediates are
// scale-a = 1, scale-b = 1 (no negation), trans-a = 0 (A is K-major), trans-b = 1 (B is MN-major:
// our row-major B holds consecutive n in a row). `accumulate` = 0 computes D = A*B (the old D is
// ignored), 1 computes D += A*B.

// The register lists: "{%0, ..., %63}" and the matching "+f" operands.
#define WB_WGMMA_REGS_64 \
    "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" "}"

#define WB_WGMMA_ACC_64(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

#define WB_WGMMA_REGS_128 \
    "{" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" "}"

#define WB_WGMMA_ACC_128(d) \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

template <class T>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "FP16 or BF16 inputs");
    if constexpr (std::is_same_v<T, __half>) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " WB_WGMMA_REGS_64 ", %64, %65, p, 1, 1, 0, 1;\n}\n"
            : WB_WGMMA_ACC_64(d)
            : "l"(desc_a), "l"(desc_b), "r"(accumulate));
    } else {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " WB_WGMMA_REGS_64 ", %64, %65, p, 1, 1, 0, 1;\n}\n"
            : WB_WGMMA_ACC_64(d)
            : "l"(desc_a), "l"(desc_b), "r"(accumulate));
    }
}

template <class T>
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "FP16 or BF16 inputs");
    if constexpr (std::is_same_v<T, __half>) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " WB_WGMMA_REGS_128 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
            : WB_WGMMA_ACC_128(d)
            : "l"(desc_a), "l"(desc_b), "r"(accumulate));
    } else {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " WB_WGMMA_REGS_128 ", %128, %129, p, 1, 1, 0, 1;\n}\n"
            : WB_WGMMA_ACC_128(d)
            : "l"(desc_a), "l"(desc_b), "r"(accumulate));
    }
}

// TF32: FP32 values in shared memory of which the tensor core uses the top 19 bits (sign, 8-bit
// exponent, 10-bit mantissa), k = 8 per instruction. TF32 has no transpose immediates: both A and
// B must be K-major, so chapter 09 hands it a transposed copy of B (kernels.cuh).
__device__ __forceinline__ void wgmma_m64n128k8_tf32(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " WB_WGMMA_REGS_64 ", %64, %65, p, 1, 1;\n}\n"
        : WB_WGMMA_ACC_64(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WB_WGMMA_REGS_128 ", %128, %129, p, 1, 1;\n}\n"
        : WB_WGMMA_ACC_128(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// TF32 with A in registers (step 9): the 64 x 8 A operand is not read from shared memory but from
// the warpgroup's registers, four .b32 per thread (PTX ISA, "Register Fragments", wgmma m64nNk8:
// warp w of the warpgroup holds rows 16w..16w+15; lane 4g + t holds a0 = (16w + g, t),
// a1 = (16w + g + 8, t), a2 = (16w + g, t + 4), a3 = (16w + g + 8, t + 4)). Registers have no
// "major", which is why step 9 can use it for B without transposing B. The registers hold FP32
// bits; the tensor core uses their top 19 bits as TF32, as it does with the shared-memory operand.
// They must not change until the wgmma that reads them has completed (wgmma.wait_group).
__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b,
                                                        int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " WB_WGMMA_REGS_128
        ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : WB_WGMMA_ACC_128(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));
}

// FP8 E4M3 (step 6): 1-byte inputs, k = 32 per instruction (still 32 bytes of k, like the others).
// Like TF32, FP8 wgmma has no transpose immediates: the instruction only reads K-major operands
// from shared memory, so B must arrive as N x K (B^T row-major). The transpose bits exist for
// 16-bit inputs only because the tensor core can swap 2-byte elements while reading a row of
// 8 x 16-bit values; it has no such path for bytes. The product of two E4M3 values is exact in
// FP32; the accumulation inside the tensor core is the only rounding.
__device__ __forceinline__ void wgmma_m64n128k32_e4m3(float (&d)[64], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 " WB_WGMMA_REGS_64 ", %64, %65, p, 1, 1;\n}\n"
        : WB_WGMMA_ACC_64(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

__device__ __forceinline__ void wgmma_m64n256k32_e4m3(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " WB_WGMMA_REGS_128 ", %128, %129, p, 1, 1;\n}\n"
        : WB_WGMMA_ACC_128(d)
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
}

// One k-step of a 64 x N tile for one warpgroup: 32 bytes of k, that is k = 16 for FP16/BF16,
// k = 8 for TF32 (T = float), k = 32 for FP8 E4M3.
template <class T, int N>
__device__ __forceinline__ void wgmma_m64(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    static_assert(N == 128 || N == 256, "the ladder issues n = 128 or n = 256");
    if constexpr (std::is_same_v<T, float>) {
        if constexpr (N == 128)
            wgmma_m64n128k8_tf32(d, desc_a, desc_b, accumulate);
        else
            wgmma_m64n256k8_tf32(d, desc_a, desc_b, accumulate);
    } else if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
        if constexpr (N == 128)
            wgmma_m64n128k32_e4m3(d, desc_a, desc_b, accumulate);
        else
            wgmma_m64n256k32_e4m3(d, desc_a, desc_b, accumulate);
    } else {
        if constexpr (N == 128)
            wgmma_m64n128k16<T>(d, desc_a, desc_b, accumulate);
        else
            wgmma_m64n256k16<T>(d, desc_a, desc_b, accumulate);
    }
}

}  // namespace ch09

#undef WB_WGMMA_REGS_64
#undef WB_WGMMA_ACC_64
#undef WB_WGMMA_REGS_128
#undef WB_WGMMA_ACC_128
