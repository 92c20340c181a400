#!/usr/bin/env python3
"""test_cohort.py - a class of planted students graded for real on the GPU (tools/grade.sh).

A kit of chapter 03 is made from this workbook (make student-kit HOMEWORK=03), and each student
fills it in one way: the solution; an off-by-one at the edge tile (K / TILE tiles); a missing
__syncthreads(); nothing; launchers pointed at cuBLAS; chapter 02's kernel in chapter 03's regions;
the solution with a gutted test file; a deleted variant; the solution with an edited
tools/grade.py. Each is graded by this workbook's grader, and gets the expected points and the
expected named reason. Last, the default homework (00 02 03 06) is made into a kit, the solution
put in, graded, and the report filled from the grade run: it holds exactly those chapters.

Needs a GPU: without one every case is skipped (REQUIRE_GPU=1 makes that a failure). The CPU part
of the same cohort is in tools/test_grade.py. About 5 minutes on an H200 with 16 cores.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import student_kit as sk  # noqa: E402
from test_grade import IN_A_KIT, fill_todos, read, solutions, write  # noqa: E402


def gpu_present():
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and "GPU " in r.stdout




@unittest.skipIf(IN_A_KIT, "this is a student kit: its solution regions were taken out")
@unittest.skipUnless(gpu_present() or os.environ.get("REQUIRE_GPU") == "1", "no GPU: the cohort is graded on one")
class Cohort(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not gpu_present():
            raise AssertionError("REQUIRE_GPU=1 but no GPU: the cohort was not graded")
        cls.tmp = tempfile.mkdtemp(prefix="wb-cohort-")
        cls.kit = os.path.join(cls.tmp, "kit")
        r = subprocess.run(["python3", "tools/student_kit.py", "make", cls.kit, "--homework", "03"], cwd=ROOT,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        cls.manifest = cls.kit + ".manifest.json"
        with open(os.path.join(ROOT, "report_template/rubric.json")) as f:
            rubric = json.load(f)
        rubric["bench_shape"] = "2048"  # the default rubric's tiers, at a size that times in milliseconds
        cls.rubric = os.path.join(cls.tmp, "rubric.json")
        write(cls.rubric, json.dumps(rubric))
        cls.good = solutions(ROOT, "03_shared_tiling/kernels.cuh")
        cls.grades = {}
        # The first student measures the reference (this workbook on this GPU); the rest run four at a time.
        students = cls.students()
        first = "correct"
        cls.grades[first] = cls.grade(first, *students.pop(first))
        with ThreadPoolExecutor(max_workers=4) as pool:
            for name, result in zip(students, pool.map(lambda kv: cls.grade(kv[0], *kv[1]), students.items())):
                cls.grades[name] = result

    @classmethod
    def tearDownClass(cls):
        if not os.environ.get("WB_KEEP_COHORT"):
            shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def students(cls):
        good = cls.good
        k_rounded_down = good[0].replace("wb::ceil_div(K, TILE)", "K / TILE")
        assert k_rounded_down != good[0]
        no_second_barrier = re.sub(r"(acc\[r\] \+= [^\n]*\n\s*}\n)\s*__syncthreads\(\);[^\n]*\n", r"\1", good[2], count=1)
        assert no_second_barrier != good[2]

        # Chapter 02's coalesced kernel, its block sides renamed to 03's TILE: right for the
        # one-element-per-thread kernels, short of rows for the multirow one.
        naive = solutions(ROOT, "02_naive_kernel/kernels.cuh")[1].replace("BX", "TILE").replace("BY", "TILE")

        def cublas_launchers(sub):
            p = os.path.join(sub, "03_shared_tiling/kernels.cuh")
            text = read(p)
            for launcher in re.findall(r"(launch_smem_\w+<[^>]*>),", text):
                text = text.replace(launcher + ",", "wb::cublas_sgemm,")
            write(p, text)

        def gutted_tests(sub):
            write(os.path.join(sub, "03_shared_tiling/test_03_shared_tiling.cu"),
                  '#include "testing.cuh"\nTEST_CASE("03: all good", "[03]") { CHECK(true); }\n')

        def delete_variants(sub):
            p = os.path.join(sub, "03_shared_tiling/kernels.cuh")
            text = read(p)
            start = text.index('    {"tiled_16", launch_smem_tiled<16>,')
            write(p, text[:start] + text[text.index('    {"transposed_b_32"'):])

        def edited_grader(sub):
            with open(os.path.join(sub, "tools/grade.py"), "a") as f:
                f.write("\nprint('grade: automatic points 9 / 9')\n")

        return {
            "correct": (good, None),
            "edge_off_by_one": ([k_rounded_down, good[1], good[2]], None),
            "missing_syncthreads": ([good[0], good[1], no_second_barrier], None),
            "empty": (["", "", ""], None),
            "cublas_launchers": (["", "", ""], cublas_launchers),
            "chapter02_kernel": ([naive, naive, naive], None),
            "gutted_tests": (good, gutted_tests),
            "deleted_variant": (["", good[1], good[2]], delete_variants),
            "edited_grader": (good, edited_grader),
        }

    @classmethod
    def grade(cls, name, bodies, edit):
        sub = os.path.join(cls.tmp, "students", name)
        shutil.copytree(cls.kit, sub)
        fill_todos(os.path.join(sub, "03_shared_tiling/kernels.cuh"), bodies)
        if edit:
            edit(sub)
        g = os.path.join(cls.tmp, "grades", name)
        env = dict(os.environ, GRADE_DIR=g, STUDENT_ID=name, GRADE_JOBS="4",
                   GRADE_REFERENCE=os.path.join(cls.tmp, "reference"))
        env.pop("GRADE_SEED", None)
        r = subprocess.run(["bash", "tools/grade.sh", "--submission", sub, "--manifest", cls.manifest,
                            "--rubric", cls.rubric], cwd=ROOT, env=env, capture_output=True, text=True)
        rows = []
        if os.path.exists(os.path.join(g, "grade.csv")):
            with open(os.path.join(g, "grade.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
        md = read(os.path.join(g, "grade.md")) if os.path.exists(os.path.join(g, "grade.md")) else ""
        return dict(rc=r.returncode, out=r.stdout + r.stderr, rows=rows, md=md, dir=g)

    def result(self, name):
        g = self.grades[name]
        self.assertEqual(g["rc"], 0, g["out"])
        chapter = next(r for r in g["rows"] if r["kind"] == "chapter")
        variants = {r["variant"]: r for r in g["rows"] if r["kind"] == "variant"}
        return float(chapter["points"]), variants, g

    def assert_full_marks(self, name):
        points, variants, g = self.result(name)
        self.assertEqual(len(variants), 6, g["md"])
        for v, row in variants.items():
            self.assertEqual((row["correctness"], row["idea"]), ("PASS", "ok"), (name, v, row["note"]))
            self.assertEqual(row["sanitizer"], "memcheck ok, racecheck ok", (name, v))
        # tests 2 + correctness 3 + sanitizer 1, and the performance tiers (3 at >= 90% of the
        # reference): the same code as the reference, timed again, lands within a few percent of it.
        self.assertGreaterEqual(points, 8.0, g["md"])
        return points, variants, g

    def test_correct(self):
        points, variants, g = self.assert_full_marks("correct")
        self.assertIn("None: outside its regions the submission is the kit", g["md"])
        self.assertTrue(os.path.exists(os.path.join(g["dir"], "reference.csv")))
        self.assertIn("sgemm_smem_tiled", variants["tiled_16"]["kernels"])

    def test_edge_off_by_one(self):
        points, variants, g = self.result("edge_off_by_one")
        for v in ("tiled_16", "tiled_32"):  # both run the kernel with the bug
            self.assertEqual(variants[v]["correctness"], "FAIL")
            self.assertIn("wrong result at", variants[v]["note"])
        for v in ("transposed_b_32", "tiled_32_4rows"):
            self.assertEqual(variants[v]["correctness"], "PASS")
        self.assertGreater(points, 3.0)  # partial credit, not all or nothing
        self.assertLess(points, 8.0)

    def test_missing_syncthreads(self):
        points, variants, g = self.result("missing_syncthreads")
        for v in ("tiled_32_2rows", "tiled_32_4rows"):
            self.assertIn("racecheck reported a shared-memory race", variants[v]["note"])
            self.assertEqual(variants[v]["correctness"], "FAIL")
            self.assertIn("racecheck FAIL", variants[v]["sanitizer"])
        self.assertIn("racecheck ok", variants["tiled_16"]["sanitizer"])
        self.assertLess(points, 8.0)

    def test_empty(self):
        points, variants, g = self.result("empty")
        self.assertEqual(points, 0.0, g["md"])
        self.assertTrue(all(v["correctness"] == "FAIL" for v in variants.values()))

    def test_cublas_launchers(self):
        points, variants, g = self.result("cublas_launchers")
        self.assertEqual(points, 0.0, g["md"])
        self.assertIn("| `03_shared_tiling/kernels.cuh` | MODIFIED | outside the TODO(student) regions", g["md"])
        self.assertTrue(all("cublas" not in v["kernels"].lower() for v in variants.values()))

    def test_chapter02_kernel(self):
        points, variants, g = self.result("chapter02_kernel")
        self.assertEqual(points, 0.0, g["md"])
        for v, row in variants.items():
            if "rows" not in v:
                self.assertEqual(row["correctness"], "PASS", v)  # right answers...
            self.assertIn("not the chapter's idea (tiles in shared memory)", row["note"])  # ...the wrong technique
            self.assertIn("no shared memory", row["note"])

    def test_gutted_tests(self):
        self.assert_full_marks("gutted_tests")
        self.assertIn("| `03_shared_tiling/test_03_shared_tiling.cu` | MODIFIED | not used", self.grades["gutted_tests"]["md"])

    def test_deleted_variant(self):
        points, variants, g = self.result("deleted_variant")
        self.assertIn("tiled_16", variants)  # graded from the kit's table all the same
        self.assertEqual(variants["tiled_16"]["correctness"], "FAIL")
        self.assertIn("| `03_shared_tiling/kernels.cuh` | MODIFIED |", g["md"])
        self.assertLess(points, 8.0)

    def test_edited_grader(self):
        self.assert_full_marks("edited_grader")
        self.assertIn("| `tools/grade.py` | MODIFIED | not used", self.grades["edited_grader"]["md"])


@unittest.skipIf(IN_A_KIT, "this is a student kit: its solution regions were taken out")
@unittest.skipUnless(gpu_present() or os.environ.get("REQUIRE_GPU") == "1", "no GPU: the homework is graded on one")
class DefaultHomework(unittest.TestCase):
    """The course's homework (00 02 03 06): kit, solution, grade, report of exactly those chapters."""

    def test_kit_grade_and_report(self):
        if not gpu_present():
            self.fail("REQUIRE_GPU=1 but no GPU")
        tmp = tempfile.mkdtemp(prefix="wb-homework-")
        try:
            kit = os.path.join(tmp, "kit")
            r = subprocess.run(["make", "--no-print-directory", "student-kit", f"KIT_DIR={kit}", "HOMEWORK=00 02 03 06"],
                               cwd=ROOT, capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            homework = ["00_env_check", "02_naive_kernel", "03_shared_tiling", "06_tensor_core_wmma"]
            with open(os.path.join(kit, "report_template/rubric.json")) as f:
                self.assertEqual(json.load(f)["homework"], homework)
            for p, regions in sk.scan(ROOT).items():
                if any(r.kind == sk.SOLUTION for r in regions) and sk.chapter_of_path(p) in homework:
                    fill_todos(os.path.join(kit, p), solutions(ROOT, p))
            self.assertIn("BEGIN SOLUTION", read(os.path.join(kit, "04_register_unroll/kernels.cuh")))  # kept whole
            g = os.path.join(tmp, "grade")
            r = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSION={kit}",
                                f"KIT_MANIFEST={kit}.manifest.json"], cwd=ROOT, capture_output=True, text=True,
                               env=dict(os.environ, GRADE_DIR=g, STUDENT_ID="homework", GRADE_JOBS="16"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(g, "grade.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
            chapters = {x["chapter"]: x for x in rows if x["kind"] == "chapter"}
            self.assertEqual(sorted(chapters), homework)
            for c in homework:
                self.assertEqual(chapters[c]["build"], "ok", c)
            self.assertEqual(float(chapters["00_env_check"]["points"]), 3.0, read(os.path.join(g, "grade.md")))
            for x in rows:
                if x["kind"] == "variant" and "not run on this GPU" not in x["note"]:
                    self.assertEqual((x["correctness"], x["idea"]), ("PASS", "ok"), (x["chapter"], x["variant"], x["note"]))
            # The report from the grade run's numbers, with the kit's rubric: the homework's chapters only.
            out = os.path.join(tmp, "report")
            r = subprocess.run(["make", "--no-print-directory", "report"], cwd=kit, capture_output=True, text=True,
                               env=dict(os.environ, REPORT_CSV=os.path.join(g, "bench.csv"), REPORT_OUT=out,
                                        REPORT_ENV=os.path.join(g, "env.json"), STUDENT_ID="homework"))
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            text = read(os.path.join(out, "report.md"))
            self.assertIn("03_shared_tiling", text)
            for other in ("04_register_unroll", "05_float4_vectorized", "09_hopper_wgmma"):
                self.assertNotIn(other, text)
        finally:
            if not os.environ.get("WB_KEEP_COHORT"):
                shutil.rmtree(tmp, ignore_errors=True)


def main():
    import wb_unittest
    return wb_unittest.run_module(__name__, "test_cohort")


if __name__ == "__main__":
    sys.exit(main())
