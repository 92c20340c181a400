#!/usr/bin/env python3
"""best_sweep.py - does each chapter's `best` really pick well? A sweep of random shapes.

  python3 tools/best_sweep.py shapes --count 30 --seed 7 [--lo 256 --hi 8192]
      prints a comma-separated list of random MxNxK shapes (for --sizes)
  python3 tools/best_sweep.py run --count 30 --seed 7 --out DIR
      runs the ladders of chapters 05 and 06 on those shapes (one run each, CSV under DIR) and
      then evaluates them as below
  python3 tools/best_sweep.py evaluate FILE.csv [FILE.csv ...]
      for every chapter and precision in the CSV rows: the `best` row's % of cuBLAS (median, min)
      and, per shape, how much slower `best` is than the fastest ladder row of the same chapter and
      precision. Exit status 1 when a goal fails (--slack, --median, --floor), else 0.

The goals (issue "ladder and lab"): `best` never more than 3% slower than the fastest ladder row on
any shape with M, N, K >= 256, and chapter 05's `best` at a median of at least 90% of cuBLAS with no
shape below 75%.
"""
import argparse
import csv
import os
import random
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAPTERS = ["05_float4_vectorized", "06_tensor_core_wmma"]


def random_shapes(count, seed, lo, hi):
    rng = random.Random(seed)
    return ["%dx%dx%d" % (rng.randint(lo, hi), rng.randint(lo, hi), rng.randint(lo, hi)) for _ in range(count)]


def is_best(variant):
    return variant == "best" or variant.endswith("_best")


def evaluate(rows, slack=1.03, median_goal=None, floor_goal=None, median_chapter="05_float4_vectorized"):
    """Returns (lines of text, list of failures)."""
    groups = {}
    for r in rows:
        if r["variant"].startswith("cublas") or r.get("status") == "FAIL":
            continue
        key = (r["chapter"], r["dtype"])
        shape = (int(r["M"]), int(r["N"]), int(r["K"]))
        groups.setdefault(key, {}).setdefault(shape, {})[r["variant"]] = r
    lines, failures = [], []
    for (chapter, dtype), shapes in sorted(groups.items()):
        pcts, worst = [], (0.0, None, None)
        for shape, variants in sorted(shapes.items()):
            best = [v for v in variants if is_best(v)]
            ladder = [v for v in variants if not is_best(v)]
            if len(best) != 1 or not ladder:
                continue
            b = variants[best[0]]
            pcts.append(float(b["pct_cublas"]))
            fastest = min(ladder, key=lambda v: float(variants[v]["ms_median"]))
            ratio = float(b["ms_median"]) / float(variants[fastest]["ms_median"])
            if min(shape) >= 256 and ratio > worst[0]:
                worst = (ratio, shape, fastest)
            if min(shape) >= 256 and ratio > slack:
                failures.append("%s %s %dx%dx%d: %s is %.1f%% slower than %s" %
                                (chapter, dtype, *shape, best[0], 100 * (ratio - 1), fastest))
        if not pcts:
            continue
        med, low = statistics.median(pcts), min(pcts)
        lines.append("%-22s %-5s shapes %3d  best: median %5.1f%% of cuBLAS, min %5.1f%%; worst vs fastest ladder "
                     "row: %+.1f%% (%s, %s)" % (chapter, dtype, len(pcts), med, low, 100 * (worst[0] - 1),
                                                 "x".join(map(str, worst[1])) if worst[1] else "-", worst[2]))
        if chapter == median_chapter:
            if median_goal is not None and med < median_goal:
                failures.append("%s %s: median %.1f%% < %.1f%%" % (chapter, dtype, med, median_goal))
            if floor_goal is not None and low < floor_goal:
                failures.append("%s %s: min %.1f%% < %.1f%%" % (chapter, dtype, low, floor_goal))
    return lines, failures


def read_rows(paths):
    rows = []
    for p in paths:
        with open(p, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("shapes", "run"):
        p = sub.add_parser(name)
        p.add_argument("--count", type=int, default=30)
        p.add_argument("--seed", type=int, default=7)
        p.add_argument("--lo", type=int, default=256)
        p.add_argument("--hi", type=int, default=8192)
        if name == "run":
            p.add_argument("--out", required=True)
    ev = sub.add_parser("evaluate")
    ev.add_argument("csv", nargs="+")
    for p in (sub.choices["run"], ev):
        p.add_argument("--slack", type=float, default=1.03)
        p.add_argument("--median", type=float, default=90.0)
        p.add_argument("--floor", type=float, default=75.0)
    a = ap.parse_args(argv)
    if a.cmd != "evaluate" and not (1 <= a.lo <= a.hi and a.count >= 1):
        print("best_sweep: need 1 <= --lo <= --hi and --count >= 1", file=sys.stderr)
        return 2
    if a.cmd == "shapes":
        print(",".join(random_shapes(a.count, a.seed, a.lo, a.hi)))
        return 0
    if a.cmd == "run":
        os.makedirs(a.out, exist_ok=True)
        if not os.access(a.out, os.W_OK):
            print("best_sweep: cannot write to %s" % a.out, file=sys.stderr)
            return 2
        sizes = ",".join(random_shapes(a.count, a.seed, a.lo, a.hi))
        paths = []
        for ch in CHAPTERS:
            out = os.path.join(a.out, ch + ".csv")
            if os.path.exists(out):
                os.remove(out)
            cmd = [os.path.join(ROOT, ch, ch), "--sizes", sizes, "--no-check", "--csv", out]
            print("+ " + " ".join(cmd), flush=True)
            rc = subprocess.call(cmd)
            if rc != 0:
                print("best_sweep: %s exited with status %d" % (ch, rc), file=sys.stderr)
                return rc
            paths.append(out)
    else:
        paths = a.csv
    lines, failures = evaluate(read_rows(paths), a.slack, a.median, a.floor)
    print("\n".join(lines))
    for f in failures:
        print("GOAL MISSED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
