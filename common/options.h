// options.h - the command line every chapter program shares (see WORKBOOK_SPEC.md, "options").
//
// Host-only code: it is compiled by g++ and tested on machines without a GPU.
// Exit statuses used by every program of the workbook:
//   0 all good, 1 a verification failed, 2 bad input, 3 no usable CUDA device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wb {

enum ExitStatus : int {
    kExitOk = 0,
    kExitVerifyFailed = 1,
    kExitBadInput = 2,
    kExitNoDevice = 3,
};

struct Shape {
    int m = 0, n = 0, k = 0;
    double flops() const { return 2.0 * m * n * k; }
};

// A chapter-specific option, e.g. 00's "--json FILE" or 05's "--tune".
// Exactly one of `text` (takes a value) or `flag` (takes none) is set.
struct ExtraOption {
    const char* name;  // without the leading dashes, e.g. "json"
    const char* help;  // one line for --help, e.g. "FILE  write the device facts as JSON"
    std::string* text = nullptr;
    bool* flag = nullptr;
};

struct Options {
    std::vector<Shape> shapes;  // empty: the chapter's default sweep
    float alpha = 1.0f;
    float beta = 0.0f;
    std::string variant = "all";
    int warmup = 2;    // launches before timing; at least 1
    int reps = 10;     // timed launches; median and minimum are reported
    uint64_t seed = 2024;
    bool check = true;  // --no-check turns verification off
    std::string csv;    // --csv FILE: append one row per measurement
    bool help = false;
};

// The largest matrix the workbook accepts: every index then fits in a signed 32-bit int,
// which is what the kernels use.
constexpr long long kMaxElements = (1LL << 31) - 1;
// The largest M, N or K. A grid has at most 65535 blocks in y; with at least 8 rows of C per
// block (true of every kernel here) 500000 rows stay within it, so no launcher needs a loop.
constexpr long long kMaxDim = 500000;

// Parses argv into `opt` (which holds the chapter's defaults on entry).
// Returns true on success (also for --help, with opt.help set); on bad input returns false and
// puts one human-readable sentence into `error`.
bool parse_options(int argc, const char* const* argv, Options& opt, std::string& error,
                   const std::vector<ExtraOption>& extras = {});

// The --help text for program `prog`; the defaults it names are those of `defaults` (a program
// with other defaults, such as the CPU chapter's fewer repetitions, passes its own).
std::string usage(const std::string& prog, const std::vector<ExtraOption>& extras = {},
                  const Options& defaults = Options{});

// Parses "1024" or "1000x1013x777" into a shape (square when one number is given).
bool parse_shape(const std::string& text, Shape& shape, std::string& error);

std::string to_string(const Shape& s);  // "1000x1013x777"

// "a,b,c" -> {"a", "b", "c"} (used for --variant lists).
std::vector<std::string> split_list(const std::string& list, char sep = ',');

}  // namespace wb
