"""test_cohort.py - a class of planted students graded for real on the GPU (tools/grade.sh).

A kit of chapter 03 is made from this workbook (make student-kit HOMEWORK=03), and each student
fills it in one way: the solution; an off-by-one at the edge tile (K / TILE tiles); a missing
__syncthreads(); nothing; launchers pointed at cuBLAS; chapter 02's kernel in chapter 03's regions;
the solution with a gutted test file; a deleted variant; the solution with an edited
tools/wb/grade.py; a result replay (a block skips a tile that already holds a number); TF32 products
in the FP32 chapter. Each is graded by this workbook's grader, and gets the expected points and the
expected named reason. Last, the default homework (00 02 03 06) is made into a kit, the solution
put in, graded, and the report filled from the grade run: it holds exactly those chapters.

Needs a GPU (pytest marker `gpu`, tools/conftest.py): without one every case is skipped, and
REQUIRE_GPU=1 makes that a failure. The CPU part
of the same cohort is in tools/test_grade.py. On an H200 with 16 cores the first grading takes about
75 s and the eight beside it under 5 minutes each, except the student with the race: the sanitizer
run again per variant to name the racy one (grade.sh, step 5) takes that grading past 8 minutes, so
the whole file takes longer than a 10-minute limit allows (`git show 9da2ef9:results/h200/cohort_0d49525.txt`).
WB_COHORT_STUDENTS=correct,result_replay grades only the students named (the reference is measured
by the first, so name "correct" first); the tests of the others are skipped.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from test_grade import IN_A_KIT, fill_todos, plant_student, read, solutions, write

from wb import ROOT
from wb import kit as sk


@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
@pytest.mark.gpu
class TestCohort:
    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-cohort-")
        cls.kit = os.path.join(cls.tmp, "kit")
        r = subprocess.run(["python3", "-m", "wb", "kit", "make", cls.kit, "--homework", "03"], cwd=ROOT,
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
        # The first student measures the reference (this workbook on this GPU); the rest run side by
        # side, as an instructor grades a class: their checks share the GPU, their benchmarks take
        # turns (tools/gpu_needs.sh).
        students = cls.students()
        only = [n for n in os.environ.get("WB_COHORT_STUDENTS", "").split(",") if n]
        if only:
            students = {n: students[n] for n in only}
        first = next(iter(students))
        cls.grades[first] = cls.grade(first, *students.pop(first))
        with ThreadPoolExecutor(max_workers=len(students)) as pool:
            for name, result in zip(students, pool.map(lambda kv: cls.grade(kv[0], *kv[1]), students.items())):
                cls.grades[name] = result

    @classmethod
    def teardown_class(cls):
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

        # The result replay: a block whose tile corner already holds a number returns at once. Graded
        # on a correctness run alone (C poisoned) and timed on the same inputs, it scored 9 / 9 at
        # thousands of % of cuBLAS; with fresh inputs and a poisoned or scrambled C before every
        # timed launch, checked after it, each variant is "wrong in a timed run".
        replay_line = ("    if (beta == 0.0f) { const float c0 = C[(size_t)(blockIdx.y * TILE) * N + blockIdx.x * TILE];"
                       " if (c0 == c0) return; }\n")
        replay = [replay_line + body for body in good]
        # A cache in static device memory keyed on the A pointer: a block whose tile was computed
        # for this A before copies that tile back instead. The buffers stay where they are between
        # launches, so without fresh inputs every launch after the first is a copy.
        cache_head = ("    static const float* tile_key[1 << 16];\n"
                      "    static float tile_cache[1 << 24];\n"
                      "    const int tile_id = blockIdx.y * gridDim.x + blockIdx.x;\n"
                      "    const bool cacheable = tile_id < (1 << 16) && (size_t)M * N <= (1u << 24);\n"
                      "    if (cacheable && tile_key[tile_id] == A) {\n"
                      "        const int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;\n"
                      "        if (r < M && c < N) C[(size_t)r * N + c] = tile_cache[(size_t)r * N + c];\n"
                      "        return;\n"
                      "    }\n")
        cache_tail = ("    __syncthreads();\n"
                      "    {\n"
                      "        const int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;\n"
                      "        if (cacheable && r < M && c < N) tile_cache[(size_t)r * N + c] = C[(size_t)r * N + c];\n"
                      "    }\n"
                      "    if (cacheable && threadIdx.x == 0 && threadIdx.y == 0) tile_key[tile_id] = A;\n")
        pointer_cache = [cache_head + good[i] + cache_tail for i in (0, 1)] + [good[2]]

        # TF32 products in the FP32 chapter: right to the componentwise bound at large K, too coarse
        # for the normwise ceiling at every K.
        tf32_mul = "__uint_as_float((__float_as_uint({}) + 0x1000u) & 0xFFFFE000u)"
        tf32_products = good[0].replace("acc += As[ty][k] * Bs[k][tx];",
                                        "acc += " + tf32_mul.format("As[ty][k]") + " * " + tf32_mul.format("Bs[k][tx]") + ";")
        assert tf32_products != good[0]

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
            with open(os.path.join(sub, "tools/wb/grade.py"), "a") as f:
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
            "result_replay": (replay, None),
            "tf32_products": ([tf32_products, good[1], good[2]], None),
            "pointer_cache": (pointer_cache, None),
        }

    @classmethod
    def grade(cls, name, bodies, edit):
        sub, g = plant_student(cls.tmp, cls.kit, name, bodies, edit)
        env = dict(os.environ, GRADE_DIR=g, STUDENT_ID=name, GRADE_JOBS="2",
                   GRADE_REFERENCE=os.path.join(cls.tmp, "reference"))
        env.pop("GRADE_SEED", None)
        # The grader's lines, each with the seconds since its start: where a slow cohort spends its
        # time (grade.out in the grade folder, kept with WB_KEEP_COHORT=1).
        start = time.monotonic()
        lines = []
        with subprocess.Popen(["bash", "tools/grade.sh", "--submission", sub, "--manifest", cls.manifest,
                               "--rubric", cls.rubric], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) as proc:
            for line in proc.stdout:
                lines.append(f"[{time.monotonic() - start:6.1f} s] {line}")
        r = subprocess.CompletedProcess(proc.args, proc.returncode, "".join(lines), "")
        if os.path.isdir(g):
            write(os.path.join(g, "grade.out"), r.stdout)
        rows = []
        if os.path.exists(os.path.join(g, "grade.csv")):
            with open(os.path.join(g, "grade.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
        md = read(os.path.join(g, "grade.md")) if os.path.exists(os.path.join(g, "grade.md")) else ""
        return dict(rc=r.returncode, out=r.stdout + r.stderr, rows=rows, md=md, dir=g)

    def result(self, name):
        if name not in self.grades:
            pytest.skip(f"{name} was not graded (WB_COHORT_STUDENTS)")
        g = self.grades[name]
        assert g["rc"] == 0, g["out"]
        chapter = next(r for r in g["rows"] if r["kind"] == "chapter")
        variants = {r["variant"]: r for r in g["rows"] if r["kind"] == "variant"}
        return float(chapter["points"]), variants, g

    def assert_full_marks(self, name):
        points, variants, g = self.result(name)
        assert len(variants) == 6, g["md"]
        for v, row in variants.items():
            assert (row["correctness"], row["idea"]) == ("PASS", "ok"), (name, v, row["note"])
            assert row["sanitizer"] == "memcheck ok, racecheck ok", (name, v)
        # tests 2 + correctness 3 + sanitizer 1, and the performance tiers (3 at >= 90% of the
        # reference): the same code as the reference, timed again, lands within a few percent of it.
        assert points >= 8.0, g["md"]
        return points, variants, g

    def test_correct(self):
        points, variants, g = self.assert_full_marks("correct")
        assert "None: outside its regions the submission is the kit" in g["md"]
        assert os.path.exists(os.path.join(g["dir"], "reference.csv"))
        assert "sgemm_smem_tiled" in variants["tiled_16"]["kernels"]

    def test_edge_off_by_one(self):
        points, variants, g = self.result("edge_off_by_one")
        for v in ("tiled_16", "tiled_32"):  # both run the kernel with the bug
            assert variants[v]["correctness"] == "FAIL"
            assert "wrong result at" in variants[v]["note"]
        for v in ("transposed_b_32", "tiled_32_4rows"):
            assert variants[v]["correctness"] == "PASS"
        assert points > 3.0  # partial credit, not all or nothing
        assert points < 8.0

    def test_missing_syncthreads(self):
        points, variants, g = self.result("missing_syncthreads")
        for v in ("tiled_32_2rows", "tiled_32_4rows"):
            assert "racecheck reported a shared-memory race" in variants[v]["note"]
            assert variants[v]["correctness"] == "FAIL"
            assert "racecheck FAIL" in variants[v]["sanitizer"]
        assert "racecheck ok" in variants["tiled_16"]["sanitizer"]
        assert points < 8.0

    def test_empty(self):
        points, variants, g = self.result("empty")
        assert points == 0.0, g["md"]
        assert all(v["correctness"] == "FAIL" for v in variants.values())

    def test_result_replay(self):
        points, variants, g = self.result("result_replay")
        assert len(variants) == 6, g["md"]
        for v, row in variants.items():
            assert row["correctness"] == "FAIL", (v, row["note"])
            assert "wrong in a timed run" in row["note"], (v, row["note"])
            assert row["pct_cublas"] in ("", "-"), (v, row["pct_cublas"])
        assert points <= 2.0, g["md"]  # the kit's tests at most: nothing for correctness, sanitizer, speed

    def test_pointer_cache(self):
        points, variants, g = self.result("pointer_cache")
        assert len(variants) == 6, g["md"]
        for v in ("tiled_16", "tiled_32", "transposed_b_32", "transposed_b_padded_32"):  # caching kernels
            assert variants[v]["correctness"] == "FAIL", (v, variants[v]["note"])
            assert variants[v]["pct_cublas"] in ("", "-"), (v, variants[v]["pct_cublas"])
        assert variants["tiled_32_4rows"]["correctness"] == "PASS"
        assert points < 8.0

    def test_tf32_products(self):
        points, variants, g = self.result("tf32_products")
        assert len(variants) == 6, g["md"]
        for v in ("tiled_16", "tiled_32"):  # the variants that run the TF32 kernel
            assert variants[v]["correctness"] == "FAIL", variants[v]["note"]
        for v in ("transposed_b_32", "tiled_32_4rows"):
            assert variants[v]["correctness"] == "PASS"
        assert points < 8.0

    def test_cublas_launchers(self):
        points, variants, g = self.result("cublas_launchers")
        assert points == 0.0, g["md"]
        assert "| `03_shared_tiling/kernels.cuh` | MODIFIED | outside the TODO(student) regions" in g["md"]
        assert all("cublas" not in v["kernels"].lower() for v in variants.values())

    def test_chapter02_kernel(self):
        points, variants, g = self.result("chapter02_kernel")
        assert points == 0.0, g["md"]
        for v, row in variants.items():
            if "rows" not in v:
                assert row["correctness"] == "PASS", v  # right answers...
            assert "not the chapter's idea (tiles in shared memory)" in row["note"]  # ...the wrong technique
            assert "no shared memory" in row["note"]

    def test_gutted_tests(self):
        self.assert_full_marks("gutted_tests")
        assert "| `03_shared_tiling/test_03_shared_tiling.cu` | MODIFIED | not used" in self.grades["gutted_tests"]["md"]

    def test_deleted_variant(self):
        points, variants, g = self.result("deleted_variant")
        assert "tiled_16" in variants  # graded from the kit's table all the same
        assert variants["tiled_16"]["correctness"] == "FAIL"
        assert "| `03_shared_tiling/kernels.cuh` | MODIFIED |" in g["md"]
        assert points < 8.0

    def test_edited_grader(self):
        self.assert_full_marks("edited_grader")
        assert "| `tools/wb/grade.py` | MODIFIED | not used" in self.grades["edited_grader"]["md"]


@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
@pytest.mark.gpu
class TestDefaultHomework:
    """The course's homework (00 02 03 06): kit, solution, grade, report of exactly those chapters."""

    def test_kit_grade_and_report(self):
        tmp = tempfile.mkdtemp(prefix="wb-homework-")
        try:
            kit = os.path.join(tmp, "kit")
            r = subprocess.run(["make", "--no-print-directory", "student-kit", f"KIT_DIR={kit}", "HOMEWORK=00 02 03 06"],
                               cwd=ROOT, capture_output=True, text=True)
            assert r.returncode == 0, r.stdout + r.stderr
            homework = ["00_env_check", "02_naive_kernel", "03_shared_tiling", "06_tensor_core_wmma"]
            with open(os.path.join(kit, "report_template/rubric.json")) as f:
                assert json.load(f)["homework"] == homework
            for p, regions in sk.scan(ROOT).items():
                if any(r.kind == sk.SOLUTION for r in regions) and sk.chapter_of_path(p) in homework:
                    fill_todos(os.path.join(kit, p), solutions(ROOT, p))
            assert "BEGIN SOLUTION" in read(os.path.join(kit, "04_register_unroll/kernels.cuh"))  # kept whole
            g = os.path.join(tmp, "grade")
            r = subprocess.run(["make", "--no-print-directory", "grade", f"SUBMISSION={kit}",
                                f"KIT_MANIFEST={kit}.manifest.json"], cwd=ROOT, capture_output=True, text=True,
                               env=dict(os.environ, GRADE_DIR=g, STUDENT_ID="homework", GRADE_JOBS="16"))
            assert r.returncode == 0, r.stdout + r.stderr
            with open(os.path.join(g, "grade.csv"), newline="") as f:
                rows = list(csv.DictReader(f))
            chapters = {x["chapter"]: x for x in rows if x["kind"] == "chapter"}
            assert sorted(chapters) == homework
            for c in homework:
                assert chapters[c]["build"] == "ok", c
            assert float(chapters["00_env_check"]["points"]) == 0.0, read(os.path.join(g, "grade.md"))  # graded in the report
            for x in rows:
                if x["kind"] == "variant" and "not run on this GPU" not in x["note"]:
                    assert (x["correctness"], x["idea"]) == ("PASS", "ok"), (x["chapter"], x["variant"], x["note"])
            # The report from the grade run's numbers, with the kit's rubric: the homework's chapters only.
            out = os.path.join(tmp, "report")
            r = subprocess.run(["make", "--no-print-directory", "report"], cwd=kit, capture_output=True, text=True,
                               env=dict(os.environ, REPORT_CSV=os.path.join(g, "bench.csv"), REPORT_OUT=out,
                                        REPORT_ENV=os.path.join(g, "env.json"), STUDENT_ID="homework"))
            assert r.returncode == 0, r.stdout + r.stderr
            text = read(os.path.join(out, "report.md"))
            assert "03_shared_tiling" in text
            for other in ("04_register_unroll", "05_float4_vectorized", "09_hopper_wgmma"):
                assert other not in text
        finally:
            if not os.environ.get("WB_KEEP_COHORT"):
                shutil.rmtree(tmp, ignore_errors=True)
