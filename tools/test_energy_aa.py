"""The energy A/A check (wb.energy_aa): chapter 07's repeated cuBLAS calls against their baselines."""
import os
import subprocess
import sys

from wb import ROOT, energy_aa

HEADER = ("chapter,variant,dtype,M,N,K,alpha,beta,ms_median,ms_min,gflops,cublas_gflops,pct_cublas,pct_peak,"
          "rel_err,status,gpu,cc,driver,runtime,git,timestamp,student,gflops_per_j")


def row(variant, size, gflops_per_j, chapter="07_cublas_baseline", status="PASS"):
    return (f"{chapter},{variant},fp32,{size},{size},{size},1,0,1.0,1.0,100,100,100.00,,1e-7,{status},"
            f"NVIDIA H200,9.0,13.0,13.0,abc,2026-12-03T11:00:00Z,,{gflops_per_j}")


def write_csv(tmp_path, rows):
    path = tmp_path / "bench.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def run(path, *options):
    return subprocess.run([sys.executable, "-m", "wb", "energy-aa", str(path), *options], capture_output=True,
                          text=True, cwd=ROOT)


def test_rows_within_the_band_pass(tmp_path):
    path = write_csv(tmp_path, [row("cublas_sgemm", 2048, 100), row("cublas_tf32", 2048, 500),
                                row("sgemm", 2048, 103), row("gemmex_tf32", 2048, 496)])
    r = run(path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("bench: energy A/A check: the 2 rows of cuBLAS measured against itself (2048^3 and up) "
                        "read their baseline's GFLOP/J +- 5%\n")


def test_a_planted_30_percent_difference_is_reported(tmp_path):
    path = write_csv(tmp_path, [row("cublas_hgemm", 2048, 800), row("cublaslt_fp8", 2048, 1600),
                                row("gemmex_fp16", 2048, 810), row("lt_fp8_e4m3", 2048, 1120)])
    r = run(path)
    assert r.returncode == 0, r.stderr
    first, *rows = r.stdout.splitlines()
    assert first.startswith("bench: energy A/A check: TOO NOISY, 1 of 2 rows")
    assert rows == ["    lt_fp8_e4m3 2048x2048x2048: 1120.0 GFLOP/J, cublaslt_fp8 1600.0 (-30.0%)"]
    # A wider band lets it through.
    assert "TOO NOISY" not in run(path, "--tolerance", "35").stdout


def test_only_chapter_07_passed_rows_from_2048_cubed_up_count(tmp_path):
    rows = [row("cublas_sgemm", 1024, 50), row("sgemm", 1024, 10),  # launch-bound: left out
            row("cublas_sgemm", 2048, 100, chapter="05_float4_vectorized"), row("sgemm", 2048, 10,
                                                                                 chapter="05_float4_vectorized"),
            row("cublas_bgemm", 2048, 900), row("gemmex_bf16", 2048, 10, status="FAIL"),
            row("cublas_tf32", 2048, ""), row("gemmex_tf32", 2048, 500)]  # baseline without energy
    r = run(write_csv(tmp_path, rows))
    assert r.stdout == "bench: energy A/A check: no row of chapter 07 with gflops_per_j at 2048^3 or above\n"


def test_each_row_is_paired_with_the_baseline_of_its_own_run(tmp_path):
    # Two runs appended to one file: each A/A row meets the baseline written before it.
    rows = [row("cublas_sgemm", 2048, 100), row("sgemm", 2048, 101),
            row("cublas_sgemm", 2048, 200), row("sgemm", 2048, 199)]
    pairs = energy_aa.aa_pairs(energy_aa.load_rows(write_csv(tmp_path, rows)))
    assert [(a["gflops_per_j"], b["gflops_per_j"]) for a, b in pairs] == [("101", "100"), ("199", "200")]


def test_an_unreadable_csv_is_one_line_and_status_2(tmp_path):
    r = run(tmp_path / "missing.csv")
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1


def test_a_csv_of_another_schema_is_one_line_and_exit_2(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("name,value\nx,1\n")
    r = subprocess.run([sys.executable, "-m", "wb", "energy-aa", str(path)], capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1, r.stderr
    assert "is not a workbook results CSV: missing columns chapter" in r.stderr
