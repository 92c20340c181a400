#!/usr/bin/env python3
"""test_make_hints.py - the make targets a student types, from where the notes say to type them.

A mistyped chapter number gets one line that names the right target and exit status 2; the targets
the notes use from the top (make 03, make test-03, make check-env, make profile-02) also work inside
a chapter folder; profile and sanitize without their tool say which one is missing and how to get
it, before anything is built. No GPU and no compiler run: every build is only printed (make -n).

Run: tools/test_make_hints.py. Ends with "[test_make_hints] test cases: P passed, F failed,
S skipped" (tools/wb_unittest.py). Exit status 1 on a failure.
"""
import glob
import os
import re
import stat
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import wb_unittest  # noqa: E402

CHAPTERS = sorted(os.path.basename(p.rstrip("/")) for p in glob.glob(os.path.join(ROOT, "[0-9][0-9]_*/")))
NUMBERS = [c[:2] for c in CHAPTERS]


def chapter(number):
    return next(c for c in CHAPTERS if c.startswith(number + "_"))


def make(*args, cwd=ROOT, env_extra=None):
    """Runs make with a clean make environment (this test may itself run under make)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    env.update(env_extra or {})
    # ARCH is fixed so that no nvidia-smi runs and the printed commands are the same everywhere.
    return subprocess.run(["make", "--no-print-directory", "ARCH=sm_90", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def fake_tool(folder, name):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\necho fake \"$@\"\n")
    os.chmod(path, stat.S_IRWXU)
    return path


class BadChapterNumbers(unittest.TestCase):
    def assert_hint(self, result, number, meant):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")
        hint = [line for line in result.stderr.splitlines() if line.startswith("no chapter")]
        self.assertEqual(len(hint), 1, result.stderr)
        self.assertIn(f"no chapter '{number}': chapters are {' '.join(NUMBERS)}", hint[0])
        if meant:
            self.assertIn(f"did you mean `make {meant}`?", hint[0])
        else:
            self.assertNotIn("did you mean", hint[0])
            self.assertIn("`make help` lists the targets", hint[0])

    def test_one_digit_numbers_name_the_chapter_meant(self):
        for goal, number, meant in [("3", "3", "03"), ("run-3", "3", "run-03"), ("test-3", "3", "test-03"),
                                    ("profile-2", "2", "profile-02"), ("sanitize-4", "4", "sanitize-04"),
                                    ("tune-5", "5", "tune-05")]:
            with self.subTest(goal=goal):
                self.assert_hint(make(goal), number, meant)

    def test_numbers_of_no_chapter(self):
        # One digit d whose 0d is no chapter either (there is none once chapters 00-09 all exist).
        lone = [str(d) for d in range(10) if f"0{d}" not in NUMBERS][-1:]
        for goal, number in [("99", "99"), ("run-99", "99"), ("test-foo", "foo")] + [(d, d) for d in lone]:
            with self.subTest(goal=goal):
                self.assert_hint(make(goal), number, None)

    def test_inside_a_chapter_folder_too(self):
        result = make("3", cwd=os.path.join(ROOT, chapter("02")))
        self.assertEqual(result.returncode, 2)
        self.assertIn("did you mean `make 03`?", result.stderr)
        result = make("test-3", cwd=os.path.join(ROOT, chapter("02")))
        self.assertIn("did you mean `make test-03`?", result.stderr)


class RealTargetsStillWork(unittest.TestCase):
    def test_chapter_targets_recurse_into_the_chapter(self):
        ch = chapter("03")
        for goal, expected in [("03", f"-C {ch} {ch}"), ("run-03", f"-C {ch} run"),
                               ("test-03", f"-C {ch} test_{ch}"), ("profile-03", f"-C {ch} profile"),
                               ("sanitize-03", f"-C {ch} sanitize")]:
            with self.subTest(goal=goal):
                result = make("-n", goal)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(expected, result.stdout)
                self.assertNotIn("no chapter", result.stderr)

    def test_files_and_help_are_not_caught(self):
        result = make("README.md")
        self.assertEqual(result.returncode, 0, result.stderr)  # a file with no rule is up to date
        self.assertNotIn("no chapter", result.stderr)
        result = make("help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("make profile-NN", result.stdout)
        self.assertIn("NCU=", result.stdout)


class InsideAChapterFolder(unittest.TestCase):
    """The notes' top-level commands, typed after `cd NN_name`, are handed to the top."""

    def test_top_level_targets_are_forwarded(self):
        here = os.path.join(ROOT, chapter("02"))
        ch03, ch00 = chapter("03"), chapter("00")
        for goal, expected in [("03", f"-C {ch03} {ch03}"), ("test-03", f"-C {ch03} test_{ch03}"),
                               ("run-03", f"-C {ch03} run"), ("profile-02", "--clock-control none"),
                               ("sanitize-02", "--tool racecheck"), ("check-env", f"./{ch00}/{ch00}")]:
            with self.subTest(goal=goal):
                result = make("-n", goal, cwd=here)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(f"-C {ROOT} {goal}", result.stdout)
                self.assertIn(expected, result.stdout)

    def test_own_number_and_help(self):
        here = os.path.join(ROOT, chapter("02"))
        result = make("-n", "02", cwd=here)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn(f"-C {ROOT} 02", result.stdout)  # built here, not handed to the top
        result = make("help", cwd=here)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("make test-NN", result.stdout)
        self.assertIn("make check-env", result.stdout)


