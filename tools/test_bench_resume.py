"""test_bench_resume.py - `make bench-resume` (tools/bench.sh --resume), with no GPU.

The real tools/bench.sh runs in a small fake workbook: chapters 01, 02 and 07 on the shapes
bench.sh gives them, whose programs are bash scripts that append rows in the spec's CSV schema for
the --size they get, record each call, and exit with the status a test asks for. A run is cut as a
lost machine leaves it: bench.log ends inside one program run (its "== ./..." line and some of its
output, no "== exit status"), and bench.csv holds some of that run's rows. Then --resume must run
exactly what did not finish, keep the finished rows as they were (same call that wrote them), drop
the partial ones, and leave the CSV and bench_commands.tsv a complete run's. It refuses (status 2,
one line) with no earlier run, and when env.json names another GPU than the (fake) nvidia-smi.

Run: python3 -m pytest tools/test_bench_resume.py
"""
import collections
import csv
import json
import os
import re
import shutil
import stat
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = ("chapter,variant,dtype,M,N,K,alpha,beta,ms_median,ms_min,gflops,cublas_gflops,pct_cublas,pct_peak,"
          "rel_err,status,gpu,cc,driver,runtime,git,timestamp,student,gflops_per_j")
# The fake chapters, their variants (baselines first, as the harness writes them), and the shapes
# bench.sh's SHAPES gives them, in order.
VARIANTS = {
    "01_cpu_matmul": ["openblas_1t", "naive_ijk_1t"],
    "02_naive_kernel": ["cublas_sgemm", "naive_uncoalesced", "naive_coalesced"],
    "07_cublas_baseline": ["cublas_sgemm", "sgemm"],
}
ODD = "1000x1013x4097"
SHAPES = {
    "01_cpu_matmul": ["256", "512", "1024"],
    "02_naive_kernel": ["1024", "2048", "4096", ODD],
    "07_cublas_baseline": ["128", "256", "512", "1024", "2048", "4096", "8192", "4096x4096x1024", ODD],
}
GPU = "NVIDIA H200"

# A chapter's program: rows for its --size (the timestamp column names the call that wrote them),
# then a line of output; exit status FAKE_STATUS_<NN> when --size is FAKE_FAIL_<NN>, else 0.
PROGRAM = r"""#!/usr/bin/env bash
size="" out=""
while [ $# -gt 0 ]; do
  case $1 in --size) size=$2; shift ;; --csv) out=$2; shift ;; esac
  shift
done
echo "@CHAPTER@ $size" >>"$FAKE_CALLS"
call=$(wc -l <"$FAKE_CALLS")
case $size in *x*) IFS=x read -r m n k <<<"$size" ;; *) m=$size n=$size k=$size ;; esac
[ -s "$out" ] || echo "@HEADER@" >"$out"
for v in @VARIANTS@; do
  echo "@CHAPTER@,$v,fp32,$m,$n,$k,1,0,1.000000,0.900000,100.0,100.0,100.00,,1.000e-07,PASS,@GPU@,9.0,,,fake,\
call-$call,,"
done >>"$out"
echo "@CHAPTER@ at $size: fake rows written"
fail_size=FAKE_FAIL_@NN@ fail_status=FAKE_STATUS_@NN@
[ "$size" = "${!fail_size:-}" ] && exit "${!fail_status:-1}"
exit 0
"""


def executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(stat.S_IRWXU)


