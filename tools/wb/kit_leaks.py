"""wb.kit_leaks - the leak scan of the student starter kit: does any file of a kit hold the code of
a solution region? Used by wb.kit (make, leaks); see the comments below for the method."""
import os
import re
from collections import namedtuple

from wb.kit import ROOT, SOLUTION, is_source, scan, split_lines

# ---- the leak scan ----------------------------------------------------------------------------------
#
# A kit leaks when one of its files holds code of a solution region. Marker text proves nothing (a
# copy need not carry the markers), so the scan compares code: every file is reduced to tokens
# (comments and whitespace dropped), and identifiers other than C++ keywords and CUDA built-ins
# become one placeholder, so that a copy whose names were changed (BM -> kBM, as the planted-bug
# kernels did) still matches; the keywords, operators, numbers and built-ins keep the shape of the
# code. Every file of the kit is read, whatever its name or folder (chapters, lab/, tools/, notes,
# results), in every view in which it can hold code (file_views):
#   - a C++/CUDA file: its code, and the text of its comments (code commented out);
#   - any other file: its text with comments ending at the end of their line (a '/*' in prose or in
#     a shell glob such as results/*.csv must not hide the rest of the file), and the same text with
#     its quotes, backslash escapes and '#' signs taken away (C++ held in a Python or shell string,
#     or in '#' comments, reads as code);
#   - a Markdown note, also: its fenced blocks and `inline` spans alone, joined in order (a walk
#     through a kernel that quotes one statement per sentence reads as the kernel).
# The kit's scaffolding is the code of the files with regions, outside the regions that count: what
# the kit is meant to show. Nothing it holds is a leak.
#
# Rule 1, long runs. A region's token is "reproduced" by a file when it lies in a run of at least
# LEAK_RUN consecutive tokens that the file holds too, and that the scaffolding does not. A file
# leaks a region when it reproduces at least LEAK_SHARE of the region's tokens or LEAK_TOKENS of
# them. Measured on this workbook: legitimate overlaps stay at or below 33 tokens and 22 % of a
# region (chapter 01's CPU micro-kernel against 04's outer product; 09's PTX wrappers against 06's
# mma.sync loop), while the copies of kernels with a planted bug that the tests once held reproduced
# 77 to 219 tokens, 42 to 95 % of their region. LEAK_RUN = 24 tokens is about two lines of code:
# shorter runs match the index arithmetic and loop headers that every kernel shares (the member
# names x, y, z are kept for the same reason: unrolled loops over registers look alike).
LEAK_RUN, LEAK_SHARE, LEAK_TOKENS = 24, 0.5, 100
#
# Rule 2, distinctive windows. Rule 1 misses a region quoted in pieces shorter than two lines (a
# note giving each statement in its own sentence) and half of a short region (08's and 09's are 4
# to 12 lines). Here names of NAME_CHARS characters or more stay as they are (load_or_zero,
# num_k_tiles, make_smem_desc: what a quote of this workbook's code carries; shorter ones, i, k,
# tx, row, acc, are spelled alike by every kernel and stay abstract). A run of WINDOW tokens is
# distinctive of a region when it is in that region, not in the scaffolding, and in no region of
# another chapter (a shape GEMM code shares). Regions of one chapter may share windows: 02's two
# kernels differ only in which of x and y picks the row, 03's transposed-B kernel repeats the tiled
# kernel around its one change, and what they share is that chapter's solution in both. A file
# leaks a region when it holds LEAK_WINDOWS or more of the region's distinctive windows.
# Measured on this workbook (a kit of the whole tree, every file in every view, against every
# region): legitimate files hold at most 7 (chapter 01's CPU micro-kernel against 04's register
# tile), then 6 (08's managed-memory part against its streams region; the comments of 03's kernels
# file, which name the transposed read). Half of a region (the first or the second half of its
# lines) planted in a note's fenced block holds 17 to 219 (the least: the first half of 02's
# uncoalesced kernel, 3 lines), with one exception: 09's fence-and-commit region (6 lines, 19
# distinctive windows in all) repeats step 3's issue sequence, which the kit shows, except for its
# wait depth and row argument, so its halves hold 3 and 5 and only the whole of it is caught.
# LEAK_WINDOWS = 10 sits between the legitimate 7 and the planted 17. One statement of 21 tokens
# or more, quoted as it is, can be a leak by itself: the notes give such a statement's index algebra
# as a formula (A(row, k0 + tx)), not its code.
WINDOW, LEAK_WINDOWS, NAME_CHARS = 12, 10, 4
MAX_BYTES = 4 << 20  # larger files are data, not something a person reads: skipped

