#!/usr/bin/env python3
"""Evaluates chapter 05's `best` rule offline, on sweeps measured on a GPU.

A sweep is a folder with 05_ladder.csv (the ladder, `05_float4_vectorized --sizes ... --csv`) and
05_tune.csv (the lab table, `lab/tune_05 --sizes ... --csv`) of the same shapes, from one run, or
the folder of `python3 -m wb best-sweep run` (05_float4_vectorized*.csv, tune_05*.csv; a variant timed
in several rounds counts with its median). Ladder rows that run a candidate unsplit stand in for
its lab row where the lab table was not run (LADDER_AS_LAB). The
rule is read from ../kernels.cuh (kBestRates, kMaxSplits, kMinSliceK, kSumBandwidthShare), so what
is evaluated is what the program does. For each shape it picks a candidate and K split exactly as
choose_best does, looks up the measured time of that configuration, and reports:

  - the median and the minimum of best's predicted % of cuBLAS,
  - every shape where best would be more than 3% slower than the fastest ladder row.

A choice whose configuration the sweep did not measure (e.g. a split in 7) is listed, not scored.

  python3 eval_best.py SWEEP_DIR [SWEEP_DIR ...] [--cc 90] [--sms 132] [--bandwidth 4814] [--fit] [-v]

--fit prints, per candidate and path, the median fraction of the SM's FP32 peak that its unsplit
rows reached at the model's tile count, per sweep and over all the sweeps given together: the
latter are the numbers kBestRates holds. The peak comes from the
CSV (gflops / pct_peak). Standard library only.
"""
import argparse
import csv
import math
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "..", "kernels.cuh")
NOT_LADDER = {"best", "cublas_sgemm"}


def ceil_div(a, b):
    return (a + b - 1) // b


