// 00_env_check - is this machine ready for the workbook, and what can its GPU really do?
//
// Prints the CUDA versions, every GPU's facts and limits, GPU 0's measured ceilings (kernels.cuh)
// beside the theoretical ones, a cuBLAS smoke test, the tools the Makefile targets use, and a verdict;
// each line is a key of the --json FILE it can also write (README.md says what each means).
// Run: make 00 && ./00_env_check [--quick] [--json FILE]      (from the top: make check-env)
// Exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable GPU (or no code for it).
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cuda_handles.cuh"
#include "env_report.h"
#include "gemm_harness.cuh"
#include "kernels.cuh"
#include "report.h"  // wb::utc_timestamp

// The tools where common/config.mk found them, and its line for a missing one: the chapter's
// Makefile builds them in, so make is the one place that looks and this program only reports.
#ifndef WB_TOOLS  // compiled without make (tools/check_cuda12_api.sh): no tool known to this build
#define WB_TOOLS {}
#endif

namespace ch00 {

const char* const kProg = "00_env_check";

struct Settings {
    wb::Options opt;   // only --warmup, --reps and --seed apply here
    std::string json;  // --json FILE
    bool quick = false;
};

[[noreturn]] void bad_input(const std::string& error) {
    std::fprintf(stderr, "%s: error: %s\n", kProg, error.c_str());
    std::exit(wb::kExitBadInput);
}

// The shared parser plus --json and --quick. Bad input exits 2 before any device work.
Settings parse_or_exit(int argc, char** argv) {
    Settings s;
    const std::vector<wb::ExtraOption> extras = {{"json", "FILE", &s.json, nullptr},
                                                 {"quick", "", nullptr, &s.quick}};
    std::string error;
    if (!wb::parse_options(argc, argv, s.opt, error, extras) || !check_env_options(s.opt, error))
        bad_input(error);
    if (s.opt.help) {  // not wb::usage: most of the shared GEMM options do not apply here
        std::printf("usage: %s [--quick] [--json FILE] [--warmup W] [--reps R] [--seed S] [--help]\n"
                    "  --quick: smaller measurements; --json FILE: also write it all as JSON (README.md)\n"
                    "  --warmup W, --reps R, --seed S: as in every chapter (defaults 2, 10 and 2024)\n"
                    "exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable GPU\n",
                    kProg);
        std::exit(wb::kExitOk);
    }
    if (!s.json.empty() && !wb::output_file_writable(s.json, "--json", error))  // now, not after measuring
        bad_input(error);
    return s;
}

void print(const std::string& section, const std::vector<Line>& lines) {  // aligned "key  value" lines
    std::printf("\n== %s\n", section.c_str());
    for (const Line& l : lines) std::printf("  %-30s %s\n", l.key.c_str(), shown(l).c_str());
    std::fflush(stdout);
}
std::string error_text(cudaError_t e) { return strf("%s: %s", cudaGetErrorName(e), cudaGetErrorString(e)); }

// Versions, the code compiled in, the tools make found, and the driver's parameters: all without a GPU.
Report host_facts(const Settings& s) {
    Report r;
    r.git = wb::build_git_commit();
    r.timestamp = wb::utc_timestamp();
    r.quick = s.quick;
    WB_CUDA_CHECK(cudaDriverGetVersion(&r.driver_version));  // 0 when no driver can be loaded
    WB_CUDA_CHECK(cudaRuntimeGetVersion(&r.runtime_version));
#ifdef __CUDA_ARCH_LIST__  // nvcc's list of the -gencode architectures, e.g. 750,800,900
    for (int a : {__CUDA_ARCH_LIST__}) r.built_for.push_back(a / 10);
#endif
    r.tools = WB_TOOLS;
    std::ostringstream params;  // empty where there is no NVIDIA driver
    params << std::ifstream("/proc/driver/nvidia/params").rdbuf();
    r.profiling_admin_only = profiling_admin_only(params.str());
    return r;
}

// GPU `dev`: wb::query_device's facts and the rest of cudaDeviceProp (CUDA 13 removed its clocks and
// kernelExecTimeoutEnabled: those are attributes), then a test launch.
Gpu query_gpu(int dev) {
    Gpu g;
    for (cudaError_t e : {cudaGetDeviceProperties(&g.prop, dev), cudaSetDevice(dev),
                          cudaDeviceGetAttribute(&g.watchdog, cudaDevAttrKernelExecTimeout, dev)})
        if (e != cudaSuccess && g.query_error.empty()) g.query_error = error_text(e);
    try {
        g.facts = wb::query_device(dev);
    } catch (const wb::CudaError& e) {
        if (g.query_error.empty()) g.query_error = error_text(e.code());
    }
    g.facts.id = dev;
    if (!g.query_error.empty()) return g;
    try {  // a test launch: "missing" when this binary holds no code for the GPU
        wb::probe_kernel_image();
        g.kernel_image = "ok";
    } catch (const wb::CudaError& e) {
        cudaGetLastError();  // launch errors are not sticky: clear this one
        g.kernel_image = wb::no_code_for_device(e.code()) ? "missing" : e.what();
    }
    return g;
}

// GPU 0's two ceilings (kernels.cuh), then a small SGEMM through cuBLAS checked by the harness exactly
// as every chapter's kernels are. cuBLAS has its own code, so it runs even where ours cannot.
void measure(Gpu& g, const Settings& s) {
    try {
        WB_CUDA_CHECK(cudaSetDevice(g.facts.id));
        if (g.measured()) {
            const wb::Stream stream;
            g.fma_gflops = measure_fma_gflops(s.quick ? kFmaWavesQuick : kFmaWaves, s.opt.warmup, s.opt.reps, stream);
            size_t free_bytes = 0, total_bytes = 0;
            WB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
            const size_t bytes = choose_copy_buffer_bytes(s.quick, free_bytes, size_t(g.prop.l2CacheSize));
            g.copy = measure_copy(bytes, s.opt.warmup, s.opt.reps, stream);
        }
    } catch (const wb::CudaError& e) {
        g.measure_error = e.what();
    }
    try {
        wb::GemmProblem problem(kSmokeShape, 1.0f, 0.0f, s.opt.seed);
        g.cublas = problem.verify(wb::cublas_sgemm, wb::Precision::fp32);
        if (!g.cublas->pass) g.cublas->what = g.cublas->describe();
    } catch (const std::exception& e) {  // nothing was checked: FAIL, and why
        g.cublas = wb::CheckResult{};
        g.cublas->pass = false;
        g.cublas->what = e.what();
    }
}

int run(const Settings& s) {
    Report r = host_facts(s);
    std::printf("%s: is this machine ready for the CUDA Matmul Workbook?%s\n", kProg,
                s.quick ? " (--quick: small measurements)" : "");
    std::vector<Line> cuda = version_lines(r.driver_version, r.runtime_version);
    cuda.push_back(built_for_line(r.built_for));
    print("cuda", cuda);
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {  // the error and what to do: the verdict's problem
        cudaGetLastError();
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        const std::string hidden = visible ? std::string("; CUDA_VISIBLE_DEVICES='") + visible + "' may hide it" : "";
        r.device_error = (err != cudaSuccess ? error_text(err) : "the driver reports no CUDA device") +
                         (r.driver_version == 0 || err == cudaErrorInsufficientDriver
                              ? "; install or update the NVIDIA driver, then check that 'nvidia-smi' lists your GPU"
                              : "; check that 'nvidia-smi' lists a GPU" + hidden +
                                    "; in a container, start it with the GPU passed in (docker run --gpus all)");
    }
    for (int dev = 0; err == cudaSuccess && dev < count; ++dev) {
        r.gpus.push_back(query_gpu(dev));
        print(strf("gpus[%d]", dev), gpu_lines(r.gpus.back(), r.built_for));
    }
    // The chapters run on device 0 (CUDA_VISIBLE_DEVICES picks which GPU that is): measure it.
    if (!r.gpus.empty() && r.gpus[0].query_error.empty()) {
        Gpu& g = r.gpus[0];
        if (g.measured())
            std::printf("\nmeasuring GPU 0 (%s)...\n", s.quick ? "quick" : "a few seconds");
        std::fflush(stdout);
        measure(g, s);
        if (g.measured())
            print("gpus[0].measured: the ceilings, against the peaks above", ceiling_lines(g));
        print("gpus[0].cublas_smoke", smoke_lines(g));
    }
    std::vector<Line> env;
    for (const Tool& t : r.tools) env.push_back({t.name, t.path.empty() ? t.missing : t.path});
    env.push_back(profiling_line(r.profiling_admin_only));
    print("tools", env);
    const Verdict v = judge(r);
    // Chapter 01 runs on the CPU and needs only what built this program: it is ready whenever this runs.
    std::printf("\n== verdict\n  %s\n", v.ready() ? "ready for every chapter: 01 on the CPU, 02 and later on GPU 0."
                                                  : "ready for chapter 01 (it runs on the CPU).\n"
                                                    "  NOT ready for the GPU chapters (02 and later). Fix first:");
    for (const std::string& p : v.problems) std::printf("  - %s\n", p.c_str());
    for (const std::string& n : v.notes) std::printf("  note: %s\n", n.c_str());
    if (!s.json.empty()) {
        std::ofstream out(s.json, std::ios::trunc);
        out << to_json(r);
        if (!out) bad_input("cannot write the --json file '" + s.json + "'");
        std::printf("\nwrote %s\n", s.json.c_str());
    }
    std::fflush(stdout);
    if (!v.ready()) std::fprintf(stderr, "%s: error: %s\n", kProg, v.problems[0].c_str());  // the one line
    return v.status;
}

}  // namespace ch00

int main(int argc, char** argv) {
    const ch00::Settings s = ch00::parse_or_exit(argc, argv);
    try {
        return ch00::run(s);
    } catch (const std::exception& e) {  // a CUDA call outside the guarded measurements failed
        std::fprintf(stderr, "%s: error: %s\n", ch00::kProg, e.what());
        return wb::kExitNoDevice;
    }
}
