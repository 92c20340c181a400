"""wb.fill - `python3 -m wb fill CSV [COMMANDS.tsv]`: writes the measured table of each chapter found in CSV
into the chapter's README.md and README.zh-CN.md, as the content of their block `results`
(<!-- wb:fill results --> ... <!-- wb:end results -->, see wb.markers; a note without that block is
left alone). Every number comes from the CSV; the caption names the GPU, versions, commit, date and
command. `python3 -m wb notes check` checks that the notes still say what the CSV says."""
import csv
import os
import sys

from wb import add_command, markers, mdtable

NAME = "results"
TEXT = {
    "en": {
        "caption": "Measured on {gpu} (sm_{cc}), driver CUDA {driver}, runtime {runtime}, {date}, "
                   "git `{git}`, with\n`{cmd}`\n(raw rows: `{csv}`).",
        "header": ["variant", "M x N x K", "ms (median)", "GFLOP/s", "% of {base}", "% of peak", "rel. error", "check"],
    },
    "zh": {
        "caption": "测量环境：{gpu}（sm_{cc}），驱动 CUDA {driver}，运行时 {runtime}，{date}，"
                   "git `{git}`，命令：\n`{cmd}`\n（原始数据：`{csv}`）。",
        "header": ["变体", "M x N x K", "毫秒（中位数）", "GFLOP/s", "占 {base} 的 %", "占峰值的 %", "相对误差", "检查"],
    },
}


def table(rows, lang, cmd, csv_path):
    first = rows[0]
    base = "BLAS" if first["chapter"].startswith("01_") else "cuBLAS"
    t = TEXT[lang]
    out = [t["caption"].format(gpu=first["gpu"], cc=first["cc"].replace(".", ""), driver=first["driver"],
                               runtime=first["runtime"], date=first["timestamp"][:10], git=first["git"],
                               cmd=cmd, csv=csv_path), ""]
    header = [h.format(base=base) for h in t["header"]]
    body = [[f'`{r["variant"]}`', f'{r["M"]}x{r["N"]}x{r["K"]}',
             r["ms_median"] and f'{float(r["ms_median"]):.3f}' or "-",
             r["gflops"] and f'{float(r["gflops"]):.0f}' or "-",
             r["pct_cublas"] and f'{float(r["pct_cublas"]):.1f}' or "-",
             r["pct_peak"] and f'{float(r["pct_peak"]):.1f}' or "-",
             r["rel_err"] or "-", r["status"]] for r in rows]
    return "\n".join(out + mdtable.lines(header, body, right=range(2, 7)))


def fill(path, block):
    """Writes `block` into the note's block `results`; False when the note or the block is absent.
    Raises markers.MarkerError on a marker that cannot be read."""
    if not os.path.exists(path):
        return False
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = markers.replace(text, NAME, block, path)
    if new is None:
        print(f"fill_results: {path} has no {markers.begin(NAME)} block, left alone")
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return True


def read_rows(csv_path):
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


def register(sub):
    p = add_command(sub, "fill", "the measured table of each chapter in a results CSV, into its notes", __doc__)
    p.add_argument("csv", metavar="CSV", help="the bench results (e.g. results/h200/bench.csv)")
    p.add_argument("commands", metavar="COMMANDS.tsv", nargs="?",
                   help="chapter<TAB>the command that measured it (make bench writes results/bench_commands.tsv)")
    p.set_defaults(run=lambda a: main(a.csv, a.commands))


def main(csv_path, cmds_path=None):
    rows = read_rows(csv_path)
    cmds = {}
    if cmds_path and os.path.exists(cmds_path):
        for line in open(cmds_path):
            chapter, _, cmd = line.rstrip("\n").partition("\t")
            cmds[chapter] = cmd
    by_chapter = {}
    for r in rows:
        by_chapter.setdefault(r["chapter"], []).append(r)
    for chapter, rs in by_chapter.items():
        cmd = cmds.get(chapter, f"./{chapter}/{chapter} ... --csv {csv_path}")
        for name, lang in (("README.md", "en"), ("README.zh-CN.md", "zh")):
            try:
                filled = fill(os.path.join(chapter, name), table(rs, lang, cmd, csv_path))
            except markers.MarkerError as e:
                print(f"fill_results: error: {e}", file=sys.stderr)
                return 1
            if filled:
                print(f"fill_results: {chapter}/{name}: {len(rs)} rows")
    return 0
