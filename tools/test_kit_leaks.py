"""test_kit_leaks.py - tests of the starter kit's leak scan (tools/wb/kit_leaks.py), no GPU needed.

On a small fixture workbook (toy code that is not GEMM, so that this file, which ships in the kit,
holds no solution of the workbook): a clean kit has no leak, and quoting one short statement or
the index algebra is none; half a solution region planted anywhere is caught by the finer rule
(distinctive windows) and named: in a note's fenced block, in `inline` spans one statement per
sentence (which the long-run rule misses), after a '/*' in a note's prose, in a Python string or
'#' comments, in a shell script, in a lab/ file's code or comments, in a file that is not UTF-8;
twin regions of one chapter keep their windows; chapters= counts the regions of the homework
chapters and those outside any chapter only; binary files are skipped.

On this workbook: a kit made with `python3 -m wb kit make` has no leak, and half a region planted in
a chapter's note, in a tools/ script and in a lab/ file is caught, named, and counted only when its
chapter is part of the homework.

Run with pytest (make test runs it). Inside a student kit (no solution regions left) the tests on
this workbook are skipped.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from wb import ROOT
from wb import kit as sk
from wb import kit_leaks as kl

# ---- the fixture workbook --------------------------------------------------------------------------

def markers(text):
    """The fixture with its region markers spelled out: written as <<SOL / SOL>> and <<INS / INS>>
    here, so that this file, which ships in the kit, holds no marker itself."""
    for short, kind in (("SOL", "SOLUTION"), ("INS", "INSTRUCTOR ONLY")):
        text = text.replace(f"<<{short}", "// BEGIN " + kind).replace(f"{short}>>", "// END " + kind)
    return text


ALPHA = markers("""// alpha.h - chapter 01 of the fixture: a histogram of the bytes of a buffer.
#pragma once
#include <cstddef>
#include <vector>

inline std::vector<long> byte_histogram(const unsigned char* data, std::size_t size) {
    std::vector<long> counts(256, 0);
    <<SOL: four partial histograms, one per byte of a word, summed at the end
    std::vector<long> partial(4 * 256, 0);
    std::size_t cursor = 0;
    for (; cursor + 4 <= size; cursor += 4) {
        for (int lane = 0; lane < 4; ++lane) partial[lane * 256 + data[cursor + lane]] += 1;
    }
    while (cursor < size) partial[data[cursor++]] += 1;
    for (int value = 0; value < 256; ++value) {
        long total = 0;
        for (int lane = 0; lane < 4; ++lane) total += partial[lane * 256 + value];
        counts[value] = total;
    }
    SOL>>
    return counts;
}
""")

# Two regions of one chapter that differ in one comparison (as 02's two kernels differ in x and y).
BETA = markers("""// beta.h - chapter 02 of the fixture: running extremes of a series, NaN kept once it appears.
#pragma once
#include <cmath>

inline void running_maximum(const float* values, float* out, int count) {
    <<SOL: out[i] = the largest of values[0..i]; NaN from its first appearance on
    float current = values[0];
    for (int index = 0; index < count; ++index) {
        const float sample = values[index];
        if (std::isnan(sample) || std::isnan(current)) current = NAN;
        else if (sample > current) current = sample;
        out[index] = current;
    }
    SOL>>
}

inline void running_minimum(const float* values, float* out, int count) {
    <<SOL: out[i] = the smallest of values[0..i]; NaN from its first appearance on
    float current = values[0];
    for (int index = 0; index < count; ++index) {
        const float sample = values[index];
        if (std::isnan(sample) || std::isnan(current)) current = NAN;
        else if (sample < current) current = sample;
        out[index] = current;
    }
    SOL>>
}

<<INS: a wrong answer for the tests
inline float wrong_maximum(float a, float b) { return a < b ? a : b; }
INS>>
""")

# A region outside any chapter folder: it counts whatever the homework.
SHARED = markers("""// shared.h - a helper of every chapter of the fixture.
#pragma once