class Tree:
    """A fake workbook: the real bench.sh and gpu_needs.sh, the wb package (for the summary and the
    energy A/A check), fake chapters and a fake nvidia-smi that names GPU (or fails when None)."""

    def __init__(self, root):
        self.root = root
        tools = root / "tools"
        tools.mkdir()
        for name in ("bench.sh", "gpu_needs.sh"):
            shutil.copy(os.path.join(ROOT, "tools", name), tools / name)
        shutil.copytree(os.path.join(ROOT, "tools", "wb"), tools / "wb",
                        ignore=shutil.ignore_patterns("__pycache__"))
        for chapter, variants in VARIANTS.items():
            executable(root / chapter / chapter, PROGRAM.replace("@CHAPTER@", chapter).replace("@NN@", chapter[:2])
                       .replace("@VARIANTS@", " ".join(variants)).replace("@HEADER@", HEADER).replace("@GPU@", GPU))
        self.bin = root / "bin"
        self.calls_file = root / "calls.log"
        self.results = root / "results"
        self.set_gpu(GPU)

    def set_gpu(self, name):
        body = (f'case "$*" in *name*) echo "{name}" ;; *compute_cap*) echo 9.0 ;; *) echo "GPU 0: {name}" ;; esac'
                if name else "exit 9")
        executable(self.bin / "nvidia-smi", "#!/bin/sh\n" + body + "\n")

    def bench(self, *args, **env):
        """bash tools/bench.sh ARGS; env: FAKE_FAIL_NN / FAKE_STATUS_NN for a failing program run."""
        if self.calls_file.exists():
            self.calls_file.unlink()
        self.calls_file.touch()
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_", "BENCH_"))}
        clean.update(env, FAKE_CALLS=str(self.calls_file),
                     PATH=os.pathsep.join([str(self.bin), clean.get("PATH", "")]))
        return subprocess.run(["bash", "tools/bench.sh", *args], cwd=self.root, env=clean,
                              capture_output=True, text=True, timeout=120)

    def calls(self):
        return [tuple(l.split()) for l in self.calls_file.read_text().splitlines()]

    def read(self, name):
        return (self.results / name).read_text()

    def rows(self):
        with open(self.results / "bench.csv", newline="") as f:
            return list(csv.DictReader(f))

    def keys(self):
        """The CSV's rows as a multiset of (chapter, variant, M, N, K): a duplicate counts twice."""
        return collections.Counter((r["chapter"], r["variant"], r["M"], r["N"], r["K"]) for r in self.rows())

    def write_env(self, name):
        """env.json as 00_env_check --json writes it, cut to what bench.sh reads (GPU 0's name and cc)."""
        env = {"schema": 1, "gpus": [{"id": 0, "name": name, "cc": "9.0"}]}
        (self.results / "env.json").write_text(json.dumps(env, indent=2) + "\n")


def harness_header():
    """The header the common harness writes (kCsvHeader in common/report.cpp)."""
    with open(os.path.join(ROOT, "common", "report.cpp")) as f:
        text = f.read()
    start = text.index("kCsvHeader =")
    return "".join(re.findall(r'"([^"]*)"', text[start:text.index(";", start)]))


def all_runs():
    return [(c, s) for c in VARIANTS for s in SHAPES[c]]


def shape_mnk(shape):
    return tuple(shape.split("x")) if "x" in shape else (shape,) * 3


def complete_keys():
    return collections.Counter((c, v, *shape_mnk(s)) for c, s in all_runs() for v in VARIANTS[c])


def row_shape(row):
    m, n, k = row["M"], row["N"], row["K"]
    return m if m == n == k else f"{m}x{n}x{k}"


@pytest.fixture
def tree(tmp_path):
    return Tree(tmp_path)


@pytest.fixture
def finished(tree):
    """A tree after a complete fresh run (env.json names the fake GPU)."""
    result = tree.bench()
    assert result.returncode == 0, result.stdout + result.stderr
    tree.write_env(GPU)
    return tree


def cut(tree, run, rows_kept=1):
    """Leave results/ as a run stopped inside program run `run` (chapter, shape) leaves them: the log
    ends after its "== ./..." line and one line of output; the CSV has every row of the runs before
    it and the first `rows_kept` of its own."""
    chapter, shape = run
    log = tree.read("bench.log").splitlines(keepends=True)
    start = next(i for i, l in enumerate(log) if l.startswith(f"== ./{chapter}/{chapter} --size {shape} "))
    (tree.results / "bench.log").write_text("".join(log[:start + 2]))
    lines = tree.read("bench.csv").splitlines(keepends=True)
    first = next(i for i, l in enumerate(lines) if l.startswith(chapter + ",")
                 and row_shape(dict(zip(HEADER.split(","), l.split(",")))) == shape)
    (tree.results / "bench.csv").write_text("".join(lines[:first + rows_kept]))
    runs = all_runs()
    return runs[:runs.index(run)]


def test_a_fresh_run_of_the_fake_tree(tree):
    """The fake tree is a faithful stand-in: the harness's header, every run once, in the order of
    SHAPES, every row."""
    assert HEADER == harness_header()
    result = tree.bench()
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree.calls() == all_runs()
    assert tree.keys() == complete_keys()
    assert tree.read("bench.log").count("== exit status 0\n") == len(all_runs())
    assert "A/A check: the " in result.stdout  # chapter 07's rows reached the A/A check


