"""test_student_kit.py - tests of the student starter kit (`python3 -m wb kit`, tools/wb/kit.py), no
GPU needed.

The markers are balanced everywhere and every GPU chapter with homework (02-06, 08, 09) has solution
regions; a kit made from this workbook differs from it in exactly those regions (and the
instructors' guide, a stub, and the rubric, which names the homework), holds no .git and no
solution code (the leak scan finds none, and finds a planted one wherever it is put, renamed or
not), its links lead to files it holds, and every original file (the rubric too) comes back byte for
byte when the regions are restored (also after a student filled the TODOs); bad usage exits 2
with one line; the leak scan's own tests use a toy region unrelated to any chapter, so this file
(which ships in the kit) holds no solution. The slow test builds a few of the kit's chapters from
scratch (a fresh common/ library inside the kit) for ARCH=sm_90 only, in one make with -j (the
machine's cores), which needs nvcc but no GPU: no compiler warning, the tests list, and with the GPU
hidden (CUDA_VISIBLE_DEVICES=-1) every CPU test case of the unfilled kit passes and its GPU cases are
skipped (a CPU test that runs a TODO fails here). Where a GPU is present (nvidia-smi works) the
kit's programs must also report FAIL and its tests must fail (chapter 09's only on compute
capability 9.0: elsewhere its program exits 3 and its GPU tests are skipped).
KIT_BUILD_CHAPTERS picks the chapters built: default "02 08" (the smallest kernel chapter, and the
one whose regions are host code beside its CPU-tested helpers); "all" for every GPU chapter; "none"
leaves the build out. KIT_BUILD_JOBS sets -j. CI (.ci/run) builds and tests the whole kit, every
chapter, with the kit's own `make -j2 && make test`.

Also make test's runner (`python3 -m wb test`, tools/wb/testrun.py): its closing count, and its
"NOT tested" warning when GPU test cases were skipped. Run with pytest (make test runs it). Inside a
student kit (no regions left, TODO(student) blocks instead) the tests of the kit tool are skipped.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stdout
from io import StringIO

import pytest

from wb import ROOT, TOOLS
from wb import kit as sk
from wb import kit_leaks as kl

KIT_TOOL = ["-m", "wb", "kit"]  # after sys.executable

GPU_CHAPTERS = ["02_naive_kernel", "03_shared_tiling", "04_register_unroll", "05_float4_vectorized",
                "06_tensor_core_wmma", "08_end_to_end", "09_hopper_wgmma"]
# Extra options of a kit program's run on a GPU (08: only the part that checks a GEMM end to end).
RUN_OPTIONS = {"08_end_to_end": ["--part", "crossover"]}
# Chapters whose code runs on one compute capability only; on another GPU their program exits 3.
NEEDS_CC = {"09_hopper_wgmma": "9.0"}
# They name the markers themselves (the kit tool, and the tests that plant regions and fill TODOs).
OWN_FILES = {"tools/wb/kit.py", "tools/test_student_kit.py", "tools/test_grade.py", "tools/test_cohort.py"}
BUILD_CHAPTERS = os.environ.get("KIT_BUILD_CHAPTERS", "02 08").split()
if BUILD_CHAPTERS == ["all"]:
    BUILD_CHAPTERS = [c.split("_")[0] for c in GPU_CHAPTERS]
BUILD_JOBS = int(os.environ.get("KIT_BUILD_JOBS") or os.cpu_count() or 2)


def run(cmd, cwd=ROOT, env=None, timeout=None):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def in_a_kit():
    """True when ROOT is itself a student kit (of every chapter or of a homework subset)."""
    return sk.is_kit(ROOT)


IN_A_KIT = in_a_kit()


def gpu_present():
    if shutil.which("nvidia-smi") is None:
        return False
    try:
        r = run(["nvidia-smi", "-L"], timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and "GPU" in r.stdout


def gpu_compute_capability():
    """GPU 0's compute capability as nvidia-smi reports it ("9.0"), or "" when unknown."""
    try:
        r = run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"], timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    first = (r.stdout.splitlines() or [""])[0].strip()
    return first if r.returncode == 0 and re.fullmatch(r"\d+\.\d+", first) else ""


def summary_counts(text):
    """(passed, failed, skipped) of one test binary's WB_TEST_SUMMARY line: "NAME P F S", and for
    the C++ binaries a fifth field, how many of the S skips lacked a GPU (common/test_main.cpp)."""
    fields = text.split()
    if len(fields) not in (4, 5):
        raise ValueError(f"not a test summary line: {text!r}")
    return tuple(int(x) for x in fields[1:4])