inline long clamp_or_wrap(long index, long length, bool wrap) {
    <<SOL: wrap: index modulo length into [0, length); else clamp to [0, length - 1]
    if (length <= 0) return 0;
    if (wrap) {
        const long remainder = index % length;
        return remainder < 0 ? remainder + length : remainder;
    }
    if (index < 0) return 0;
    return index >= length ? length - 1 : index;
    SOL>>
}
""")

NOTES = """# 01 · a histogram

Each of four lanes owns a partial histogram: byte `j` of word `w` counts into `partial[j][value]`,
and the result is `counts[v] = partial[0][v] + partial[1][v] + partial[2][v] + partial[3][v]`.
The tail runs `while (cursor < size)`. Results live in `results/*.csv` and /* are not code.
"""

FILES = {
    "01_alpha/alpha.h": ALPHA,
    "01_alpha/README.md": NOTES,
    "01_alpha/README.zh-CN.md": NOTES,
    "01_alpha/lab/explore.cu": '#include "../alpha.h"\nint main() { return 0; }\n',
    "02_beta/beta.h": BETA,
    "02_beta/test_02_beta.cu": '#include "beta.h"\n// the tests\n',
    "common/shared.h": SHARED,
    "tools/helper.py": '#!/usr/bin/env python3\n"""A helper."""\nimport sys\n\nprint(sys.argv)\n',
    "tools/run.sh": "#!/bin/sh\n# runs the fixture\necho run\n",
}


def region_body(text, n=0):
    """The lines inside the n-th solution region of `text`."""
    regions = [r for r in sk.parse_regions(text, "fixture") if r.kind == sk.SOLUTION]
    return text.splitlines(keepends=True)[regions[n].begin + 1:regions[n].end]


def first_half(text, n=0):
    body = region_body(text, n)
    return "".join(body[:max(1, len(body) // 2)])


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode, encoding="utf-8") as f:
        f.write(text)


def make_kit(repo, kit, chapters=None):
    """A kit of the fixture: the counted chapters' regions (and every instructor-only one) replaced
    by their placeholders, a chapter outside `chapters` kept whole but for its instructor-only
    regions, as student_kit.py makes them."""
    for here, _, names in os.walk(repo):
        for n in names:
            src = os.path.join(here, n)
            rel = os.path.relpath(src, repo).replace(os.sep, "/")
            with open(src, encoding="utf-8") as f:
                text = f.read()
            if sk.is_source(rel) and sk.parse_regions(text, rel):
                chapter = rel.split("/")[0] if re.match(r"\d\d_[^/]+/", rel) else None
                if chapters is None or chapter is None or chapter in chapters:
                    text = sk.strip_solutions(text, rel)[0]
                else:
                    lines, out, pos = text.splitlines(keepends=True), [], 0
                    for r in sk.parse_regions(text, rel):
                        if r.kind == sk.INSTRUCTOR:
                            out, pos = out + lines[pos:r.begin], r.end + 1
                    text = "".join(out + lines[pos:])
            write(os.path.join(kit, rel), text)


class Fixture:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)
        self.repo = os.path.join(self.tmp, "repo")
        self.kit = os.path.join(self.tmp, "kit")
        for rel, text in FILES.items():
            write(os.path.join(self.repo, rel), text)
        make_kit(self.repo, self.kit)

    def plant(self, rel, text, mode="a"):
        write(os.path.join(self.kit, rel), text, mode)

    def pairs(self, leaks):
        return sorted((x.kit_file, x.region_file, x.region_line) for x in leaks)

    def alpha_line(self):
        return [r.begin + 1 for r in sk.parse_regions(ALPHA, "a") if r.kind == sk.SOLUTION][0]


class TestFixtureScan(Fixture):
    def test_a_clean_kit_has_no_leak(self):
        # The notes quote short pieces and the index algebra; the scripts and lab/ hold no region.
        assert kl.find_leaks(self.kit, self.repo) == []
        assert kl.find_leaks(self.kit, self.repo, chapters=["01_alpha", "02_beta"]) == []

    def test_half_a_region_is_caught_by_the_finer_rule_in_every_kind_of_file(self):
        half = first_half(ALPHA)
        as_python_string = "FIXTURE = (\n" + "".join(f"    {line!r}\n" for line in half.splitlines(keepends=True)) + ")\n"
        as_comments = "".join("# " + line for line in half.splitlines(keepends=True))
        plants = {
            "01_alpha/README.md": "\n## The answer\n\n```cpp\n" + half + "```\n",
            "tools/helper.py": as_python_string,
            "tools/notes.py": as_comments,
            "tools/run.sh": "cat > /tmp/x.cpp <<'EOF'\n" + half + "EOF\n",
            "01_alpha/lab/explore.cu": "void copied() {\n" + half + "}\n",
            "01_alpha/lab/old.cu": "".join("// " + line for line in half.splitlines(keepends=True)),
            "02_beta/notes.txt": half.replace("\n", " "),
        }
        for rel, text in plants.items():
            shutil.rmtree(self.kit)
            make_kit(self.repo, self.kit)
            self.plant(rel, text)
            leaks = kl.find_leaks(self.kit, self.repo)
            assert self.pairs(leaks) == [(rel, "01_alpha/alpha.h", self.alpha_line())]
            assert leaks[0].windows >= kl.LEAK_WINDOWS
            said = kl.describe_leak(leaks[0])
            assert f"{rel}: holds " in said
            assert f"01_alpha/alpha.h:{self.alpha_line()} (four partial histograms" in said

    def test_a_walk_one_statement_per_sentence_is_caught_where_long_runs_miss_it(self):
        statements = [s.strip() for s in first_half(ALPHA).splitlines() if s.strip()]
        walk = "\n## Walk\n\n" + "".join(f"Then `{s}` follows, as you would expect.\n" for s in statements)
        self.plant("01_alpha/README.zh-CN.md", walk)
        leaks = kl.find_leaks(self.kit, self.repo)
        assert self.pairs(leaks) == [("01_alpha/README.zh-CN.md", "01_alpha/alpha.h", self.alpha_line())]
        x = leaks[0]
        assert x.windows >= kl.LEAK_WINDOWS
        # Rule 1 alone would not have called it a leak: the prose breaks the runs of the file as read.
        assert x.tokens < kl.LEAK_SHARE * x.total
        assert x.tokens < kl.LEAK_TOKENS

    def test_a_comment_opener_in_prose_does_not_hide_the_code_after_it(self):
        # NOTES says "/* are not code" with no "*/" after it: the fenced block below must still count.
        self.plant("01_alpha/README.md", "\n```cpp\n" + first_half(ALPHA) + "```\n")
        assert [x.kit_file for x in kl.find_leaks(self.kit, self.repo)] == ["01_alpha/README.md"]

    def test_one_short_statement_or_the_index_algebra_is_no_leak(self):
        self.plant("01_alpha/README.md", "\nThe lanes: `for (int lane = 0; lane < 4; ++lane)`, and the word "
                   "`w` adds one to partial(lane, data(4 w + lane)).\n")
        self.plant("tools/helper.py", "# the tail: while (cursor < size)\n")
        assert kl.find_leaks(self.kit, self.repo) == []

    def test_twin_regions_of_one_chapter_keep_their_windows(self):
        # running_minimum differs from running_maximum in one token: what they share is chapter
        # 02's solution in both places, and half of either is caught, named for both.
        lines = [r.begin + 1 for r in sk.parse_regions(BETA, "b") if r.kind == sk.SOLUTION]
        self.plant("tools/notes.md", "```cpp\n" + first_half(BETA, 1) + "```\n")
        leaks = kl.find_leaks(self.kit, self.repo)
        assert self.pairs(leaks) == [("tools/notes.md", "02_beta/beta.h", n) for n in lines]
        assert all(x.windows >= kl.LEAK_WINDOWS for x in leaks)

    def test_chapters_counts_the_homework_and_what_lies_outside_the_chapters(self):
        shutil.rmtree(self.kit)
        make_kit(self.repo, self.kit, chapters=["01_alpha"])  # 02_beta stays whole, solutions in
        assert kl.find_leaks(self.kit, self.repo, chapters=["01_alpha"]) == []
        assert kl.find_leaks(self.kit, self.repo, chapters=["01_alpha/"]) == []
        # Had 02 been homework, its whole file would be the leak.
        assert "02_beta/beta.h" in [x.kit_file for x in kl.find_leaks(self.kit, self.repo)]
        beta, shared = "".join(region_body(BETA)), "".join(region_body(SHARED))
        self.plant("01_alpha/README.md", "\n```cpp\n" + beta + "```\n")
        self.plant("tools/notes.md", "```cpp\n" + shared + "```\n")
        self.plant("01_alpha/lab/explore.cu", "void copied() {\n" + first_half(ALPHA) + "}\n")
        assert [(x.kit_file, x.region_file) for x in kl.find_leaks(self.kit, self.repo, chapters=["01_alpha"])] == \
                         [("01_alpha/lab/explore.cu", "01_alpha/alpha.h"), ("tools/notes.md", "common/shared.h")]
        assert [(x.kit_file, x.region_file) for x in kl.find_leaks(self.kit, self.repo, chapters=[])] == \
                         [("tools/notes.md", "common/shared.h")]
        with pytest.raises(ValueError):
            kl.find_leaks(self.kit, self.repo, chapters=["03_missing"])
        with pytest.raises(ValueError):
            kl.find_leaks(self.kit, self.repo, chapters=["common"])

    def test_a_file_that_is_not_utf8_is_read_and_a_binary_one_is_skipped(self):
        half = first_half(ALPHA).encode("utf-8")
        with open(os.path.join(self.kit, "01_alpha", "latin1.txt"), "wb") as f:
            f.write(b"caf\xe9\n" + half)
        with open(os.path.join(self.kit, "01_alpha", "blob.bin"), "wb") as f:
            f.write(b"\0\1\2" + half)
        assert [x.kit_file for x in kl.find_leaks(self.kit, self.repo)] == ["01_alpha/latin1.txt"]

    def test_code_tokens(self):
        code = 'while (j < WIDTH) sum += grid[r][j++]; // a comment\ns = "http://x"; /* more */\n#pragma unroll\n'
        assert kl.code_tokens(code) == \
                         ["while", "(", "I", "<", "I", ")", "I", "+=", "I", "[", "I", "]", "[", "I", "++", "]", ";",
                          "I", "=", '"http://x"', ";", "pragma", "unroll"]
        # Rule 2 keeps the names of four characters or more.
        assert kl.code_tokens("sum += grid[j];", names=True) == ["I", "+=", "grid", "[", "I", "]", ";"]
        # Outside C++ a '/*' ends with its line.
        assert kl.code_tokens("a /* b\nc d", line_comments_only=True) == ["I", "/", "*", "I", "I", "I"]


