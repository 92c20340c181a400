#!/usr/bin/env python3
"""best_06.py - the rates behind chapter 06's `best`, and an offline replay of its rule.

`best` (best_06.cuh) models, for each shape, each candidate's time as

    time ~ ceil(tiles / SMs) * BM * BN * K / rate          (wb::busiest_sm_time, common/gemm_tiles.cuh)

where `rate` is the candidate's measured throughput per SM at full load, one number for the 16-byte
path (A's and B's rows start on 16-byte boundaries: cp.async) and one for the element-wise path. It
keeps the candidates modelled within a margin (kShortlistMargin, 1.15) of the smallest time and, when
more than one is left, times them on the first call with that shape and runs the fastest.

This script reads sweeps of random shapes (CSV rows: variant, dtype, M, N, K, ms_median), computes
each candidate's rate as the median over the shapes of its path of

    work per SM / time = ceil(tiles / SMs) * BM * BN * K / ms          (G multiply-adds / s / SM)

and then replays the rule on every shape of every sweep, twice: the model alone (its first choice)
and the shortlist decided by the sweep's own times (what the first call's measurement finds, if it
agrees with the sweep). For each it prints how much slower `best` would be than the fastest ladder
row of the same precision (median, worst, and shapes more than 3% slower), and the shortlist sizes.

    python3 lab/best_06.py                      the sweeps in lab/calib (H200, one run each, the ladder
                                                and the configurations), the ladder sweep of
                                                results/h200/sweeps/after_seed4242, step 10's
                                                configurations (results/h200/tune06_step10.csv) and
                                                step 11's runs (results/h200/runs_cae70aa_2c4580d.csv,
                                                three stages): the data the rates
                                                of best_06.cuh were fitted on. The later re-checks
                                                (after_seed515, after_seed4242_rounds) judge the rule;
                                                give them with --add to see it replayed on them
    python3 lab/best_06.py --add A.csv ...      those and more sweeps (e.g. a fresh best_sweep run)
    python3 lab/best_06.py --margin 1.05        another shortlist margin
    python3 lab/best_06.py --sms 132 A.csv ...  other sweeps only; the CSVs of `python3 -m wb best-sweep run`
                                                (DIR/06_tensor_core_wmma.rR.csv) form one sweep per
                                                folder, a variant timed in several rounds counting
                                                with its median

Candidate names are the variant names of the sweeps (lab/tune_06 prints the configurations).
The rates it prints are the ones to copy into best_06.cuh. A shape where the shortlist holds no
candidate the sweep timed (the sweeps of `python3 -m wb best-sweep` time the ladder rows only) is left out
of the shortlist replay.
"""
import argparse
import csv
import glob
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# precision -> the ladder rows `best` is compared with
LADDER = {
    "fp16": ["wmma_naive", "wmma_smem", "wmma_smem_skewed", "wmma_cp_async", "wmma_smem_epilogue",
             "wmma_128x256_swizzle"],
    "tf32": ["tf32_wmma", "tf32_mma_sync", "tf32_pipelined", "tf32_swizzled"],
}
# precision -> candidates in the order of best_06.cuh: (name in best_06.cuh, variant in the sweeps,
# BM, BN). On a tie of the model the first one wins.
CANDIDATES = {
    "fp16": [("Wmma128x128_4warps_3stage", "h_128x128_w64x64_s3", 128, 128),
             ("Wmma128x256_3stage (step 6)", "wmma_128x256_swizzle", 128, 256),
             ("Wmma128x128_padded (step 3)", "wmma_smem_skewed", 128, 128),
             ("Wmma128x128_3stage (step 4)", "wmma_cp_async", 128, 128),
             ("Wmma128x128_3stage (step 5)", "wmma_smem_epilogue", 128, 128),
             ("Wmma64x64_3stage", "h_64x64_w32x32_s3", 64, 64),
             ("Mma128x256_k32_4stage (step 9)", "hm_128x256_w64x64_s4", 128, 256),
             ("Mma16_128x256_k64_3stage", "hm_128x256_w64x64_k64_s3", 128, 256),
             ("Mma16_64x128_4stage", "hm_64x128_w32x64_s4", 64, 128)],
    "tf32": [("Mma128x128_k32_3stage_swizzled (step 11)", "tf32_swizzled", 128, 128),
             ("Mma128x128_k32_2stage (step 10)", "p_128x128_w64x64_k32_s2", 128, 128),
             ("Mma128x128_k32_2stage (step 8)", "tf32_mma_sync", 128, 128),
             ("Mma64x64_k32_3stage", "m_64x64_w32x32_s3", 64, 64)],
}
# Candidates fitted on the 16-byte path only: the one element-wise shape of their sweep
# (calib/mma16_configs.csv, 1000x1013x4097) gives a 128x256 grid 32 tiles for 132 SMs, too idle for
# a full-load rate. best_06.cuh gives them element-wise rate 0: never shortlisted there.
# Step 10's tile was fitted on the three 16-byte shapes of results/h200/tune06_step10.csv, step 11's
# on the same three shapes in results/h200/runs_cae70aa_2c4580d.csv (three runs, their median); on
# the element-wise path the copies dominate and step 8, their twin there, keeps that path.
VEC16_ONLY = {"hm_128x256_w64x64_s4", "hm_128x256_w64x64_k64_s3", "p_128x128_w64x64_k32_s2", "tf32_swizzled"}
# The same kernel under two names in the sweeps: their ratio shows the noise of one run.
SAME_KERNEL = [("tf32_mma_sync", "m_128x128_w64x64_k32_s2"), ("wmma_128x256_swizzle", "h_128x256_w64x64_s3"),
               ("wmma_smem_epilogue", "h_128x128_w64x32_s3")]
