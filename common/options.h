// options.h - the command line every chapter program shares (see docs/CONTRACT.md,
// "The program's options"). Problem sizes and their grammar are in shape.h.
//
// Host-only code: it is compiled by g++ and tested on machines without a GPU.
// Exit statuses used by every program of the workbook:
//   0 all good, 1 a verification failed, 2 bad input, 3 no usable CUDA device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "shape.h"

namespace wb {

enum ExitStatus : int {
    kExitOk = 0,
    kExitVerifyFailed = 1,
    kExitBadInput = 2,
    kExitNoDevice = 3,
};

// The most --warmup or --reps may ask for: a million launches of the shortest kernel is minutes.
constexpr long long kMaxCount = 1000000;

// A chapter-specific option, e.g. 00's "--json FILE" or 05's "--tune".
// Exactly one of `text` (takes a value, never an empty one) or `flag` (takes none) is set.
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
    bool energy = false;  // --energy: also the energy per call from NVML (gflops_per_j in the CSV)
    std::string csv;    // --csv FILE: append one row per measurement (checked writable when parsed)
    bool help = false;
};

// Parses argv into `opt` (which holds the chapter's defaults on entry).
// Returns true on success (also for --help, with opt.help set); on bad input returns false and
// puts one human-readable sentence into `error`. A --csv file that cannot be written is bad input
// too: a student learns it before the measurement, not after it.
bool parse_options(int argc, const char* const* argv, Options& opt, std::string& error,
                   const std::vector<ExtraOption>& extras = {});

// The --help text for program `prog`; the defaults it names are those of `defaults` (a program
// with other defaults, such as the CPU chapter's fewer repetitions, passes its own).
std::string usage(const std::string& prog, const std::vector<ExtraOption>& extras = {},
                  const Options& defaults = Options{});

// True when `path`, the file of `option` (--csv, 00's --json), can be opened for appending. A file
// that did not exist is created to find out and removed again, so a run that ends before its first
// row leaves nothing behind; an existing file is opened for appending only, never truncated. On
// failure `error` names the option, the path and why.
bool output_file_writable(const std::string& path, const std::string& option, std::string& error);

// "a,b,c" -> {"a", "b", "c"} (used for --variant lists).
std::vector<std::string> split_list(const std::string& list, char sep = ',');

}  // namespace wb
