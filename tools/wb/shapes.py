"""wb.shapes - a GEMM problem's size as the workbook writes it, for the Python tools.

The grammar is the programs' own (common/shape.h, "--size"): "S" for the cube S x S x S, or
"MxNxK"; every number in plain decimal digits (no sign, no spaces), from 1 to MAX_DIM, and no
matrix (A: M x K, B: K x N, C: M x N) with more than MAX_ELEMENTS elements. A shape is the tuple
(M, N, K). A change to the grammar belongs in common/shape.cpp too.
"""

MAX_DIM = 500000             # the largest M, N or K a program accepts
MAX_ELEMENTS = 2 ** 31 - 1   # the largest matrix: every index fits in a signed 32-bit int
EXAMPLE = "write S or MxNxK, e.g. 1024 or 1000x1013x777"


def parse_dim(text):
    """One dimension, with the programs' rules and messages; ValueError(sentence) when bad."""
    text = str(text)
    if text.startswith("-") and text[1:].isdigit() and text[1:].isascii():
        raise ValueError(f"sizes must be at least 1, got {text}")
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"'{text}' is not a whole number")
    value = int(text)
    if value < 1:
        raise ValueError(f"sizes must be at least 1, got {text}")
    if value > MAX_DIM:
        raise ValueError(f"size {text} is too large (at most {MAX_DIM})")
    return value


def parse_shape(text):
    """(M, N, K) from "S" or "MxNxK"; ValueError with one sentence naming the text when bad."""
    text = str(text)
    if not text:
        raise ValueError(f"an empty size: {EXAMPLE}")
    parts = text.split("x")
    if len(parts) not in (1, 3):
        raise ValueError(f"'{text}' is not a size: {EXAMPLE}")
    dims = [parse_dim(p) for p in parts]
    shape = tuple(dims * 3 if len(dims) == 1 else dims)
    m, n, k = shape
    if max(m * k, k * n, m * n) > MAX_ELEMENTS:
        raise ValueError(f"shape {shape_text(shape)} has a matrix of more than 2^31-1 elements")
    return shape


def parse_shapes(text):
    """A comma-separated list, as in "--sizes 1024,1000x1013x777"."""
    return [parse_shape(item) for item in str(text).split(",")]


def shape_text(shape):
    """'1000x1013x777': the form the programs print and accept."""
    m, n, k = shape
    return f"{m}x{n}x{k}"


def shape_label(shape):
    """'4096' for a cube, 'MxNxK' otherwise: the short column heading of a table."""
    m, n, k = shape
    return str(m) if m == n == k else shape_text(shape)


def shape_order(shape):
    """Sort key: cubes first, by size; then the other shapes by their FLOP count."""
    m, n, k = shape
    return (0 if m == n == k else 1, m * n * k, shape)


def flops(shape):
    """2 M N K: one multiply and one add per term of every dot product."""
    m, n, k = shape
    return 2.0 * m * n * k
