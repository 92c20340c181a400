"""wb.bench_compare - `python3 -m wb bench-compare BEFORE AFTER`: did a change move the honest rows?

Compares the % of cuBLAS of every row that passed in both runs, row by row (chapter, variant, dtype,
shape; baselines left out), and says how many moved by more than the tolerance (3 % of the row's
own ratio unless told), the median change, the change per shape, and the rows outside the band,
largest first. Each side is a results CSV, or FILE@GIT: the rows of FILE whose git column starts
with GIT (one CSV that holds both runs, as results/h100/timing_ab.csv does). Compare runs of one
GPU model: the ratios are each run's own, but another card moves them by more than the band.

Exit status: 0 every common row within the band, 1 some row outside it or no row in common, 2 a
file that cannot be read or is not a results CSV.
"""
import statistics
import sys

from wb import add_command
from wb.bench_summary import GPU_BASELINES, NotResultsCsv, load_rows, number
from wb.shapes import shape_label, shape_order

DEFAULT_TOLERANCE_PCT = 3.0


def ratios(spec):
    """{(chapter, variant, dtype, (M, N, K)): pct_cublas} of the PASS rows of FILE or FILE@GIT."""
    path, _, git = spec.partition("@")
    out = {}
    for r in load_rows(path):
        if git and not r["git"].startswith(git):
            continue
        pct = number(r["pct_cublas"])
        if r["status"] != "PASS" or pct is None or pct <= 0 or r["variant"] in GPU_BASELINES:
            continue
        out[r["chapter"], r["variant"], r["dtype"], (int(r["M"]), int(r["N"]), int(r["K"]))] = pct
    return out


def compare(before, after, tolerance_pct):
    """(lines, status): the report, and 0 when every common row moved by at most tolerance_pct %."""
    common = sorted(set(before) & set(after))
    if not common:
        return ["bench-compare: no row passed in both runs"], 1
    change = {k: 100.0 * (after[k] / before[k] - 1.0) for k in common}
    outside = sorted((k for k in common if abs(change[k]) > tolerance_pct), key=lambda k: -abs(change[k]))
    lines = [f"bench-compare: {len(common)} rows in both runs, {len(common) - len(outside)} within "
             f"{tolerance_pct:g} % of their % of cuBLAS; median change {statistics.median(change.values()):+.1f} %"]
    for shape in sorted({k[3] for k in common}, key=shape_order):
        moved = [change[k] for k in common if k[3] == shape]
        lines.append(f"  {shape_label(shape):>16}: {len(moved):3d} rows, median {statistics.median(moved):+5.1f} %, "
                     f"{sum(abs(c) <= tolerance_pct for c in moved)} within")
    for k in outside:
        lines.append(f"  outside: {k[0]} {k[1]} ({k[2]}) {shape_label(k[3])}: {before[k]:.1f} % -> {after[k]:.1f} % "
                     f"({change[k]:+.1f} %)")
    return lines, 1 if outside else 0


def register(sub):
    p = add_command(sub, "bench-compare", "how far the rows of one bench moved against another", __doc__)
    p.add_argument("before", help="results CSV, or CSV@GIT")
    p.add_argument("after", help="results CSV, or CSV@GIT")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE_PCT, metavar="PCT",
                   help=f"the band, in %% of a row's ratio (default {DEFAULT_TOLERANCE_PCT:g})")
    p.set_defaults(run=lambda a: main(a.before, a.after, a.tolerance))


def main(before, after, tolerance_pct=DEFAULT_TOLERANCE_PCT):
    try:
        lines, status = compare(ratios(before), ratios(after), tolerance_pct)
    except (NotResultsCsv, OSError) as e:
        print(f"bench-compare: {e}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    return status
