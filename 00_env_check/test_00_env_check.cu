// test_00_env_check - on any machine: the JSON (syntax, keys, planted values it must not let
// through), the screen's values, the rules (versions, code for a GPU, tools, options, profiling), the
// accounting, the verdict and its exit status, and the program's exit statuses. On a GPU: the two
// measuring kernels and the program's JSON with measurements.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <regex>
#include <set>

#include "cuda_handles.cuh"
#include "env_report.h"
#include "kernels.cuh"
#include "testing.cuh"

using namespace ch00;

namespace {

// A strict JSON syntax check (RFC 8259): proves the writer never emits a trailing comma, an
// unescaped control character, NaN or an unbalanced bracket.
struct JsonSyntax {
    const std::string& s;
    size_t i = 0;
    char peek() {
        while (i < s.size() && std::strchr(" \n\t\r", s[i])) ++i;
        return i < s.size() ? s[i] : '\0';
    }
    bool word(const char* w) { return s.compare(i, std::strlen(w), w) == 0 && (i += std::strlen(w), true); }
    bool digits() {
        const size_t start = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        return i > start;
    }
    bool string() {
        if (peek() != '"') return false;
        for (++i; i < s.size(); ++i) {
            const unsigned char c = s[i];
            if (c == '"') return ++i, true;
            if (c < 0x20) return false;
            if (c == '\\' && !(++i < s.size() && std::strchr("\"\\/bfnrtu", s[i]) && s[i] != '\0'))
                return false;
            if (s[i - 1] == '\\' && s[i] == 'u')
                for (int k = 0; k < 4; ++k)
                    if (++i >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
        }
        return false;
    }
    bool container(char close, bool object) {
        ++i;
        if (peek() == close) return ++i, true;
        for (;;) {
            if (object && !(string() && peek() == ':' && ++i)) return false;
            if (!value()) return false;
            const char c = peek();
            ++i;
            if (c == close) return true;
            if (c != ',') return false;
        }
    }
    bool value() {
        const char c = peek();
        if (c == '{' || c == '[') return container(c == '{' ? '}' : ']', c == '{');
        if (c == '"') return string();
        if (word("true") || word("false") || word("null")) return true;
        if (c == '-') ++i;
        if (!digits()) return false;
        if (i < s.size() && s[i] == '.' && !(++i, digits())) return false;
        if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
            ++i;
            if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
            return digits();
        }
        return true;
    }
};
bool valid_json(const std::string& text) {
    JsonSyntax p{text};
    return p.value() && p.peek() == '\0';
}

bool has(const std::string& json, const std::string& part) { return json.find(part) != std::string::npos; }

// The number after the first "key": (NaN for null or a missing key).
double number_after(const std::string& json, const std::string& key) {
    const size_t at = json.find("\"" + key + "\": ");
    if (at == std::string::npos) return NAN;
    const char* start = json.c_str() + at + key.size() + 4;
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    return end == start ? NAN : v;
}

std::set<std::string> keys_of(const std::string& json) {  // every key, at any depth
    static const std::regex key("\"([a-z0-9_]+)\": ");
    std::set<std::string> keys;
    for (std::sregex_iterator it(json.begin(), json.end(), key), end; it != end; ++it) keys.insert((*it)[1]);
    return keys;
}

using wb::test::read_file;
using wb::test::RunResult;
using wb::test::TempDir;
using wb::test::write_file;

std::string program_path() { return wb::test::program_path("00_env_check"); }
bool program_built() { return ::access(program_path().c_str(), X_OK) == 0; }
RunResult run_program(const std::string& args, const TempDir& dir, const std::string& env_prefix = "") {
    return wb::test::run_program("00_env_check", args, dir, env_prefix);
}

// tools/report_fixture_env.json: the format reference the report's tests are written against.
std::set<std::string> fixture_keys() {
    const std::string program = program_path();
    return keys_of(read_file(program.substr(0, program.rfind('/')) + "/../tools/report_fixture_env.json"));
}

// What thread `thread` of fma_chains computes, on the CPU: std::fma rounds once like the GPU's fmaf,
// and the sum runs in the same order, so the result is the same to the last bit.
float fma_chains_reference(unsigned thread, float a, float b) {
    float x[kFmaChains], sum = 0.0f;
    for (int c = 0; c < kFmaChains; ++c) x[c] = fma_start_value(thread, c);
    for (int i = 0; i < kFmaIters; ++i)
        for (int c = 0; c < kFmaChains; ++c) x[c] = std::fma(x[c], a, b);
    for (int c = 0; c < kFmaChains; ++c) sum += x[c];
    return sum;
}

// A report as a machine with one ready H100-like GPU would produce it.
Report sample_report() {
    using namespace wb::json;
    Report r;
    r.git = "abc123";
    r.timestamp = "2026-01-01T00:00:00Z";
    r.driver_version = r.runtime_version = 13000;
    r.built_for = {80, 90};
    Gpu g;
    g.facts.name = "Test \"GPU\"\n\\ with\tcontrol \x01 chars";
    g.facts.cc_major = 9;
    g.facts.sms = 132;
    g.facts.fp32_lanes_per_sm = 128;
    g.facts.clock_ghz = 1.98;
    g.facts.bus_width_bits = 5120;
    g.facts.mem_clock_ghz = 2.619;
    g.facts.peak_fp32_gflops = 132 * 128 * 2 * 1.98;
    g.facts.peak_bandwidth_gbs = 3352.3;
    g.facts.global_mem_bytes = 150119866368;
    g.prop.l2CacheSize = 50 << 20;
    g.kernel_image = "ok";
    g.fma_gflops = 0.93 * g.facts.peak_fp32_gflops;
    g.copy.bytes_moved = copy_bytes_moved(1 << 30);
    g.copy.kernel_gbs = 0.85 * g.facts.peak_bandwidth_gbs;
    g.copy.memcpy_gbs = 0.84 * g.facts.peak_bandwidth_gbs;
    g.cublas = wb::CheckResult{};
    g.cublas->rel_err = 3e-8;
    g.cublas->what = "all entries against the CPU";
    r.gpus.push_back(g);
    r.tools = {{"nvcc", "/usr/local/cuda/bin/nvcc", "nvcc not found"},
               {"ncu", "/usr/local/cuda/bin/ncu", "ncu not found"},
               {"compute_sanitizer", "/usr/local/cuda/bin/compute-sanitizer", "compute-sanitizer not found"}};
    r.profiling_admin_only = 0;
    return r;
}

// The keys README.md documents ("The JSON file"). Tools and the report read them: renaming one
// breaks them, so this list changes only together with the README.
const char* const kKeys[] = {
    // the top level, "cuda" and "tools"
    "schema", "program", "git", "timestamp", "quick", "cuda", "driver", "runtime", "compatible", "note",
    "built_for", "gpu_count", "gpu_error", "gpus", "tools", "profiling_admin_only", "ready", "problems", "notes",
    "nvcc", "ncu", "compute_sanitizer", "path",
    // a GPU, but its limits (kLimitKeys)
    "id", "name", "cc", "sm", "query_error", "code", "kernel_image", "peak_fp32_gflops",
    "peak_bandwidth_gbs", "peak_fp16_tc_gflops", "peak_tf32_tc_gflops", "measured", "cublas_smoke",
    // "measured" and "cublas_smoke"
    "error", "fma_gflops", "fma_pct_peak", "copy_kernel_gbs", "copy_kernel_pct_peak",
    "memcpy_gbs", "memcpy_pct_peak", "copy_bytes", "bandwidth_gbs", "bandwidth_pct_peak", "ridge_flop_per_byte",
    "shape", "status", "rel_err", "detail"};
const char* const kLimitKeys[] = {"sms",
                                  "fp32_lanes_per_sm",
                                  "sm_clock_ghz",
                                  "mem_clock_ghz",
                                  "bus_width_bits",
                                  "memory_bytes",
                                  "l2_bytes",
                                  "smem_per_block_bytes",
                                  "smem_per_block_optin_bytes",
                                  "smem_per_sm_bytes",
                                  "regs_per_sm",
                                  "max_threads_per_sm",
                                  "max_blocks_per_sm",
                                  "kernel_timeout",
                                  "ecc"};

}  // namespace

