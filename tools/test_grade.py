"""test_grade.py - tests of the grader (tools/grade.sh, tools/wb/grade.py) that need no GPU: the CPU part
of the cohort of planted students.

1. Assembly against the real workbook: a kit of chapter 03 (as `make student-kit HOMEWORK=03`
   makes it) and planted submissions: launchers pointed at cuBLAS, a deleted variant, a gutted test
   file, an edited tools/wb/grade.py (each listed, none used), chapter 02's kernel pasted into a
   region (used: the GPU run judges it), regions that reach outside their function (rejected),
   damaged markers, a manifest from another workbook.
2. grade.sh end to end on a stand-in workbook: stand-in programs, nvidia-smi, compute-sanitizer and
   cuobjdump that behave as the GPU would for what a student wrote in the region (a word in the
   region picks the behaviour: right, wrong at the edge tile, cuBLAS kernel, no shared memory, a
   race), so the whole path (assemble, reference, build, tests, sweep, sanitizer, trace, SASS,
   score) runs and each planted student gets the expected points and named reason.
3. The scoring rules one by one on written-out runs (per variant and all or nothing, reference
   tiers, GPUs too old for a variant, chapter 09 on another GPU).
4. Usage: bad input exits 2 with one line, no GPU exits 3 with one line.
tools/test_cohort.py grades the same cohort for real on a GPU (make test-cohort). Run with pytest (make test runs it).
"""
import csv
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile

import pytest

from wb import ROOT, TOOLS, grade
from wb import kit as sk

GRADE = ["python3", "-m", "wb", "grade"]

DROP = ("STUDENT_ID", "CUDA_VISIBLE_DEVICES", "GRADE_NO_GPU", "GRADE_DIR", "GRADE_SEED", "GRADE_RUBRIC",
        "GRADE_MANIFEST", "GRADE_SUBMISSION", "GRADE_REFERENCE", "WB_KERNEL_TRACE")
CUBLAS_KERNEL = "_ZN7cutlass7Kernel2I41cutlass_80_simt_sgemm_64x64_8x5_nn_align1EEvNT_6ParamsE"  # seen on the H200


def run(cmd, env_extra=None, cwd=ROOT):
    env = {k: v for k, v in os.environ.items() if k not in DROP}
    env.update(env_extra or {})
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)


def write(path, text, exe=False):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if exe:
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def fill_todos(path, bodies):
    """Writes `bodies` (one text per TODO(student) block, in order) into a kit file."""
    text = read(path)
    lines = sk.split_lines(text)
    todos = [t for t in sk.parse_todos(text, path) if t.kind == sk.SOLUTION]
    out, pos = [], 0
    for t, b in zip(todos, bodies):
        out.extend(lines[pos:t.begin + 1])
        out.append(b if b.endswith("\n") or not b else b + "\n")
        pos = t.end
    out.extend(lines[pos:])
    write(path, "".join(out))


def plant_student(tmp, kit, name, bodies, edit=None):
    """A student of chapter 03 under tmp/students/NAME: a copy of the kit, its kernels.cuh regions
    filled with `bodies`, then edit(folder) when given. Returns (that folder, tmp/grades/NAME, the
    grade folder to use)."""
    sub = os.path.join(tmp, "students", name)
    shutil.copytree(kit, sub)
    fill_todos(os.path.join(sub, "03_shared_tiling/kernels.cuh"), bodies)
    if edit:
        edit(sub)
    return sub, os.path.join(tmp, "grades", name)


def solutions(repo, rel):
    """The solution regions' bodies of one file of the workbook."""
    text = read(os.path.join(repo, rel))
    lines = sk.split_lines(text)
    return ["".join(lines[r.begin + 1:r.end]) for r in sk.parse_regions(text, rel) if r.kind == sk.SOLUTION]


# ==== 1. assembly against the real workbook =========================================================

# In a student kit the solutions were taken out (or some chapters kept whole): nothing to plant.
IN_A_KIT = sk.is_kit(ROOT)
# The grader reads regions with libclang's tokenizer (tools/setup.sh installs its Python bindings).
try:
    import clang.cindex  # noqa: F401
    HAVE_LEXER = True
except ImportError:
    HAVE_LEXER = False
needs_lexer = pytest.mark.skipif(not HAVE_LEXER, reason="libclang's Python bindings are not installed "
                                 "(tools/setup.sh installs them): the grader cannot read regions")


