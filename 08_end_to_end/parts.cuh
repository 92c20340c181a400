// parts.cuh - the program of chapter 08: its options, the parts it runs, what it prints and the
// files it writes into --out DIR (CSV, one file per part, read by tools/e2e_plots.py, which draws
// the pictures and the notes' tables from them).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels.cuh"
#include "report.h"

namespace e2e {

constexpr const char* kChapter = "08_end_to_end";
const char* const kParts[] = {"transfers", "crossover", "streams", "graphs", "managed"};

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
        {"part", "LIST  parts to run: transfers,crossover,streams,graphs,managed or all (default all)", &s.part},
        {"out", "DIR  write every part's CSV and run.txt into DIR (tools/e2e_plots.py draws from them)", &s.out},
        {"big", "SHAPE  the large product of the streams and managed parts (default 8192x8192x2048)", &s.big},
        {"panels", "P  row panels of the streams part (default 16)", &s.panels},
        {"streams", "L  streams of the streams part, 2 to 8 (default 3)", &s.streams},
        {"small", "SHAPE  one small product of the graphs part (default 64)", &s.small},
        {"batch", "COUNT  small products in the graphs part (default 2000)", &s.batch},
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

// mkdir -p; false when a component cannot be made or is not a folder.
inline bool make_folder(const std::string& path) {
    std::string so_far;
    std::stringstream in(path);
    std::string piece;
    if (!path.empty() && path[0] == '/') so_far = "/";
    while (std::getline(in, piece, '/')) {
        if (piece.empty()) continue;
        so_far += piece + "/";
        if (mkdir(so_far.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    struct stat st{};
    return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && access(path.c_str(), W_OK) == 0;
}

// Checks the chapter's options (before any device work); false with one sentence in `error`.
inline bool check_settings(Settings& s, std::string& error) {
    for (const std::string& p : wb::split_list(s.part)) {
        bool known = p == "all";
        for (const char* k : kParts) known = known || p == k;
        if (!known) {
            error = "unknown part '" + p + "' (parts: transfers, crossover, streams, graphs, managed, all)";
            return false;
        }
        if (p == "all")
            for (const char* k : kParts) s.parts.insert(k);
        else
            s.parts.insert(p);
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
    if (!s.out.empty() && !make_folder(s.out)) {
        error = "cannot write the output folder '" + s.out + "' (--out): " + std::strerror(errno);
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
    if (runs(s, "graphs")) {
        const double bytes = double(product_bytes(s.small_shape)) * s.batch_count;
        if (bytes + slack > double(free_b) && error.empty())
            error = "the graphs part needs " + mib_text(size_t(std::min(bytes, 1e18))) + " of device memory for " +
                    std::to_string(s.batch_count) + " products, " + mib_text(free_b) + " is free: choose a smaller --batch";
    }
    return error.empty();
}

// ---- output ----------------------------------------------------------------------------------------
class CsvFile {
public:
    CsvFile(const Settings& s, const std::string& name, const std::string& header) {
        if (s.out.empty()) return;
        path_ = s.out + "/" + name;
        f_.open(path_);
        if (!f_) throw std::runtime_error("cannot write " + path_);
        f_ << header << "\n";
    }
    template <class... T>
    void row(const char* fmt, T... values) {
        if (!f_.is_open()) return;
        char buf[512];
        std::snprintf(buf, sizeof buf, fmt, values...);
        f_ << buf << "\n";
    }

private:
    std::string path_;
    std::ofstream f_;
};

inline void write_run_info(const Settings& s, const wb::DeviceFacts& dev, const LinkFacts& link, int argc,
                           char** argv) {
    if (s.out.empty()) return;
    std::ofstream f(s.out + "/run.txt");
    std::string cmd = "./08_end_to_end/08_end_to_end";
    for (int i = 1; i < argc; ++i) cmd += std::string(" ") + argv[i];
    f << "command: " << cmd << "\n"
      << "gpu: " << dev.name << "\n"
      << "cc: " << dev.cc() << "\n"
      << "driver: " << wb::cuda_version_string(dev.driver_version) << "\n"
      << "runtime: " << wb::cuda_version_string(dev.runtime_version) << "\n"
      << "git: " << wb::build_git_commit() << "\n"
      << "timestamp: " << wb::utc_timestamp() << "\n"
      << "cpu_threads: " << cpu::all_threads() << "\n"
      << "openblas: " << (cpu::kHaveOpenBlas ? "built in" : "not built in") << "\n"
      << "link: " << link.describe() << "\n"
      << "link_how: " << link.how << "\n"
      << "link_gbs: " << link.max_gbs() << "\n";
}

}  // namespace e2e
