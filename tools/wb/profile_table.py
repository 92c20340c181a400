"""wb.profile_table - `python3 -m wb profile-table NCU_LOG [--fill] [--date DATE] [--commit REV]`: turns the text output of `make profile-NN` (ncu --metrics ...) into
one markdown table per chapter: a row per kernel (repeated launches of the same kernel keep the
first), a column per metric. With --fill it writes each table into the chapter's README.md and
README.zh-CN.md as the content of their block `profile` (<!-- wb:fill profile --> ...
<!-- wb:end profile -->, see wb.markers; added after the block `results` the first time). The log may hold several chapters, each introduced by a line "== profile-NN".

A section introduced by "== profile-NN WORD" is a profile of its own (say, the chapter's kernel beside
cuBLAS's at one size): `--block WORD` writes its table into the chapter's block `profile-WORD`, which
the notes must already have, and leaves the unlabelled sections alone; without --block, labelled
sections are skipped. Its caption names each program the section's ncu lines ran."""
import os
import re
import sys

from wb import add_command, markers, mdtable

NAME = "profile"
CAPTION = {
    "en": "Nsight Compute on the same H200, {date}{commit}, `make profile-{nn}`, which runs `{args}` (raw output: `{log}`; "
          "cuBLAS's own kernel is profiled too):",
    "zh": "在同一块 H200 上用 Nsight Compute 测得，{date}{commit_zh}，`make profile-{nn}`，即运行 `{args}`（原始输出：`{log}`；"
          "cuBLAS 自己的核函数也一并分析）：",
}
LABELLED_CAPTION = {  # a labelled section: the programs its ncu lines ran, each with the metrics of the table
    "en": "Nsight Compute on the same H200 (`ncu --clock-control none --metrics` with the table's metrics), {date}{commit}, "
          "over {args} (raw output: `{log}`, its section `== profile-{nn} {label}`):",
    "zh": "在同一块 H200 上用 Nsight Compute 测得（`ncu --clock-control none --metrics`，指标即表中各列），{date}{commit_zh}，"
          "运行 {args}（原始输出：`{log}` 中的 `== profile-{nn} {label}` 一节）：",
}
BYTES = {"byte": 1e-9, "Kbyte": 1e-6, "Mbyte": 1e-3, "Gbyte": 1.0, "Tbyte": 1e3}  # ncu's byte units, in GB
LONG_NAME = 100  # a template's name longer than this (CUTLASS's whole kernel type) is cut, with "…"


def program_args(text, nn):
    """The program and its options as the log's ncu command line ran them ("./06_name --size 4096 ...")."""
    m = re.search(rf"^\S*ncu .*?(\./{nn}_\S+.*)$", text, flags=re.M)
    return m.group(1).strip() if m else f"./{nn}_*"


def every_program(text):
    """Each program and its options that the section's ncu lines ran, in order and once, as `...` joined by commas."""
    runs = dict.fromkeys(r.strip() for r in re.findall(r"^\S*ncu .*?(\./\d\d_\S+.*)$", text, flags=re.M))
    return ", ".join(f"`{r}`" for r in runs) or "`./NN_*`"  # a program profiled twice (two filters) is named once


def short_name(line):
    name = line.strip()
    name = re.sub(r"^void ", "", name)
    name = name.split(", Context")[0]
    name = re.sub(r"\bch\d\d::", "", name)                                    # the chapter's namespace
    name = re.sub(r"\((int|WmmaArgs|T1|const|float)[^)]*\)", "", name, count=1)  # drop the parameter list
    name = re.sub(r"\s*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)$", "", name)      # and the launch shape
    name = name.strip()
    return name if len(name) <= LONG_NAME or "<" not in name else name[:LONG_NAME].rstrip(", ") + "…"


def bodies(text):
    """Each section of the log ("== profile-NN" or "== profile-NN WORD" up to the next), by (NN, WORD);
    WORD is "" for a chapter's unlabelled section."""
    found = re.findall(r"^== profile-(\d\d)(?: ([\w.-]+))?\n(.*?)(?=^== profile-|\Z)", text, flags=re.S | re.M)
    return {(nn, label): body for nn, label, body in found}


