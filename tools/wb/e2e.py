"""wb.e2e - `python3 -m wb e2e`: the pictures and tables of chapter 08 (the GEMM in a whole
program), drawn from the CSV files its program writes with --out DIR.

    python3 -m wb e2e plots DIR             tables.md and, with matplotlib, crossover.png,
                                              breakdown.png and timeline.png, all in DIR
    python3 -m wb e2e fill DIR [NOTES ...]
                                              puts the tables of DIR into the notes' blocks
                                              <!-- wb:fill e2e-NAME --> ... <!-- wb:end e2e-NAME -->
                                              (see wb.markers; default: 08_end_to_end/README.md
                                              and README.zh-CN.md)

The files (see 08_end_to_end/output.cuh): run.txt (GPU, versions, commit, time, command, link),
transfers.csv, crossover.csv, streams.csv, timeline_serial.csv, timeline_pipelined.csv,
graphs.csv, managed.csv. A part that did not run has no file, and its table says so.
Standard library only; matplotlib is optional (without it the tables are still written and one
line says how to get the pictures)."""
import csv
import os
import sys

from wb import ROOT, add_command, markers
from wb.mdtable import lines as table

SECTIONS = ["provenance", "transfers", "crossover", "breakdown", "streams", "graphs", "managed"]
INSTALL_LINE = "install python3-matplotlib (apt) or pip install matplotlib for the pictures"
OP_COLOURS = {"h2d": "#4c72b0", "gemm": "#dd8452", "d2h": "#55a868"}


class UsageError(Exception):
    pass


# ---- reading -------------------------------------------------------------------------------------
def read_csv(folder, name):
    """The rows of folder/name as dicts, or None when the part did not run."""
    path = os.path.join(folder, name)
    if not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_run(folder):
    """run.txt as a dict ("key: value" lines)."""
    info = {}
    path = os.path.join(folder, "run.txt")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.partition(":")
                if sep:
                    info[key.strip()] = value.strip()
    return info