# The runs of step 11 (three stages, beside step 10's ladder row) that its rate is fitted on.
STEP11_RUNS = "runs_cae70aa_2c4580d.csv"
SLOWER = 1.03
MARGIN = 1.15  # kShortlistMargin of best_06.cuh


def vec16(prec, n, k):
    """The 16-byte path: every row of A (K elements) and of B (N) is a whole number of 16 bytes."""
    per16 = 8 if prec == "fp16" else 4
    return n % per16 == 0 and k % per16 == 0


def work_per_sm(shape, bm, bn, sms):
    m, n, k = shape
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    return math.ceil(tiles / sms) * bm * bn * k


def sweep_name(path):
    """lab/calib/NAME_*.csv: NAME; DIR/06_tensor_core_wmma*.csv (python3 -m wb best-sweep): DIR."""
    base = os.path.basename(path)
    if base.startswith("06_tensor_core_wmma"):
        return os.path.basename(os.path.dirname(os.path.abspath(path)))
    return base.split("_")[0]


def load(paths):
    """{(sweep, shape): {variant: ms}} (the median where a sweep timed a variant more than once) and
    the precision of each variant."""
    runs, dtype = {}, {}
    for p in paths:
        sweep = sweep_name(p)
        with open(p, newline="") as f:
            for r in csv.DictReader(f):
                if r.get("status") == "FAIL" or not r.get("ms_median"):
                    continue
                shape = (int(r["M"]), int(r["N"]), int(r["K"]))
                runs.setdefault((sweep, shape), {}).setdefault(r["variant"], []).append(float(r["ms_median"]))
                dtype[r["variant"]] = r["dtype"]
    times = {key: {v: statistics.median(ms) for v, ms in t.items()} for key, t in runs.items()}
    return times, dtype


def rates(times, prec, sms):
    """{candidate variant: (vec16 rate, element-wise rate)}, medians over the shapes of each path."""
    out = {}
    for _, variant, bm, bn in CANDIDATES[prec]:
        per_path = {True: [], False: []}
        for (_, shape), t in times.items():
            if variant in t:
                per_path[vec16(prec, shape[1], shape[2])].append(work_per_sm(shape, bm, bn, sms) / t[variant] / 1e6)
        if variant in VEC16_ONLY:
            per_path[False] = []
        out[variant] = tuple(round(statistics.median(per_path[p])) if per_path[p] else 0 for p in (True, False))
    return out


def modelled(prec, shape, rate, sms):
    """[(modelled time, candidate variant)] in the model's order; a tie keeps the table's order."""
    path = 0 if vec16(prec, shape[1], shape[2]) else 1
    out = [(work_per_sm(shape, bm, bn, sms) / rate[variant][path], i, variant)
           for i, (_, variant, bm, bn) in enumerate(CANDIDATES[prec]) if rate[variant][path] > 0]
    return [(t, v) for t, _, v in sorted(out)]