def parse(text):
    """(rows, metrics, units) of each section, by (NN, WORD) as in bodies; units names the metrics
    whose values were converted (to GB), for the table's header."""
    chapters = {}
    for key, body in bodies(text).items():
        rows, metrics, cur, in_gb = [], [], None, set()
        for line in body.splitlines():
            if re.match(r"^  \S", line) and "Context" in line:
                cur = {"kernel": short_name(line), "values": {}}
                rows.append(cur)
            elif cur is not None and re.match(r"^    [a-z]\w*__\w", line):
                parts = line.split()
                metric, value = parts[0], parts[-1]
                if metric == "gpu__time_duration.sum":  # ncu picks ns, us or ms per row: show ms
                    scale = {"ns": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0, "msecond": 1.0}.get(parts[1], 1.0)
                    value = f"{float(value.replace(',', '')) * scale:.3f}"
                elif len(parts) == 3 and parts[1] in BYTES:  # and byte, Kbyte, Mbyte or Gbyte per row: show GB
                    value = f"{float(value.replace(',', '')) * BYTES[parts[1]]:.3f}"
                    in_gb.add(metric)
                cur["values"][metric] = value
                if metric not in metrics:
                    metrics.append(metric)
        seen, unique = set(), []
        for r in rows:
            if r["kernel"] in seen or "empty_kernel" in r["kernel"]:
                continue
            seen.add(r["kernel"])
            unique.append(r)
        chapters[key] = (unique, [m for m in metrics if m != "gpu__time_duration.sum"], {m: "GB" for m in in_gb})
    return chapters


def table(rows, metrics, units=None):
    units = units or {}
    head = ["kernel", "time (ms)"] + [f"`{m}`" + (f" ({units[m]})" if m in units else "") for m in metrics]
    body = [[f'`{r["kernel"]}`', r["values"].get("gpu__time_duration.sum", "-")] +
            [r["values"].get(m, "-") for m in metrics] for r in rows]
    return mdtable.table(head, body, right=range(1, len(head)))


def fill(path, block, name=NAME):
    """Writes `block` into the note's block `name` (for `profile` only, a new one after the block
    `results` when it has none); False when it has neither. Raises markers.MarkerError on a marker
    that cannot be read."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    new = markers.replace(text, name, block, path)
    if new is None and name == NAME:
        new = markers.insert_after(text, "results", NAME, block, path)
    if new is None:
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(new)
    return True


def register(sub):
    p = add_command(sub, "profile-table", "make profile-NN's Nsight Compute log as markdown tables", __doc__)
    p.add_argument("log", metavar="NCU_LOG")
    p.add_argument("--fill", action="store_true", help="write each table into its chapter's notes")
    p.add_argument("--date", default="", help="the date the caption names")
    p.add_argument("--commit", default="", help="the workbook commit that was profiled, for the caption")
    p.add_argument("--block", default="", metavar="WORD",
                   help="the log's sections '== profile-NN WORD' into the blocks profile-WORD")
    p.set_defaults(run=lambda a: main(a.log, a.fill, a.date, a.commit, a.block))


def main(log, fill_notes=False, date="", commit="", label=""):
    text = open(log, encoding="utf-8", errors="replace").read()
    chapters = parse(text)
    parts = bodies(text)
    folders = {d[:2]: d for d in os.listdir(".") if re.match(r"\d\d_", d) and os.path.isdir(d)}
    block_name = f"{NAME}-{label}" if label else NAME
    for (nn, section), parsed in sorted(chapters.items()):
        if section != label:
            continue
        if not fill_notes:
            print(f"== {nn}{' ' + section if section else ''}\n{table(*parsed)}\n")
            continue
        for name, lang in (("README.md", "en"), ("README.zh-CN.md", "zh")):
            path = os.path.join(folders.get(nn, ""), name)
            words = dict(date=date, nn=nn, commit=f", commit `{commit}`" if commit else "",
                         commit_zh=f"，提交 `{commit}`" if commit else "", log=log, label=section)
            if section:
                caption = LABELLED_CAPTION[lang].format(args=every_program(parts[(nn, section)]), **words)
            else:
                caption = CAPTION[lang].format(args=program_args(parts[(nn, section)], nn), **words)
            block = caption + "\n\n" + table(*parsed)
            try:
                filled = os.path.exists(path) and fill(path, block, block_name)
            except markers.MarkerError as e:
                print(f"profile_table: error: {e}", file=sys.stderr)
                return 1
            if filled:
                print(f"profile_table: {path}: {len(parsed[0])} kernels")
    return 0