// ---- CPU tests -------------------------------------------------------------------------------

TEST_CASE("00: the JSON is valid, has every documented key and no other", "[00]") {
    const std::string json = to_json(sample_report());
    INFO(json);
    CHECK(valid_json(json));
    for (const char* k : kKeys) CHECK(has(json, "\"" + std::string(k) + "\": "));
    const std::set<std::string> reference = fixture_keys();
    REQUIRE(reference.size() > 60);
    for (const std::string& k : keys_of(json)) CHECK(reference.count(k) == 1);
    CHECK(number_after(json, "gpu_count") == 1);
    for (const char* k : kLimitKeys) CHECK(has(json, "\"" + std::string(k) + "\": "));
    CHECK(has(json, "\"memory_bytes\": 150119866368,"));  // bytes stay exact
    CHECK(has(json, "\"l2_bytes\": 52428800,"));
    CHECK(has(json, "\"copy_bytes\": 2147483648,"));
    CHECK(has(json, "\"built_for\": [\"sm_80\", \"sm_90\"],"));
    CHECK(has(json, "\"ready\": true"));
    CHECK(has(json, "\"status\": \"PASS\""));
    CHECK(has(json, "\"code\": \"native\""));
    CHECK(has(json, "\"shape\": \"257x255x259\""));
    CHECK(has(json, "\"ncu\": {\n      \"path\": \"/usr/local/cuda/bin/ncu\"\n    }"));
    CHECK(has(json, "\"profiling_admin_only\": false"));
    CHECK(std::fabs(number_after(json, "fma_pct_peak") - 93.0) < 1e-3);
    CHECK(std::fabs(number_after(json, "bandwidth_gbs") - 0.85 * 3352.3) < 1e-2);  // the better copy
    CHECK(has(json, "\"peak_fp16_tc_gflops\": null"));                             // 0: not known
    // The name with quotes, a newline, a tab and a control character stays one valid string.
    CHECK(has(json, "Test \\\"GPU\\\"\\u000a\\\\ with\\u0009control \\u0001 chars"));
}

