// test_00_env_check - the host-side logic on any machine (JSON, PATH lookup, accounting, verdict,
// options, the program's exit statuses), and on a GPU the two measuring kernels and the program's
// JSON with measurements in it.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "env_json.h"
#include "kernels.cuh"
#include "testing.cuh"

namespace {

// ---- helpers -------------------------------------------------------------------------------

// A strict JSON syntax check (RFC 8259): enough to prove the writer never emits a trailing comma,
// an unescaped control character, NaN or an unbalanced bracket.
class JsonSyntax {
public:
    explicit JsonSyntax(const std::string& text) : s_(text) {}
    bool valid() {
        const bool ok = value();
        space();
        return ok && i_ == s_.size();
    }

private:
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void space() {
        while (peek() == ' ' || peek() == '\n' || peek() == '\t' || peek() == '\r') ++i_;
    }
    bool literal(const char* word) {
        const size_t n = std::strlen(word);
        if (s_.compare(i_, n, word) != 0) return false;
        i_ += n;
        return true;
    }
    bool value() {
        space();
        switch (peek()) {
            case '{': return container('}', true);
            case '[': return container(']', false);
            case '"': return string();
            case 't': return literal("true");
            case 'f': return literal("false");
            case 'n': return literal("null");
            default: return number();
        }
    }
    bool container(char close, bool object) {
        ++i_;
        space();
        if (peek() == close) return ++i_, true;
        for (;;) {
            space();
            if (object) {
                if (!string()) return false;
                space();
                if (peek() != ':') return false;
                ++i_;
            }
            if (!value()) return false;
            space();
            if (peek() == ',') {
                ++i_;
                continue;
            }
            if (peek() != close) return false;
            ++i_;
            return true;
        }
    }
    bool string() {
        if (peek() != '"') return false;
        for (++i_; i_ < s_.size(); ++i_) {
            const unsigned char c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') return ++i_, true;
            if (c < 0x20) return false;
            if (c != '\\') continue;
            const char e = ++i_ < s_.size() ? s_[i_] : '\0';
            if (e == 'u') {
                for (int k = 0; k < 4; ++k)
                    if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
            } else if (!std::strchr("\"\\/bfnrt", e) || e == '\0') {
                return false;
            }
        }
        return false;
    }
    bool digits() {
        const size_t start = i_;
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++i_;
        return i_ > start;
    }
    bool number() {
        if (peek() == '-') ++i_;
        if (!digits()) return false;
        if (peek() == '.') {
            ++i_;
            if (!digits()) return false;
        }
        if (peek() == 'e' || peek() == 'E') {
            ++i_;
            if (peek() == '+' || peek() == '-') ++i_;
            if (!digits()) return false;
        }
        return true;
    }