@needs_lexer
@pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
class TestAssembly:
    """The kit of chapter 03 made from this workbook; each test plants one student."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-grade-")
        cls.kit = os.path.join(cls.tmp, "kit")
        cls.manifest = os.path.join(cls.tmp, "kit.manifest.json")
        files, regions, _ = sk.write_kit(cls.kit, ROOT, ["03_shared_tiling"])
        with open(cls.manifest, "w", encoding="utf-8") as f:
            json.dump(sk.kit_manifest(cls.kit, ROOT, ["03_shared_tiling"], files, regions), f)
        cls.good = solutions(ROOT, "03_shared_tiling/kernels.cuh")

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def student(self, name, edit=None, bodies=None):
        sub = os.path.join(self.tmp, name)
        shutil.copytree(self.kit, sub)
        fill_todos(os.path.join(sub, "03_shared_tiling/kernels.cuh"), self.good if bodies is None else bodies)
        if edit:
            edit(sub)
        out = os.path.join(self.tmp, name + "-grade")
        r = run([*GRADE, "assemble", "--submission", sub, "--manifest", self.manifest, "--out", out])
        assert r.returncode == 0, r.stderr
        return out, {row["file"]: row for row in grade.read_tsv(os.path.join(out, "changes.tsv"))}, \
            grade.read_tsv(os.path.join(out, "regions.tsv"))

    def graded_kernels_cuh(self, out):
        return read(os.path.join(out, "tree/03_shared_tiling/kernels.cuh"))

    def test_a_correct_submission_is_the_kit_with_its_regions(self):
        out, changes, regions = self.student("correct")
        assert changes == {}
        assert [r["state"] for r in regions] == ["filled"] * 3
        # The graded file is the workbook's solution, marker lines aside.
        want = read(os.path.join(ROOT, "03_shared_tiling/kernels.cuh"))
        for a, b in (("// BEGIN SOLUTION:", "// TODO(student):"), ("// END SOLUTION", "// END TODO(student)")):
            want = want.replace(a, b)
        assert self.graded_kernels_cuh(out) == want
        kernels = grade.read_tsv(os.path.join(out, "kernels.tsv"))
        mine = {k["kernel"] for k in kernels if k["chapter"] == "03_shared_tiling"}
        assert mine == {"ch03::sgemm_smem_tiled", "ch03::sgemm_smem_transposed_b", "ch03::sgemm_smem_tiled_multirow"}
        assert "ch02::sgemm_naive_coalesced" in {k["kernel"] for k in kernels if k["chapter"] == "02_naive_kernel"}
        assert read(os.path.join(out, "homework.txt")).split() == ["03_shared_tiling"]

    def test_launchers_pointed_at_cublas_are_listed_and_not_used(self):
        def edit(sub):
            p = os.path.join(sub, "03_shared_tiling/kernels.cuh")
            text = read(p)
            for launcher in ("launch_smem_tiled<16>", "launch_smem_tiled<32>"):
                text = text.replace(launcher + ",", "wb::cublas_sgemm,")
            write(p, text)
        out, changes, _ = self.student("cublas", edit, bodies=["", "", ""])
        assert changes["03_shared_tiling/kernels.cuh"]["state"] == "MODIFIED"
        assert "outside the TODO(student) regions (2 line(s) removed, 2 added)" in \
                      changes["03_shared_tiling/kernels.cuh"]["what"]
        graded = self.graded_kernels_cuh(out)
        assert "cublas_sgemm" not in graded
        assert '{"tiled_16", launch_smem_tiled<16>,' in graded

    def test_a_deleted_variant_is_graded_all_the_same(self):
        def edit(sub):
            p = os.path.join(sub, "03_shared_tiling/kernels.cuh")
            text = read(p)
            start = text.index('    {"tiled_32", launch_smem_tiled<32>,')
            end = text.index('    {"transposed_b_32"')
            write(p, text[:start] + text[end:])
        out, changes, _ = self.student("deleted", edit)
        assert changes["03_shared_tiling/kernels.cuh"]["state"] == "MODIFIED"
        assert '{"tiled_32", launch_smem_tiled<32>,' in self.graded_kernels_cuh(out)

    def test_gutted_tests_and_an_edited_grader_are_listed_and_not_used(self):
        def edit(sub):
            write(os.path.join(sub, "03_shared_tiling/test_03_shared_tiling.cu"),
                  '#include "testing.cuh"\nTEST_CASE("all good") { CHECK(true); }\n')
            with open(os.path.join(sub, "tools/wb/grade.py"), "a") as f:
                f.write("\nprint('automatic points 49 / 49')\n")
            os.remove(os.path.join(sub, "03_shared_tiling/README.md"))
            write(os.path.join(sub, "03_shared_tiling/helper.cuh"), "// mine\n")
        out, changes, _ = self.student("gutted", edit)
        assert changes["03_shared_tiling/test_03_shared_tiling.cu"]["state"] == "MODIFIED"
        assert changes["tools/wb/grade.py"]["state"] == "MODIFIED"
        assert changes["03_shared_tiling/README.md"]["state"] == "MISSING"
        assert changes["03_shared_tiling/helper.cuh"]["state"] == "NEW"
        for rel in ("03_shared_tiling/test_03_shared_tiling.cu", "tools/wb/grade.py", "03_shared_tiling/README.md"):
            assert read(os.path.join(out, "tree", rel)) == read(os.path.join(self.kit, rel)), rel
        assert not os.path.exists(os.path.join(out, "tree/03_shared_tiling/helper.cuh"))

    def test_chapter_02s_kernel_in_a_region_is_used_for_the_gpu_to_judge(self):
        naive = solutions(ROOT, "02_naive_kernel/kernels.cuh")[1]
        out, changes, regions = self.student("naive", bodies=[naive, "", ""])
        assert changes == {}
        assert [r["state"] for r in regions] == ["filled", "empty", "empty"]
        assert naive in self.graded_kernels_cuh(out)

    def test_c_plus_plus_that_stays_in_its_function_is_accepted(self):
        # Braces in a raw string and in comments, a #pragma unroll and a _Pragma("unroll 4").
        body = ('    const char* s = R"(}{)"; (void)s;  // }\n    /* { */\n#pragma unroll 4\n'
                '    _Pragma("unroll") for (int i = 0; i < 2; ++i) { (void)i; }\n')
        assert grade.region_problem(body) == ""

    def test_regions_that_reach_outside_their_function_are_rejected(self):
        cases = {
            "#define sgemm_smem_tiled sgemm_naive\n": "preprocessor directive (#define)",
            '#include "../02_naive_kernel/kernels.cuh"\n': "preprocessor directive (#include)",
            "}\nvoid helper() {\n    wb::cublas_sgemm(1, 1, 1, 1.f, 0, 0, 0.f, 0, 0);\n": "closes a } the region did not open",
            "if (M > 0) {\n": "opens 1 bracket(s) it does not close ({)",
            "// END TODO(student) is not mine\n    int x = 0; (void)x;\n": "marker",
            # The same escapes in other spellings: digraphs, trigraphs, a line splice, comment
            # markers inside strings, a _Pragma, a pragma that is not the unroll the solutions use.
            '%:include "../02_naive_kernel/kernels.cuh"\n': "preprocessor directive (#include)",
            "??=define sgemm_smem_tiled sgemm_naive\n": "preprocessor directive (#define)",
            "# \\\n  define TILE 8\n": "preprocessor directive (#define)",
            "%>\nvoid helper() <%\n": "closes a } the region did not open",
            'const char* a = "/*"; }\nvoid helper() { const char* b = "*/";\n': "closes a } the region did not open",
            '_Pragma("GCC poison sgemm")\n': '_Pragma other than _Pragma("unroll")',
            "#pragma nv_diag_suppress 177\n": "preprocessor directive (#pragma)",
            "int t = (1;\n": "opens 1 bracket(s) it does not close",
        }
        for n, (body, why) in enumerate(cases.items()):
            out, _, regions = self.student(f"reject{n}", bodies=[body, "#pragma unroll\nfor (;;) {}\n", ""])
            if why == "marker":  # the extra END line ends the region where the student put it
                assert regions[0]["state"] != "filled"
                continue
            assert regions[0]["state"] == "rejected"
            assert why in regions[0]["detail"]
            assert regions[1]["state"] == "filled"  # #pragma is allowed
            assert body.strip() not in self.graded_kernels_cuh(out)

    def test_damaged_markers_grade_the_file_empty(self):
        def edit(sub):
            p = os.path.join(sub, "03_shared_tiling/kernels.cuh")
            write(p, read(p).replace("// TODO(student): as sgemm_smem_tiled", "// my version of sgemm_smem_tiled", 1))
        out, changes, regions = self.student("markers", edit)
        assert changes["03_shared_tiling/kernels.cuh"]["state"] == "MARKERS"
        assert [r["state"] for r in regions] == ["empty"] * 3
        assert self.graded_kernels_cuh(out) == read(os.path.join(self.kit, "03_shared_tiling/kernels.cuh"))

    def test_a_manifest_of_another_workbook_is_refused(self):
        m = json.loads(read(self.manifest))
        m["files"]["common/options.cpp"] = "0" * 64
        other = os.path.join(self.tmp, "other.manifest.json")
        write(other, json.dumps(m))
        r = run([*GRADE, "assemble", "--submission", self.kit, "--manifest", other,
                 "--out", os.path.join(self.tmp, "other-grade")])
        assert r.returncode == 2, r.stdout + r.stderr
        assert "not the one the kit was made from" in r.stderr
        assert "common/options.cpp" in r.stderr
        assert len(r.stderr.strip().splitlines()) == 1


# ==== 2. grade.sh end to end on a stand-in workbook =================================================

# A chapter program that acts as the real one would on a GPU, given what its region holds: the
# variants are "v1" and "v2", each computed by the code of region 1 and region 2 of kernels.cuh.
STAND_IN_PROGRAM = r'''#!/usr/bin/env python3
import csv, os, re, sys, time
here = os.path.dirname(os.path.abspath(sys.argv[0]))
chapter = os.path.basename(here)
args = sys.argv[1:]
text = open(os.path.join(here, "kernels.cuh")).read()
bodies = re.findall(r"// (?:TODO\(student\)|BEGIN SOLUTION):[^\n]*\n(.*?)[ \t]*// END (?:TODO\(student\)|SOLUTION)", text, re.S)
variants = {"v1": bodies[0], "v2": bodies[1]}
if "--help" in args:
    print("variants:")
    for v in variants:
        print(f"  {v:<24} fp32: a stand-in")
    sys.exit(0)
if "--json" in args:
    open(args[args.index("--json") + 1], "w").write('{"gpus": [{"cc": "%s"}]}' % os.environ.get("FAKE_CC", "9.0"))
    sys.exit(0)
def opt(name, default=None):
    return args[args.index(name) + 1] if name in args else default
tool = os.environ.get("FAKE_SANITIZER_TOOL")
pick = opt("--variant")
failed = False
if tool:
    for v, body in variants.items():
        if (pick in (None, v)) and ((tool == "racecheck" and "RACE" in body) or (tool == "memcheck" and "OOB" in body)):
            sys.exit(9)
    # Verification is off, but a real program still checks its timed launches (fresh inputs) and
    # exits 1 when one was wrong: that is the sweep's business, not a sanitizer finding.
    wrong = [v for v, body in variants.items()
             if pick in (None, v) and not any(w in body for w in ("RIGHT", "RACE", "NOSMEM", "CUBLAS"))]
    sys.exit(1 if wrong else 0)
shapes = [tuple(int(x) for x in (s.split("x") * 3)[:3]) if "x" in s else (int(s),) * 3
          for s in (opt("--sizes") or opt("--size")).split(",")]
rows, trace = [], []
for (m, n, k) in shapes:
    rows.append(dict(chapter=chapter, variant="cublas_sgemm", dtype="fp32", M=m, N=n, K=k, pct_cublas="100", status="PASS", rel_err="1e-7", gpu="Stand-in GPU", cc="9.0"))
    for v, body in variants.items():
        ok = "RIGHT" in body or "RACE" in body or "NOSMEM" in body or "CUBLAS" in body or ("EDGE" in body and m % 16 == 0 and n % 16 == 0)
        failed = failed or not ok
        pct = {"RIGHT": 30, "NOSMEM": 12, "CUBLAS": 100}.get(next((w for w in ("RIGHT", "NOSMEM", "CUBLAS") if w in body), ""), 25)
        rows.append(dict(chapter=chapter, variant=v, dtype="fp32", M=m, N=n, K=k, pct_cublas=str(pct), status="PASS" if ok else "FAIL", rel_err="1e-6" if ok else "nan", gpu="Stand-in GPU", cc="9.0"))
        kernel = CUBLAS if "CUBLAS" in body else "_Z11sgemm_tiledILi16EEviiifPKfS1_fPf" if v == "v1" else "_Z12sgemm_tiled2ILi32EEviiifPKfS1_fPf"
        smem = 0 if "NOSMEM" in body or "CUBLAS" in body else 2048
        trace.append(f"{v} fp32 {m}x{n}x{k}\t{kernel}\t3\t{smem}\t0\t32\t256\t{(m * n + 255) // 256}\n")
path = opt("--csv")
time.sleep(float(os.environ.get("FAKE_RUN_SECONDS", "0")))  # a measurement that takes a while
new = not os.path.exists(path)
with open(path, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
    if new:
        w.writeheader()
    w.writerows(rows)
if os.environ.get("WB_KERNEL_TRACE"):
    open(os.environ["WB_KERNEL_TRACE"], "a").write("".join(trace))
sys.exit(1 if failed else 0)
'''.replace("CUBLAS if", repr(CUBLAS_KERNEL) + " if")

STAND_IN_KERNELS = """// kernels.cuh - a stand-in chapter
template <int T>
__global__ void __launch_bounds__(256) sgemm_tiled(int M, int N, int K, float alpha, const float* A, const float* B,
                                                   float beta, float* C) {
    // BEGIN SOLUTION: the first kernel's body
    mark(RIGHT);
    // END SOLUTION
}
template <int T>
__global__ void sgemm_tiled2(int M, int N, int K, float alpha, const float* A, const float* B, float beta, float* C) {
    // BEGIN SOLUTION: the second kernel's body
    mark(RIGHT);
    // END SOLUTION
}
"""

# What the stand-in cuobjdump prints for a program: shared loads and barriers unless the region
# that makes the kernel says NOSMEM.
STAND_IN_CUOBJDUMP = r'''#!/usr/bin/env python3
import os, re, sys
here = os.path.dirname(os.path.abspath(sys.argv[-1]))
text = open(os.path.join(here, "kernels.cuh")).read()
bodies = re.findall(r"// (?:TODO\(student\)|BEGIN SOLUTION):[^\n]*\n(.*?)[ \t]*// END", text, re.S)
for name, body in zip(("_Z11sgemm_tiledILi16EEviiifPKfS1_fPf", "_Z12sgemm_tiled2ILi32EEviiifPKfS1_fPf"), bodies):
    print("\t\tFunction : " + name)
    print("        /*0000*/                   FFMA R1, R2, R3, R1 ;")
    if "NOSMEM" not in body:
        print("        /*0010*/                   LDS R4, [R2] ;")
        print("        /*0020*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;")
'''


@needs_lexer
class TestStandInGrading:
    """A workbook of one chapter with stand-ins for everything that needs a GPU."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-grade-e2e-")
        cls.wb = os.path.join(cls.tmp, "wb")
        for rel in ("grade.sh", "gpu_needs.sh"):
            os.makedirs(os.path.join(cls.wb, "tools"), exist_ok=True)
            shutil.copy(os.path.join(TOOLS, rel), os.path.join(cls.wb, "tools", rel))
        shutil.copytree(os.path.join(TOOLS, "wb"), os.path.join(cls.wb, "tools", "wb"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        rubric = {"name": "stand-in", "bench_shape": "256", "scoring": "per_variant",
                  "chapters": {"03_shared_tiling": {"tests": 2, "correctness": 4, "sanitizer": 2, "performance": [
                      {"dtype": "fp32", "tiers": [{"min_pct_reference": 50, "points": 1},
                                                  {"min_pct_reference": 90, "points": 2}]}]}},
                  "ideas": {"03_shared_tiling": {"what": "tiles in shared memory", "smem": True, "sass": ["^LDS", "^BAR"]}},
                  "report": [{"section": "1. The machine", "points": 2}]}
        write(os.path.join(cls.wb, "report_template/rubric.json"), json.dumps(rubric))
        write(os.path.join(cls.wb, "Makefile"), "lib:\n\t@true\n")
        write(os.path.join(cls.wb, "common/Makefile"), "lib:\n\t@true\n")
        ch = os.path.join(cls.wb, "03_shared_tiling")
        write(os.path.join(ch, "kernels.cuh"), STAND_IN_KERNELS)
        write(os.path.join(ch, "prog.py"), STAND_IN_PROGRAM, exe=True)
        # The kit's tests: 2 cases per variant, both failing when its region computes a wrong result
        # (EDGE, or empty: the results checks see only the numbers).
        write(os.path.join(ch, "test.sh"), '#!/bin/sh\nr=$(grep -c -e "mark(RIGHT);" -e "mark(RACE);" -e "mark(CUBLAS);" '
              '-e "mark(NOSMEM);" kernels.cuh)\nf=$((4 - 2 * r))\n'
              'echo "test_03 $((4 - f)) $f 0" >>"$WB_TEST_SUMMARY"\n[ "$f" = 0 ]\n', exe=True)
        write(os.path.join(ch, "Makefile"), "all:\n\t@cp prog.py 03_shared_tiling && cp test.sh test_03_shared_tiling\n"
              "03_shared_tiling: all\nSANITIZE_ARGS := --sizes 67x45x33\n")
        fake = os.path.join(cls.tmp, "bin")
        write(os.path.join(fake, "nvidia-smi"), "#!/bin/sh\ncase \"$*\" in *query*) echo 'Stand-in GPU';; "
              "*) echo 'GPU 0: Stand-in GPU (UUID: GPU-0)';; esac\n", exe=True)
        write(os.path.join(fake, "compute-sanitizer"), '#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do\n'
              '  case "$1" in --tool) export FAKE_SANITIZER_TOOL=$2; shift 2;; --error-exitcode|--racecheck-report) shift 2;; '
              '*) shift;; esac\ndone\nexec "$@"\n', exe=True)
        write(os.path.join(fake, "cuobjdump"), STAND_IN_CUOBJDUMP, exe=True)
        cls.path = fake + os.pathsep + os.environ["PATH"]
        cls.kit = os.path.join(cls.tmp, "kit")
        # The stand-in's own package: the kit is made from the stand-in workbook.
        r = run(["python3", "-m", "wb", "kit", "make", cls.kit, "--homework", "03"], cwd=cls.wb,
                env_extra={"PYTHONPATH": os.path.join(cls.wb, "tools")})
        assert r.returncode == 0, r.stdout + r.stderr
        cls.manifest = cls.kit + ".manifest.json"
        cls.results = {}

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def start_grading(self, name, bodies, edit=None, wb=None, reference=None, extra=None):
        """grade.sh on a planted student, started: (its Popen, output and errors together; its grade
        folder). On the stand-in workbook (or `wb`), with its own GPU lock file."""
        sub, g = plant_student(self.tmp, self.kit, name, bodies, edit)
        env = {k: v for k, v in os.environ.items() if k not in DROP}
        env.update({"PATH": self.path, "GRADE_DIR": g, "GRADE_SEED": "7", "STUDENT_ID": name,
                    "GRADE_REFERENCE": reference or os.path.join(self.tmp, "reference"),
                    "GRADE_GPU_LOCK": os.path.join(self.tmp, name + ".lock")}, **(extra or {}))
        return subprocess.Popen(["bash", "tools/grade.sh", "--submission", sub, "--manifest", self.manifest],
                                cwd=wb or self.wb, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True), g

    def grade_student(self, name, bodies, edit=None):
        p, g = self.start_grading(name, bodies, edit)
        out = p.communicate()[0]
        assert p.returncode == 0, out
        rows = read_rows(os.path.join(g, "grade.csv"))
        chapter = next(x for x in rows if x["kind"] == "chapter")
        variants = {x["variant"]: x for x in rows if x["kind"] == "variant"}
        return float(chapter["points"]), variants, read(os.path.join(g, "grade.md")), out

    def test_the_cohort(self):
        # name: (region 1, region 2), expected points, {variant: words its note must hold}
        # Points: tests 2 x passed share x own share; correctness 4 and sanitizer 2 split over the two
        # variants (sanitizer credit for a clean variant that computes something right); performance
        # 2 for the best good variant at >= 90% of the reference (30%).
        cohort = {
            "correct": (("mark(RIGHT);", "mark(RIGHT);"), 2 + 4 + 2 + 2, {"v1": "ok", "v2": "ok"}),
            "edge_bug": (("mark(EDGE);", "mark(RIGHT);"), 1 + 2 + 2 + 2, {"v1": "wrong result"}),
            "missing_sync": (("mark(RACE);", "mark(RIGHT);"), 2 + 2 + 1 + 2, {"v1": "racecheck reported a shared-memory race"}),
            "empty": (("", ""), 0, {"v1": "wrong result", "v2": "wrong result"}),
            "cublas": (("mark(CUBLAS);", "mark(RIGHT);"), 2 * 1 / 2 + 2 + 1 + 2,
                       {"v1": "launched a library kernel: cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>"}),
            "chapter02_kernel": (("mark(NOSMEM);", "mark(NOSMEM);"), 0,
                                 {"v1": "not the chapter's idea (tiles in shared memory): sgemm_tiled: no shared memory, "
                                        "no LDS instruction, no BAR instruction"}),
        }
        for name, (bodies, want, reasons) in cohort.items():
            points, variants, md, out = self.grade_student(name, list(bodies))
            assert points == pytest.approx(round(want, 2), abs=1e-7), f"{name}: {md}"
            for v, words in reasons.items():
                assert words in variants[v]["note"], name
                if words != "ok":
                    assert words in md
            if name == "correct":
                # The sanitizer ran the chapter's shape and the two drawn from this grading's seed (7).
                drawn = ",".join(map(grade.shape_text, grade.sanitizer_shapes(7)))
                assert f"| sanitizer shapes (beside the chapter's own) | {drawn} |" in md
                log = read(os.path.join(self.tmp, "grades", name, "sanitize.log"))
                assert f"--sizes 67x45x33,{drawn}" in log, log[:400]
                assert "grade: the reference" in out  # measured here, or by an earlier student
                assert "Stand_in_GPU/unknown_256x256x256.csv" in out
                assert any("counted for performance" in variants[v]["note"] for v in ("v1", "v2"))
            if name == "missing_sync":  # found by the chapter's run, then named per variant
                assert variants["v1"]["sanitizer"] == "memcheck ok, racecheck FAIL"
                assert variants["v2"]["sanitizer"] == "memcheck ok, racecheck ok"
            if name == "cublas":
                assert variants["v1"]["idea"] == "NO"

    @staticmethod
    def reference_lines(out):
        measured = [x for x in out.splitlines() if x.startswith("grade: the reference (this workbook's solution)")]
        before = [x for x in out.splitlines() if x.startswith("grade: the reference") and x.endswith("(measured before)")]
        return measured, before

    def test_gradings_side_by_side_measure_the_reference_once(self):
        # Three gradings at once on a workbook whose reference is not measured yet, each measurement
        # taking a while: one measures, the others wait for it and read its file.
        reference = os.path.join(self.tmp, "reference-side-by-side")
        right = ["mark(RIGHT);", "mark(RIGHT);"]
        procs = [self.start_grading(f"side{i}", right, reference=reference, extra={"FAKE_RUN_SECONDS": "0.5"})[0]
                 for i in range(3)]
        outs = [p.communicate()[0] for p in procs]
        assert [p.returncode for p in procs] == [0, 0, 0], outs
        lines = [self.reference_lines(o) for o in outs]
        assert sum(len(m) for m, _ in lines) == 1, outs
        assert sum(len(b) for _, b in lines) == 2, outs
        rows = read_rows(os.path.join(reference, "Stand_in_GPU", "unknown_256x256x256.csv"))
        assert [r["variant"] for r in rows] == ["cublas_sgemm", "v1", "v2"]  # one measurement's rows
        assert sorted(os.listdir(os.path.join(reference, "Stand_in_GPU"))) == [".lock", "unknown_256x256x256.csv"]

    @pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
    def test_an_edited_workbook_is_measured_once_per_state_of_its_edits(self):
        wb = os.path.join(self.tmp, "wb-git")
        built = {"03_shared_tiling", "test_03_shared_tiling"}  # what the stand-in build writes: not committed
        shutil.copytree(self.wb, wb, ignore=lambda d, names: [n for n in names if n in built and
                                                              os.path.isfile(os.path.join(d, n))])
        git = ["git", "-c", "user.name=wb", "-c", "user.email=wb@example.org", "-C", wb]
        for cmd in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "stand-in"]):
            assert subprocess.run(git + cmd, capture_output=True).returncode == 0
        commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        reference = os.path.join(self.tmp, "reference-git")

        def grade_once(name):
            p, _ = self.start_grading(name, ["mark(RIGHT);", "mark(RIGHT);"], wb=wb, reference=reference)
            out = p.communicate()[0]
            assert p.returncode == 0, out
            measured, before = self.reference_lines(out)
            assert len(measured) + len(before) == 1, out
            return (measured or before)[0], bool(measured)

        line, measured = grade_once("git1")
        assert measured and line.endswith(f"/{commit}_256x256x256.csv")
        assert grade_once("git2")[1] is False
        kernels = os.path.join(wb, "03_shared_tiling/kernels.cuh")
        write(kernels, read(kernels).replace("mark(RIGHT);", "mark(RIGHT);  // tidied", 1))  # the solution, edited
        line, measured = grade_once("git3")
        assert measured and re.search(rf"/{commit}-edited-[0-9a-f]{{12}}_256x256x256\.csv$", line), line
        assert grade_once("git4") == (line.replace("the reference (this workbook's solution) on", "the reference on")
                                      .replace(" -> ", ": ") + " (measured before)", False)

    def test_gutted_tests_and_an_edited_grader_change_nothing(self):
        def edit(sub):
            write(os.path.join(sub, "03_shared_tiling/test.sh"), '#!/bin/sh\necho "test_03 9 0 0" >>"$WB_TEST_SUMMARY"\n',
                  exe=True)
            with open(os.path.join(sub, "tools/wb/grade.py"), "a") as f:
                f.write("\n# the student's own scoring\n")
        points, variants, md, _ = self.grade_student("gutted", ["mark(EDGE);", "mark(RIGHT);"], edit)
        assert points == pytest.approx(1 + 2 + 2 + 2, abs=1e-7)  # as edge_bug: the kit's tests ran
        assert "| `03_shared_tiling/test.sh` | MODIFIED | not used: the kit's file is graded |" in md
        assert "| `tools/wb/grade.py` | MODIFIED |" in md

    def test_a_deleted_variant_is_a_failed_variant(self):
        def edit(sub):
            p = os.path.join(sub, "03_shared_tiling/prog.py")
            write(p, read(p).replace('variants = {"v1": bodies[0], "v2": bodies[1]}', 'variants = {"v1": bodies[0]}'))
        points, variants, md, _ = self.grade_student("deleted", ["mark(RIGHT);", ""], edit)
        assert "v2" in variants  # the kit's table is graded, not the student's
        assert "wrong result" in variants["v2"]["note"]
        assert points == pytest.approx(1 + 2 + 1 + 2, abs=1e-7)
        assert "| `03_shared_tiling/prog.py` | MODIFIED |" in md


