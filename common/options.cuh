// options.cuh - the command line every chapter program shares (usage() lists it), and its one-line
// errors, exit status 2. tools/wb/shapes.py reads sizes with the same grammar.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpu.cuh"

namespace wb {

struct Shape {
    int m = 0, n = 0, k = 0;
    double flops() const { return 2.0 * m * n * k; }
    std::string text() const { return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};

// Every index of a matrix fits in an int; a grid's y extent (65535 blocks of 8 rows or more) covers any M.
constexpr long long kMaxElements = (1LL << 31) - 1, kMaxDim = 500000;
// The most --warmup or --reps may ask for: a million launches of the shortest kernel is minutes.
constexpr long long kMaxCount = 1000000;

struct Options {
    std::vector<Shape> shapes;  // empty: the chapter's default sweep
    float alpha = 1.0f, beta = 0.0f;
    std::string variant = "all", csv;
    int warmup = 2, reps = 10;
    uint64_t seed = 2024;
    bool check = true, help = false;
};

// A chapter's own option, e.g. {"json", "FILE  write the facts as JSON", &path}: `text` takes a value, `flag` none.
struct ExtraOption {
    const char* name;
    const char* help;
    std::string* text = nullptr;
    bool* flag = nullptr;
};
using BadInput = std::invalid_argument;  // its what(): one sentence that names the argument

// A whole number in 1..hi written in digits alone (no sign, no spaces), else BadInput naming `arg`.
inline long long parse_count(const std::string& arg, const std::string& v, long long lo, long long hi) {
    bool digits = !v.empty() && v.size() < 19;
    for (char c : v) digits = digits && c >= '0' && c <= '9';
    const long long x = digits ? std::strtoll(v.c_str(), nullptr, 10) : -1;
    if (x < lo || x > hi)
        throw BadInput{arg + " needs a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) +
                       ", got '" + v + "'"};
    return x;
}

inline Shape parse_shape(const std::string& arg, const std::string& text) {
    std::vector<std::string> parts(1);
    for (char c : text) c == 'x' ? void(parts.emplace_back()) : parts.back().push_back(c);
    if (parts.size() != 1 && parts.size() != 3)
        throw BadInput{arg + ": '" + text + "' is not a size: write S or MxNxK, e.g. 1024 or 1000x1013x777"};
    Shape s;
    s.m = int(parse_count(arg, parts[0], 1, kMaxDim));
    s.n = parts.size() == 3 ? int(parse_count(arg, parts[1], 1, kMaxDim)) : s.m;
    s.k = parts.size() == 3 ? int(parse_count(arg, parts[2], 1, kMaxDim)) : s.m;
    if (1LL * s.m * s.k > kMaxElements || 1LL * s.k * s.n > kMaxElements || 1LL * s.m * s.n > kMaxElements)
        throw BadInput{arg + ": shape " + s.text() + " has a matrix of more than 2^31-1 elements"};
    return s;
}

inline float parse_float(const std::string& arg, const std::string& v) {
    char* end = nullptr;
    const float x = std::strtof(v.c_str(), &end);  // 1e99 overflows to inf
    if (v.empty() || v[0] == ' ' || *end || !std::isfinite(x))
        throw BadInput{arg + " needs a finite number, got '" + v + "'"};
    return x;
}

inline std::string usage(const char* prog, const Options& d, const std::vector<ExtraOption>& extras) {
    char defaults[160];  // the chapter's own defaults
    std::snprintf(defaults, 160, "(defaults: alpha %g, beta %g, warmup %d, reps %d, seed %llu)\n", d.alpha, d.beta,
                  d.warmup, d.reps, (unsigned long long)d.seed);
    std::string u =
        std::string("usage: ") + prog + " [options]  " + defaults +
        "  --size S | --sizes S1,S2,... | --m M --n N --k K   problems; a size is S (S x S x S) or MxNxK\n"
        "  --alpha A --beta B   --variant NAME[,NAME...]|all   --warmup W --reps R (untimed, timed launches)\n"
        "  --seed S (the correctness run's data)   --no-check   --csv FILE (append a row per measurement)\n";
    for (const ExtraOption& x : extras) u += "  --" + std::string(x.name) + "  " + x.help + "\n";
    return u + "exit status: 0 ok, 1 a check failed, 2 bad input, 3 no usable GPU\n";
}

// Parses argv over the chapter's defaults `opt`; bad input throws BadInput.
inline Options parse(int argc, const char* const* argv, Options opt, const std::vector<ExtraOption>& extras = {}) {
    int mnk[3] = {0, 0, 0};
    bool sizes = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i] == std::string("-h") ? "--help" : argv[i], v;
        const size_t eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;  // --size=1024 too
        if (eq != std::string::npos) v = arg.substr(eq + 1), arg.resize(eq);
        const std::string name = "option " + arg;
        auto value = [&, given = eq != std::string::npos]() -> const std::string& {
            if (!given && i + 1 < argc) v = argv[++i];
            if (v.empty()) throw BadInput{name + " needs a value"};
            return v;
        };
        auto shapes = [&] {
            if (!std::exchange(sizes, true)) opt.shapes.clear();
            std::string item;
            for (char c : value() + ",")
                c == ',' ? opt.shapes.push_back(parse_shape(name, item)), item.clear() : item.push_back(c);
        };
        std::vector<std::pair<std::string, std::function<void()>>> known = {
            {"--help", [&] { opt.help = true; }},
            {"--m", [&] { mnk[0] = int(parse_count(name, value(), 1, kMaxDim)); }},
            {"--n", [&] { mnk[1] = int(parse_count(name, value(), 1, kMaxDim)); }},
            {"--k", [&] { mnk[2] = int(parse_count(name, value(), 1, kMaxDim)); }},
            {"--size", shapes},
            {"--sizes", shapes},
            {"--alpha", [&] { opt.alpha = parse_float(name, value()); }},
            {"--beta", [&] { opt.beta = parse_float(name, value()); }},
            {"--variant", [&] { opt.variant = value(); }},
            {"--warmup", [&] { opt.warmup = int(parse_count(name, value(), 1, kMaxCount)); }},
            {"--reps", [&] { opt.reps = int(parse_count(name, value(), 1, kMaxCount)); }},
            {"--seed", [&] { opt.seed = uint64_t(parse_count(name, value(), 0, 1LL << 62)); }},
            {"--no-check", [&] { opt.check = false; }},
            {"--csv", [&] { opt.csv = value(); }}};
        for (const ExtraOption& e : extras)
            known.push_back(
                {"--" + std::string(e.name), [&, e] { e.flag ? void(*e.flag = true) : void(*e.text = value()); }});
        auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return arg == k.first; });
        if (it == known.end()) throw BadInput{"unknown option '" + arg + "' (see --help)"};
        it->second();
    }
    if (mnk[0] || mnk[1] || mnk[2]) {
        if (!(mnk[0] && mnk[1] && mnk[2])) throw BadInput{"--m, --n and --k go together: give all three"};
        if (sizes) throw BadInput{"give either --m/--n/--k or --size/--sizes, not both"};
        opt.shapes = {parse_shape("--m/--n/--k", Shape{mnk[0], mnk[1], mnk[2]}.text())};
    }
    if (!opt.help && !opt.csv.empty()) {  // now: a student learns it before the measurement, not after it
        const bool existed = access(opt.csv.c_str(), F_OK) == 0;
        std::FILE* f = std::fopen(opt.csv.c_str(), "a");
        if (!f) throw BadInput{"option --csv: cannot write '" + opt.csv + "': " + std::strerror(errno)};
        std::fclose(f), existed || std::remove(opt.csv.c_str());  // a new file waits for its first row
    }
    return opt;
}

// parse, for main: bad input is one line on stderr and exit 2; --help: the usage, then `more` (the variants).
inline Options parse_or_exit(int argc, char** argv, const Options& defaults, const std::string& more = "",
                             const std::vector<ExtraOption>& extras = {}) {
    try {
        const Options opt = parse(argc, argv, defaults, extras);
        if (opt.help) std::printf("%s%s", usage(argv[0], defaults, extras).c_str(), more.c_str()), std::exit(kExitOk);
        return opt;
    } catch (const BadInput& e) {
        std::fprintf(stderr, "%s: error: %s\n", argv[0], e.what());
        std::exit(kExitBadInput);
    }
}

}  // namespace wb
