#!/usr/bin/env python3
"""kit_leaks.py - the leak scan of the student starter kit: does any file of a kit hold the code of
a solution region? Used by student_kit.py (make, leaks); see the comment below for the method."""
import os
import re
from collections import namedtuple

from student_kit import ROOT, SOLUTION, read_text, scan, split_lines, strip_solutions

# ---- the leak scan ----------------------------------------------------------------------------------
#
# A kit leaks when one of its files holds most of the code of a solution region. Marker text proves
# nothing (a copy need not carry the markers), so the scan compares code: every file is reduced to
# tokens (comments and whitespace dropped), and identifiers other than C++ keywords and CUDA
# built-ins become one placeholder, so that a copy whose names were changed (BM -> kBM, as the
# planted-bug kernels did) still matches; the keywords, operators, numbers and built-ins keep the
# shape of the code. A region's token is "reproduced" by a file when it lies in a run of at least
# LEAK_RUN consecutive tokens that the file holds too, and that the kit's scaffolding does not (the
# code of the files with regions, outside their regions: what the kit is meant to show).
#
# A file leaks a region when it reproduces at least LEAK_SHARE of the region's tokens or
# LEAK_TOKENS of them. Measured on this workbook: legitimate overlaps stay at or below 52 tokens
# and 23 % of a region (the notes' walk through a kernel, quoting its loads and its loop; chapter
# 01's CPU loops), while the copies of kernels with a planted bug that the tests once held
# reproduced 77 to 219 tokens, 42 to 95 % of their region. LEAK_RUN = 24 tokens is about two lines
# of code: shorter runs match the index arithmetic and loop headers that every kernel shares (the
# member names x, y, z are kept for the same reason: unrolled loops over registers look alike).
LEAK_RUN, LEAK_SHARE, LEAK_TOKENS = 24, 0.5, 100
_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|\d[\w.]*|::|->|<<|>>|'
                       r'[<>=!+\-*/%&|^]=|&&|\|\||\+\+|--|\S')
_KEPT_WORDS = set("""alignas alignof auto bool break case char const constexpr continue default do double else
    enum extern false float for if inline int long namespace return short signed sizeof static static_assert
    struct switch template true typename unsigned using void volatile while __shared__ __global__ __device__
    __host__ __forceinline__ __restrict__ __syncthreads __align__ __launch_bounds__ threadIdx blockIdx blockDim
    gridDim x y z pragma unroll""".split())


def code_tokens(text):
    """The tokens of C/C++/CUDA code (also applied to notes and scripts, where code quoted in
    them survives): comments dropped, identifiers other than keywords and built-ins as 'I'."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return [w if w in _KEPT_WORDS or not (w[0].isalpha() or w[0] == "_") else "I" for w in _TOKEN_RE.findall(text)]


def shingles(tokens, n=LEAK_RUN):
    return {tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)}


def reproduced(region_tokens, file_shingles, n=LEAK_RUN):
    """How many of the region's tokens lie in a run of n tokens found in file_shingles."""
    covered = [False] * len(region_tokens)
    for i in range(len(region_tokens) - n + 1):
        if tuple(region_tokens[i:i + n]) in file_shingles:
            covered[i:i + n] = [True] * n
    return sum(covered)


Leak = namedtuple("Leak", "kit_file region_file region_line hint tokens total")


def find_leaks(kit, repo=ROOT):
    """Every (kit file, solution region of `repo`) pair where the file reproduces too much of the
    region (see above). Every file of the kit is read, whatever its name (tests, notes, lab/,
    scripts); files that are not UTF-8 text are skipped."""
    found = scan(repo)
    regions, scaffolding = [], set()
    for p, rs in found.items():
        text = read_text(os.path.join(repo, p))
        lines = split_lines(text)
        scaffolding |= shingles(code_tokens(strip_solutions(text, p)[0]))
        for r in rs:
            if r.kind == SOLUTION:
                regions.append((p, r, code_tokens("".join(lines[r.begin + 1:r.end]))))
    leaks = []
    for here, dirs, names in os.walk(kit):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(here, n)
            rel = os.path.relpath(path, kit).replace(os.sep, "/")
            if os.path.islink(path) or os.path.getsize(path) > 4 << 20:
                continue
            text = read_text(path)
            if text is None:
                continue
            held = shingles(code_tokens(text)) - scaffolding
            if not held:
                continue
            for p, r, toks in regions:
                k = reproduced(toks, held)
                if k and (k >= LEAK_SHARE * len(toks) or k >= LEAK_TOKENS):
                    leaks.append(Leak(rel, p, r.begin + 1, r.hint, k, len(toks)))
    return leaks


def describe_leak(leak):
    return (f"{leak.kit_file}: holds {leak.tokens} of the {leak.total} code tokens of the solution at "
            f"{leak.region_file}:{leak.region_line} ({leak.hint})")
