"""wb.fill - `python3 -m wb fill [CSV [COMMANDS.tsv]] [--env ENV.json]`: writes the measured table of each chapter found in CSV
into the chapter's README.md and README.zh-CN.md, as the content of their block `results`
(<!-- wb:fill results --> ... <!-- wb:end results -->, see wb.markers; a note without that block is
left alone; --block results-WORD writes a block of that name instead, for a run that `make bench`
must not overwrite), and the ladder of the whole run (each chapter's best variant as % of cuBLAS, chapter
07's CUTLASS rows beside it) into the top README's block `ladder`; a note with a block `cutlass` also gets
its chapter's variants as % of chapter 07's CUTLASS kernel of the same precision (with --block
results-WORD, its block cutlass-WORD); a note with a block `ceiling`, its variants as % of its lab's
ceiling of their input type, from ceiling_NN.csv beside CSV (`make ceiling CEILING_ARGS="--csv ..."`). Every number comes from the CSV; the caption names the GPU, versions, commit, date and
command. With --env, chapter 00's row (its block `env`) comes from the JSON of
`00_env_check --json`. `python3 -m wb notes check` checks that the notes still say what the CSV says.

A chapter's table may show some of the run's shapes only: `--shapes CHAPTER=S1,S2,...` (CHAPTER the
folder or its number, each S as the programs write it, 4096 or 1000x1013x4097) keeps those, and the
caption says which; a later fill keeps the selection its note declares (`--shapes CHAPTER=all`
shows every shape again), and `notes check` regenerates the table with it."""
import csv
import json
import os
import re
import sys

from wb import add_command, markers, mdtable, shapes as shape_grammar

NAME, ENV, LADDER = "results", "env", "ladder"  # the blocks: a chapter's rows, chapter 00's row, the top README's ladder
VERSUS = "cutlass"  # a chapter's variants as % of chapter 07's CUTLASS kernel of their precision (chapter 06)
CEILING = "ceiling"  # a chapter's variants as % of its lab's ceiling (ceiling_NN.csv beside the bench CSV; chapter 06)
TEXT = {
    "en": {
        "caption": "Measured on {gpu} (sm_{cc}), driver CUDA {driver}, runtime {runtime}, {date}, "
                   "git `{git}`, with\n`{cmd}`\n(raw rows: `{csv}`).",
        "cpu_caption": "Measured on {gpu} (the CPU), {date}, git `{git}`, with\n`{cmd}`\n(raw rows: `{csv}`).",
        "header": ["variant", "M x N x K", "ms (median)", "GFLOP/s", "% of {base}", "% of peak", "rel. error", "check"],
        "shown": "The table shows the shapes {shapes}; the raw rows hold every shape of the run.",
    },
    "zh": {
        "caption": "测量环境：{gpu}（sm_{cc}），驱动 CUDA {driver}，运行时 {runtime}，{date}，"
                   "git `{git}`，命令：\n`{cmd}`\n（原始数据：`{csv}`）。",
        "cpu_caption": "测量环境：{gpu}（CPU），{date}，git `{git}`，命令：\n`{cmd}`\n（原始数据：`{csv}`）。",
        "header": ["变体", "M x N x K", "毫秒（中位数）", "GFLOP/s", "占 {base} 的 %", "占峰值的 %", "相对误差", "检查"],
        "shown": "表中只列出形状 {shapes}；原始数据含本次运行的全部形状。",
    },
}


# The caption's sentence that declares a selection of shapes, in either language: the note itself
# keeps the selection, so that a later fill and `notes check` show the same shapes.
SHOWN = [re.compile(re.escape(t["shown"]).replace(re.escape("{shapes}"), r"(\d+x\d+x\d+(?:, \d+x\d+x\d+)*)"))
         for t in TEXT.values()]


def shape_of(row):
    return int(row["M"]), int(row["N"]), int(row["K"])


def shown_shapes(content):
    """The shapes a block's caption says it shows, as (M, N, K) tuples; None when it shows every shape."""
    for pattern in SHOWN:
        m = pattern.search(content)
        if m:
            return [shape_grammar.parse_shape(s) for s in m.group(1).split(", ")]
    return None


def select(rows, shapes, csv_path):
    """The rows of `shapes` (all of them when `shapes` is empty), in the CSV's order; ValueError
    when a shape has no row."""
    if not shapes:
        return rows
    missing = [s for s in shapes if s not in {shape_of(r) for r in rows}]
    if missing:
        raise ValueError(f"{csv_path} has no rows of {rows[0]['chapter']} at "
                         + ", ".join(shape_grammar.shape_text(s) for s in missing))
    return [r for r in rows if shape_of(r) in shapes]