def num(text):
    """A measured number, or None for an empty or negative field (not measured)."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if v >= 0 else None


def fmt(v, decimals=3):
    return "-" if v is None else f"{v:.{decimals}f}"


# ---- the crossover -------------------------------------------------------------------------------
def is_pageable(path):
    return path.endswith("_pageable")


def crossover_summary(rows):
    """Per size: the fastest GPU path from pinned memory and the fastest CPU path, and the size from
    which the GPU wins at that and every larger size (None when it never does). The same rule as
    crossover_size in 08_end_to_end/part2_crossover.cuh."""
    sizes, gpu, cpu = [], {}, {}
    for r in rows:
        s = int(r["size"])
        if s not in sizes:
            sizes.append(s)
        t = num(r["total_ms"])
        if t is None or r["status"] == "FAIL" or (r["kind"] == "gpu" and is_pageable(r["path"])):
            continue
        best = gpu if r["kind"] == "gpu" else cpu
        if s not in best or t < best[s][0]:
            best[s] = (t, r["path"])
    sizes.sort()
    answer = None
    for s in reversed(sizes):
        if s not in gpu or s not in cpu:
            continue
        if gpu[s][0] < cpu[s][0]:
            answer = s
        else:
            break
    return sizes, gpu, cpu, answer


def size_label(rows, size):
    """S^3 for a cube, else the shape itself (the CSV's size is the cube of equal work)."""
    shapes = {r.get("shape", "") for r in rows if int(r["size"]) == size}
    if len(shapes) == 1:
        shape = shapes.pop()
        if shape and shape != f"{size}x{size}x{size}":
            return shape
    return f"{size}^3"


def paths_in_order(rows):
    seen = []
    for r in rows:
        if r["path"] not in seen:
            seen.append(r["path"])
    return seen


# ---- the tables ----------------------------------------------------------------------------------
def provenance_lines(run):
    if not run:
        return ["No run.txt in this folder: `make measure-08 OUT=DIR` measures, then `PYTHONPATH=tools python3 -m wb e2e fill DIR`."]
    return [f"Measured on {run.get('gpu', '?')} (sm_{run.get('cc', '?').replace('.', '')}), driver CUDA "
            f"{run.get('driver', '?')}, runtime {run.get('runtime', '?')}, {run.get('timestamp', '?')}, git "
            f"`{run.get('git', '?')}`, {run.get('cpu_threads', '?')} CPU threads, OpenBLAS "
            f"{run.get('openblas', '?')}, with",
            f"`{run.get('command', '?')}`.",
            f"Host link: {run.get('link', '?')} (read with {run.get('link_how', '?')})."]


def transfers_lines(rows):
    if rows is None:
        return ["(the transfers part did not run)"]
    body = [[r["direction"], r["host"], fmt(int(r["bytes"]) / 2**20, 0), fmt(num(r["ms_median"]), 4),
             fmt(num(r["gbs"]), 2), fmt(num(r["pct_link"]), 1)] for r in rows]
    return table(["direction", "host memory", "MiB", "ms (median)", "GB/s", "% of the link"], body)


def crossover_lines(rows):
    if rows is None:
        return ["(the crossover part did not run)"]
    paths = paths_in_order(rows)
    cell = {(int(r["size"]), r["path"]): r for r in rows}
    sizes, gpu, cpu, answer = crossover_summary(rows)
    body = []
    for s in sizes:
        line = [size_label(rows, s)]
        for p in paths:
            r = cell.get((s, p))
            if r is None:
                line.append("-")
            elif r["status"].startswith("skipped"):
                line.append(r["status"])
            else:
                line.append(fmt(num(r["total_ms"]), 3) + (" FAIL" if r["status"] == "FAIL" else ""))
        winner = "-"
        if s in gpu and s in cpu:
            winner = "GPU" if gpu[s][0] < cpu[s][0] else "CPU"
        line.append(winner)
        body.append(line)
    out = table(["size"] + [f"{p} ms" for p in paths] + ["faster"], body)
    out.append("")
    if answer is None:
        out.append("Crossover: the GPU (copies included, pinned memory) did not win for good at these sizes.")
    else:
        out.append(f"Crossover: from {answer}^3 on, the GPU (copies included, from pinned memory) beats the "
                   f"fastest CPU path at every measured size.")
    return out


def breakdown_lines(rows, path="gpu_cublas_pinned"):
    if rows is None:
        return ["(the crossover part did not run)"]
    body = []
    for r in rows:
        if r["path"] != path or num(r["total_ms"]) is None:
            continue
        total = num(r["total_ms"])
        kernel = num(r["kernel_ms"]) or 0.0
        body.append([size_label(rows, int(r["size"])), fmt(num(r["h2d_ms"]), 4), fmt(kernel, 4), fmt(num(r["d2h_ms"]), 4),
                     fmt(num(r["overhead_ms"]), 4), fmt(total, 4), fmt(100.0 * kernel / total if total else None, 1)])
    if not body:
        return [f"(no {path} rows)"]
    return table(["size", "copy in ms", "kernel ms", "copy out ms", "launch + sync ms", "total ms", "kernel % of total"],
                 body)


def streams_lines(rows):
    if rows is None:
        return ["(the streams part did not run)"]
    first = rows[0]
    out = [f"Busy time in the serial run: copies in {fmt(num(first['h2d_ms']))} ms, GEMMs {fmt(num(first['gemm_ms']))} ms, "
           f"copies out {fmt(num(first['d2h_ms']))} ms; max(total copy, total GEMM) = {fmt(num(first['goal_bound_ms']))} ms, "
           f"max(copy in, GEMM, copy out) = {fmt(num(first['engine_bound_ms']))} ms.", ""]
    body = [[r["mode"], r["streams"], r["panels"], fmt(num(r["ms"])), fmt(num(r["ratio_goal"]), 3), r["status"],
             r["same_as_serial"]] for r in rows]
    out += table(["mode", "streams", "panels", "ms", "/ max(copy, GEMM)", "check", "same bits as serial"], body)
    pipelined = [r for r in rows if r["mode"] == "pipelined"]
    if pipelined:
        ratio = num(pipelined[0]["ratio_goal"])
        met = ratio is not None and ratio <= 1.15
        out += ["", f"Goal (pipelined within 15% of max(total copy, total GEMM)): {'met' if met else 'not met'} "
                    f"({fmt(ratio, 3)})."]
    return out


def graphs_lines(rows, runs=None):
    """The table of one run; with `runs` (graphs_runs.csv: the rows of several runs, column `run`),
    also the range of the replay's advantage over them: it moves from run to run."""
    if rows is None:
        return ["(the graphs part did not run)"]
    body = [[r["path"], r["shape"], r["count"], fmt(num(r["us_per_gemm"]), 2), fmt(num(r["gpu_us_per_gemm"]), 2),
             r["status"], r["same_as_loop"]] for r in rows]
    out = table(["path", "shape", "GEMMs", "us per GEMM (host clock)", "us per GEMM (GPU)", "check",
                 "same bits as loop"], body)
    by = {r["path"]: num(r["us_per_gemm"]) for r in rows}
    if by.get("loop") and by.get("graph"):
        ratio = by["loop"] / by["graph"]
        out += ["", f"Graph replay: {ratio:.2f}x cheaper per GEMM than direct launches (goal 2.5x: "
                    f"{'met' if ratio >= 2.5 else 'not met'})."]
    if runs:
        us = {}
        for r in runs:
            us.setdefault(r["run"], {})[r["path"]] = num(r["us_per_gemm"])
        whole = [u for u in us.values() if u.get("loop") and u.get("graph")]
        if whole:
            ratios = [u["loop"] / u["graph"] for u in whole]
            loop = [u["loop"] for u in whole]
            graph = [u["graph"] for u in whole]
            out += ["", f"Graph replay over {len(whole)} runs (graphs_runs.csv): {min(ratios):.2f}-{max(ratios):.2f}x "
                        f"cheaper per GEMM; direct launches {min(loop):.2f}-{max(loop):.2f} us per GEMM, replayed "
                        f"{min(graph):.2f}-{max(graph):.2f} us per GEMM."]
    return out


def managed_lines(rows):
    if rows is None:
        return ["(the managed part did not run)"]
    body = []
    for r in rows:
        skipped = r["status"].startswith("skipped")
        body.append([r["scenario"], fmt(num(r["setup_ms"])), fmt(num(r["first_gemm_ms"])), fmt(num(r["second_gemm_ms"])),
                     fmt(num(r["c_to_cpu_ms"])), fmt(num(r["cpu_reads_a_ms"])), r["status"],
                     "-" if skipped else r["same_as_explicit"]])
    return table(["scenario", "copies / prefetch ms", "1st GEMM ms", "2nd GEMM ms", "C to the CPU ms", "CPU reads A ms",
                  "check", "same bits as explicit"], body)


# The Chinese notes get the same tables in Chinese: every fixed phrase of the English text, replaced
# longest first (numbers, paths and names stay as they are).
ZH = [
    ("No run.txt in this folder: `make measure-08 OUT=DIR` measures, then `PYTHONPATH=tools python3 -m wb e2e fill DIR`.",
     "此文件夹中没有 run.txt：`make measure-08 OUT=DIR` 进行测量，然后 `PYTHONPATH=tools python3 -m wb e2e fill DIR`。"),
    ("Measured on ", "测量环境："), (", driver CUDA ", "，驱动 CUDA "), (", runtime ", "，运行时 "),
    (" CPU threads, OpenBLAS ", " 个 CPU 线程，OpenBLAS "), ("not built in", "未链接"), ("built in", "已链接"),
    (", with", "，命令："), ("Host link: ", "主机链路："), (" (read with ", "（读取方式："),
    ("the GPU (copies included, pinned memory) did not win for good at these sizes.",
     "在这些尺寸上，GPU（计入拷贝，锁页内存）没有稳定胜出。"),
    ("Crossover: from ", "交叉点：从 "),
    (" on, the GPU (copies included, from pinned memory) beats the fastest CPU path at every measured size.",
     " 起，GPU（计入拷贝，来自锁页内存）在每个测量尺寸上都快于最快的 CPU 路径。"),
    ("Crossover: ", "交叉点："),
    ("Busy time in the serial run: copies in ", "串行运行中的忙碌时间：拷入 "), (" ms, GEMMs ", " ms，GEMM "),
    (" ms, copies out ", " ms，拷出 "), ("; max(total copy, total GEMM) = ", "；max(总拷贝, 总 GEMM) = "),
    (" ms, max(copy in, GEMM, copy out) = ", " ms，max(拷入, GEMM, 拷出) = "),
    ("Goal (pipelined within 15% of max(total copy, total GEMM)): ", "目标（流水不超过 max(总拷贝, 总 GEMM) 的 115%）："),
    ("Graph replay: ", "图重放："),
    ("Graph replay over ", "图重放，共 "), (" runs (graphs_runs.csv): ", " 次运行（graphs_runs.csv）：每 GEMM 的开销低 "),
    ("x cheaper per GEMM; direct launches ", " 倍；直接启动每 GEMM "), (" us per GEMM, replayed ", " 微秒，重放每 GEMM "),
    (" us per GEMM.", " 微秒。"), ("x cheaper per GEMM than direct launches (goal 2.5x: ", " 倍于直接启动的每 GEMM 开销节省（目标 2.5 倍："),
    ("not met", "未达到"), ("met", "达到"),
    ("(the ", "（"), (" part did not run)", " 部分未运行）"),
    ("% of the link", "占链路的 %"), ("host memory", "主机内存"), ("| direction |", "| 方向 |"), ("ms (median)", "毫秒（中位数）"),
    ("kernel % of total", "内核占总时间的 %"), ("launch + sync ms", "启动 + 同步 ms"), ("copy in ms", "拷入 ms"),
    ("copy out ms", "拷出 ms"), ("kernel ms", "内核 ms"), ("total ms", "总计 ms"), ("faster", "更快"),
    ("same bits as serial", "与串行比特相同"), ("same bits as loop", "与循环比特相同"),
    ("same bits as explicit", "与显式拷贝比特相同"), ("/ max(copy, GEMM)", "/ max(拷贝, GEMM)"),
    ("us per GEMM (host clock)", "每 GEMM 微秒（主机时钟）"), ("us per GEMM (GPU)", "每 GEMM 微秒（GPU）"),
    ("copies / prefetch ms", "拷贝 / 预取 ms"), ("1st GEMM ms", "第 1 次 GEMM ms"), ("2nd GEMM ms", "第 2 次 GEMM ms"),
    ("C to the CPU ms", "C 回到 CPU ms"), ("CPU reads A ms", "CPU 读 A ms"),
    ("| mode |", "| 模式 |"), ("| path |", "| 路径 |"), ("| scenario |", "| 场景 |"), ("| size |", "| 尺寸 |"),
    (" streams |", " 流数 |"), (" panels |", " 面板数 |"), (" check |", " 检查 |"), (" shape |", " 形状 |"),
]


def to_zh(line):
    for en, zh in sorted(ZH, key=lambda p: -len(p[0])):
        line = line.replace(en, zh)
    return line


def sections(folder, lang="en"):
    """Every section's markdown lines, by name (lang "zh": in Chinese)."""
    if lang == "zh":
        return {name: [to_zh(x) for x in lines] for name, lines in sections(folder).items()}
    cross = read_csv(folder, "crossover.csv")
    return {
        "provenance": provenance_lines(read_run(folder)),
        "transfers": transfers_lines(read_csv(folder, "transfers.csv")),
        "crossover": crossover_lines(cross),
        "breakdown": breakdown_lines(cross),
        "streams": streams_lines(read_csv(folder, "streams.csv")),
        "graphs": graphs_lines(read_csv(folder, "graphs.csv"), read_csv(folder, "graphs_runs.csv")),
        "managed": managed_lines(read_csv(folder, "managed.csv")),
    }


def tables_markdown(folder):
    out = []
    for name, lines in sections(folder).items():
        out += [markers.begin(f"e2e-{name}")] + lines + [markers.end(f"e2e-{name}"), ""]
    return "\n".join(out)


# ---- filling the notes ---------------------------------------------------------------------------
def fill_text(text, secs, path="<text>"):
    """Replaces the content of each block e2e-NAME with the section NAME. Blocks that are absent
    are left alone; returns (new text, names filled). Raises markers.MarkerError on a marker that
    cannot be read."""
    filled = []
    for name, lines in secs.items():
        new = markers.replace(text, f"e2e-{name}", "\n".join(lines) + "\n", path)
        if new is not None:
            text = new
            filled.append(name)
    return text, filled


def fill(folder, notes):
    for path in notes:
        secs = sections(folder, "zh" if path.endswith(".zh-CN.md") else "en")
        with open(path) as f:
            text = f.read()
        try:
            new, filled = fill_text(text, secs, path)
        except markers.MarkerError as e:
            raise UsageError(str(e)) from None
        if not filled:
            raise UsageError(f"{path} has no {markers.begin('e2e-NAME')} blocks")
        with open(path, "w") as f:
            f.write(new)
        print(f"e2e_plots: {path}: filled {', '.join(filled)}")


# ---- the pictures --------------------------------------------------------------------------------
def draw(folder):
    """Draws the pictures into folder; returns their names, or None without matplotlib."""
    if os.environ.get("WB_NO_MATPLOTLIB"):
        return None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    drawn = []
    cross = read_csv(folder, "crossover.csv")
    if cross:
        sizes, gpu, cpu, answer = crossover_summary(cross)
        fig, ax = plt.subplots(figsize=(8, 5))
        for p in paths_in_order(cross):
            pts = [(int(r["size"]), num(r["total_ms"])) for r in cross if r["path"] == p and num(r["total_ms"]) is not None]
            if pts:
                ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", linestyle="--" if p.startswith("cpu") else "-",
                        label=p)
        if answer is not None:
            ax.axvline(answer, color="grey", linestyle=":")
            ax.annotate(f"GPU wins from {answer}^3", (answer, ax.get_ylim()[0]), textcoords="offset points",
                        xytext=(5, 10), color="grey")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("S (C = A B, all S x S), copies included for the GPU")
        ax.set_ylabel("end-to-end time (ms)")
        ax.set_title("GPU vs CPU, host memory to host memory")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "crossover.png"), dpi=120)
        plt.close(fig)
        drawn.append("crossover.png")

        rows = [r for r in cross if r["path"] == "gpu_cublas_pinned" and num(r["total_ms"])]
        if rows:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            parts = [("h2d_ms", "copy in", OP_COLOURS["h2d"]), ("kernel_ms", "kernel", OP_COLOURS["gemm"]),
                     ("d2h_ms", "copy out", OP_COLOURS["d2h"]), ("overhead_ms", "launch + sync", "#8c8c8c")]
            labels = [f"{r['size']}" for r in rows]
            bottom = [0.0] * len(rows)
            for key, label, colour in parts:
                share = [100.0 * (num(r[key]) or 0.0) / num(r["total_ms"]) for r in rows]
                ax.bar(labels, share, bottom=bottom, label=label, color=colour)
                bottom = [b + s for b, s in zip(bottom, share)]
            for i, r in enumerate(rows):
                ax.text(i, 101, f"{num(r['total_ms']):.3g} ms", ha="center", fontsize=7)
            ax.set_ylim(0, 110)
            ax.set_xlabel("S (cuBLAS, pinned host memory)")
            ax.set_ylabel("% of the end-to-end time")
            ax.set_title("Where the time goes")
            ax.legend(fontsize=8, loc="lower right")
            fig.tight_layout()
            fig.savefig(os.path.join(folder, "breakdown.png"), dpi=120)
            plt.close(fig)
            drawn.append("breakdown.png")

    timelines = [(name, read_csv(folder, f"timeline_{name}.csv")) for name in ("serial", "pipelined")]
    timelines = [(n, t) for n, t in timelines if t]
    if timelines:
        end = max(float(r["end_ms"]) for _, t in timelines for r in t)
        fig, axes = plt.subplots(len(timelines), 1, figsize=(10, 1.6 + 1.1 * sum(
            len({r["stream"] for r in t}) for _, t in timelines)), sharex=True, squeeze=False)
        for ax, (name, t) in zip(axes[:, 0], timelines):
            streams = sorted({int(r["stream"]) for r in t})
            for r in t:
                kind = r["op"].split()[0]
                y = int(r["stream"])
                # Copies in the upper half of a stream's lane, GEMMs in the lower: they overlap in time.
                lane = (y - 0.4, 0.35) if kind != "gemm" else (y + 0.05, 0.35)
                ax.broken_barh([(float(r["start_ms"]), float(r["end_ms"]) - float(r["start_ms"]))], lane,
                               color=OP_COLOURS.get(kind, "#999999"))
            ax.set_yticks(streams)
            ax.set_yticklabels([f"stream {s}" for s in streams])
            ax.invert_yaxis()
            ax.set_title(f"{name}: {max(float(r['end_ms']) for r in t):.2f} ms", fontsize=9)
            ax.set_xlim(0, end * 1.02)
        axes[-1, 0].set_xlabel("ms since the first operation (CUDA events)")
        handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in OP_COLOURS.values()]
        axes[0, 0].legend(handles, ["copy in", "GEMM", "copy out"], fontsize=8, loc="upper right")
        fig.tight_layout()
        fig.savefig(os.path.join(folder, "timeline.png"), dpi=120)
        plt.close(fig)
        drawn.append("timeline.png")
    return drawn


