"""wb.bench_summary - `python3 -m wb bench-summary [CSV]`: the closing table of `make bench`: the best variant of each chapter at
each shape, as % of cuBLAS from the same run.

Also the reading side of results/bench.csv for the report (wb.report): loading the rows, telling the
baselines from the variants, picking the best variant, and ordering shapes. Standard library only.

% of cuBLAS compares like with like: an FP32 variant with cuBLAS SGEMM, a TF32 variant with cuBLAS
in TF32, an FP16 variant with cuBLAS on FP16 inputs, a BF16 variant with cuBLAS on BF16 inputs, each
timed in the same program run on the same shape (the CSV's pct_cublas column). Chapter 01 runs on
the CPU and its own baseline is OpenBLAS: its row of the summary is what its CSV rows say, % of
OpenBLAS on as many threads from the same run, and the row says so. The report (wb.report)
also sets chapter 01 beside the GPU: pct_of_cublas divides its GFLOP/s by cuBLAS SGEMM on the same
shape from a GPU chapter of the same bench run (chapter 07's when it has one).

The best variant is the one with the highest % of cuBLAS, the figure printed (see rank), and a
file whose header is not the workbook's (CSV_COLUMNS) is refused in one line, exit status 2.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

from wb import add_command
from wb.shapes import flops, shape_label, shape_order  # noqa: F401  (the report uses them from here too)

# The rows the GPU harness times as the baseline of every chapter (common/gemm_harness.cu).
GPU_BASELINES = {"cublas_sgemm": "fp32", "cublas_tf32": "tf32", "cublas_hgemm": "fp16", "cublas_bgemm": "bf16",
                 "cublaslt_fp8": "fp8_e4m3"}
CPU_CHAPTER_PREFIX = "01_"
PREFERRED_CUBLAS_CHAPTER = "07_cublas_baseline"


# The columns of a results CSV, as common/report.cpp writes them (kCsvHeader). Files written
# before the student and energy columns existed lack them, and are read all the same.
CSV_COLUMNS = ("chapter", "variant", "dtype", "M", "N", "K", "alpha", "beta", "ms_median", "ms_min", "gflops",
               "cublas_gflops", "pct_cublas", "pct_peak", "rel_err", "status", "gpu", "cc", "driver", "runtime",
               "git", "timestamp", "student", "gflops_per_j")
OPTIONAL_COLUMNS = ("student", "gflops_per_j")
REQUIRED_COLUMNS = tuple(c for c in CSV_COLUMNS if c not in OPTIONAL_COLUMNS)


class NotResultsCsv(ValueError):
    """A file that is not a results CSV of the workbook; the message is one line that names it."""


def load_rows(path):
    """The CSV rows as dicts (the spec's columns), in file order. Raises NotResultsCsv when the
    header lacks a column the tools read (an empty file has no rows and passes), OSError when the
    file cannot be read."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or REQUIRED_COLUMNS)]
            if missing:
                raise NotResultsCsv(f"{path} is not a workbook results CSV: missing columns {', '.join(missing)}; "
                                    f"make bench writes one")
            return list(reader)
    except (UnicodeDecodeError, csv.Error) as e:
        raise NotResultsCsv(f"{path} is not a workbook results CSV ({e}); make bench writes one") from None


def number(text):
    """A CSV number, or None for an empty field (not measured)."""
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def is_cpu_chapter(chapter):
    return chapter.startswith(CPU_CHAPTER_PREFIX)


def is_baseline(row):
    """True for the library rows a chapter compares itself with (cuBLAS; OpenBLAS in chapter 01)."""
    if is_cpu_chapter(row["chapter"]):
        return row["variant"].startswith("openblas")
    return row["variant"] in GPU_BASELINES


def shape_of(row):
    return int(row["M"]), int(row["N"]), int(row["K"])


def cublas_sgemm_reference(rows):
    """(M, N, K) -> GFLOP/s of cuBLAS SGEMM, for chapter 01's % of cuBLAS: chapter 07's baseline
    row where there is one, else the median of the other GPU chapters' SGEMM baseline rows."""
    found = defaultdict(lambda: defaultdict(list))  # shape -> chapter -> [gflops]
    for r in rows:
        g = number(r["gflops"])
        if r["variant"] == "cublas_sgemm" and r["status"] == "PASS" and g:
            found[shape_of(r)][r["chapter"]].append(g)
    ref = {}
    for shape, by_chapter in found.items():
        values = by_chapter.get(PREFERRED_CUBLAS_CHAPTER) or [g for gs in by_chapter.values() for g in gs]
        ref[shape] = statistics.median(values)
    return ref


def pct_of_cublas(row, sgemm_ref):
    """% of cuBLAS of the same precision from the same run (see the module's docstring)."""
    if is_cpu_chapter(row["chapter"]):
        g, ref = number(row["gflops"]), sgemm_ref.get(shape_of(row))
        return 100.0 * g / ref if g and ref else None
    return number(row["pct_cublas"])


def rank(row):
    """How good a variant is against the others of its chapter, precision and shape: its % of
    cuBLAS, the figure every table prints. That ratio was timed in rounds alternating with cuBLAS,
    so a clock that drifted between two variants' runs does not decide which is best, as it can
    between their GFLOP/s. GFLOP/s breaks ties and ranks a row without the ratio below those with
    it. Chapter 01 ranks by GFLOP/s: each of its rows is % of OpenBLAS on as many threads as the
    variant, a different yardstick per row (a 1-thread loop at 80 % of 1-thread OpenBLAS is slower
    than 8 threads at 78 % of 8-thread OpenBLAS)."""
    g = number(row["gflops"]) or 0.0
    p = None if is_cpu_chapter(row["chapter"]) else number(row["pct_cublas"])
    return (p is not None, p if p is not None else g, g)


def best_variants(rows):
    """{(chapter, dtype): {shape: row}}: the best variant that passed its check, per shape (see rank)."""
    best = defaultdict(dict)
    for r in rows:
        if r["status"] != "PASS" or is_baseline(r) or not number(r["gflops"]):
            continue
        key, shape = (r["chapter"], r["dtype"]), shape_of(r)
        current = best[key].get(shape)
        if current is None or rank(r) > rank(current):
            best[key][shape] = r
    return dict(best)


# Two variants whose % of cuBLAS lie closer than this (in % of the best's) are a tie: the A/A check of
# make bench (cuBLAS timed against itself) lands this far from 100 %, so their order is the noise's.
TIE_PCT = 3.0


def ties(rows, best):
    """{(chapter, dtype, shape): [variant, ...]}: the other variants that passed within TIE_PCT % of
    the best's % of cuBLAS, best first. Not for chapter 01 (its rows have no common yardstick) nor
    07 (whose variants are cuBLAS's own calls again, ties by construction)."""
    out = defaultdict(list)
    for r in sorted(rows, key=lambda r: -(number(r["pct_cublas"]) or 0.0)):
        if r["status"] != "PASS" or is_baseline(r) or is_cpu_chapter(r["chapter"]) or r["chapter"] == LIBRARY_CHAPTER:
            continue
        top = best.get((r["chapter"], r["dtype"]), {}).get(shape_of(r))
        p, q = number(r["pct_cublas"]), number(top["pct_cublas"]) if top else None
        if top is not r and p is not None and q and p >= q * (1 - TIE_PCT / 100):
            out[r["chapter"], r["dtype"], shape_of(r)].append(r["variant"])
    return dict(out)


def all_shapes(rows):
    return sorted({shape_of(r) for r in rows}, key=shape_order)


def is_failure(row):
    """A wrong result (status FAIL, or "FAIL (wrong in a timed run)" when a timed launch's check
    failed), or a rate above the GPU's peak (IMPLAUSIBLE): rows that are no result."""
    status = row.get("status", "")
    return status.startswith("FAIL") or status == "IMPLAUSIBLE"


def failures(rows):
    return [r for r in rows if is_failure(r)]


def failure_note(row):
    """' (wrong in a timed run)' or ' (implausible rate)' for the lines that list failures."""
    status = row.get("status", "")
    if status == "IMPLAUSIBLE":
        return " (implausible rate: above the GPU's peak)"
    return " " + status[len("FAIL"):].strip() if status.startswith("FAIL (") else ""


def compress_names(per_shape):
    """'tiled_32_4rows (1024, 2048); tiled_32 (4096)' from [(shape, name), ...] in shape order."""
    groups = []
    for shape, name in per_shape:
        if groups and groups[-1][0] == name:
            groups[-1][1].append(shape)
        else:
            groups.append((name, [shape]))
    if len(groups) == 1:
        return f"{groups[0][0]} (all shapes)"
    return "; ".join(f"{name} ({', '.join(shape_label(s) for s in shapes)})" for name, shapes in groups)


DTYPE_ORDER = {"fp32": 0, "tf32": 1, "fp16": 2, "bf16": 3, "fp8_e4m3": 4}


def key_order(key):
    """(chapter, dtype) in chapter order, FP32 before TF32 before FP16 before BF16."""
    chapter, dtype = key
    return chapter, DTYPE_ORDER.get(dtype, 9), dtype


def summary_text(rows):
    """The closing text of `make bench`, as one string."""
    best = best_variants(rows)
    if not best:
        return "no variant passed its check: nothing to summarize\n"
    ref = cublas_sgemm_reference(rows)
    shapes = [s for s in all_shapes(rows) if any(s in per for per in best.values())]
    labels = [shape_label(s) for s in shapes]
    widths = [max(len(label), 7) + 2 for label in labels]
    keys = sorted(best, key=key_order)

    def line(first, cells):
        return first + "".join(f"{c:>{w}s}" for c, w in zip(cells, widths))

    out = ["", "Best variant of each chapter, % of cuBLAS of the same precision from the same run",
           "(chapter 01 runs on the CPU: % of OpenBLAS on as many threads, from the same run;",
           " - = not run, or nothing passed):", ""]
    out.append(line(f"{'chapter':24s}{'type':6s}", labels))
    for key in keys:
        cells = []
        for s in shapes:
            r = best[key].get(s)
            p = number(r["pct_cublas"]) if r else None  # the CSV's own: chapter 01's is of OpenBLAS
            cells.append(f"{p:.1f}%" if p is not None else "-")
        out.append(line(f"{key[0]:24s}{key[1]:6s}", cells) + ("  (of OpenBLAS)" if is_cpu_chapter(key[0]) else ""))
    if ref:
        out.append(line(f"{'cuBLAS SGEMM, GFLOP/s':30s}", [f"{ref[s]:.0f}" if s in ref else "-" for s in shapes]))
    out += ["", "best variants:"]
    for key in keys:
        per_shape = [(s, best[key][s]["variant"]) for s in shapes if s in best[key]]
        out.append(f"  {key[0]} {key[1]}: {compress_names(per_shape)}")
    tied = ties(rows, best)
    if tied:
        out += ["", f"within {TIE_PCT:g} % of the best (the A/A check's band: no winner among them):"]
        out += [f"  {c} {d} {shape_label(s)}: {best[c, d][s]['variant']}, {', '.join(names)}"
                for (c, d, s), names in sorted(tied.items(), key=lambda kv: (key_order(kv[0][:2]), shape_order(kv[0][2])))]
    failed = failures(rows)
    if failed:
        out += ["", f"verification FAILED in {len(failed)} row(s):"]
        # The precision too: a chapter may run one variant name in FP16 and in BF16 (chapter 09).
        out += [f"  {r['chapter']} {r['variant']} ({r['dtype']}) {shape_label(shape_of(r))}{failure_note(r)}"
                for r in failed]
    return "\n".join(out) + "\n"


# ---- the ladder of the top README (its block `ladder`, written by `wb fill`, checked by `wb notes check`)
LADDER_SKIP = ("01_", "08_")  # the CPU (its own baseline is OpenBLAS) and whole programs (copies included)
LIBRARY_CHAPTER = "07_cublas_baseline"
LIBRARY_PREFIX = "cutlass_"     # chapter 07's CUTLASS rows stand beside cuBLAS in the ladder
DTYPE_LABEL = {"fp32": "FP32", "tf32": "TF32", "fp16": "FP16", "bf16": "BF16"}
LADDER_TEXT = {
    "en": {"caption": "Best variant of each chapter (and chapter 07's CUTLASS kernels) as % of cuBLAS of the same "
                      "precision, timed in rounds alternating with it in the same run (the median of the rounds' "
                      "ratios), {gpu}, {date}, git `{git}`, `make bench` (raw rows: `{csv}`); "
                      "`PYTHONPATH=tools python3 -m wb bench-summary {csv}` prints the chapters' percentages. "
                      "The GPU's clock moves during a run, so the cuBLAS calls beside one row can run faster or "
                      "slower than chapter 07's own cuBLAS rows, whose rates close the table.",
           "chapter": "chapter", "type": "type", "cublas": "cuBLAS {dtype}, chapter 07's rows, TFLOP/s",
           "best": "Best variant per shape (the highest % of cuBLAS; another within {tie:g} % of it is a tie, in brackets):"},
    "zh": {"caption": "各章的最佳变体（以及第 07 章的 CUTLASS 核函数）占同精度 cuBLAS 的 %：在同一次运行中与 cuBLAS "
                      "交替分轮计时（各轮比值的中位数），{gpu}，{date}，git `{git}`，`make bench`（原始数据：`{csv}`）；"
                      "`PYTHONPATH=tools python3 -m wb bench-summary {csv}` 打印各章的百分比。"
                      "运行中 GPU 的时钟会变化，所以与某一行并排计时的 cuBLAS 可能比表格末尾第 07 章自己的 cuBLAS 行"
                      "更快或更慢。",
           "chapter": "章节", "type": "精度", "cublas": "cuBLAS {dtype}，第 07 章的行，TFLOP/s",
           "best": "每个形状上的最佳变体（占 cuBLAS 的 % 最高；与它相差 {tie:g} % 以内的另一个变体算作并列，写在括号里）："},
}


def ladder_rows(rows):
    """[(label, dtype, {shape: row})]: each GPU chapter's best variant per precision, and each of
    chapter 07's CUTLASS variants, in chapter order."""
    out = []
    for (chapter, dtype), per in sorted(best_variants(rows).items(), key=lambda kv: key_order(kv[0])):
        if chapter.startswith(LADDER_SKIP) or chapter == LIBRARY_CHAPTER:
            continue
        out.append((f"`{chapter}`", dtype, per))
    library = defaultdict(dict)
    for r in rows:
        if r["chapter"] == LIBRARY_CHAPTER and r["variant"].startswith(LIBRARY_PREFIX) and r["status"] == "PASS":
            library[(r["variant"], r["dtype"])][shape_of(r)] = r
    lib = [(f"`{LIBRARY_CHAPTER}` `{v}`", d, per) for (v, d), per in library.items()]
    lib.sort(key=lambda t: (DTYPE_ORDER.get(t[1], 9), t[0]))
    chapters = [t for t in out if t[0] < f"`{LIBRARY_CHAPTER}`"]
    return chapters + lib + [t for t in out if t not in chapters]


def ladder(rows, lang, csv_path):
    """The block `ladder` of the top README (README.md, README.zh-CN.md), without a final newline."""
    t = LADDER_TEXT[lang]
    gpu_rows = [r for r in rows if not r["chapter"].startswith(LADDER_SKIP)]
    lines_ = ladder_rows(rows)
    shapes = sorted({s for label, _, per in lines_ if not label.startswith(f"`{LIBRARY_CHAPTER}`") for s in per},
                    key=shape_order)
    first = gpu_rows[0]
    gits = sorted({r["git"] for r in gpu_rows})
    dates = sorted({r["timestamp"][:10] for r in gpu_rows})
    out = [t["caption"].format(gpu=first["gpu"], date=" - ".join(dict.fromkeys([dates[0], dates[-1]])),
                               git="`, `".join(gits), csv=csv_path), ""]
    body = []
    for label, dtype, per in lines_:
        cells = [f'{number(per[s]["pct_cublas"]):.1f} %' if s in per and number(per[s]["pct_cublas"]) is not None
                 else "-" for s in shapes]
        body.append([label, DTYPE_LABEL.get(dtype, dtype)] + cells)
    base = {}
    for r in rows:
        if r["chapter"] == LIBRARY_CHAPTER and r["variant"] in GPU_BASELINES and number(r["gflops"]):
            base.setdefault(r["dtype"], {})[shape_of(r)] = number(r["gflops"]) / 1000
    for dtype in sorted(base, key=lambda d: DTYPE_ORDER.get(d, 9)):
        body.append([t["cublas"].format(dtype=DTYPE_LABEL.get(dtype, dtype)), ""] +
                    [f"{base[dtype][s]:.1f}" if s in base[dtype] else "-" for s in shapes])
    header = [t["chapter"], t["type"]] + [shape_label(s) for s in shapes]
    from wb import mdtable
    out += mdtable.lines(header, body, right=range(2, 2 + len(shapes)))
    out += ["", t["best"].format(tie=TIE_PCT), ""]
    tied = ties(rows, best_variants(rows))
    for label, dtype, per in lines_:
        if not label.startswith(f"`{LIBRARY_CHAPTER}`"):
            chapter = label.strip("`")
            names = compress_names([(s, f'`{per[s]["variant"]}`' + "".join(
                f" [`{v}`]" for v in tied.get((chapter, dtype, s), []))) for s in shapes if s in per])
            out.append(f"- {label} {DTYPE_LABEL.get(dtype, dtype)}: {names}")
    return "\n".join(out)


# ---- a chapter against CUTLASS's kernel of its own instruction (a note's block `cutlass`) ---------
# Chapter 06's mma.sync steps are judged against CUTLASS's Ampere-style tensor-op kernel of the same
# precision, which chapter 07 runs in the same `make bench`: on Hopper cuBLAS uses wgmma, an
# instruction chapter 06 does not have.
CUTLASS_OF = {"fp16": "cutlass_fp16_tensorop", "tf32": "cutlass_tf32_tensorop"}
VERSUS_TEXT = {
    "en": {"caption": "{chapter}'s variants as % of chapter 07's CUTLASS kernel of the same precision and instruction "
                      "({kernels}), {gpu}, {date}, git `{git}`, `make bench` (raw rows: `{csv}`). Each figure is the "
                      "variant's % of cuBLAS divided by CUTLASS's: both were timed against the same cuBLAS call, "
                      "each in its own program, so the clock's drift between the two programs cancels."},
    "zh": {"caption": "{chapter} 的各变体占第 07 章同精度、同指令的 CUTLASS 核函数（{kernels}）的 %，{gpu}，{date}，"
                      "git `{git}`，`make bench`（原始数据：`{csv}`）。每个数字是该变体占 cuBLAS 的 % 除以 CUTLASS 的："
                      "两者都在各自的程序中与同一个 cuBLAS 调用交替计时，两个程序之间的时钟漂移因此相互抵消。"},
}


def versus_cutlass(rows, chapter, lang, csv_path, only=None):
    """The block `cutlass` of `chapter`'s notes (without a final newline): each of its PASS variants
    whose precision CUTLASS_OF names, as % of that CUTLASS row, on the shapes both have (of those
    in `only`, when given: the shapes the note's results block shows)."""
    t = VERSUS_TEXT[lang]
    ref = defaultdict(dict)
    for r in rows:
        if r["chapter"] == LIBRARY_CHAPTER and r["variant"] == CUTLASS_OF.get(r["dtype"]) and r["status"] == "PASS":
            ref[r["dtype"]][shape_of(r)] = number(r["pct_cublas"])
    mine = [r for r in rows if r["chapter"] == chapter and r["dtype"] in ref and not is_baseline(r)
            and r["status"] == "PASS"]
    if not mine:
        raise ValueError(f"{csv_path} has no rows of {chapter} and of chapter 07's CUTLASS kernels in the same precision")
    shapes = sorted({shape_of(r) for r in mine if shape_of(r) in ref[r["dtype"]] and (not only or shape_of(r) in only)},
                    key=shape_order)
    first = mine[0]
    kernels = ", ".join(f"`{CUTLASS_OF[d]}`" for d in sorted(ref, key=lambda d: DTYPE_ORDER.get(d, 9)))
    caption = t["caption"].format(chapter=chapter, kernels=kernels, gpu=first["gpu"], date=first["timestamp"][:10],
                                  git=first["git"], csv=csv_path)
    return percent_table(caption, lang, mine, "pct_cublas", shapes, lambda dtype, s: ref[dtype].get(s))


TABLE_HEAD = {"en": ["variant", "type"], "zh": ["变体", "精度"]}


def percent_table(caption, lang, rows, column, shapes, reference):
    """The caption, then one line per (variant, type) of `rows` and one column per shape: the row's
    `column` as % of reference(type, shape), "-" where either is missing."""
    per = defaultdict(dict)
    for r in rows:
        per[(r["variant"], r["dtype"])][shape_of(r)] = number(r[column])
    body = []
    for (variant, dtype), values in sorted(per.items(), key=lambda kv: DTYPE_ORDER.get(kv[0][1], 9)):
        cells = [f"{100 * values[s] / reference(dtype, s):.1f} %" if values.get(s) and reference(dtype, s) else "-"
                 for s in shapes]
        body.append([f"`{variant}`", DTYPE_LABEL.get(dtype, dtype)] + cells)
    from wb import mdtable
    return "\n".join([caption, ""] + mdtable.lines(TABLE_HEAD[lang] + [shape_label(s) for s in shapes], body,
                                                   right=range(2, 2 + len(shapes))))


CEILING_TEXT = {
    "en": {"caption": "{chapter}'s variants as % of its lab's ceiling for their input type ({ceilings}: the "
                      "instruction alone, from registers), {gpu}, {date}, git `{git}`, `make bench` (raw rows: `{csv}`; the "
                      "ceiling: `{ceiling}`, measured in another run, so a figure also carries the difference of the GPU's "
                      "clock between the two runs, which the ceiling's file does not record)."},
    "zh": {"caption": "{chapter} 的各变体占本章 lab 中同输入类型上限（{ceilings}：只跑该指令，操作数在寄存器中）的 %，{gpu}，"
                      "{date}，git `{git}`，`make bench`（原始数据：`{csv}`；上限：`{ceiling}`，在另一次运行中测得，所以每个数字"
                      "还带着两次运行之间 GPU 时钟的差别，而上限的文件没有记录时钟）。"},
}


def ceiling_path(csv_path, chapter):
    """Where a chapter's lab ceiling lies beside a bench CSV: ceiling_NN.csv in the same folder."""
    return os.path.join(os.path.dirname(csv_path), f"ceiling_{chapter[:2]}.csv")


def versus_ceiling(rows, ceiling_rows, chapter, lang, csv_path, ceiling_csv, only=None):
    """The block `ceiling` of `chapter`'s notes (without a final newline): each of its PASS variants
    as % of the GFLOP/s of the ceiling row of its input type (the `input` column of the lab's CSV),
    on the shapes of `only` when given. ValueError when the ceiling was measured on another GPU or
    no variant has a ceiling."""
    t = CEILING_TEXT[lang]
    mine = [r for r in rows if r["chapter"] == chapter and not is_baseline(r) and r["status"] == "PASS"]
    ref = {c["input"]: c for c in ceiling_rows}
    mine = [r for r in mine if r["dtype"] in ref]
    if not mine:
        raise ValueError(f"{csv_path} has no rows of {chapter} in a type that {ceiling_csv} measures")
    other = {c["gpu"] for c in ceiling_rows} - {mine[0]["gpu"]}
    if other:
        raise ValueError(f"{ceiling_csv} was measured on {sorted(other)[0]}, {csv_path} on {mine[0]['gpu']}")
    shapes = sorted({shape_of(r) for r in mine if not only or shape_of(r) in only}, key=shape_order)
    first = mine[0]
    used = sorted({r["dtype"] for r in mine}, key=lambda d: DTYPE_ORDER.get(d, 9))
    ceilings = ", ".join(f"`{ref[d]['instruction']}` {number(ref[d]['gflops']) / 1000:.1f} TFLOP/s" for d in used)
    caption = t["caption"].format(chapter=chapter, ceilings=ceilings, gpu=first["gpu"], date=first["timestamp"][:10],
                                  git=first["git"], csv=csv_path, ceiling=ceiling_csv)
    return percent_table(caption, lang, mine, "gflops", shapes, lambda dtype, s: number(ref[dtype]["gflops"]))


def register(sub):
    p = add_command(sub, "bench-summary", "the closing table of make bench, from a results CSV", __doc__)
    p.add_argument("csv", nargs="?", default="results/bench.csv", help="default: results/bench.csv")
    p.set_defaults(run=lambda a: main(a.csv))


def main(path):
    try:
        rows = load_rows(path)
    except OSError as e:
        print(f"bench_summary: cannot read {path}: {e.strerror}", file=sys.stderr)
        return 2
    except NotResultsCsv as e:
        print(f"bench_summary: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(summary_text(rows))
    return 0