# ==== 3. scoring rules on written-out runs ==========================================================

def write_run(g, variants, rows=None, trace=None, results=None, ref_pct=None, sass=None):
    """A graded run of chapter 03 (homework) in g: `variants` {name: (pct, status)}."""
    os.makedirs(g, exist_ok=True)
    write(os.path.join(g, "homework.txt"), "03_shared_tiling\n")
    write(os.path.join(g, "variants_03_shared_tiling.txt"),
          "variants:\n" + "".join(f"  {v:<24} fp32: x\n" for v in variants))
    lines = ["seed\t-\t1", "bench_shape\t-\t256x256x256", "sweep_rows\t-\t1", "build\tcommon\tok",
             "build\t03_shared_tiling\tok", "tests\t03_shared_tiling\t4\t0\t0\t0", "sweep\t03_shared_tiling\t0",
             "bench\t03_shared_tiling\t0", "sanitize\t03_shared_tiling\tmemcheck\t*\tok\t0",
             "sanitize\t03_shared_tiling\tracecheck\t*\tok\t0"] + (results or [])
    write(os.path.join(g, "results.tsv"), "\n".join(lines) + "\n")
    head = "chapter,variant,dtype,M,N,K,pct_cublas,status,rel_err\n"
    sweep = head + "".join(f"03_shared_tiling,{v},fp32,67,45,33,{p},{s},1e-6\n" for v, (p, s) in variants.items())
    bench = head + "".join(f"03_shared_tiling,{v},fp32,256,256,256,{p},{s},1e-6\n" for v, (p, s) in variants.items())
    write(os.path.join(g, "sweep.csv"), rows[0] if rows else sweep)
    write(os.path.join(g, "bench.csv"), rows[1] if rows else bench)
    if ref_pct is not None:
        write(os.path.join(g, "reference.csv"), head + f"03_shared_tiling,tiled,fp32,256,256,256,{ref_pct},PASS,1e-6\n")
    write(os.path.join(g, "kernels.tsv"), "chapter\tkernel\tfile\n03_shared_tiling\tsgemm_smem_tiled\tk.cuh\n"
          "02_naive_kernel\tsgemm_naive_coalesced\tk.cuh\n")
    write(os.path.join(g, "trace_03_shared_tiling.tsv"), "".join(
        trace or [f"{v} fp32 256x256x256\t_Z16sgemm_smem_tiledILi16EEviiifPKfS1_fPf\t3\t2048\t0\t32\t256\t256\n"
                  for v in variants]))
    write(os.path.join(g, "sass_03_shared_tiling.txt"), sass if sass is not None else
          "\t\tFunction : _Z16sgemm_smem_tiledILi16EEviiifPKfS1_fPf\n        /*0000*/   LDS R1, [R2] ;\n"
          "        /*0010*/   BAR.SYNC 0x0 ;\n")


