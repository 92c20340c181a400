// options.cpp - parsing and validating the shared command line. Every error is one sentence that
// names the offending argument, so a student sees at once what to fix.
#include "options.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace wb {
namespace {

// Whole-string conversions: "12abc", "", " 3" and out-of-range values are all rejected.
bool to_long(const std::string& s, long long& out) {
    if (s.empty() || s[0] == ' ' || s[0] == '+') return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtoll(s.c_str(), &end, 10);
    return errno == 0 && end && *end == '\0';
}

bool to_float(const std::string& s, float& out) {
    if (s.empty() || s[0] == ' ') return false;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s.c_str(), &end);
    if (errno != 0 || !end || *end != '\0' || !std::isfinite(v)) return false;
    out = static_cast<float>(v);
    return std::isfinite(out);
}

}  // namespace

std::vector<std::string> split_list(const std::string& list, char sep) {
    std::vector<std::string> out;
    std::string item;
    std::istringstream in(list);
    while (std::getline(in, item, sep)) out.push_back(item);
    return out;
}

bool output_file_writable(const std::string& path, const std::string& option, std::string& error) {
    struct stat st;
    const bool existed = ::stat(path.c_str(), &st) == 0;
    if (existed && S_ISDIR(st.st_mode)) {
        error = "option " + option + ": '" + path + "' is a folder, not a file";
        return false;
    }
    // "a" never truncates: the rows of earlier runs stay.
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f) {
        error = "option " + option + ": cannot write '" + path + "': " + std::strerror(errno);
        return false;
    }
    std::fclose(f);
    if (!existed) std::remove(path.c_str());
    return true;
}

