// output.cuh - what the program prints and writes, in one place. Each part hands its result to
// report(), which turns it into tables (a CSV header and rows of text); one writer prints every
// table and writes it to DIR/<name>.csv when --out DIR is given. tools/wb/e2e.py draws the
// pictures and the notes' tables from those files: their names, columns and values are its input.
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "part1_transfers.cuh"
#include "part2_crossover.cuh"
#include "part3_streams.cuh"
#include "part4_graphs.cuh"
#include "part5_batched.cuh"
#include "part6_managed.cuh"
#include "report.h"

namespace ch08 {

// The parts, in the order they run; part N is kParts[N - 1] (the names --part takes).
const char* const kParts[] = {"transfers", "crossover", "streams", "graphs", "batched", "managed"};
constexpr int kPartCount = int(sizeof kParts / sizeof kParts[0]);

// One table: printed with aligned columns, and written as `csv` (a file name) under --out DIR.
struct Table {
    std::string csv;
    std::vector<std::string> header;
    bool print = true;  // false: the file only (the timelines, drawn by tools/wb/e2e.py)
    std::vector<std::vector<std::string>> rows;
    Table(std::string file, std::vector<std::string> columns, bool printed = true)
        : csv(std::move(file)), header(std::move(columns)), print(printed) {}
};

// What one part reports: its tables, lines printed before and after them, and whether every
// result passed its checks.
struct PartReport {
    int part = 0;  // 1 to 6
    std::string title;
    std::vector<std::string> before, after;
    std::vector<Table> tables;
    bool ok = true;
    PartReport(int number, std::string heading) : part(number), title(std::move(heading)) {}
};

inline std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}
inline std::string yes_no(bool b) { return b ? "yes" : "no"; }
template <class... T>
std::string text(const char* fmt, T... values) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, values...);
    return buf;
}

// The one writer. A CSV file is started (header) the first time a table names it in this run and
// appended to after that, so two parts can fill one file (parts 4 and 5: graphs.csv).
class Writer {
public:
    explicit Writer(std::filesystem::path out) : out_(std::move(out)) {}

    void emit(const PartReport& r) {
        std::printf("\n== %d. %s ==\n", r.part, r.title.c_str());
        for (const std::string& line : r.before) std::printf("%s\n", line.c_str());
        for (const Table& t : r.tables) {
            if (t.print) print(t);
            if (!out_.empty()) write(t);
        }
        for (const std::string& line : r.after) std::printf("%s\n", line.c_str());
        std::fflush(stdout);
    }

private:
    static void print(const Table& t) {
        std::vector<size_t> width(t.header.size());
        for (size_t c = 0; c < width.size(); ++c) {
            width[c] = t.header[c].size();
            for (const auto& row : t.rows) width[c] = std::max(width[c], row[c].size());
        }
        auto line = [&](const std::vector<std::string>& cells) {
            for (size_t c = 0; c < cells.size(); ++c)
                std::printf(c == 0 ? "%-*s" : "  %*s", int(width[c]), cells[c].c_str());
            std::printf("\n");
        };
        line(t.header);
        for (const auto& row : t.rows) line(row);
    }
    void write(const Table& t) {
        const std::filesystem::path path = out_ / t.csv;
        const bool first = started_.insert(t.csv).second;
        std::ofstream f(path, first ? std::ios::trunc : std::ios::app);
        auto line = [&](const std::vector<std::string>& cells) {
            for (size_t c = 0; c < cells.size(); ++c) f << (c ? "," : "") << cells[c];
            f << "\n";
        };
        if (first) line(t.header);
        for (const auto& row : t.rows) line(row);
        if (!f) throw std::runtime_error("cannot write " + path.string());
    }
    std::filesystem::path out_;
    std::set<std::string> started_;
};

// ---- each part's tables ------------------------------------------------------------------------
inline PartReport report(const std::vector<TransferRow>& rows, const LinkFacts& link) {
    PartReport r{1, "transfers: host <-> device copies"};
    r.before = {"link: " + link.describe(), "  (read with " + link.how + ")"};
    Table t{"transfers.csv", {"direction", "host", "bytes", "ms_median", "ms_min", "gbs", "pct_link"}};
    for (const TransferRow& x : rows) {
        const double pct = link.max_gbs() > 0 ? 100.0 * x.gbs() / link.max_gbs() : -1;
        t.rows.push_back({x.direction, x.host, std::to_string(x.bytes), fixed(x.ms_median, 6), fixed(x.ms_min, 6),
                          fixed(x.gbs(), 3), pct < 0 ? "" : wb::format_number(pct, 2)});
    }
    r.tables = {t};
    return r;
}

