// 00_env_check - is this machine ready for the workbook, and what can its GPU really do?
//
// Prints, in this order: the CUDA versions; every GPU's facts (the limits the later chapters design
// their kernels around); the measured ceilings of GPU 0 next to the theoretical ones; a cuBLAS smoke
// test; the tools the Makefile targets need; and a verdict. With --json FILE it also writes all of
// it as JSON for the report (keys in README.md).
//
// Run: make 00 && ./00_env_check [--quick] [--json FILE]      (from the top: make check-env)
// Exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable GPU (or no code for it).
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "env_json.h"  // and through it env_checks.h and env_report.h
#include "kernels.cuh"

namespace {

const char* const kProg = "00_env_check";

struct Settings {
    wb::Options opt;   // only --warmup, --reps and --seed apply here
    std::string json;  // --json FILE
    bool quick = false;
};

// ---- options ---------------------------------------------------------------------------------

std::string usage() {
    return std::string("usage: ") + kProg + " [options]\n" +
           "  --quick              smaller, faster measurements (for tests, sanitizers and profilers)\n"
           "  --json FILE          also write every fact and measured ceiling as JSON (keys: README.md)\n"
           "  --warmup W           untimed runs before timing (default 2)\n"
           "  --reps R             timed runs, each timed on its own; the median is shown (default 10)\n"
           "  --seed S             seed of the cuBLAS smoke test's random data (default 2024)\n"
           "  --help               this text\n"
           "The GEMM options of the other chapters (--size, --variant, --csv, ...) do not apply here.\n"
           "exit status: 0 ready, 1 the cuBLAS smoke test failed, 2 bad input, 3 no usable CUDA device\n"
           "(or no code for it in this binary)\n";
}

[[noreturn]] void bad_input(const std::string& error) {
    std::fprintf(stderr, "%s: error: %s\n", kProg, error.c_str());
    std::exit(wb::kExitBadInput);
}

// Parses the command line; bad input exits 2 before any device work, --help exits 0.
Settings parse_or_exit(int argc, char** argv) {
    Settings s;
    // The shared parser, plus this program's two options. (Their help strings are not printed:
    // usage() above replaces wb::usage, as most of the shared GEMM options do not apply here.)
    const std::vector<wb::ExtraOption> extras = {
        {"json", "FILE  also write the facts and measured ceilings as JSON", &s.json, nullptr},
        {"quick", "smaller, faster measurements", nullptr, &s.quick},
    };
    std::string error;
    if (!wb::parse_options(argc, argv, s.opt, error, extras)) bad_input(error);
    if (s.opt.help) {
        std::printf("%s", usage().c_str());
        std::exit(wb::kExitOk);
    }
    if (!env::check_env_options(s.opt, error)) bad_input(error);
    bool json_given = false;
    for (int i = 1; i < argc; ++i) json_given = json_given || std::strncmp(argv[i], "--json", 6) == 0;
    if (json_given && s.json.empty()) bad_input("option --json needs a file name");
    if (!s.json.empty()) {
        // Find an unwritable path now, not after all the measuring. "a" leaves a file intact.
        FILE* f = std::fopen(s.json.c_str(), "a");
        if (!f) bad_input("cannot write the --json file '" + s.json + "': " + std::strerror(errno));
        std::fclose(f);
    }
    return s;
}

// ---- printing --------------------------------------------------------------------------------

void section(const std::string& title) { std::printf("\n== %s\n", title.c_str()); }

// One aligned "label : value" line.
void field(const std::string& label, const std::string& value) {
    std::printf("  %-27s: %s\n", label.c_str(), value.c_str());
    std::fflush(stdout);
}

// GFLOP/s and GB/s as in every chapter's table; large values also in TFLOP/s and TB/s.
std::string gflops_text(double v) {
    if (!env::measured(v)) return "-";
    return v < 1000 ? env::strf("%.1f GFLOP/s", v) : env::strf("%.0f GFLOP/s (%.1f TFLOP/s)", v, v / 1000);
}
std::string gbs_text(double v) {
    if (!env::measured(v)) return "-";
    return v < 1000 ? env::strf("%.1f GB/s", v) : env::strf("%.0f GB/s (%.2f TB/s)", v, v / 1000);
}
std::string pct_text(double v) { return env::measured(v) ? env::strf("%.1f%%", v) : "-"; }
std::string timing_text(double ms_median, double ms_min) {
    return env::strf("median %.3f ms, min %.3f ms", ms_median, ms_min);
}

// ---- host facts (no GPU needed) --------------------------------------------------------------

std::string read_text_file(const char* path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The compute capabilities this program was compiled for: nvcc defines __CUDA_ARCH_LIST__ as the
// list of -gencode architectures, e.g. 750,800,860,890,900.
std::vector<int> built_for() {
    std::vector<int> archs;
#ifdef __CUDA_ARCH_LIST__
    for (int a : {__CUDA_ARCH_LIST__}) archs.push_back(a / 10);
#endif
    return archs;
}

std::vector<env::Tool> find_tools() {
    const char* path = std::getenv("PATH");
    // Where a CUDA toolkit puts its tools when the PATH does not name them.
    std::vector<std::string> folders;
    for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
        if (const char* dir = std::getenv(var)) folders.push_back(std::string(dir) + "/bin");
    folders.push_back("/usr/local/cuda/bin");
    std::vector<env::Tool> tools = {
        {"nvcc", "", false, "building the chapters"},
        {"ncu", "", false, "make profile-NN (Nsight Compute)"},
        {"compute-sanitizer", "", false, "make sanitize"},
    };
    for (env::Tool& t : tools) {
        t.path = env::find_on_path(t.name, path ? path : "");
        t.on_path = !t.path.empty();
        if (t.on_path) continue;
        std::vector<std::string> where = folders;
        if (t.name == "ncu") where.push_back("/opt/nvidia/nsight-compute/*");  // stand-alone installs
        t.path = env::find_in_folders(t.name, where);
    }
    return tools;
}

env::Report host_facts(const Settings& s) {
    env::Report r;
    r.git = wb::build_git_commit();
    r.timestamp = wb::utc_timestamp();
    r.quick = s.quick;
    // Both calls work without a GPU; the driver version is 0 when no driver can be loaded.
    WB_CUDA_CHECK(cudaDriverGetVersion(&r.driver_version));
    WB_CUDA_CHECK(cudaRuntimeGetVersion(&r.runtime_version));
    r.built_for = built_for();
    r.tools = find_tools();
    r.profiling_admin_only = env::profiling_admin_only(read_text_file("/proc/driver/nvidia/params"));
    r.running_as_root = ::geteuid() == 0;
    r.wsl = env::is_wsl(read_text_file("/proc/version"));
    return r;
}

void print_versions(const env::Report& r) {
    section("CUDA versions");
    field("driver supports up to",
          r.driver_version > 0 ? env::strf("CUDA %s (cudaDriverGetVersion: %d)",
                                           env::version_text(r.driver_version).c_str(), r.driver_version)
                               : std::string("no NVIDIA driver found (cudaDriverGetVersion: 0)"));
    field("runtime (built with)", env::strf("CUDA %s (cudaRuntimeGetVersion: %d)",
                                            env::version_text(r.runtime_version).c_str(), r.runtime_version));
    const env::VersionMatch m = env::match_versions(r.driver_version, r.runtime_version);
    field("compatible", env::describe(m, r.driver_version, r.runtime_version));
    field("this binary built for",
          env::arch_list_text(r.built_for) + " (PTX for the last; make ARCH=sm_XY changes it)");
    if (r.wsl) field("system", "WSL2 (the GPU belongs to the Windows driver)");
}

// ---- GPU facts -------------------------------------------------------------------------------

int attribute(cudaDeviceAttr what, int dev) {
    int v = 0;
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&v, what, dev));
    return v;
}

