"""wb.bench_compare: how far the rows of one bench moved against another."""
import csv
import os

from wb import bench_compare
from wb.bench_summary import CSV_COLUMNS


def write_csv(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in CSV_COLUMNS})


def row(variant, pct, git, shape=(1024, 1024, 1024), status="PASS", chapter="05_float4_vectorized"):
    m, n, k = shape
    return dict(chapter=chapter, variant=variant, dtype="fp32", M=m, N=n, K=k, pct_cublas=str(pct), status=status,
                git=git)


def test_rows_within_the_band_pass(tmp_path, capsys):
    path = str(tmp_path / "ab.csv")
    write_csv(path, [row("cublas_sgemm", 100, "aaa"), row("best", 90.0, "aaa"), row("warptile", 50.0, "aaa"),
                     row("cublas_sgemm", 100, "bbb"), row("best", 92.0, "bbb"), row("warptile", 49.0, "bbb")])
    assert bench_compare.main(path + "@aaa", path + "@bbb") == 0
    out = capsys.readouterr().out
    assert out.startswith("bench-compare: 2 rows in both runs, 2 within 3 % of their % of cuBLAS")
    assert "outside" not in out


def test_a_row_outside_the_band_is_named(tmp_path, capsys):
    before, after = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    write_csv(before, [row("best", 90.0, "x"), row("warptile", 50.0, "x", shape=(1000, 1013, 4097)),
                       row("splitk", 40.0, "x")])
    write_csv(after, [row("best", 90.5, "y"), row("warptile", 48.0, "y", shape=(1000, 1013, 4097)),
                      row("splitk", 10.0, "y", status="FAIL")])  # a failed row is no ratio
    assert bench_compare.main(before, after) == 1
    out = capsys.readouterr().out
    assert "2 rows in both runs, 1 within 3 %" in out
    assert "outside: 05_float4_vectorized warptile (fp32) 1000x1013x4097: 50.0 % -> 48.0 % (-4.0 %)" in out
    assert bench_compare.main(before, after, tolerance_pct=5) == 0


def test_no_common_row_and_foreign_files(tmp_path, capsys):
    path = str(tmp_path / "a.csv")
    write_csv(path, [row("best", 90.0, "x")])
    assert bench_compare.main(path + "@x", path + "@y") == 1
    assert "no row passed in both runs" in capsys.readouterr().out
    other = tmp_path / "other.csv"
    other.write_text("name,value\na,1\n")
    assert bench_compare.main(path, str(other)) == 2
    assert "is not a workbook results CSV" in capsys.readouterr().err
    assert bench_compare.main(path, os.path.join(str(tmp_path), "missing.csv")) == 2
