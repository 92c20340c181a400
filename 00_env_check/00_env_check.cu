// 00_env_check - is this machine ready for the workbook, and what can its GPU really do?
//
// Prints the CUDA versions; every GPU's facts (the limits the later chapters design their kernels
// around); the measured ceilings of GPU 0 beside the theoretical ones (kernels.cuh); a cuBLAS smoke
// test; the tools the Makefile targets use; and a verdict. --json FILE writes it all for the report
// (keys in README.md). The rules and the JSON are in env_report.h.
//
// Run: make 00 && ./00_env_check [--quick] [--json FILE]      (from the top: make check-env)
// Exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable GPU (or no code for it).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cuda_handles.cuh"
#include "env_report.h"
#include "gemm_harness.cuh"
#include "kernels.cuh"
#include "report.h"  // wb::utc_timestamp

// The tools where common/config.mk found them, and its line for a missing one: the chapter's
// Makefile builds them in, so make is the one place that looks and this program only reports.
#ifndef WB_NVCC_PATH  // compiled without make (tools/check_cuda12_api.sh): no tool known
#define WB_NVCC_PATH ""
#define WB_NCU_PATH ""
#define WB_SANITIZER_PATH ""
#define WB_NCU_MISSING "ncu: not known to this build (make 00 builds in what make finds)"
#define WB_SANITIZER_MISSING "compute-sanitizer: not known to this build (make 00 builds in what make finds)"
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
        std::printf(
            "usage: %s [--quick] [--json FILE] [--warmup W] [--reps R] [--seed S] [--help]\n"
            "  --quick      smaller, faster measurements (for tests, sanitizers and profilers)\n"
            "  --json FILE  also write every fact and measured ceiling as JSON (keys: README.md)\n"
            "  --warmup W, --reps R  untimed and timed runs (default 2 and 10; the median is shown)\n"
            "  --seed S     seed of the cuBLAS smoke test's random data (default 2024)\n"
            "The GEMM options of the other chapters (--size, --variant, --csv, ...) do not apply.\n"
            "exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable CUDA\n"
            "device (or no code for it in this binary)\n",
            kProg);
        std::exit(wb::kExitOk);
    }
    for (int i = 1; i < argc; ++i)  // "--json=" gives an empty name
        if (std::strncmp(argv[i], "--json", 6) == 0 && s.json.empty())
            bad_input("option --json needs a file name");
    if (!s.json.empty()) {  // an unwritable path is found now, not after the measuring ("a" keeps a file)
        FILE* f = std::fopen(s.json.c_str(), "a");
        if (!f) bad_input("cannot write the --json file '" + s.json + "': " + std::strerror(errno));
        std::fclose(f);
    }
    return s;
}

void section(const std::string& title) { std::printf("\n== %s\n", title.c_str()); }
void field(const std::string& label, const std::string& text) {  // one aligned "label : text" line
    std::printf("  %-27s: %s\n", label.c_str(), text.c_str());
    std::fflush(stdout);
}
void print(const std::vector<Line>& lines) {
    for (const Line& l : lines)
        if (!l.label.empty()) field(l.label, shown(l));
}
std::string read_text_file(const char* path) {
    std::ostringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
}
std::string error_text(cudaError_t e) { return strf("%s: %s", cudaGetErrorName(e), cudaGetErrorString(e)); }

// Versions, the code compiled in, the tools make found, and /proc: all without a GPU.
Report host_facts(const Settings& s) {
    Report r;
    r.git = wb::build_git_commit();
    r.timestamp = wb::utc_timestamp();
    r.quick = s.quick;
    r.warmup = s.opt.warmup;
    r.reps = s.opt.reps;
    WB_CUDA_CHECK(cudaDriverGetVersion(&r.driver_version));  // 0 when no driver can be loaded
    WB_CUDA_CHECK(cudaRuntimeGetVersion(&r.runtime_version));
#ifdef __CUDA_ARCH_LIST__  // nvcc's list of the -gencode architectures, e.g. 750,800,900
    for (int a : {__CUDA_ARCH_LIST__}) r.built_for.push_back(a / 10);
#endif
    const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    r.tools = {tool_now("nvcc", WB_NVCC_PATH, path, "nvcc not found: install the CUDA toolkit"),
               tool_now("ncu", WB_NCU_PATH, path, WB_NCU_MISSING),
               tool_now("compute-sanitizer", WB_SANITIZER_PATH, path, WB_SANITIZER_MISSING)};
    r.profiling_admin_only = profiling_admin_only(read_text_file("/proc/driver/nvidia/params"));
    r.wsl = is_wsl(read_text_file("/proc/version"));
    return r;
}