class MissingTools(unittest.TestCase):
    NCU_LINE = re.compile(r"^ncu \(Nsight Compute\) not found at /nonexistent: install it with the CUDA "
                          r"toolkit \(package cuda-nsight-compute-[0-9X]+-[0-9Y]+\) or set NCU=/path/to/ncu$")
    SANITIZER_LINE = re.compile(r"^compute-sanitizer not found at /nonexistent: install it with the CUDA "
                                r"toolkit \(package cuda-sanitizer-[0-9X]+-[0-9Y]+\) or set "
                                r"SANITIZER=/path/to/compute-sanitizer$")

    def assert_refused(self, result, pattern):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        first = result.stderr.splitlines()[0] if result.stderr else ""
        self.assertRegex(first, pattern)
        self.assertNotIn("nvcc", result.stdout)  # refused before anything was built
        self.assertNotIn("Error 127", result.stderr)

    def test_profile_without_ncu(self):
        here = os.path.join(ROOT, chapter("02"))
        self.assert_refused(make("profile", "NCU=/nonexistent", cwd=here), self.NCU_LINE)
        self.assert_refused(make("profile-02", "NCU=/nonexistent"), self.NCU_LINE)
        self.assert_refused(make("profile-02", "NCU=/nonexistent", cwd=here), self.NCU_LINE)

    def test_sanitize_without_compute_sanitizer(self):
        here = os.path.join(ROOT, chapter("03"))
        self.assert_refused(make("sanitize", "SANITIZER=/nonexistent", cwd=here), self.SANITIZER_LINE)
        self.assert_refused(make("sanitize-03", "SANITIZER=/nonexistent"), self.SANITIZER_LINE)
        self.assert_refused(make("sanitize", "SANITIZER=/nonexistent"), self.SANITIZER_LINE)

    def test_a_tool_is_found_on_the_path_or_where_named(self):
        with tempfile.TemporaryDirectory() as folder:
            ncu = fake_tool(folder, "ncu")
            sanitizer = fake_tool(folder, "compute-sanitizer")
            result = make("help", env_extra={"PATH": folder + os.pathsep + os.environ.get("PATH", "")})
            self.assertIn(f"Now: {ncu}, {sanitizer}", result.stdout)
            result = make("help", f"NCU={ncu}", "SANITIZER=/nonexistent")
            self.assertIn(f"Now: {ncu}, compute-sanitizer not found", result.stdout)
            # The command that runs is the tool found, with the chapter's metrics.
            result = make("-n", "profile", f"NCU={ncu}", cwd=os.path.join(ROOT, chapter("02")))
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(f"{ncu} --clock-control none --metrics ", result.stdout)

    def test_cpu_chapter_says_why(self):
        result = make("profile-01")
        self.assertEqual(result.returncode, 2)
        self.assertIn("runs on the CPU only", result.stderr)


if __name__ == "__main__":
    sys.exit(wb_unittest.run_module(__name__, "test_make_hints"))
