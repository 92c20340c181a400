"""test_bench_summary.py - `python3 -m wb bench-summary`: which files it reads, and which variant it
calls the best. No GPU needed: the CSVs are written here, in the workbook's schema."""
import csv
import os
import re
import subprocess
import sys

from wb import ROOT
from wb import bench_summary as bs


def summary(path):
    return subprocess.run([sys.executable, "-m", "wb", "bench-summary", str(path)], cwd=ROOT,
                          capture_output=True, text=True)


def write_csv(path, rows, columns=bs.CSV_COLUMNS):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(columns), lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    return path


def row(variant, gflops, pct, chapter="03_shared_tiling", status="PASS", size=4096):
    """One row of the schema; only what the summary reads is filled in."""
    r = dict.fromkeys(bs.CSV_COLUMNS, "")
    r.update(chapter=chapter, variant=variant, dtype="fp32", M=size, N=size, K=size, gflops=gflops,
             pct_cublas=pct, status=status)
    return r


def test_the_columns_are_those_the_programs_write():
    # One list of columns for every tool, in step with the header that common/report.cpp writes.
    with open(os.path.join(ROOT, "common", "report.cpp"), encoding="utf-8") as f:
        m = re.search(r'kCsvHeader =\s*((?:"[^"]*"\s*)+);', f.read())
    header = "".join(re.findall(r'"([^"]*)"', m.group(1))).split(",")
    assert list(bs.CSV_COLUMNS) == header
    assert set(bs.OPTIONAL_COLUMNS) == {"student", "gflops_per_j"}


def test_a_file_of_another_schema_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("name,time\nfoo,1.0\n", encoding="utf-8")
    r = summary(path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert str(path) in lines[0] and "is not a workbook results CSV" in lines[0]
    assert "missing columns chapter, variant, dtype, M, N, K," in lines[0]
    assert "Traceback" not in r.stderr


def test_a_file_that_is_not_text_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "x.csv"
    path.write_bytes(b"\xff\xfe\x00binary\x00\xc3(")
    r = summary(path)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "is not a workbook results CSV" in r.stderr


def test_an_older_file_without_the_student_and_energy_columns_is_read(tmp_path):
    older = [c for c in bs.CSV_COLUMNS if c not in ("student", "gflops_per_j")]
    path = write_csv(tmp_path / "old.csv", [row("tiled", "1000", "50.0")], older)
    r = summary(path)
    assert r.returncode == 0, r.stderr
    assert "03_shared_tiling fp32: tiled (all shapes)" in r.stdout


def test_the_best_variant_is_the_one_with_the_highest_percent_of_cublas(tmp_path):
    # `fast` has more GFLOP/s, but it was timed while the clock ran higher: against cuBLAS in the
    # same rounds, `steady` is ahead. The summary prints % of cuBLAS, so it ranks by it.
    path = write_csv(tmp_path / "b.csv", [row("fast", "1010", "50.0"), row("steady", "1000", "52.0"),
                                          row("wrong", "2000", "99.0", status="FAIL")])
    r = summary(path)
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("03_shared_tiling"))
    assert line.split()[2:] == ["52.0%"]
    assert "  03_shared_tiling fp32: steady (all shapes)" in r.stdout.splitlines()


def test_chapter_01_ranks_by_gflops_its_percentages_have_different_yardsticks():
    # Each CPU row is % of OpenBLAS on as many threads as the variant: 80 % of one thread is slower
    # than 78 % of eight.
    rows = [row("blocked_1t", "120", "80.0", chapter="01_cpu_matmul"),
            row("blocked_omp_8t", "700", "78.0", chapter="01_cpu_matmul")]
    best = bs.best_variants(rows)[("01_cpu_matmul", "fp32")][(4096, 4096, 4096)]
    assert best["variant"] == "blocked_omp_8t"


def test_a_row_without_percent_ranks_below_those_with_it():
    rows = [row("unpaired", "5000", ""), row("paired", "1000", "50.0")]
    assert bs.best_variants(rows)[("03_shared_tiling", "fp32")][(4096, 4096, 4096)]["variant"] == "paired"


def test_the_toolbox_writes_the_same_columns():
    with open(os.path.join(ROOT, "common", "csv.cuh"), encoding="utf-8") as f:
        m = re.search(r'kCsvHeader =\s*((?:"[^"]*"\s*)+);', f.read())
    assert "".join(re.findall(r'"([^"]*)"', m.group(1))).split(",") == list(bs.CSV_COLUMNS)


def test_variants_within_the_a_a_band_of_the_best_are_a_tie():
    rows = [row("cublas_sgemm", 50000, 100), row("a", 40000, 80.0), row("b", 39500, 78.0), row("c", 30000, 60.0),
            row("x", 100, 100.0, chapter="07_cublas_baseline"), row("y", 100, 99.5, chapter="07_cublas_baseline")]
    rows[1]["status"] = "PASS"
    best = bs.best_variants(rows)
    assert bs.ties(rows, best) == {("03_shared_tiling", "fp32", (4096, 4096, 4096)): ["b"]}  # 78 >= 0.97 * 80; not 07
    text = bs.summary_text(rows)
    assert "within 3 % of the best (the A/A check's band: no winner among them):\n  03_shared_tiling fp32 4096: a, b" in text
    rows[2]["status"] = "FAIL"
    assert bs.ties(rows, bs.best_variants(rows)) == {}