// "ok", "missing" (no code for this GPU in the binary) or the error of a test launch.
std::string probe_kernel_image(int dev) {
    try {
        WB_CUDA_CHECK(cudaSetDevice(dev));
        wb::probe_kernel_image();
        return "ok";
    } catch (const wb::CudaError& e) {
        cudaGetLastError();  // launch errors are not sticky: clear it for the next call
        if (e.code() == cudaErrorNoKernelImageForDevice || e.code() == cudaErrorInvalidKernelImage ||
            e.code() == cudaErrorUnsupportedPtxVersion)
            return "missing";
        return e.what();
    }
}

env::Gpu query_gpu(int dev) {
    env::Gpu g;
    g.id = dev;
    try {
        const wb::DeviceFacts f = wb::query_device(dev);  // clocks from cudaDeviceGetAttribute (CUDA 13)
        g.name = f.name;
        g.cc_major = f.cc_major;
        g.cc_minor = f.cc_minor;
        g.sms = f.sms;
        g.fp32_lanes_per_sm = f.fp32_lanes_per_sm;
        g.clock_ghz = f.clock_ghz;
        g.mem_clock_ghz = f.mem_clock_ghz;
        g.bus_width_bits = f.bus_width_bits;
        g.memory_bytes = double(f.global_mem_bytes);
        g.max_threads_per_sm = f.max_threads_per_sm;
        g.peak_fp32_gflops = f.peak_fp32_gflops;
        g.peak_bandwidth_gbs = f.peak_bandwidth_gbs;
        g.peak_fp16_tc_gflops = f.peak_fp16_tc_gflops;
        g.peak_tf32_tc_gflops = f.peak_tf32_tc_gflops;
        g.rebuild_hint = wb::rebuild_hint(f.cc_major, f.cc_minor);

        g.l2_bytes = attribute(cudaDevAttrL2CacheSize, dev);
        g.smem_per_block = attribute(cudaDevAttrMaxSharedMemoryPerBlock, dev);
        g.smem_per_block_optin = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
        g.smem_per_sm = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
        g.smem_reserved_per_block = attribute(cudaDevAttrReservedSharedMemoryPerBlock, dev);
        g.regs_per_block = attribute(cudaDevAttrMaxRegistersPerBlock, dev);
        g.regs_per_sm = attribute(cudaDevAttrMaxRegistersPerMultiprocessor, dev);
        g.warp_size = attribute(cudaDevAttrWarpSize, dev);
        g.max_threads_per_block = attribute(cudaDevAttrMaxThreadsPerBlock, dev);
        g.max_blocks_per_sm = attribute(cudaDevAttrMaxBlocksPerMultiprocessor, dev);
        const cudaDeviceAttr block_dims[3] = {cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY,
                                              cudaDevAttrMaxBlockDimZ};
        const cudaDeviceAttr grid_dims[3] = {cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY,
                                             cudaDevAttrMaxGridDimZ};
        for (int i = 0; i < 3; ++i) {
            g.max_block_dim[i] = attribute(block_dims[i], dev);
            g.max_grid_dim[i] = attribute(grid_dims[i], dev);
        }
        // cudaDeviceProp::kernelExecTimeoutEnabled is gone in CUDA 13; the attribute remains.
        g.kernel_timeout = attribute(cudaDevAttrKernelExecTimeout, dev) != 0;
        g.integrated = attribute(cudaDevAttrIntegrated, dev) != 0;
        g.ecc = attribute(cudaDevAttrEccEnabled, dev) != 0;
        char bus_id[32] = {};
        WB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, dev));
        g.pci_bus_id = bus_id;
        size_t free_bytes = 0, total_bytes = 0;
        WB_CUDA_CHECK(cudaSetDevice(dev));
        WB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        g.memory_free_bytes = double(free_bytes);
    } catch (const wb::CudaError& e) {
        g.query_error = e.what();
        return g;
    }
    g.kernel_image = probe_kernel_image(dev);
    return g;
}