TEST_CASE("00: planted NaN and infinity, a failed measurement and no GPU give valid JSON", "[00]") {
    Report r = sample_report();
    r.gpus[0].fma_gflops = kNotMeasured;  // NaN must become null, never "nan"
    r.gpus[0].copy.kernel_gbs = std::numeric_limits<double>::infinity();
    std::string json = to_json(r);
    CHECK(valid_json(json));
    CHECK(has(json, "\"fma_gflops\": null"));
    CHECK(has(json, "\"copy_kernel_gbs\": null"));
    CHECK(has(json, "\"ridge_flop_per_byte\": null"));
    CHECK_FALSE(has(json, "nan"));
    CHECK_FALSE(has(json, "inf"));

    // The copy failed after the FMA run: its numbers are null, the error is there, and it is a problem.
    r = sample_report();
    r.gpus[0].copy = CopyMeasurement{};
    r.gpus[0].measure_error = "cudaErrorMemoryAllocation: out of memory";
    r.gpus[0].cublas->pass = false;
    json = to_json(r);
    INFO(json);
    CHECK(valid_json(json));
    CHECK(has(json, "\"error\": \"cudaErrorMemoryAllocation: out of memory\""));
    CHECK(has(json, "\"copy_bytes\": null"));
    CHECK(has(json, "\"bandwidth_gbs\": null"));
    CHECK(number_after(json, "fma_gflops") > 0);
    CHECK(has(json, "\"status\": \"FAIL\""));
    CHECK(has(json, "\"ready\": false"));

    r.gpus.clear();
    r.driver_version = 0;
    r.device_error = "cudaErrorNoDevice: no CUDA-capable device is detected";
    json = to_json(r);
    CHECK(valid_json(json));
    CHECK(number_after(json, "gpu_count") == 0);
    CHECK(has(json, "\"gpus\": []"));
    CHECK(has(json, "\"driver\": \"none\""));
    CHECK(has(json, "\"ready\": false"));
}

