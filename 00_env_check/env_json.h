// env_json.h - the Report as JSON (results/env.json, read by the report tools). The keys are
// listed in README.md ("The JSON file"); host code only, tested without a GPU.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "env_checks.h"
#include "env_report.h"

namespace env {

// ---- JSON ------------------------------------------------------------------------------------

// A JSON string literal's contents: quotes, backslashes and control characters escaped.
// Bytes >= 0x80 (UTF-8) pass through unchanged, which JSON allows.
inline std::string json_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        const unsigned char c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            default:
                if (c < 0x20) out += strf("\\u%04x", c);
                else out += ch;
        }
    }
    return out;
}

// Writes indented JSON: objects, arrays and values in the order they are given, so the key order
// of the file is the order of the code below (stable from run to run).
class JsonWriter {
public:
    JsonWriter& begin_object(const char* key = nullptr) { return open(key, '{'); }
    JsonWriter& end_object() { return close('}'); }
    JsonWriter& begin_array(const char* key = nullptr) { return open(key, '['); }
    JsonWriter& end_array() { return close(']'); }

    JsonWriter& string(const char* key, const std::string& v) {
        return raw(key, "\"" + json_escape(v) + "\"");
    }
    JsonWriter& integer(const char* key, long long v) { return raw(key, std::to_string(v)); }
    JsonWriter& boolean(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
    JsonWriter& null(const char* key) { return raw(key, "null"); }
    // JSON has no NaN or Infinity: a value that was not measured is written as null.
    JsonWriter& number(const char* key, double v) {
        return measured(v) ? raw(key, strf("%.7g", v)) : null(key);
    }
    // "" is written as null: "no error", "not found".
    JsonWriter& string_or_null(const char* key, const std::string& v) {
        return v.empty() ? null(key) : string(key, v);
    }

    const std::string& str() const { return out_; }

private:
    JsonWriter& raw(const char* key, const std::string& value) {
        next_item(key);
        out_ += value;
        return *this;
    }
    JsonWriter& open(const char* key, char bracket) {
        next_item(key);
        out_ += bracket;
        empty_.push_back(true);
        return *this;
    }
    JsonWriter& close(char bracket) {
        const bool was_empty = empty_.back();
        empty_.pop_back();
        if (!was_empty) newline();
        out_ += bracket;
        if (empty_.empty()) out_ += '\n';
        return *this;
    }
    // The comma before every item but the first of its container, then the key.
    void next_item(const char* key) {
        if (!empty_.empty()) {
            if (!empty_.back()) out_ += ',';
            empty_.back() = false;
            newline();
        }
        if (key) out_ += "\"" + json_escape(key) + "\": ";
    }
    void newline() { out_ += "\n" + std::string(2 * empty_.size(), ' '); }

    std::string out_;
    std::vector<bool> empty_;  // one entry per open container: nothing written into it yet
};

inline const char* to_string(CodeKind k) {
    switch (k) {
        case CodeKind::native: return "native";
        case CodeKind::compatible: return "compatible";
        case CodeKind::ptx_jit: return "ptx_jit";
        case CodeKind::none: break;
    }
    return "none";
}

inline void write_ceilings(JsonWriter& j, const Gpu& g) {
    const Ceilings& c = g.ceilings;
    if (!c.ran) {
        j.null("measured");
        return;
    }
    const double best_bw = best_bandwidth_gbs(c);
    j.begin_object("measured")
        .string_or_null("error", c.error)
        .integer("warmup", c.warmup)
        .integer("reps", c.reps)
        .number("fma_gflops", c.fma_gflops)
        .number("fma_pct_peak", percent(c.fma_gflops, g.peak_fp32_gflops))
        .number("fma_ms_median", c.fma_ms_median)
        .number("fma_ms_min", c.fma_ms_min)
        .integer("fma_flops", static_cast<long long>(c.fma_flops))
        .integer("fma_threads", c.fma_threads)
        .number("sm_clock_ghz_under_load", c.sm_clock_ghz)
        .number("fma_pct_peak_at_measured_clock", percent(c.fma_gflops, peak_at_measured_clock(g)))
        .number("copy_kernel_gbs", c.copy_kernel_gbs)
        .number("copy_kernel_pct_peak", percent(c.copy_kernel_gbs, g.peak_bandwidth_gbs))
        .number("copy_kernel_ms_median", c.copy_kernel_ms_median)
        .number("copy_kernel_ms_min", c.copy_kernel_ms_min)
        .number("memcpy_gbs", c.memcpy_gbs)
        .number("memcpy_pct_peak", percent(c.memcpy_gbs, g.peak_bandwidth_gbs))
        .number("memcpy_ms_median", c.memcpy_ms_median)
        .number("memcpy_ms_min", c.memcpy_ms_min)
        .integer("copy_bytes", static_cast<long long>(c.copy_bytes))
        .number("bandwidth_gbs", best_bw)
        .number("bandwidth_pct_peak", percent(best_bw, g.peak_bandwidth_gbs))
        .number("ridge_flop_per_byte", measured(c.fma_gflops) && measured(best_bw) ? c.fma_gflops / best_bw
                                                                                   : kNotMeasured)
        .end_object();
}

inline void write_gpu(JsonWriter& j, const Gpu& g, const std::vector<int>& built_for) {
    j.begin_object()
        .integer("id", g.id)
        .string("name", g.name)
        .string("cc", g.cc())
        .string("sm", g.sm())
        .string_or_null("pci_bus_id", g.pci_bus_id)
        .string_or_null("query_error", g.query_error)
        .integer("sms", g.sms)
        .integer("fp32_lanes_per_sm", g.fp32_lanes_per_sm)
        .number("sm_clock_ghz", g.clock_ghz)
        .number("mem_clock_ghz", g.mem_clock_ghz)
        .integer("bus_width_bits", g.bus_width_bits)
        .integer("memory_bytes", static_cast<long long>(g.memory_bytes))
        .integer("memory_free_bytes", static_cast<long long>(g.memory_free_bytes))
        .integer("l2_bytes", g.l2_bytes)
        .integer("smem_per_block_bytes", g.smem_per_block)
        .integer("smem_per_block_optin_bytes", g.smem_per_block_optin)
        .integer("smem_per_sm_bytes", g.smem_per_sm)
        .integer("smem_reserved_per_block_bytes", g.smem_reserved_per_block)
        .integer("regs_per_block", g.regs_per_block)
        .integer("regs_per_sm", g.regs_per_sm)
        .integer("warp_size", g.warp_size)
        .integer("max_threads_per_block", g.max_threads_per_block)
        .integer("max_threads_per_sm", g.max_threads_per_sm)
        .integer("max_blocks_per_sm", g.max_blocks_per_sm);
    j.begin_array("max_block_dim");
    for (int d : g.max_block_dim) j.integer(nullptr, d);
    j.end_array().begin_array("max_grid_dim");
    for (int d : g.max_grid_dim) j.integer(nullptr, d);
    j.end_array()
        .boolean("kernel_timeout", g.kernel_timeout)
        .boolean("integrated", g.integrated)
        .boolean("ecc", g.ecc)
        .string("code", to_string(code_for(built_for, g.cc_number()).kind))
        .string_or_null("kernel_image", g.kernel_image)
        .string("rebuild_hint", g.rebuild_hint)
        .number("peak_fp32_gflops", g.peak_fp32_gflops)
        .number("peak_bandwidth_gbs", g.peak_bandwidth_gbs)
        .number("peak_fp16_tc_gflops", g.peak_fp16_tc_gflops > 0 ? g.peak_fp16_tc_gflops : kNotMeasured)
        .number("peak_tf32_tc_gflops", g.peak_tf32_tc_gflops > 0 ? g.peak_tf32_tc_gflops : kNotMeasured);
    write_ceilings(j, g);
    if (g.cublas.ran) {
        j.begin_object("cublas_smoke")
            .string("shape", g.cublas.shape)
            .string("status", g.cublas.pass ? "PASS" : "FAIL")
            .number("rel_err", g.cublas.rel_err)
            .string("detail", g.cublas.detail)
            .end_object();
    } else {
        j.null("cublas_smoke");
    }
    j.end_object();
}

// The whole report as JSON. The keys are documented in README.md ("The JSON file"); add new keys
// at the end of their object and never rename one: tools/ and the report read them.
inline std::string to_json(const Report& r) {
    const VersionMatch versions = match_versions(r.driver_version, r.runtime_version);
    const Verdict v = judge(r);
    JsonWriter j;
    j.begin_object()
        .integer("schema", 1)
        .string("program", r.program)
        .string("git", r.git)
        .string("timestamp", r.timestamp)
        .boolean("quick", r.quick);
    j.begin_object("cuda")
        .integer("driver_version", r.driver_version)
        .string("driver", version_text(r.driver_version))
        .integer("runtime_version", r.runtime_version)
        .string("runtime", version_text(r.runtime_version))
        .boolean("compatible", versions == VersionMatch::ok || versions == VersionMatch::minor_newer)
        .string("note", describe(versions, r.driver_version, r.runtime_version))
        .end_object();
    j.begin_array("built_for");
    for (int a : r.built_for) j.string(nullptr, strf("sm_%d", a));
    j.end_array();
    j.integer("gpu_count", static_cast<long long>(r.gpus.size())).string_or_null("gpu_error", r.device_error);
    j.begin_array("gpus");
    for (const Gpu& g : r.gpus) write_gpu(j, g, r.built_for);
    j.end_array();
    j.begin_object("tools");
    for (const Tool& t : r.tools) {
        std::string key = t.name;  // "compute-sanitizer" -> "compute_sanitizer": easier in jq/Python
        std::replace(key.begin(), key.end(), '-', '_');
        j.begin_object(key.c_str()).string_or_null("path", t.path).boolean("on_path", t.on_path).end_object();
    }
    j.end_object();
    if (r.profiling_admin_only < 0) j.null("profiling_admin_only");
    else j.boolean("profiling_admin_only", r.profiling_admin_only == 1);
    j.boolean("wsl", r.wsl).boolean("ready", v.ready());
    j.begin_array("problems");
    for (const std::string& p : v.problems) j.string(nullptr, p);
    j.end_array().begin_array("notes");
    for (const std::string& n : v.notes) j.string(nullptr, n);
    j.end_array().end_object();
    return j.str();
}

}  // namespace env