_TOKEN_RE = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|[A-Za-z_]\w*|\d[\w.]*|::|->|<<|>>|'
                       r'[<>=!+\-*/%&|^]=|&&|\|\||\+\+|--|\S')
# String and character literals are matched whole, so that a '//' inside one starts no comment.
_LITERAL = r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
_COMMENT_RE = re.compile(_LITERAL + r'|//[^\n]*|/\*.*?\*/', re.S)
_LINE_COMMENT_RE = re.compile(_LITERAL + r'|//[^\n]*|/\*.*?\*/')  # '.' stops at the end of the line
_KEPT_WORDS = set("""alignas alignof auto bool break case char const constexpr continue default do double else
    enum extern false float for if inline int long namespace return short signed sizeof static static_assert
    struct switch template true typename unsigned using void volatile while __shared__ __global__ __device__
    __host__ __forceinline__ __restrict__ __syncthreads __align__ __launch_bounds__ threadIdx blockIdx blockDim
    gridDim x y z pragma unroll""".split())


def _uncomment(text, pattern):
    """`text` with its comments blanked."""
    return pattern.sub(lambda m: m.group(0) if m.group(0)[0] in "'\"" else " ", text)


def _comments(text):
    """The text of the comments of C/C++ code, one a line, without their markers."""
    found = (m.group(0) for m in _COMMENT_RE.finditer(text))
    return "\n".join(c[2:] if c.startswith("//") else c[2:-2] for c in found if c[0] == "/")


def _token(word, names):
    """One token of the scan: '' for '#' (so '#pragma unroll' and a script's '# ...' comment read
    alike), 'I' for an identifier that is not kept."""
    if word == "#":
        return ""
    if word in _KEPT_WORDS or not (word[0].isalpha() or word[0] == "_") or (names and len(word) >= NAME_CHARS):
        return word
    return "I"


def code_tokens(text, line_comments_only=False, names=False):
    """The tokens of C/C++/CUDA code (also applied to notes and scripts, where code quoted in
    them survives): comments dropped, identifiers other than keywords and built-ins as 'I'.
    line_comments_only: a '/* ... */' comment ends at the end of its line (text that is not C++).
    names: identifiers of NAME_CHARS characters or more stay as they are (rule 2)."""
    pattern = _LINE_COMMENT_RE if line_comments_only else _COMMENT_RE
    return [t for t in (_token(w, names) for w in _TOKEN_RE.findall(_uncomment(text, pattern))) if t]


# The scan itself works on token strings, one character a token: a set of string slices is several
# times faster to build than one of tuples, and a kit has megabytes of notes and results.
_CHARS = {}                # token -> its character
_WORD_CHARS = ({}, {})     # source word -> its token's character ('' for none), without and with names


def _char(token):
    c = _CHARS.get(token)
    if c is None:
        c = _CHARS[token] = chr(0x100 + len(_CHARS) % 0x10FE00)
    return c