bool parse_options(int argc, const char* const* argv, Options& opt, std::string& error,
                   const std::vector<ExtraOption>& extras) {
    int m = 0, n = 0, k = 0;  // --m/--n/--k, combined at the end
    bool sizes_seen = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::string value;
        bool inline_value = false;
        if (arg.rfind("--", 0) == 0) {
            auto eq = arg.find('=');
            if (eq != std::string::npos) {  // --size=1024 works too
                value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
                inline_value = true;
            }
        }
        // Fetches the option's value, from "--x=v" or the next argument.
        auto need_value = [&](std::string& out) {
            if (inline_value) {
                out = value;
                return true;
            }
            if (i + 1 >= argc) {
                error = "option " + arg + " needs a value";
                return false;
            }
            out = argv[++i];
            return true;
        };
        auto need_int = [&](int& out, int lo) {
            std::string v;
            long long x = 0;
            if (!need_value(v)) return false;
            if (!to_long(v, x) || x < lo || x > kMaxCount) {
                error = "option " + arg + " needs a whole number from " + std::to_string(lo) + " to " +
                        std::to_string(kMaxCount) + ", got '" + v + "'";
                return false;
            }
            out = static_cast<int>(x);
            return true;
        };
        auto need_float = [&](float& out) {
            std::string v;
            if (!need_value(v)) return false;
            if (!to_float(v, out)) {
                error = "option " + arg + " needs a finite number, got '" + v + "'";
                return false;
            }
            return true;
        };
        auto need_dim = [&](int& out) {
            std::string v;
            if (!need_value(v)) return false;
            if (parse_dim(v, out, error)) return true;
            error = "option " + arg + ": " + error;
            return false;
        };

        if (arg == "--help" || arg == "-h") {
            opt.help = true;
        } else if (arg == "--m") {
            if (!need_dim(m)) return false;
        } else if (arg == "--n") {
            if (!need_dim(n)) return false;
        } else if (arg == "--k") {
            if (!need_dim(k)) return false;
        } else if (arg == "--size" || arg == "--sizes") {
            std::string list, item;
            if (!need_value(list)) return false;
            if (list.empty()) {
                error = "option " + arg + " needs at least one size";
                return false;
            }
            if (!sizes_seen) opt.shapes.clear();
            sizes_seen = true;
            std::istringstream in(list);
            while (std::getline(in, item, ',')) {
                Shape s;
                if (!parse_shape(item, s, error)) return false;
                opt.shapes.push_back(s);
            }
            if (list.back() == ',') {
                error = "option " + arg + " has an empty item in '" + list + "'";
                return false;
            }
        } else if (arg == "--alpha") {
            if (!need_float(opt.alpha)) return false;
        } else if (arg == "--beta") {
            if (!need_float(opt.beta)) return false;
        } else if (arg == "--variant") {
            if (!need_value(opt.variant)) return false;
            if (opt.variant.empty()) {
                error = "option --variant needs a name (or 'all')";
                return false;
            }
        } else if (arg == "--warmup") {
            if (!need_int(opt.warmup, 1)) return false;
        } else if (arg == "--reps") {
            if (!need_int(opt.reps, 1)) return false;
        } else if (arg == "--seed") {
            std::string v;
            long long x = 0;
            if (!need_value(v)) return false;
            if (!to_long(v, x) || x < 0) {
                error = "option --seed needs a whole number >= 0, got '" + v + "'";
                return false;
            }
            opt.seed = static_cast<uint64_t>(x);
        } else if (arg == "--no-check") {
            opt.check = false;
        } else if (arg == "--energy") {
            opt.energy = true;
        } else if (arg == "--csv") {
            if (!need_value(opt.csv)) return false;
            if (opt.csv.empty()) {
                error = "option --csv needs a file name";
                return false;
            }
        } else {
            bool matched = false;
            for (const ExtraOption& x : extras) {
                if (arg != std::string("--") + x.name) continue;
                matched = true;
                if (x.flag) {
                    *x.flag = true;
                } else if (x.text) {
                    if (!need_value(*x.text)) return false;
                    if (x.text->empty()) {  // "--json=": an empty value would read as "not given"
                        error = "option " + arg + " needs a value";
                        return false;
                    }
                }
            }
            if (!matched) {
                error = "unknown option '" + arg + "' (see --help)";
                return false;
            }
        }
    }
    if (m || n || k) {
        if (!(m && n && k)) {
            error = "--m, --n and --k go together: give all three";
            return false;
        }
        if (sizes_seen) {
            error = "give either --m/--n/--k or --size/--sizes, not both";
            return false;
        }
        Shape s{m, n, k};
        if (!shape_fits(s, error)) return false;
        opt.shapes = {s};
    }
    // Last, so that --help works whatever else is on the line.
    if (!opt.help && !opt.csv.empty() && !output_file_writable(opt.csv, "--csv", error)) return false;
    return true;
}

std::string usage(const std::string& prog, const std::vector<ExtraOption>& extras, const Options& defaults) {
    std::ostringstream out;
    out << "usage: " << prog << " [options]\n"
        << "  --m M --n N --k K        one problem: C(MxN) = alpha * A(MxK) * B(KxN) + beta * C\n"
        << "  --size S                 a square problem S x S x S (or MxNxK)\n"
        << "  --sizes S1,S2,...        several problems, each S or MxNxK (default: a short sweep)\n"
        << "  --alpha A --beta B       scalars (default " << defaults.alpha << " and " << defaults.beta << ")\n"
        << "  --variant NAME|all       run one variant (default " << defaults.variant << ")\n"
        << "  --warmup W --reps R      untimed and timed launches (default " << defaults.warmup << " and "
        << defaults.reps << ")\n"
        << "  --seed S                 seed of the random input data (default " << defaults.seed << ")\n"
        << "  --no-check               skip verification (it is on by default)\n"
        << "  --csv FILE               append one CSV row per measurement\n"
        << "  --energy                 also measure the energy per call (NVML; over half a second of calls each)\n";
    for (const ExtraOption& x : extras)
    {
        std::string left = std::string("  --") + x.name;
        left.resize(left.size() < 27 ? 27 : left.size() + 1, ' ');
        out << left << x.help << "\n";
    }
    out << "  --help                   this text\n"
        << "exit status: 0 ok, 1 verification failed, 2 bad input, 3 no usable CUDA device\n";
    return out.str();
}

}  // namespace wb