std::string code_text(const env::Gpu& g, const std::vector<int>& built) {
    const std::string expected = env::describe(env::code_for(built, g.cc_number()), g.cc_number());
    if (g.kernel_image == "ok") return "yes: a test kernel ran (" + expected + ")";
    if (g.kernel_image == "missing") return "NO (" + expected + "). Fix: " + g.rebuild_hint;
    return "a test kernel failed: " + g.kernel_image;
}

void print_gpu(const env::Gpu& g, const std::vector<int>& built) {
    section(env::strf("GPU %d: %s", g.id, g.name.empty() ? "(unknown)" : g.name.c_str()));
    if (!g.query_error.empty()) {
        field("error", g.query_error);
        return;
    }
    using env::bytes_text;
    using env::strf;
    field("compute capability", strf("%s (%s, %s)", g.cc().c_str(), g.sm().c_str(),
                                     env::architecture_name(g.cc_major, g.cc_minor)));
    field("code in this binary", code_text(g, built));
    field("PCI bus", g.pci_bus_id);
    field("SMs", strf("%d x %d FP32 lanes = %d \"CUDA cores\"", g.sms, g.fp32_lanes_per_sm,
                      g.sms * g.fp32_lanes_per_sm));
    field("SM clock (max)", strf("%.3f GHz", g.clock_ghz));
    field("global memory", bytes_text(g.memory_bytes) + " (" + bytes_text(g.memory_free_bytes) + " free)");
    field("memory bus",
          strf("%d bits at %.3f GHz, 2 transfers per clock", g.bus_width_bits, g.mem_clock_ghz));
    field("L2 cache", bytes_text(g.l2_bytes));
    field("shared memory / block", bytes_text(g.smem_per_block) + " by default, " +
                                       bytes_text(g.smem_per_block_optin) +
                                       " with cudaFuncSetAttribute (opt-in)");
    field("shared memory / SM",
          bytes_text(g.smem_per_sm) + strf(" (%d B reserved per block)", g.smem_reserved_per_block));
    field("registers / block", strf("%d x 32 bit (at most 255 per thread)", g.regs_per_block));
    field("registers / SM", strf("%d x 32 bit = %s", g.regs_per_sm, bytes_text(4.0 * g.regs_per_sm).c_str()));
    field("warp size", strf("%d threads", g.warp_size));
    field("threads / block", strf("at most %d; block dims up to %d x %d x %d", g.max_threads_per_block,
                                  g.max_block_dim[0], g.max_block_dim[1], g.max_block_dim[2]));
    field("threads / SM",
          strf("%d (%d warps), at most %d blocks", g.max_threads_per_sm,
               g.warp_size > 0 ? g.max_threads_per_sm / g.warp_size : 0, g.max_blocks_per_sm));
    field("grid dims", strf("%d x %d x %d blocks", g.max_grid_dim[0], g.max_grid_dim[1], g.max_grid_dim[2]));
    field("kernel time limit", g.kernel_timeout
                                   ? "YES: a display watchdog ends any kernel that runs longer than a few "
                                     "seconds (Windows TDR: about 2 s). Keep launches short, or use a GPU "
                                     "that drives no display."
                                   : "none");
    field("ECC", g.ecc ? "on" : "off");
    if (g.integrated) field("integrated", "yes: shares memory with the CPU");
}