    const std::string& s_;
    size_t i_ = 0;
};

bool has_key(const std::string& json, const std::string& key) {
    return json.find("\"" + key + "\": ") != std::string::npos;
}

// The number after the first "key": (NaN for null or a missing key).
double number_after(const std::string& json, const std::string& key) {
    const std::string tag = "\"" + key + "\": ";
    const size_t at = json.find(tag);
    if (at == std::string::npos) return NAN;
    const char* start = json.c_str() + at + tag.size();
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    return end == start ? NAN : v;
}

using wb::test::read_file;
using wb::test::RunResult;
using wb::test::TempDir;

using wb::test::make_dirs;
using wb::test::write_file;

std::string program_path() { return wb::test::program_path("00_env_check"); }
bool program_built() { return ::access(program_path().c_str(), X_OK) == 0; }

// Runs the program with `args` (and an environment prefix such as "CUDA_VISIBLE_DEVICES=-1").
RunResult run_program(const std::string& args, const TempDir& dir, const std::string& env_prefix = "") {
    return wb::test::run_program("00_env_check", args, dir, env_prefix);
}

// A report as a machine with one ready H100-like GPU would produce it.
env::Report sample_report() {
    env::Report r;
    r.git = "abc123";
    r.timestamp = "2026-01-01T00:00:00Z";
    r.driver_version = 13000;
    r.runtime_version = 13000;
    r.built_for = {80, 90};
    env::Gpu g;
    g.name = "Test \"GPU\"\n\\ with\tcontrol \x01 chars";
    g.cc_major = 9;
    g.sms = 132;
    g.fp32_lanes_per_sm = 128;
    g.clock_ghz = 1.98;
    g.bus_width_bits = 5120;
    g.mem_clock_ghz = 2.619;
    g.peak_fp32_gflops = 132 * 128 * 2 * 1.98;
    g.peak_bandwidth_gbs = 3352.3;
    g.memory_bytes = 150119866368.0;
    g.kernel_image = "ok";
    g.rebuild_hint = "make clean && make ARCH=sm_90";
    g.ceilings.ran = true;
    g.ceilings.warmup = 2;
    g.ceilings.reps = 10;
    g.ceilings.fma_gflops = 0.93 * g.peak_fp32_gflops;
    g.ceilings.copy_kernel_gbs = 0.85 * g.peak_bandwidth_gbs;
    g.ceilings.memcpy_gbs = 0.84 * g.peak_bandwidth_gbs;
    g.ceilings.sm_clock_ghz = 1.97;
    g.cublas.ran = true;
    g.cublas.pass = true;
    g.cublas.shape = "257x255x259";
    g.cublas.rel_err = 3e-8;
    g.cublas.detail = "all entries against the CPU";
    r.gpus.push_back(g);
    r.tools = {{"nvcc", "/usr/local/cuda/bin/nvcc", true, "building"},
               {"ncu", "/usr/local/cuda/bin/ncu", false, "make profile-NN"},
               {"compute-sanitizer", "", false, "make sanitize"}};
    r.profiling_admin_only = 0;
    return r;
}

// The keys README.md documents ("The JSON file"). Tools and the report read them: renaming one
// breaks them, so this list changes only together with the README.
const char* const kTopKeys[] = {"schema", "program", "git", "timestamp", "quick", "cuda", "driver_version",
                                "driver", "runtime_version", "runtime", "compatible", "note", "built_for",
                                "gpu_count", "gpu_error", "gpus", "tools", "profiling_admin_only", "wsl",
                                "ready", "problems", "notes"};
const char* const kGpuKeys[] = {
    "id", "name", "cc", "sm", "pci_bus_id", "query_error", "sms", "fp32_lanes_per_sm", "sm_clock_ghz",
    "mem_clock_ghz", "bus_width_bits", "memory_bytes", "memory_free_bytes", "l2_bytes",
    "smem_per_block_bytes", "smem_per_block_optin_bytes", "smem_per_sm_bytes",
    "smem_reserved_per_block_bytes", "regs_per_block", "regs_per_sm", "warp_size", "max_threads_per_block",
    "max_threads_per_sm", "max_blocks_per_sm", "max_block_dim", "max_grid_dim", "kernel_timeout",
    "integrated", "ecc", "code", "kernel_image", "rebuild_hint", "peak_fp32_gflops", "peak_bandwidth_gbs",
    "peak_fp16_tc_gflops", "peak_tf32_tc_gflops", "measured", "cublas_smoke"};
const char* const kMeasuredKeys[] = {
    "error", "warmup", "reps", "fma_gflops", "fma_pct_peak", "fma_ms_median", "fma_ms_min", "fma_flops",
    "fma_threads", "sm_clock_ghz_under_load", "fma_pct_peak_at_measured_clock", "copy_kernel_gbs",
    "copy_kernel_pct_peak", "copy_kernel_ms_median", "copy_kernel_ms_min", "memcpy_gbs", "memcpy_pct_peak",
    "memcpy_ms_median", "memcpy_ms_min", "copy_bytes", "bandwidth_gbs", "bandwidth_pct_peak",
    "ridge_flop_per_byte"};
const char* const kSmokeKeys[] = {"shape", "status", "rel_err", "detail"};
const char* const kToolKeys[] = {"nvcc", "ncu", "compute_sanitizer", "path", "on_path"};

}  // namespace

// ---- CPU tests -------------------------------------------------------------------------------