def clean_make_env():
    """The environment without the parent make's job server, so a test under `make test` builds
    the kit on its own."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "ARCH"):
        env.pop(k, None)
    return env


@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
class TestMarkers:
    def test_markers_are_valid_and_every_gpu_chapter_has_regions(self):
        found = sk.scan(ROOT)  # raises on unbalanced or nested markers, or an empty hint
        # A chapter's steps may live in a few teaching headers (or lab/), not only kernels.cuh.
        for chapter in GPU_CHAPTERS:
            assert [r for p, rs in found.items() if p.startswith(chapter + "/") for r in rs
                             if r.kind == sk.SOLUTION], f"{chapter} has no solution region"
        # The planted-bug kernels of 02-04 are near-copies of the solutions: instructor only.
        for chapter in GPU_CHAPTERS[:3]:
            test = f"{chapter}/test_{chapter}.cu"
            assert [r.kind for r in found.get(test, [])] == [sk.INSTRUCTOR] * 2, test
        r = run([sys.executable, *KIT_TOOL, "check"])
        assert r.returncode == 0, r.stderr
        assert "markers OK" in r.stdout
        assert "[instructor only]" in r.stdout

    def test_hints_are_one_short_line(self):
        for path, regions in sk.scan(ROOT).items():
            lines = read_bytes(os.path.join(ROOT, path)).decode("utf-8").splitlines()
            for r in regions:
                assert r.end > r.begin + 1, f"{path}:{r.begin + 1}: empty region"
                assert len(lines[r.begin]) <= 110, f"{path}:{r.begin + 1}: the marker line is too long"
                assert len(r.hint) >= 10, f"{path}:{r.begin + 1}: the hint says too little"

    def test_check_rejects_bad_markers(self):
        cases = {
            "unclosed": "void f() {\n    // BEGIN SOLUTION: do it\n    int x = 1;\n}\n",
            "unopened": "void f() {\n    int x = 1;\n    // END SOLUTION\n}\n",
            "nested": "// BEGIN SOLUTION: a\n// BEGIN SOLUTION: b\n// END SOLUTION\n// END SOLUTION\n",
            "nested kinds": "// BEGIN INSTRUCTOR ONLY: a\n// BEGIN SOLUTION: b\n// END SOLUTION\n"
                            "// END INSTRUCTOR ONLY\n",
            "crossed kinds": "// BEGIN INSTRUCTOR ONLY: a\nint x;\n// END SOLUTION\n",
            "empty hint": "// BEGIN SOLUTION:   \nint x;\n// END SOLUTION\n",
            "malformed": "// BEGIN SOLUTION do it\nint x;\n// END SOLUTION\n",
            "malformed instructor": "// BEGIN INSTRUCTOR_ONLY: x\nint x;\n// END INSTRUCTOR ONLY\n",
            "unbalanced braces": "void f() {\n    // BEGIN SOLUTION: loop\n    for (;;) {\n    // END SOLUTION\n    }\n}\n",
            "unbalanced instructor": "// BEGIN INSTRUCTOR ONLY: half a test\nTEST_CASE(\"x\") {\n"
                                     "// END INSTRUCTOR ONLY\n}\n",
        }
        for name, text in cases.items():
            with tempfile.TemporaryDirectory(prefix="wb-kit-") as tmp:
                with open(os.path.join(tmp, "kernels.cuh"), "w") as f:
                    f.write(text)
                r = run([sys.executable, *KIT_TOOL, "check", tmp])
                assert r.returncode == 1, r.stdout + r.stderr
                assert "kernels.cuh:" in r.stderr
                assert len(r.stderr.strip().splitlines()) == 1, r.stderr

    def test_instructor_only_region_becomes_one_line_and_comes_back(self):
        text = ("int keep;\n// BEGIN INSTRUCTOR ONLY: planted bug\nint bug() { return 1; }\n"
                "// END INSTRUCTOR ONLY\n    // BEGIN SOLUTION: write it\n    int x = 2;\n    // END SOLUTION\n")
        kit, n = sk.strip_solutions(text, "t.cu")
        assert n == 2
        assert kit == "int keep;\n// INSTRUCTOR ONLY (left out of the starter kit): planted bug\n" \
                              "    // TODO(student): write it\n    // END TODO(student)\n"
        assert sk.put_solutions_back(kit, text, "t.cu") == text
        # A placeholder of the wrong kind, or a lost one, is refused.
        with pytest.raises(sk.KitError):
            sk.put_solutions_back(kit.replace("// INSTRUCTOR ONLY (left out of the starter kit): planted bug\n", ""),
                                  text, "t.cu")


class TestLeakScan:
    """The scan on small fixtures: what it must catch and what it must let through."""

    # A toy unrelated to any chapter (run-length encoding: "aaab" -> "a3b1"), so that this file,
    # which ships in the kit, holds no solution of the workbook. Lines 5-12 are the region's body.
    SOURCE = ("#include <string>\n"
              "inline std::string run_lengths(const std::string& text) {\n"
              "    std::string out;\n"
              "    // BEGIN SOLUTION: each run of one character as the character, then its length\n"
              "    size_t start = 0;\n"
              "    while (start < text.size()) {\n"
              "        size_t end = start + 1;\n"
              "        while (end < text.size() && text[end] == text[start]) ++end;  // the run's end\n"
              "        out += text[start];\n"
              "        out += std::to_string(end - start);\n"
              "        start = end;\n"
              "    }\n"
              "    // END SOLUTION\n"
              "    return out;\n"
              "}\n")

    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)
        self.repo = os.path.join(self.tmp, "repo")
        os.makedirs(os.path.join(self.repo, "01_toy", "lab"))
        with open(os.path.join(self.repo, "01_toy", "toy.h"), "w") as f:
            f.write(self.SOURCE)
        with open(os.path.join(self.repo, "README.md"), "w") as f:
            f.write("# notes\n\nThe inner loop runs `while (end < n && text[end] == text[start]) ++end`.\n")
        self.kit = os.path.join(self.tmp, "kit")

    def make(self):
        with redirect_stdout(StringIO()):
            return sk.cmd_make(self.kit, self.repo)

    def body(self):
        lines = self.SOURCE.splitlines(keepends=True)
        return "".join(lines[4:12])

    def test_a_clean_kit_passes_and_quoting_a_line_is_no_leak(self):
        self.make()  # the command line works on this workbook; the fixture is another one
        assert kl.find_leaks(self.kit, self.repo) == []
        r = run([sys.executable, *KIT_TOOL, "leaks", self.kit, "--from", self.repo])
        assert r.returncode == 0, r.stdout + r.stderr

    def test_a_planted_copy_is_caught_wherever_it_is(self):
        renamed = re.sub(r"\bout\b", "encoded", re.sub(r"\bstart\b", "first", self.body()))
        no_comments = re.sub(r"//[^\n]*", "", renamed).replace("\n", " ")
        plants = {
            "01_toy/test_01_toy.cu": "namespace {\nvoid copy(const std::string& text, std::string& out) {\n"
                                     + self.body() + "}\n}\n",
            "01_toy/lab/tune.h": "void variant() {\n" + renamed + "}\n",
            "01_toy/README.md": "## walk\n\n```cpp\n" + self.body() + "```\n",
            "tools/notes.txt": no_comments,
        }
        for rel, text in plants.items():
            shutil.rmtree(self.kit, ignore_errors=True)
            self.make()
            os.makedirs(os.path.dirname(os.path.join(self.kit, rel)), exist_ok=True)
            with open(os.path.join(self.kit, rel), "a") as f:
                f.write(text)
            leaks = kl.find_leaks(self.kit, self.repo)
            assert [(x.kit_file, x.region_file) for x in leaks] == [(rel, "01_toy/toy.h")]
            assert leaks[0].tokens >= kl.LEAK_SHARE * leaks[0].total
            r = run([sys.executable, *KIT_TOOL, "leaks", self.kit, "--from", self.repo])
            assert r.returncode == 1, r.stdout + r.stderr
            assert f"{rel}: holds " in r.stdout

    def test_make_refuses_to_call_a_leaking_kit_clean(self):
        with open(os.path.join(self.repo, "01_toy", "lab", "copy.h"), "w") as f:
            f.write("void copy() {\n" + self.body() + "}\n")
        with pytest.raises(sk.KitError) as e:
            self.make()
        assert "01_toy/lab/copy.h: holds" in str(e.value)

    def test_no_git_history_and_no_untracked_files_in_the_kit(self):
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t")
        for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-q", "-m", "fixture"]):
            assert run(cmd, cwd=self.repo, env=env).returncode == 0
        with open(os.path.join(self.repo, "scratch.cu"), "w") as f:
            f.write("void scratch() {\n" + self.body() + "}\n")
        r = run([sys.executable, "-c", "import sys; from wb import kit as sk; sys.exit(sk.cmd_make(sys.argv[1], sys.argv[2]))",
                 self.kit, self.repo])
        assert r.returncode == 0, r.stderr
        assert "1 untracked file(s) left out of the kit" in r.stderr
        assert "scratch.cu" in r.stderr
        assert not os.path.exists(os.path.join(self.kit, "scratch.cu"))
        assert not os.path.exists(os.path.join(self.kit, ".git"))
        assert sorted(os.listdir(self.kit)) == ["01_toy", "README.md"]


@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
class TestKit:
    """One kit of this workbook, made once with the real command line, for the content tests."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-kit-")
        cls.kit = os.path.join(cls.tmp, "kit")
        cls.result = run([sys.executable, *KIT_TOOL, "make", cls.kit])
        cls.files = sk.repo_files(ROOT)
        cls.found = sk.scan(ROOT)

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setup_method(self):
        assert self.result.returncode == 0, self.result.stderr + self.result.stdout

    def kit_files(self, kit=None):
        kit = kit or self.kit
        out = []
        for here, dirs, names in os.walk(kit):
            out += [os.path.relpath(os.path.join(here, n), kit) for n in names + [d for d in dirs if d == ".git"]]
        return sorted(out)

    def test_kit_holds_the_workbook_files_and_nothing_else(self):
        assert self.kit_files() == sorted(self.files)
        for must in ("Makefile", "README.md", "common/gemm_harness.cu", "report_template/report.md",
                     "02_naive_kernel/README.md", "02_naive_kernel/test_02_naive_kernel.cu", "tools/run_tests.sh"):
            assert must in self.files
        # No build output and no git history came along, and the executables stay executable.
        assert not [p for p in self.files if p.endswith((".o", ".a")) or "/build/" in p or ".git" in p.split("/")]
        assert (run(["git", "-C", self.kit, "rev-parse", "--show-toplevel"]).stdout.strip()
                         if shutil.which("git") else "") == ""
        mode = os.stat(os.path.join(self.kit, "tools", "run_tests.sh")).st_mode
        assert mode & 0o111 == os.stat(os.path.join(ROOT, "tools", "run_tests.sh")).st_mode & 0o111

    def test_kit_differs_from_the_original_exactly_in_the_regions(self):
        for p in self.files:
            original = read_bytes(os.path.join(ROOT, p))
            kit = read_bytes(os.path.join(self.kit, p))
            if p in sk.INSTRUCTOR_ONLY:
                assert kit.decode("utf-8") == sk.GUIDE_STUBS[p], p
                continue
            if p == sk.RUBRIC:  # the kit's rubric names its homework (here every chapter)
                assert kit.decode("utf-8") == sk.kit_rubric(ROOT, sk.chapters_of(ROOT)), p
                continue
            if p not in self.found:
                assert kit == original, p
                continue
            orig_lines = original.decode("utf-8").splitlines(keepends=True)
            kit_lines = kit.decode("utf-8").splitlines(keepends=True)
            # Outside the regions, line for line the same; each region is its placeholder with its hint.
            kept, pos = [], 0
            for r in self.found[p]:
                kept += orig_lines[pos:r.begin]
                kept += sk.placeholder(r, "\n", "\n")
                pos = r.end + 1
            kept += orig_lines[pos:]
            assert kit_lines == kept, p

    def test_no_solution_code_leaks_into_the_kit(self):
        # The scan reads every file of the kit (tests, notes, lab/ folders, scripts) and compares
        # code tokens, not marker text; LeakScan shows that it catches planted copies.
        leaks = kl.find_leaks(self.kit, ROOT)
        assert leaks == [], "\n".join(kl.describe_leak(x) for x in leaks)
        # Nor the markers, nor the planted-bug kernels that tests hold for the instructor.
        for here, _, names in os.walk(self.kit):
            for n in names:
                rel = os.path.relpath(os.path.join(here, n), self.kit)
                if rel in OWN_FILES:
                    continue
                text = read_bytes(os.path.join(here, n)).decode("utf-8", "replace")
                for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN INSTRUCTOR ONLY", "END INSTRUCTOR ONLY"):
                    assert marker not in text, rel
        for chapter, planted in (("02_naive_kernel", "sgemm_naive_off_by_one"),
                                 ("03_shared_tiling", "sgemm_tiled_with_bug"),
                                 ("04_register_unroll", "sgemm_2d_with_bug")):
            test = read_bytes(os.path.join(self.kit, chapter, f"test_{chapter}.cu")).decode("utf-8")
            assert planted not in test
            assert planted in read_bytes(os.path.join(ROOT, chapter, f"test_{chapter}.cu")).decode("utf-8")

    def test_a_copied_chapter_09_solution_is_caught(self):
        # Chapter 09's regions are short (the wgmma issue sequence is a few calls): the scan must
        # still find each of them copied into another file of the kit, renamed or not.
        name = "09_hopper_wgmma/wgmma_pipeline.cuh"
        lines = read_bytes(os.path.join(ROOT, name)).decode("utf-8").splitlines(keepends=True)
        regions = [r for r in self.found[name] if r.kind == sk.SOLUTION]
        assert len(regions) == 3
        targets = ["09_hopper_wgmma/README.md", "09_hopper_wgmma/lab/ceiling_09.cu",
                   "09_hopper_wgmma/test_09_hopper_wgmma.cu"]
        saved = {t: read_bytes(os.path.join(self.kit, t)) for t in targets}
        try:
            for r, target in zip(regions, targets):
                body = re.sub(r"\bacc\b", "accum", "".join(lines[r.begin + 1:r.end]))
                text = ("\n```cpp\n" + body + "```\n") if target.endswith(".md") else \
                    ("\nnamespace copied {\n__device__ void f() {\n" + body + "}\n}\n")
                with open(os.path.join(self.kit, target), "ab") as f:
                    f.write(text.encode("utf-8"))
            # Only the leaks of these regions: a copy may also resemble a later step that reuses the
            # same instructions (step 9's register-A wgmmas), and that is found as well.
            leaks = [x for x in kl.find_leaks(self.kit, ROOT) if x.region_file == name]
            assert sorted((x.kit_file, x.region_line) for x in leaks) == \
                             sorted((t, r.begin + 1) for r, t in zip(regions, targets)), \
                             "\n".join(kl.describe_leak(x) for x in leaks)
        finally:
            for target, data in saved.items():
                with open(os.path.join(self.kit, target), "wb") as f:
                    f.write(data)

    def test_links_lead_to_files_in_the_kit(self):
        # A link that works in the workbook works in the kit (the instructors' guide is a stub).
        link = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")
        checked = 0
        for p in self.files:
            if not p.endswith(".md"):
                continue
            for target in link.findall(read_bytes(os.path.join(ROOT, p)).decode("utf-8")):
                if "://" in target or target.startswith("mailto:"):
                    continue
                rel = os.path.normpath(os.path.join(os.path.dirname(p), target))
                if os.path.exists(os.path.join(ROOT, rel)):
                    checked += 1
                    assert os.path.exists(os.path.join(self.kit, rel)), f"{p} links to {target}"
        assert checked > 10
        readme = read_bytes(os.path.join(self.kit, "README.md")).decode("utf-8")
        assert "docs/INSTRUCTORS.md" in readme
        assert "TODO(student)" in read_bytes(os.path.join(self.kit, "docs", "INSTRUCTORS.md")).decode("utf-8")

    def test_restore_gives_the_original_files_byte_for_byte(self):
        copy = os.path.join(self.tmp, "restored")
        shutil.copytree(self.kit, copy)
        r = run([sys.executable, *KIT_TOOL, "restore", copy, "--from", ROOT])
        assert r.returncode == 0, r.stderr
        assert self.kit_files(copy) == sorted(self.files)
        for p in self.files:  # the rubric too: restore puts the workbook's back
            assert read_bytes(os.path.join(copy, p)) == read_bytes(os.path.join(ROOT, p)), p

    def test_restore_replaces_what_a_student_wrote(self):
        copy = os.path.join(self.tmp, "filled")
        shutil.copytree(self.kit, copy)
        path = os.path.join(copy, "02_naive_kernel", "kernels.cuh")
        text = read_bytes(path).decode("utf-8")
        filled = re.sub(r"(// TODO\(student\):[^\n]*\n)", r"\1    int my_attempt = 42;  // student code\n", text)
        assert filled != text
        with open(path, "wb") as f:
            f.write(filled.encode("utf-8"))
        r = run([sys.executable, *KIT_TOOL, "restore", copy, "--from", ROOT])
        assert r.returncode == 0, r.stderr
        assert read_bytes(path) == read_bytes(os.path.join(ROOT, "02_naive_kernel", "kernels.cuh"))

    def test_restore_refuses_a_kit_that_does_not_match(self):
        copy = os.path.join(self.tmp, "mismatch")
        shutil.copytree(self.kit, copy)
        path = os.path.join(copy, "03_shared_tiling", "kernels.cuh")
        before = read_bytes(path)
        with open(path, "wb") as f:
            f.write(before.replace(b"// TODO(student): ", b"// TODO(student): changed ", 1))
        untouched = read_bytes(os.path.join(copy, "02_naive_kernel", "kernels.cuh"))
        r = run([sys.executable, *KIT_TOOL, "restore", copy, "--from", ROOT])
        assert r.returncode == 1, r.stdout
        assert "03_shared_tiling/kernels.cuh" in r.stderr
        assert "hint" in r.stderr
        # Checked before anything is written: no file of the kit changed.
        assert read_bytes(os.path.join(copy, "02_naive_kernel", "kernels.cuh")) == untouched

    def test_making_a_kit_from_a_kit_is_refused(self):
        r = run([sys.executable, *KIT_TOOL, "make", os.path.join(self.tmp, "kit-of-kit")],
                env=dict(os.environ, PYTHONPATH=os.path.join(self.kit, "tools")))
        assert r.returncode == 1, r.stdout
        assert "no solution regions" in r.stderr