// GPU `dev`: wb::query_device's facts, then the other limits the chapters choose their tiles against,
// each one cudaDeviceGetAttribute (CUDA 13 removed cudaDeviceProp's clocks and kernelExecTimeoutEnabled).
Gpu query_gpu(int dev) {
    using namespace json;
    Gpu g;
    auto check = [&](cudaError_t e) {  // keeps the first error; what it failed to read stays 0
        if (e != cudaSuccess && g.query_error.empty()) g.query_error = error_text(e);
        return e == cudaSuccess;
    };
    try {
        g.facts = wb::query_device(dev);
    } catch (const wb::CudaError& e) {
        check(e.code());
    }
    g.facts.id = dev;
    auto get = [&](cudaDeviceAttr what) {
        int v = 0;
        check(cudaDeviceGetAttribute(&v, what, dev));
        return v;
    };
    auto dims = [&](cudaDeviceAttr x, cudaDeviceAttr y, cudaDeviceAttr z) {
        return array({integer(get(x)), integer(get(y)), integer(get(z))});
    };
    char bus_id[32] = {};
    size_t free_bytes = 0, total_bytes = 0;
    check(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
    if (check(cudaSetDevice(dev))) check(cudaMemGetInfo(&free_bytes, &total_bytes));
    const bool timeout = get(cudaDevAttrKernelExecTimeout) != 0;
    const wb::DeviceFacts& f = g.facts;
    g.limits = {
        {"pci_bus_id", text_or_null(bus_id), "PCI bus", bus_id},
        {"sms", integer(f.sms), "SMs"},
        {"fp32_lanes_per_sm", integer(f.fp32_lanes_per_sm), "FP32 lanes / SM"},
        {"sm_clock_ghz", number(f.clock_ghz), "SM clock (max)"},
        {"memory_bytes", integer(f.global_mem_bytes), "global memory"},
        {"memory_free_bytes", integer(free_bytes), "  free now"},
        {"mem_clock_ghz", number(f.mem_clock_ghz), "memory clock (2 transfers)"},
        {"bus_width_bits", integer(f.bus_width_bits), "memory bus width (bits)"},
        {"l2_bytes", integer(get(cudaDevAttrL2CacheSize)), "L2 cache"},
        {"smem_per_block_bytes", integer(get(cudaDevAttrMaxSharedMemoryPerBlock)), "shared memory / block"},
        {"smem_per_block_optin_bytes", integer(f.smem_per_block_optin), "  with opt-in"},
        {"smem_per_sm_bytes", integer(get(cudaDevAttrMaxSharedMemoryPerMultiprocessor)),
         "shared memory / SM"},
        {"smem_reserved_per_block_bytes", integer(get(cudaDevAttrReservedSharedMemoryPerBlock)),
         "  reserved / block"},
        {"regs_per_block", integer(get(cudaDevAttrMaxRegistersPerBlock)), "registers / block (32 bit)"},
        {"regs_per_sm", integer(get(cudaDevAttrMaxRegistersPerMultiprocessor)), "registers / SM"},
        {"warp_size", integer(get(cudaDevAttrWarpSize)), "warp size"},
        {"max_threads_per_block", integer(get(cudaDevAttrMaxThreadsPerBlock)), "threads / block"},
        {"max_threads_per_sm", integer(f.max_threads_per_sm), "threads / SM"},
        {"max_blocks_per_sm", integer(get(cudaDevAttrMaxBlocksPerMultiprocessor)), "blocks / SM"},
        {"max_block_dim", dims(cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY, cudaDevAttrMaxBlockDimZ),
         "block dims"},
        {"max_grid_dim", dims(cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ),
         "grid dims"},
        {"kernel_timeout", boolean(timeout), "kernel time limit",
         timeout ? "YES: a display watchdog ends long kernels: keep launches short (see the README)"
                 : "none"},
        {"integrated", boolean(get(cudaDevAttrIntegrated) != 0), "integrated (shares CPU memory)"},
        {"ecc", boolean(get(cudaDevAttrEccEnabled) != 0), "ECC"},
    };
    if (!g.query_error.empty()) return g;
    try {  // a test launch: "missing" when this binary holds no code for the GPU
        wb::probe_kernel_image();
        g.kernel_image = "ok";
    } catch (const wb::CudaError& e) {
        cudaGetLastError();  // launch errors are not sticky: clear this one
        const cudaError_t c = e.code();
        const bool missing = c == cudaErrorNoKernelImageForDevice || c == cudaErrorInvalidKernelImage ||
                             c == cudaErrorUnsupportedPtxVersion;
        g.kernel_image = missing ? "missing" : e.what();
    }
    return g;
}

void print_gpu(const Gpu& g, const std::vector<int>& built) {
    const wb::DeviceFacts& f = g.facts;
    section(strf("GPU %d: %s", f.id, f.name.empty() ? "(unknown)" : f.name.c_str()));
    if (!g.query_error.empty()) return field("error", g.query_error);
    field("compute capability", f.cc() + " (" + g.sm() + ")");
    const std::string expected = code_for(built, f.cc_number()).text;
    field("code in this binary",
          g.kernel_image == "ok" ? "yes: a test kernel ran (" + expected + ")"
          : g.kernel_image == "missing"
              ? "NO (" + expected + "). Fix: " + wb::rebuild_hint(f.cc_major, f.cc_minor)
              : "a test kernel failed: " + g.kernel_image);
    print(g.limits);
}

// GPU 0's two ceilings (kernels.cuh), then a small SGEMM through cuBLAS checked by the harness exactly
// as every chapter's kernels are. cuBLAS has its own code, so it runs even where ours cannot.
void measure(Gpu& g, const Settings& s) {
    try {
        WB_CUDA_CHECK(cudaSetDevice(g.facts.id));
        if (g.kernel_image == "ok") {
            g.measure_ran = true;
            const wb::Stream stream;
            g.fma = measure_fma(s.quick ? kFmaWavesQuick : kFmaWaves, s.opt.warmup, s.opt.reps, stream);
            size_t free_bytes = 0, total_bytes = 0;
            int l2 = 0;
            WB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
            WB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, g.facts.id));
            g.copy = measure_copy(choose_copy_buffer_bytes(s.quick, free_bytes, size_t(l2)), s.opt.warmup,
                                  s.opt.reps, stream);
        }
    } catch (const wb::CudaError& e) {
        g.measure_error = e.what();
    }
    try {
        wb::GemmProblem problem(kSmokeShape, 1.0f, 0.0f, s.opt.seed);
        g.cublas = problem.verify(wb::cublas_sgemm, wb::Precision::fp32);
        if (!g.cublas->pass) g.cublas->what = g.cublas->describe();
    } catch (const std::exception& e) {
        g.cublas = wb::CheckResult{};
        g.cublas->pass = false;
        g.cublas->rel_err = kNotMeasured;
        g.cublas->what = e.what();
    }
}