TEST_CASE("00: json_escape escapes quotes, backslashes and control characters", "[00]") {
    CHECK(env::json_escape("plain") == "plain");
    CHECK(env::json_escape("say \"hi\"") == "say \\\"hi\\\"");
    CHECK(env::json_escape("C:\\cuda") == "C:\\\\cuda");
    CHECK(env::json_escape("a\nb\tc\rd") == "a\\nb\\tc\\rd");
    CHECK(env::json_escape(std::string("\x01\x1f", 2)) == "\\u0001\\u001f");
    CHECK(env::json_escape("H200 \xe2\x9c\x93") == "H200 \xe2\x9c\x93");  // UTF-8 passes through
}

TEST_CASE("00: the JSON is valid and has every documented key", "[00]") {
    const std::string json = env::to_json(sample_report());
    INFO(json);
    CHECK(JsonSyntax(json).valid());
    for (const char* k : kTopKeys) CHECK(has_key(json, k));
    for (const char* k : kGpuKeys) CHECK(has_key(json, k));
    for (const char* k : kMeasuredKeys) CHECK(has_key(json, k));
    for (const char* k : kSmokeKeys) CHECK(has_key(json, k));
    for (const char* k : kToolKeys) CHECK(has_key(json, k));
    CHECK(number_after(json, "gpu_count") == 1);
    CHECK(json.find("\"memory_bytes\": 150119866368,") != std::string::npos);  // bytes stay exact
    CHECK(json.find("\"ready\": true") != std::string::npos);
    CHECK(json.find("\"status\": \"PASS\"") != std::string::npos);
    CHECK(std::fabs(number_after(json, "fma_pct_peak") - 93.0) < 1e-3);
    CHECK(std::fabs(number_after(json, "fma_pct_peak_at_measured_clock") - 93.0 * 1.98 / 1.97) < 1e-3);
    CHECK(std::fabs(number_after(json, "bandwidth_gbs") - 0.85 * 3352.3) < 1e-2);  // the better of the two
    // The name with quotes, a newline, a tab and a control character stays one valid string.
    CHECK(json.find("Test \\\"GPU\\\"\\n\\\\ with\\tcontrol \\u0001 chars") != std::string::npos);
}

TEST_CASE("00: unmeasured values and a machine without GPU give valid JSON", "[00]") {
    env::Report r = sample_report();
    r.gpus[0].ceilings.fma_gflops = env::kNotMeasured;  // NaN must become null, never "nan"
    std::string json = env::to_json(r);
    CHECK(JsonSyntax(json).valid());
    CHECK(json.find("\"fma_gflops\": null") != std::string::npos);
    CHECK(json.find(": nan") == std::string::npos);
    CHECK(json.find(": -nan") == std::string::npos);

    r.gpus.clear();
    r.driver_version = 0;
    r.device_error = "cudaErrorNoDevice: no CUDA-capable device is detected";
    json = env::to_json(r);
    INFO(json);
    CHECK(JsonSyntax(json).valid());
    CHECK(number_after(json, "gpu_count") == 0);
    CHECK(json.find("\"gpus\": []") != std::string::npos);
    CHECK(json.find("\"ready\": false") != std::string::npos);
}

TEST_CASE("00: find_on_path finds an executable the way a shell does", "[00]") {
    TempDir a, b;
    write_file(a / "wb-tool", "#!/bin/sh\n", 0700);
    write_file(b / "wb-tool", "#!/bin/sh\n", 0700);
    write_file(a / "wb-not-executable", "text\n", 0600);
    make_dirs(a / "wb-folder");

    const std::string pa = a.path, pb = b.path;
    CHECK(env::find_on_path("wb-tool", pa) == pa + "/wb-tool");
    CHECK(env::find_on_path("wb-tool", "/nonexistent:" + pb + ":" + pa) == pb + "/wb-tool");  // first wins
    CHECK(env::find_on_path("wb-tool", pa + "/") == pa + "/wb-tool");
    CHECK(env::find_on_path("wb-not-executable", pa).empty());
    CHECK(env::find_on_path("wb-folder", pa).empty());  // a folder is not a program
    CHECK(env::find_on_path("wb-missing", pa + ":" + pb).empty());
    CHECK(env::find_on_path("wb-tool", "").size() == 0);

    // Versioned install folders are searched through a glob; the newest (last sorted) wins.
    make_dirs(a / "nsight-2024.1");
    make_dirs(a / "nsight-2025.3");
    write_file(a / "nsight-2024.1/wb-ncu", "#!/bin/sh\n", 0700);
    write_file(a / "nsight-2025.3/wb-ncu", "#!/bin/sh\n", 0700);
    CHECK(env::find_in_folders("wb-ncu", {"/nonexistent", pa + "/nsight-*"}) == pa + "/nsight-2025.3/wb-ncu");
    CHECK(env::find_in_folders("wb-ncu", {pb}).empty());
}