TEST_CASE("00: the screen shows the JSON's value, sizes in KiB, MiB or GiB, and the note", "[00]") {
    CHECK(shown({"l2_bytes", "52428800"}) == "50.0 MiB");
    CHECK(shown({"memory_bytes", "150119866368"}) == "139.81 GiB");
    CHECK(shown({"sm_clock_ghz", "1.98", "maximum"}) == "1.98 (maximum)");
    CHECK(shown({"ecc", "true"}) == "true");
    CHECK(shown({"max_block_dim", "[1024, 1024, 64]"}) == "[1024, 1024, 64]");
    CHECK(shown({"copy_kernel_gbs", "null"}) == "-");
    CHECK(shown({"copy_bytes", "null"}) == "-");  // not measured: no size
    CHECK(shown({"pci_bus_id", "\"0000:01:00.0\""}) == "0000:01:00.0");
    CHECK(shown({"x", wb::json::text("")}) == "");
    CHECK(strf("%s", std::string(2000, 'a').c_str()).size() == 2000);  // no fixed buffer
    CHECK(bytes_text(48 * 1024) == "48 KiB");
    CHECK(bytes_text(1000) == "1000 B");
}

TEST_CASE("00: bytes and FLOP are counted as the notes say", "[00]") {
    CHECK(copy_bytes_moved(1024.0 * 1024 * 1024) == 2.0 * 1024 * 1024 * 1024);  // read once, written once
    CHECK(fma_flops(1000) == 1000 * 2.0 * kFmaChains * kFmaIters);              // 2 FLOP per FMA
    CHECK(per_second_1e9(2e9, 1.0) == 2000.0);                                  // 2e9 B in 1 ms: 2000 GB/s
    CHECK(percent(50.0, 200.0) == 25.0);
    CHECK(std::isnan(percent(kNotMeasured, 200.0)));
    CHECK(std::isnan(percent(50.0, 0.0)));
    // The memory ceiling is the better copy; none measured is "not measured", never 0.
    Gpu g;
    CHECK(std::isnan(best_bandwidth_gbs(g)));
    CHECK(std::isnan(g.fma_gflops));
    g.copy.memcpy_gbs = 4204.0;
    g.copy.kernel_gbs = 4300.0;
    CHECK(best_bandwidth_gbs(g) == 4300.0);
    // Copy buffers: the target size but at least 4 x L2, at most a quarter of the free memory,
    // whole 256-byte blocks.
    const size_t gib = size_t(1) << 30, mib = size_t(1) << 20;
    CHECK(choose_copy_buffer_bytes(false, 80 * gib, 50 * mib) == kCopyBufferBytes);
    CHECK(choose_copy_buffer_bytes(true, 80 * gib, 4 * mib) == kCopyBufferBytesQuick);
    CHECK(choose_copy_buffer_bytes(true, 80 * gib, 126 * mib) == 4 * 126 * mib);  // a large L2
    CHECK(choose_copy_buffer_bytes(false, 2 * gib, 50 * mib) == gib / 2);
    CHECK(choose_copy_buffer_bytes(false, 4001, 0) == 768);
}

TEST_CASE("00: the FMA chains start exact and stay bounded", "[00]") {
    // REQUIRE: the first thread and chain that break a bound are reported, not all of them.
    for (unsigned t : {0u, 1u, 127u, 128u, 1000000u}) {
        for (int c = 0; c < kFmaChains; ++c) {
            const float x = fma_start_value(t, c);
            INFO("thread " << t << ", chain " << c << ": start " << x);
            REQUIRE(x >= 0.0f);
            REQUIRE(x < 1.0f);
            REQUIRE(x * 1024.0f == std::floor(x * 1024.0f));  // k / 1024 exactly
        }
        const float sum = fma_chains_reference(t, kFmaA, kFmaB);
        INFO("thread " << t << ": sum " << sum);
        REQUIRE(std::isfinite(sum));
        REQUIRE(sum >= 0.0f);
        REQUIRE(sum <= float(kFmaChains));
    }
}

