#!/usr/bin/env python3
"""bench_summary.py CSV - the best variant of each chapter with its % of the baseline per shape."""
import csv
import sys
from collections import defaultdict


def main(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["status"] == "PASS" and r["pct_cublas"]]
    best = defaultdict(dict)  # chapter -> shape -> row
    for r in rows:
        if r["variant"].startswith(("cublas", "openblas")):
            continue
        shape = f'{r["M"]}x{r["N"]}x{r["K"]}'
        cur = best[r["chapter"]].get(shape)
        if cur is None or float(r["pct_cublas"]) > float(cur["pct_cublas"]):
            best[r["chapter"]][shape] = r
    print("\nbest variant of each chapter, % of the baseline from the same run (cuBLAS; BLAS for 01):")
    for chapter in sorted(best):
        for shape, r in best[chapter].items():
            print(f'  {chapter:22s} {shape:16s} {r["variant"]:28s} {float(r["gflops"]):10.1f} GFLOP/s '
                  f'{float(r["pct_cublas"]):6.1f}%')


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results/bench.csv")