def table(rows, lang, cmd, csv_path, shapes=None):
    """The block `results` of one chapter's rows; with `shapes`, only the rows of those shapes,
    and the caption says which (see select)."""
    rows = select(rows, shapes, csv_path)
    first = rows[0]
    base = "BLAS" if first["chapter"].startswith("01_") else "cuBLAS"
    t = TEXT[lang]
    caption = t["caption"] if first["cc"] else t["cpu_caption"]  # chapter 01's rows have no compute capability
    out = [caption.format(gpu=first["gpu"], cc=first["cc"].replace(".", ""), driver=first["driver"],
                               runtime=first["runtime"], date=first["timestamp"][:10], git=first["git"],
                               cmd=cmd, csv=csv_path), ""]
    if shapes:
        out[0] += "\n" + t["shown"].format(shapes=", ".join(shape_grammar.shape_text(s) for s in shapes))
    header = [h.format(base=base) for h in t["header"]]
    body = [[f'`{r["variant"]}`', f'{r["M"]}x{r["N"]}x{r["K"]}',
             r["ms_median"] and f'{float(r["ms_median"]):.3f}' or "-",
             r["gflops"] and f'{float(r["gflops"]):.0f}' or "-",
             r["pct_cublas"] and f'{float(r["pct_cublas"]):.1f}' or "-",
             r["pct_peak"] and f'{float(r["pct_peak"]):.1f}' or "-",
             r["rel_err"] or "-", r["status"]] for r in rows]
    return "\n".join(out + mdtable.lines(header, body, right=range(2, 7)))


def fill(path, block, name=NAME):
    """Writes `block` into the note's block `name` (`results`, or `results-WORD` for a run kept
    apart from `make bench`'s); False when the note or the block is absent. Raises
    markers.MarkerError on a marker that cannot be read."""
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = markers.replace(text, name, block, path)
    if new is None:
        print(f"fill_results: {path} has no {markers.begin(name)} block, left alone")
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return True


def declared_shapes(path, name=NAME):
    """The selection of shapes the note's block declares (see shown_shapes); None when it has none."""
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        b = markers.find(f.read(), name, path)
    return shown_shapes(b.content) if b else None


def parse_selection(items):
    """{chapter or its number: [(M, N, K)], or [] for every shape} from the --shapes arguments;
    ValueError with one sentence when one cannot be read."""
    chosen = {}
    for item in items or []:
        chapter, sep, text = item.partition("=")
        if not sep or not chapter:
            raise ValueError(f"--shapes {item}: write CHAPTER=S1,S2,... (e.g. 06=4096,1000x1013x4097) or CHAPTER=all")
        chosen[chapter] = [] if text == "all" else shape_grammar.parse_shapes(text)
    return chosen


def read_rows(csv_path):
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


ENV_TEXT = {
    "en": {"gpu": "{name} ({sm}, {sms} SMs, driver CUDA {driver})", "run": " (run by `make bench`)",
           "fma": "{v:.0f} GFLOP/s ({pct:.1f}% of {peak:.0f})",
           "copy": "{v:.0f} GB/s ({pct:.1f}% of {peak:.0f})", "memcpy": "{v:.0f} GB/s ({pct:.1f}%)",
           "smoke": "{status}, rel. error {err:.1e}"},
    "zh": {"gpu": "{name}（{sm}，{sms} 个 SM，驱动 CUDA {driver}）", "run": "（由 `make bench` 运行）",
           "fma": "{v:.0f} GFLOP/s（理论 {peak:.0f} 的 {pct:.1f}%）",
           "copy": "{v:.0f} GB/s（理论 {peak:.0f} 的 {pct:.1f}%）", "memcpy": "{v:.0f} GB/s（{pct:.1f}%）",
           "smoke": "{status}，相对误差 {err:.1e}"},
}


def env_row(env, lang, json_path):
    """Chapter 00's row (its block `env`) from the JSON that `00_env_check --json` wrote: the first
    GPU's measured FMA rate, copy rates and cuBLAS smoke test."""
    t, g = ENV_TEXT[lang], env["gpus"][0]
    m = g["measured"]
    cells = [t["gpu"].format(name=g["name"], sm=g["sm"], sms=g["sms"], driver=env["cuda"]["driver"]),
             env["timestamp"][:10],
             f"`./00_env_check/00_env_check --json {json_path}`" + t["run"],
             t["fma"].format(v=m["fma_gflops"], pct=m["fma_pct_peak"], peak=g["peak_fp32_gflops"]),
             t["copy"].format(v=m["copy_kernel_gbs"], pct=m["copy_kernel_pct_peak"], peak=g["peak_bandwidth_gbs"]),
             t["memcpy"].format(v=m["memcpy_gbs"], pct=m["memcpy_pct_peak"]),
             t["smoke"].format(status=g["cublas_smoke"]["status"], err=g["cublas_smoke"]["rel_err"])]
    return "| " + " | ".join(cells) + " |"