// ---- measurements on GPU 0 -------------------------------------------------------------------

void measure_ceilings(env::Gpu& g, const Settings& s) {
    env::Ceilings& c = g.ceilings;
    c.ran = true;
    c.warmup = s.opt.warmup;
    c.reps = s.opt.reps;
    cudaStream_t stream = nullptr;
    try {
        WB_CUDA_CHECK(cudaSetDevice(g.id));
        WB_CUDA_CHECK(cudaStreamCreate(&stream));
        const FmaMeasurement fma =
            measure_fma(s.quick ? kFmaWavesQuick : kFmaWaves, c.warmup, c.reps, stream);
        c.fma_threads = fma.threads;
        c.fma_waves = s.quick ? kFmaWavesQuick : kFmaWaves;
        c.fma_flops = fma.flops;
        c.fma_ms_median = fma.timing.ms_median;
        c.fma_ms_min = fma.timing.ms_min;
        c.fma_gflops = fma.gflops;
        // The in-kernel clock rests on the GPU's global timer, which some virtual machines run at
        // another rate (seen on the workbook's H200: 1.69 GHz "measured" while the FMA rate needed
        // at least 1.93). The FMA rate itself is a lower bound of the clock: a reading below it is
        // wrong and is not reported.
        const double implied_ghz = env::min_clock_for_gflops(g, fma.gflops);
        c.sm_clock_ghz = fma.sm_clock_ghz > 0 && fma.sm_clock_ghz >= 0.98 * implied_ghz ? fma.sm_clock_ghz
                                                                                         : env::kNotMeasured;

        size_t free_bytes = 0, total_bytes = 0;
        WB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        const CopyMeasurement copy =
            measure_copy(choose_copy_buffer_bytes(s.quick, free_bytes, size_t(g.l2_bytes)), c.warmup,
                         c.reps, stream);
        c.copy_buffer_bytes = double(copy.buffer_bytes);
        c.copy_bytes = copy.bytes_moved;
        c.copy_kernel_ms_median = copy.kernel.ms_median;
        c.copy_kernel_ms_min = copy.kernel.ms_min;
        c.copy_kernel_gbs = copy.kernel_gbs;
        c.memcpy_ms_median = copy.memcpy.ms_median;
        c.memcpy_ms_min = copy.memcpy.ms_min;
        c.memcpy_gbs = copy.memcpy_gbs;
    } catch (const wb::CudaError& e) {
        c.error = e.what();
    }
    if (stream) cudaStreamDestroy(stream);
}