def read_rule(path=KERNELS):
    """The rule's tables, parsed from kernels.cuh."""
    text = open(path).read()
    tilings = {}
    for m in re.finditer(r"using (\w+) = Tiling<([\d, ]+)>;", text):
        bm, bn, bk, wm, wn, tm, tn, lanes_n, stages = (int(x) for x in m.group(2).split(","))
        threads = (bm // wm) * (bn // wn) * 32
        # Tiling::MIN_BLOCKS: two blocks per SM when their accumulators fit in 128 registers each
        min_blocks = 2 if bm * bn // threads <= 64 and 2 * threads * 128 <= 65536 else 1
        tilings[m.group(1)] = {"bm": bm, "bn": bn, "fill": min_blocks}
    cands = {}
    for m in re.finditer(r'constexpr BestCandidate (\w+) =\s*candidate<(\w+), [\w:]+>\("(\w+)", (true|false)\)',
                         text):
        cands[m.group(1)] = dict(tilings[m.group(2)], lab=m.group(3), split=m.group(4) == "true")
    table = text[text.index("kBestRates[] = {"):]
    table = table[:table.index("};")]
    rates = [{"min_cc": int(m.group(1)), **cands[m.group(2)], "vec": float(m.group(3)),
              "scalar": float(m.group(4))}
             for m in re.finditer(r"\{(\d+), (\w+), ([\d.]+), ([\d.]+)\}", table)]
    splits = list(range(2, int(re.search(r"kMaxSplits = (\d+);", text).group(1)) + 1))
    min_slice = int(re.search(r"kMinSliceK = (\d+);", text).group(1))
    share = float(re.search(r"kSumBandwidthShare = ([\d.]+);", text).group(1))
    if not rates:
        sys.exit("eval_best: no rows of kBestRates found in " + path)
    return rates, splits, min_slice, share


def busiest_sm_time(M, N, K, bm, bn, splits, sms, rate):
    """wb::busiest_sm_time (common/gemm_tiles.cuh)."""
    tiles = ceil_div(M, bm) * ceil_div(N, bn) * splits
    return ceil_div(tiles, sms) * bm * bn * ceil_div(K, splits) / rate


def estimate_ms(r, vec, M, N, K, splits, gpu, share):
    flops = (r["vec"] if vec else r["scalar"]) * gpu["sm_peak_gflops"] * 1e9
    s = busiest_sm_time(M, N, K, r["bm"], r["bn"], splits, gpu["sms"], flops / 2)
    s = max(s, r["fill"] * r["bm"] * r["bn"] * ceil_div(K, splits) / (flops / 2))
    if splits > 1:
        s += 2.0 * splits * M * N * 4 / (share * gpu["bandwidth_gbs"] * 1e9)
    return s * 1e3


def choose(M, N, K, vec, gpu, rule):
    """(estimate in ms, rate row, splits), as choose_best."""
    rates, splits, min_slice, share = rule
    gen = max(r["min_cc"] for r in rates if r["min_cc"] <= gpu["cc"])
    best = None
    for r in rates:
        if r["min_cc"] != gen:
            continue
        for s in [1] + ([x for x in splits if K // x >= min_slice] if r["split"] else []):
            t = estimate_ms(r, vec, M, N, K, s, gpu, share)
            if best is None or t < best[0]:
                best = (t, r, s)
    return best


def lab_row(r, s):
    return r["lab"] if s == 1 else "%s_sk%d" % (r["lab"], s)


# Ladder rows that run a candidate's configuration unsplit, under their ladder names.
LADDER_AS_LAB = {"warptile_cp_async": "async3_128x128x8", "warptile_db_regs": "regs2_128x128x8"}


def sweep_files(folder):
    """(path, is_ladder) of a sweep: 05_ladder.csv + 05_tune.csv, or the CSVs of best_sweep.py run
    (05_float4_vectorized*.csv: the ladder, tune_05*.csv: the lab table; several rounds allowed)."""
    names = sorted(os.listdir(folder))
    out = [(n, n == "05_ladder.csv" or n.startswith("05_float4_vectorized")) for n in names
           if n in ("05_ladder.csv", "05_tune.csv") or (n.endswith(".csv") and
                                                         n.startswith(("05_float4_vectorized", "tune_05")))]
    return [(os.path.join(folder, n), ladder) for n, ladder in out]


def load(folder):
    """{shape: {variant: ms}} (the median over the rounds where a variant was timed more than once;
    "_ladder": the ladder's variant names) and the FP32 peak the CSVs were computed with."""
    times, ladder_names, peak = {}, {}, []
    files = sweep_files(folder)
    if not files:
        sys.exit("eval_best: no sweep CSVs in " + folder)
    for path, is_ladder in files:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("status") == "FAIL" or not row.get("ms_median"):
                    continue
                shape = (int(row["M"]), int(row["N"]), int(row["K"]))
                times.setdefault(shape, {}).setdefault(row["variant"], []).append(float(row["ms_median"]))
                if float(row.get("pct_peak") or 0) > 0:
                    peak.append(float(row["gflops"]) / float(row["pct_peak"]) * 100)
                if is_ladder:
                    ladder_names.setdefault(shape, set()).add(row["variant"])
    rows = {}
    for shape, v in times.items():
        rows[shape] = {name: statistics.median(ms) for name, ms in v.items()}
        for ladder, lab in LADDER_AS_LAB.items():
            if ladder in rows[shape] and lab not in rows[shape]:
                rows[shape][lab] = rows[shape][ladder]
        rows[shape]["_ladder"] = ladder_names.get(shape, set())
    return rows, statistics.median(peak)


def fit(rows, rule, gpu, pooled=None):
    """Prints each candidate's median share of the SM's FP32 peak per path; adds the shares to
    `pooled` ({(lab row, path): [shares]}) when given."""
    rates = rule[0]
    for r in rates:
        if r["min_cc"] != max(x["min_cc"] for x in rates if x["min_cc"] <= gpu["cc"]):
            continue
        for path, vec in (("vec", True), ("scalar", False)):
            shares = []
            for (M, N, K), v in rows.items():
                if (N % 4 == 0 and K % 4 == 0) != vec or r["lab"] not in v:
                    continue
                work = busiest_sm_time(M, N, K, r["bm"], r["bn"], 1, gpu["sms"], 1.0) * 2
                shares.append(work / (v[r["lab"]] * 1e-3) / (gpu["sm_peak_gflops"] * 1e9))
            if shares:
                print("  %-20s %-6s median share %.3f over %d shapes (min %.3f, max %.3f)"
                      % (r["lab"], path, statistics.median(shares), len(shares), min(shares), max(shares)))
                if pooled is not None:
                    pooled.setdefault((r["lab"], path), []).extend(shares)


def evaluate(folder, rule, args, pooled=None):
    rows, peak = load(folder)
    gpu = {"cc": args.cc, "sms": args.sms, "sm_peak_gflops": peak / args.sms, "bandwidth_gbs": args.bandwidth}
    print("%s: %d shapes, FP32 peak %.0f GFLOP/s (%.1f per SM)" % (folder, len(rows), peak, peak / args.sms))
    if args.fit:
        fit(rows, rule, gpu, pooled)
    pcts, slow, unmeasured = [], [], []
    for (M, N, K), v in sorted(rows.items()):
        vec = N % 4 == 0 and K % 4 == 0
        _, r, s = choose(M, N, K, vec, gpu, rule)
        name = lab_row(r, s)
        if name not in v:
            unmeasured.append("%dx%dx%d -> %s" % (M, N, K, name))
            continue
        ladder = min(v[x] for x in v["_ladder"] if x not in NOT_LADDER)
        pct = 100 * v["cublas_sgemm"] / v[name]
        pcts.append(pct)
        if v[name] > 1.03 * ladder:
            slow.append("%dx%dx%d: %s %.1f%% slower than the fastest ladder row"
                        % (M, N, K, name, 100 * (v[name] / ladder - 1)))
        if args.verbose:
            print("  %5dx%5dx%5d %-6s %-24s %5.1f%% of cuBLAS (fastest ladder row %5.1f%%)"
                  % (M, N, K, "float4" if vec else "4-byte", name, pct, 100 * v["cublas_sgemm"] / ladder))
    if pcts:
        print("  best: median %.1f%% of cuBLAS, min %.1f%%, below 90%% on %d of %d, more than 3%% slower "
              "than the ladder on %d" % (statistics.median(pcts), min(pcts), sum(p < 90 for p in pcts),
                                          len(pcts), len(slow)))
    for line in slow + ["not measured: " + u for u in unmeasured]:
        print("  " + line)
    return pcts, slow


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("sweeps", nargs="+", help="folders with 05_ladder.csv and 05_tune.csv")
    p.add_argument("--cc", type=int, default=90, help="compute capability as a number (90)")
    p.add_argument("--sms", type=int, default=132, help="multiprocessors (132 on an H200)")
    p.add_argument("--bandwidth", type=float, default=4814.3, help="DRAM peak in GB/s (H200: 4814)")
    p.add_argument("--fit", action="store_true", help="print the median share of peak per candidate")
    p.add_argument("-v", "--verbose", action="store_true", help="one line per shape")
    args = p.parse_args()
    rule = read_rule()
    pooled = {}
    for folder in args.sweeps:
        evaluate(folder, rule, args, pooled)
    if args.fit and len(args.sweeps) > 1:
        print("all sweeps together (the numbers kBestRates holds):")
        for (lab, path), shares in sorted(pooled.items()):
            print("  %-20s %-6s median share %.3f over %d shapes" % (lab, path, statistics.median(shares),
                                                                   len(shares)))


if __name__ == "__main__":
    main()