# ---- this workbook ----------------------------------------------------------------------------------

def workbook_has_regions():
    try:
        return any(r.kind == sk.SOLUTION for rs in sk.scan(ROOT).values() for r in rs)
    except sk.KitError:
        return False


@pytest.mark.skipif(sk.is_kit(ROOT) or not workbook_has_regions(), reason="this is a student kit: its solution regions were taken out")
class TestWorkbook:
    """One kit of this workbook, made with the real command line, and three planted halves."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-kit-leaks-")
        cls.kit = os.path.join(cls.tmp, "kit")
        cls.made = subprocess.run([sys.executable, "-m", "wb", "kit", "make", cls.kit],
                                  cwd=ROOT, capture_output=True, text=True)
        cls.regions = kl.solution_regions(ROOT)[0]

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setup_method(self):
        assert self.made.returncode == 0, self.made.stdout + self.made.stderr

    def half(self, chapter, target):
        """The first half (by lines) of the first region of `chapter` outside the file `target`
        whose half is one that the finer rule can tell (see kit_leaks.py: a half that the kit
        shows elsewhere is not)."""
        for r in self.regions:
            if kl.chapter_of(r.path) != chapter or r.path == target:
                continue
            with open(os.path.join(ROOT, r.path), encoding="utf-8") as f:
                text = f.read()
            n = [x.begin + 1 for x in sk.parse_regions(text, r.path) if x.kind == sk.SOLUTION].index(r.line)
            half = first_half(text, n)
            if len(r.distinctive & kl.held_by("x.md", "```\n" + half + "```\n")[1]) >= kl.LEAK_WINDOWS:
                return r, half
        pytest.fail(f"no region of {chapter} to plant")

    def test_a_kit_of_this_workbook_has_no_leak(self):
        assert "leak scan: no file of the kit holds a solution" in self.made.stdout
        leaks = kl.find_leaks(self.kit, ROOT)
        assert leaks == [], "\n".join(kl.describe_leak(x) for x in leaks)

    def test_planted_halves_are_caught_named_and_counted_by_chapter(self):
        note_region, note_half = self.half("03_shared_tiling", "03_shared_tiling/README.md")
        tool_region, tool_half = self.half("08_end_to_end", "tools/wb/bench_summary.py")
        lab_region, lab_half = self.half("09_hopper_wgmma", "09_hopper_wgmma/lab/ceiling_09.cu")
        plants = {
            "03_shared_tiling/README.md": (note_region, "\n```cpp\n" + note_half + "```\n"),
            "tools/wb/bench_summary.py": (tool_region, "\nEXAMPLE = (\n" + "".join(
                f"    {line!r}\n" for line in tool_half.splitlines(keepends=True)) + ")\n"),
            "09_hopper_wgmma/lab/ceiling_09.cu": (lab_region, "\n" + "".join(
                "// " + line for line in lab_half.splitlines(keepends=True))),
        }
        saved = {}
        try:
            for rel, (_, text) in plants.items():
                with open(os.path.join(self.kit, rel), "rb") as f:
                    saved[rel] = f.read()
                write(os.path.join(self.kit, rel), text, "a")
            leaks = kl.find_leaks(self.kit, ROOT)
            said = "\n".join(kl.describe_leak(x) for x in leaks)
            found = {(x.kit_file, x.region_file, x.region_line): x for x in leaks}
            for rel, (r, _) in plants.items():
                assert (rel, r.path, r.line) in found, said
                assert found[(rel, r.path, r.line)].windows >= kl.LEAK_WINDOWS, said
                assert f"{rel}: holds " in said
                assert f"{r.path}:{r.line} ({r.hint})" in said
            # A region of the same chapter may be named too (they share windows), nothing else.
            assert {(x.kit_file, kl.chapter_of(x.region_file)) for x in leaks} == \
                             {(rel, kl.chapter_of(r.path)) for rel, (r, _) in plants.items()}, said
            # A homework on chapter 03 alone: only the note's plant counts.
            only_03 = kl.find_leaks(self.kit, ROOT, chapters=["03_shared_tiling"])
            assert {x.kit_file for x in only_03} == {"03_shared_tiling/README.md"}
            assert kl.find_leaks(self.kit, ROOT, chapters=[]) == []
        finally:
            for rel, data in saved.items():
                with open(os.path.join(self.kit, rel), "wb") as f:
                    f.write(data)

    def test_notes_describe_the_homework_in_words_not_statements(self):
        # 03's notes once walked through sgemm_smem_tiled statement by statement.
        for name in ("README.md", "README.zh-CN.md"):
            with open(os.path.join(ROOT, "03_shared_tiling", name), encoding="utf-8") as f:
                text = f.read()
            assert not re.search(r"load_or_zero\(A,|acc \+= As\[ty\]\[k\]", text), name
            assert "A(row, k0 + tx)" in text, name
