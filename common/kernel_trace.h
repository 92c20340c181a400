// kernel_trace.h - which kernels a variant really ran on the GPU.
//
// A variant's launcher may launch one kernel, several (a copy, a transpose, the GEMM), or none of
// its own (a call into cuBLAS). The grader must know which, so that a launcher that hands the work
// to a library, or to another chapter's kernel, is named rather than scored. The harness asks the
// GPU itself: CUPTI, the profiling interface that ships with the CUDA toolkit, delivers one
// activity record per kernel that ran (its name, its shared memory, its registers), whoever
// launched it (the chapter's code, cuBLAS, CUTLASS).
//
// When the environment variable WB_KERNEL_TRACE names a file, the harness opens a window around
// each variant's launches (KernelTrace::Window: the device idle before and after) and, at the end
// of the run, appends one line per variant and kernel to that file (tab-separated):
//
//   label  kernel (mangled name)  launches  static smem B  dynamic smem B  registers/thread
//   threads per block  blocks in the grid
//
// label is "variant dtype shape" (e.g. "tiled_32 fp32 1000x1013x4097"); a window in which no kernel
// ran gets one line with kernel "-". CUPTI is loaded at run time (WB_CUPTI_LIB, else
// libcupti.so on the loader's path or in the toolkit), so nothing else changes when the variable
// is unset; when it is set and CUPTI cannot be loaded, the program says so and exits 2 (a grader
// must never take "no kernels recorded" for "no kernels ran").
#pragma once

#include <string>

namespace wb {

class KernelTrace {
public:
    // The process's trace: inactive unless WB_KERNEL_TRACE is set (then CUPTI is started here).
    static KernelTrace& get();

    bool active() const { return active_; }

    // Opens a window labelled `label` for its lifetime. Waits for the device to be idle at both
    // ends, so the kernels that run inside are exactly those launched inside. No-op when inactive.
    class Window {
    public:
        explicit Window(const std::string& label);
        ~Window();
        Window(const Window&) = delete;
        Window& operator=(const Window&) = delete;

    private:
        bool open_ = false;
    };

    // Flushes CUPTI's records and appends the lines to the file (also run at exit).
    void write();

private:
    KernelTrace();
    bool active_ = false;
};

}  // namespace wb
