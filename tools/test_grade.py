#!/usr/bin/env python3
"""test_grade.py - tests of the grader (tools/grade.sh, tools/grade.py), no GPU needed.

The fixture (tools/grade_fixture/) is a graded run built from real rows of results/h200/: chapter
04 did not build, chapter 03's tests report a failure, chapter 09 ran on the H200. The tests score
it with the real entry points in temporary folders, check the points against the rubric computed
here independently (chapter 09 on compute capability 9.0, and not gradable on another GPU), flag an
edited checker file against a manifest, and run grade.sh end to end on a stand-in tree (fake
nvidia-smi, stand-in programs, one chapter that does not build, chapter 09 on 9.0, on 8.6 and on an
unknown GPU) and without a GPU.

Run: tools/test_grade.py (stdlib unittest). Ends with
"[test_grade] test cases: P passed, F failed, S skipped" and, when WB_TEST_SUMMARY is set, appends
"test_grade P F S" to that file (tools/run_tests.sh adds them up). Exit status 1 on a failure.
"""
import csv
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
FIXTURE = os.path.join(TOOLS, "grade_fixture")
RUBRIC = os.path.join(ROOT, "report_template", "rubric.json")
GRADE_PY = os.path.join(TOOLS, "grade.py")
sys.path.insert(0, TOOLS)
import grade  # noqa: E402


def run(cmd, env_extra=None, cwd=ROOT, drop=("STUDENT_ID", "CUDA_VISIBLE_DEVICES", "GRADE_NO_GPU", "GRADE_DIR",
                                              "GRADE_SEED", "GRADE_RUBRIC", "GRADE_MANIFEST")):
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(env_extra or {})
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def load_rubric(path=RUBRIC):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def expected_tier(tiers, pct):
    """The points of the highest tier reached, computed the plain way."""
    reached = [t["points"] for t in tiers if pct >= t["min_pct_cublas"]]
    return max(reached) if reached else 0


def copy_fixture(folder):
    os.makedirs(folder, exist_ok=True)
    for name in ("bench.csv", "sweep.csv", "results.tsv"):
        shutil.copy(os.path.join(FIXTURE, name), folder)
    return folder


def score(folder, *extra, env=None):
    return run(["python3", GRADE_PY, "score", folder, *extra], env)


def chapter_rows(folder):
    return {r["chapter"]: r for r in read_rows(os.path.join(folder, "grade.csv")) if r["kind"] == "chapter"}


