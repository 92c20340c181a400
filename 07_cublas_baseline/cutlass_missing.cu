// cutlass_missing.cu - stands in for the CUTLASS translation units that are not built, so the
// chapter builds, runs and tests without them. The Makefile compiles it with WB_CUTLASS_FOUND=0
// (no CUTLASS headers: every CUTLASS row is missing) or 1 (headers found, but ARCH has no sm_90:
// only the Hopper rows are missing). The line it returns is the one the program prints.
#include "cutlass_gemms.cuh"

namespace ch07 {

#if !WB_CUTLASS_FOUND
CutlassRows cutlass_ampere_rows() {
    CutlassRows none;
    none.not_built = "CUTLASS rows not built (no CUTLASS headers found, or CUTLASS=0): python3 -m pip install "
                     "nvidia-cutlass, or make CUTLASS_INC=/path/to/cutlass/include (07's README)";
    return none;
}
#endif

CutlassRows cutlass_hopper_fp16_rows() {
    CutlassRows none;
    if (WB_CUTLASS_FOUND)
        none.not_built = "CUTLASS Hopper rows (wgmma, sm_90a) not built: ARCH has no sm_90 "
                         "(make ARCH=sm_90 07 builds them)";
    return none;
}

CutlassRows cutlass_hopper_bf16_rows() { return {}; }

}  // namespace ch07
