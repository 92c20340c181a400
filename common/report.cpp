// report.cpp - table printing and CSV rows.
#include "report.h"

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>

namespace wb {

const char* const kCsvHeader =
    "chapter,variant,dtype,M,N,K,alpha,beta,ms_median,ms_min,gflops,cublas_gflops,pct_cublas,"
    "pct_peak,rel_err,status,gpu,cc,driver,runtime,git,timestamp,student,gflops_per_j";

void derive_rates(ResultRow& row, double peak_gflops) {
    if (row.ms_median > 0) row.gflops = row.shape.flops() / (row.ms_median * 1e6);
    if (row.gflops > 0 && row.baseline_gflops > 0)
        row.pct_baseline = 100.0 * row.gflops / row.baseline_gflops;
    if (row.gflops > 0 && peak_gflops > 0) row.pct_peak = 100.0 * row.gflops / peak_gflops;
}

std::string format_number(double v, int decimals) {
    if (v < 0) return "-";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

namespace {

// Quotes a CSV field when it holds a comma, a quote or a line break (RFC 4180).
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

std::string num(double v, const char* fmt) {
    if (v < 0) return "";
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

}  // namespace

std::string utc_timestamp() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::string student_id() {
    const char* s = std::getenv("STUDENT_ID");
    return s ? s : "";
}

std::string csv_line(const ResultRow& r, const RunInfo& info, const std::string& timestamp) {
    std::ostringstream o;
    char ab[64];
    o << csv_field(info.chapter) << ',' << csv_field(r.variant) << ',' << r.dtype << ','
      << r.shape.m << ',' << r.shape.n << ',' << r.shape.k << ',';
    std::snprintf(ab, sizeof ab, "%g,%g", r.alpha, r.beta);
    o << ab << ',' << num(r.ms_median, "%.6f") << ',' << num(r.ms_min, "%.6f") << ','
      << num(r.gflops, "%.1f") << ',' << num(r.baseline_gflops, "%.1f") << ','
      << num(r.pct_baseline, "%.2f") << ',' << num(r.pct_peak, "%.2f") << ','
      << (r.rel_err < 0 ? std::string() : num(r.rel_err, "%.3e")) << ',' << r.status << ','
      << csv_field(info.gpu) << ',' << info.cc << ',' << info.driver << ',' << info.runtime << ','
      << csv_field(info.git) << ',' << timestamp << ',' << csv_field(info.student) << ','
      << num(r.gflops_per_j, "%.2f");
    return o.str();
}

bool append_csv(const std::string& path, const ResultRow& row, const RunInfo& info) {
    bool empty = true;
    {
        std::ifstream in(path, std::ios::binary | std::ios::ate);
        if (in && in.tellg() > 0) {
            empty = false;
            // Rows of another schema under this header would be read into the wrong columns.
            std::string first;
            in.seekg(0);
            std::getline(in, first);
            if (first != kCsvHeader) {
                std::cerr << "warning: not appending to CSV file '" << path
                          << "': its header is another schema (an older build wrote it); use a new file\n";
                return false;
            }
        }
    }
    std::ofstream out(path, std::ios::app);
    if (!out) {
        std::cerr << "warning: cannot write CSV file '" << path << "'\n";
        return false;
    }
    if (empty) out << kCsvHeader << '\n';
    out << csv_line(row, info, utc_timestamp()) << '\n';
    return static_cast<bool>(out);
}

ResultTable::ResultTable(std::string baseline, FILE* out) : baseline_(std::move(baseline)), out_(out) {}

void ResultTable::header() const {
    std::string pct = "% " + baseline_;
    std::fprintf(out_, "%-26s %-5s %-16s %10s %10s %10s %8s %8s %10s  %s\n", "variant", "type",
                 "M x N x K", "ms (med)", "ms (min)", "GFLOP/s", pct.c_str(), "% peak", "rel.err",
                 "check");
    std::fflush(out_);
}

void ResultTable::row(const ResultRow& r) const {
    std::string err = r.rel_err < 0 ? "-" : [&] {
        char b[32];
        std::snprintf(b, sizeof b, "%.2e", r.rel_err);
        return std::string(b);
    }();
    std::fprintf(out_, "%-26s %-5s %-16s %10s %10s %10s %8s %8s %10s  %s\n", r.variant.c_str(),
                 r.dtype.c_str(), to_string(r.shape).c_str(), format_number(r.ms_median, 3).c_str(),
                 format_number(r.ms_min, 3).c_str(), format_number(r.gflops, 1).c_str(),
                 format_number(r.pct_baseline, 1).c_str(), format_number(r.pct_peak, 1).c_str(),
                 err.c_str(), r.status.c_str());
    std::fflush(out_);
}

}  // namespace wb