TEST_CASE("00: a tool that is found but not on the PATH gets the export line", "[00]") {
    env::Tool t{"ncu", "/usr/local/cuda/bin/ncu", false, "make profile-NN"};
    CHECK(env::describe(t, 13000).find("export PATH=/usr/local/cuda/bin:$PATH") != std::string::npos);
    t.on_path = true;
    CHECK(env::describe(t, 13000) == "/usr/local/cuda/bin/ncu");
    t.path.clear();
    t.on_path = false;
    CHECK(env::describe(t, 13000).find("cuda-nsight-compute-13-0") != std::string::npos);
}

TEST_CASE("00: bytes and FLOP are counted as the notes say", "[00]") {
    // A copy reads every byte once and writes it once.
    CHECK(copy_bytes_moved(1024.0 * 1024 * 1024) == 2.0 * 1024 * 1024 * 1024);
    // 2 FLOP per FMA, kFmaChains chains of kFmaIters FMAs per thread.
    CHECK(fma_flops(1) == 2.0 * kFmaChains * kFmaIters);
    CHECK(fma_flops(1000) == 1000 * 2.0 * 8 * 1024);
    // 2e9 bytes in 1 ms is 2e12 B/s = 2000 GB/s.
    CHECK(env::per_second_1e9(2e9, 1.0) == 2000.0);
    CHECK(env::percent(50.0, 200.0) == 25.0);
    CHECK_FALSE(env::measured(env::percent(env::kNotMeasured, 200.0)));
    CHECK_FALSE(env::measured(env::percent(50.0, 0.0)));
    // The memory ceiling is the better copy; none measured is "not measured", never 0.
    env::Ceilings c;
    CHECK_FALSE(env::measured(env::best_bandwidth_gbs(c)));
    c.memcpy_gbs = 4204.0;
    CHECK(env::best_bandwidth_gbs(c) == 4204.0);
    c.copy_kernel_gbs = 4300.0;
    CHECK(env::best_bandwidth_gbs(c) == 4300.0);
    // The H200's 65256 GFLOP/s on 132 SMs x 128 lanes needs at least 1.931 GHz (the notes' number).
    env::Gpu h200;
    h200.sms = 132;
    h200.fp32_lanes_per_sm = 128;
    CHECK(std::fabs(env::min_clock_for_gflops(h200, 65256.0) - 1.931) < 5e-4);
    CHECK_FALSE(env::measured(env::min_clock_for_gflops(env::Gpu{}, 65256.0)));
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
    for (unsigned t : {0u, 1u, 127u, 128u, 1000000u}) {
        for (int c = 0; c < kFmaChains; ++c) {
            const float x = fma_start_value(t, c);
            CHECK(x >= 0.0f);
            CHECK(x < 1.0f);
            CHECK(x * 1024.0f == std::floor(x * 1024.0f));  // k / 1024 exactly
        }
        const float sum = fma_chains_reference(t, kFmaA, kFmaB);
        CHECK(std::isfinite(sum));
        CHECK(sum >= 0.0f);
        CHECK(sum <= float(kFmaChains));
    }
}

TEST_CASE("00: driver and runtime versions are matched as CUDA does", "[00]") {
    using env::VersionMatch;
    CHECK(env::match_versions(13000, 13000) == VersionMatch::ok);
    CHECK(env::match_versions(13010, 13000) == VersionMatch::ok);
    CHECK(env::match_versions(13000, 13010) == VersionMatch::minor_newer);
    CHECK(env::match_versions(12080, 13000) == VersionMatch::too_old);
    CHECK(env::match_versions(0, 13000) == VersionMatch::no_driver);
    CHECK(env::version_text(12040) == "12.4");
    CHECK(env::version_text(13000) == "13.0");
    const std::string too_old = env::describe(VersionMatch::too_old, 12080, 13000);
    CHECK(too_old.find("Update the NVIDIA driver") != std::string::npos);
}