TEST_CASE("00: driver and runtime versions, and which compiled-in code runs on which GPU", "[00]") {
    CHECK(match_versions(13000, 13000).runs);
    CHECK(match_versions(13010, 13000).text.rfind("yes", 0) == 0);
    const VersionMatch minor = match_versions(13000, 13010);  // minor-version compatibility
    CHECK(minor.runs);
    CHECK(has(minor.text, "PTX cannot be JIT-compiled"));
    const VersionMatch too_old = match_versions(12080, 13000);
    CHECK_FALSE(too_old.runs);
    CHECK(has(too_old.text, "Update the NVIDIA driver"));
    CHECK_FALSE(match_versions(0, 13000).runs);
    CHECK(version_text(12040) == "12.4");
    CHECK(version_text(0) == "none");

    const std::vector<int> workbook_default = {75, 80, 86, 89, 90};
    CHECK(code_for(workbook_default, 90).kind == "native");
    CHECK(code_for(workbook_default, 87).kind == "compatible");  // sm_86 SASS on 8.7
    CHECK(code_for(workbook_default, 87).text.rfind("SASS for sm_86, which runs on sm_87", 0) == 0);
    CHECK(code_for(workbook_default, 100).kind == "ptx_jit");  // PTX of compute_90
    CHECK(has(code_for(workbook_default, 100).text, "compute_90"));
    CHECK(code_for({90}, 86).kind == "none");  // ARCH=sm_90 on an RTX 3090
    CHECK(code_for({80}, 86).kind == "compatible");
    CHECK(code_for({80}, 90).kind == "ptx_jit");
    CHECK(code_for({}, 90).kind == "none");
}

TEST_CASE("00: the profiling permission from /proc/driver/nvidia/params", "[00]") {
    CHECK(profiling_admin_only("EnableMSI: 1\nRmProfilingAdminOnly: 1\nOther: 0\n") == 1);
    CHECK(profiling_admin_only("RmProfilingAdminOnly: 0\n") == 0);
    CHECK(profiling_admin_only("RmProfilingAdminOnly: \n") == -1);
    CHECK(profiling_admin_only("") == -1);
    CHECK(profiling_line(1).value == "true");
    CHECK(has(profiling_line(1).note, "only root"));
    CHECK(profiling_line(0).value == "false");
    CHECK(profiling_line(-1).value == "null");
}

TEST_CASE("00: options: the shared ones that fit are kept, the GEMM ones refused", "[00]") {
    auto parse = [](std::vector<const char*> args, std::string& error) {
        args.insert(args.begin(), "00_env_check");
        wb::Options opt;
        std::string json;
        bool quick = false;
        const std::vector<wb::ExtraOption> extras = {{"json", "FILE", &json, nullptr},
                                                     {"quick", "", nullptr, &quick}};
        return wb::parse_options(int(args.size()), args.data(), opt, error, extras) &&
               check_env_options(opt, error);
    };
    std::string error;
    CHECK(parse({"--quick", "--json", "x.json", "--reps", "20", "--warmup", "3", "--seed", "1"}, error));
    for (auto args : std::vector<std::vector<const char*>>{{"--size", "1024"},
                                                           {"--m", "1", "--n", "2", "--k", "3"},
                                                           {"--variant", "x"},
                                                           {"--csv", "a.csv"},
                                                           {"--no-check"},
                                                           {"--energy"},
                                                           {"--beta", "1"},
                                                           {"--bogus"},
                                                           {"--json"},
                                                           {"--json="}}) {
        error.clear();
        INFO(args[0]);
        CHECK_FALSE(parse(args, error));
        CHECK_FALSE(error.empty());
    }
}