RULES = {"tests": 2, "correctness": 3, "sanitizer": 1,
         "performance": [{"dtype": "fp32", "tiers": [{"min_pct_cublas": 20, "points": 1}, {"min_pct_cublas": 30, "points": 3}]}]}


class TestScoring:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)

    def score(self, g, rules=None, **extra):
        rubric = {"name": "t", "bench_shape": "256", "chapters": {"03_shared_tiling": rules or RULES},
                  "ideas": {"03_shared_tiling": {"what": "tiles in shared memory", "smem": True, "sass": ["^LDS", "^BAR"]}}}
        rubric.update(extra)
        path = os.path.join(self.tmp, "rubric.json")
        write(path, json.dumps(rubric))
        r = run([*GRADE, "score", g, "--rubric", path])
        assert r.returncode == 0, r.stderr
        rows = read_rows(os.path.join(g, "grade.csv"))
        return next(x for x in rows if x["kind"] == "chapter"), {x["variant"]: x for x in rows if x["kind"] == "variant"}

    def test_one_wrong_variant_of_six_costs_its_share_only(self):
        g = os.path.join(self.tmp, "g")
        vs = {f"v{i}": (31, "PASS") for i in range(5)}
        vs["v5"] = (40, "FAIL")
        write_run(g, vs, results=["tests\t03_shared_tiling\t5\t1\t0\t1"])
        ch, var = self.score(g)
        # v5 computes nothing right: no share of the sanitizer point either
        assert float(ch["points"]) == pytest.approx(round(2 * 5 / 6 + 3 * 5 / 6 + 1 * 5 / 6 + 3, 2), abs=1e-7)
        assert var["v5"]["correctness"] == "FAIL"
        counted = [v for v in var if "counted for performance" in var[v]["note"]]
        assert len(counted) == 1
        assert counted != ["v5"]  # the fastest that passed, not the faster wrong one
        ch, _ = self.score(g, scoring="chapter")  # all or nothing, for a rubric that asks for it
        assert float(ch["points"]) == 0.0  # v5 fails, so every line fails

    def test_a_wrong_result_is_not_a_sanitizer_failure(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS"), "b": (31, "FAIL")})
        _, var = self.score(g)
        assert var["b"]["sanitizer"] == "memcheck ok, racecheck ok"
        assert var["b"]["correctness"] == "FAIL"

    def test_a_wrong_timed_run_and_an_implausible_rate_are_named(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS"), "b": ("", "FAIL (wrong in a timed run)"), "c": ("", "IMPLAUSIBLE"),
                      "d": (31, "PASS")})
        ch, var = self.score(g)
        assert var["b"]["correctness"] == "FAIL"
        assert "wrong in a timed run (fresh inputs, checked after the launch) at 256x256x256, 67x45x33" in var["b"]["note"]
        assert "wrong result at" not in var["b"]["note"]
        # tests 2; correctness and sanitizer 3 of 4 each (b computes nothing right); speed 3 (a, d)
        assert float(ch["points"]) == pytest.approx(2 + 3 * 3 / 4 + 1 * 3 / 4 + 3, abs=1e-7)
        # Right in every check, timed faster than the GPU can compute: no performance credit.
        assert var["c"]["correctness"] == "PASS"
        assert "implausible rate (above the GPU's peak) at 256x256x256, 67x45x33: no performance credit" in var["c"]["note"]
        assert var["c"]["pct_cublas"] in ("", "-")
        assert "counted for performance" not in var["c"]["note"]

    def test_a_race_fails_the_variant_unless_the_rubric_says_otherwise(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS"), "b": (31, "PASS")},
                  results=["sanitize\t03_shared_tiling\tracecheck\t*\tfail\t9",
                           "sanitize\t03_shared_tiling\tracecheck\ta\tok\t0", "sanitize\t03_shared_tiling\tracecheck\tb\tfail\t9"])
        ch, var = self.score(g)
        assert "racecheck reported a shared-memory race" in var["b"]["note"]
        assert float(ch["points"]) == pytest.approx(2 + 1.5 + 0.5 + 3, abs=1e-7)
        ch, var = self.score(g, race_fails_correctness=False)
        assert float(ch["points"]) == pytest.approx(2 + 3 + 0.5 + 3, abs=1e-7)

    def test_foreign_kernels_and_a_missing_idea_score_zero_and_are_named(self):
        g = os.path.join(self.tmp, "g")
        trace = ["a fp32 256x256x256\t_Z16sgemm_smem_tiledILi16EEviiifPKfS1_fPf\t3\t2048\t0\t32\t256\t256\n",
                 f"b fp32 256x256x256\t{CUBLAS_KERNEL}\t3\t0\t20480\t76\t128\t4\n",
                 "c fp32 256x256x256\t_Z21sgemm_naive_coalescedILi32ELi32EEviiifPKfS1_fPf\t3\t0\t0\t32\t1024\t64\n",
                 "d fp32 256x256x256\t-\t0\t0\t0\t0\t0\t0\n"]
        write_run(g, {v: (90, "PASS") for v in "abcd"}, trace=trace)
        ch, var = self.score(g)
        assert "launched a library kernel: cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>" in var["b"]["note"]
        assert "launched chapter 02's kernel sgemm_naive_coalesced" in var["c"]["note"]
        assert "launched no kernel" in var["d"]["note"]
        assert var["a"]["note"].split(";")[0] == "counted for performance"
        assert float(ch["points"]) == pytest.approx(2 / 4 + 3 / 4 + 1 / 4 + 3, abs=1e-7)  # a alone counts, at the top tier
        g2 = os.path.join(self.tmp, "g2")  # the chapter's own kernel without shared memory: not the idea
        write_run(g2, {"a": (31, "PASS")}, sass="\t\tFunction : _Z16sgemm_smem_tiledILi16EEviiifPKfS1_fPf\n"
                  "        /*0000*/   FFMA R1, R2, R3, R1 ;\n",
                  trace=["a fp32 256x256x256\t_Z16sgemm_smem_tiledILi16EEviiifPKfS1_fPf\t3\t0\t0\t32\t256\t256\n"])
        ch, var = self.score(g2)
        assert float(ch["points"]) == 0.0
        assert "no shared memory, no LDS instruction, no BAR instruction" in var["a"]["note"]

    def test_tiers_relative_to_the_reference_on_this_gpu(self):
        rules = dict(RULES, performance=[{"dtype": "fp32", "tiers": [{"min_pct_reference": 50, "points": 1},
                                                                    {"min_pct_reference": 90, "points": 3}]}])
        for ref, want in ((33.0, 3), (50.0, 1), (70.0, 0), (None, 0)):
            g = os.path.join(self.tmp, f"g{ref}")
            write_run(g, {"a": (31, "PASS")}, ref_pct=ref)
            ch, _ = self.score(g, rules)
            assert float(ch["points"]) == pytest.approx(6 + want, abs=1e-7), str(ref)
            if ref is None:
                assert "no reference run" in ch["note"]

    def test_variants_the_gpu_is_too_old_for_are_left_out(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS"), "b": (0, "skipped (needs sm_80)")})
        ch, var = self.score(g)
        assert float(ch["points"]) == pytest.approx(9.0, abs=1e-7)
        assert "not run on this GPU (needs sm_80)" in var["b"]["correctness"]

    def test_a_chapter_for_another_gpu_is_not_gradable(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS")}, results=["gradable\t03_shared_tiling\tno\t9.0"])
        ch, _ = self.score(g)
        assert (ch["points"], ch["max_points"]) == ("0", "0")
        assert "not gradable on this GPU (needs compute capability 9.0)" in ch["note"]

    def score_setup_chapter(self, tests, rubric):
        """Chapter 00 graded alone: its program ran, its tests gave `tests` ("P F S RC"). Its chapter row."""
        g = os.path.join(self.tmp, "g00")
        os.makedirs(g)
        write(os.path.join(g, "homework.txt"), "00_env_check\n")
        write(os.path.join(g, "results.tsv"), "bench_shape\t-\t256\nbuild\tcommon\tok\nbuild\t00_env_check\tok\n"
              "program\t00_env_check\t0\ntests\t00_env_check\t" + tests.replace(" ", "\t") + "\n")
        r = run([*GRADE, "score", g, "--rubric", rubric])
        assert r.returncode == 0, r.stderr
        return next(x for x in read_rows(os.path.join(g, "grade.csv")) if x["kind"] == "chapter")

    def test_the_setup_chapter_is_judged_by_its_tests_and_its_program(self):
        rubric = os.path.join(self.tmp, "r00.json")
        write(rubric, json.dumps({"chapters": {"00_env_check": {"tests": 2, "program": 1}}}))
        ch = self.score_setup_chapter("19 1 0 1", rubric)
        assert float(ch["points"]) == pytest.approx(2 * 19 / 20 + 1, abs=1e-7)
        assert "no variants ran" not in ch["note"]

    def test_the_default_rubric_gives_chapter_00_no_automatic_points(self):
        # 00 has nothing for a student to write: a kit handed in untouched passes its tests and runs
        # its program, which would be free points. Its report section grades the environment.
        ch = self.score_setup_chapter("20 0 0 0", os.path.join(ROOT, "report_template", "rubric.json"))
        assert float(ch["points"]) == 0.0
        with open(os.path.join(ROOT, "report_template", "rubric.json")) as f:
            rubric = json.load(f)
        machine = next(s for s in rubric["report"] if s["section"].startswith("1. "))
        assert machine["points"] == 5 and "check-env" in machine["note"]

    def test_report_notes_follow_the_homework(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS")})
        ch, _ = self.score(g, report=[{"section": "4. Performance analysis", "points": 6, "note": [
            "ladder", {"text": "tensor cores (4.7)", "only": ["06_tensor_core_wmma"]},
            {"text": "end to end (4.8)", "only": ["08_end_to_end", "03_shared_tiling"]}, "profiler metrics"]}])
        md = read(os.path.join(g, "grade.md"))
        assert "| 4. Performance analysis | __ / 6 | ladder, end to end (4.8) and profiler metrics |" in md
        assert "4.7" not in md  # chapter 06 is not in this homework
        rows = read_rows(os.path.join(g, "grade.csv"))
        assert next(r for r in rows if r["kind"] == "report")["note"] == \
            "graded by hand: ladder, end to end (4.8) and profiler metrics"
        assert sk.report_note("plain text", ["03_shared_tiling"]) == "plain text"
        assert sk.report_note(["a", {"text": "b", "only": ["x"]}]) == "a and b"  # no homework: every part

    @pytest.mark.skipif(IN_A_KIT, reason="a kit's rubric already holds its homework's notes as text")
    def test_a_kit_for_a_subset_carries_notes_of_its_sections_only(self):
        rubric = json.loads(sk.kit_rubric(ROOT, ["03_shared_tiling"]))
        performance = next(s for s in rubric["report"] if s["section"].startswith("4. "))
        assert isinstance(performance["note"], str)
        assert "4.7" not in performance["note"] and "4.8" not in performance["note"] and "4.9" not in performance["note"]
        assert "ladder" in performance["note"]
        full = json.loads(sk.kit_rubric(ROOT, ["06_tensor_core_wmma", "08_end_to_end", "09_hopper_wgmma"]))
        note = next(s for s in full["report"] if s["section"].startswith("4. "))["note"]
        assert "4.7" in note and "4.8" in note and "4.9" in note

    def test_a_variant_without_rows_is_failed(self):
        g = os.path.join(self.tmp, "g")
        write_run(g, {"a": (31, "PASS")})
        with open(os.path.join(g, "variants_03_shared_tiling.txt"), "a") as f:
            f.write("  b                        fp32: the program stopped before it\n")
        ch, var = self.score(g)
        assert "no result rows" in var["b"]["note"]
        assert float(ch["points"]) == pytest.approx(2 / 2 + 3 / 2 + 1 / 2 + 3, abs=1e-7)


# ==== 4. usage ======================================================================================

class TestGpuLock:
    """wb_gpu_run (gpu_needs.sh), under which grade.sh runs every GPU program: gradings started side by
    side never time their kernels while another's run, and check their results together."""

    # Programs started 0.2 s apart, in the order given, a check (`--shared`, mode "check") or a timing
    # ("timed") each, writing "start MODE" and "end MODE" around a pause of 0.8 s.
    RUN = (". {needs}; for m in {modes}; do o=; [ $m = check ] && o=--shared; wb_gpu_run $o 60 sh -c "
           "'echo start $1 >>\"$0\"; sleep 0.8; echo end $1 >>\"$0\"' {log} $m & sleep 0.2; done; wait")

    def events(self, tmp_path, modes, lock):
        log = tmp_path / "log"
        cmd = self.RUN.format(needs=os.path.join(TOOLS, "gpu_needs.sh"), log=log, modes=" ".join(modes))
        r = subprocess.run(["bash", "-c", cmd], env=dict(os.environ, GRADE_GPU_LOCK=lock), capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        return [tuple(line.split()) for line in log.read_text().splitlines()]

    def test_timed_programs_take_turns(self, tmp_path):
        events = self.events(tmp_path, ["timed"] * 3, str(tmp_path / "lock"))
        assert [w for w, _ in events] == ["start", "end"] * 3

    def test_checks_run_together_and_wait_for_a_timing(self, tmp_path):
        events = self.events(tmp_path, ["check", "check", "timed"], str(tmp_path / "lock"))
        assert events == [("start", "check")] * 2 + [("end", "check")] * 2 + [("start", "timed"), ("end", "timed")]

    def test_a_timing_runs_alone_while_checks_wait(self, tmp_path):
        events = self.events(tmp_path, ["timed", "check", "check"], str(tmp_path / "lock"))
        assert events == [("start", "timed"), ("end", "timed")] + [("start", "check")] * 2 + [("end", "check")] * 2

    def test_without_a_usable_lock_file_the_programs_still_run(self, tmp_path):
        events = self.events(tmp_path, ["timed"] * 3, str(tmp_path / "no" / "such" / "lock"))
        assert [w for w, _ in events] == ["start"] * 3 + ["end"] * 3  # nothing serialised them

    def test_the_timeout_applies_to_the_program(self, tmp_path):
        for mode in ("", "--shared "):
            r = subprocess.run(["bash", "-c", f". {os.path.join(TOOLS, 'gpu_needs.sh')}; wb_gpu_run {mode}1 sleep 30"],
                               env=dict(os.environ, GRADE_GPU_LOCK=str(tmp_path / "lock")), capture_output=True,
                               timeout=20)
            assert r.returncode == 124, mode


class TestUsage:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)

    def test_bad_usage_exits_2_with_one_line(self):
        bad = os.path.join(self.tmp, "rubric.json")
        write(bad, "{ not json")
        blocked = os.path.join(self.tmp, "blocked")
        write_run(blocked, {"a": (31, "PASS")})
        os.makedirs(os.path.join(blocked, "grade.csv"))
        manifest = os.path.join(self.tmp, "m.json")
        write(manifest, "{}")
        gs = os.path.join(TOOLS, "grade.sh")
        for cmd in (GRADE, [*GRADE, "frobnicate"], [*GRADE, "score"],
                    [*GRADE, "score", os.path.join(self.tmp, "none")],
                    [*GRADE, "score", self.tmp],
                    [*GRADE, "score", blocked, "--rubric", bad],
                    [*GRADE, "score", blocked],
                    [*GRADE, "shapes", "x"],
                    [*GRADE, "assemble", "--submission", self.tmp, "--manifest", manifest, "--out", self.tmp],
                    ["bash", gs, "--bogus"], ["bash", gs, "--seed", "abc"],
                    ["bash", gs, "--manifest", manifest],  # no submission
                    ["bash", gs, "--submission", self.tmp],  # no manifest
                    ["bash", gs, "--submission", os.path.join(self.tmp, "none"), "--manifest", manifest],
                    ["bash", gs, "--submission", self.tmp, "--manifest", manifest, "--rubric", "none.json"]):
            r = run(cmd)
            assert r.returncode == 2, (cmd, r.stdout, r.stderr)
            assert len(r.stderr.strip().splitlines()) == 1, (cmd, r.stderr)
            assert "Traceback" not in r.stderr

    @pytest.mark.skipif(IN_A_KIT, reason="this is a student kit: its solution regions were taken out")
    def test_without_the_cpp_lexer_exit_4_and_nothing_graded(self):
        # A python3 without libclang's bindings: a package named clang that cannot be imported.
        shadow = os.path.join(self.tmp, "shadow")
        write(os.path.join(shadow, "clang", "__init__.py"), "raise ImportError('no libclang here')\n")
        kit = os.path.join(self.tmp, "kit")
        files, regions, _ = sk.write_kit(kit, ROOT, ["03_shared_tiling"])
        manifest = os.path.join(self.tmp, "kit.manifest.json")
        write(manifest, json.dumps(sk.kit_manifest(kit, ROOT, ["03_shared_tiling"], files, regions)))
        out = os.path.join(self.tmp, "graded")
        r = run([*GRADE, "assemble", "--submission", kit, "--manifest", manifest, "--out", out],
                env_extra={"PYTHONPATH": shadow + os.pathsep + TOOLS})
        assert r.returncode == 4, r.stderr
        assert r.stderr.strip() == ("grade: the C++ lexer of the grader is missing: install python3-clang (apt) or "
                                    "libclang (pip); tools/setup.sh does. Nothing was graded.")
        assert not os.path.exists(out)

    def test_without_a_gpu_exit_3_with_one_line_and_nothing_written(self):
        manifest = os.path.join(self.tmp, "m.json")
        write(manifest, "{}")
        out = os.path.join(self.tmp, "grades", "s1")  # nothing is made, not even the parent folder
        fake = os.path.join(self.tmp, "fakebin")
        write(os.path.join(fake, "nvidia-smi"), "#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-0)'\n", exe=True)
        path = fake + os.pathsep + os.environ["PATH"]
        for env in ({"GRADE_NO_GPU": "1"}, {"CUDA_VISIBLE_DEVICES": "-1", "PATH": path},
                    {"CUDA_VISIBLE_DEVICES": "", "PATH": path}):
            r = run(["bash", os.path.join(TOOLS, "grade.sh"), "--submission", self.tmp, "--manifest", manifest],
                    {**env, "GRADE_DIR": out})
            lines = (r.stdout + r.stderr).strip().splitlines()
            assert r.returncode == 3, (env, r.stdout, r.stderr)
            assert len(lines) == 1, lines
            assert re.search("^grade: no usable GPU .*nothing was graded$", lines[0])
            assert not os.path.exists(os.path.dirname(out))
        r = run(["make", "--no-print-directory", "grade", f"SUBMISSION={self.tmp}", f"KIT_MANIFEST={manifest}"],
                {"GRADE_NO_GPU": "1", "GRADE_DIR": out})
        assert r.returncode == 2  # make turns the script's 3 into its own 2; the guide says so
        assert "grade: no usable GPU" in r.stderr

    def test_shapes_are_random_odd_and_repeatable(self):
        seen = set()
        for seed in range(200):
            shapes, small = grade.sweep_shapes(seed)
            assert (len(shapes), len(small)) == (4, 2)
            assert all(s in shapes for s in small)
            assert all(1 <= d <= 1500 for s in shapes for d in s)
            assert any(s[2] % 4 for s in shapes)
            assert any(all(d % 16 for d in s) for s in shapes)
            assert any(max(s) <= 40 for s in shapes)
            assert grade.sweep_shapes(seed) == (shapes, small)
            seen.add(tuple(shapes))
        assert len(seen) > 190

    def test_sanitizer_shapes_are_small_odd_and_their_own_draw(self):
        seen = set()
        for seed in range(200):
            drawn = grade.sanitizer_shapes(seed)
            assert len(drawn) == 2
            assert all(17 <= d <= 160 and d % 16 for s in drawn for d in s)
            assert all(s[2] % 4 for s in drawn)
            assert grade.sanitizer_shapes(seed) == drawn
            assert not set(drawn) & set(grade.sweep_shapes(seed)[0])
            seen.add(tuple(drawn))
        assert len(seen) > 190
        r = run([*GRADE, "shapes", "12345"])
        assert r.stdout.splitlines()[2] == ",".join(map(grade.shape_text, grade.sanitizer_shapes(12345)))

    @needs_lexer
    def test_kernel_names_read_as_people_write_them(self):
        assert grade.mangled_parts("_Z16sgemm_smem_tiledILi16EEviiifPKfS1_fPf") == ["sgemm_smem_tiled"]
        assert grade.mangled_parts("_ZN6hopper15wgmma_pipelinedINS_11WgmmaTilingI6__halfEEEvv") == \
                         ["hopper", "wgmma_pipelined"]
        assert grade.short_name(CUBLAS_KERNEL) == "cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nn_align1>"
        assert grade.declared_kernels(read(os.path.join(ROOT, "03_shared_tiling/kernels.cuh"))) == \
                         {"ch03::sgemm_smem_tiled", "ch03::sgemm_smem_transposed_b", "ch03::sgemm_smem_tiled_multirow"}
        text = ("namespace a { namespace b::c {\ntemplate <int T> __global__ void __launch_bounds__(256) k1(int n) {}\n}"
                "\nnamespace { static __global__ void k2() { if (1) {} } }\n}\n__global__ void k3(float* x);\n")
        assert grade.declared_kernels(text) == {"a::b::c::k1", "a::_GLOBAL__N_1::k2", "k3"}

    @needs_lexer
    def test_a_kernel_renamed_into_another_namespace_is_not_the_chapters(self):
        declared = {"03_shared_tiling": {"ch03::sgemm_smem_tiled"}, "04_register_unroll": {"ch04::sgemm_1d"}}
        own = [{"kernel": "_ZN4ch0316sgemm_smem_tiledILi16EEEviiifPKfS2_fPf"}]
        cheat = [{"kernel": "_ZN5cheat16sgemm_smem_tiledILi16EEEviiifPKfS2_fPf"}]
        other = [{"kernel": "_ZN4ch048sgemm_1dILi64EEEviiifPKfS2_fPf"}]
        assert grade.kernel_verdict("03_shared_tiling", own, declared, "own") == ""
        assert grade.kernel_verdict("03_shared_tiling", cheat, declared, "own") == \
            "launched a kernel that 03_shared_tiling does not declare: cheat::sgemm_smem_tiled"
        assert grade.kernel_verdict("03_shared_tiling", other, declared, "own") == \
            "launched chapter 04's kernel ch04::sgemm_1d"