TEST_CASE("00: which compiled-in code runs on which GPU", "[00]") {
    using env::CodeKind;
    const std::vector<int> workbook_default = {75, 80, 86, 89, 90};
    CHECK(env::code_for(workbook_default, 90).kind == CodeKind::native);
    CHECK(env::code_for(workbook_default, 87).kind == CodeKind::compatible);  // sm_86 SASS on 8.7
    CHECK(env::code_for(workbook_default, 87).arch == 86);
    CHECK(env::code_for(workbook_default, 100).kind == CodeKind::ptx_jit);  // PTX of compute_90
    CHECK(env::code_for({90}, 86).kind == CodeKind::none);                   // ARCH=sm_90 on an RTX 3090
    CHECK(env::code_for({80}, 86).kind == CodeKind::compatible);
    CHECK(env::code_for({80}, 90).kind == CodeKind::ptx_jit);
    CHECK(env::code_for({}, 90).kind == CodeKind::none);
    CHECK(env::arch_list_text({80, 90}) == "sm_80 sm_90");
}

TEST_CASE("00: /proc parsers", "[00]") {
    CHECK(env::profiling_admin_only("EnableMSI: 1\nRmProfilingAdminOnly: 1\nOther: 0\n") == 1);
    CHECK(env::profiling_admin_only("RmProfilingAdminOnly: 0\n") == 0);
    CHECK(env::profiling_admin_only("EnableMSI: 1\n") == -1);
    CHECK(env::profiling_admin_only("") == -1);
    CHECK(env::is_wsl("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@...)"));
    CHECK_FALSE(env::is_wsl("Linux version 6.8.0-45-generic (buildd@lcy02-amd64-075)"));
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
               env::check_env_options(opt, error);
    };
    std::string error;
    CHECK(parse({"--quick", "--json", "x.json", "--reps", "20", "--warmup", "3", "--seed", "1"}, error));
    for (auto args : std::vector<std::vector<const char*>>{
             {"--size", "1024"}, {"--m", "1", "--n", "2", "--k", "3"}, {"--variant", "x"},
             {"--csv", "a.csv"}, {"--no-check"}, {"--beta", "1"}, {"--bogus"}, {"--json"}}) {
        error.clear();
        INFO(args[0]);
        CHECK_FALSE(parse(args, error));
        CHECK_FALSE(error.empty());
    }
}

TEST_CASE("00: the verdict names what to fix", "[00]") {
    env::Report r = sample_report();
    r.tools[1].on_path = true;
    r.tools[2] = {"compute-sanitizer", "/usr/bin/compute-sanitizer", true, "make sanitize"};
    CHECK(env::judge(r).ready());
    CHECK(env::judge(r).notes.empty());
    CHECK(env::readiness(env::judge(r)) ==
          std::vector<std::string>{"ready for every chapter: 01 on the CPU, 02 and later on GPU 0."});

    SECTION("no code for the GPU") {
        r.gpus[0].kernel_image = "missing";
        const env::Verdict v = env::judge(r);
        REQUIRE_FALSE(v.ready());
        CHECK(v.problems[0].find("make clean && make ARCH=sm_90") != std::string::npos);
    }
    SECTION("no GPU: chapter 01 is still ready, the GPU chapters are not") {
        r.gpus.clear();
        r.device_error = "cudaErrorNoDevice: no CUDA-capable device is detected";
        const env::Verdict v = env::judge(r);
        REQUIRE_FALSE(v.ready());
        const std::vector<std::string> lines = env::readiness(v);
        REQUIRE(lines.size() == 2);
        CHECK(lines[0] == "ready for chapter 01 (it runs on the CPU).");
        CHECK(lines[1].rfind("NOT ready for the GPU chapters", 0) == 0);
        CHECK(v.problems[0].find("no usable CUDA GPU") != std::string::npos);
    }
    SECTION("cuBLAS fails") {
        r.gpus[0].cublas.pass = false;
        CHECK_FALSE(env::judge(r).ready());
    }
    SECTION("driver too old: one problem, not two") {
        r.driver_version = 12080;
        r.gpus.clear();
        const env::Verdict v = env::judge(r);
        REQUIRE(v.problems.size() == 1);
        CHECK(v.problems[0].find("Update the NVIDIA driver") != std::string::npos);
    }
    SECTION("slow measurements, a watchdog, missing tools and WSL2 are notes, not problems") {
        r.gpus[0].ceilings.fma_gflops = 0.3 * r.gpus[0].peak_fp32_gflops;
        r.gpus[0].kernel_timeout = true;
        r.tools[2].on_path = false;
        r.wsl = true;
        r.profiling_admin_only = 1;
        const env::Verdict v = env::judge(r);
        CHECK(v.ready());
        CHECK(v.notes.size() == 5);
    }
}