// A small SGEMM through cuBLAS, checked by the harness exactly as every chapter's kernels are.
// 257 x 255 x 259: just past 256 in every dimension, so edge handling is exercised.
void cublas_smoke_test(env::Gpu& g, uint64_t seed) {
    const wb::Shape shape{257, 255, 259};
    g.cublas.ran = true;
    g.cublas.shape = wb::to_string(shape);
    try {
        WB_CUDA_CHECK(cudaSetDevice(g.id));
        wb::GemmProblem problem(shape, 1.0f, 0.0f, seed);
        const wb::CheckResult r = problem.verify(wb::cublas_sgemm, wb::Precision::fp32);
        g.cublas.pass = r.pass;
        g.cublas.rel_err = r.rel_err;
        g.cublas.detail = r.pass ? r.what : r.describe();
    } catch (const std::exception& e) {
        g.cublas.pass = false;
        g.cublas.detail = e.what();
    }
}

void print_ceilings(const env::Gpu& g) {
    const env::Ceilings& c = g.ceilings;
    section(env::strf("Ceilings of GPU %d: theory from the numbers above, measured here", g.id));
    using env::strf;
    field("FP32 peak (theory)", strf("%s = %d SMs x %d lanes x 2 FLOP x %.3f GHz",
                                     gflops_text(g.peak_fp32_gflops).c_str(), g.sms, g.fp32_lanes_per_sm,
                                     g.clock_ghz));
    field("FP32 FMA (measured)",
          strf("%s = %s of theory, %s of the peak at the clock measured below",
               gflops_text(c.fma_gflops).c_str(),
               pct_text(env::percent(c.fma_gflops, g.peak_fp32_gflops)).c_str(),
               pct_text(env::percent(c.fma_gflops, env::peak_at_measured_clock(g))).c_str()));
    if (env::measured(c.fma_ms_median))
        field("  how",
              strf("%d chains x %d FMA per thread, %lld threads (%d waves); %s", kFmaChains, kFmaIters,
                   c.fma_threads, c.fma_waves, timing_text(c.fma_ms_median, c.fma_ms_min).c_str()));
    const double implied_ghz = env::min_clock_for_gflops(g, c.fma_gflops);
    field("SM clock during FMA run",
          env::measured(c.sm_clock_ghz) ? strf("%.3f GHz (max %.3f GHz)", c.sm_clock_ghz, g.clock_ghz)
          : env::measured(c.fma_gflops)
              ? strf("not measurable here (the global timer disagrees with the FMA rate, which needs at "
                     "least %.3f GHz)", implied_ghz)
              : std::string("-"));
    field("DRAM bandwidth (theory)",
          strf("%s = %d bits / 8 x 2 x %.3f GHz", gbs_text(g.peak_bandwidth_gbs).c_str(), g.bus_width_bits,
               g.mem_clock_ghz));
    field("copy kernel (measured)",
          strf("%s = %s of theory", gbs_text(c.copy_kernel_gbs).c_str(),
               pct_text(env::percent(c.copy_kernel_gbs, g.peak_bandwidth_gbs)).c_str()));
    field("cudaMemcpy D2D (measured)",
          strf("%s = %s of theory", gbs_text(c.memcpy_gbs).c_str(),
               pct_text(env::percent(c.memcpy_gbs, g.peak_bandwidth_gbs)).c_str()));
    if (env::measured(c.copy_kernel_ms_median))
        field("  how",
              strf("2 buffers of %s, %s moved per copy (read once + written once); kernel %s",
                   env::bytes_text(c.copy_buffer_bytes).c_str(), env::bytes_text(c.copy_bytes).c_str(),
                   timing_text(c.copy_kernel_ms_median, c.copy_kernel_ms_min).c_str()));
    const double best_bw = env::best_bandwidth_gbs(c);
    if (g.peak_bandwidth_gbs > 0)
        field("ridge point", strf("%.1f FLOP/byte in theory%s: kernels doing fewer FLOP per DRAM byte are "
                                  "memory bound", g.peak_fp32_gflops / g.peak_bandwidth_gbs,
                                  env::measured(c.fma_gflops) && env::measured(best_bw)
                                      ? strf(", %.1f measured", c.fma_gflops / best_bw).c_str()
                                      : ""));
    if (g.peak_fp16_tc_gflops > 0)
        field("FP16 tensor cores (theory)",
              gflops_text(g.peak_fp16_tc_gflops) + " dense (chapters 06 and 07)");
    if (g.peak_tf32_tc_gflops > 0)
        field("TF32 tensor cores (theory)", gflops_text(g.peak_tf32_tc_gflops) + " dense");
    field("runs", strf("%d warm-up + %d timed, each timed with CUDA events; median shown%s", c.warmup, c.reps,
                       c.reps < 10 ? " (fewer than 10 timed runs: rough numbers)" : ""));
    if (!c.error.empty()) field("ERROR", c.error);
}