def fill_env(json_path):
    """Writes chapter 00's row from `json_path` into 00_env_check's notes; 0, or 1 on an error."""
    try:
        with open(json_path, encoding="utf-8") as f:
            env = json.load(f)
        rows = {lang: env_row(env, lang, json_path) for lang in ("en", "zh")}
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        print(f"fill_results: error: {json_path} is not the JSON of 00_env_check --json ({e!r})", file=sys.stderr)
        return 1
    for name, lang in (("README.md", "en"), ("README.zh-CN.md", "zh")):
        path = os.path.join("00_env_check", name)
        try:
            with open(path, encoding="utf-8") as f:
                new = markers.replace(f.read(), ENV, rows[lang], path)
        except (OSError, markers.MarkerError) as e:
            print(f"fill_results: error: {e}", file=sys.stderr)
            return 1
        if new is None:
            print(f"fill_results: {path} has no {markers.begin(ENV)} block, left alone")
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)
        print(f"fill_results: {path}: the row of {json_path}")
    return 0


def register(sub):
    p = add_command(sub, "fill", "the measured table of each chapter in a results CSV, into its notes", __doc__)
    p.add_argument("csv", metavar="CSV", nargs="?", help="the bench results (e.g. results/h200/bench.csv)")
    p.add_argument("commands", metavar="COMMANDS.tsv", nargs="?",
                   help="chapter<TAB>the command that measured it (make bench writes results/bench_commands.tsv)")
    p.add_argument("--block", metavar="NAME", default=NAME,
                   help="the block to write: results (default), or results-WORD for a run that make bench must not overwrite")
    p.add_argument("--shapes", metavar="CHAPTER=S1,S2,...", action="append",
                   help="show only these shapes of a chapter (its folder or number; CHAPTER=all: every shape); "
                        "a later fill keeps the selection its note declares")
    p.add_argument("--env", metavar="ENV.json",
                   help="also write chapter 00's row from this JSON of 00_env_check --json (e.g. results/h200/env.json)")
    p.set_defaults(run=run)


def run(a):
    if not a.csv and not a.env:
        print("python3 -m wb fill: give a results CSV, --env ENV.json, or both (--help says more)", file=sys.stderr)
        return 2
    if a.block != NAME and not a.block.startswith(NAME + "-"):
        print(f"python3 -m wb fill: --block {a.block}: the block is results or results-WORD", file=sys.stderr)
        return 2
    try:
        chosen = parse_selection(a.shapes)
    except ValueError as e:
        print(f"python3 -m wb fill: {e}", file=sys.stderr)
        return 2
    status = main(a.csv, a.commands, a.block, chosen) if a.csv else 0
    return status or (fill_env(a.env) if a.env else 0)


def main(csv_path, cmds_path=None, block=NAME, chosen=None):
    """Fills every chapter of `csv_path`; `chosen` ({chapter or number: shapes}, see parse_selection)
    overrides the selection a note declares. 0, or 1 on an error."""
    rows = read_rows(csv_path)
    chosen = chosen or {}
    cmds = {}
    if cmds_path and os.path.exists(cmds_path):
        for line in open(cmds_path):
            chapter, _, cmd = line.rstrip("\n").partition("\t")
            cmds[chapter] = cmd
    by_chapter = {}
    for r in rows:
        by_chapter.setdefault(r["chapter"], []).append(r)
    unknown = [k for k in chosen if not any(c == k or c.startswith(k + "_") for c in by_chapter)]
    if unknown:
        print(f"fill_results: error: --shapes {unknown[0]}=...: {csv_path} has no rows of that chapter", file=sys.stderr)
        return 1
    for chapter, rs in by_chapter.items():
        cmd = cmds.get(chapter, f"./{chapter}/{chapter} ... --csv {csv_path}")
        key = next((k for k in chosen if chapter == k or chapter.startswith(k + "_")), None)
        for name, lang in (("README.md", "en"), ("README.zh-CN.md", "zh")):
            path = os.path.join(chapter, name)
            try:
                shapes = chosen[key] if key else declared_shapes(path, block)
                text = table(rs, lang, cmd, csv_path, shapes)
                filled = fill(path, text, block)
            except markers.MarkerError as e:
                print(f"fill_results: error: {e}", file=sys.stderr)
                return 1
            except ValueError as e:
                print(f"fill_results: error: {path}: {e}", file=sys.stderr)
                return 1
            if filled:
                shown = f", {len(shapes)} of its shapes" if shapes else ""
                print(f"fill_results: {path}: {len(select(rs, shapes, csv_path))} rows{shown}")
            if fill_versus(path, rows, chapter, lang, csv_path, versus_of(block)):
                return 1
            if block == NAME and fill_ceiling(path, rows, chapter, lang, csv_path):
                return 1
    return fill_ladder(rows, csv_path) if block == NAME else 0


