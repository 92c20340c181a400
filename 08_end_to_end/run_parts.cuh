// run_parts.cuh - each part of the chapter run once: measured, checked, printed, and written to
// its CSV file in --out DIR. Every function returns false when a result failed its check.
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "parts.cuh"

namespace e2e {

inline const char* yes_no(bool b) { return b ? "yes" : "NO"; }

inline bool run_transfers(const Settings& s, const wb::Options& opt, const LinkFacts& link) {
    std::printf("\n== 1. transfers: host <-> device copies ==\n");
    std::printf("link: %s\n  (read with %s)\n", link.describe().c_str(), link.how.c_str());
    const std::vector<size_t> sizes = {size_t(1) << 20, size_t(16) << 20, size_t(256) << 20};
    const std::vector<TransferRow> rows = measure_transfers(sizes, opt.warmup, opt.reps);
    CsvFile csv(s, "transfers.csv", "direction,host,bytes,ms_median,ms_min,gbs,pct_link");
    std::printf("%-4s %-9s %10s %11s %9s %10s\n", "dir", "host", "MiB", "ms median", "GB/s", "% of link");
    for (const TransferRow& r : rows) {
        const double pct = link.max_gbs() > 0 ? 100.0 * r.gbs() / link.max_gbs() : -1;
        std::printf("%-4s %-9s %10.0f %11.4f %9.2f %10s\n", r.direction, r.host, r.bytes / double(1 << 20),
                    r.ms_median, r.gbs(), pct < 0 ? "-" : wb::format_number(pct, 1).c_str());
        csv.row("%s,%s,%zu,%.6f,%.6f,%.3f,%s", r.direction, r.host, r.bytes, r.ms_median, r.ms_min, r.gbs(),
                pct < 0 ? "" : wb::format_number(pct, 2).c_str());
    }
    return true;
}

inline bool run_crossover(const Settings& s, const wb::Options& opt, const wb::DeviceFacts& dev) {
    std::printf("\n== 2. crossover: C = A * B from host memory to host memory, GPU vs CPU ==\n");
    CrossoverSettings set;
    // Ascending work, so that "from this size on" reads along the list.
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
    const std::vector<CrossoverRow> rows = measure_crossover(set, stdout);
    CsvFile csv(s, "crossover.csv",
                "size,shape,path,kind,total_ms,min_ms,h2d_ms,kernel_ms,d2h_ms,overhead_ms,reps,status,rel_err");
    std::printf("%-16s %-24s %11s %9s %9s %9s %9s %5s  %s\n", "shape", "path", "total ms", "copy in", "kernel",
                "copy out", "launch", "reps", "check");
    bool ok = true;
    const wb::RunInfo info = wb::run_info(kChapter, dev);
    double cublas_kernel_gflops = -1;
    std::string baseline_shape;
    for (const CrossoverRow& r : rows) {
        if (wb::to_string(r.shape) != baseline_shape) {  // the baseline: this shape's kernel-only cuBLAS
            cublas_kernel_gflops = -1;
            baseline_shape = wb::to_string(r.shape);
        }
        ok = ok && r.status != "FAIL";
        auto ms = [&](double v) { return r.gpu && r.total_ms >= 0 ? wb::format_number(v, 4) : std::string("-"); };
        std::printf("%-16s %-24s %11s %9s %9s %9s %9s %5d  %s\n", wb::to_string(r.shape).c_str(), r.path.c_str(),
                    wb::format_number(r.total_ms, 4).c_str(), ms(r.h2d_ms).c_str(), ms(r.kernel_ms).c_str(),
                    ms(r.d2h_ms).c_str(), ms(r.overhead_ms).c_str(), r.reps, r.status.c_str());
        csv.row("%d,%s,%s,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%d,%s,%s", r.size, wb::to_string(r.shape).c_str(),
                r.path.c_str(), r.gpu ? "gpu" : "cpu",
                r.total_ms, r.min_ms, r.gpu ? r.h2d_ms : -1.0, r.gpu ? r.kernel_ms : -1.0, r.gpu ? r.d2h_ms : -1.0,
                r.gpu ? r.overhead_ms : -1.0, r.reps, r.status.c_str(),
                r.rel_err < 0 ? "" : wb::format_number(r.rel_err, 3).c_str());
        // The common CSV (--csv): the end-to-end time as the measurement, the kernel-only cuBLAS
        // rate of the same size as the baseline, so "% of cuBLAS" is what survives the copies.
        if (r.path == "gpu_cublas_pinned" && r.kernel_ms > 0) cublas_kernel_gflops = r.shape.flops() / (r.kernel_ms * 1e6);
        if (!opt.csv.empty() && r.total_ms >= 0) {
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
    const CrossoverSummary sum = summarize_crossover(rows);
    if (sum.crossover > 0)
        std::printf("crossover: from %d^3 (or as many multiply-adds) on, the GPU (copies included) beats the fastest "
                    "CPU path\n", sum.crossover);
    else
        std::printf("crossover: the GPU did not win for good at the measured sizes\n");
    return ok;
}

inline void write_timeline(const Settings& s, const char* name, const std::vector<TimelineRow>& rows) {
    CsvFile csv(s, name, "stream,op,panel,start_ms,end_ms");
    for (const TimelineRow& r : rows) csv.row("%d,%s,%d,%.6f,%.6f", r.stream, r.op.c_str(), r.panel, r.start_ms, r.end_ms);
}

inline bool run_streams(const Settings& s, const wb::Options& opt) {
    std::printf("\n== 3. streams: %s in %d row panels, copies overlapping GEMMs on %d streams ==\n",
                wb::to_string(s.big_shape).c_str(), s.panel_count, s.lane_count);
    const StreamsResult r = measure_streams(s.big_shape, s.panel_count, s.lane_count, opt.reps, opt.seed);
    write_timeline(s, "timeline_serial.csv", r.serial);
    write_timeline(s, "timeline_pipelined.csv", r.pipelined);
    CsvFile csv(s, "streams.csv",
                "mode,streams,panels,ms,h2d_ms,gemm_ms,d2h_ms,copy_ms,goal_bound_ms,engine_bound_ms,ratio_goal,status,same_as_serial");
    std::printf("busy time (serial run): copies in %.3f ms, GEMMs %.3f ms, copies out %.3f ms\n", r.h2d_ms, r.gemm_ms,
                r.d2h_ms);
    std::printf("%-22s %10s %18s  %s\n", "mode", "ms", "/ max(copy, gemm)", "same bits as serial");
    struct Mode {
        const char* name;
        int streams;
        double ms;
        bool same;
    };
    const Mode modes[] = {{"serial", 1, r.serial_ms, true},
                          {"pipelined", r.lanes, r.pipelined_ms, r.pipelined_equals_serial},
                          {"pipelined_graph", r.lanes, r.graph_ms, r.graph_equals_serial}};
    for (const Mode& m : modes) {
        const double ratio = m.ms / r.goal_bound_ms();
        std::printf("%-22s %10.3f %18.3f  %s\n", m.name, m.ms, ratio, yes_no(m.same));
        csv.row("%s,%d,%d,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.4f,%s,%s", m.name, m.streams, r.panels, m.ms, r.h2d_ms,
                r.gemm_ms, r.d2h_ms, r.copy_ms(), r.goal_bound_ms(), r.engine_bound_ms(), ratio,
                r.check.pass ? "PASS" : "FAIL", m.same ? "yes" : "no");
    }
    std::printf("goal (pipelined within 15%% of max(total copy, total GEMM) = %.3f ms): %s; capture + instantiate %.3f ms\n",
                r.goal_bound_ms(), r.pipelined_ms <= 1.15 * r.goal_bound_ms() ? "met" : "NOT met", r.instantiate_ms);
    std::printf("check: %s; timelines ordered within each stream: %s\n", r.check.describe().c_str(),
                r.timeline_problem.empty() ? "yes" : r.timeline_problem.c_str());
    return r.check.pass && r.pipelined_equals_serial && r.graph_equals_serial && r.timeline_problem.empty();
}

inline bool run_graphs(const Settings& s, const wb::Options& opt) {
    std::printf("\n== 4 and 6. %d small GEMMs of %s: launched one by one, replayed from a graph, batched ==\n",
                s.batch_count, wb::to_string(s.small_shape).c_str());
    const SmallResult r = measure_small_gemms(s.small_shape, s.batch_count, opt.warmup, opt.reps, opt.seed);
    CsvFile csv(s, "graphs.csv", "path,shape,count,us_per_gemm,gpu_us_per_gemm,status,same_as_loop");
    std::printf("%-16s %14s %18s %7s %14s\n", "path", "us per GEMM", "GPU us per GEMM", "check", "same as loop");
    bool ok = true;
    for (const SmallRow& row : r.rows) {
        ok = ok && row.status == "PASS";
        std::printf("%-16s %14.3f %18.3f %7s %14s\n", row.path.c_str(), row.us_per_gemm, row.gpu_us_per_gemm,
                    row.status.c_str(), yes_no(row.same_as_loop));
        csv.row("%s,%s,%d,%.4f,%.4f,%s,%s", row.path.c_str(), wb::to_string(s.small_shape).c_str(), r.count,
                row.us_per_gemm, row.gpu_us_per_gemm, row.status.c_str(), row.same_as_loop ? "yes" : "no");
    }
    std::printf("graph replay is %.2fx cheaper per GEMM than direct launches (goal 2.5x: %s); capture + "
                "instantiate %.3f ms once\n",
                r.speedup(), r.speedup() >= 2.5 ? "met" : "NOT met", r.capture_ms);
    // The graph replays the loop's own calls: anything but the same bits is a bug.
    return ok && r.rows.size() > 1 && r.rows[1].same_as_loop;
}

inline bool run_managed(const Settings& s, const wb::Options& opt) {
    std::printf("\n== 5. unified memory: %s with cudaMallocManaged vs explicit copies ==\n",
                wb::to_string(s.big_shape).c_str());
    const ManagedResult r = measure_managed(s.big_shape, opt.seed);
    CsvFile csv(s, "managed.csv",
                "scenario,setup_ms,first_gemm_ms,second_gemm_ms,c_to_cpu_ms,cpu_reads_a_ms,status,same_as_explicit");
    std::printf("concurrent managed access (GPU page faults, prefetch): %s\n", yes_no(r.concurrent));
    std::printf("%-26s %10s %12s %12s %11s %12s %6s %6s\n", "scenario", "setup ms", "1st GEMM ms", "2nd GEMM ms",
                "C to CPU", "CPU reads A", "check", "same");
    bool ok = true;
    for (const ManagedRow& m : r.rows) {
        const bool skipped = m.status.rfind("skipped", 0) == 0;
        ok = ok && (skipped || (m.status == "PASS" && m.same_as_explicit));
        std::printf("%-26s %10s %12s %12s %11s %12s %6s %6s\n", m.scenario.c_str(),
                    wb::format_number(m.setup_ms, 3).c_str(), wb::format_number(m.first_gemm_ms, 3).c_str(),
                    wb::format_number(m.second_gemm_ms, 3).c_str(), wb::format_number(m.c_to_cpu_ms, 3).c_str(),
                    wb::format_number(m.cpu_reads_a_ms, 3).c_str(), skipped ? "-" : m.status.c_str(),
                    skipped ? "-" : yes_no(m.same_as_explicit));
        csv.row("%s,%.6f,%.6f,%.6f,%.6f,%.6f,%s,%s", m.scenario.c_str(), m.setup_ms, m.first_gemm_ms, m.second_gemm_ms,
                m.c_to_cpu_ms, m.cpu_reads_a_ms, m.status.c_str(), m.same_as_explicit ? "yes" : "no");
    }
    for (const ManagedRow& m : r.rows)
        if (m.scenario == "managed_cpu_written" && m.first_gemm_ms > m.second_gemm_ms && m.second_gemm_ms > 0) {
            const double mb = double((a_count(s.big_shape) + b_count(s.big_shape)) * sizeof(float)) / 1e6;
            std::printf("page faults: the first GEMM on CPU-written A and B took %.3f ms more than the second: "
                        "%.2f GB/s for the %.0f MB it pulled over\n",
                        m.first_gemm_ms - m.second_gemm_ms, mb / 1e3 / ((m.first_gemm_ms - m.second_gemm_ms) / 1e3), mb);
        }
    return ok;
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
        write_run_info(s, dev, link, argc, argv);
        std::printf("%s on %s (sm_%d%d), %d CPU threads, OpenBLAS %s\n", kChapter, dev.name.c_str(), dev.cc_major,
                    dev.cc_minor, cpu::all_threads(), cpu::kHaveOpenBlas ? "built in" : "not built in");
        bool ok = true;
        if (runs(s, "transfers")) ok = run_transfers(s, opt, link) && ok;
        if (runs(s, "crossover")) ok = run_crossover(s, opt, dev) && ok;
        if (runs(s, "streams")) ok = run_streams(s, opt) && ok;
        if (runs(s, "graphs")) ok = run_graphs(s, opt) && ok;
        if (runs(s, "managed")) ok = run_managed(s, opt) && ok;
        if (!s.out.empty()) std::printf("\nfiles: %s/ (draw the pictures: python3 tools/e2e_plots.py plots %s)\n",
                                        s.out.c_str(), s.out.c_str());
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

}  // namespace e2e