void print_smoke_test(const env::Gpu& g) {
    section(env::strf("cuBLAS smoke test on GPU %d", g.id));
    const env::SmokeTest& t = g.cublas;
    field("SGEMM " + t.shape, t.pass ? env::strf("PASS, rel. error %.1e (%s)", t.rel_err, t.detail.c_str())
                                     : "FAIL: " + t.detail);
}

// ---- no GPU ----------------------------------------------------------------------------------

std::string no_gpu_advice(cudaError_t err, const env::Report& r) {
    if (r.driver_version == 0 || err == cudaErrorInsufficientDriver)
        return "install or update the NVIDIA driver, then check that 'nvidia-smi' lists your GPU";
    std::string advice = "check that 'nvidia-smi' lists a GPU";
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
        advice += std::string("; CUDA_VISIBLE_DEVICES='") + visible + "' may hide it";
    advice += "; in a container, start it with the GPU passed in (e.g. docker run --gpus all)";
    return advice;
}

void print_no_gpu(cudaError_t err, const env::Report& r) {
    section("GPUs");
    field("usable CUDA GPUs", "none (" + r.device_error + ")");
    field("what to do", no_gpu_advice(err, r));
}

// ---- tools and verdict -----------------------------------------------------------------------

void print_tools(const env::Report& r) {
    section("Tools");
    for (const env::Tool& t : r.tools) field(t.name, env::describe(t, r.runtime_version));
    const char* counters = r.profiling_admin_only == 1 ? "root only (RmProfilingAdminOnly=1): see the README"
                           : r.profiling_admin_only == 0 ? "open to every user"
                                                         : "unknown (no /proc/driver/nvidia/params)";
    field("GPU performance counters", counters);
}

