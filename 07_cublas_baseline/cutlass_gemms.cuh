// cutlass_gemms.cuh - the CUTLASS rows of chapter 07: what they are, and how they reach the table.
//
// CUTLASS is NVIDIA's C++ template library of GEMM building blocks, the middle road between the
// hand-written kernels of chapters 02-06 and the closed, prebuilt kernels of cuBLAS. In CUTLASS a
// kernel is a TYPE: you name the element types, the layouts, the tile of a block and of a warp,
// the instruction and the pipeline depth, and the compiler builds exactly that one kernel, in your
// own build. cuBLAS ships thousands of such kernels compiled in advance and picks one per call at
// run time; CUTLASS gives you the one you named (tested by its authors for that configuration),
// and charges for it at compile time.
//
// The rows (each one configuration, chosen once, not tuned per shape):
//   cutlass_simt_sgemm    FP32 on the CUDA cores (SIMT), CUTLASS 2.x, cp.async pipeline (sm_80+)
//   cutlass_tf32_tensorop FP32 data, TF32 tensor cores, mma.sync, CUTLASS 2.x (sm_80+)
//   cutlass_fp16_tensorop FP16 in, FP32 accumulate and out, mma.sync, CUTLASS 2.x (sm_80+)
//   cutlass_fp16_wgmma    FP16 in, FP32 out: CUTLASS 3.x, TMA + wgmma, warp-specialized (sm_90a)
//   cutlass_bf16_wgmma    the same kernel for BF16 inputs (sm_90a)
// Every row keeps the workbook's contract (row-major, packed, C = alpha*A*B + beta*C, any shape,
// beta = 0 never reads C) and is verified and timed by the harness next to cuBLAS, like every
// variant. The vectorized rows need aligned operands; aligned_operands.cuh says how any shape
// gets them.
//
// Where they are built. CUTLASS headers are heavy (a kernel takes tens of seconds to compile), so
// the instantiations live in their own translation units, which the Makefile builds side by side
// and only when CUTLASS is found:
//   cutlass_ampere.cu       the three CUTLASS 2.x rows, for the chapter's architectures
//   cutlass_hopper_fp16.cu  the CUTLASS 3.x rows (kernel in cutlass_hopper.cuh), one input type
//   cutlass_hopper_bf16.cu  per file, for sm_90a only (when ARCH includes sm_90)
//   cutlass_missing.cu      stands in for those that are not built, and says why in one line
// This header is all the rest of the chapter sees: no CUTLASS include, no #ifdef.
#pragma once

#include <string>
#include <vector>

#include "gemm_harness.cuh"

namespace ch07 {

// The rows one translation unit adds to the chapter's tables.
struct CutlassRows {
    std::vector<wb::SgemmVariant> sgemm;
    std::vector<wb::HgemmVariant> hgemm;
    std::vector<wb::BgemmVariant> bgemm;
    // Empty when the rows are built; else the one line that says which are missing and how to
    // get them.
    std::string not_built;
};

// Each defined by its translation unit, or by cutlass_missing.cu when that one is not built.
CutlassRows cutlass_ampere_rows();
CutlassRows cutlass_hopper_fp16_rows();
CutlassRows cutlass_hopper_bf16_rows();

// All of them, in table order (the chapter lists them after its cuBLAS rows), with the first
// "not built" line: at most one line is printed, however many files stood in.
inline CutlassRows cutlass_rows() {
    CutlassRows all;
    for (const CutlassRows& part : {cutlass_ampere_rows(), cutlass_hopper_fp16_rows(), cutlass_hopper_bf16_rows()}) {
        all.sgemm.insert(all.sgemm.end(), part.sgemm.begin(), part.sgemm.end());
        all.hgemm.insert(all.hgemm.end(), part.hgemm.begin(), part.hgemm.end());
        all.bgemm.insert(all.bgemm.end(), part.bgemm.begin(), part.bgemm.end());
        if (all.not_built.empty()) all.not_built = part.not_built;
    }
    return all;
}

}  // namespace ch07