def choose(prec, shape, rate, sms):
    """The model's first choice (choose_best of best_06.cuh)."""
    return modelled(prec, shape, rate, sms)[0][1]


def shortlist(prec, shape, rate, sms, margin):
    """The candidates modelled within `margin` of the first (shortlist of best_06.cuh)."""
    m = modelled(prec, shape, rate, sms)
    return [v for t, v in m if t <= m[0][0] * margin]


def replay(times, sweep, prec, rate, sms, margin):
    """Per shape of the sweep: (best / fastest ladder row, shape, pick, shortlist size), for the
    model alone (margin None) or the shortlist decided by the sweep's times."""
    out = []
    for (sw, shape), t in sorted(times.items()):
        if sw != sweep or min(shape) < 256:
            continue
        ladder = [t[v] for v in LADDER[prec] if v in t]
        if not ladder:
            continue
        if margin is None:
            picks = [choose(prec, shape, rate, sms)]
        else:
            picks = [v for v in shortlist(prec, shape, rate, sms, margin) if v in t]
        picks = [v for v in picks if v in t]
        if not picks:
            continue
        pick = min(picks, key=lambda v: t[v])
        out.append((t[pick] / min(ladder), shape, pick, len(picks)))
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="*", help="sweep CSVs (default: lab/calib/*.csv)")
    ap.add_argument("--add", nargs="+", default=[], help="sweep CSVs to add to the default ones")
    ap.add_argument("--sms", type=int, default=132, help="SMs of the GPU the sweeps ran on (H200: 132)")
    ap.add_argument("--margin", type=float, default=MARGIN, help=f"shortlist margin (default {MARGIN})")
    a = ap.parse_args(argv)
    results = os.path.join(HERE, "..", "..", "results", "h200")
    default = (sorted(glob.glob(os.path.join(HERE, "calib", "*.csv"))) +
               sorted(glob.glob(os.path.join(results, "sweeps", "after_seed4242", "06_tensor_core_wmma*.csv"))) +
               [p for p in [os.path.join(results, "tune06_step10.csv"), os.path.join(results, STEP11_RUNS)]
                if os.path.exists(p)])
    paths = (a.csv or default) + a.add
    if not paths:
        print("best_06.py: no sweep CSVs found", file=sys.stderr)
        return 2
    times, _ = load(paths)
    status = 0
    for prec in ("fp16", "tf32"):
        rate = rates(times, prec, a.sms)
        print(f"{prec}: rates (G multiply-adds / s / SM; 16-byte path, element-wise path)")
        for name, variant, bm, bn in CANDIDATES[prec]:
            print(f"  {name:40s} {bm:3d}x{bn:<3d} {rate[variant][0]:6d} {rate[variant][1]:6d}   ({variant})")
        for sweep in sorted({s for s, _ in times}):
            for margin in (None, a.margin):
                rows = replay(times, sweep, prec, rate, a.sms, margin)
                if not rows:
                    continue
                ratios = [r for r, _, _, _ in rows]
                worst = [(r, shape, pick) for r, shape, pick, _ in rows if r > SLOWER]
                picks = {}
                for _, _, pick, _ in rows:
                    picks[pick] = picks.get(pick, 0) + 1
                how = ("model alone" if margin is None else
                       f"shortlist {margin:.2f}, {statistics.mean(n for *_, n in rows):.1f} timed per shape")
                print(f"  sweep {sweep}, {how}: {len(ratios)} shapes; best / fastest ladder row: median "
                      f"{statistics.median(ratios):.3f}, min {min(ratios):.3f}, max {max(ratios):.3f}; "
                      f"more than {100 * (SLOWER - 1):.0f}% slower on {len(worst)}")
                print("    picks: " + ", ".join(f"{v} {n}" for v, n in sorted(picks.items())))
                for ratio, shape, pick in sorted(worst, reverse=True):
                    print(f"    {ratio:.3f}  {shape[0]}x{shape[1]}x{shape[2]}  {pick}")
    print("noise of one run: the same kernel under two names, time ratio over all shapes")
    for x, y in SAME_KERNEL:
        r = [t[x] / t[y] for t in times.values() if x in t and y in t]
        if r:
            print(f"  {x} / {y}: median {statistics.median(r):.3f}, min {min(r):.3f}, max {max(r):.3f}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