void print_verdict(const env::Verdict& v) {
    section("Verdict");
    for (const std::string& line : env::readiness(v)) std::printf("  %s\n", line.c_str());
    for (const std::string& p : v.problems) std::printf("  - %s\n", p.c_str());
    for (const std::string& n : v.notes) std::printf("  note: %s\n", n.c_str());
}

// The exit status, with the one stderr line that a script or a student sees first.
int exit_status(const env::Report& r) {
    if (r.gpus.empty()) {
        std::fprintf(stderr, "%s: error: no usable CUDA device (%s); see the advice above\n", kProg,
                     r.device_error.c_str());
        return wb::kExitNoDevice;
    }
    const env::Gpu& g = r.gpus[0];
    if (!g.query_error.empty() || !g.ceilings.error.empty() || g.kernel_image != "ok") {
        if (g.kernel_image == "missing")
            std::fprintf(stderr,
                         "%s: error: this binary holds no code for %s (compute capability %s). "
                         "Rebuild for it: %s\n",
                         kProg, g.name.c_str(), g.cc().c_str(), g.rebuild_hint.c_str());
        else
            std::fprintf(stderr, "%s: error: GPU 0 cannot be used: %s\n", kProg,
                         !g.query_error.empty() ? g.query_error.c_str()
                         : !g.ceilings.error.empty() ? g.ceilings.error.c_str() : g.kernel_image.c_str());
        return wb::kExitNoDevice;
    }
    if (g.cublas.ran && !g.cublas.pass) {
        std::fprintf(stderr, "%s: error: the cuBLAS smoke test failed: %s\n", kProg, g.cublas.detail.c_str());
        return wb::kExitVerifyFailed;
    }
    return wb::kExitOk;
}

int run(const Settings& s) {
    env::Report r = host_facts(s);
    std::printf("%s: is this machine ready for the CUDA Matmul Workbook?%s\n", kProg,
                s.quick ? " (--quick: small measurements)" : "");
    print_versions(r);

    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        r.device_error = err != cudaSuccess
                             ? std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err)
                             : "the driver reports no CUDA device";
        cudaGetLastError();
        print_no_gpu(err, r);
    } else {
        for (int dev = 0; dev < count; ++dev) {
            r.gpus.push_back(query_gpu(dev));
            print_gpu(r.gpus.back(), r.built_for);
        }
        // The chapters run on device 0 (CUDA_VISIBLE_DEVICES picks which GPU that is): measure it.
        env::Gpu& g = r.gpus[0];
        if (g.query_error.empty()) {
            if (g.kernel_image == "ok") {
                std::printf("\nmeasuring GPU 0 (%s)...\n", s.quick ? "quick" : "a few seconds");
                std::fflush(stdout);
                measure_ceilings(g, s);
                print_ceilings(g);
            }
            cublas_smoke_test(g, s.opt.seed);  // cuBLAS has its own code: it runs even without ours
            print_smoke_test(g);
        }
    }
    print_tools(r);
    print_verdict(env::judge(r));

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
