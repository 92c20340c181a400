// shape.cpp - parsing a problem size. Every error is one sentence that quotes what was written,
// so a student sees at once what to fix.
#include "shape.h"

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace wb {
namespace {

bool all_digits(const std::string& s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

}  // namespace

bool parse_dim(const std::string& text, int& dim, std::string& error) {
    // Digits only: strtoll alone would also take " 3", "+3" and "-3", and a stray sign in a
    // size is more likely a typo than an intent.
    if (text.size() > 1 && text[0] == '-' && all_digits(text.substr(1))) {
        error = "sizes must be at least 1, got " + text;
        return false;
    }
    if (!all_digits(text)) {
        error = "'" + text + "' is not a whole number";
        return false;
    }
    errno = 0;
    const long long v = std::strtoll(text.c_str(), nullptr, 10);
    if (v < 1) {
        error = "sizes must be at least 1, got " + text;
        return false;
    }
    if (errno == ERANGE || v > kMaxDim) {
        error = "size " + text + " is too large (at most " + std::to_string(kMaxDim) + ")";
        return false;
    }
    dim = static_cast<int>(v);
    return true;
}

bool shape_fits(const Shape& s, std::string& error) {
    const long long mk = 1LL * s.m * s.k, kn = 1LL * s.k * s.n, mn = 1LL * s.m * s.n;
    if (mk > kMaxElements || kn > kMaxElements || mn > kMaxElements) {
        error = "shape " + to_string(s) + " has a matrix of more than 2^31-1 elements";
        return false;
    }
    return true;
}

std::string to_string(const Shape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

bool parse_shape(const std::string& text, Shape& shape, std::string& error) {
    // Split on 'x' keeping empty pieces, so "8x" and "x8x8" are three-piece mistakes, not cubes.
    if (text.empty()) {
        error = "an empty size: write S or MxNxK, e.g. 1024 or 1000x1013x777";
        return false;
    }
    std::vector<std::string> parts(1);
    for (char c : text) {
        if (c == 'x')
            parts.emplace_back();
        else
            parts.back() += c;
    }
    Shape s;
    if (parts.size() == 1) {
        if (!parse_dim(parts[0], s.m, error)) return false;
        s.n = s.k = s.m;
    } else if (parts.size() == 3) {
        if (!parse_dim(parts[0], s.m, error) || !parse_dim(parts[1], s.n, error) ||
            !parse_dim(parts[2], s.k, error))
            return false;
    } else {
        error = "'" + text + "' is not a size: write S or MxNxK, e.g. 1024 or 1000x1013x777";
        return false;
    }
    if (!shape_fits(s, error)) return false;
    shape = s;
    return true;
}

}  // namespace wb
