#!/usr/bin/env python3
"""test_student_kit.py - tests of the student starter kit (tools/student_kit.py), no GPU needed.

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

Run: tools/test_student_kit.py (stdlib unittest). Like the Catch2 test binaries it ends with
"[test_student_kit] test cases: P passed, F failed, S skipped" and, when WB_TEST_SUMMARY is set,
appends "test_student_kit P F S" to that file (tools/run_tests.sh adds them up). Exit status 1 on a
failure. Inside a student kit (no regions left, TODO(student) blocks instead) every test is skipped.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from contextlib import redirect_stdout
from io import StringIO

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
KIT_TOOL = os.path.join(TOOLS, "student_kit.py")
sys.path.insert(0, TOOLS)
import student_kit as sk  # noqa: E402
import kit_leaks as kl  # noqa: E402

GPU_CHAPTERS = ["02_naive_kernel", "03_shared_tiling", "04_register_unroll", "05_float4_vectorized",
                "06_tensor_core_wmma", "08_end_to_end", "09_hopper_wgmma"]
# Extra options of a kit program's run on a GPU (08: only the part that checks a GEMM end to end).
RUN_OPTIONS = {"08_end_to_end": ["--part", "crossover"]}
# Chapters whose code runs on one compute capability only; on another GPU their program exits 3.
NEEDS_CC = {"09_hopper_wgmma": "9.0"}
# They name the markers themselves (the kit tool, and the tests that plant regions and fill TODOs).
OWN_FILES = {"tools/student_kit.py", "tools/test_student_kit.py", "tools/test_grade.py", "tools/test_cohort.py"}
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


@unittest.skipIf(IN_A_KIT, "this is a student kit: its solution regions were taken out")
class Markers(unittest.TestCase):
    def test_markers_are_valid_and_every_gpu_chapter_has_regions(self):
        found = sk.scan(ROOT)  # raises on unbalanced or nested markers, or an empty hint
        # A chapter's steps may live in a few teaching headers (or lab/), not only kernels.cuh.
        for chapter in GPU_CHAPTERS:
            self.assertTrue([r for p, rs in found.items() if p.startswith(chapter + "/") for r in rs
                             if r.kind == sk.SOLUTION], f"{chapter} has no solution region")
        # The planted-bug kernels of 02-04 are near-copies of the solutions: instructor only.
        for chapter in GPU_CHAPTERS[:3]:
            test = f"{chapter}/test_{chapter}.cu"
            self.assertEqual([r.kind for r in found.get(test, [])], [sk.INSTRUCTOR] * 2, test)
        r = run([sys.executable, KIT_TOOL, "check"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("markers OK", r.stdout)
        self.assertIn("[instructor only]", r.stdout)

    def test_hints_are_one_short_line(self):
        for path, regions in sk.scan(ROOT).items():
            lines = read_bytes(os.path.join(ROOT, path)).decode("utf-8").splitlines()
            for r in regions:
                self.assertGreater(r.end, r.begin + 1, f"{path}:{r.begin + 1}: empty region")
                self.assertLessEqual(len(lines[r.begin]), 110, f"{path}:{r.begin + 1}: the marker line is too long")
                self.assertGreaterEqual(len(r.hint), 10, f"{path}:{r.begin + 1}: the hint says too little")

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
            with self.subTest(name), tempfile.TemporaryDirectory(prefix="wb-kit-") as tmp:
                with open(os.path.join(tmp, "kernels.cuh"), "w") as f:
                    f.write(text)
                r = run([sys.executable, KIT_TOOL, "check", tmp])
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn("kernels.cuh:", r.stderr)
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)

    def test_instructor_only_region_becomes_one_line_and_comes_back(self):
        text = ("int keep;\n// BEGIN INSTRUCTOR ONLY: planted bug\nint bug() { return 1; }\n"
                "// END INSTRUCTOR ONLY\n    // BEGIN SOLUTION: write it\n    int x = 2;\n    // END SOLUTION\n")
        kit, n = sk.strip_solutions(text, "t.cu")
        self.assertEqual(n, 2)
        self.assertEqual(kit, "int keep;\n// INSTRUCTOR ONLY (left out of the starter kit): planted bug\n"
                              "    // TODO(student): write it\n    // END TODO(student)\n")
        self.assertEqual(sk.put_solutions_back(kit, text, "t.cu"), text)
        # A placeholder of the wrong kind, or a lost one, is refused.
        with self.assertRaises(sk.KitError):
            sk.put_solutions_back(kit.replace("// INSTRUCTOR ONLY (left out of the starter kit): planted bug\n", ""),
                                  text, "t.cu")


class LeakScan(unittest.TestCase):
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

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-leak-")
        self.repo = os.path.join(self.tmp, "repo")
        os.makedirs(os.path.join(self.repo, "01_toy", "lab"))
        with open(os.path.join(self.repo, "01_toy", "toy.h"), "w") as f:
            f.write(self.SOURCE)
        with open(os.path.join(self.repo, "README.md"), "w") as f:
            f.write("# notes\n\nThe inner loop runs `while (end < n && text[end] == text[start]) ++end`.\n")
        self.kit = os.path.join(self.tmp, "kit")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def make(self):
        with redirect_stdout(StringIO()):
            return sk.cmd_make(self.kit, self.repo)

    def body(self):
        lines = self.SOURCE.splitlines(keepends=True)
        return "".join(lines[4:12])

    def test_a_clean_kit_passes_and_quoting_a_line_is_no_leak(self):
        self.make()  # the command line works on this workbook; the fixture is another one
        self.assertEqual(kl.find_leaks(self.kit, self.repo), [])
        r = run([sys.executable, KIT_TOOL, "leaks", self.kit, "--from", self.repo])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

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
            with self.subTest(rel):
                shutil.rmtree(self.kit, ignore_errors=True)
                self.make()
                os.makedirs(os.path.dirname(os.path.join(self.kit, rel)), exist_ok=True)
                with open(os.path.join(self.kit, rel), "a") as f:
                    f.write(text)
                leaks = kl.find_leaks(self.kit, self.repo)
                self.assertEqual([(x.kit_file, x.region_file) for x in leaks], [(rel, "01_toy/toy.h")])
                self.assertGreaterEqual(leaks[0].tokens, kl.LEAK_SHARE * leaks[0].total)
                r = run([sys.executable, KIT_TOOL, "leaks", self.kit, "--from", self.repo])
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                self.assertIn(f"{rel}: holds ", r.stdout)

    def test_make_refuses_to_call_a_leaking_kit_clean(self):
        with open(os.path.join(self.repo, "01_toy", "lab", "copy.h"), "w") as f:
            f.write("void copy() {\n" + self.body() + "}\n")
        with self.assertRaises(sk.KitError) as e:
            self.make()
        self.assertIn("01_toy/lab/copy.h: holds", str(e.exception))

    def test_no_git_history_and_no_untracked_files_in_the_kit(self):
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@t")
        for cmd in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-q", "-m", "fixture"]):
            self.assertEqual(run(cmd, cwd=self.repo, env=env).returncode, 0)
        with open(os.path.join(self.repo, "scratch.cu"), "w") as f:
            f.write("void scratch() {\n" + self.body() + "}\n")
        r = run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import student_kit as sk; "
                 "sys.exit(sk.cmd_make(sys.argv[2], sys.argv[3]))", TOOLS, self.kit, self.repo])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1 untracked file(s) left out of the kit", r.stderr)
        self.assertIn("scratch.cu", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.kit, "scratch.cu")))
        self.assertFalse(os.path.exists(os.path.join(self.kit, ".git")))
        self.assertEqual(sorted(os.listdir(self.kit)), ["01_toy", "README.md"])


@unittest.skipIf(IN_A_KIT, "this is a student kit: its solution regions were taken out")
class Kit(unittest.TestCase):
    """One kit of this workbook, made once with the real command line, for the content tests."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-kit-")
        cls.kit = os.path.join(cls.tmp, "kit")
        cls.result = run([sys.executable, KIT_TOOL, "make", cls.kit])
        cls.files = sk.repo_files(ROOT)
        cls.found = sk.scan(ROOT)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr + self.result.stdout)

    def kit_files(self, kit=None):
        kit = kit or self.kit
        out = []
        for here, dirs, names in os.walk(kit):
            out += [os.path.relpath(os.path.join(here, n), kit) for n in names + [d for d in dirs if d == ".git"]]
        return sorted(out)

    def test_kit_holds_the_workbook_files_and_nothing_else(self):
        self.assertEqual(self.kit_files(), sorted(self.files))
        for must in ("Makefile", "README.md", "common/gemm_harness.cu", "report_template/report.md",
                     "02_naive_kernel/README.md", "02_naive_kernel/test_02_naive_kernel.cu", "tools/run_tests.sh"):
            self.assertIn(must, self.files)
        # No build output and no git history came along, and the executables stay executable.
        self.assertFalse([p for p in self.files if p.endswith((".o", ".a")) or "/build/" in p or ".git" in p.split("/")])
        self.assertEqual(run(["git", "-C", self.kit, "rev-parse", "--show-toplevel"]).stdout.strip()
                         if shutil.which("git") else "", "")
        mode = os.stat(os.path.join(self.kit, "tools", "run_tests.sh")).st_mode
        self.assertEqual(mode & 0o111, os.stat(os.path.join(ROOT, "tools", "run_tests.sh")).st_mode & 0o111)

    def test_kit_differs_from_the_original_exactly_in_the_regions(self):
        for p in self.files:
            original = read_bytes(os.path.join(ROOT, p))
            kit = read_bytes(os.path.join(self.kit, p))
            if p in sk.INSTRUCTOR_ONLY:
                self.assertEqual(kit.decode("utf-8"), sk.GUIDE_STUBS[p], p)
                continue
            if p == sk.RUBRIC:  # the kit's rubric names its homework (here every chapter)
                self.assertEqual(kit.decode("utf-8"), sk.kit_rubric(ROOT, sk.chapters_of(ROOT)), p)
                continue
            if p not in self.found:
                self.assertEqual(kit, original, p)
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
            self.assertEqual(kit_lines, kept, p)

    def test_no_solution_code_leaks_into_the_kit(self):
        # The scan reads every file of the kit (tests, notes, lab/ folders, scripts) and compares
        # code tokens, not marker text; LeakScan shows that it catches planted copies.
        leaks = kl.find_leaks(self.kit, ROOT)
        self.assertEqual(leaks, [], "\n".join(kl.describe_leak(x) for x in leaks))
        # Nor the markers, nor the planted-bug kernels that tests hold for the instructor.
        for here, _, names in os.walk(self.kit):
            for n in names:
                rel = os.path.relpath(os.path.join(here, n), self.kit)
                if rel in OWN_FILES:
                    continue
                text = read_bytes(os.path.join(here, n)).decode("utf-8", "replace")
                for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN INSTRUCTOR ONLY", "END INSTRUCTOR ONLY"):
                    self.assertNotIn(marker, text, rel)
        for chapter, planted in (("02_naive_kernel", "sgemm_naive_off_by_one"),
                                 ("03_shared_tiling", "sgemm_tiled_with_bug"),
                                 ("04_register_unroll", "sgemm_2d_with_bug")):
            test = read_bytes(os.path.join(self.kit, chapter, f"test_{chapter}.cu")).decode("utf-8")
            self.assertNotIn(planted, test)
            self.assertIn(planted, read_bytes(os.path.join(ROOT, chapter, f"test_{chapter}.cu")).decode("utf-8"))

    def test_a_copied_chapter_09_solution_is_caught(self):
        # Chapter 09's regions are short (the wgmma issue sequence is a few calls): the scan must
        # still find each of them copied into another file of the kit, renamed or not.
        name = "09_hopper_wgmma/wgmma_pipeline.cuh"
        lines = read_bytes(os.path.join(ROOT, name)).decode("utf-8").splitlines(keepends=True)
        regions = [r for r in self.found[name] if r.kind == sk.SOLUTION]
        self.assertEqual(len(regions), 3)
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
            leaks = kl.find_leaks(self.kit, ROOT)
            self.assertEqual(sorted((x.kit_file, x.region_line) for x in leaks),
                             sorted((t, r.begin + 1) for r, t in zip(regions, targets)),
                             "\n".join(kl.describe_leak(x) for x in leaks))
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
                    self.assertTrue(os.path.exists(os.path.join(self.kit, rel)), f"{p} links to {target}")
        self.assertGreater(checked, 10)
        readme = read_bytes(os.path.join(self.kit, "README.md")).decode("utf-8")
        self.assertIn("docs/INSTRUCTORS.md", readme)
        self.assertIn("TODO(student)", read_bytes(os.path.join(self.kit, "docs", "INSTRUCTORS.md")).decode("utf-8"))

    def test_restore_gives_the_original_files_byte_for_byte(self):
        copy = os.path.join(self.tmp, "restored")
        shutil.copytree(self.kit, copy)
        r = run([sys.executable, KIT_TOOL, "restore", copy, "--from", ROOT])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.kit_files(copy), sorted(self.files))
        for p in self.files:  # the rubric too: restore puts the workbook's back
            self.assertEqual(read_bytes(os.path.join(copy, p)), read_bytes(os.path.join(ROOT, p)), p)

    def test_restore_replaces_what_a_student_wrote(self):
        copy = os.path.join(self.tmp, "filled")
        shutil.copytree(self.kit, copy)
        path = os.path.join(copy, "02_naive_kernel", "kernels.cuh")
        text = read_bytes(path).decode("utf-8")
        filled = re.sub(r"(// TODO\(student\):[^\n]*\n)", r"\1    int my_attempt = 42;  // student code\n", text)
        self.assertNotEqual(filled, text)
        with open(path, "wb") as f:
            f.write(filled.encode("utf-8"))
        r = run([sys.executable, KIT_TOOL, "restore", copy, "--from", ROOT])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(read_bytes(path), read_bytes(os.path.join(ROOT, "02_naive_kernel", "kernels.cuh")))

    def test_restore_refuses_a_kit_that_does_not_match(self):
        copy = os.path.join(self.tmp, "mismatch")
        shutil.copytree(self.kit, copy)
        path = os.path.join(copy, "03_shared_tiling", "kernels.cuh")
        before = read_bytes(path)
        with open(path, "wb") as f:
            f.write(before.replace(b"// TODO(student): ", b"// TODO(student): changed ", 1))
        untouched = read_bytes(os.path.join(copy, "02_naive_kernel", "kernels.cuh"))
        r = run([sys.executable, KIT_TOOL, "restore", copy, "--from", ROOT])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("03_shared_tiling/kernels.cuh", r.stderr)
        self.assertIn("hint", r.stderr)
        # Checked before anything is written: no file of the kit changed.
        self.assertEqual(read_bytes(os.path.join(copy, "02_naive_kernel", "kernels.cuh")), untouched)

    def test_making_a_kit_from_a_kit_is_refused(self):
        r = run([sys.executable, os.path.join(self.kit, "tools", "student_kit.py"), "make",
                 os.path.join(self.tmp, "kit-of-kit")])
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("no solution regions", r.stderr)