inline PartReport report(const std::vector<CrossoverRow>& rows) {
    PartReport r{2, "crossover: C = A * B from host memory to host memory, GPU vs CPU"};
    Table t{"crossover.csv", {"size", "shape", "path", "kind", "total_ms", "min_ms", "h2d_ms", "kernel_ms", "d2h_ms",
                              "overhead_ms", "reps", "status", "rel_err"}};
    for (const CrossoverRow& x : rows) {
        r.ok = r.ok && x.status != "FAIL";
        auto gpu_part = [&](double v) { return fixed(x.gpu ? v : -1.0, 6); };
        t.rows.push_back({std::to_string(x.size), wb::to_string(x.shape), x.path, x.gpu ? "gpu" : "cpu",
                          fixed(x.total_ms, 6), fixed(x.min_ms, 6), gpu_part(x.h2d_ms), gpu_part(x.kernel_ms),
                          gpu_part(x.d2h_ms), gpu_part(x.overhead_ms), std::to_string(x.reps), x.status,
                          x.rel_err < 0 ? "" : wb::format_number(x.rel_err, 3)});
    }
    r.tables = {t};
    const CrossoverSummary sum = summarize_crossover(rows);
    r.after = {sum.crossover > 0 ? text("crossover: from %d^3 (or as many multiply-adds) on, the GPU (copies "
                                        "included) beats the fastest CPU path", sum.crossover)
                                 : "crossover: the GPU did not win for good at the measured sizes"};
    return r;
}

inline Table timeline_table(const char* csv, const std::vector<TimelineRow>& rows) {
    Table t{csv, {"stream", "op", "panel", "start_ms", "end_ms"}, false};
    for (const TimelineRow& x : rows)
        t.rows.push_back({std::to_string(x.stream), x.op, std::to_string(x.panel), fixed(x.start_ms, 6),
                          fixed(x.end_ms, 6)});
    return t;
}

inline PartReport report(const StreamsResult& s) {
    PartReport r{3, text("streams: %s in %d row panels, copies overlapping GEMMs on %d streams",
                         wb::to_string(s.shape).c_str(), s.panels, s.lanes)};
    r.before = {text("busy time (serial run): copies in %.3f ms, GEMMs %.3f ms, copies out %.3f ms", s.h2d_ms,
                     s.gemm_ms, s.d2h_ms)};
    Table t{"streams.csv", {"mode", "streams", "panels", "ms", "h2d_ms", "gemm_ms", "d2h_ms", "copy_ms", "goal_bound_ms",
                            "engine_bound_ms", "ratio_goal", "status", "same_as_serial"}};
    struct Mode {
        const char* name;
        int streams;
        double ms;
        bool same;
    };
    for (const Mode& m : {Mode{"serial", 1, s.serial_ms, true}, Mode{"pipelined", s.lanes, s.pipelined_ms, s.pipelined_equals_serial},
                          Mode{"pipelined_graph", s.lanes, s.graph_ms, s.graph_equals_serial}})
        t.rows.push_back({m.name, std::to_string(m.streams), std::to_string(s.panels), fixed(m.ms, 6), fixed(s.h2d_ms, 6),
                          fixed(s.gemm_ms, 6), fixed(s.d2h_ms, 6), fixed(s.copy_ms(), 6), fixed(s.goal_bound_ms(), 6),
                          fixed(s.engine_bound_ms(), 6), fixed(m.ms / s.goal_bound_ms(), 4),
                          s.check.pass ? "PASS" : "FAIL", yes_no(m.same)});
    r.tables = {t, timeline_table("timeline_serial.csv", s.serial), timeline_table("timeline_pipelined.csv", s.pipelined)};
    r.after = {text("goal (pipelined within 15%% of max(total copy, total GEMM) = %.3f ms): %s; capture + instantiate "
                    "%.3f ms", s.goal_bound_ms(), s.pipelined_ms <= 1.15 * s.goal_bound_ms() ? "met" : "NOT met",
                    s.instantiate_ms),
               "check: " + s.check.describe() + "; timelines ordered within each stream: " +
                   (s.timeline_problem.empty() ? "yes" : s.timeline_problem)};
    r.ok = s.check.pass && s.pipelined_equals_serial && s.graph_equals_serial && s.timeline_problem.empty();
    return r;
}

