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

#include "env_report.h"
#include "gemm_harness.cuh"
#include "kernels.cuh"
#include "report.h"  // wb::utc_timestamp

// Where common/config.mk found the tools when it built this program (the chapter's Makefile passes
// them in): make is the one place that looks for tools, and this program reports what it found.
#ifndef WB_NVCC_PATH
#define WB_NVCC_PATH ""
#define WB_NCU_PATH ""
#define WB_SANITIZER_PATH ""
#endif

namespace {

using env::strf;
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
    if (!wb::parse_options(argc, argv, s.opt, error, extras)) bad_input(error);
    if (s.opt.help) {  // not wb::usage: most of the shared GEMM options do not apply here
        std::printf(
            "usage: %s [options]\n"
            "  --quick      smaller, faster measurements (for tests, sanitizers and profilers)\n"
            "  --json FILE  also write every fact and measured ceiling as JSON (keys: README.md)\n"
            "  --warmup W   untimed runs before timing (default 2)\n"
            "  --reps R     timed runs, each timed on its own; the median is shown (default 10)\n"
            "  --seed S     seed of the cuBLAS smoke test's random data (default 2024)\n"
            "  --help       this text\n"
            "The GEMM options of the other chapters (--size, --variant, --csv, ...) do not apply here.\n"
            "exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable CUDA device\n"
            "(or no code for it in this binary)\n",
            kProg);
        std::exit(wb::kExitOk);
    }
    if (!env::check_env_options(s.opt, error)) bad_input(error);
    for (int i = 1; i < argc; ++i)
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
void print(const std::vector<env::Line>& lines) {
    for (const env::Line& l : lines)
        if (!l.label.empty()) field(l.label, l.text);
}

std::string read_text_file(const char* path) {
    std::ostringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
}

// Versions, the code compiled in, the tools make found, and /proc: all without a GPU.
env::Report host_facts(const Settings& s) {
    env::Report r;
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
    r.tools = {env::tool_now("nvcc", WB_NVCC_PATH, path, "building the chapters"),
               env::tool_now("ncu", WB_NCU_PATH, path, "make profile-NN (Nsight Compute)"),
               env::tool_now("compute-sanitizer", WB_SANITIZER_PATH, path, "make sanitize")};
    r.profiling_admin_only = env::profiling_admin_only(read_text_file("/proc/driver/nvidia/params"));
    r.running_as_root = ::geteuid() == 0;
    r.wsl = env::is_wsl(read_text_file("/proc/version"));
    return r;
}

// "ok", "missing" (no code for this GPU in the binary) or the error of a test launch.
std::string probe_kernel_image(int dev) {
    try {
        WB_CUDA_CHECK(cudaSetDevice(dev));
        wb::probe_kernel_image();
        return "ok";
    } catch (const wb::CudaError& e) {
        cudaGetLastError();  // launch errors are not sticky: clear this one
        const cudaError_t c = e.code();
        const bool missing = c == cudaErrorNoKernelImageForDevice || c == cudaErrorInvalidKernelImage ||
                             c == cudaErrorUnsupportedPtxVersion;
        return missing ? "missing" : e.what();
    }
}

// GPU `dev`: the facts every chapter uses (wb::query_device), then the limits the chapters choose
// their tiles against, each from cudaDeviceGetAttribute (CUDA 13 removed cudaDeviceProp's clock
// fields, and kernelExecTimeoutEnabled with them). Each limit is one line of the GPU's section.
env::Gpu query_gpu(int dev) {
    env::Gpu g;
    auto check = [&](cudaError_t e) {  // keeps the first error; what it failed to read stays 0
        if (e != cudaSuccess && g.query_error.empty())
            g.query_error = strf("%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
        return e == cudaSuccess;
    };
    try {
        g.facts = wb::query_device(dev);
    } catch (const wb::CudaError& e) {
        check(e.code());
    }
    g.facts.id = dev;
    auto attribute = [&](cudaDeviceAttr what) {
        int v = 0;
        check(cudaDeviceGetAttribute(&v, what, dev));
        return v;
    };
    char bus_id[32] = {};
    check(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
    size_t free_bytes = 0, total_bytes = 0;
    if (check(cudaSetDevice(dev))) check(cudaMemGetInfo(&free_bytes, &total_bytes));
    const int l2 = attribute(cudaDevAttrL2CacheSize), warp = attribute(cudaDevAttrWarpSize);
    const int smem_block = attribute(cudaDevAttrMaxSharedMemoryPerBlock);
    const int smem_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    const int smem_reserved = attribute(cudaDevAttrReservedSharedMemoryPerBlock);
    const int regs_block = attribute(cudaDevAttrMaxRegistersPerBlock);
    const int regs_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor);
    const int threads_block = attribute(cudaDevAttrMaxThreadsPerBlock);
    const int blocks_sm = attribute(cudaDevAttrMaxBlocksPerMultiprocessor);
    const int block[3] = {attribute(cudaDevAttrMaxBlockDimX), attribute(cudaDevAttrMaxBlockDimY),
                          attribute(cudaDevAttrMaxBlockDimZ)};
    const int grid[3] = {attribute(cudaDevAttrMaxGridDimX), attribute(cudaDevAttrMaxGridDimY),
                         attribute(cudaDevAttrMaxGridDimZ)};
    g.kernel_timeout = attribute(cudaDevAttrKernelExecTimeout) != 0;
    const bool integrated = attribute(cudaDevAttrIntegrated) != 0,
               ecc = attribute(cudaDevAttrEccEnabled) != 0;

    using namespace env::json;
    using env::bytes_text;
    const wb::DeviceFacts& f = g.facts;
    const int optin = f.smem_per_block_optin, threads_sm = f.max_threads_per_sm;
    g.limits = {
        {"pci_bus_id", text_or_null(bus_id), "PCI bus", bus_id},
        {"sms", integer(f.sms), "SMs",
         strf("%d x %d FP32 lanes = %d \"CUDA cores\"", f.sms, f.fp32_lanes_per_sm,
              f.sms * f.fp32_lanes_per_sm)},
        {"fp32_lanes_per_sm", integer(f.fp32_lanes_per_sm)},
        {"sm_clock_ghz", number(f.clock_ghz), "SM clock (max)", strf("%.3f GHz", f.clock_ghz)},
        {"memory_bytes", integer(f.global_mem_bytes), "global memory",
         bytes_text(f.global_mem_bytes) + " (" + bytes_text(free_bytes) + " free)"},
        {"memory_free_bytes", integer(free_bytes)},
        {"mem_clock_ghz", number(f.mem_clock_ghz), "memory bus",
         strf("%d bits at %.3f GHz, 2 transfers per clock", f.bus_width_bits, f.mem_clock_ghz)},
        {"bus_width_bits", integer(f.bus_width_bits)},
        {"l2_bytes", integer(l2), "L2 cache", bytes_text(l2)},
        {"smem_per_block_bytes", integer(smem_block), "shared memory / block",
         bytes_text(smem_block) + " by default, " + bytes_text(optin) +
             " with cudaFuncSetAttribute (opt-in)"},
        {"smem_per_block_optin_bytes", integer(optin)},
        {"smem_per_sm_bytes", integer(smem_sm), "shared memory / SM",
         bytes_text(smem_sm) + strf(" (%d B reserved per block)", smem_reserved)},
        {"smem_reserved_per_block_bytes", integer(smem_reserved)},
        {"regs_per_block", integer(regs_block), "registers / block",
         strf("%d x 32 bit (at most 255 per thread)", regs_block)},
        {"regs_per_sm", integer(regs_sm), "registers / SM",
         strf("%d x 32 bit = ", regs_sm) + bytes_text(4.0 * regs_sm)},
        {"warp_size", integer(warp), "warp size", strf("%d threads", warp)},
        {"max_threads_per_block", integer(threads_block), "threads / block",
         strf("at most %d; block dims up to %d x %d x %d", threads_block, block[0], block[1], block[2])},
        {"max_threads_per_sm", integer(threads_sm), "threads / SM",
         strf("%d (%d warps), at most %d blocks", threads_sm, warp > 0 ? threads_sm / warp : 0, blocks_sm)},
        {"max_blocks_per_sm", integer(blocks_sm)},
        {"max_block_dim", array({integer(block[0]), integer(block[1]), integer(block[2])})},
        {"max_grid_dim", array({integer(grid[0]), integer(grid[1]), integer(grid[2])}), "grid dims",
         strf("%d x %d x %d blocks", grid[0], grid[1], grid[2])},
        {"kernel_timeout", boolean(g.kernel_timeout), "kernel time limit",
         g.kernel_timeout
             ? "YES: a display watchdog ends any kernel that runs longer than a few seconds (Windows "
               "TDR: about 2 s). Keep launches short, or use a GPU that drives no display."
             : "none"},
        {"integrated", boolean(integrated), integrated ? "integrated" : "",
         "yes: shares memory with the CPU"},
        {"ecc", boolean(ecc), "ECC", ecc ? "on" : "off"},
    };
    if (g.query_error.empty()) g.kernel_image = probe_kernel_image(dev);
    return g;
}

void print_gpu(const env::Gpu& g, const std::vector<int>& built) {
    const wb::DeviceFacts& f = g.facts;
    section(strf("GPU %d: %s", f.id, f.name.empty() ? "(unknown)" : f.name.c_str()));
    if (!g.query_error.empty()) return field("error", g.query_error);
    field("compute capability",
          f.cc() + " (" + g.sm() + ", " + env::architecture_name(f.cc_major, f.cc_minor) + ")");
    const std::string expected = env::code_for(built, f.cc_number()).text;
    field("code in this binary",
          g.kernel_image == "ok" ? "yes: a test kernel ran (" + expected + ")"
          : g.kernel_image == "missing"
              ? "NO (" + expected + "). Fix: " + wb::rebuild_hint(f.cc_major, f.cc_minor)
              : "a test kernel failed: " + g.kernel_image);
    print(g.limits);
}

// GPU 0's two ceilings (kernels.cuh), then a small SGEMM through cuBLAS checked by the harness exactly
// as every chapter's kernels are. cuBLAS has its own code, so it runs even where ours cannot.
void measure(env::Gpu& g, const Settings& s) {
    const int dev = g.facts.id;
    cudaStream_t stream = nullptr;
    try {
        WB_CUDA_CHECK(cudaSetDevice(dev));
        if (g.kernel_image == "ok") {
            g.measure_ran = true;
            WB_CUDA_CHECK(cudaStreamCreate(&stream));
            g.fma = measure_fma(s.quick ? kFmaWavesQuick : kFmaWaves, s.opt.warmup, s.opt.reps, stream);
            size_t free_bytes = 0, total_bytes = 0;
            int l2 = 0;
            WB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
            WB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
            g.copy = measure_copy(choose_copy_buffer_bytes(s.quick, free_bytes, size_t(l2)), s.opt.warmup,
                                  s.opt.reps, stream);
        }
    } catch (const wb::CudaError& e) {
        g.measure_error = e.what();
    }
    if (stream) cudaStreamDestroy(stream);
    try {
        wb::GemmProblem problem(env::kSmokeShape, 1.0f, 0.0f, s.opt.seed);
        g.cublas = problem.verify(wb::cublas_sgemm, wb::Precision::fp32);
        if (!g.cublas->pass) g.cublas->what = g.cublas->describe();
    } catch (const std::exception& e) {
        g.cublas = wb::CheckResult{};
        g.cublas->pass = false;
        g.cublas->rel_err = env::kNotMeasured;
        g.cublas->what = e.what();
    }
}

std::string no_gpu_advice(cudaError_t err, const env::Report& r) {
    if (r.driver_version == 0 || err == cudaErrorInsufficientDriver)
        return "install or update the NVIDIA driver, then check that 'nvidia-smi' lists your GPU";
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    return std::string("check that 'nvidia-smi' lists a GPU") +
           (visible ? std::string("; CUDA_VISIBLE_DEVICES='") + visible + "' may hide it" : "") +
           "; in a container, start it with the GPU passed in (e.g. docker run --gpus all)";
}

// The exit status, with the one stderr line that a script or a student sees first.
int exit_status(const env::Report& r) {
    auto fail = [](int status, const std::string& why) {
        std::fprintf(stderr, "%s: error: %s\n", kProg, why.c_str());
        return status;
    };
    if (r.gpus.empty())
        return fail(wb::kExitNoDevice,
                    "no usable CUDA device (" + r.device_error + "); see the advice above");
    const env::Gpu& g = r.gpus[0];
    const wb::DeviceFacts& f = g.facts;
    if (g.kernel_image == "missing")
        return fail(wb::kExitNoDevice,
                    strf("this binary holds no code for %s (compute capability %s). Rebuild "
                         "for it: %s",
                         f.name.c_str(), f.cc().c_str(), wb::rebuild_hint(f.cc_major, f.cc_minor).c_str()));
    const std::string& broken = !g.query_error.empty()     ? g.query_error
                                : !g.measure_error.empty() ? g.measure_error
                                : g.kernel_image != "ok"   ? g.kernel_image
                                                           : std::string();
    if (!broken.empty()) return fail(wb::kExitNoDevice, "GPU 0 cannot be used: " + broken);
    if (g.cublas && !g.cublas->pass)
        return fail(wb::kExitVerifyFailed, "the cuBLAS smoke test failed: " + g.cublas->what);
    return wb::kExitOk;
}

int run(const Settings& s) {
    env::Report r = host_facts(s);
    std::printf("%s: is this machine ready for the CUDA Matmul Workbook?%s\n", kProg,
                s.quick ? " (--quick: small measurements)" : "");
    const env::VersionMatch versions = env::match_versions(r.driver_version, r.runtime_version);
    section("CUDA versions");
    field("driver supports up to", r.driver_version > 0
                                       ? strf("CUDA %s (cudaDriverGetVersion: %d)",
                                              env::version_text(r.driver_version).c_str(), r.driver_version)
                                       : "no NVIDIA driver found (cudaDriverGetVersion: 0)");
    field("runtime (built with)", strf("CUDA %s (cudaRuntimeGetVersion: %d)",
                                       env::version_text(r.runtime_version).c_str(), r.runtime_version));
    field("compatible", versions.text);
    std::string archs;
    for (int a : r.built_for) archs += strf(archs.empty() ? "sm_%d" : " sm_%d", a);
    field("this binary built for",
          (archs.empty() ? "(unknown)" : archs) + " (PTX for the last; make ARCH=sm_XY changes it)");
    if (r.wsl) field("system", "WSL2 (the GPU belongs to the Windows driver)");

    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        r.device_error = err != cudaSuccess ? strf("%s: %s", cudaGetErrorName(err), cudaGetErrorString(err))
                                            : "the driver reports no CUDA device";
        cudaGetLastError();
        section("GPUs");
        field("usable CUDA GPUs", "none (" + r.device_error + ")");
        field("what to do", no_gpu_advice(err, r));
    }
    for (int dev = 0; err == cudaSuccess && dev < count; ++dev) {
        r.gpus.push_back(query_gpu(dev));
        print_gpu(r.gpus.back(), r.built_for);
    }
    // The chapters run on device 0 (CUDA_VISIBLE_DEVICES picks which GPU that is): measure it.
    if (!r.gpus.empty() && r.gpus[0].query_error.empty()) {
        env::Gpu& g = r.gpus[0];
        if (g.kernel_image == "ok")
            std::printf("\nmeasuring GPU 0 (%s)...\n", s.quick ? "quick" : "a few seconds");
        std::fflush(stdout);
        measure(g, s);
        if (g.measure_ran) {
            section("Ceilings of GPU 0: theory from the numbers above, measured here");
            print(env::ceiling_lines(g, r));
        }
        section("cuBLAS smoke test on GPU 0");
        field("SGEMM " + wb::to_string(env::kSmokeShape),
              g.cublas->pass ? strf("PASS, rel. error %.1e (%s)", g.cublas->rel_err, g.cublas->what.c_str())
                             : "FAIL: " + g.cublas->what);
    }
    section("Tools");
    for (const env::Tool& t : r.tools) field(t.name, env::describe(t, r.runtime_version));
    field("GPU performance counters",
          r.profiling_admin_only == 1   ? "root only (RmProfilingAdminOnly=1): see the README"
          : r.profiling_admin_only == 0 ? "open to every user"
                                        : "unknown (no /proc/driver/nvidia/params)");
    const env::Verdict v = env::judge(r);
    section("Verdict");
    for (const std::string& line : v.first_lines()) std::printf("  %s\n", line.c_str());
    for (const std::string& p : v.problems) std::printf("  - %s\n", p.c_str());
    for (const std::string& n : v.notes) std::printf("  note: %s\n", n.c_str());

    if (!s.json.empty()) {
        std::ofstream out(s.json, std::ios::trunc);
        out << env::to_json(r);
        if (!out) bad_input("cannot write the --json file '" + s.json + "'");
        std::printf("\nwrote %s\n", s.json.c_str());
    }
    std::fflush(stdout);
    return exit_status(r);
}

}  // namespace

int main(int argc, char** argv) {
    const Settings s = parse_or_exit(argc, argv);
    try {
        return run(s);
    } catch (const std::exception& e) {  // a CUDA call outside the guarded measurements failed
        std::fprintf(stderr, "%s: error: %s\n", kProg, e.what());
        return wb::kExitNoDevice;
    }
}