def _code(text, line_comments_only=False, names=False):
    """code_tokens(...) as a token string."""
    words = _TOKEN_RE.findall(_uncomment(text, _LINE_COMMENT_RE if line_comments_only else _COMMENT_RE))
    table = _WORD_CHARS[names]
    for w in set(words).difference(table):
        t = _token(w, names)
        table[w] = _char(t) if t else ""
    return "".join(map(table.__getitem__, words))


def _unquoted(text):
    """A script or a note without its string quotes and backslash escapes ('#' is no token)."""
    text = re.sub(r"\\[nrt]", "\n", text)
    return re.sub(r"[\"'`]", " ", re.sub(r"\\(.)", r"\1", text))


_FENCE_RE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_INLINE_RE = re.compile(r"(`+)(.+?)\1")


def _markdown_code(text, names):
    """The code of a Markdown note: its fenced blocks and its `inline` spans in order, each read
    alone (a '/*' in one cannot hide the next), joined."""
    out, block, fence = [], [], None
    for line in text.splitlines():
        m = _FENCE_RE.match(line)
        if fence is None:
            if m:
                fence, block = m.group(1), []
            else:
                out += [_code(span.group(2), names=names) for span in _INLINE_RE.finditer(line)]
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" \t`~"):
            out.append(_code("\n".join(block), names=names))
            fence = None
        else:
            block.append(line)
    if fence is not None:  # an unclosed fence runs to the end of the note
        out.append(_code("\n".join(block), names=names))
    return "".join(out)


def file_views(rel, text, names=False):
    """The token strings in which the kit file `rel` may hold a region's code (see the top)."""
    if is_source(rel):
        return [_code(text, names=names), _code(_comments(text), True, names)]
    views = [_code(text, True, names), _code(_unquoted(text), True, names)]
    if rel.endswith((".md", ".markdown")):
        views.append(_markdown_code(text, names))
    return views


def shingles(tokens, n=LEAK_RUN):
    """The runs of n consecutive tokens of `tokens` (a token list or a token string)."""
    if not isinstance(tokens, str):
        tokens = "".join(map(_char, tokens))
    return {tokens[i:i + n] for i in range(len(tokens) - n + 1)}


def reproduced(region, file_shingles, n=LEAK_RUN):
    """How many tokens of `region` (a token string) lie in a run of n tokens in file_shingles."""
    covered = [False] * len(region)
    for i in range(len(region) - n + 1):
        if region[i:i + n] in file_shingles:
            covered[i:i + n] = [True] * n
    return sum(covered)


Leak = namedtuple("Leak", "kit_file region_file region_line hint tokens total windows distinctive",
                  defaults=(0, 0))
# tokens of total: rule 1 (tokens reproduced, of the region's); windows of distinctive: rule 2.
Region = namedtuple("Region", "path line hint tokens distinctive")


def chapter_of(rel):
    """The chapter folder (NN_name) that a workbook path lies in, or None (common/, tools/, ...)."""
    top = rel.split("/", 1)[0]
    return top if "/" in rel and re.fullmatch(r"\d\d_[^/]+", top) else None


def read_kit_text(path):
    """A kit file's text: UTF-8, or as much of it as decodes (a stray Latin-1 byte must not hide a
    file); None for a link, a binary file (a NUL byte) or one over MAX_BYTES."""
    if os.path.islink(path) or os.path.getsize(path) > MAX_BYTES:
        return None
    with open(path, "rb") as f:
        data = f.read()
    return None if b"\0" in data else data.decode("utf-8", "replace")