int run(const Settings& s) {
    Report r = host_facts(s);
    std::printf("%s: is this machine ready for the CUDA Matmul Workbook?%s\n", kProg,
                s.quick ? " (--quick: small measurements)" : "");
    section("CUDA versions");
    print(version_lines(r.driver_version, r.runtime_version));
    std::string archs;
    for (int a : r.built_for) archs += strf(archs.empty() ? "sm_%d" : " sm_%d", a);
    field("this binary built for",
          (archs.empty() ? "(unknown)" : archs) + " (PTX for the last; make ARCH=sm_XY changes it)");
    if (r.wsl) field("system", "WSL2 (the GPU belongs to the Windows driver)");

    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        r.device_error = err != cudaSuccess ? error_text(err) : "the driver reports no CUDA device";
        cudaGetLastError();
        const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
        section("GPUs");
        field("usable CUDA GPUs", "none (" + r.device_error + ")");
        field("what to do",
              r.driver_version == 0 || err == cudaErrorInsufficientDriver
                  ? "install or update the NVIDIA driver, then check that 'nvidia-smi' lists your GPU"
                  : std::string("check that 'nvidia-smi' lists a GPU") +
                        (visible ? std::string("; CUDA_VISIBLE_DEVICES='") + visible + "' may hide it" : "") +
                        "; in a container, start it with the GPU passed in (docker run --gpus all)");
    }
    for (int dev = 0; err == cudaSuccess && dev < count; ++dev) {
        r.gpus.push_back(query_gpu(dev));
        print_gpu(r.gpus.back(), r.built_for);
    }
    // The chapters run on device 0 (CUDA_VISIBLE_DEVICES picks which GPU that is): measure it.
    if (!r.gpus.empty() && r.gpus[0].query_error.empty()) {
        Gpu& g = r.gpus[0];
        if (g.kernel_image == "ok")
            std::printf("\nmeasuring GPU 0 (%s)...\n", s.quick ? "quick" : "a few seconds");
        std::fflush(stdout);
        measure(g, s);
        if (g.measure_ran) {
            section("Ceilings of GPU 0: theory from the numbers above, measured here");
            print(ceiling_lines(g, r));
        }
        section("cuBLAS smoke test on GPU 0");
        field("SGEMM " + wb::to_string(kSmokeShape),
              g.cublas->pass ? strf("PASS, rel. error %.1e (%s)", g.cublas->rel_err, g.cublas->what.c_str())
                             : "FAIL: " + g.cublas->what);
    }
    section("Tools");
    for (const Tool& t : r.tools) field(t.name, describe(t));
    field("GPU performance counters",
          r.profiling_admin_only == 1   ? "root only (RmProfilingAdminOnly=1): see the README"
          : r.profiling_admin_only == 0 ? "open to every user"
                                        : "unknown (no /proc/driver/nvidia/params)");
    const Verdict v = judge(r);
    section("Verdict");
    for (const std::string& line : v.first_lines()) std::printf("  %s\n", line.c_str());
    for (const std::string& p : v.problems) std::printf("  - %s\n", p.c_str());
    for (const std::string& n : v.notes) std::printf("  note: %s\n", n.c_str());
    if (!s.json.empty()) {
        std::ofstream out(s.json, std::ios::trunc);
        out << to_json(r);
        if (!out) bad_input("cannot write the --json file '" + s.json + "'");
        std::printf("\nwrote %s\n", s.json.c_str());
    }
    std::fflush(stdout);
    // The one stderr line that a script or a student sees first.
    if (!v.ready()) std::fprintf(stderr, "%s: error: %s\n", kProg, v.problems[0].c_str());
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