TEST_CASE("00: the verdict names what to fix, and its exit status", "[00]") {
    Report r = sample_report();
    CHECK(judge(r).ready());
    CHECK(judge(r).status == wb::kExitOk);
    CHECK(judge(r).notes.empty());

    SECTION("no code for the GPU: status 3 and the make line") {
        r.gpus[0].kernel_image = "missing";
        const Verdict v = judge(r);
        REQUIRE_FALSE(v.ready());
        CHECK(v.status == wb::kExitNoDevice);
        CHECK(has(v.problems[0], "holds no code for sm_90 (compute capability 9.0)"));
        CHECK(has(v.problems[0], "make clean && make ARCH=sm_90"));
    }
    SECTION("no GPU: status 3, and the problem says so") {
        r.gpus.clear();
        r.device_error = "cudaErrorNoDevice: no CUDA-capable device is detected";
        const Verdict v = judge(r);
        CHECK(v.status == wb::kExitNoDevice);
        REQUIRE(v.problems.size() == 1);
        CHECK(has(v.problems[0], "no usable CUDA GPU"));
    }
    SECTION("a driver older than the runtime in the minor number: a note") {
        r.driver_version = 12080;
        r.runtime_version = 12090;
        CHECK(judge(r).ready());
        CHECK(judge(r).notes == std::vector<std::string>{"update the NVIDIA driver"});
    }
    SECTION("cuBLAS fails: status 1, unless GPU 0 cannot be used at all") {
        r.gpus[0].cublas->pass = false;
        CHECK_FALSE(judge(r).ready());
        CHECK(judge(r).status == wb::kExitVerifyFailed);
        r.gpus[0].measure_error = "cudaErrorLaunchFailure: unspecified launch failure";
        CHECK(judge(r).status == wb::kExitNoDevice);
    }
    SECTION("driver too old: one problem, not two") {
        r.driver_version = 12080;
        r.gpus.clear();
        const Verdict v = judge(r);
        REQUIRE(v.problems.size() == 1);
        CHECK(has(v.problems[0], "Update the NVIDIA driver"));
    }
    SECTION("a second GPU that cannot be used is a note: the chapters run on GPU 0") {
        Gpu second = r.gpus[0];
        second.facts.id = 1;
        second.kernel_image = "missing";
        r.gpus.push_back(second);
        const Verdict v = judge(r);
        CHECK(v.ready());
        REQUIRE(v.notes.size() == 1);
        CHECK(v.notes[0].rfind("GPU 1 ", 0) == 0);
    }
    SECTION("slow measurements and missing tools are notes, not problems") {
        r.gpus[0].fma_gflops = 0.3 * r.gpus[0].facts.peak_fp32_gflops;
        r.gpus[0].copy.kernel_gbs = r.gpus[0].copy.memcpy_gbs = 0.5 * r.gpus[0].facts.peak_bandwidth_gbs;
        r.tools[2].path.clear();
        const Verdict v = judge(r);
        CHECK(v.ready());
        REQUIRE(v.notes.size() == 3);
        CHECK(v.notes[0].rfind("FP32 FMA reached only 30% of theory", 0) == 0);
        CHECK(v.notes[1].rfind("memory bandwidth reached only 50% of theory", 0) == 0);
        CHECK(v.notes[2] == "compute-sanitizer not found");  // config.mk's line
    }
}

