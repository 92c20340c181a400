// report.h - the aligned result table every chapter prints, and the CSV rows it appends.
// Host-only code. The CSV schema is the one of docs/CONTRACT.md, "Results (CSV)".
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "options.h"

namespace wb {

// Where a run happened; the same for every row of one program run.
struct RunInfo {
    std::string chapter;   // "03_shared_tiling"
    std::string gpu;       // device name, or the CPU model for chapter 01
    std::string cc;        // "9.0" (empty for the CPU chapter)
    std::string driver;    // "13.0" (CUDA version the driver supports)
    std::string runtime;   // "13.0" (CUDA runtime the program was built with)
    std::string git;       // commit the program was built from
    std::string student;   // $STUDENT_ID where set
};

// One measurement: a variant on a shape. Negative numbers mean "not measured" and print as "-".
struct ResultRow {
    std::string variant;
    std::string dtype;  // fp32, tf32, fp16
    Shape shape;
    float alpha = 1.0f, beta = 0.0f;
    double ms_median = -1, ms_min = -1;
    double gflops = -1;
    double baseline_gflops = -1;  // cuBLAS (or BLAS for chapter 01) on the same shape, same run
    double pct_baseline = -1;
    double pct_peak = -1;
    double rel_err = -1;
    double gflops_per_j = -1;  // GFLOP per joule of the whole board (--energy), -1 when not measured
    std::string status;  // PASS, FAIL, unchecked, skipped
};

extern const char* const kCsvHeader;

// Fills gflops, pct_baseline and pct_peak from the times (peak in GFLOP/s, <= 0 when unknown).
void derive_rates(ResultRow& row, double peak_gflops);

// The CSV line for one row (no newline), fields in kCsvHeader order; timestamp in UTC ISO 8601.
std::string csv_line(const ResultRow& row, const RunInfo& info, const std::string& timestamp);
// Appends a row to `path`, writing the header first when the file is new or empty.
// Returns false (and says why on stderr) when the file cannot be written.
bool append_csv(const std::string& path, const ResultRow& row, const RunInfo& info);

std::string utc_timestamp();  // "2026-11-29T16:40:21Z"
std::string student_id();     // $STUDENT_ID or ""

// Prints rows as they are measured, aligned under a header.
class ResultTable {
public:
    // baseline: the column title of the baseline, "cuBLAS" or "BLAS".
    explicit ResultTable(std::string baseline, FILE* out = stdout);
    void header() const;
    void row(const ResultRow& r) const;

private:
    std::string baseline_;
    FILE* out_;
};

std::string format_number(double v, int decimals);  // "-" for negative values

}  // namespace wb