@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
class TestUsage:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)

    def assert_usage_error(self, args, *words):
        r = run([sys.executable, *KIT_TOOL] + args)
        assert r.returncode == 2, r.stdout + r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        for w in words:
            assert w in r.stderr
        return r

    def test_bad_usage_exits_2_with_one_line(self):
        busy = os.path.join(self.tmp, "busy")
        os.makedirs(busy)
        with open(os.path.join(busy, "homework.txt"), "w") as f:
            f.write("mine\n")
        self.assert_usage_error([], "--help")
        self.assert_usage_error(["frobnicate", self.tmp], "frobnicate")
        self.assert_usage_error(["make"], "required")
        self.assert_usage_error(["make", busy], "not an empty folder")
        self.assert_usage_error(["make", ROOT], "inside the workbook")
        self.assert_usage_error(["make", os.path.join(ROOT, "kit")], "inside the workbook")
        self.assert_usage_error(["restore", busy], "--from")
        self.assert_usage_error(["restore", os.path.join(self.tmp, "nope"), "--from", ROOT], "not a folder")
        assert os.listdir(busy) == ["homework.txt"]
        assert not os.path.exists(os.path.join(ROOT, "kit"))

    def test_an_empty_folder_is_accepted(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        r = run([sys.executable, *KIT_TOOL, "make", empty])
        assert r.returncode == 0, r.stderr
        assert os.path.exists(os.path.join(empty, "Makefile"))


# A Python test file for the runner: 5 passing cases, one skipped for a reason other than a GPU,
# and one GPU case (tools/conftest.py's marker: skipped without a GPU, failed with REQUIRE_GPU=1).
PYTHON_TESTS = """import pytest


@pytest.mark.parametrize("n", range(5))
def test_passes(n):
    assert n < 5


@pytest.mark.skip(reason="a tool missing")
def test_needs_a_tool():
    pass


@pytest.mark.gpu
def test_on_the_gpu():
    pass
"""


@pytest.mark.skipif(in_a_kit(), reason="this is a student kit: it cannot make another")
def test_make_test_in_a_kit_counts_the_empty_regions(tmp_path):
    from wb import testrun
    kit = str(tmp_path / "kit")
    r = run([sys.executable, *KIT_TOOL, "make", kit, "--homework", "03"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert testrun.empty_regions(ROOT) is None  # the workbook itself is no kit
    empty, total = testrun.empty_regions(kit)
    assert total >= 3 and empty == total  # a fresh kit: every region empty
    path = os.path.join(kit, "03_shared_tiling", "kernels.cuh")
    with open(path) as f:
        text = f.read()
    first = text.index("// END TODO(student)")
    with open(path, "w") as f:
        f.write(text[:first] + "    // a comment alone does not fill it\n" + text[first:])
    assert testrun.empty_regions(kit) == (total, total)
    with open(path, "w") as f:
        f.write(text[:first] + "    const int filled = 1; (void)filled;\n" + text[first:])
    assert testrun.empty_regions(kit) == (total - 1, total)
    # What make test prints in the kit, above its closing line.
    r = run([sys.executable, "-m", "wb", "test", os.path.join(TOOLS, "test_sass_loop.py")], cwd=kit,
            env=dict(os.environ, PYTHONPATH=os.path.join(kit, "tools")))
    lines = r.stdout.rstrip("\n").splitlines()
    assert lines[-2] == f"kit: {total - 1} of {total} TODO(student) regions still empty (their variants fail their " \
                        "GPU tests until you fill them)", r.stdout
    assert lines[-1].startswith("tests: ")


class TestSkippedMeansUntested:
    """An unfilled kit on a machine without a GPU skips every kernel test: make test's runner must
    say so in words, not just "0 failed", and keep its summary as the last line."""

    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)
        # A folder of Python tests under the workbook's pytest settings, on a machine without a GPU
        # (an nvidia-smi that lists none), whatever this machine has.
        self.py = os.path.join(self.tmp, "py")
        os.makedirs(self.py)
        shutil.copy(os.path.join(TOOLS, "conftest.py"), self.py)
        fake_bin = os.path.join(self.tmp, "bin")
        os.makedirs(fake_bin)
        with open(os.path.join(fake_bin, "nvidia-smi"), "w") as f:
            f.write("#!/bin/sh\necho 'No devices were found'\nexit 6\n")
        os.chmod(os.path.join(fake_bin, "nvidia-smi"), 0o755)
        self.env = dict(os.environ, PATH=fake_bin + os.pathsep + os.environ["PATH"])
        self.env.pop("REQUIRE_GPU", None)

    def fake(self, name, counts):
        """A stand-in C++ test binary that reports "P F S G" as common/test_main.cpp does."""
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\necho "{name} {counts}" >> "$WB_TEST_SUMMARY"\n')
        os.chmod(path, 0o755)
        return path

    def python_file(self, name, text=PYTHON_TESTS):
        path = os.path.join(self.py, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def summary(self, *tests, **env):
        r = run(["bash", os.path.join(TOOLS, "run_tests.sh")] + list(tests), env=dict(self.env, **env))
        return r, r.stdout.rstrip("\n").splitlines()

    def test_gpu_skips_are_called_untested(self):
        # a C++ binary reports "P F S G": G of its S skips lacked a GPU; pytest's GPU-marked cases
        # skipped for lack of a GPU count there too
        r, lines = self.summary(self.fake("test_02_naive_kernel", "3 0 4 4"), self.python_file("test_tool.py"))
        assert r.returncode == 0, r.stdout
        assert lines[-1] == "tests: 8 passed, 0 failed, 6 skipped", r.stdout
        warning = [ln for ln in lines if ln.startswith("WARNING:")]
        assert len(warning) == 1, r.stdout
        assert "5 GPU test case(s) were SKIPPED" in warning[0]
        assert "NOT tested" in warning[0]
        assert "REQUIRE_GPU=1 make test" in warning[0]
        assert "1 test case(s) were skipped for another reason" in r.stdout
        assert "[pytest] test cases: 5 passed, 0 failed, 2 skipped" in r.stdout

    def test_require_gpu_turns_a_python_gpu_skip_into_a_failure(self):
        r, lines = self.summary(self.python_file("test_tool.py"), REQUIRE_GPU="1")
        assert r.returncode == 1, r.stdout
        assert lines[-1] == "tests: 5 passed, 1 failed, 1 skipped", r.stdout
        assert "REQUIRE_GPU=1 but no GPU is usable" in r.stdout
        assert "WARNING:" not in r.stdout

    def test_other_skips_on_a_gpu_are_not_blamed_on_a_missing_gpu(self):
        # on a GPU machine without CUTLASS: 2 of chapter 07's cases skipped, none for lack of a GPU
        r, lines = self.summary(self.fake("test_07_cublas_baseline", "15 0 2 0"))
        assert lines[-1] == "tests: 15 passed, 0 failed, 2 skipped"
        assert "WARNING:" not in r.stdout
        assert "2 test case(s) were skipped for another reason" in r.stdout

    def test_a_missing_binary_or_a_broken_python_file_counts_as_a_failure(self):
        missing = os.path.join(self.tmp, "test_09_hopper_wgmma")
        broken = self.python_file("test_broken.py", "def test_(:\n")
        r, lines = self.summary(missing, self.fake("test_02_naive_kernel", "2 0 0 0"), broken)
        assert r.returncode == 1, r.stdout
        assert lines[-1] == "tests: 2 passed, 2 failed, 0 skipped", r.stdout
        assert f"run_tests: {missing} is missing (build failed?)" in r.stdout
        silent = os.path.join(self.tmp, "test_silent")
        with open(silent, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(silent, 0o755)
        r, lines = self.summary(silent)
        assert lines[-1] == "tests: 0 passed, 1 failed, 0 skipped", r.stdout
        assert "without reporting its counts" in r.stdout

    def test_summary_lines_of_both_kinds_are_read(self):
        # KitBuilds reads a kit binary's counts on a GPU machine with summary_counts
        assert summary_counts("test_02_naive_kernel 3 2 1 0\n") == (3, 2, 1)
        assert summary_counts("test_tool 5 0 1") == (5, 0, 1)
        with pytest.raises(ValueError):
            summary_counts("test_x 1 2")

    def test_no_warning_when_nothing_was_skipped(self):
        passing = "def test_a():\n    pass\n\n\ndef test_b():\n    pass\n"
        r, lines = self.summary(self.fake("test_02_naive_kernel", "7 0 0"), self.python_file("test_tool.py", passing))
        assert lines[-1] == "tests: 9 passed, 0 failed, 0 skipped"
        assert "WARNING:" not in r.stdout
        assert "skipped;" not in r.stdout


@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
class TestKitBuilds:
    """The slow one: chapters of a fresh kit build without a GPU (ARCH=sm_90), and their CPU tests pass."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-kit-build-")
        cls.kit = os.path.join(cls.tmp, "kit")
        cls.made = run([sys.executable, *KIT_TOOL, "make", cls.kit])

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_kit_chapters_build_and_fail_until_filled(self):
        if BUILD_CHAPTERS == ["none"]:
            pytest.skip("KIT_BUILD_CHAPTERS=none")
        nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.path.exists(nvcc) and shutil.which(nvcc) is None:
            pytest.skip("nvcc is not installed: the kit's build needs the CUDA toolkit")
        if not any(os.path.exists(os.path.join(d, "catch2")) for d in ("/usr/include", "/usr/local/include")) \
                and not os.environ.get("CATCH2_INC"):
            pytest.skip("Catch2 is not installed: the kit's test binaries need it")
        assert self.made.returncode == 0, self.made.stderr
        env = clean_make_env()
        chapters = [next(c for c in GPU_CHAPTERS if c.startswith(nn + "_")) for nn in BUILD_CHAPTERS]
        # One make runs everything with one job server: the kit's common library first (once, so
        # the chapters never race on it), then every chapter's program and test binary side by
        # side, for one architecture only. The library is the kit's own, built from its sources:
        # the kit must build on a machine that never saw the workbook.
        common = os.path.join(self.kit, "common")
        rules = ["all: " + " ".join(chapters), "lib:",
                 f"\t+$(MAKE) --no-print-directory -C {common} ARCH=sm_90 lib {common}/build/test_main.o"]
        for c in chapters:
            rules += [f"{c}: lib", f"\t+$(MAKE) --no-print-directory -C {os.path.join(self.kit, c)} ARCH=sm_90 {c} test_{c}"]
        makefile = os.path.join(self.tmp, "kit-build.mk")
        with open(makefile, "w") as f:
            f.write("\n".join(rules) + "\n")
        t0 = time.time()
        r = run(["make", f"-j{BUILD_JOBS}", "-f", makefile, "all"], cwd=self.tmp, env=env, timeout=1500)
        log = r.stdout + r.stderr
        assert r.returncode == 0, log[-4000:]
        print(f"\n  kit {' '.join(BUILD_CHAPTERS)}: built in {time.time() - t0:.0f} s with -j{BUILD_JOBS}", file=sys.stderr)
        assert "warning" not in log.lower(), log[-4000:]
        assert os.path.exists(os.path.join(common, "build", "libwb.a"))
        gpu = gpu_present()
        cc = gpu_compute_capability() if gpu else ""
        # A chapter this GPU cannot run: its program must say so (exit 3), its GPU tests skip.
        cannot_run = {c for c in chapters if c in NEEDS_CC and cc != NEEDS_CC[c]}
        for chapter in chapters:
            folder = os.path.join(self.kit, chapter)
            r = run(["./test_" + chapter, "--list-tests"], cwd=folder, env=env, timeout=120)
            m = re.search(r"^(\d+) (?:matching )?test cases?$", r.stdout, re.M)
            assert m is not None, r.stdout + r.stderr
            listed = int(m.group(1))
            assert listed > 3, r.stdout
            # Catch2 v3 exits 0 after listing; Catch2 v2 exits with the number of tests listed.
            assert r.returncode in (0, listed % 256), r.stdout + r.stderr
            if chapter in GPU_CHAPTERS[:3]:  # their planted-bug test cases are instructor only
                assert "the check catches planted" not in r.stdout
            # With no GPU to be seen (hidden here, so that a GPU machine checks this too) every
            # CPU test case of the unfilled kit passes: none may depend on a TODO. The GPU
            # cases are skipped, and counted as skipped for lack of a GPU.
            summary = os.path.join(self.tmp, f"cpu-summary-{chapter}.txt")
            cpu_env = dict(env, CUDA_VISIBLE_DEVICES="-1", WB_TEST_SUMMARY=summary)
            cpu_env.pop("REQUIRE_GPU", None)
            r = run(["./test_" + chapter], cwd=folder, env=cpu_env, timeout=600)
            with open(summary) as f:
                line = f.read()
            passed, failed, skipped = summary_counts(line)
            assert (r.returncode, failed) == (0, 0), r.stdout[-3000:] + r.stderr
            assert passed > 0, line
            assert int(line.split()[4]) > 0, line  # the no-GPU skips
            if gpu:
                r = run(["./" + chapter, "--size", "67x45x33", "--warmup", "1", "--reps", "1"]
                        + RUN_OPTIONS.get(chapter, []), cwd=folder, env=env, timeout=300)
                if chapter in cannot_run:
                    assert r.returncode == 3, r.stdout[-3000:] + r.stderr
                    continue
                assert r.returncode == 1, r.stdout[-3000:] + r.stderr  # 1: a verification failed
                assert "FAIL" in r.stdout + r.stderr
        if not gpu:
            return  # no GPU: the kit compiles and its CPU tests pass; FAIL is checked on a GPU
        # The kit's test binaries run side by side (one GPU holds them all): each must fail.
        procs = {}
        for chapter in [c for c in chapters if c not in cannot_run]:
            summary = os.path.join(self.tmp, f"summary-{chapter}.txt")
            out = open(os.path.join(self.tmp, f"log-{chapter}.txt"), "w")
            procs[chapter] = (subprocess.Popen(["./test_" + chapter], cwd=os.path.join(self.kit, chapter),
                                               env=dict(env, WB_TEST_SUMMARY=summary), stdout=out,
                                               stderr=subprocess.STDOUT), summary, out)
        for chapter, (proc, summary, out) in procs.items():
            try:
                rc = proc.wait(timeout=600)
            finally:
                out.close()
                if proc.poll() is None:
                    proc.kill()
            with open(out.name) as f:
                log = f.read()
            assert rc != 0, log[-3000:]
            with open(summary) as f:
                passed, failed, skipped = summary_counts(f.read())
            assert failed > 0, (passed, failed, skipped)