TEST_CASE("00: the program refuses bad input with exit status 2 and one line", "[00]") {
    REQUIRE(program_built());
    TempDir dir;
    for (const char* args : {"--bogus", "--size 1024", "--reps 0", "--json",
                             "--json=", "--json /nonexistent-folder/env.json", "--csv out.csv"}) {
        INFO(args);
        const RunResult r = run_program(args, dir);
        CHECK(r.status == wb::kExitBadInput);
        CHECK(r.err.rfind("00_env_check: error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());  // refused before any device work or output
    }
    const RunResult help = run_program("--help", dir);
    CHECK(help.status == 0);
    CHECK(has(help.out, "--json FILE"));
}

TEST_CASE("00: without a GPU the program explains, exits 3 with one line and still writes --json", "[00]") {
    REQUIRE(program_built());
    TempDir dir;
    const std::string json_path = dir / "env.json";
    // An index that does not exist hides every GPU, so this runs the no-GPU path on any machine.
    const RunResult r = run_program("--quick --json '" + json_path + "'", dir, "CUDA_VISIBLE_DEVICES=-1");
    INFO(r.out << r.err);
    CHECK(r.status == wb::kExitNoDevice);
    CHECK(has(r.out, "== cuda"));  // versions come before the bad news
    CHECK(has(r.out, "runtime "));
    // Chapter 01 runs on the CPU: only the GPU chapters wait for a GPU.
    CHECK(has(r.out, "ready for chapter 01 (it runs on the CPU)"));
    CHECK(has(r.out, "NOT ready for the GPU chapters (02 and later)"));
    CHECK(r.err.rfind("00_env_check: error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK((has(r.err, "no usable CUDA GPU") || has(r.err, "no NVIDIA driver")));
    CHECK((has(r.err, "nvidia-smi") || has(r.err, "Install the NVIDIA driver")));  // what to do
    const std::string json = read_file(json_path);
    CHECK(valid_json(json));
    CHECK(number_after(json, "gpu_count") == 0);
    CHECK(has(json, "\"ready\": false"));
    const std::set<std::string> reference = fixture_keys();
    for (const std::string& k : keys_of(json)) CHECK(reference.count(k) == 1);

    // The nvcc that built this chapter (config.mk's NVCC_PATH, handed in by the chapter's Makefile).
    const size_t at = json.find("\"nvcc\": {\n      \"path\": \"");
    REQUIRE(at != std::string::npos);
    const size_t start = json.find(": \"", at + 8) + 3;
    const std::string nvcc = json.substr(start, json.find('"', start) - start);
    CHECK(::access(nvcc.c_str(), X_OK) == 0);
    // The screen shows what make found, the same on any PATH: this program looks for nothing itself.
    const RunResult off = run_program("--quick", dir, "CUDA_VISIBLE_DEVICES=-1 PATH=/nonexistent");
    CHECK(has(off.out, " " + nvcc + "\n"));
}

// ---- GPU tests -------------------------------------------------------------------------------

TEST_CASE("00: the copy kernel copies every size and alignment exactly", "[gpu][00]") {
    WB_REQUIRE_GPU();
    const size_t guard = 8;  // elements on each side that must stay untouched
    const float untouched = -7.25f;
    for (size_t count : {1, 2, 3, 4, 5, 7, 1023, 1024, 4097, 65537, 1000003}) {
        std::vector<float> src(count + 2 * guard + 1);
        wb::fill_random(src.data(), src.size(), 11, count);
        wb::DeviceBuffer<float> d_src(src.size()), d_dst(src.size());
        d_src.upload(src);
        for (size_t src_offset : {0, 1}) {                           // 1: the source is not 16-byte aligned
            for (size_t dst_offset : {0, 1}) {                       // 1: the destination is not either
                for (int blocks : {1, 3, copy_resident_blocks()}) {  // 1 and 3: many grid-stride trips
                    d_dst.upload(std::vector<float>(src.size(), untouched));
                    launch_copy(d_src.get() + guard + src_offset, d_dst.get() + guard + dst_offset, count,
                                blocks, 0);
                    WB_CUDA_CHECK(cudaDeviceSynchronize());
                    const std::vector<float> dst = d_dst.download();
                    size_t wrong = 0;
                    for (size_t i = 0; i < dst.size(); ++i) {
                        const bool inside = i >= guard + dst_offset && i < guard + dst_offset + count;
                        wrong += dst[i] != (inside ? src[i - dst_offset + src_offset] : untouched);
                    }
                    INFO("count " << count << ", offsets " << src_offset << "/" << dst_offset << ", "
                                  << blocks << " blocks");
                    CHECK(wrong == 0);
                }
            }
        }
    }
}

TEST_CASE("00: fma_chains computes what the CPU computes, bit for bit", "[gpu][00]") {
    WB_REQUIRE_GPU();
    const int blocks = 3, threads = blocks * kFmaThreads;
    wb::DeviceBuffer<float> out(threads);
    const float always = -std::numeric_limits<float>::infinity(),
                never = std::numeric_limits<float>::infinity();
    for (const auto& ab : {std::pair<float, float>{kFmaA, kFmaB}, {0.5f, 0.25f}}) {
        WB_CUDA_CHECK(cudaMemset(out.get(), 0xFF, threads * sizeof(float)));  // NaN everywhere
        launch_fma(blocks, ab.first, ab.second, always, out.get(), 0);
        WB_CUDA_CHECK(cudaDeviceSynchronize());
        const std::vector<float> got = out.download();
        int wrong = 0;
        for (int t = 0; t < threads; ++t) {
            const float want = fma_chains_reference(unsigned(t), ab.first, ab.second);
            wrong += std::memcmp(&got[t], &want, sizeof(float)) != 0;
        }
        INFO("a = " << ab.first << ", b = " << ab.second << ", thread 0: " << got[0] << " vs "
                    << fma_chains_reference(0, ab.first, ab.second));
        CHECK(wrong == 0);
    }
    // With store_above = +infinity (the timed runs) nothing is written.
    WB_CUDA_CHECK(cudaMemset(out.get(), 0xFF, threads * sizeof(float)));
    launch_fma(blocks, kFmaA, kFmaB, never, out.get(), 0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> untouched = out.download();
    CHECK(std::all_of(untouched.begin(), untouched.end(), [](float v) { return std::isnan(v); }));
}

TEST_CASE("00: the measured FMA rate and bandwidth are plausible", "[gpu][00]") {
    WB_REQUIRE_GPU();
    const wb::DeviceFacts dev = wb::query_device(0);
    const wb::Stream stream;
    const double fma_gflops = measure_fma_gflops(kFmaWavesQuick, 2, 5, stream);
    const CopyMeasurement copy = measure_copy(size_t(256) << 20, 2, 5, stream);
    INFO("FMA " << fma_gflops << " GFLOP/s of " << dev.peak_fp32_gflops << "; copy " << copy.kernel_gbs
                << " GB/s, memcpy " << copy.memcpy_gbs << " GB/s of " << dev.peak_bandwidth_gbs);
    CHECK(fma_gflops > 0);
    // GeForce cards may boost somewhat above the clock the driver reports as maximum, not by half.
    CHECK(fma_gflops <= 1.5 * dev.peak_fp32_gflops);
    CHECK(copy.kernel_gbs > 0);
    CHECK(copy.memcpy_gbs > 0);
}

TEST_CASE("00: the program measures GPU 0 and writes its JSON", "[gpu][00]") {
    WB_REQUIRE_GPU();
    REQUIRE(program_built());
    TempDir dir;
    const std::string json_path = dir / "env.json";
    const RunResult r = run_program("--quick --json '" + json_path + "'", dir);
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(has(r.out, "ready for every chapter"));
    CHECK_FALSE(has(r.out, "NOT ready"));
    const std::string json = read_file(json_path);
    CHECK(valid_json(json));
    CHECK(number_after(json, "gpu_count") >= 1);
    CHECK(number_after(json, "fma_gflops") > 0);
    CHECK(number_after(json, "copy_kernel_gbs") > 0);
    CHECK(number_after(json, "memcpy_gbs") > 0);
    CHECK(has(json, "\"status\": \"PASS\""));
    CHECK(has(json, "\"kernel_image\": \"ok\""));
    // Every documented key, and the same keys as the format reference the report is tested with.
    for (const char* k : kKeys) CHECK(has(json, "\"" + std::string(k) + "\": "));
    for (const char* k : kLimitKeys) CHECK(has(json, "\"" + std::string(k) + "\": "));
    CHECK(keys_of(json) == fixture_keys());
}