def test_resume_runs_exactly_what_did_not_finish(finished):
    tree = finished
    before = {(r["chapter"], r["variant"], row_shape(r)): r["timestamp"] for r in tree.rows()}
    commands = tree.read("bench_commands.tsv")
    done = cut(tree, ("02_naive_kernel", "2048"), rows_kept=2)
    assert sum(1 for r in tree.rows() if r["chapter"] == "02_naive_kernel" and r["M"] == "2048") == 2

    result = tree.bench("--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"resuming the run in results ({len(done)} program runs done" in result.stdout
    # The interrupted run and every one after it, once each, in order; none that had finished.
    assert tree.calls() == all_runs()[len(done):]
    # No row lost, none twice: the partial rows of the interrupted run were dropped.
    assert tree.keys() == complete_keys()
    # The finished runs' rows are the ones their first call wrote; the others are new.
    for r in tree.rows():
        key = (r["chapter"], r["variant"], row_shape(r))
        if (r["chapter"], row_shape(r)) in done:
            assert r["timestamp"] == before[key], key
        else:
            assert r["timestamp"] != before[key], key
    # The commands list every chapter with all its shapes, as a complete run's do.
    assert tree.read("bench_commands.tsv") == commands
    log = tree.read("bench.log")
    assert f"== resumed: {len(all_runs()) - len(done)} program runs to go\n" in log
    assert log.count("== exit status 0\n") == len(all_runs())
    assert "A/A check: the " in result.stdout  # the checks cover the whole CSV


def test_resume_when_no_run_had_finished(finished):
    """Cut inside the very first program run: nothing is kept but the CSV's header, all runs again."""
    tree = finished
    assert cut(tree, all_runs()[0]) == []
    result = tree.bench("--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree.calls() == all_runs()
    assert tree.read("bench.csv").startswith(HEADER + "\n")
    assert tree.keys() == complete_keys()


def test_resume_with_nothing_finished_and_nothing_built_keeps_the_header(finished):
    """No run finished and none can run now: every row goes, the CSV's header stays."""
    tree = finished
    cut(tree, all_runs()[0], rows_kept=2)
    for chapter in VARIANTS:
        (tree.root / chapter / chapter).chmod(stat.S_IRUSR | stat.S_IWUSR)
    result = tree.bench("--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "01_cpu_matmul is not built" in result.stdout
    assert tree.calls() == []
    assert tree.read("bench.csv") == HEADER + "\n"


def test_a_failed_run_is_rerun_and_a_finished_one_is_not(tree):
    result = tree.bench(FAKE_FAIL_02="4096", FAKE_STATUS_02="1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED (exit status 1)" in result.stdout
    commands = tree.read("bench_commands.tsv")
    result = tree.bench("--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree.calls() == [("02_naive_kernel", "4096")]
    assert tree.keys() == complete_keys()
    # The rerun shape sits among the finished ones in the order of SHAPES, as in a complete run.
    assert tree.read("bench_commands.tsv") == commands
    assert f"--sizes {','.join(SHAPES['02_naive_kernel'])} " in commands


def test_resume_twice_on_a_complete_run_changes_nothing(finished):
    tree = finished
    csv_text, commands = tree.read("bench.csv"), tree.read("bench_commands.tsv")
    for _ in range(2):
        result = tree.bench("--resume")
        assert result.returncode == 0, result.stdout + result.stderr
        assert "every program run is done" in result.stdout
        assert tree.calls() == []
        assert tree.read("bench.csv") == csv_text
        assert tree.read("bench_commands.tsv") == commands
    assert tree.read("bench.log").count("== resumed: 0 program runs to go\n") == 2


def test_resume_with_no_earlier_run_is_refused(tree):
    result = tree.bench("--resume")
    assert result.returncode == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and "no earlier run in results" in result.stderr
    assert tree.calls() == []
    # A log without its CSV is no earlier run either.
    tree.results.mkdir()
    (tree.results / "bench.log").write_text("== ./02_naive_kernel/02_naive_kernel --size 1024\n== exit status 0\n")
    result = tree.bench("--resume")
    assert result.returncode == 2 and len(result.stderr.splitlines()) == 1
    assert tree.calls() == []


def test_resume_on_another_gpu_is_refused(finished):
    tree = finished
    cut(tree, ("07_cublas_baseline", "4096"))
    csv_text, log = tree.read("bench.csv"), tree.read("bench.log")
    tree.set_gpu("NVIDIA A100-SXM4-80GB")
    result = tree.bench("--resume")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert "measured on NVIDIA H200, this GPU is NVIDIA A100-SXM4-80GB" in result.stderr
    assert tree.calls() == []
    assert tree.read("bench.csv") == csv_text and tree.read("bench.log") == log
    # nvidia-smi that names no GPU cannot tell: the run goes on with env.json's.
    tree.set_gpu(None)
    result = tree.bench("--resume")
    assert result.returncode == 0, result.stdout + result.stderr
    assert tree.keys() == complete_keys()