TEST_CASE("00: text helpers", "[00]") {
    CHECK(env::strf("%d-%s", 7, "x") == "7-x");
    CHECK(env::strf("%s", std::string(2000, 'a').c_str()).size() == 2000);  // no fixed buffer
    CHECK(env::bytes_text(48 * 1024) == "48 KiB");
    CHECK(env::bytes_text(50.0 * 1024 * 1024) == "50.0 MiB");
    CHECK(env::bytes_text(139.8 * 1024 * 1024 * 1024) == "139.80 GiB");
    CHECK(std::string(env::architecture_name(9, 0)) == "Hopper");
    CHECK(std::string(env::architecture_name(8, 9)) == "Ada Lovelace");
}

TEST_CASE("00: the program refuses bad input with exit status 2 and one line", "[00]") {
    REQUIRE(program_built());
    TempDir dir;
    for (const char* args : {"--bogus", "--size 1024", "--reps 0", "--json", "--json=",
                             "--json /nonexistent-folder/env.json", "--csv out.csv"}) {
        INFO(args);
        const RunResult r = run_program(args, dir);
        CHECK(r.status == wb::kExitBadInput);
        CHECK(r.err.rfind("00_env_check: error: ", 0) == 0);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.out.empty());  // refused before any device work or output
    }
    const RunResult help = run_program("--help", dir);
    CHECK(help.status == 0);
    CHECK(help.out.find("--json FILE") != std::string::npos);
}

