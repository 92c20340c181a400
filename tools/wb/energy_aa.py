"""wb.energy_aa - `python3 -m wb energy-aa [CSV]`: the energy A/A check of `make bench`.

Chapter 07 makes each baseline's own cuBLAS call again as a variant (`sgemm` is `cublas_sgemm`,
`gemmex_tf32` is `cublas_tf32`, ...), so each of those rows must read the same GFLOP per joule as
its baseline row of the same shape in the same run. How far they land apart is the noise of this
run's energy figures: from 2048^3 up they must agree within the tolerance (5 % unless told),
else the line says TOO NOISY and lists the rows, and differences in GFLOP/J smaller than that band
are not evidence of anything. Prints one line (plus the rows that failed); the exit status is 0
either way (a noisy run is reported, not refused), 2 when the CSV cannot be read.
"""
import sys

from wb import add_command
from wb.bench_summary import NotResultsCsv, load_rows, number, shape_of

CHAPTER = "07_cublas_baseline"
# The A/A variant -> the baseline row it repeats (common/gemm_harness.cu names the baselines).
AA_BASELINE = {"sgemm": "cublas_sgemm", "gemmex_tf32": "cublas_tf32", "gemmex_fp16": "cublas_hgemm",
               "gemmex_bf16": "cublas_bgemm", "lt_fp8_e4m3": "cublaslt_fp8"}
# Smaller calls are over in microseconds: launch overhead and the gaps between launches, not the
# kernel, set the board's power while they run back to back, and it wanders with them. At 1024^3
# (calls of about 15 us on the H200) the A/A rows of results/h200/runs_cae70aa_2c4580d.csv land a few percent
# outside the band; from 2048^3 up they stay inside it. (The timing A/A check of tools/bench.sh
# starts at 1024^3: a time ratio of interleaved rounds is steadier than a power reading.)
MIN_SIDE = 2048
MIN_MNK = MIN_SIDE ** 3
DEFAULT_TOLERANCE_PCT = 5.0


def aa_pairs(rows):
    """[(A/A row, baseline row)] for chapter 07's A/A rows from MIN_SIDE^3 up that passed and have a
    GFLOP/J, each with the latest baseline row of its shape written before it (the same program
    run: a run writes its baselines first)."""
    latest = {}  # (baseline variant, shape) -> row
    pairs = []
    for r in rows:
        if r["chapter"] != CHAPTER or r["status"] != "PASS" or number(r.get("gflops_per_j")) is None:
            continue
        if r["variant"] in AA_BASELINE.values():
            latest[r["variant"], shape_of(r)] = r
        elif r["variant"] in AA_BASELINE:
            m, n, k = shape_of(r)
            base = latest.get((AA_BASELINE[r["variant"]], (m, n, k)))
            if m * n * k >= MIN_MNK and base is not None:
                pairs.append((r, base))
    return pairs


def difference_pct(row, base):
    """How far the A/A row's GFLOP/J lies from its baseline's, in % of the baseline's."""
    return 100.0 * (number(row["gflops_per_j"]) / number(base["gflops_per_j"]) - 1)


def check_text(rows, tolerance_pct=DEFAULT_TOLERANCE_PCT):
    """The check's output: one line, then one indented line per row outside the band."""
    pairs = aa_pairs(rows)
    if not pairs:
        return f"bench: energy A/A check: no row of chapter 07 with gflops_per_j at {MIN_SIDE}^3 or above\n"
    tol = f"{tolerance_pct:g}%"
    bad = [(r, b) for r, b in pairs if abs(difference_pct(r, b)) > tolerance_pct]
    if not bad:
        return (f"bench: energy A/A check: the {len(pairs)} rows of cuBLAS measured against itself ({MIN_SIDE}^3 and up) "
                f"read their baseline's GFLOP/J +- {tol}\n")
    lines = [f"bench: energy A/A check: TOO NOISY, {len(bad)} of {len(pairs)} rows of cuBLAS measured against "
             f"itself are more than {tol} from their baseline's GFLOP/J:"]
    for r, b in bad:
        m, n, k = shape_of(r)
        lines.append(f"    {r['variant']} {m}x{n}x{k}: {number(r['gflops_per_j']):.1f} GFLOP/J, "
                     f"{b['variant']} {number(b['gflops_per_j']):.1f} ({difference_pct(r, b):+.1f}%)")
    return "\n".join(lines) + "\n"


def register(sub):
    p = add_command(sub, "energy-aa", "the energy A/A check of make bench, from a results CSV", __doc__)
    p.add_argument("csv", nargs="?", default="results/bench.csv", help="default: results/bench.csv")
    p.add_argument("--tolerance", type=float, default=DEFAULT_TOLERANCE_PCT, metavar="PCT",
                   help=f"the band around the baseline, in %% (default {DEFAULT_TOLERANCE_PCT:g})")
    p.set_defaults(run=lambda a: main(a.csv, a.tolerance))


def main(path, tolerance_pct=DEFAULT_TOLERANCE_PCT):
    try:
        rows = load_rows(path)
    except OSError as e:
        print(f"energy_aa: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    except NotResultsCsv as e:
        print(f"energy_aa: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(check_text(rows, tolerance_pct))
    return 0
