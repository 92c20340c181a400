// program.cuh - the program of chapter 08: its options, checked before any device work, and the
// six parts run in order, each handing its result to the one writer (output.cuh).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "output.cuh"

namespace ch08 {

constexpr const char* kChapter = "08_end_to_end";

// The chapter's own options, as text from the parser, and what they mean once checked.
struct Settings {
    std::string part = "all", out, big = "8192x8192x2048", panels = "16", streams = "3", small = "64",
                batch = "2000";
    std::set<std::string> parts;
    wb::Shape big_shape, small_shape;
    int panel_count = 16, lane_count = 3, batch_count = 2000;
};

inline std::vector<wb::ExtraOption> extra_options(Settings& s) {
    return {
        {"part", "LIST  parts to run: transfers,crossover,streams,graphs,batched,managed or all (default all)", &s.part},
        {"out", "DIR  write every part's CSV and run.txt into DIR (python3 -m wb e2e draws from them)", &s.out},
        {"big", "SHAPE  the large product of the streams and managed parts (default 8192x8192x2048)", &s.big},
        {"panels", "P  row panels of the streams part (default 16)", &s.panels},
        {"streams", "L  streams of the streams part, 2 to 8 (default 3)", &s.streams},
        {"small", "SHAPE  one small product of the graphs and batched parts (default 64)", &s.small},
        {"batch", "COUNT  small products in the graphs and batched parts (default 2000)", &s.batch},
    };
}

// A whole number in [lo, hi], written in plain digits.
inline bool parse_count(const std::string& text, int lo, int hi, int& out) {
    if (text.empty() || text.size() > 10 || text.find_first_not_of("0123456789") != std::string::npos) return false;
    const long long v = std::stoll(text);
    if (v < lo || v > hi) return false;
    out = int(v);
    return true;
}

// --out DIR made (with its parents) and writable; false with the reason in `why`.
inline bool make_output_folder(const std::string& dir, std::string& why) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec && !std::filesystem::is_directory(dir, ec)) ec = std::make_error_code(std::errc::not_a_directory);
    if (!ec && access(dir.c_str(), W_OK) != 0) ec = std::error_code(errno, std::generic_category());
    why = ec.message();
    return !ec;
}

// Checks the chapter's options (before any device work); false with one sentence in `error`.
inline bool check_settings(Settings& s, std::string& error) {
    for (const std::string& p : wb::split_list(s.part)) {
        const bool all = p == "all";
        bool known = all;
        for (const char* k : kParts) {
            known = known || p == k;
            if (all || p == k) s.parts.insert(k);
        }
        if (!known) {
            error = "unknown part '" + p + "' (parts: transfers, crossover, streams, graphs, batched, managed, all)";
            return false;
        }
    }
    if (s.parts.empty()) {
        error = "--part needs at least one part";
        return false;
    }
    std::string why;
    if (!wb::parse_shape(s.big, s.big_shape, why)) {
        error = "--big: " + why;
        return false;
    }
    if (!wb::parse_shape(s.small, s.small_shape, why)) {
        error = "--small: " + why;
        return false;
    }
    if (!parse_count(s.panels, 1, 4096, s.panel_count)) {
        error = "--panels must be a whole number from 1 to 4096, not '" + s.panels + "'";
        return false;
    }
    if (!parse_count(s.streams, 2, 8, s.lane_count)) {
        error = "--streams must be a whole number from 2 to 8, not '" + s.streams + "'";
        return false;
    }
    if (!parse_count(s.batch, 1, 100000000, s.batch_count)) {
        error = "--batch must be a whole number from 1 to 100000000, not '" + s.batch + "'";
        return false;
    }
    if (!s.out.empty() && !make_output_folder(s.out, why)) {
        error = "cannot write the output folder '" + s.out + "' (--out): " + why;
        return false;
    }
    return true;
}

inline bool runs(const Settings& s, const char* part) { return s.parts.count(part) != 0; }

// Device bytes each selected part needs at its peak, against the free memory: a shape that does
// not fit is bad input (exit 2), said before anything is allocated.
inline bool check_fit(const Settings& s, const std::vector<wb::Shape>& sizes, std::string& error) {
    size_t free_b = 0, total_b = 0;
    WB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const size_t slack = size_t(256) << 20;  // cuBLAS workspaces, the CUDA context's own growth
    auto need = [&](const char* part, size_t bytes) {
        if (!error.empty() || bytes + slack <= free_b) return;
        error = std::string("the ") + part + " part needs " + mib_text(bytes + slack) + " of device memory, " +
                mib_text(free_b) + " is free: choose a smaller shape";
    };
    size_t largest = 0;
    for (wb::Shape sh : sizes) largest = std::max(largest, product_bytes(sh));
    if (runs(s, "crossover")) need("crossover", largest);
    if (runs(s, "streams")) need("streams", product_bytes(s.big_shape) + s.lane_count * Lane::kWorkspaceBytes);
    if (runs(s, "managed")) need("managed", 2 * product_bytes(s.big_shape));  // managed + staging
    if (runs(s, "graphs") || runs(s, "batched")) {  // one after the other: each holds one batch
        const double bytes = double(product_bytes(s.small_shape)) * s.batch_count;
        if (bytes + slack > double(free_b) && error.empty())
            error = std::string("the ") + (runs(s, "graphs") ? "graphs" : "batched") + " part needs " + mib_text(size_t(std::min(bytes, 1e18))) + " of device memory for " +
                    std::to_string(s.batch_count) + " products, " + mib_text(free_b) + " is free: choose a smaller --batch";
    }
    return error.empty();
}