def solution_regions(repo=ROOT, chapters=None):
    """The solution regions of `repo` that count (every one; or, given chapters, those of these
    chapter folders and those outside any chapter), each with its token string (rule 1) and its
    distinctive windows (rule 2); and the scaffolding's runs of LEAK_RUN tokens. The scaffolding
    is what the kit shows: the files with regions, the counted regions and the instructor-only ones
    taken out; a chapter the kit keeps whole is scaffolding with its solutions (not with its
    instructor-only regions, which no kit holds)."""
    if chapters is not None:
        chapters = {c.strip("/") for c in chapters}
        unknown = sorted(c for c in chapters if chapter_of(c + "/") != c or not os.path.isdir(os.path.join(repo, c)))
        if unknown:
            raise ValueError(f"kit_leaks: not chapter folders of {repo}: {', '.join(unknown)}")
    counted, scaffold = [], []
    for p, rs in sorted(scan(repo).items()):
        with open(os.path.join(repo, p), "rb") as f:
            lines = split_lines(f.read().decode("utf-8"))
        whole = chapters is not None and chapter_of(p) is not None and chapter_of(p) not in chapters
        taken, pos, kept = [r for r in rs if not (whole and r.kind == SOLUTION)], 0, []
        for r in taken:
            kept += lines[pos:r.begin]
            pos = r.end + 1
        scaffold.append("".join(kept + lines[pos:]))
        if not whole:
            counted += [(p, r, "".join(lines[r.begin + 1:r.end])) for r in rs if r.kind == SOLUTION]
    scaffold_run, scaffold_window = set(), set()
    for text in scaffold:
        scaffold_run |= shingles(_code(text), LEAK_RUN)
        scaffold_window |= shingles(_code(text, names=True), WINDOW)
    windows = [shingles(_code(body, names=True), WINDOW) for _, _, body in counted]
    group = [chapter_of(p) or p for p, _, _ in counted]
    shared = set()
    for i in range(len(counted)):
        for j in range(i):
            if group[i] != group[j]:
                shared |= windows[i] & windows[j]
    regions = [Region(p, r.begin + 1, r.hint, _code(body), w - shared - scaffold_window)
               for (p, r, body), w in zip(counted, windows)]
    return regions, scaffold_run


def held_by(rel, text):
    """What the kit file `rel` holds, over all its views: its runs of LEAK_RUN tokens (rule 1) and
    its runs of WINDOW tokens with the long names kept (rule 2)."""
    runs, windows = set(), set()
    for view in file_views(rel, text):
        runs |= shingles(view, LEAK_RUN)
    for view in file_views(rel, text, names=True):
        windows |= shingles(view, WINDOW)
    return runs, windows


def find_leaks(kit, repo=ROOT, chapters=None):
    """Every (kit file, solution region of `repo`) pair where the file holds too much of the region,
    by rule 1 or rule 2 (see the top): a list of Leak, one a pair. Every file of the kit is read,
    whatever its name (tests, notes, lab/, tools/, results); binary files are skipped.
    chapters: None, every region counts; or a list of chapter folders ("03_shared_tiling"): a
    homework kit on those chapters keeps the other chapters whole, solutions included, so only the
    regions of those chapters count, and those outside any chapter folder, which always do."""
    regions, scaffold_run = solution_regions(repo, chapters)
    leaks = []
    if not regions:
        return leaks
    for here, dirs, names in os.walk(kit):
        dirs.sort()
        for n in sorted(names):
            path = os.path.join(here, n)
            rel = os.path.relpath(path, kit).replace(os.sep, "/")
            text = read_kit_text(path)
            if text is None:
                continue
            runs, windows = held_by(rel, text)
            runs -= scaffold_run
            for r in regions:
                k = reproduced(r.tokens, runs) if runs else 0
                w = len(r.distinctive & windows)
                if (k and (k >= LEAK_SHARE * len(r.tokens) or k >= LEAK_TOKENS)) or w >= LEAK_WINDOWS:
                    leaks.append(Leak(rel, r.path, r.line, r.hint, k, len(r.tokens), w, len(r.distinctive)))
    return leaks


def describe_leak(leak):
    return (f"{leak.kit_file}: holds {leak.tokens} of the {leak.total} code tokens "
            f"({leak.windows} of the {leak.distinctive} distinctive {WINDOW}-token windows) of the solution at "
            f"{leak.region_file}:{leak.region_line} ({leak.hint})")