// Parts 4 and 5 share graphs.csv: the loop, the graph, then the batched call.
inline Table small_table(wb::Shape s, int count, const std::vector<SmallRow>& rows) {
    Table t{"graphs.csv", {"path", "shape", "count", "us_per_gemm", "gpu_us_per_gemm", "status", "same_as_loop"}};
    for (const SmallRow& x : rows)
        t.rows.push_back({x.path, wb::to_string(s), std::to_string(count), fixed(x.us_per_gemm, 4),
                          fixed(x.gpu_us_per_gemm, 4), x.status, yes_no(x.same_as_loop)});
    return t;
}

inline PartReport report(const GraphsResult& g) {
    PartReport r{4, text("graphs: %d small GEMMs of %s launched one by one, then replayed from a graph", g.count,
                         wb::to_string(g.shape).c_str())};
    r.tables = {small_table(g.shape, g.count, {g.loop, g.graph})};
    r.after = {text("graph replay is %.2fx cheaper per GEMM than direct launches (goal 2.5x: %s); capture + "
                    "instantiate %.3f ms once", g.speedup(), g.speedup() >= 2.5 ? "met" : "NOT met", g.capture_ms)};
    // The graph replays the loop's own calls: anything but the same bits is a bug.
    r.ok = g.loop.status == "PASS" && g.graph.status == "PASS" && g.graph.same_as_loop;
    return r;
}

inline PartReport report(const SmallRow& batched, wb::Shape s, int count) {
    PartReport r{5, text("batched: the same %d small GEMMs of %s in one cublasSgemmStridedBatched call", count,
                         wb::to_string(s).c_str())};
    r.tables = {small_table(s, count, {batched})};
    r.ok = batched.status == "PASS";
    return r;
}

inline PartReport report(const ManagedResult& m) {
    PartReport r{6, "unified memory: " + wb::to_string(m.shape) + " with cudaMallocManaged vs explicit copies"};
    r.before = {"concurrent managed access (GPU page faults, prefetch): " + yes_no(m.concurrent)};
    Table t{"managed.csv", {"scenario", "setup_ms", "first_gemm_ms", "second_gemm_ms", "c_to_cpu_ms", "cpu_reads_a_ms",
                            "status", "same_as_explicit"}};
    for (const ManagedRow& x : m.rows) {
        const bool skipped = x.status.rfind("skipped", 0) == 0;
        r.ok = r.ok && (skipped || (x.status == "PASS" && x.same_as_explicit));
        t.rows.push_back({x.scenario, fixed(x.setup_ms, 6), fixed(x.first_gemm_ms, 6), fixed(x.second_gemm_ms, 6),
                          fixed(x.c_to_cpu_ms, 6), fixed(x.cpu_reads_a_ms, 6), x.status, yes_no(x.same_as_explicit)});
        if (x.scenario == "managed_cpu_written" && x.first_gemm_ms > x.second_gemm_ms && x.second_gemm_ms > 0) {
            const double extra_ms = x.first_gemm_ms - x.second_gemm_ms;
            const double mb = double((a_count(m.shape) + b_count(m.shape)) * sizeof(float)) / 1e6;
            r.after.push_back(text("page faults: the first GEMM on CPU-written A and B took %.3f ms more than the "
                                   "second: %.2f GB/s for the %.0f MB it pulled over", extra_ms, mb / extra_ms, mb));
        }
    }
    r.tables = {t};
    return r;
}

// run.txt beside the CSV files: what ran, where, with which build (the notes' provenance line).
inline void write_run_info(const std::filesystem::path& out, const wb::DeviceFacts& dev, const LinkFacts& link,
                           int argc, char** argv) {
    std::ofstream f(out / "run.txt");
    std::string cmd = "./08_end_to_end/08_end_to_end";
    for (int i = 1; i < argc; ++i) cmd += std::string(" ") + argv[i];
    f << "command: " << cmd << "\n"
      << "gpu: " << dev.name << "\n"
      << "cc: " << dev.cc() << "\n"
      << "driver: " << wb::cuda_version_string(dev.driver_version) << "\n"
      << "runtime: " << wb::cuda_version_string(dev.runtime_version) << "\n"
      << "git: " << wb::build_git_commit() << "\n"
      << "timestamp: " << wb::utc_timestamp() << "\n"
      << "cpu_threads: " << ch01::all_threads() << "\n"
      << "openblas: " << (ch01::kHaveOpenBlas ? "built in" : "not built in") << "\n"
      << "link: " << link.describe() << "\n"
      << "link_how: " << link.how << "\n"
      << "link_gbs: " << link.max_gbs() << "\n";
    if (!f) throw std::runtime_error("cannot write " + (out / "run.txt").string());
}

}  // namespace ch08
