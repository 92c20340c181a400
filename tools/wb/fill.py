"""wb.fill - `python3 -m wb fill CSV [COMMANDS.tsv]`: writes the measured table of each chapter found in CSV
into the chapter's README.md and README.zh-CN.md, between the markers
<!-- H200-RESULTS --> and <!-- /H200-RESULTS --> (the closing marker is added the first time).
Every number comes from the CSV; the caption names the GPU, versions, commit, date and command."""
import csv
import os
import re

from wb import add_command, mdtable

OPEN, CLOSE = "<!-- H200-RESULTS -->", "<!-- /H200-RESULTS -->"
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
    if not os.path.exists(path):
        return False
    text = open(path, encoding="utf-8").read()
    if OPEN not in text:
        print(f"fill_results: {path} has no {OPEN} marker, left alone")
        return False
    if CLOSE in text:
        text = re.sub(re.escape(OPEN) + r".*?" + re.escape(CLOSE), OPEN + "\n" + block + "\n" + CLOSE, text, flags=re.S)
    else:
        text = text.replace(OPEN, OPEN + "\n" + block + "\n" + CLOSE, 1)
    open(path, "w", encoding="utf-8").write(text)
    return True


def register(sub):
    p = add_command(sub, "fill", "the measured table of each chapter in a results CSV, into its notes", __doc__)
    p.add_argument("csv", metavar="CSV", help="the bench results (e.g. results/h200/bench.csv)")
    p.add_argument("commands", metavar="COMMANDS.tsv", nargs="?",
                   help="chapter<TAB>the command that measured it (make bench writes results/bench_commands.tsv)")
    p.set_defaults(run=lambda a: main(a.csv, a.commands))


def main(csv_path, cmds_path=None):
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
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
            if fill(os.path.join(chapter, name), table(rs, lang, cmd, csv_path)):
                print(f"fill_results: {chapter}/{name}: {len(rs)} rows")
    return 0