TEST_CASE("00: without a GPU the program explains, exits 3 and still writes --json", "[00]") {
    REQUIRE(program_built());
    TempDir dir;
    const std::string json_path = dir / "env.json";
    // An index that does not exist hides every GPU, so this runs the no-GPU path on any machine.
    const RunResult r =
        run_program("--quick --json '" + json_path + "'", dir, "CUDA_VISIBLE_DEVICES=-1");
    INFO(r.out << r.err);
    CHECK(r.status == wb::kExitNoDevice);
    CHECK(r.out.find("== CUDA versions") != std::string::npos);  // versions come before the bad news
    CHECK(r.out.find("runtime (built with)") != std::string::npos);
    // Chapter 01 runs on the CPU: only the GPU chapters wait for a GPU.
    CHECK(r.out.find("ready for chapter 01 (it runs on the CPU)") != std::string::npos);
    CHECK(r.out.find("NOT ready for the GPU chapters (02 and later)") != std::string::npos);
    CHECK(r.out.find("NOT ready for chapter 01") == std::string::npos);
    CHECK(r.err.find("no usable CUDA device") != std::string::npos);
    const std::string json = read_file(json_path);
    CHECK(JsonSyntax(json).valid());
    CHECK(number_after(json, "gpu_count") == 0);
    CHECK(json.find("\"ready\": false") != std::string::npos);
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
        for (size_t src_offset : {0, 1}) {       // 1: the source is not 16-byte aligned
            for (size_t dst_offset : {0, 1}) {   // 1: the destination is not either
                for (int blocks : {1, 3, copy_resident_blocks()}) {  // 1 and 3: many grid-stride trips
                    d_dst.upload(std::vector<float>(src.size(), untouched));
                    launch_copy(d_src.get() + guard + src_offset, d_dst.get() + guard + dst_offset, count,
                                blocks, 0);
                    WB_CUDA_CHECK(cudaDeviceSynchronize());
                    const std::vector<float> dst = d_dst.download();
                    size_t wrong = 0;
                    for (size_t i = 0; i < dst.size(); ++i) {
                        const bool inside = i >= guard + dst_offset && i < guard + dst_offset + count;
                        const float want = inside ? src[i - dst_offset + src_offset] : untouched;
                        wrong += dst[i] != want;
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
    const int blocks = 3;
    const int threads = blocks * kFmaThreads;
    wb::DeviceBuffer<float> out(threads);
    wb::DeviceBuffer<unsigned long long> clock_sums(2);
    const float always = -std::numeric_limits<float>::infinity();
    const float never = std::numeric_limits<float>::infinity();
    const std::pair<float, float> coefficients[] = {{kFmaA, kFmaB}, {0.5f, 0.25f}};
    for (const auto& ab : coefficients) {
        WB_CUDA_CHECK(cudaMemset(out.get(), 0xFF, threads * sizeof(float)));  // NaN everywhere
        WB_CUDA_CHECK(cudaMemset(clock_sums.get(), 0, 2 * sizeof(unsigned long long)));
        launch_fma(blocks, ab.first, ab.second, always, out.get(), clock_sums.get(), 0);
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
        const std::vector<unsigned long long> sums = clock_sums.download();
        CHECK(sums[0] > 0);  // cycles
        CHECK(sums[1] > 0);  // nanoseconds
    }
    // With store_above = +infinity (the timed runs) nothing is written.
    WB_CUDA_CHECK(cudaMemset(out.get(), 0xFF, threads * sizeof(float)));
    launch_fma(blocks, kFmaA, kFmaB, never, out.get(), nullptr, 0);
    WB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> untouched = out.download();
    CHECK(std::all_of(untouched.begin(), untouched.end(), [](float v) { return std::isnan(v); }));
}

TEST_CASE("00: the measured FMA rate and bandwidth are plausible", "[gpu][00]") {
    WB_REQUIRE_GPU();
    const wb::DeviceFacts dev = wb::query_device(0);
    cudaStream_t stream = nullptr;
    WB_CUDA_CHECK(cudaStreamCreate(&stream));
    const FmaMeasurement fma = measure_fma(kFmaWavesQuick, 2, 5, stream);
    const CopyMeasurement copy = measure_copy(size_t(256) << 20, 2, 5, stream);
    WB_CUDA_CHECK(cudaStreamDestroy(stream));
    INFO("FMA " << fma.gflops << " GFLOP/s of " << dev.peak_fp32_gflops << " at " << fma.sm_clock_ghz
                << " GHz (max " << dev.clock_ghz << "); copy " << copy.kernel_gbs << " GB/s, memcpy "
                << copy.memcpy_gbs << " GB/s of " << dev.peak_bandwidth_gbs);
    CHECK(fma.gflops > 0);
    CHECK(fma.sm_clock_ghz > 0);
    // GeForce cards may boost above the clock the driver reports as maximum; a rate above theory
    // is only plausible by that factor.
    const double boost = std::max(1.0, fma.sm_clock_ghz / dev.clock_ghz);
    CHECK(fma.gflops <= 1.05 * dev.peak_fp32_gflops * boost);
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
    CHECK(r.out.find("ready for every chapter") != std::string::npos);
    CHECK(r.out.find("NOT ready") == std::string::npos);
    const std::string json = read_file(json_path);
    CHECK(JsonSyntax(json).valid());
    CHECK(number_after(json, "gpu_count") >= 1);
    CHECK(number_after(json, "fma_gflops") > 0);
    CHECK(number_after(json, "copy_kernel_gbs") > 0);
    CHECK(number_after(json, "memcpy_gbs") > 0);
    CHECK(json.find("\"status\": \"PASS\"") != std::string::npos);
    CHECK(json.find("\"kernel_image\": \"ok\"") != std::string::npos);
}
