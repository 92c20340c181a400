// cutlass_hopper.cuh - the CUTLASS 3.x kernel of the Hopper rows: a warp-specialized TMA + wgmma
// GEMM, FP32 accumulation and output, for a 16-bit input type. cutlass_hopper_fp16.cu and
// cutlass_hopper_bf16.cu instantiate it, one input type each, so the two (slow) compiles run side
// by side.
//
// Built only when CUTLASS is found and ARCH includes sm_90, and then for sm_90a alone (wgmma and
// the TMA descriptors exist only in the "a" variant of sm_90: code built for it runs on H100/H200
// and on no other GPU). These rows are the library reference that chapter 09's hand-written
// Hopper kernels are measured against, beside cuBLAS.
//
// CUTLASS 3.x builds a kernel from two "collectives", each assembled by a builder from a few
// choices:
//   mainloop  how A and B tiles travel: TMA copies into a ring of shared-memory stages, guarded by
//             mbarriers, consumed by wgmma (warpgroup-wide MMA that reads its operands straight
//             from shared memory). "Warp-specialized cooperative": one producer warpgroup issues
//             the TMA copies, two consumer warpgroups share each 128 x 128 tile of C and run the
//             wgmma's; the stage count is whatever shared memory allows after the epilogue's part.
//   epilogue  how the accumulators become C: D = alpha * acc + beta * C, staged through shared
//             memory and stored with TMA. It loads C only when beta != 0 (the fusion's
//             is_C_load_needed), so beta = 0 never reads C.
// GemmUniversal joins them into a kernel; GemmUniversalAdapter gives it the familiar
// can_implement / initialize / run interface of the 2.x device API.
#pragma once

#include <stdexcept>
#include <string>

#include "aligned_operands.cuh"
#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass_gemms.cuh"

namespace ch07 {

using Row = cutlass::layout::RowMajor;

// Every operand row is one 16-byte vector wide at least (TMA's rule for addresses and pitches):
// 8 elements of a 16-bit input, 4 floats of C.
constexpr int kInputVector = 8;
constexpr int kOutputVector = 4;

// The epilogue, shared by both input types: D = alpha * acc + beta * C in FP32, a 128 x 128 tile
// of C per block. (Named at namespace scope: inside a class template, g++ misreads the builder.)
using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;  // M x N of C, K per stage
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;    // one block per cluster
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto,
    float, float,                    // accumulator, and the type alpha and beta are applied in
    float, Row, kOutputVector,       // C: type, layout, vector width
    float, Row, kOutputVector,       // D (the same buffer as C here)
    cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

// The mainloop and the kernel for 16-bit input type `Input` (cutlass::half_t, cutlass::bfloat16_t).
template <class Input>
using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp,
    Input, Row, kInputVector,        // A: M x K, row-major (K contiguous)
    Input, Row, kInputVector,        // B: K x N, row-major (N contiguous: wgmma reads it transposed)
    float,                           // accumulator
    TileShape, ClusterShape,
    // As many stages as fit next to the epilogue's shared memory.
    cutlass::gemm::collective::StageCountAutoCarveout<int(sizeof(typename Epilogue::SharedStorage))>,
    cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

// (M, N, K, batch count): one GEMM, batch 1.
template <class Input>
using WgmmaGemm = cutlass::gemm::device::GemmUniversalAdapter<
    cutlass::gemm::kernel::GemmUniversal<cute::Shape<int, int, int, int>, Mainloop<Input>, Epilogue>>;

inline void check_status(cutlass::Status status, const char* kernel, const char* step) {
    if (status != cutlass::Status::kSuccess)
        throw std::runtime_error(std::string(kernel) + ": CUTLASS " + step + " failed: " +
                                 cutlassGetStatusString(status));
}

// The kernel's own scratch memory (its tile scheduler may ask for some): one growing buffer.
struct CutlassWorkspace;  // the tag of this buffer
inline void* kernel_workspace(size_t bytes) { return wb::scratch_buffer<CutlassWorkspace>(bytes); }

// T is the workbook's type (__half, __nv_bfloat16), Input CUTLASS's name for the same 16 bits.
template <class Input, class T>
void run_wgmma(const char* name, int M, int N, int K, float alpha, const T* A, const T* B, float beta, float* C,
               cudaStream_t stream) {
    static_assert(sizeof(Input) == sizeof(T), "CUTLASS's type must have the workbook type's bits");
    using Gemm = WgmmaGemm<Input>;
    using StrideA = typename Gemm::GemmKernel::StrideA;
    using StrideB = typename Gemm::GemmKernel::StrideB;
    using StrideC = typename Gemm::GemmKernel::StrideC;
    using StrideD = typename Gemm::GemmKernel::StrideD;

    // sm_90a code runs on compute capability 9.0 only; say so instead of "no kernel image".
    const wb::DeviceFacts& dev = wb::current_device();
    if (dev.cc_number() != 90)
        throw std::runtime_error(std::string(name) + ": built for sm_90a (Hopper) only; this GPU is sm_" +
                                 std::to_string(dev.cc_number()));

    const AlignedOperands<T, kInputVector> op(M, N, K, A, B, beta, C, stream);
    const int m = op.M(), n = op.N(), k = op.K();
    // CuTe strides, in the (rows, columns, batch) order of each operand as CUTLASS 3 sees it:
    // A is (M, K) with K contiguous; B is seen as (N, K), and row-major K x N storage makes N
    // the contiguous mode; C and D are (M, N) with N contiguous. The batch stride is unused.
    const StrideA stride_a = cute::make_stride(int64_t(k), cute::Int<1>{}, int64_t(m) * k);
    const StrideB stride_b = cute::make_stride(cute::Int<1>{}, int64_t(n), int64_t(n) * k);
    const StrideC stride_c = cute::make_stride(int64_t(n), cute::Int<1>{}, int64_t(m) * n);
    const StrideD stride_d = stride_c;

    typename Gemm::Arguments args;
    args.mode = cutlass::gemm::GemmUniversalMode::kGemm;
    args.problem_shape = {m, n, k, 1};
    args.mainloop.ptr_A = reinterpret_cast<const Input*>(op.A());
    args.mainloop.dA = stride_a;
    args.mainloop.ptr_B = reinterpret_cast<const Input*>(op.B());
    args.mainloop.dB = stride_b;
    args.epilogue.thread.alpha = alpha;
    args.epilogue.thread.beta = beta;
    args.epilogue.ptr_C = op.C();
    args.epilogue.dC = stride_c;
    args.epilogue.ptr_D = op.C();
    args.epilogue.dD = stride_d;
    args.hw_info.device_id = dev.id;
    args.hw_info.sm_count = dev.sms;

    Gemm gemm;
    check_status(gemm.can_implement(args), name, "can_implement");
    void* workspace = kernel_workspace(Gemm::get_workspace_size(args));
    check_status(gemm.initialize(args, workspace, stream), name, "initialize");
    check_status(gemm.run(stream), name, "run");
    WB_LAUNCH_CHECK();
    op.finish();
}

}  // namespace ch07