// The crossover's rows in the common CSV (--csv): the end-to-end time as the measurement, the
// kernel-only cuBLAS rate of the same shape as the baseline, so "% of cuBLAS" is what is left of
// the kernel's speed once the copies are counted.
inline void append_common_csv(const wb::Options& opt, const wb::DeviceFacts& dev, const std::vector<CrossoverRow>& rows) {
    const wb::RunInfo info = wb::run_info(kChapter, dev);
    double cublas_kernel_gflops = -1;
    std::string baseline_shape;
    for (const CrossoverRow& r : rows) {
        if (wb::to_string(r.shape) != baseline_shape) {
            cublas_kernel_gflops = -1;
            baseline_shape = wb::to_string(r.shape);
        }
        if (r.path == "gpu_cublas_pinned" && r.kernel_ms > 0) cublas_kernel_gflops = r.shape.flops() / (r.kernel_ms * 1e6);
        if (r.total_ms < 0) continue;
        wb::ResultRow row;
        row.variant = "e2e_" + r.path;
        row.dtype = "fp32";
        row.shape = r.shape;
        row.alpha = opt.alpha;
        row.beta = opt.beta;
        row.ms_median = r.total_ms;
        row.ms_min = r.min_ms;
        row.baseline_gflops = cublas_kernel_gflops;
        row.rel_err = r.rel_err;
        row.status = r.status;
        wb::derive_rates(row, dev.peak_fp32_gflops);
        wb::append_csv(opt.csv, row, info);
    }
}

// The crossover's settings from the common options: --sizes (in ascending work, so that "from
// this size on" reads along the list), --alpha, --beta, --variant, --reps, --seed, --no-check.
inline CrossoverSettings crossover_settings(const wb::Options& opt) {
    CrossoverSettings set;
    set.shapes = opt.shapes;
    std::stable_sort(set.shapes.begin(), set.shapes.end(),
                     [](wb::Shape a, wb::Shape b) { return a.flops() < b.flops(); });
    set.alpha = opt.alpha;
    set.beta = opt.beta;
    for (const wb::SgemmVariant& v : kSgemmVariants)
        if (opt.variant == "all" || ("," + opt.variant + ",").find("," + std::string(v.name) + ",") != std::string::npos)
            set.gpu.push_back(v);
    set.max_reps = opt.reps;
    set.seed = opt.seed;
    set.check = opt.check;
    return set;
}

// The whole program after the options were parsed. Returns the exit status.
inline int run_program(Settings& s, const wb::Options& opt, int argc, char** argv) {
    const wb::DeviceFacts dev = wb::require_device(kChapter);  // exits 3 without a usable GPU
    try {
        std::string error;
        if (!check_fit(s, opt.shapes, error)) {
            std::fprintf(stderr, "%s: error: %s\n", kChapter, error.c_str());
            return wb::kExitBadInput;
        }
        const LinkFacts link = read_link(dev.id);
        if (!s.out.empty()) write_run_info(s.out, dev, link, argc, argv);
        std::printf("%s on %s (sm_%d%d), %d CPU threads, OpenBLAS %s\n", kChapter, dev.name.c_str(), dev.cc_major,
                    dev.cc_minor, ch01::all_threads(), ch01::kHaveOpenBlas ? "built in" : "not built in");
        Writer out(s.out);
        bool ok = true;
        auto emit = [&](const PartReport& r) {
            out.emit(r);
            ok = ok && r.ok;
        };
        if (runs(s, "transfers"))
            emit(report(measure_transfers({size_t(1) << 20, size_t(16) << 20, size_t(256) << 20}, opt.warmup, opt.reps),
                        link));
        if (runs(s, "crossover")) {
            const std::vector<CrossoverRow> rows = measure_crossover(crossover_settings(opt), stdout);
            emit(report(rows));
            if (!opt.csv.empty()) append_common_csv(opt, dev, rows);
        }
        if (runs(s, "streams"))
            emit(report(measure_streams(s.big_shape, s.panel_count, s.lane_count, opt.reps, opt.seed)));
        if (runs(s, "graphs"))
            emit(report(measure_graphs(s.small_shape, s.batch_count, opt.warmup, opt.reps, opt.seed)));
        if (runs(s, "batched"))
            emit(report(measure_batched(s.small_shape, s.batch_count, opt.warmup, opt.reps, opt.seed), s.small_shape,
                        s.batch_count));
        if (runs(s, "managed")) emit(report(measure_managed(s.big_shape, opt.seed)));
        if (!s.out.empty())
            std::printf("\nfiles: %s/ (draw the pictures: PYTHONPATH=tools python3 -m wb e2e plots %s)\n", s.out.c_str(),
                        s.out.c_str());
        return ok ? wb::kExitOk : wb::kExitVerifyFailed;
    } catch (const AllocError& e) {
        std::fprintf(stderr, "%s: error: %s (choose a smaller shape)\n", kChapter, e.what());
        return wb::kExitBadInput;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: error: host memory allocation failed (choose a smaller shape)\n", kChapter);
        return wb::kExitBadInput;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: %s\n", kChapter, e.what());
        return wb::kExitVerifyFailed;
    }
}

}  // namespace ch08
