// options.cuh - the command line every chapter program shares, and its one-line errors (exit 2).
//   --m M --n N --k K | --size S | --sizes S1,S2,...   a size is S (S x S x S) or MxNxK
//   --alpha A --beta B  --variant NAME|all  --warmup W --reps R --seed S  --no-check  --csv FILE
// tools/wb/shapes.py reads sizes with the same grammar.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu.cuh"

namespace wb {

struct Shape {
    int m = 0, n = 0, k = 0;
    double flops() const { return 2.0 * m * n * k; }
};
inline std::string to_string(Shape s) { return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k); }

// Every index of a matrix fits in an int, and a grid's y extent (65535 blocks of at least 8 rows)
// covers any M.
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
struct ExtraOption { const char* name; const char* help; std::string* text = nullptr; bool* flag = nullptr; };
struct BadInput { std::string what; };  // one sentence that names the argument

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
    for (char c : text)
        if (c == 'x') parts.emplace_back();
        else parts.back().push_back(c);
    if (parts.size() != 1 && parts.size() != 3)
        throw BadInput{arg + ": '" + text + "' is not a size: write S or MxNxK, e.g. 1024 or 1000x1013x777"};
    Shape s;
    s.m = int(parse_count(arg, parts[0], 1, kMaxDim));
    s.n = parts.size() == 3 ? int(parse_count(arg, parts[1], 1, kMaxDim)) : s.m;
    s.k = parts.size() == 3 ? int(parse_count(arg, parts[2], 1, kMaxDim)) : s.m;
    if (1LL * s.m * s.k > kMaxElements || 1LL * s.k * s.n > kMaxElements || 1LL * s.m * s.n > kMaxElements)
        throw BadInput{arg + ": shape " + to_string(s) + " has a matrix of more than 2^31-1 elements"};
    return s;
}

inline float parse_float(const std::string& arg, const std::string& v) {
    char* end = nullptr;
    errno = 0;
    const float x = v.empty() || v[0] == ' ' ? NAN : std::strtof(v.c_str(), &end);
    if (errno || !end || *end || !std::isfinite(x)) throw BadInput{arg + " needs a finite number, got '" + v + "'"};
    return x;
}

inline std::string usage(const char* prog, const Options& d, const std::vector<ExtraOption>& extras) {
    char defaults[160];
    std::snprintf(defaults, sizeof defaults, "(defaults: alpha %g, beta %g, warmup %d, reps %d, seed %llu)\n", d.alpha,
                  d.beta, d.warmup, d.reps, (unsigned long long)d.seed);
    std::string u = std::string("usage: ") + prog + " [options]  " + defaults +
                    "  --m M --n N --k K        one problem: C(MxN) = alpha * A(MxK) * B(KxN) + beta * C\n"
                    "  --size S | --sizes S1,S2,...  problems, each S (S x S x S) or MxNxK (default: a sweep)\n"
                    "  --alpha A --beta B       the scalars\n"
                    "  --variant NAME|all       one variant, or a comma-separated list\n"
                    "  --warmup W --reps R      untimed and timed launches\n"
                    "  --seed S                 seed of the data of the correctness run\n"
                    "  --no-check               skip verification\n"
                    "  --csv FILE               append one CSV row per measurement\n";
    for (const ExtraOption& x : extras) u += "  --" + std::string(x.name) + "  " + x.help + "\n";
    return u + "exit status: 0 ok, 1 a check failed, 2 bad input, 3 no usable GPU\n";
}

// Parses argv over the chapter's defaults `opt`; bad input throws BadInput.
inline Options parse(int argc, const char* const* argv, Options opt, const std::vector<ExtraOption>& extras = {}) {
    int mnk[3] = {0, 0, 0};
    bool sizes = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i], v;
        const size_t eq = arg.rfind("--", 0) == 0 ? arg.find('=') : std::string::npos;  // --size=1024 too
        if (eq != std::string::npos) v = arg.substr(eq + 1), arg.resize(eq);
        const std::string name = "option " + arg;
        auto value = [&, given = eq != std::string::npos]() -> const std::string& {
            if (!given && i + 1 < argc) v = argv[++i];
            if (v.empty()) throw BadInput{name + " needs a value"};
            return v;
        };
        const char* dims[] = {"--m", "--n", "--k"};
        const int dim = int(std::find(dims, dims + 3, arg) - dims);
        if (arg == "--help" || arg == "-h") opt.help = true;
        else if (dim < 3) mnk[dim] = int(parse_count(name, value(), 1, kMaxDim));
        else if (arg == "--size" || arg == "--sizes") {
            if (!sizes) opt.shapes.clear();
            sizes = true;
            std::string item;
            for (char c : value() + ",")
                if (c != ',') item.push_back(c);
                else opt.shapes.push_back(parse_shape(name, item)), item.clear();
        } else if (arg == "--alpha") opt.alpha = parse_float(name, value());
        else if (arg == "--beta") opt.beta = parse_float(name, value());
        else if (arg == "--variant") opt.variant = value();
        else if (arg == "--warmup") opt.warmup = int(parse_count(name, value(), 1, kMaxCount));
        else if (arg == "--reps") opt.reps = int(parse_count(name, value(), 1, kMaxCount));
        else if (arg == "--seed") opt.seed = uint64_t(parse_count(name, value(), 0, 1LL << 62));
        else if (arg == "--no-check") opt.check = false;
        else if (arg == "--csv") opt.csv = value();
        else {
            auto x = std::find_if(extras.begin(), extras.end(), [&](const ExtraOption& e) { return arg == std::string("--") + e.name; });
            if (x == extras.end()) throw BadInput{"unknown option '" + arg + "' (see --help)"};
            if (x->flag) *x->flag = true;
            else *x->text = value();
        }
    }
    if (mnk[0] || mnk[1] || mnk[2]) {
        if (!(mnk[0] && mnk[1] && mnk[2])) throw BadInput{"--m, --n and --k go together: give all three"};
        if (sizes) throw BadInput{"give either --m/--n/--k or --size/--sizes, not both"};
        opt.shapes = {parse_shape("--m/--n/--k", std::to_string(mnk[0]) + "x" + std::to_string(mnk[1]) + "x" + std::to_string(mnk[2]))};
    }
    if (!opt.help && !opt.csv.empty()) {  // now: a student learns it before the measurement, not after it
        std::FILE* existing = std::fopen(opt.csv.c_str(), "r");
        std::FILE* f = std::fopen(opt.csv.c_str(), "a");
        if (!f) throw BadInput{"option --csv: cannot write '" + opt.csv + "': " + std::strerror(errno)};
        std::fclose(f);
        existing ? void(std::fclose(existing)) : void(std::remove(opt.csv.c_str()));  // a new file waits for its rows
    }
    return opt;
}

// parse, for main: bad input is one line on stderr and exit status 2; --help prints the usage.
inline Options parse_or_exit(int argc, char** argv, const Options& defaults, const std::vector<ExtraOption>& extras = {}) {
    try {
        const Options opt = parse(argc, argv, defaults, extras);
        if (opt.help) std::printf("%s", usage(argv[0], defaults, extras).c_str()), std::exit(kExitOk);
        return opt;
    } catch (const BadInput& e) {
        std::fprintf(stderr, "%s: error: %s\n", argv[0], e.what.c_str());
        std::exit(kExitBadInput);
    }
}

}  // namespace wb