class FixtureScore(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-grade-")
        cls.dir = copy_fixture(os.path.join(cls.tmp, "grade"))
        cls.result = score(cls.dir, env={"STUDENT_ID": "S7654321"})
        cls.rows = read_rows(os.path.join(cls.dir, "grade.csv")) if cls.result.returncode == 0 else []
        cls.md = ""
        if cls.result.returncode == 0:
            with open(os.path.join(cls.dir, "grade.md"), encoding="utf-8") as f:
                cls.md = f.read()
        cls.rubric = load_rubric()
        cls.bench = read_rows(os.path.join(FIXTURE, "bench.csv"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.result.returncode, 0, self.result.stderr + self.result.stdout)

    def chapter(self, name):
        return next(r for r in self.rows if r["kind"] == "chapter" and r["chapter"] == name)

    def test_passing_chapters_get_the_tier_of_their_best_variant(self):
        for name in ("02_naive_kernel", "05_float4_vectorized", "06_tensor_core_wmma"):
            rules = self.rubric["chapters"][name]
            want = rules["tests"] + rules["correctness"] + rules["sanitizer"]
            for perf in rules["performance"]:
                pcts = [float(r["pct_cublas"]) for r in self.bench if r["chapter"] == name and r["dtype"] == perf["dtype"]
                        and r["status"] == "PASS" and r["variant"] not in grade.BASELINES]
                want += expected_tier(perf["tiers"], max(pcts))
            row = self.chapter(name)
            self.assertEqual(int(row["points"]), want, name)
            self.assertEqual(int(row["max_points"]), want, name)  # the reference ladder earns full marks
        self.assertIn("| 02_naive_kernel | ok | 4 passed, 0 failed, 0 skipped | PASS | ok | coalesced_32x32 (fp32) | 12.0% | 9 / 9 |",
                      self.md)
        counted = {(r["chapter"], r["variant"]) for r in self.rows if r["kind"] == "variant" and r["note"] == "counted"}
        self.assertIn(("05_float4_vectorized", "best"), counted)
        self.assertIn(("06_tensor_core_wmma", "wmma_best"), counted)
        self.assertIn(("06_tensor_core_wmma", "tf32_best"), counted)

    def test_failed_tests_gate_performance(self):
        row = self.chapter("03_shared_tiling")
        rules = self.rubric["chapters"]["03_shared_tiling"]
        self.assertEqual(int(row["points"]), rules["correctness"] + rules["sanitizer"])  # no tests, no tiers
        self.assertIn("correctness gates performance", row["note"])
        for r in self.rows:
            if r["kind"] == "variant" and r["chapter"] == "03_shared_tiling":
                self.assertEqual(r["points"], "0", r["variant"])

    def test_chapter_that_did_not_build_scores_zero(self):
        row = self.chapter("04_register_unroll")
        self.assertEqual(row["points"], "0")
        self.assertEqual(row["build"], "FAIL")
        self.assertIn("did not build", row["note"])
        self.assertIn("| 04_register_unroll | FAIL | - | - | - | - | - | 0 / 9 | did not build |", self.md)

    def test_totals_and_report_sections(self):
        total = next(r for r in self.rows if r["kind"] == "total" and r["chapter"] == "automatic")
        chapters = [r for r in self.rows if r["kind"] == "chapter"]
        self.assertEqual(int(total["points"]), sum(int(r["points"]) for r in chapters))
        self.assertEqual(int(total["points"]), 35)  # 00, 01 and 07 carry no points by default
        self.assertEqual(int(total["max_points"]), 49)
        self.assertIn("- automatic: **35 / 49**", self.md)
        for sec in self.rubric["report"]:
            self.assertIn(f"| {sec['section']} | __ / {sec['points']} |", self.md)
        report = [r for r in self.rows if r["kind"] == "report"]
        self.assertEqual(len(report), len(self.rubric["report"]))
        self.assertTrue(all(r["points"] == "" and "by hand" in r["note"] for r in report))

    def test_provenance_on_every_row(self):
        for r in self.rows:
            self.assertEqual(r["student"], "S7654321")
            self.assertEqual(r["git"], "fixture0000000000000000000000000000000001")
            self.assertEqual((r["gpu"], r["cc"], r["driver"], r["runtime"]), ("NVIDIA H200", "9.0", "13.0", "13.0"))
            self.assertEqual(r["timestamp"], "2026-11-29T18:00:00Z")
            self.assertEqual(r["seed"], "20261129")
            self.assertRegex(r["harness_sha256"], "^[0-9a-f]{64}$")
            self.assertIn("no reference manifest", r["checker"])
        for text in ("| STUDENT_ID | S7654321 |", "| GPU | NVIDIA H200 (cc 9.0) |", "| sweep seed | 20261129 |",
                     "| CUDA runtime | 13.0 |", "| graded run started | 2026-11-29T18:00:00Z |"):
            self.assertIn(text, self.md)

    def test_variant_rows_carry_worst_error_and_pct(self):
        row = next(r for r in self.rows if r["kind"] == "variant" and r["variant"] == "wmma_best")
        self.assertEqual(row["correctness"], "PASS")
        self.assertEqual(row["pct_cublas"], "48.44")  # the bench row, as written
        errs = [float(r["rel_err"]) for r in read_rows(os.path.join(FIXTURE, "sweep.csv")) + self.bench
                if r["variant"] == "wmma_best"]
        self.assertEqual(row["worst_rel_err"], f"{max(errs):.3e}")
        self.assertFalse(any(r["variant"] in grade.BASELINES for r in self.rows if r["kind"] == "variant"))


class RubricAndGates(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-grade-")
        self.dir = copy_fixture(os.path.join(self.tmp, "grade"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def edit_rows(self, name, edit):
        """Rewrites the graded run's `name` (sweep.csv, bench.csv): `edit(row)` changes a row in
        place and returns True when it did. Returns how many rows it changed."""
        path = os.path.join(self.dir, name)
        rows = read_rows(path)
        hits = sum(bool(edit(r)) for r in rows)
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        return hits

    def fail_variant(self, chapter, variant):
        def edit(r):
            if r["chapter"] == chapter and r["variant"] == variant and r["M"] == "1000":
                r["status"], r["rel_err"] = "FAIL", "3.1e-01"
                return True
        self.assertTrue(self.edit_rows("sweep.csv", edit))

    def test_a_failing_variant_on_a_random_shape_gates_the_chapter(self):
        self.fail_variant("05_float4_vectorized", "best")
        r = score(self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = chapter_rows(self.dir)["05_float4_vectorized"]
        rules = load_rubric()["chapters"]["05_float4_vectorized"]
        self.assertEqual(int(row["points"]), rules["tests"] + rules["sanitizer"])
        self.assertIn("FAIL (best)", row["correctness"])
        with open(os.path.join(self.dir, "grade.md"), encoding="utf-8") as f:
            self.assertIn("| 05_float4_vectorized | `best` | fp32 | FAIL | 3.10e-01 |", f.read())

    def skip_variant(self, chapter, dtype, status="skipped (needs sm_80)"):
        """Every row of `chapter`'s `dtype` variants, as on a GPU too old for them."""
        def edit(r):
            if r["chapter"] == chapter and r["dtype"] == dtype and r["variant"] not in grade.BASELINES:
                r["status"], r["rel_err"], r["pct_cublas"], r["gflops"] = status, "", "", ""
                return True
        for name in ("sweep.csv", "bench.csv"):
            self.assertTrue(self.edit_rows(name, edit), name)

    def test_variants_the_gpu_cannot_run_are_not_failures(self):
        # On a GPU before Ampere, 06's TF32 rows say "skipped (needs sm_80)": the FP16 rows still
        # decide the sweep, and the TF32 variants are "not run on this GPU", at 0 points.
        self.skip_variant("06_tensor_core_wmma", "tf32")
        r = score(self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = chapter_rows(self.dir)["06_tensor_core_wmma"]
        rules = load_rubric()["chapters"]["06_tensor_core_wmma"]
        self.assertTrue(row["correctness"].startswith("PASS (not run on this GPU: "), row["correctness"])
        self.assertIn("tf32_best", row["correctness"])
        self.assertGreaterEqual(int(row["points"]), rules["tests"] + rules["correctness"] + rules["sanitizer"])
        variants = [v for v in read_rows(os.path.join(self.dir, "grade.csv"))
                    if v["kind"] == "variant" and v["chapter"] == "06_tensor_core_wmma" and v["dtype"] == "tf32"]
        self.assertTrue(variants)
        for v in variants:
            self.assertEqual(v["correctness"], "not run on this GPU (needs sm_80)", v["variant"])
            self.assertEqual(v["points"], "0", v["variant"])
        # A failing FP16 variant still fails the sweep beside the skipped ones.
        self.fail_variant("06_tensor_core_wmma", "wmma_best")
        self.assertEqual(score(self.dir).returncode, 0)
        self.assertIn("FAIL (wmma_best)", chapter_rows(self.dir)["06_tensor_core_wmma"]["correctness"])

    def test_without_the_gate_the_best_correct_variant_counts(self):
        self.fail_variant("05_float4_vectorized", "best")
        rubric = load_rubric()
        rubric["correctness_gates_performance"] = False
        path = os.path.join(self.tmp, "rubric.json")
        with open(path, "w") as f:
            json.dump(rubric, f)
        r = score(self.dir, "--rubric", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = chapter_rows(self.dir)
        rules = rubric["chapters"]["05_float4_vectorized"]
        # "best" failed a shape, so warptile_db_regs (91.50%) is the best variant that counts
        want = rules["tests"] + rules["sanitizer"] + expected_tier(rules["performance"][0]["tiers"], 91.50)
        self.assertEqual(int(rows["05_float4_vectorized"]["points"]), want)
        self.assertEqual(rows["05_float4_vectorized"]["pct_cublas"], "91.50")
        # 03 (failed tests) now gets its tier too: 35.71% of cuBLAS
        r03 = rubric["chapters"]["03_shared_tiling"]
        self.assertEqual(int(rows["03_shared_tiling"]["points"]),
                         r03["correctness"] + r03["sanitizer"] + expected_tier(r03["performance"][0]["tiers"], 35.71))

    def test_the_instructor_edits_the_tiers(self):
        rubric = load_rubric()
        rubric["chapters"]["02_naive_kernel"]["performance"][0]["tiers"] = [
            {"min_pct_cublas": 12.5, "points": 5}, {"min_pct_cublas": 5, "points": 1}]
        rubric["chapters"]["02_naive_kernel"]["tests"] = 7
        path = os.path.join(self.tmp, "rubric.json")
        with open(path, "w") as f:
            json.dump(rubric, f)
        r = score(self.dir, "--rubric", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = chapter_rows(self.dir)["02_naive_kernel"]
        self.assertEqual(int(row["points"]), 7 + 3 + 1 + 1)  # 12.02% reaches only the 5% tier
        self.assertEqual(int(row["max_points"]), 7 + 3 + 1 + 5)

    def test_failed_or_missing_sanitizer_costs_its_points(self):
        path = os.path.join(self.dir, "results.tsv")
        with open(path) as f:
            text = f.read()
        text = text.replace("sanitize\t02_naive_kernel\tok\t0", "sanitize\t02_naive_kernel\tfail\t9")
        text = text.replace("sanitize\t05_float4_vectorized\tok\t0", "sanitize\t05_float4_vectorized\tskipped\t-")
        with open(path, "w") as f:
            f.write(text)
        self.assertEqual(score(self.dir).returncode, 0)
        rows = chapter_rows(self.dir)
        self.assertEqual(int(rows["02_naive_kernel"]["points"]), 8)  # tiers still count: only correctness gates
        self.assertIn("sanitizer failed", rows["02_naive_kernel"]["note"])
        self.assertEqual(int(rows["05_float4_vectorized"]["points"]), 9)  # 10 less the sanitizer's point
        self.assertIn("sanitizer not available", rows["05_float4_vectorized"]["note"])


class HopperChapter(unittest.TestCase):
    """Chapter 09 in the fixture was graded on an H200; the other GPU's case is the same run as
    grade.sh leaves it there: a `gradable ... no 9.0` record, no sanitizer, sweep or bench."""

    RULES = {"tests": 2, "correctness": 3, "sanitizer": 1, "performance": [
        {"dtype": "fp16", "tiers": [{"min_pct_cublas": 60, "points": 1}, {"min_pct_cublas": 95, "points": 3}]},
        {"dtype": "bf16", "tiers": [{"min_pct_cublas": 60, "points": 1}, {"min_pct_cublas": 99, "points": 2}]},
        {"dtype": "tf32", "tiers": [{"min_pct_cublas": 85, "points": 1}]}]}

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-grade-")
        self.dir = copy_fixture(os.path.join(self.tmp, "grade"))
        rubric = load_rubric()
        rubric["chapters"]["09_hopper_wgmma"] = self.RULES  # the instructor assigns chapter 09
        self.rubric = os.path.join(self.tmp, "rubric.json")
        with open(self.rubric, "w") as f:
            json.dump(rubric, f)
        self.max09 = 2 + 3 + 1 + 3 + 2 + 1

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def md(self):
        with open(os.path.join(self.dir, "grade.md"), encoding="utf-8") as f:
            return f.read()

    def test_on_hopper_chapter_09_is_graded_like_the_others(self):
        r = score(self.dir, "--rubric", self.rubric)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = chapter_rows(self.dir)["09_hopper_wgmma"]
        bench = [b for b in read_rows(os.path.join(FIXTURE, "bench.csv")) if b["chapter"] == "09_hopper_wgmma"]
        want = 2 + 3 + 1
        for perf in self.RULES["performance"]:
            pcts = [float(b["pct_cublas"]) for b in bench if b["dtype"] == perf["dtype"] and b["status"] == "PASS"
                    and b["variant"] not in ("cublas_hgemm", "cublas_bgemm", "cublas_tf32")]
            want += expected_tier(perf["tiers"], max(pcts))
        self.assertEqual(int(row["points"]), want)
        self.assertEqual(int(row["max_points"]), self.max09)
        self.assertEqual(row["correctness"], "PASS")
        self.assertEqual(row["note"], "")
        variants = [v for v in read_rows(os.path.join(self.dir, "grade.csv"))
                    if v["kind"] == "variant" and v["chapter"] == "09_hopper_wgmma"]
        counted = {(v["variant"], v["dtype"]) for v in variants if v["note"] == "counted"}
        self.assertEqual(counted, {("persistent", "fp16"), ("persistent", "bf16"), ("tf32_persistent", "tf32")})
        self.assertFalse([v for v in variants if v["variant"].startswith("cublas_")])  # cuBLAS BF16 too is a baseline
        total = next(t for t in read_rows(os.path.join(self.dir, "grade.csv")) if t["kind"] == "total"
                     and t["chapter"] == "automatic")
        self.assertEqual(int(total["max_points"]), 49 + self.max09)
        # With the default rubric chapter 09 is listed and graded, for no points (as 08).
        r = score(self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        row = chapter_rows(self.dir)["09_hopper_wgmma"]
        self.assertEqual((row["points"], row["max_points"], row["correctness"]), ("0", "0", "PASS"))
        self.assertIn("| 09_hopper_wgmma | ok | 8 passed, 0 failed, 0 skipped | PASS | ok |", self.md())

    def test_one_name_in_two_precisions_is_two_variants(self):
        # persistent fails its BF16 sweep row: its FP16 twin keeps its own verdict.
        path = os.path.join(self.dir, "sweep.csv")
        rows = read_rows(path)
        for r in rows:
            if r["chapter"] == "09_hopper_wgmma" and r["variant"] == "persistent" and r["dtype"] == "bf16":
                r["status"], r["rel_err"] = "FAIL", "2.0e-01"
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        self.assertEqual(score(self.dir, "--rubric", self.rubric).returncode, 0)
        row = chapter_rows(self.dir)["09_hopper_wgmma"]
        self.assertEqual(row["correctness"], "FAIL (persistent bf16)")
        self.assertEqual(int(row["points"]), 2 + 1)  # tests and sanitizer; the sweep gates the tiers
        variants = {(v["variant"], v["dtype"]): v for v in read_rows(os.path.join(self.dir, "grade.csv"))
                    if v["kind"] == "variant" and v["chapter"] == "09_hopper_wgmma"}
        self.assertEqual(variants[("persistent", "bf16")]["correctness"], "FAIL")
        self.assertEqual(variants[("persistent", "bf16")]["worst_rel_err"], "2.000e-01")
        self.assertEqual(variants[("persistent", "fp16")]["correctness"], "PASS")
        self.assertIn("| 09_hopper_wgmma | `persistent` | bf16 | FAIL | 2.00e-01 |", self.md())

    def test_on_another_gpu_chapter_09_is_not_gradable_and_costs_nothing(self):
        path = os.path.join(self.dir, "results.tsv")
        with open(path) as f:
            kept = [line for line in f if not (line.split("\t")[0] in ("sanitize", "sweep", "bench")
                                               and line.split("\t")[1] == "09_hopper_wgmma")]
        with open(path, "w") as f:
            f.writelines(kept + ["gradable\t09_hopper_wgmma\tno\t9.0\n"])
        for name in ("bench.csv", "sweep.csv"):
            rows = [r for r in read_rows(os.path.join(self.dir, name)) if r["chapter"] != "09_hopper_wgmma"]
            with open(os.path.join(self.dir, name), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
                w.writeheader()
                w.writerows(rows)
        for rubric in (self.rubric, RUBRIC):  # assigned or not, it costs nothing here
            r = score(self.dir, "--rubric", rubric)
            self.assertEqual(r.returncode, 0, r.stderr)
            row = chapter_rows(self.dir)["09_hopper_wgmma"]
            self.assertEqual((row["points"], row["max_points"]), ("0", "0"))
            self.assertEqual(row["note"], "not gradable on this GPU (needs compute capability 9.0)")
            self.assertIn("| 09_hopper_wgmma | ok | 8 passed, 0 failed, 0 skipped | - | - | - | - | 0 / 0 | "
                          "not gradable on this GPU (needs compute capability 9.0) |", self.md())
            total = next(t for t in read_rows(os.path.join(self.dir, "grade.csv")) if t["kind"] == "total"
                         and t["chapter"] == "automatic")
            self.assertEqual((int(total["points"]), int(total["max_points"])), (35, 49))  # as without 09
            self.assertIn("- automatic: **35 / 49**", self.md())


class Checksums(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-grade-")
        self.tree = os.path.join(self.tmp, "tree")
        for rel, text in (("common/numerics.cpp", "bool check() { return true; }\n"),
                          ("common/tests/test_common.cu", "// tests\n"),
                          ("02_naive_kernel/test_02_naive_kernel.cu", "// tests of 02\n"),
                          ("02_naive_kernel/kernels.cuh", "// the student's kernels\n"),
                          ("tools/run_tests.sh", "#!/bin/sh\n")):
            os.makedirs(os.path.dirname(os.path.join(self.tree, rel)), exist_ok=True)
            with open(os.path.join(self.tree, rel), "w") as f:
                f.write(text)
        r = run(["python3", GRADE_PY, "manifest", "--root", self.tree])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.manifest = os.path.join(self.tmp, "manifest.json")
        with open(self.manifest, "w") as f:
            f.write(r.stdout)
        self.dir = copy_fixture(os.path.join(self.tmp, "grade"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_manifest_lists_the_checker_files_not_the_kernels(self):
        with open(self.manifest) as f:
            files = json.load(f)["files"]
        self.assertEqual(sorted(files), ["02_naive_kernel/test_02_naive_kernel.cu", "common/numerics.cpp",
                                         "common/tests/test_common.cu", "tools/run_tests.sh"])

    def test_an_untouched_tree_matches(self):
        with open(os.path.join(self.tree, "02_naive_kernel", "kernels.cuh"), "a") as f:
            f.write("// the student's work changes, as it should\n")
        r = score(self.dir, "--manifest", self.manifest, "--root", self.tree)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "grade.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("Every harness and test file matches the reference manifest.", md)
        self.assertNotIn("WARNING", md)

    def test_an_edited_checker_is_flagged(self):
        with open(os.path.join(self.tree, "common", "numerics.cpp"), "w") as f:
            f.write("bool check() { return true; /* always */ }\n")
        os.remove(os.path.join(self.tree, "common", "tests", "test_common.cu"))
        r = score(self.dir, "--manifest", self.manifest, "--root", self.tree)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "grade.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("WARNING: 2 checker file(s) differ", md)
        self.assertIn("| `common/numerics.cpp` | MODIFIED |", md)
        self.assertIn("| `common/tests/test_common.cu` | MISSING |", md)
        rows = read_rows(os.path.join(self.dir, "grade.csv"))
        self.assertTrue(all(r["checker"] == "MODIFIED (2 file(s))" for r in rows))

    def test_checksums_taken_at_the_run_win_over_the_tree(self):
        with open(self.manifest) as f:
            taken = json.load(f)
        taken["files"]["common/numerics.cpp"] = "0" * 64
        with open(os.path.join(self.dir, "checksums.json"), "w") as f:
            json.dump(taken, f)
        r = score(self.dir, "--manifest", self.manifest, "--root", self.tree)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "grade.md"), encoding="utf-8") as f:
            md = f.read()
        self.assertIn("| `common/numerics.cpp` | MODIFIED |", md)
        self.assertIn("taken at the graded run", md)


class Shapes(unittest.TestCase):
    def test_shapes_are_random_odd_and_repeatable(self):
        seen = set()
        for seed in range(200):
            shapes, small = grade.sweep_shapes(seed)
            self.assertEqual(len(shapes), 4)
            self.assertEqual(len(small), 2)
            self.assertTrue(all(s in shapes for s in small))
            for s in shapes:
                self.assertTrue(all(1 <= d <= 1500 for d in s), s)
            self.assertTrue(any(s[2] % 4 for s in shapes))
            self.assertTrue(any(all(d % 16 for d in s) for s in shapes))
            self.assertTrue(any(max(s) <= 40 for s in shapes))
            self.assertEqual(grade.sweep_shapes(seed), (shapes, small))
            seen.add(tuple(shapes))
        self.assertGreater(len(seen), 190)
        r = run(["python3", GRADE_PY, "shapes", "42"])
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.splitlines()[0], ",".join(map(grade.shape_text, grade.sweep_shapes(42)[0])))


class Usage(unittest.TestCase):
    def test_bad_usage_exits_2_with_one_line(self):
        tmp = tempfile.mkdtemp(prefix="wb-grade-")
        try:
            bad_rubric = os.path.join(tmp, "rubric.json")
            with open(bad_rubric, "w") as f:
                f.write("{ not json")
            # A folder named like an output file blocks it, for root as much as for anyone.
            blocked = copy_fixture(os.path.join(tmp, "blocked"))
            os.makedirs(os.path.join(blocked, "grade.csv"))
            for cmd in (["python3", GRADE_PY], ["python3", GRADE_PY, "frobnicate"],
                        ["python3", GRADE_PY, "score"], ["python3", GRADE_PY, "score", os.path.join(tmp, "none")],
                        ["python3", GRADE_PY, "score", tmp],  # a folder without results.tsv
                        ["python3", GRADE_PY, "score", copy_fixture(os.path.join(tmp, "g")), "--rubric", bad_rubric],
                        ["python3", GRADE_PY, "score", os.path.join(tmp, "g"), "--bogus", "1"],
                        ["python3", GRADE_PY, "shapes", "x"],
                        ["python3", GRADE_PY, "score", blocked],  # grade.csv cannot be written
                        ["bash", os.path.join(TOOLS, "grade.sh"), "--bogus"],
                        ["bash", os.path.join(TOOLS, "grade.sh"), "--seed", "abc"],
                        ["bash", os.path.join(TOOLS, "grade.sh"), "--rubric", os.path.join(tmp, "none.json")]):
                r = run(cmd)
                self.assertEqual(r.returncode, 2, (cmd, r.stdout, r.stderr))
                self.assertEqual(len(r.stderr.strip().splitlines()), 1, (cmd, r.stderr))
                self.assertNotIn("Traceback", r.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class OutputChecks(unittest.TestCase):
    """A results folder that cannot be written is bad input: one line, exit 2, before any work."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-grade-")
        self.file = os.path.join(self.tmp, "a_file")
        with open(self.file, "w") as f:
            f.write("not a folder\n")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_grade_sh_refuses_an_unwritable_folder_before_looking_for_a_gpu(self):
        # GRADE_NO_GPU=1 would end the run with status 3: status 2 shows the folder came first.
        for bad in (os.path.join(self.file, "grade"), self.file):
            r = run(["bash", os.path.join(TOOLS, "grade.sh")], {"GRADE_DIR": bad, "GRADE_NO_GPU": "1"})
            self.assertEqual(r.returncode, 2, (bad, r.stdout, r.stderr))
            self.assertEqual(r.stdout, "")
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn(bad, r.stderr)
        # A writable one that does not exist yet passes this check (and is not created by it).
        fresh = os.path.join(self.tmp, "new", "grade")
        r = run(["bash", os.path.join(TOOLS, "grade.sh")], {"GRADE_DIR": fresh, "GRADE_NO_GPU": "1"})
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "new")))

    def test_score_refuses_before_writing_anything(self):
        folder = copy_fixture(os.path.join(self.tmp, "g"))
        os.makedirs(os.path.join(folder, "grade.md"))
        r = score(folder)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("grade.md", r.stderr)
        self.assertFalse(os.path.exists(os.path.join(folder, "grade.csv")))


class ShapeGrammar(unittest.TestCase):
    """One grammar of sizes for the tools (tools/wb_shapes.py), the programs' own (common/shape.cpp)."""

    def test_the_programs_grammar(self):
        import wb_shapes
        self.assertEqual(wb_shapes.parse_shape("1024"), (1024, 1024, 1024))
        self.assertEqual(wb_shapes.parse_shape("1000x1013x777"), (1000, 1013, 777))
        self.assertEqual(wb_shapes.parse_shape("500000x4294x1"), (500000, 4294, 1))
        for bad in ("", "x", "8x", "8x8", "8x8x", "x8x8", "8x8x8x8", "+8", " 8", "8 ", "-8", "0", "8x0x8",
                    "1e3", "0x10", "500001", "65536", "8X8X8", "\uff18"):
            with self.assertRaises(ValueError, msg=repr(bad)) as cm:
                wb_shapes.parse_shape(bad)
            self.assertNotIn("\n", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            wb_shapes.parse_shape("-8")
        self.assertEqual(str(cm.exception), "sizes must be at least 1, got -8")  # the programs' words
        self.assertEqual(wb_shapes.parse_shapes("64,1000x1013x777"), [(64, 64, 64), (1000, 1013, 777)])
        self.assertEqual(wb_shapes.shape_label((64, 64, 64)), "64")
        self.assertEqual(wb_shapes.shape_label((4096, 4096, 1024)), "4096x4096x1024")
        # Every sweep shape the grader draws reads back as itself.
        for seed in range(50):
            for s in grade.sweep_shapes(seed)[0]:
                self.assertEqual(wb_shapes.parse_shape(grade.shape_text(s)), s)

    def test_grade_and_report_use_it(self):
        tmp = tempfile.mkdtemp(prefix="wb-grade-")
        try:
            rubric = os.path.join(tmp, "rubric.json")
            with open(rubric, "w") as f:
                json.dump({"chapters": {}, "bench_shape": "+4096"}, f)
            r = run(["python3", GRADE_PY, "bench-shape", "--rubric", rubric])
            self.assertEqual(r.returncode, 2)
            self.assertIn("'+4096' is not a whole number", r.stderr)
            r = run(["python3", os.path.join(TOOLS, "report.py")],
                    {"REPORT_SHAPE": "4096x", "REPORT_OUT": os.path.join(tmp, "report")})
            self.assertEqual(r.returncode, 2)
            self.assertIn("'4096x' is not a size", r.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def write_exe(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


class GradeScript(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="wb-grade-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_without_a_gpu_exit_3_with_one_line(self):
        out = os.path.join(self.tmp, "grade")
        bare = os.path.join(self.tmp, "bin")  # a PATH with the basic tools but no nvidia-smi
        os.makedirs(bare)
        for tool in ("python3", "dirname", "sed", "grep", "mkdir", "date", "git", "od", "tr"):
            found = shutil.which(tool)
            if found:
                os.symlink(found, os.path.join(bare, tool))
        fake = os.path.join(self.tmp, "fakebin")
        write_exe(os.path.join(fake, "nvidia-smi"), "#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-0)'\n")
        bash = shutil.which("bash")
        for env in ({"PATH": bare}, {"CUDA_VISIBLE_DEVICES": "-1", "PATH": fake + os.pathsep + os.environ["PATH"]},
                    {"CUDA_VISIBLE_DEVICES": "", "PATH": fake + os.pathsep + os.environ["PATH"]},
                    {"GRADE_NO_GPU": "1"}):
            r = run([bash, os.path.join(TOOLS, "grade.sh")], {**env, "GRADE_DIR": out})
            lines = (r.stdout + r.stderr).strip().splitlines()
            self.assertEqual(r.returncode, 3, (env, r.stdout, r.stderr))
            self.assertEqual(len(lines), 1, lines)
            self.assertRegex(lines[0], "^grade: no usable GPU .*nothing was graded$")
            self.assertFalse(os.path.exists(out))

    def stand_in_tree(self, chapters):
        """A workbook layout with stand-ins: fake nvidia-smi and compute-sanitizer, programs that write
        the fixture's rows of their chapter, chapter 03 that does not build. 00_env_check writes the
        compute capability FAKE_CC into env.json (nothing when unset); chapter 09's program exits 3
        unless FAKE_CC is 9.0, as the real one does on any other GPU. Returns (tree, calls file)."""
        work = os.path.join(self.tmp, "wb")
        shutil.rmtree(work, ignore_errors=True)
        for rel in ("tools/grade.sh", "tools/grade.py", "tools/wb_shapes.py", "tools/gpu_needs.sh", "report_template/rubric.json"):
            os.makedirs(os.path.dirname(os.path.join(work, rel)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, rel), os.path.join(work, rel))
        with open(os.path.join(work, "Makefile"), "w") as f:
            f.write("lib:\n\t@true\n")
        calls = os.path.join(self.tmp, "calls.txt")
        open(calls, "w").close()
        program = f'''#!/usr/bin/env python3
import csv, os, sys
args = sys.argv[1:]
chapter = os.path.basename(sys.argv[0])
cc = os.environ.get("FAKE_CC", "")
with open({calls!r}, "a") as f:
    f.write(chapter + " " + " ".join(args) + "\\n")
if "--json" in args:
    open(args[args.index("--json") + 1], "w").write('{{"gpus": [{{"cc": "%s"}}]}}' % cc if cc else "{{}}")
    sys.exit(0)
if chapter.startswith("09_") and cc != "9.0":
    print(chapter + ": error: this chapter needs a Hopper GPU (compute capability 9.0)", file=sys.stderr)
    sys.exit(3)
if "--csv" not in args:
    sys.exit(0)
out = args[args.index("--csv") + 1]
src = os.path.join({FIXTURE!r}, "bench.csv" if "--size" in args else "sweep.csv")
with open(src, newline="") as f:
    rows = [r for r in csv.DictReader(f) if r["chapter"] == chapter]
new = not os.path.exists(out) or os.path.getsize(out) == 0
with open(out, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["chapter"], lineterminator="\\n")
    if new:
        w.writeheader()
    w.writerows(rows)
'''
        test = '''#!/bin/sh
[ "$REQUIRE_GPU" = 1 ] || { echo "test_$1 1 1 0" >>"$WB_TEST_SUMMARY"; exit 1; }
echo "[test] test cases: 3 passed, 0 failed, 0 skipped"
echo "test_x 3 0 0" >>"$WB_TEST_SUMMARY"
'''
        write_exe(os.path.join(work, "common", "build", "test_common"), test)
        for chapter in chapters:
            d = os.path.join(work, chapter)
            os.makedirs(d)
            write_exe(os.path.join(d, "prog.py"), program)
            write_exe(os.path.join(d, "test.sh"), test)
            broken = "\t@echo 'kernels.cuh:1: error: expected ;' >&2; exit 1\n" if chapter.startswith("03") else ""
            with open(os.path.join(d, "Makefile"), "w") as f:
                f.write(f"all:\n{broken}\t@cp prog.py {chapter} && cp test.sh test_{chapter}\n"
                        f"sanitize:\n\t$(SANITIZER) ./{chapter} --sizes 67x45x33\n")
        return work, calls

    def fake_path(self):
        fake = os.path.join(self.tmp, "fakebin")
        write_exe(os.path.join(fake, "nvidia-smi"), "#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-0)'\n")
        write_exe(os.path.join(fake, "compute-sanitizer"), '#!/bin/sh\nexec "$@"\n')
        return fake + os.pathsep + os.environ["PATH"]

    def test_end_to_end_on_a_stand_in_tree(self):
        """Stand-in programs that write the fixture's rows, chapter 03 that does not build: grade.sh
        grades what builds and marks the rest."""
        work, calls = self.stand_in_tree(("00_env_check", "02_naive_kernel", "03_shared_tiling"))
        env = {"PATH": self.fake_path(), "STUDENT_ID": "S0000042", "GRADE_SEED": "77"}
        r = run(["bash", "tools/grade.sh"], env, cwd=work)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        shapes, small = grade.sweep_shapes(77)
        self.assertIn("sweep seed 77", r.stdout)
        self.assertIn("build 03_shared_tiling FAILED", r.stdout)
        self.assertIn("tests 02_naive_kernel: 3 passed, 0 failed, 0 skipped (exit 0)", r.stdout)
        with open(calls) as f:
            made = f.read().splitlines()
        self.assertIn("02_naive_kernel --sizes " + ",".join(map(grade.shape_text, shapes)) +
                      " --seed 77 --warmup 1 --reps 2 --csv grade/sweep.csv", made)
        self.assertIn("02_naive_kernel --sizes " + ",".join(map(grade.shape_text, small)) +
                      " --alpha -1.5 --beta 0.5 --seed 77 --warmup 1 --reps 2 --csv grade/sweep.csv", made)
        self.assertIn("02_naive_kernel --size 4096x4096x4096 --csv grade/bench.csv", made)
        self.assertIn("02_naive_kernel --sizes 67x45x33", made)  # the sanitizer ran the program
        self.assertFalse(any(c.startswith("03_shared_tiling") for c in made))
        rows = chapter_rows(os.path.join(work, "grade"))
        self.assertEqual(rows["02_naive_kernel"]["points"], "9")
        self.assertEqual(rows["00_env_check"]["points"], "0")  # no solution regions: no points by default
        self.assertEqual(rows["00_env_check"]["tests"], "3 passed, 0 failed, 0 skipped")  # but still run
        self.assertEqual(rows["03_shared_tiling"]["points"], "0")
        self.assertIn("did not build", rows["03_shared_tiling"]["note"])
        self.assertIn("chapter folder missing", rows["05_float4_vectorized"]["note"])
        self.assertEqual(rows["02_naive_kernel"]["student"], "S0000042")
        self.assertEqual(rows["02_naive_kernel"]["seed"], "77")
        with open(os.path.join(work, "grade", "checksums.json")) as f:
            self.assertIn("tools/grade.py", json.load(f)["files"])
        with open(os.path.join(work, "grade", "grade.md"), encoding="utf-8") as f:
            self.assertIn("| STUDENT_ID | S0000042 |", f.read())

    def test_chapter_09_is_graded_on_hopper_only(self):
        """9.0: graded like any chapter. Another capability: not gradable, nothing of it run but its
        build and tests. Unknown capability: tried, and its exit status 3 marks it not gradable
        without ending the grading (for every other chapter, 3 means no usable GPU)."""
        for cc, known in (("9.0", True), ("8.6", True), ("", False)):
            with self.subTest(cc=cc or "unknown"):
                work, calls = self.stand_in_tree(("00_env_check", "02_naive_kernel", "09_hopper_wgmma"))
                env = {"PATH": self.fake_path(), "GRADE_SEED": "5"}
                if cc:
                    env["FAKE_CC"] = cc
                r = run(["bash", "tools/grade.sh"], env, cwd=work)
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                with open(calls) as f:
                    ran09 = [c for c in f.read().splitlines() if c.startswith("09_hopper_wgmma")]
                rows = chapter_rows(os.path.join(work, "grade"))
                with open(os.path.join(work, "grade", "grade.md"), encoding="utf-8") as f:
                    md = f.read()
                self.assertEqual(rows["02_naive_kernel"]["points"], "9")  # the others are graded either way
                self.assertIn("tests 09_hopper_wgmma: 3 passed", r.stdout)  # its tests run either way
                if cc == "9.0":
                    self.assertNotIn("not gradable", r.stdout)
                    self.assertIn("grade: sweep 09_hopper_wgmma: PASS", r.stdout)
                    self.assertIn("09_hopper_wgmma --size 4096x4096x4096 --csv grade/bench.csv", ran09)
                    self.assertEqual(rows["09_hopper_wgmma"]["correctness"], "PASS")
                    self.assertEqual(rows["09_hopper_wgmma"]["max_points"], "0")  # no points by default
                    continue
                line = "not gradable on this GPU (needs compute capability 9.0)"
                self.assertEqual(rows["09_hopper_wgmma"]["note"], line)
                self.assertEqual((rows["09_hopper_wgmma"]["points"], rows["09_hopper_wgmma"]["max_points"]), ("0", "0"))
                self.assertRegex(md, r"\| 09_hopper_wgmma \| ok \| 3 passed, 0 failed, 0 skipped \| - \| - \| - \| - \| "
                                     r"0 / 0 \| not gradable on this GPU \(needs compute capability 9\.0\) \|")
                if known:
                    self.assertIn("grade: 09_hopper_wgmma: not gradable on this GPU (needs compute capability 9.0; "
                                  "this GPU is 8.6)", r.stdout)
                    self.assertEqual(ran09, [])  # neither the sanitizer, nor the sweep, nor the benchmark
                else:
                    self.assertIn("grade: 09_hopper_wgmma: not gradable on this GPU (needs compute capability 9.0; "
                                  "its program exited 3)", r.stdout)
                    self.assertNotIn("no usable GPU", r.stdout + r.stderr)
                    self.assertFalse(any("--size 4096" in c for c in ran09))  # no benchmark after that


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import wb_unittest
    return wb_unittest.run_module(__name__, "test_grade")


if __name__ == "__main__":
    sys.exit(main())