@unittest.skipIf(IN_A_KIT, "this is a student kit: its solution regions were taken out")
class Usage(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-kit-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assert_usage_error(self, args, *words):
        r = run([sys.executable, KIT_TOOL] + args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
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
        self.assertEqual(os.listdir(busy), ["homework.txt"])
        self.assertFalse(os.path.exists(os.path.join(ROOT, "kit")))

    def test_an_empty_folder_is_accepted(self):
        empty = os.path.join(self.tmp, "empty")
        os.makedirs(empty)
        r = run([sys.executable, KIT_TOOL, "make", empty])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(empty, "Makefile")))


class SkippedMeansUntested(unittest.TestCase):
    """An unfilled kit on a machine without a GPU skips every kernel test: tools/run_tests.sh must
    say so in words, not just "0 failed", and keep its summary as the last line."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-runtests-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def fake(self, name, counts):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(f'#!/bin/sh\necho "{name} {counts}" >> "$WB_TEST_SUMMARY"\n')
        os.chmod(path, 0o755)
        return path

    def summary(self, *bins):
        r = run(["bash", os.path.join(TOOLS, "run_tests.sh")] + list(bins))
        return r, r.stdout.rstrip("\n").splitlines()

    def test_gpu_skips_are_called_untested(self):
        # a C++ binary reports "P F S G": G of its S skips lacked a GPU; a tool's "P F S" has none
        r, lines = self.summary(self.fake("test_02_naive_kernel", "3 0 4 4"), self.fake("test_tool.py", "5 0 1"))
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertEqual(lines[-1], "tests: 8 passed, 0 failed, 5 skipped")
        warning = [ln for ln in lines if "SKIPPED" in ln]
        self.assertEqual(len(warning), 1, r.stdout)
        self.assertIn("4 GPU test case(s)", warning[0])
        self.assertIn("NOT tested", warning[0])
        self.assertIn("REQUIRE_GPU=1 make test", warning[0])
        self.assertIn("1 test case(s) were skipped for another reason", r.stdout)

    def test_other_skips_on_a_gpu_are_not_blamed_on_a_missing_gpu(self):
        # on a GPU machine without CUTLASS: 2 of chapter 07's cases skipped, none for lack of a GPU
        r, lines = self.summary(self.fake("test_07_cublas_baseline", "15 0 2 0"))
        self.assertEqual(lines[-1], "tests: 15 passed, 0 failed, 2 skipped")
        self.assertNotIn("SKIPPED", r.stdout)
        self.assertIn("2 test case(s) were skipped for another reason", r.stdout)

    def test_summary_lines_of_both_kinds_are_read(self):
        # KitBuilds reads a kit binary's counts on a GPU machine with summary_counts
        self.assertEqual(summary_counts("test_02_naive_kernel 3 2 1 0\n"), (3, 2, 1))
        self.assertEqual(summary_counts("test_tool.py 5 0 1"), (5, 0, 1))
        with self.assertRaises(ValueError):
            summary_counts("test_x 1 2")

    def test_no_warning_when_nothing_was_skipped(self):
        r, lines = self.summary(self.fake("test_02_naive_kernel", "7 0 0"), self.fake("test_tool.py", "5 0 0"))
        self.assertEqual(lines[-1], "tests: 12 passed, 0 failed, 0 skipped")
        self.assertNotIn("SKIPPED", r.stdout)
        self.assertNotIn("skipped;", r.stdout)


@unittest.skipIf(IN_A_KIT, "this is a student kit: its solution regions were taken out")
class KitBuilds(unittest.TestCase):
    """The slow one: chapters of a fresh kit build without a GPU (ARCH=sm_90), and their CPU tests pass."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-kit-build-")
        cls.kit = os.path.join(cls.tmp, "kit")
        cls.made = run([sys.executable, KIT_TOOL, "make", cls.kit])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_kit_chapters_build_and_fail_until_filled(self):
        if BUILD_CHAPTERS == ["none"]:
            self.skipTest("KIT_BUILD_CHAPTERS=none")
        nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not os.path.exists(nvcc) and shutil.which(nvcc) is None:
            self.skipTest("nvcc is not installed: the kit's build needs the CUDA toolkit")
        if not any(os.path.exists(os.path.join(d, "catch2")) for d in ("/usr/include", "/usr/local/include")) \
                and not os.environ.get("CATCH2_INC"):
            self.skipTest("Catch2 is not installed: the kit's test binaries need it")
        self.assertEqual(self.made.returncode, 0, self.made.stderr)
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
        self.assertEqual(r.returncode, 0, log[-4000:])
        print(f"\n  kit {' '.join(BUILD_CHAPTERS)}: built in {time.time() - t0:.0f} s with -j{BUILD_JOBS}", file=sys.stderr)
        self.assertNotIn("warning", log.lower(), log[-4000:])
        self.assertTrue(os.path.exists(os.path.join(common, "build", "libwb.a")))
        gpu = gpu_present()
        cc = gpu_compute_capability() if gpu else ""
        # A chapter this GPU cannot run: its program must say so (exit 3), its GPU tests skip.
        cannot_run = {c for c in chapters if c in NEEDS_CC and cc != NEEDS_CC[c]}
        for chapter in chapters:
            with self.subTest(chapter):
                folder = os.path.join(self.kit, chapter)
                r = run(["./test_" + chapter, "--list-tests"], cwd=folder, env=env, timeout=120)
                m = re.search(r"^(\d+) (?:matching )?test cases?$", r.stdout, re.M)
                self.assertIsNotNone(m, r.stdout + r.stderr)
                listed = int(m.group(1))
                self.assertGreater(listed, 3, r.stdout)
                # Catch2 v3 exits 0 after listing; Catch2 v2 exits with the number of tests listed.
                self.assertIn(r.returncode, (0, listed % 256), r.stdout + r.stderr)
                if chapter in GPU_CHAPTERS[:3]:  # their planted-bug test cases are instructor only
                    self.assertNotIn("the check catches planted", r.stdout)
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
                self.assertEqual((r.returncode, failed), (0, 0), r.stdout[-3000:] + r.stderr)
                self.assertGreater(passed, 0, line)
                self.assertGreater(int(line.split()[4]), 0, line)  # the no-GPU skips
                if gpu:
                    r = run(["./" + chapter, "--size", "67x45x33", "--warmup", "1", "--reps", "1"]
                            + RUN_OPTIONS.get(chapter, []), cwd=folder, env=env, timeout=300)
                    if chapter in cannot_run:
                        self.assertEqual(r.returncode, 3, r.stdout[-3000:] + r.stderr)
                        continue
                    self.assertEqual(r.returncode, 1, r.stdout[-3000:] + r.stderr)  # 1: a verification failed
                    self.assertIn("FAIL", r.stdout + r.stderr)
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
            with self.subTest(chapter + " tests"):
                try:
                    rc = proc.wait(timeout=600)
                finally:
                    out.close()
                    if proc.poll() is None:
                        proc.kill()
                with open(out.name) as f:
                    log = f.read()
                self.assertNotEqual(rc, 0, log[-3000:])
                with open(summary) as f:
                    passed, failed, skipped = summary_counts(f.read())
                self.assertGreater(failed, 0, (passed, failed, skipped))


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import wb_unittest
    return wb_unittest.run_module(__name__, "test_student_kit")


if __name__ == "__main__":
    sys.exit(main())
