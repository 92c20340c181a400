// shape.h - one GEMM problem's size, and the one way to write it on a command line:
// "S" for a cube S x S x S, or "MxNxK" (see docs/CONTRACT.md, "The program's options").
//
// Host-only code, compiled by g++ and tested on machines without a GPU. tools/wb/shapes.py is the
// same grammar for the Python tools; a change here belongs there too.
#pragma once

#include <string>

namespace wb {

// C (M x N) = alpha * A (M x K) * B (K x N) + beta * C.
struct Shape {
    int m = 0, n = 0, k = 0;
    double flops() const { return 2.0 * m * n * k; }  // one multiply and one add per term
};

// The largest matrix the workbook accepts: every index then fits in a signed 32-bit int,
// which is what the kernels use.
constexpr long long kMaxElements = (1LL << 31) - 1;
// The largest M, N or K. A grid has at most 65535 blocks in y; with at least 8 rows of C per
// block (true of every kernel here) 500000 rows stay within it, so no launcher needs a loop.
constexpr long long kMaxDim = 500000;

// Parses "1024" or "1000x1013x777" into `shape`. Each number is written in plain decimal digits
// (no sign, no spaces) and lies in 1..kMaxDim, and none of A, B, C may exceed kMaxElements.
// On failure returns false and puts one sentence naming the bad text into `error`.
bool parse_shape(const std::string& text, Shape& shape, std::string& error);

// One dimension on its own ("--m 1000"), with the same rules and messages as in a shape.
bool parse_dim(const std::string& text, int& dim, std::string& error);

// False, with a sentence in `error`, when one of the three matrices has too many elements.
bool shape_fits(const Shape& shape, std::string& error);

std::string to_string(const Shape& s);  // "1000x1013x777"

}  // namespace wb