def versus_of(block):
    """The block against CUTLASS that goes with a results block: `cutlass`, or `cutlass-WORD` for
    `results-WORD` (another run's CSV)."""
    return VERSUS if block == NAME else VERSUS + block[len(NAME):]


def results_of_versus(name):
    """The results block whose shapes a block against CUTLASS shows (the inverse of versus_of)."""
    return NAME + name[len(VERSUS):]


def fill_versus(path, rows, chapter, lang, csv_path, name=VERSUS):
    """Writes the note's block `name` (`cutlass` or `cutlass-WORD`: the chapter against CUTLASS,
    wb.bench_summary.versus_cutlass) where the note has one; 1 on an error, else 0."""
    from wb import bench_summary
    return fill_derived(path, name, "against CUTLASS", lambda: bench_summary.versus_cutlass(
        rows, chapter, lang, csv_path, declared_shapes(path, results_of_versus(name))))


def fill_ceiling(path, rows, chapter, lang, csv_path):
    """Writes the note's block `ceiling` (the chapter's variants as % of its lab's ceiling,
    wb.bench_summary.versus_ceiling, from ceiling_NN.csv beside the bench CSV) where the note has
    one; 1 on an error, else 0. Without that CSV (a bench's folder where no ceiling was run), the
    block keeps what it had, and one warning line says so."""
    from wb import bench_summary
    ceiling = bench_summary.ceiling_path(csv_path, chapter)
    if not os.path.exists(ceiling):
        if os.path.exists(path) and CEILING in {b.name for b in markers.blocks(open(path, encoding="utf-8").read(), path)}:
            print(f"fill_results: warning: {path}: block {CEILING} left as it was: no {ceiling} "
                  f"(make -C {chapter} ceiling CEILING_ARGS=\"--csv {ceiling}\" on the same GPU writes it)", file=sys.stderr)
        return 0
    return fill_derived(path, CEILING, "against its lab's ceiling", lambda: bench_summary.versus_ceiling(
        rows, read_rows(ceiling), chapter, lang, csv_path, ceiling, declared_shapes(path, NAME)))


def fill_derived(path, name, what, body_of):
    """Writes body_of() into the note's block `name` where the note has that block (a note without
    it, or no note, is left alone); 1 with one line on an error (a marker, a value, a file that
    body_of cannot read), else 0."""
    if not os.path.exists(path):
        return 0
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        if markers.find(text, name, path) is None:
            return 0
        body = body_of()
    except OSError as e:
        print(f"fill_results: error: {path}: its block {name} needs {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    except (markers.MarkerError, ValueError) as e:
        print(f"fill_results: error: {path}: {e}", file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(markers.replace(text, name, body, path))
    print(f"fill_results: {path}: {what}")
    return 0


def fill_ladder(rows, csv_path):
    """Writes the ladder (each chapter's best as % of cuBLAS, CUTLASS beside it) into the block
    `ladder` of the top README.md and README.zh-CN.md; 0, or 1 on a marker that cannot be read."""
    from wb import bench_summary
    if not bench_summary.ladder_rows(rows):
        return 0
    for name, lang in (("README.md", "en"), ("README.zh-CN.md", "zh")):
        if not os.path.exists(name):
            continue
        with open(name, encoding="utf-8") as f:
            text = f.read()
        try:
            new = markers.replace(text, LADDER, bench_summary.ladder(rows, lang, csv_path), name)
        except markers.MarkerError as e:
            print(f"fill_results: error: {e}", file=sys.stderr)
            return 1
        if new is None:
            print(f"fill_results: {name} has no {markers.begin(LADDER)} block, left alone")
            continue
        with open(name, "w", encoding="utf-8") as f:
            f.write(new)
        print(f"fill_results: {name}: the ladder")
    return 0
