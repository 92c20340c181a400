"""wb.best_sweep - `python3 -m wb best-sweep`: does each chapter's `best` really pick well? A sweep of random shapes.

  python3 -m wb best-sweep shapes --count 30 --seed 7 [--lo 256 --hi 8192]
      prints a comma-separated list of random MxNxK shapes (for --sizes)
  python3 -m wb best-sweep run --count 30 --seed 7 --out DIR [--rounds 3] [--reps 10]
                                [--sizes MxNxK,...]
      runs the ladders of chapters 05 and 06 on those shapes (or on --sizes), --rounds times in
      turn (05, 06, 05, 06, ...; CSVs DIR/CHAPTER.rR.csv), and then evaluates them as below
  python3 -m wb best-sweep evaluate FILE.csv [FILE.csv ...]
      for every chapter and precision in the CSV rows: the `best` row's % of cuBLAS (median, min)
      and, per shape, how much slower `best` is than the fastest ladder row of the same chapter and
      precision. Exit status 1 when a goal fails (--slack, --median, --floor), else 0. A variant
      timed on the same shape in several files (rounds) counts with the median of its times.

Why rounds: on the H200 one run of the same kernel under two names differed by up to 14% on one
shape (06, lab/best_06.py), and the fastest of five ladder rows picks up whichever was lucky, so a
3% goal needs steadier numbers. Rounds are minutes apart: a clock or thermal state that slows one
round's row does not slow the others, and the median of three drops it.

The goals (issue "ladder and lab"): `best` never more than 3% slower than the fastest ladder row on
any shape with M, N, K >= 256, and chapter 05's `best` at a median of at least 90% of cuBLAS with no
shape below 75%.
"""
import csv
import os
import random
import statistics
import subprocess
import sys

from wb import ROOT, add_command, bench_summary
CHAPTERS = ["05_float4_vectorized", "06_tensor_core_wmma"]


def random_shapes(count, seed, lo, hi):
    rng = random.Random(seed)
    return ["%dx%dx%d" % (rng.randint(lo, hi), rng.randint(lo, hi), rng.randint(lo, hi)) for _ in range(count)]


def is_best(variant):
    return variant == "best" or variant.endswith("_best")


def merge_rounds(rows):
    """{(chapter, dtype): {shape: {variant: row}}}, a row per variant and shape: where several rows
    (rounds) time the same one, the median of their ms_median and of their pct_cublas."""
    timed = {}
    for r in rows:
        if (r.get("variant") or "cublas").startswith("cublas") or bench_summary.is_failure(r):
            continue
        try:  # a run stopped by a timeout may leave its last line cut short
            shape = (int(r["M"]), int(r["N"]), int(r["K"]))
            float(r["ms_median"]), float(r["pct_cublas"])
        except (KeyError, TypeError, ValueError):
            continue
        per_shape = timed.setdefault((r["chapter"], r["dtype"]), {}).setdefault(shape, {})
        per_shape.setdefault(r["variant"], []).append(r)
    groups = {}
    for key, shapes in timed.items():
        for shape, variants in shapes.items():
            for variant, rs in variants.items():
                groups.setdefault(key, {}).setdefault(shape, {})[variant] = {
                    "ms_median": statistics.median(float(r["ms_median"]) for r in rs),
                    "pct_cublas": statistics.median(float(r["pct_cublas"]) for r in rs),
                    "rounds": len(rs)}
    return groups


def evaluate(rows, slack=1.03, median_goal=None, floor_goal=None, median_chapter="05_float4_vectorized"):
    """Returns (lines of text, list of failures)."""
    groups = merge_rounds(rows)
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
        rounds = sorted({v["rounds"] for s in shapes.values() for v in s.values()})
        lines.append("%-22s %-5s shapes %3d  best: median %5.1f%% of cuBLAS, min %5.1f%%; worst vs fastest ladder "
                     "row: %+.1f%% (%s, %s)%s" % (chapter, dtype, len(pcts), med, low, 100 * (worst[0] - 1),
                                                   "x".join(map(str, worst[1])) if worst[1] else "-", worst[2],
                                                   "" if rounds == [1] else "; median of %s rounds" %
                                                   "/".join(map(str, rounds))))
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


def register(top):
    ap, sub = add_command(top, "best-sweep", "does each chapter's best pick well? a sweep of random shapes", __doc__,
                              nested=True)
    for name in ("shapes", "run"):
        p = sub.add_parser(name)
        p.add_argument("--count", type=int, default=30)
        p.add_argument("--seed", type=int, default=7)
        p.add_argument("--lo", type=int, default=256)
        p.add_argument("--hi", type=int, default=8192)
        if name == "run":
            p.add_argument("--out", required=True)
            p.add_argument("--sizes", help="these shapes (MxNxK,...) instead of random ones")
            p.add_argument("--rounds", type=int, default=1, help="runs of each chapter, in turn")
            p.add_argument("--reps", type=int, default=10, help="timed launches per row and round")
    ev = sub.add_parser("evaluate")
    ev.add_argument("csv", nargs="+")
    for p in (sub.choices["run"], ev):
        p.add_argument("--slack", type=float, default=1.03)
        p.add_argument("--median", type=float, default=90.0)
        p.add_argument("--floor", type=float, default=75.0)
    ap.set_defaults(run=main)


def main(a):
    if a.cmd != "evaluate" and not (1 <= a.lo <= a.hi and a.count >= 1):
        print("best_sweep: need 1 <= --lo <= --hi and --count >= 1", file=sys.stderr)
        return 2
    if a.cmd == "run" and (a.rounds < 1 or a.reps < 1):
        print("best_sweep: need --rounds >= 1 and --reps >= 1", file=sys.stderr)
        return 2
    if a.cmd == "shapes":
        print(",".join(random_shapes(a.count, a.seed, a.lo, a.hi)))
        return 0
    if a.cmd == "run":
        os.makedirs(a.out, exist_ok=True)
        if not os.access(a.out, os.W_OK):
            print("best_sweep: cannot write to %s" % a.out, file=sys.stderr)
            return 2
        sizes = a.sizes or ",".join(random_shapes(a.count, a.seed, a.lo, a.hi))
        with open(os.path.join(a.out, "shapes.txt"), "w") as f:
            f.write(sizes + "\n")
        paths = []
        for rnd in range(1, a.rounds + 1):
            for ch in CHAPTERS:
                out = os.path.join(a.out, "%s.r%d.csv" % (ch, rnd))
                if os.path.exists(out):
                    os.remove(out)
                cmd = [os.path.join(ROOT, ch, ch), "--sizes", sizes, "--no-check", "--reps", str(a.reps),
                       "--csv", out]
                print("+ " + " ".join(cmd), flush=True)
                rc = subprocess.call(cmd, stdout=subprocess.DEVNULL)
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

