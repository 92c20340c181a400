// ceiling_06 - how fast can mma.sync go on this GPU with nothing else in the way? Every warp keeps
// its fragments of A and B in registers and issues mma.sync on them in a loop: no loads, no
// barriers, kChains independent accumulators per warp so that no instruction waits for the one
// before it, and kBlocksPerSm blocks of 8 warps on every SM. The rates it reaches, FP16 m16n8k16 and
// TF32 m16n8k8 (both accumulating in FP32), are the ceiling chapter 06's steps are compared with in
// the notes, beside the dense peak from the device's own numbers (wb::DeviceFacts). On Hopper the
// peak belongs to wgmma (chapter 09): mma.sync is not expected to reach it there.
// Run: make -C 06_tensor_core_wmma ceiling   (or lab/ceiling_06 [--iterations N] [--csv FILE])
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../common/device.cuh"
#include "../../common/timer.cuh"

namespace ch06 {

constexpr int kThreads = 256, kBlocksPerSm = 4, kChains = 8;

// One instruction of each kind, d += a * b on a 16x8 tile; nothing in the sm_75 pass of the default
// build (the program refuses GPUs below 8.0 before launching).
struct Fp16K16 {
    static constexpr int K = 16, A_REGS = 4, B_REGS = 2;
    static constexpr const char* kName = "mma.sync.m16n8k16.f32.f16.f16.f32";
    static constexpr const char* kInput = "fp16";
    // Two halves per register, a finite value near 1 that differs from lane to lane.
    __device__ static unsigned operand(unsigned lane, int r) { return 0x3C003C00u | ((lane * 7u + r) & 0x00FF00FFu); }
    __device__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    }
};
struct Tf32K8 {
    static constexpr int K = 8, A_REGS = 4, B_REGS = 2;
    static constexpr const char* kName = "mma.sync.m16n8k8.f32.tf32.tf32.f32";
    static constexpr const char* kInput = "tf32";
    __device__ static unsigned operand(unsigned lane, int r) { return __float_as_uint(1.0f + float((lane * 7u + r) % 64) / 1024.0f); }
    __device__ static void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
            "{%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
    }
};

template <class Instr>
__global__ void __launch_bounds__(kThreads) mma_loop(int iterations, float* sink) {
    const unsigned lane = threadIdx.x % 32;
    unsigned a[Instr::A_REGS], b[Instr::B_REGS];
    for (int r = 0; r < Instr::A_REGS; ++r) a[r] = Instr::operand(lane, r);
    for (int r = 0; r < Instr::B_REGS; ++r) b[r] = Instr::operand(lane, r + 4);
    float acc[kChains][4] = {};
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) Instr::mma(acc[c], a, b);
    }
    float s = 0;
    for (int c = 0; c < kChains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    if (s == 1.2345f) sink[threadIdx.x] = s;  // keeps the loop alive; never true in practice
}

template <class Instr>
double measure(const wb::DeviceFacts& dev, int iterations, float* sink) {
    const int blocks = dev.sms * kBlocksPerSm;
    const wb::Timing t = wb::time_launches(
        [&](cudaStream_t st) { mma_loop<Instr><<<blocks, kThreads, 0, st>>>(iterations, sink); }, 2, 10, nullptr);
    const double per_mma = 2.0 * 16 * 8 * Instr::K;
    const double flops = per_mma * kChains * iterations * (double(blocks) * kThreads / 32);
    return flops / (t.ms_median * 1e6);  // GFLOP/s
}

}  // namespace ch06

namespace {

int usage(const char* why) {
    if (why) std::fprintf(stderr, "ceiling_06: error: %s\n", why);
    std::fprintf(why ? stderr : stdout, "usage: ceiling_06 [--iterations N] [--csv FILE]\n");
    return why ? 2 : 0;
}

struct Row {
    const char* instruction;
    const char* input;
    double gflops, peak;
};

}  // namespace

int main(int argc, char** argv) {
    int iterations = 20000;
    std::string csv;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") return usage(nullptr);
        if (i + 1 >= argc) return usage((arg + ": unknown option or missing value").c_str());
        if (arg == "--iterations") {
            char* end = nullptr;
            errno = 0;
            const long v = std::strtol(argv[++i], &end, 10);
            if (*argv[i] == '\0' || *end != '\0' || errno != 0 || v <= 0 || v > 100000000)
                return usage("--iterations needs a positive integer (at most 100000000)");
            iterations = int(v);
        } else if (arg == "--csv") {
            csv = argv[++i];
        } else {
            return usage(("unknown option " + arg).c_str());
        }
    }
    // The CSV is opened before any device work, so that a path that cannot be written is bad input.
    FILE* out = nullptr;
    if (!csv.empty() && !(out = std::fopen(csv.c_str(), "w"))) {
        std::fprintf(stderr, "ceiling_06: error: cannot write %s: %s\n", csv.c_str(), std::strerror(errno));
        return 2;
    }
    const wb::DeviceFacts dev = wb::require_device("ceiling_06");
    if (dev.cc_number() < 80) {
        std::fprintf(stderr, "ceiling_06: error: mma.sync m16n8k16 (FP16) and TF32 need compute capability 8.0; %s is %d.%d\n",
                     dev.name.c_str(), dev.cc_major, dev.cc_minor);
        return 3;
    }
    float* sink = nullptr;
    WB_CUDA_CHECK(cudaMalloc(&sink, ch06::kThreads * sizeof(float)));
    const Row rows[] = {
        {ch06::Fp16K16::kName, ch06::Fp16K16::kInput, ch06::measure<ch06::Fp16K16>(dev, iterations, sink),
         dev.peak_fp16_tc_gflops},
        {ch06::Tf32K8::kName, ch06::Tf32K8::kInput, ch06::measure<ch06::Tf32K8>(dev, iterations, sink),
         dev.peak_tf32_tc_gflops},
    };
    WB_CUDA_CHECK(cudaFree(sink));

    std::printf("mma.sync-only ceiling on %s (%d SMs, %.2f GHz), %d iterations, %d warps per SM, median of 10:\n",
                dev.name.c_str(), dev.sms, dev.clock_ghz, iterations, ch06::kBlocksPerSm * ch06::kThreads / 32);
    std::printf("%-36s %-5s %10s %14s %8s\n", "instruction", "input", "TFLOP/s", "peak TFLOP/s", "% peak");
    for (const Row& r : rows)
        std::printf("%-36s %-5s %10.1f %14.1f %7.1f%%\n", r.instruction, r.input, r.gflops / 1e3, r.peak / 1e3,
                    r.peak > 0 ? 100 * r.gflops / r.peak : 0.0);
    if (out) {
        std::fprintf(out, "gpu,cc,instruction,input,iterations,gflops,peak_gflops,pct_peak\n");
        for (const Row& r : rows)
            std::fprintf(out, "%s,%s,%s,%s,%d,%.1f,%.1f,%.2f\n", dev.name.c_str(), dev.cc().c_str(), r.instruction, r.input,
                         iterations, r.gflops, r.peak, r.peak > 0 ? 100 * r.gflops / r.peak : 0.0);
        std::fclose(out);
        std::printf("wrote %s\n", csv.c_str());
    }
    return 0;
}