def plots(folder):
    if not os.path.isdir(folder):
        raise UsageError(f"{folder} is not a folder (run ./08_end_to_end/08_end_to_end --out {folder} first)")
    with open(os.path.join(folder, "tables.md"), "w") as f:
        f.write(tables_markdown(folder))
    drawn = draw(folder)
    if drawn is None:
        print(f"e2e_plots: {folder}/tables.md written; no pictures: {INSTALL_LINE}")
    else:
        print(f"e2e_plots: {folder}/tables.md and {', '.join(drawn) or 'no pictures (no data)'} written")


def register(top):
    parser, sub = add_command(top, "e2e", "the pictures and tables of chapter 08, from its --out folder", __doc__,
                              nested=True)
    p = sub.add_parser("plots", help="DIR/tables.md and, with matplotlib, the pictures")
    p.add_argument("folder", metavar="DIR")
    p = sub.add_parser("fill", help="the tables of DIR into the chapter's notes")
    p.add_argument("folder", metavar="DIR")
    p.add_argument("notes", nargs="*", metavar="NOTES",
                   help="default: 08_end_to_end/README.md and README.zh-CN.md")
    parser.set_defaults(run=main)


def main(a):
    try:
        if a.cmd == "plots":
            plots(a.folder)
        else:
            notes = a.notes or [os.path.join(ROOT, "08_end_to_end", n) for n in ("README.md", "README.zh-CN.md")]
            fill(a.folder, notes)
    except (UsageError, OSError) as e:
        print(f"e2e_plots: error: {e}", file=sys.stderr)
        return 2
    return 0
