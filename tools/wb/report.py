"""wb.report - `make report` (`python3 -m wb report`): the homework report, filled in from measured results.

Reads the bench results (results/bench.csv, the spec's CSV schema) and the device facts that
00_env_check wrote (results/env.json), and writes report/: the report in English and Chinese with
every table and paragraph computed from those two files, the plots (with matplotlib), and a copy
of the two input files, so the report carries its evidence.

The first fill copies report_template/ and replaces each {{PLACEHOLDER}} by its table, set between
two invisible markers (<!-- wb:fill NAME --> ... <!-- wb:end NAME -->, the one marker syntax of
every tool, see wb.markers). Every later fill reads the
report that is there and replaces only what lies between markers: the text the student wrote (every
**Write** section, anything outside the markers) is kept character for character. A block the
student edited between its markers is kept too, and named in one line: each fill records what it
wrote into each block (.report.md.filled.json beside the report), and a block that holds something
else is not replaced (emptied, it is filled again). Every earlier version is kept as
report.md.bak.1, .bak.2, ... (the next free number), never overwritten. A marker the student deleted
is reported in one line and its table is left alone; writing {{NAME}} into the report brings a
table back on the next fill.

Settings (environment variables; paths relative to the workbook's top folder):
  REPORT_CSV       the results (default results/bench.csv)
  REPORT_ENV       the device facts (default: env.json next to REPORT_CSV)
  REPORT_OUT       where the report goes (default report/)
  REPORT_TEMPLATE  the templates (default report_template/)
  REPORT_SHAPE     the shape of the ladder, the roofline and every table at one shape (S or MxNxK).
                   A shape at which no variant passed is refused; unset, it is 4096 (4096x4096x4096)
                   or, when no chapter ran that, the largest cube measured, and the report says so
  STUDENT_ID       who the report is by (else the CSV's student column)
  REPORT_RUBRIC    the grading rubric (default report_template/rubric.json; none is fine). When it
                   has "homework" (a list of chapter folders: a kit made for a subset of chapters),
                   the report covers those chapters only: see "Homework" below

Homework: with "homework" in the rubric, every per-chapter table and plot holds the homework's
chapters only (the machine, the provenance, cuBLAS's reference lines in the plots and the summary
stay), and on the first fill the template's sections of other chapters are left out: a section
between <!-- wb:only CHAPTER ... --> and <!-- wb:only-end --> is kept when one of its chapters is
in the homework (or there is no homework), and those markers never reach the report. A report
filled before keeps its sections (its text is the student's); the tables of chapters outside the
homework then say so.

Whose numbers: the report's first line says in bold when they are not the student's own: always for
a results file in a folder under results/ (results/h200/bench.csv: the workbook's reference runs);
with STUDENT_ID set, when any row's student field is empty or another id (how many, and which); and
without it, when the rows name several students. The provenance says it either way.

Standard library only; matplotlib is optional (without it the tables are still filled and one line
says how to install it). Exit status: 0 done, 2 bad input, found before any work: the results file
is missing, empty, not a results CSV (its header lacks the workbook's columns: one line names them)
or holds no row of the homework's chapters, REPORT_SHAPE is not a size or not
in the results, REPORT_RUBRIC cannot be read or names a chapter that is not here, or REPORT_OUT
cannot be written (also when a write fails later: one line, never a traceback).
"""
import datetime
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

from wb import ROOT, add_command, markers
from wb import bench_summary as bs  # the same reading of the CSV as `make bench`
from wb.mdtable import table as md_table
from wb.shapes import parse_shape, shape_text  # the programs' grammar of sizes

INSTALL_LINE = "install python3-matplotlib (apt) or pip install matplotlib for the plots"
TEMPLATES = (("report.md", "en"), ("report.zh-CN.md", "zh"))
DEFAULT_SHAPE = "4096"
E2E_CHAPTER = "08_end_to_end"


def in_ladder(chapter):
    """True for the chapters whose own kernels are the steps of the ladder (02-06 and 09, and any
    later one): not 00 (it measures the machine), 01 (the CPU: across sizes only), 07 (cuBLAS
    itself, section 4.3) or 08 (whole programs with their copies, section 4.8)."""
    return not (chapter.startswith("00_") or bs.is_cpu_chapter(chapter)
                or chapter in (bs.PREFERRED_CUBLAS_CHAPTER, E2E_CHAPTER))



def plot_names(ladder_shape):
    """The plots' file names; those of one shape carry it (ladder_4096.png, energy_4096x4096x1024.png),
    so a plot is never named after a shape it does not show. The energy plot is drawn only when the
    results have a GFLOP/J column with figures in it."""
    label = bs.shape_label(ladder_shape)
    return ("gflops_vs_size.png", f"ladder_{label}.png", "roofline.png", f"energy_{label}.png")


# Words of the generated tables, in both languages.
TEXT = {
    "en": {
        "fact": "fact", "value": "value", "chapter": "chapter", "variant": "variant", "type": "type",
        "best": "best variant", "gflops": "GFLOP/s", "pct_cublas": "% of cuBLAS", "pct_peak": "% of peak",
        "rel_err": "rel. error", "ms": "ms (median)", "check": "check", "shape": "M x N x K",
        "runs": "shapes run", "pass": "PASS", "fail": "FAIL", "other": "other", "worst": "largest rel. error",
        "at": "at", "ai": "FLOP/byte (min. traffic)", "roof": "roofline limit, GFLOP/s", "pct_roof": "% of the limit",
        "side": "side of the ridge", "side_compute": "compute", "side_memory": "memory",
        "no_rows": "(no rows in the results)", "not_run": "not run at this shape",
        "baseline_note": "cuBLAS baseline, same run",
        "ladder_caption": "Best variant of each chapter's own kernels at {shape}{where}: the one with the highest % "
                          "of cuBLAS. % of cuBLAS: against "
                          "cuBLAS in the same precision, timed on the same shape in the same program run. % of peak: "
                          "FP32 peak for FP32, tensor-core peak for TF32, FP16 and BF16.",
        # "where" above and below: the sections of the report that hold what a table leaves out
        "where": " ({items})", "where_and": ", ",
        "where_07": "chapter 07's cuBLAS calls are in section 4.3", "where_08": "chapter 08's whole programs in section 4.8",
        "where_09": "chapter 09's Hopper ladder in section 4.9",
        "shape_fallback": "**No chapter ran {wanted} (the default shape): the ladder, the roofline and the tables "
                          "at one shape are at {used}, the largest cube measured. `REPORT_SHAPE=...` picks another "
                          "shape.**",
        "sweep_caption": "GFLOP/s of the best variant of each chapter of the ladder at each shape, with its % of "
                         "cuBLAS in brackets (as in the ladder){cpu}. - : not run at that shape, or nothing passed.",
        "sweep_cpu": ", and chapter 01's CPU code beside them: its % is against cuBLAS SGEMM on the GPU on the "
                     "same shape from the same bench run",
        "variants_caption": "Every variant at {shape}, as measured (baseline rows included).",
        "cublas_caption": "Chapter 07's baseline rows: cuBLAS at every size of its sweep, GFLOP/s and % of the "
                          "peak of that precision.",
        "no_cublas": "Chapter 07 is not in these results: run `make bench` (or `./07_cublas_baseline/07_cublas_baseline --csv ...`).",
        "cutlass_caption": "CUTLASS beside cuBLAS (chapter 07, same run): GFLOP/s and % of cuBLAS of the same "
                           "precision, timed in rounds alternating with it. `*_tensorop` is CUTLASS's Ampere-style "
                           "kernel (`mma.sync`, the instruction chapter 06 uses), `*_wgmma` its Hopper kernel "
                           "(chapter 09's instruction), `simt_sgemm` FP32 without tensor cores.",
        "no_cutlass": "No CUTLASS rows in these results: chapter 07 runs CUTLASS beside cuBLAS when it was built "
                      "with CUTLASS's headers (`CUTLASS_INC=...`, see chapter 07's notes).",
        "pct_cublas_short": "% of cuBLAS",
        "e2e_caption": "Chapter 08, end to end: C = A * B from host memory to host memory, copies included for the "
                       "GPU paths (pinned or pageable host memory), beside chapter 01's CPU code on the same shape. "
                       "% of cuBLAS: against cuBLAS's kernel-only rate on that shape in the same run, i.e. how much of "
                       "the kernel's speed is left once the copies count. faster: the fastest GPU path from pinned "
                       "memory against the fastest CPU path.",
        "no_e2e": "Chapter 08 is not in these results: run `make bench` (or `./08_end_to_end/08_end_to_end --part "
                  "crossover --csv ...`); `make measure-08` measures its other parts.",
        "e2e_faster": "faster",
        "correct_caption": "Every variant's check over all shapes it ran on. rel. error = ||C - C_ref||_F / "
                           "||C_ref||_F against the double-precision reference computed from the inputs as "
                           "rounded to the variant's input precision; a check passes when every entry is "
                           "inside the spec's bound.",
        "baselines_line": "cuBLAS/OpenBLAS baseline rows: {n} checked, {passed} PASS, largest rel. error {worst}.",
        "roof_caption": "Each chapter's best variant at {shape} against the roofline of this GPU. "
                        "FLOP/byte = 2MNK / (bytes of A, B and C moved once): the least traffic any GEMM "
                        "of this shape can have (its real traffic is higher, so its real point lies to the left). "
                        "Limit = min(compute ceiling, FLOP/byte x memory bandwidth) with the ceilings below.",
        "ceilings": "Ceilings used: {items}.",
        "fp32_measured": "FP32 {v} GFLOP/s (measured FMA rate)",
        "fp32_theory": "FP32 {v} GFLOP/s (theoretical peak)",
        "tf32": "TF32 tensor cores {v} GFLOP/s (theoretical)",
        "fp16": "FP16 and BF16 tensor cores {v} GFLOP/s (theoretical)",
        "fp8_e4m3": "FP8 (E4M3) tensor cores {v} GFLOP/s (theoretical: twice FP16's, compute capability 8.9 and later)",
        "bw_measured": "memory {v} GB/s (measured copy)",
        "bw_theory": "memory {v} GB/s (theoretical)",
        "no_bw": "memory bandwidth unknown (no device facts): the memory side is not drawn",
        "no_env": "Device facts not found ({path}): run `make check-env` or `make bench` on the GPU machine "
                  "(00_env_check --json). What the results file itself says:",
        "gpu": "GPU", "cc": "compute capability", "sms": "SMs x FP32 lanes", "clock": "max SM clock",
        "memory": "device memory", "l2": "L2 cache", "smem": "shared memory per SM / per block (opt-in)",
        "regs": "registers per SM", "cuda": "CUDA driver / runtime", "ecc": "ECC",
        "peak_fp32": "FP32 peak (theory)", "fma": "FP32 FMA rate (measured)",
        "peak_tf32": "TF32 tensor-core peak (theory)", "peak_fp16": "FP16 and BF16 tensor-core peak (theory)",
        "peak_fp8": "FP8 (E4M3) tensor-core peak (theory: twice FP16's)",
        "bw": "DRAM bandwidth (theory)", "bw_meas": "DRAM bandwidth (measured, best copy)",
        "ridge": "ridge point (measured FMA / measured bandwidth)", "ridge_theory": "ridge point (theory)",
        "yes": "yes", "no": "no", "of_theory": " ({pct:.1f}% of theory)", "commit": "commit", "from_csv": ", from the CSV's % of peak",
        "student": "Student", "student_unset": "not set (run `STUDENT_ID=... make report`)",
        "generated": "Report generated", "by": "by tools/wb/report.py at commit",
        "measurements": "Measurements", "rows": "rows", "sha": "SHA-256", "between": "measured between",
        "commits": "programs built from commit(s)", "device_facts": "Device facts", "none": "none",
        "commands": "Commands (from {path})", "devices": "Devices in the results",
        "copies": "Copies of both files are in `data/` next to this report.",
        "plot1": "GFLOP/s against size, one panel per precision family: the best variant of each chapter, and "
                 "cuBLAS in each precision.",
        "plot2": "The ladder at {shape}: each chapter's best variant as % of cuBLAS in the same precision "
                 "(the dashed line: cuBLAS, 100 %).",
        "byline": "**Student:** {student} · **GPU:** {gpu} · **filled in:** {date}",
        "reference_run": "These are not your measurements: `{path}` is one of the workbook's reference runs (the "
                         "folders under `results/` hold the runs its notes cite). Run `make bench` on your GPU and "
                         "fill the report from `results/bench.csv`.",
        "none_marked": "None of the {total} rows of `{path}` is marked as measured by {student} (their student "
                       "field: {fields}): as far as the results say, these are not your own numbers. "
                       "`STUDENT_ID={student} make bench` measures yours.",
        "some_marked": "{n} of {total} rows of `{path}` are not marked as measured by {student} (their student "
                       "field: {fields}): these numbers are not all your own. `STUDENT_ID={student} make bench` "
                       "measures yours.",
        "several": "The rows of `{path}` are marked as measured by several students ({fields}): these numbers are "
                   "not one student's.",
        "all_marked": "all {total} rows are marked as measured by {student}",
        "unmarked": "the rows name no student (STUDENT_ID was not set when they were measured)",
        "empty_field": "empty", "whose": "Whose numbers",
        "not_homework": "Chapter {chapter} is not part of this homework (`{rubric}`).",
        "chapters": "Chapters", "homework_of": "the homework of `{rubric}`: {chapters}",
        "left_out": "; left out of this report: {chapters}", "no_rows_for": "; no rows in these results: {chapters}",
        "tflops": "TFLOP/s", "precision": "precision", "inputs": "inputs", "u_in": "u of the inputs",
        "n_variants": "variants", "err_median": "rel. error, median", "err_max": "rel. error, largest",
        "err_cublas": "rel. error, cuBLAS", "vs_fp32": "median / FP32's", "from": "rows from",
        "in_fp32": "FP32: 24-bit significand, 8-bit exponent",
        "in_tf32": "TF32: 11-bit significand (10 stored), 8-bit exponent",
        "in_fp16": "FP16: 11-bit significand (10 stored), 5-bit exponent",
        "in_bf16": "BF16: 8-bit significand (7 stored), 8-bit exponent",
        "tc_caption": "Every tensor-core row at {shape}: TF32, FP16 or BF16 inputs, FP32 accumulation, cuBLAS of "
                      "the same precision from the same run included{where}. % of cuBLAS: against cuBLAS in the same "
                      "precision; rel. error as in section 5.",
        "no_tc": "No TF32, FP16 or BF16 rows at {shape} in these results: run chapter 06 (`make bench`, or "
                 "`./06_tensor_core_wmma/06_tensor_core_wmma --size 4096 --csv ...`).",
        "prec_caption": "What each precision costs in accuracy at {shape}: the variants that passed (cuBLAS "
                        "apart), FP32 from {yardstick} as the yardstick. u = 2^-p is the largest relative error "
                        "of rounding one input to nearest (p = significand bits).",
        "prec_note": "FP16 and TF32 inputs have the same u, 8192 times FP32's; FP16's 5-bit exponent also "
                     "narrows the range (largest 65504, smallest normal about 6.1e-5), TF32 keeps FP32's. "
                     "BF16 keeps FP32's 8-bit exponent, and so its range, with only 8 significand bits: its u "
                     "is 8 times FP16's. "
                     "Every rel. error here is measured against the reference computed from the inputs rounded "
                     "to nearest in the variant's precision; what rounding the inputs at all costs is printed by "
                     "`make -C 06_tensor_core_wmma lab && ./06_tensor_core_wmma/lab/tune_06 --precision --sizes 1024,4096`.",
        # The lines under the precision table, computed from its numbers (precision_against_u).
        "u_head": "**The largest errors against u of the inputs, at K = {K}:**",
        "u_line": "- **{dtype}**: largest {err} = {ratio} u, {side}{who}: {why}",
        "u_above": "above u", "u_below": "below u", "u_of": "`{variant}` of {chapter}", "u_more": ", and {n} more",
        "why_fp32": "u is the accumulation's own rounding, and a sum of K products rounds K times, so its error "
                    "grows with K: of the order of √K·u = {typical} with random signs, at most K·u = {worst} of "
                    "Σ|a·b| (the check's bound).",
        "why_below": "the reference starts from the same rounded inputs, so what is left is the FP32 accumulation "
                     "(of the order of √K·2^-23 = {typical}).",
        "why_tf32": "more than the FP32 accumulation gives (of the order of √K·2^-23 = {typical}); the likely "
                    "difference is in the inputs: tensor cores that read FP32 data as TF32 drop its low 13 bits "
                    "(truncation) where the reference rounds to nearest, which moves each factor by up to "
                    "2^-10 = 2 u. The check allows for that in TF32 (its bound per entry: {bound} · Σ|a·b|).",
        "why_other": "more than the FP32 accumulation gives (of the order of √K·2^-23 = {typical}): the kernel "
                     "rounds its inputs or its sums differently from the reference; the check's bound per entry is "
                     "{bound} · Σ|a·b|.",
        "plot3": "Roofline with the measured ceilings; every variant at every shape it ran on, at its "
                 "minimum-traffic FLOP/byte; the best of each chapter at {shape} labelled.",
        "plot4": "Energy at {shape}: GFLOP per joule of the whole board for each chapter's best variant and for "
                 "cuBLAS (black), from the same run.",
        "gflops_per_j": "GFLOP/J", "joules": "mJ per call",
        "energy_caption": "Energy at {shape}: the best variant of each chapter and cuBLAS in each precision, as "
                          "GFLOP per joule of the whole board (NVML's energy counter between two of its refreshes at "
                          "least 500 ms apart, the call running back to back; "
                          "`make bench` passes `--energy`). Idle power and the memory's are included: what a call "
                          "really costs while it runs.",
        "no_energy": "No energy figures in these results (the `gflops_per_j` column is empty or absent): `make "
                     "bench` measures them on a GPU whose driver reports its energy or power through NVML.",
        "step": "step",
        "hopper_caption": "Chapter 09 at {shape}: each step of the Hopper ladder (TMA, wgmma, warp specialization) "
                          "with FP16 and with BF16 inputs, in TFLOP/s and as % of cuBLAS of the same precision "
                          "(`cublas_hgemm`, `cublas_bgemm`). % of cuBLAS is the median of the per-round ratios: "
                          "the variant is timed in rounds alternating with cuBLAS on the same shape in the same "
                          "program run (paired rounds), and each round gives one ratio of the two. It is not the "
                          "ratio of the two TFLOP/s columns: each of those is the rate of its own median time, and "
                          "the cuBLAS row's was timed in launches of its own while the GPU's clock moved, so the two "
                          "can differ by several percent, ten points at times. The second table: step 6, TF32 through wgmma, against cuBLAS in TF32 "
                          "(`cublas_tf32`). A variant whose check did not pass shows its status instead of its %.",
        "no_hopper": "Chapter 09 is not in these results. It runs only on compute capability 9.0 (H100, H200, "
                     "GH200), and `make bench` leaves it out on any other GPU; on such a GPU run `make bench` (or "
                     "`./09_hopper_wgmma/09_hopper_wgmma --size 4096 --csv ...`).",
        "hopper_not_at": "Chapter 09 has no rows at {shape} in these results (it ran at {shapes}): fill the "
                         "report at one of those shapes (REPORT_SHAPE=...), or run chapter 09 at {shape}.",
    },
    "zh": {
        "fact": "项目", "value": "数值", "chapter": "章节", "variant": "变体", "type": "精度",
        "best": "最佳变体", "gflops": "GFLOP/s", "pct_cublas": "占 cuBLAS 的 %", "pct_peak": "占峰值的 %",
        "rel_err": "相对误差", "ms": "毫秒（中位数）", "check": "检查", "shape": "M x N x K",
        "runs": "运行的形状数", "pass": "通过", "fail": "失败", "other": "其他", "worst": "最大相对误差",
        "at": "形状", "ai": "FLOP/字节（最小访存量）", "roof": "屋顶线上限 GFLOP/s", "pct_roof": "占上限的 %",
        "side": "位于脊点的哪一侧", "side_compute": "计算侧", "side_memory": "访存侧",
        "no_rows": "（结果中没有数据）", "not_run": "未在此形状上运行",
        "baseline_note": "cuBLAS 基线，同一次运行",
        "ladder_caption": "各章自己的核函数在 {shape} 上的最佳变体{where}：即占 cuBLAS 的 % 最高的变体。"
                          "占 cuBLAS 的 %：与同一次程序运行中、同一形状上、"
                          "相同精度的 cuBLAS 相比。占峰值的 %：FP32 用 FP32 峰值，TF32、FP16 与 BF16 用张量核心峰值。",
        "where": "（{items}）", "where_and": "，",
        "where_07": "第 07 章对 cuBLAS 的调用见 4.3 节", "where_08": "第 08 章的完整程序见 4.8 节",
        "where_09": "第 09 章的 Hopper 阶梯见 4.9 节",
        "shape_fallback": "**没有任何章节运行过 {wanted}（默认形状）：阶梯、屋顶线以及单一形状的各表都使用 {used}，"
                          "即测量过的最大立方形状。用 `REPORT_SHAPE=...` 可选择其他形状。**",
        "sweep_caption": "阶梯中各章最佳变体在每个形状上的 GFLOP/s，括号中为占 cuBLAS 的 %（同阶梯）{cpu}。"
                         "-：未在该形状上运行，或没有通过检查的变体。",
        "sweep_cpu": "，并列出第 01 章的 CPU 代码：它的 % 是相对同一次 bench 中同一形状上 GPU 的 cuBLAS SGEMM",
        "variants_caption": "{shape} 上的全部变体（含基线行），即测量原值。",
        "cublas_caption": "第 07 章的基线行：cuBLAS 在其扫描的每个尺寸上的 GFLOP/s 及占该精度峰值的 %。",
        "no_cublas": "结果中没有第 07 章：请运行 `make bench`（或 `./07_cublas_baseline/07_cublas_baseline --csv ...`）。",
        "cutlass_caption": "CUTLASS 与 cuBLAS 并列（第 07 章，同一次运行）：GFLOP/s 及占同精度 cuBLAS 的 %，与 cuBLAS "
                           "轮流交替计时。`*_tensorop` 是 CUTLASS 的 Ampere 风格核函数（`mma.sync`，即第 06 章用的指令），"
                           "`*_wgmma` 是它的 Hopper 核函数（第 09 章的指令），`simt_sgemm` 是不用张量核心的 FP32。",
        "no_cutlass": "结果中没有 CUTLASS 行：第 07 章在编译时找到 CUTLASS 头文件（`CUTLASS_INC=...`，见第 07 章笔记）时，"
                      "才会把 CUTLASS 与 cuBLAS 并列运行。",
        "pct_cublas_short": "占 cuBLAS 的 %",
        "e2e_caption": "第 08 章，端到端：从主机内存到主机内存的 C = A * B，GPU 路径计入拷贝（锁页或可分页主机内存），"
                       "并与第 01 章的 CPU 代码在同一形状上对比。占 cuBLAS 的 %：相对同一次运行中该形状下 cuBLAS "
                       "仅内核的速率，即计入拷贝后内核速度还剩多少。更快：来自锁页内存的最快 GPU 路径对比最快的 CPU 路径。",
        "no_e2e": "结果中没有第 08 章：请运行 `make bench`（或 `./08_end_to_end/08_end_to_end --part crossover "
                  "--csv ...`）；其他部分用 `make measure-08` 测量。",
        "e2e_faster": "更快",
        "correct_caption": "每个变体在其运行过的全部形状上的检查结果。相对误差 = ||C - C_ref||_F / ||C_ref||_F，"
                           "参考结果以双精度计算，输入先舍入到该变体的输入精度；每个元素都在规范给出的误差界内才算通过。",
        "baselines_line": "cuBLAS/OpenBLAS 基线行：共检查 {n} 行，{passed} 行通过，最大相对误差 {worst}。",
        "roof_caption": "各章在 {shape} 上的最佳变体与本 GPU 屋顶线的对比。FLOP/字节 = 2MNK /（A、B、C 各读写一次的字节数）："
                        "这是该形状的任何 GEMM 可能的最小访存量（实际访存更多，所以真实的点在更左侧）。"
                        "上限 = min(计算上限, FLOP/字节 x 内存带宽)，所用上限见下。",
        "ceilings": "所用上限：{items}。",
        "fp32_measured": "FP32 {v} GFLOP/s（实测 FMA 速率）",
        "fp32_theory": "FP32 {v} GFLOP/s（理论峰值）",
        "tf32": "TF32 张量核心 {v} GFLOP/s（理论）",
        "fp16": "FP16 与 BF16 张量核心 {v} GFLOP/s（理论）",
        "fp8_e4m3": "FP8（E4M3）张量核心 {v} GFLOP/s（理论：FP16 的两倍，计算能力 8.9 及以上）",
        "bw_measured": "内存 {v} GB/s（实测拷贝）",
        "bw_theory": "内存 {v} GB/s（理论）",
        "no_bw": "内存带宽未知（没有设备信息文件）：不画访存侧",
        "no_env": "未找到设备信息文件（{path}）：请在 GPU 机器上运行 `make check-env` 或 `make bench`"
                  "（00_env_check --json）。结果文件本身给出的信息：",
        "gpu": "GPU", "cc": "计算能力", "sms": "SM 数 x 每 SM 的 FP32 单元", "clock": "最高 SM 时钟",
        "memory": "显存", "l2": "L2 缓存", "smem": "每 SM / 每线程块（可选上限）共享内存",
        "regs": "每 SM 寄存器数", "cuda": "CUDA 驱动 / 运行时", "ecc": "ECC",
        "peak_fp32": "FP32 峰值（理论）", "fma": "FP32 FMA 速率（实测）",
        "peak_tf32": "TF32 张量核心峰值（理论）", "peak_fp16": "FP16 与 BF16 张量核心峰值（理论）",
        "peak_fp8": "FP8（E4M3）张量核心峰值（理论：FP16 的两倍）",
        "bw": "显存带宽（理论）", "bw_meas": "显存带宽（实测，较快的拷贝）",
        "ridge": "脊点（实测 FMA / 实测带宽）", "ridge_theory": "脊点（理论）",
        "yes": "是", "no": "否", "of_theory": "（占理论值的 {pct:.1f}%）", "commit": "提交", "from_csv": "，由 CSV 中的占峰值 % 推出",
        "student": "学生", "student_unset": "未设置（请运行 `STUDENT_ID=... make report`）",
        "generated": "报告生成时间", "by": "由 tools/wb/report.py 生成，提交",
        "measurements": "测量数据", "rows": "行", "sha": "SHA-256", "between": "测量时间",
        "commits": "程序构建自提交", "device_facts": "设备信息", "none": "无",
        "commands": "命令（来自 {path}）", "devices": "结果中的设备",
        "copies": "两个文件的副本保存在本报告旁的 `data/` 目录中。",
        "plot1": "GFLOP/s 随尺寸的变化，每个精度族一个子图：各章最佳变体，以及各精度的 cuBLAS。",
        "plot2": "{shape} 上的阶梯：各章最佳变体占相同精度 cuBLAS 的 %（虚线：cuBLAS，即 100 %）。",
        "byline": "**学生：** {student} · **GPU：** {gpu} · **填写时间：** {date}",
        "reference_run": "这些不是你测得的数据：`{path}` 是本教程的参考测量之一（`results/` 下的各个目录存放讲义引用的测量）。"
                         "请在你的 GPU 上运行 `make bench`，并用 `results/bench.csv` 生成报告。",
        "none_marked": "`{path}` 的 {total} 行中没有一行标明由 {student} 测得（它们的 student 字段：{fields}）："
                       "就结果文件所示，这些不是你自己的数据。`STUDENT_ID={student} make bench` 会测量你自己的数据。",
        "some_marked": "`{path}` 的 {total} 行中有 {n} 行没有标明由 {student} 测得（它们的 student 字段：{fields}）："
                       "这些数据并非都是你自己的。`STUDENT_ID={student} make bench` 会测量你自己的数据。",
        "several": "`{path}` 的各行标明由多位学生测得（{fields}）：这些数据不属于同一位学生。",
        "all_marked": "全部 {total} 行都标明由 {student} 测得",
        "unmarked": "各行没有写明学生（测量时没有设置 STUDENT_ID）",
        "empty_field": "空", "whose": "数据归属",
        "not_homework": "第 {chapter} 章不属于本次作业（`{rubric}`）。",
        "chapters": "章节", "homework_of": "`{rubric}` 规定的作业：{chapters}",
        "left_out": "；本报告不含：{chapters}", "no_rows_for": "；结果中没有以下章节的数据：{chapters}",
        "tflops": "TFLOP/s", "precision": "精度", "inputs": "输入格式", "u_in": "输入的单位舍入误差 u",
        "n_variants": "变体数", "err_median": "相对误差（中位数）", "err_max": "相对误差（最大）",
        "err_cublas": "相对误差（cuBLAS）", "vs_fp32": "中位数 / FP32 的", "from": "数据来自",
        "in_fp32": "FP32：24 位有效数字，8 位指数",
        "in_tf32": "TF32：11 位有效数字（存 10 位），8 位指数",
        "in_fp16": "FP16：11 位有效数字（存 10 位），5 位指数",
        "in_bf16": "BF16：8 位有效数字（存 7 位），8 位指数",
        "tc_caption": "{shape} 上的全部张量核心行：TF32、FP16 或 BF16 输入，FP32 累加，并列出同一次运行中相同精度的 "
                      "cuBLAS{where}。占 cuBLAS 的 %：与相同精度的 cuBLAS 相比；相对误差的含义同第 5 节。",
        "no_tc": "结果中没有 {shape} 上的 TF32、FP16 或 BF16 行：请运行第 06 章（`make bench`，或 "
                 "`./06_tensor_core_wmma/06_tensor_core_wmma --size 4096 --csv ...`）。",
        "prec_caption": "各精度在 {shape} 上的精度代价：通过检查的变体（cuBLAS 单列），以 {yardstick} 的 FP32 为标尺。"
                        "u = 2^-p 是把一个输入舍入到最近值时的最大相对误差（p = 有效数字位数）。",
        "prec_note": "FP16 与 TF32 输入的 u 相同，是 FP32 的 8192 倍；FP16 只有 5 位指数，范围也更窄"
                     "（最大 65504，最小正规数约 6.1e-5），TF32 保留了 FP32 的范围。BF16 保留了 FP32 的 8 位指数"
                     "（因而范围与 FP32 相同），但只有 8 位有效数字：它的 u 是 FP16 的 8 倍。这里的每个相对误差都是相对于"
                     "由*按最近舍入到该变体精度之后*的输入算出的参考结果测得的；输入舍入本身的代价由 "
                     "`make -C 06_tensor_core_wmma lab && ./06_tensor_core_wmma/lab/tune_06 --precision --sizes 1024,4096` 打印。",
        "u_head": "**最大误差与输入的 u 相比（K = {K}）：**",
        "u_line": "- **{dtype}**：最大 {err} = {ratio} u，{side}{who}：{why}",
        "u_above": "高于 u", "u_below": "低于 u", "u_of": "{chapter} 的 `{variant}`", "u_more": "，另有 {n} 个",
        "why_fp32": "u 就是累加本身的舍入误差，而 K 个乘积之和要舍入 K 次，所以误差随 K 增长：符号随机时约为 "
                    "√K·u = {typical}，最多为 Σ|a·b| 的 K·u = {worst}（即检查所用的误差界）。",
        "why_below": "参考结果从同样舍入后的输入算起，剩下的只有 FP32 累加的误差（约为 √K·2^-23 = {typical}）。",
        "why_tf32": "超过了 FP32 累加所能带来的误差（约为 √K·2^-23 = {typical}）；差别很可能在输入上："
                    "把 FP32 数据当作 TF32 读取的张量核心会丢掉低 13 位（截断），而参考结果按最近舍入，"
                    "每个因子因此最多相差 2^-10 = 2 u。检查对 TF32 考虑了这一点（每个元素的误差界：{bound} · Σ|a·b|）。",
        "why_other": "超过了 FP32 累加所能带来的误差（约为 √K·2^-23 = {typical}）：核函数对输入或部分和的舍入方式"
                     "与参考结果不同；检查对每个元素的误差界是 {bound} · Σ|a·b|。",
        "plot3": "带实测上限的屋顶线：每个变体在其运行过的每个形状上，按最小访存量的 FLOP/字节放置；"
                 "各章在 {shape} 上的最佳变体带标注。",
        "plot4": "{shape} 上的能耗：各章最佳变体与 cuBLAS（黑色）每焦耳（整块板卡）完成的 GFLOP，来自同一次运行。",
        "gflops_per_j": "GFLOP/J", "joules": "每次调用 mJ",
        "energy_caption": "{shape} 上的能耗：各章最佳变体与各精度的 cuBLAS，以整块板卡每焦耳完成的 GFLOP 表示"
                          "（NVML 能耗计数器在相隔至少 500 ms 的两次刷新之间读出，其间调用连续运行；`make bench` 会传入 `--energy`）。"
                          "空闲功耗和显存的功耗"
                          "都计算在内：这是一次调用运行时的真实代价。",
        "no_energy": "这些结果中没有能耗数据（`gflops_per_j` 一列为空或不存在）：在驱动能通过 NVML 报告能耗或功率的 GPU "
                     "上运行 `make bench` 即可测得。",
        "step": "步骤",
        "hopper_caption": "第 09 章在 {shape} 上：Hopper 阶梯（TMA、wgmma、warp 专门化）的每一步在 FP16 与 BF16 "
                          "输入下的 TFLOP/s，以及占相同精度 cuBLAS（`cublas_hgemm`、`cublas_bgemm`）的 %。"
                          "占 cuBLAS 的 % 是各轮比值的中位数：在同一次程序运行中、同一形状上，该变体与 cuBLAS "
                          "轮流交替计时（成对的轮次），每一轮给出两者的一个比值。它不是两个 TFLOP/s 列之比："
                          "那两列各自是其中位时间对应的速率，而 cuBLAS 一行是在它自己单独的启动中计时的，"
                          "期间 GPU 的时钟在变化，所以两者可能相差好几个百分点，有时达十个百分点。第二张表：第 6 步，经 wgmma 的 TF32，对比 TF32 的 cuBLAS"
                          "（`cublas_tf32`）。检查未通过的变体在 % 一栏显示其状态。",
        "no_hopper": "结果中没有第 09 章。它只在计算能力 9.0 的 GPU（H100、H200、GH200）上运行，在其他 GPU 上 "
                     "`make bench` 会跳过它；请在这样的 GPU 上运行 `make bench`（或 "
                     "`./09_hopper_wgmma/09_hopper_wgmma --size 4096 --csv ...`）。",
        "hopper_not_at": "结果中没有第 09 章在 {shape} 上的数据（它运行过的形状：{shapes}）：用 REPORT_SHAPE=... "
                         "选其中一个形状生成报告，或在 {shape} 上运行第 09 章。",
    },
}


# ---- small helpers ---------------------------------------------------------------------------

def fmt(value, spec):
    """A number formatted with `spec`, or '-' when it is missing."""
    return "-" if value is None else format(value, spec)


def fmt_gflops(value):
    return fmt(value, ".1f")


def fmt_pct(value):
    return fmt(value, ".1f")


def fmt_err(value):
    return fmt(value, ".2e")


def fmt_ratio(value):
    """2 significant digits without an exponent: 1.5, 12, 130."""
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 10 else f"{float(f'{value:.2g}'):.0f}"


def get(obj, *keys):
    """obj[k1][k2]... or None when any step is missing or null."""
    for k in keys:
        if not isinstance(obj, dict) or obj.get(k) is None:
            return None
        obj = obj[k]
    return obj


def traffic_bytes(shape, dtype, beta):
    """The least DRAM traffic of one GEMM: A and B read once, C written once (and read once when
    beta != 0). FP16 and BF16 variants read 2-byte inputs, FP8 ones 1-byte inputs; every variant
    writes FP32."""
    m, n, k = shape
    in_bytes = {"fp16": 2, "bf16": 2, "fp8_e4m3": 1}.get(dtype, 4)
    c_passes = 2 if beta not in (None, 0.0) else 1
    return in_bytes * (m * k + k * n) + 4 * m * n * c_passes


def intensity(row):
    shape = bs.shape_of(row)
    return bs.flops(shape) / traffic_bytes(shape, row["dtype"], bs.number(row["beta"]))


def git_here():
    """The workbook's commit now, with -dirty when the working tree has changes."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--"]).returncode != 0
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


# ---- the data --------------------------------------------------------------------------------

class Results:
    """The CSV rows, the device facts and everything derived from them that the tables share."""

    def __init__(self, csv_path, env_path, ladder_shape, shape_named=True, homework=None, rubric_path=None):
        self.csv_path, self.env_path = csv_path, env_path
        self.homework, self.rubric_path = homework, rubric_path  # a list of chapter folders, or None: all
        self.all_rows = bs.load_rows(csv_path)  # the file: provenance, device facts, cuBLAS's reference
        self.rows = [r for r in self.all_rows if homework is None or r["chapter"] in homework]
        self.env = None
        if env_path and os.path.exists(env_path):
            with open(env_path, encoding="utf-8") as f:
                self.env = json.load(f)
        self.gpu = (get(self.env, "gpus") or [None])[0] if self.env else None
        self.best = bs.best_variants(self.rows)
        self.keys = sorted(self.best, key=bs.key_order)
        self.ladder_keys = [k for k in self.keys if in_ladder(k[0])]
        self.sweep_keys = [k for k in self.keys if in_ladder(k[0]) or bs.is_cpu_chapter(k[0])]
        self.sgemm_ref = bs.cublas_sgemm_reference(self.all_rows)
        self.shapes = [s for s in bs.all_shapes(self.rows) if any(s in per for per in self.best.values())]
        # The shape of the ladder, the roofline and every table at one shape. A shape named with
        # REPORT_SHAPE is used as it is (main refuses it when nothing passed there); the default,
        # when no chapter ran it, gives way to the largest cube measured, and the report says so.
        self.wanted_shape = ladder_shape
        self.ladder_shape = ladder_shape
        if not shape_named and ladder_shape not in self.shapes and self.shapes:
            cubes = [s for s in self.shapes if s[0] == s[1] == s[2]]
            self.ladder_shape = max(cubes or self.shapes, key=bs.flops)
        self.fell_back = self.ladder_shape != self.wanted_shape
        self.ceilings = self._ceilings()

    def peak_from_csv(self, dtype):
        """The peak behind the CSV's pct_peak column (gflops / pct_peak), for when there is no
        device facts file. From the row with the largest percentage, whose two decimals carry the
        most significant digits, and rounded to the four digits that they can give."""
        rows = [r for r in self.all_rows if r["dtype"] == dtype and not bs.is_cpu_chapter(r["chapter"])
                and bs.number(r["gflops"]) and bs.number(r["pct_peak"])]
        if not rows:
            return None
        r = max(rows, key=lambda r: bs.number(r["pct_peak"]))
        return float(f'{100.0 * bs.number(r["gflops"]) / bs.number(r["pct_peak"]):.4g}')

    def _ceilings(self):
        """Compute ceilings per precision and the memory ceiling: measured where 00_env_check
        measured them, theoretical otherwise. Each entry is (GFLOP/s or GB/s, 'measured'|'theory')."""
        g = self.gpu or {}
        c = {}
        fma, peak = get(g, "measured", "fma_gflops"), g.get("peak_fp32_gflops") or self.peak_from_csv("fp32")
        c["fp32"] = (fma, "measured") if fma else ((peak, "theory") if peak else None)
        c["fp32_theory"] = peak
        v = g.get("peak_tf32_tc_gflops") or self.peak_from_csv("tf32")
        c["tf32"] = (v, "theory") if v else None
        # BF16 runs at the FP16 rate on the tensor cores: one ceiling for both.
        v = g.get("peak_fp16_tc_gflops") or self.peak_from_csv("fp16") or self.peak_from_csv("bf16")
        c["fp16"] = c["bf16"] = (v, "theory") if v else None
        # FP8 tensor cores (compute capability 8.9 and later) run at twice the FP16 rate: the
        # peak the programs divide by for FP8's % of peak (common/gemm_harness.cu).
        v = 2 * c["fp16"][0] if c["fp16"] and self.has_fp8() else self.peak_from_csv("fp8_e4m3")
        c["fp8_e4m3"] = (v, "theory") if v else None
        bw, bw_peak = get(g, "measured", "bandwidth_gbs"), g.get("peak_bandwidth_gbs")
        c["bw"] = (bw, "measured") if bw else ((bw_peak, "theory") if bw_peak else None)
        c["bw_theory"] = bw_peak
        return c

    def has_fp8(self):
        """True when the GPU (the device facts', else the results') has FP8 tensor cores: compute
        capability 8.9 or later."""
        cc = (self.gpu or {}).get("cc") or next((r["cc"] for r in self.all_rows if r["cc"]), "")
        try:
            return tuple(int(x) for x in cc.split(".")) >= (8, 9)
        except ValueError:
            return False

    def outside(self, chapter):
        """True when a homework is set and `chapter` is not in it."""
        return self.homework is not None and chapter not in self.homework

    def pct_cublas(self, row):
        return bs.pct_of_cublas(row, self.sgemm_ref)

    def roof(self, dtype, ai):
        """The roofline limit (GFLOP/s) at intensity `ai` for a precision, or None if unknown."""
        compute = self.ceilings.get(dtype)
        if not compute:
            return None
        bw = self.ceilings.get("bw")
        return min(compute[0], ai * bw[0]) if bw else compute[0]


# ---- the tables ------------------------------------------------------------------------------

def device_table(res, t):
    g, env = res.gpu, res.env
    if not g:
        first = next((r for r in res.all_rows if not bs.is_cpu_chapter(r["chapter"])), None)
        facts = [(t["gpu"], first["gpu"] if first else "-"), (t["cc"], first["cc"] if first else "-"),
                 (t["cuda"], f'{first["driver"]} / {first["runtime"]}' if first else "-")]
        for dtype, label in (("fp32", "peak_fp32"), ("tf32", "peak_tf32"), ("fp16", "peak_fp16"),
                             ("fp8_e4m3", "peak_fp8")):
            peak = res.peak_from_csv(dtype) or (res.peak_from_csv("bf16") if dtype == "fp16" else None)
            if peak:
                facts.append((t[label] + t["from_csv"], f"{peak:.0f} GFLOP/s"))
        return t["no_env"].format(path=res.env_path or "-") + "\n\n" + md_table([t["fact"], t["value"]], facts)
    m = g.get("measured") or {}

    def gib(v):
        return fmt(v / 2 ** 30 if v is not None else None, ".1f") + " GiB"

    def kib(v):
        return fmt(v / 1024 if v is not None else None, ".0f") + " KiB"

    def with_pct(value, unit, pct):
        return f"{fmt(value, '.0f')} {unit}" + (t["of_theory"].format(pct=pct) if pct is not None else "")

    peak, bw_peak = g.get("peak_fp32_gflops"), g.get("peak_bandwidth_gbs")
    facts = [
        (t["gpu"], g.get("name", "-")),
        (t["cc"], f'{g.get("cc", "-")} ({g.get("sm", "-")})'),
        (t["sms"], f'{g.get("sms", "-")} x {g.get("fp32_lanes_per_sm", "-")}'),
        (t["clock"], fmt(g.get("sm_clock_ghz"), ".3f") + " GHz"),
        (t["memory"], gib(g.get("memory_bytes"))),
        (t["l2"], fmt((g.get("l2_bytes") or 0) / 2 ** 20 if g.get("l2_bytes") else None, ".1f") + " MiB"),
        (t["smem"], f'{kib(g.get("smem_per_sm_bytes"))} / {kib(g.get("smem_per_block_optin_bytes"))}'),
        (t["regs"], fmt(g.get("regs_per_sm"), "d")),
        (t["cuda"], f'{get(env, "cuda", "driver") or "-"} / {get(env, "cuda", "runtime") or "-"}'),
        (t["ecc"], t["yes"] if g.get("ecc") else t["no"]),
        (t["peak_fp32"], fmt(peak, ".0f") + " GFLOP/s"),
        (t["fma"], with_pct(m.get("fma_gflops"), "GFLOP/s", m.get("fma_pct_peak"))),
        (t["peak_tf32"], fmt(g.get("peak_tf32_tc_gflops"), ".0f") + " GFLOP/s"),
        (t["peak_fp16"], fmt(g.get("peak_fp16_tc_gflops"), ".0f") + " GFLOP/s"),
        (t["peak_fp8"], fmt((res.ceilings.get("fp8_e4m3") or (None,))[0], ".0f") + " GFLOP/s"),
        (t["bw"], fmt(bw_peak, ".0f") + " GB/s"),
        (t["bw_meas"], with_pct(m.get("bandwidth_gbs"), "GB/s", m.get("bandwidth_pct_peak"))),
        (t["ridge"], fmt(m.get("ridge_flop_per_byte"), ".1f") + " FLOP/byte"),
        (t["ridge_theory"], fmt(peak / bw_peak if peak and bw_peak else None, ".1f") + " FLOP/byte"),
    ]
    return md_table([t["fact"], t["value"]], facts)


def elsewhere(res, t, items):
    """' (chapter 07's cuBLAS calls are in section 4.3, ...)' for the (chapter, text key) pairs whose
    chapter is in this report; '' when none is."""
    parts = [t[key] for chapter, key in items if not res.outside(chapter)]
    return t["where"].format(items=t["where_and"].join(parts)) if parts else ""


def ladder_table(res, t):
    shape = res.ladder_shape
    body = []
    for key in res.ladder_keys:
        r = res.best[key].get(shape)
        if r is None:
            body.append([key[0], key[1], f"*{t['not_run']}*", "-", "-", "-", "-"])
            continue
        body.append([key[0], key[1], f'`{r["variant"]}`', fmt_gflops(bs.number(r["gflops"])),
                     fmt_pct(res.pct_cublas(r)), fmt_pct(bs.number(r["pct_peak"])), fmt_err(bs.number(r["rel_err"]))])
    header = [t["chapter"], t["type"], t["best"], t["gflops"], t["pct_cublas"], t["pct_peak"], t["rel_err"]]
    caption = t["ladder_caption"].format(shape=shape_text(shape), where=elsewhere(res, t, (
        (bs.PREFERRED_CUBLAS_CHAPTER, "where_07"), (E2E_CHAPTER, "where_08"))))
    if res.fell_back:
        caption = t["shape_fallback"].format(wanted=shape_text(res.wanted_shape), used=shape_text(shape)) \
            + "\n\n" + caption
    return caption + "\n\n" + (md_table(header, body, right={3, 4, 5, 6}) if body else t["no_rows"])


def sweep_table(res, t):
    shapes = [s for s in res.shapes if any(s in res.best[k] for k in res.sweep_keys)]
    header = [t["chapter"], t["type"]] + [bs.shape_label(s) for s in shapes]
    body = []
    for key in res.sweep_keys:
        cells = []
        for s in shapes:
            r = res.best[key].get(s)
            if r is None:
                cells.append("-")
            else:
                p = res.pct_cublas(r)
                cells.append(fmt_gflops(bs.number(r["gflops"])) + (f" ({p:.1f}%)" if p is not None else ""))
        body.append([key[0], key[1]] + cells)
    right = set(range(2, len(header)))
    cpu = t["sweep_cpu"] if any(bs.is_cpu_chapter(k[0]) for k in res.sweep_keys) else ""
    return t["sweep_caption"].format(cpu=cpu) + "\n\n" + (md_table(header, body, right=right) if body else t["no_rows"])


def variants_table(res, t):
    shape = res.ladder_shape
    rows = [r for r in res.rows if bs.shape_of(r) == shape]
    body = [[r["chapter"], f'`{r["variant"]}`', r["dtype"], fmt(bs.number(r["ms_median"]), ".3f"),
             fmt_gflops(bs.number(r["gflops"])), fmt_pct(res.pct_cublas(r)), fmt_pct(bs.number(r["pct_peak"])),
             r["status"]] for r in rows]
    header = [t["chapter"], t["variant"], t["type"], t["ms"], t["gflops"], t["pct_cublas"], t["pct_peak"], t["check"]]
    caption = t["variants_caption"].format(shape=shape_text(shape))
    return caption + "\n\n" + (md_table(header, body, right={3, 4, 5, 6}) if body else t["no_rows"])


def not_homework(res, t, chapter):
    return t["not_homework"].format(chapter=chapter, rubric=res.rubric_path)


def cublas_table(res, t):
    if res.outside(bs.PREFERRED_CUBLAS_CHAPTER):
        return not_homework(res, t, bs.PREFERRED_CUBLAS_CHAPTER)
    rows = [r for r in res.rows if r["chapter"] == bs.PREFERRED_CUBLAS_CHAPTER and r["variant"] in bs.GPU_BASELINES]
    if not rows:
        return t["no_cublas"]
    names = [v for v in bs.GPU_BASELINES if any(r["variant"] == v for r in rows)]
    return (t["cublas_caption"] + "\n\n" + variants_by_shape(rows, names, t["pct_peak"], "pct_peak", t) +
            cutlass_table(res, t))


def variants_by_shape(rows, names, pct_label, pct_column, t):
    """A table of shapes (rows) by variants (columns): GFLOP/s and the percentage in `pct_column`."""
    by_shape = defaultdict(dict)
    for r in rows:
        by_shape[bs.shape_of(r)][r["variant"]] = r
    header = [t["shape"]] + [f"`{v}` {t['gflops']} ({pct_label})" for v in names]
    body = []
    for s in sorted(by_shape, key=bs.shape_order):
        cells = []
        for v in names:
            r = by_shape[s].get(v)
            cells.append("-" if r is None else
                         f'{fmt_gflops(bs.number(r["gflops"]))} ({fmt_pct(bs.number(r[pct_column]))}%)')
        body.append([shape_text(s)] + cells)
    return md_table(header, body, right=set(range(1, len(header))))


def cutlass_table(res, t):
    """Chapter 07's CUTLASS rows (when CUTLASS was found at build time) beside cuBLAS: GFLOP/s and
    % of cuBLAS of the same precision, timed in the same rounds."""
    rows = [r for r in res.rows if r["chapter"] == bs.PREFERRED_CUBLAS_CHAPTER and r["variant"].startswith("cutlass_")
            and r["status"] == "PASS"]
    if not rows:
        return "\n\n" + t["no_cutlass"]
    names = list(dict.fromkeys(r["variant"] for r in rows))
    return "\n\n" + t["cutlass_caption"] + "\n\n" + variants_by_shape(rows, names, t["pct_cublas_short"], "pct_cublas", t)


def energy_rows(res):
    """(label, row, GFLOP/J) at the ladder's shape: each chapter's best variant, then cuBLAS per
    precision; rows without an energy figure are left out."""
    shape = res.ladder_shape
    rows = [(f"{key[0]} ({key[1]})", res.best[key][shape]) for key in res.ladder_keys if shape in res.best[key]]
    for variant, dtype in bs.GPU_BASELINES.items():
        lib = [r for r in res.rows if r["variant"] == variant and bs.shape_of(r) == shape and r["status"] == "PASS"]
        preferred = [r for r in lib if r["chapter"] == bs.PREFERRED_CUBLAS_CHAPTER] or lib
        if preferred:
            rows.append((f"cuBLAS ({dtype})", preferred[0]))
    measured = [(label, r, bs.number(r.get("gflops_per_j"))) for label, r in rows]
    return [(label, r, e) for label, r, e in measured if e]


def energy_table(res, t):
    """GFLOP per joule at the ladder's shape: each chapter's best variant, then cuBLAS per precision."""
    shape = res.ladder_shape
    measured = energy_rows(res)
    if not measured:
        return t["no_energy"]
    flop = 2.0 * shape[0] * shape[1] * shape[2]
    body = [[label, f'`{r["variant"]}`', fmt_gflops(bs.number(r["gflops"])), f"{e:.1f}",
             f"{flop / 1e9 / e * 1e3:.2f}"] for label, r, e in measured]
    header = [t["chapter"], t["variant"], t["gflops"], t["gflops_per_j"], t["joules"]]
    return t["energy_caption"].format(shape=shape_text(shape)) + "\n\n" + md_table(header, body, right={2, 3, 4})


def end_to_end_table(res, t):
    """Chapter 08's rows (its crossover part): every path per shape, and which processor was faster."""
    if res.outside(E2E_CHAPTER):
        return not_homework(res, t, E2E_CHAPTER)
    rows = [r for r in res.rows if r["chapter"] == E2E_CHAPTER and bs.number(r["ms_median"]) is not None]
    if not rows:
        return t["no_e2e"]
    by_shape = defaultdict(list)
    for r in rows:
        by_shape[bs.shape_of(r)].append(r)
    body = []
    for s in sorted(by_shape, key=bs.shape_order):
        group = sorted(by_shape[s], key=lambda r: bs.number(r["ms_median"]))
        ok = [r for r in group if r["status"] == "PASS"]
        gpu = [r for r in ok if r["variant"].startswith("e2e_gpu_") and r["variant"].endswith("_pinned")]
        cpu = [r for r in ok if r["variant"].startswith("e2e_cpu_")]
        faster = "-" if not gpu or not cpu else ("GPU" if bs.number(gpu[0]["ms_median"]) < bs.number(cpu[0]["ms_median"]) else "CPU")
        for i, r in enumerate(group):
            body.append([shape_text(s) if i == 0 else "", f'`{r["variant"]}`', fmt(bs.number(r["ms_median"]), ".3f"),
                         fmt_gflops(bs.number(r["gflops"])), fmt_pct(bs.number(r["pct_cublas"])), r["status"],
                         faster if i == 0 else ""])
    header = [t["shape"], t["variant"], t["ms"], t["gflops"], t["pct_cublas"], t["check"], t["e2e_faster"]]
    return t["e2e_caption"] + "\n\n" + md_table(header, body, right={2, 3, 4})


HOPPER_CHAPTER = "09_hopper_wgmma"
# Chapter 09's ladder in the order of its notes. A variant not named here (one a student added)
# follows the named ones, in the order it was measured, without a step number.
HOPPER_STEPS = {"wgmma_64x128": 1, "wgmma_128x256": 2, "warp_specialized": 3, "persistent": 4,
                "cluster_multicast": 5, "tf32_persistent": 6, "fp8_e4m3": 7, "pingpong": 8, "tf32_rs": 9,
                "fp8_multicast": 10, "tf32_multicast": 11,
                "epilogue_overlap": 12}
HOPPER_BASELINES = {dtype: name for name, dtype in bs.GPU_BASELINES.items()}  # precision -> its cuBLAS row


def hopper_table(res, t):
    """Section 4.9: chapter 09's steps at the ladder's shape, FP16 and BF16 side by side (TFLOP/s and
    % of cuBLAS of the same precision), then step 6 (TF32) against cuBLAS in TF32."""
    if res.outside(HOPPER_CHAPTER):
        return not_homework(res, t, HOPPER_CHAPTER)
    rows = [r for r in res.rows if r["chapter"] == HOPPER_CHAPTER]
    if not rows:
        return t["no_hopper"]
    shape = res.ladder_shape
    at_shape = [r for r in rows if bs.shape_of(r) == shape]
    if not at_shape:
        ran = sorted({bs.shape_of(r) for r in rows}, key=bs.shape_order)
        return t["hopper_not_at"].format(shape=shape_text(shape), shapes=", ".join(bs.shape_label(s) for s in ran))
    found, measured = {}, []  # (variant, dtype) -> row (a later run of the same replaces it); variants in order
    for r in at_shape:
        found[(r["variant"], r["dtype"])] = r
        if r["variant"] not in measured:
            measured.append(r["variant"])

    def cells(variant, dtype):
        r = found.get((variant, dtype))
        if r is None:
            return ["-", "-"]
        g = bs.number(r["gflops"])
        pct = fmt_pct(bs.number(r["pct_cublas"])) if r["status"] == "PASS" else r["status"]
        return [fmt(g / 1000 if g else None, ".1f"), pct]

    def steps(dtypes):
        named = [v for v in measured if v not in bs.GPU_BASELINES and any((v, d) in found for d in dtypes)]
        return sorted(named, key=lambda v: (HOPPER_STEPS.get(v, max(HOPPER_STEPS.values()) + 1), measured.index(v)))

    def table(dtypes):
        baselines = [HOPPER_BASELINES[d] for d in dtypes]
        body = [["", " / ".join(f"`{b}`" for b in baselines) + f" ({t['baseline_note']})"]
                + [c for d in dtypes for c in cells(HOPPER_BASELINES[d], d)]]
        for v in steps(dtypes):
            body.append([str(HOPPER_STEPS.get(v, "-")), f"`{v}`"] + [c for d in dtypes for c in cells(v, d)])
        header = [t["step"], t["variant"]] + [f"{d.upper()} {h}" for d in dtypes for h in (t["tflops"], t["pct_cublas"])]
        return md_table(header, body, right=set(range(2, len(header))))

    tables = [table(dtypes) for dtypes in (("fp16", "bf16"), ("tf32",)) if steps(dtypes)]
    return t["hopper_caption"].format(shape=shape_text(shape)) + "\n\n" + "\n\n".join(tables or [t["no_rows"]])


def correctness_table(res, t):
    groups = defaultdict(list)  # (chapter, variant, dtype) -> rows
    for r in res.rows:
        if not bs.is_baseline(r):
            groups[(r["chapter"], r["variant"], r["dtype"])].append(r)
    body = []
    for (chapter, variant, dtype) in sorted(groups, key=lambda k: (k[0], bs.DTYPE_ORDER.get(k[2], 9), k[1])):
        rs = groups[(chapter, variant, dtype)]
        errs = [(bs.number(r["rel_err"]), r) for r in rs if bs.number(r["rel_err"]) is not None]
        worst = max(errs, key=lambda e: e[0]) if errs else None
        passed = sum(r["status"] == "PASS" for r in rs)
        failed = sum(bs.is_failure(r) for r in rs)
        body.append([chapter, f"`{variant}`", dtype, len(rs), passed, failed, len(rs) - passed - failed,
                     fmt_err(worst[0]) if worst else "-",
                     shape_text(bs.shape_of(worst[1])) if worst else "-"])
    header = [t["chapter"], t["variant"], t["type"], t["runs"], t["pass"], t["fail"], t["other"], t["worst"], t["at"]]
    baselines = [r for r in res.rows if bs.is_baseline(r)]
    errs = [bs.number(r["rel_err"]) for r in baselines if bs.number(r["rel_err"]) is not None]
    line = t["baselines_line"].format(n=len(baselines), passed=sum(r["status"] == "PASS" for r in baselines),
                                      worst=fmt_err(max(errs)) if errs else "-")
    table = md_table(header, body, right={3, 4, 5, 6, 7}) if body else t["no_rows"]
    return t["correct_caption"] + "\n\n" + table + "\n\n" + line


# The precisions in table order, with their significand bits p (u = 2^-p for inputs rounded to nearest).
SIGNIFICAND_BITS = {"fp32": 24, "tf32": 11, "fp16": 11, "bf16": 8}
TENSOR_DTYPES = ("tf32", "fp16", "bf16")
FP32_YARDSTICK_CHAPTER = "05_float4_vectorized"
TENSOR_CORE_CHAPTER = "06_tensor_core_wmma"


def tensor_core_rows(res, shape):
    """The TF32, FP16 and BF16 rows at `shape`, by chapter and precision, in the order they were
    measured. Chapter 07's rows are all cuBLAS and have their own table."""
    rows = [r for r in res.rows if r["dtype"] in TENSOR_DTYPES and bs.shape_of(r) == shape
            and not bs.is_cpu_chapter(r["chapter"]) and r["chapter"] != bs.PREFERRED_CUBLAS_CHAPTER]
    return sorted(rows, key=lambda r: (r["chapter"], bs.DTYPE_ORDER.get(r["dtype"], 9)))


def tensor_core_table(res, t):
    """Section 4.7: the tensor-core rows of every chapter but 07 (section 4.3) and 09 (section 4.9)."""
    shape = res.ladder_shape
    rows = [r for r in tensor_core_rows(res, shape) if r["chapter"] != HOPPER_CHAPTER]
    if not rows and res.outside(TENSOR_CORE_CHAPTER):
        return not_homework(res, t, TENSOR_CORE_CHAPTER)
    if not rows:
        return t["no_tc"].format(shape=shape_text(shape))
    body = []
    for r in rows:
        g = bs.number(r["gflops"])
        name = f'`{r["variant"]}`' + (f' ({t["baseline_note"]})' if bs.is_baseline(r) else "")
        body.append([r["chapter"], name, r["dtype"], fmt(g / 1000 if g else None, ".1f"), fmt_pct(res.pct_cublas(r)),
                     fmt_pct(bs.number(r["pct_peak"])), fmt_err(bs.number(r["rel_err"])), r["status"]])
    header = [t["chapter"], t["variant"], t["type"], t["tflops"], t["pct_cublas"], t["pct_peak"], t["rel_err"],
              t["check"]]
    where = elsewhere(res, t, ((bs.PREFERRED_CUBLAS_CHAPTER, "where_07"), (HOPPER_CHAPTER, "where_09")))
    return t["tc_caption"].format(shape=shape_text(shape), where=where) + "\n\n" + md_table(header, body, right={3, 4, 5, 6})


def precision_table(res, t):
    shape = res.ladder_shape
    at_shape = [r for r in res.rows if bs.shape_of(r) == shape and not bs.is_cpu_chapter(r["chapter"])
                and r["chapter"] != bs.PREFERRED_CUBLAS_CHAPTER and r["status"] == "PASS"]
    fp32_chapters = sorted({r["chapter"] for r in at_shape if r["dtype"] == "fp32" and not bs.is_baseline(r)})
    yardstick = FP32_YARDSTICK_CHAPTER if FP32_YARDSTICK_CHAPTER in fp32_chapters else \
        (fp32_chapters[-1] if fp32_chapters else None)
    tensor = {r["chapter"] for r in tensor_core_rows(res, shape)}
    per_dtype, variant_errs = {}, {}
    for dtype in SIGNIFICAND_BITS:
        chapters = {yardstick} if dtype == "fp32" else tensor
        rows = [r for r in at_shape if r["dtype"] == dtype and r["chapter"] in chapters]
        errs = sorted(e for e in (bs.number(r["rel_err"]) for r in rows if not bs.is_baseline(r)) if e is not None)
        lib = [e for e in (bs.number(r["rel_err"]) for r in rows if bs.is_baseline(r)) if e is not None]
        per_dtype[dtype] = (sorted({r["chapter"] for r in rows}), errs, lib)
        variant_errs[dtype] = [(bs.number(r["rel_err"]), r) for r in rows
                               if not bs.is_baseline(r) and bs.number(r["rel_err"]) is not None]
    if not any(per_dtype[d][1] for d in TENSOR_DTYPES):
        if res.outside(TENSOR_CORE_CHAPTER) and res.outside(HOPPER_CHAPTER):
            return not_homework(res, t, TENSOR_CORE_CHAPTER)
        return t["no_tc"].format(shape=shape_text(shape))
    fp32_errs = per_dtype["fp32"][1]
    fp32_median = statistics.median(fp32_errs) if fp32_errs else None
    body = []
    for dtype, bits in SIGNIFICAND_BITS.items():
        chapters, errs, lib = per_dtype[dtype]
        median = statistics.median(errs) if errs else None
        ratio = median / fp32_median if median is not None and fp32_median else None
        body.append([dtype, t["in_" + dtype], f"2^-{bits} = {2.0 ** -bits:.2e}", len(errs), fmt_err(median),
                     fmt_err(max(errs) if errs else None), fmt_err(max(lib) if lib else None),
                     fmt_ratio(ratio) if dtype != "fp32" else "1", ", ".join(chapters) or "-"])
    header = [t["precision"], t["inputs"], t["u_in"], t["n_variants"], t["err_median"], t["err_max"],
              t["err_cublas"], t["vs_fp32"], t["from"]]
    return (t["prec_caption"].format(shape=shape_text(shape), yardstick=yardstick or "-") + "\n\n"
            + md_table(header, body, right={3, 4, 5, 6, 7}) + "\n\n" + t["prec_note"] + "\n\n"
            + precision_against_u(variant_errs, shape[2], t))


def check_gamma(dtype, K):
    """The factor of the check's bound per entry, |C - C_ref| <= gamma * sum_k |a_ik * b_kj| (+ tiny),
    as common/numerics.cpp's tolerance_for computes it (keep the two in step): K + 2 roundings of
    the accumulation (u = 2^-24 on the CUDA cores, 2^-23 on tensor cores, which may truncate inside
    their sums), plus 2^-9 for TF32 inputs that a device truncates where the reference rounds."""
    u = 2.0 ** -24 if dtype == "fp32" else 2.0 ** -23
    nu = min((K + 2) * u, 0.5)
    return (2.0 ** -9 if dtype == "tf32" else 0.0) + nu / (1 - nu)


def precision_against_u(variant_errs, K, t):
    """One line per precision under the precision table: its largest error against u of its inputs,
    above or below, and why, from the numbers themselves (not a sentence written for one GPU)."""
    lines = [t["u_head"].format(K=K)]
    for dtype, bits in SIGNIFICAND_BITS.items():
        found = variant_errs.get(dtype) or []
        if not found:
            continue
        u = 2.0 ** -bits
        largest = max(e for e, _ in found)
        above = sorted((x for x in found if x[0] > u), key=lambda x: -x[0])
        who = ""
        if above and dtype != "fp32":  # in FP32 every variant is there for the same reason: K
            named = [t["u_of"].format(variant=r["variant"], chapter=r["chapter"]) for _, r in above[:3]]
            more = t["u_more"].format(n=len(above) - 3) if len(above) > 3 else ""
            who = (" (" + ", ".join(named) + more + ")") if t is TEXT["en"] else ("（" + "、".join(named) + more + "）")
        acc_typical = fmt_err(K ** 0.5 * 2.0 ** -23)
        if dtype == "fp32":
            why = t["why_fp32"].format(typical=fmt_err(K ** 0.5 * u), worst=fmt_err(K * u))
        elif not above:
            why = t["why_below"].format(typical=acc_typical)
        else:
            key = "why_tf32" if dtype == "tf32" else "why_other"
            why = t[key].format(typical=acc_typical, bound=fmt_err(check_gamma(dtype, K)))
        lines.append(t["u_line"].format(dtype=dtype, err=fmt_err(largest), ratio=f"{largest / u:.2g}",
                                        side=t["u_above"] if largest > u else t["u_below"], who=who, why=why))
    return "\n".join(lines)



def ceilings_text(res, t):
    c, items = res.ceilings, []
    if c.get("fp32"):
        items.append(t["fp32_measured" if c["fp32"][1] == "measured" else "fp32_theory"].format(v=f'{c["fp32"][0]:.0f}'))
    for dtype in ("tf32", "fp16", "fp8_e4m3"):  # the FP16 ceiling is BF16's too (and says so)
        if c.get(dtype):
            items.append(t[dtype].format(v=f"{c[dtype][0]:.0f}"))
    if c.get("bw"):
        items.append(t["bw_measured" if c["bw"][1] == "measured" else "bw_theory"].format(v=f'{c["bw"][0]:.0f}'))
    else:
        items.append(t["no_bw"])
    return t["ceilings"].format(items="; ".join(items))


def roofline_table(res, t):
    shape, body = res.ladder_shape, []
    for key in res.ladder_keys:  # the CPU is not on this GPU's roofline, nor are copies (chapter 08)
        r = res.best[key].get(shape)
        if r is None:
            continue
        ai, g = intensity(r), bs.number(r["gflops"])
        limit = res.roof(r["dtype"], ai)
        compute, bw = res.ceilings.get(r["dtype"]), res.ceilings.get("bw")
        side = "-"
        if compute and bw:
            side = t["side_compute"] if ai >= compute[0] / bw[0] else t["side_memory"]
        body.append([key[0], f'`{r["variant"]}`', r["dtype"], f"{ai:.1f}", fmt(limit, ".0f"), fmt_gflops(g),
                     fmt_pct(100.0 * g / limit if limit and g else None), side])
    header = [t["chapter"], t["best"], t["type"], t["ai"], t["roof"], t["gflops"], t["pct_roof"], t["side"]]
    text = t["roof_caption"].format(shape=shape_text(shape)) + "\n\n" + ceilings_text(res, t) + "\n\n"
    return text + (md_table(header, body, right={3, 4, 5, 6}) if body else t["no_rows"])


def is_reference_run(csv_path):
    """True when the results file lies in a folder under the workbook's results/ (results/h200/...):
    there the workbook keeps the runs its notes cite. `make bench` writes results/bench.csv itself,
    a student's own run, never into such a folder."""
    results = os.path.realpath(os.path.join(ROOT, "results"))
    folder = os.path.dirname(os.path.realpath(csv_path))
    return folder.startswith(results + os.sep)


def whose_numbers(res, student, t):
    """(warning, fact) about whose measurements these are. warning, for the report's first line, is
    None when nothing says they are not the student's own: a reference run of the workbook never is;
    with STUDENT_ID set, every row must name that student in its student field (an empty field or
    another id is not the student's); without it, the rows must not name several students. fact is
    one sentence for the provenance."""
    path, rows = res.csv_path, res.all_rows
    marks = [r.get("student") or "" for r in rows]
    ids = sorted(set(marks))
    if is_reference_run(path):
        sentence = t["reference_run"].format(path=path)
        return sentence, sentence
    fields = ", ".join(m or t["empty_field"] for m in ids)
    if student:
        others = sorted({m for m in marks if m != student})
        n = sum(m != student for m in marks)
        fields = ", ".join(m or t["empty_field"] for m in others)
        if n == len(rows):
            sentence = t["none_marked"].format(total=len(rows), path=path, student=student, fields=fields)
        elif n:
            sentence = t["some_marked"].format(n=n, total=len(rows), path=path, student=student, fields=fields)
        else:
            return None, t["all_marked"].format(total=len(rows), student=student)
        return sentence, sentence
    if len(ids) > 1:
        sentence = t["several"].format(path=path, fields=fields)
        return sentence, sentence
    if ids and ids[0]:
        return None, t["all_marked"].format(total=len(rows), student=ids[0])
    return None, t["unmarked"]


def provenance(res, t, student, now):
    rows = res.all_rows
    lines = []
    csv_students = sorted({r["student"] for r in rows if r.get("student")})
    who = student or ", ".join(csv_students) or t["student_unset"]
    lines.append(f"- **{t['student']}:** {who}")
    lines.append(f"- **{t['whose']}:** {whose_numbers(res, student, t)[1]}")
    if res.homework is not None:
        measured = {r["chapter"] for r in rows}
        text = t["homework_of"].format(rubric=res.rubric_path, chapters=", ".join(res.homework))
        left_out = sorted(measured - set(res.homework))
        missing = [c for c in res.homework if c not in measured]
        if left_out:
            text += t["left_out"].format(chapters=", ".join(left_out))
        if missing:
            text += t["no_rows_for"].format(chapters=", ".join(missing))
        lines.append(f"- **{t['chapters']}:** {text}")
    lines.append(f"- **{t['generated']}:** {now} ({t['by']} `{git_here()}`)")
    stamps = sorted(r["timestamp"] for r in rows if r.get("timestamp"))
    commits = defaultdict(int)
    for r in rows:
        commits[r["git"] or "unknown"] += 1
    commit_text = ", ".join(f"`{c}` ({n} {t['rows']})" for c, n in sorted(commits.items()))
    lines.append(f"- **{t['measurements']}:** `{res.csv_path}`, {len(rows)} {t['rows']}, "
                 f"{t['sha']} `{sha256_of(res.csv_path)[:16]}`; {t['between']} "
                 f"{stamps[0] if stamps else '-'} … {stamps[-1] if stamps else '-'}; {t['commits']} {commit_text}")
    if res.env:
        lines.append(f"- **{t['device_facts']}:** `{res.env_path}` ({res.env.get('program', '-')}, "
                     f"{res.env.get('timestamp', '-')}, {t['commit']} `{res.env.get('git', '-')}`), "
                     f"{t['sha']} `{sha256_of(res.env_path)[:16]}`")
    else:
        lines.append(f"- **{t['device_facts']}:** {t['none']} (`{res.env_path}`)")
    devices = sorted({(r["gpu"], r["cc"], r["driver"], r["runtime"]) for r in rows})
    lines.append(f"- **{t['devices']}:** " + "; ".join(
        f"{gpu}" + (f" (cc {cc}, CUDA driver {drv}, runtime {rt})" if cc else "") for gpu, cc, drv, rt in devices))
    commands = os.path.join(os.path.dirname(res.csv_path), "bench_commands.tsv")
    if os.path.exists(commands):
        lines.append(f"- **{t['commands'].format(path=commands)}:**")
        with open(commands, encoding="utf-8") as f:
            for line in f:
                chapter, _, cmd = line.rstrip("\n").partition("\t")
                if cmd:
                    lines.append(f"  - `{cmd}`")
    lines.append(f"- {t['copies']}")
    return "\n".join(lines)


# ---- the plots -------------------------------------------------------------------------------

# One colour per chapter, by its number, so a chapter keeps its colour in every plot and report.
# None is black or grey: those are cuBLAS's lines and the reference lines.
CHAPTER_PALETTE = ["#8c564b", "#17becf", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#1f77b4", "#bcbd22",
                   "#e377c2", "#b8860b"]
# One marker and one dash pattern per precision: the roofline's points carry the marker, its roofs
# and the lines against size the dashes. Dash patterns are spelled out (on, off, ... in line widths)
# with gaps wide enough to read at the plots' widths: matplotlib's "-." looks solid there.
DTYPE_MARKERS = {"fp32": "o", "tf32": "s", "fp16": "^", "bf16": "D", "fp8_e4m3": "v"}
DTYPE_DASHES = {"fp32": "-", "tf32": (0, (6, 2.5)), "fp16": (0, (1.2, 2)), "bf16": (0, (7, 2.5, 1.2, 2.5)),
                "fp8_e4m3": (0, (4, 1.5, 1, 1.5, 1, 1.5))}


def chapter_color(chapter):
    number = chapter[:2]
    return CHAPTER_PALETTE[int(number) % len(CHAPTER_PALETTE)] if number.isdigit() else "#7f7f7f"


# The panels of the plot against size: one per family of precisions that share a peak, so that no
# panel holds more lines than a reader can tell apart and each line sits near its own ceiling.
PRECISION_FAMILIES = (("FP32", ("fp32",)), ("TF32", ("tf32",)), ("FP16 and BF16", ("fp16", "bf16")),
                      ("FP8", ("fp8_e4m3",)))
# Inside a panel every line gets its own marker, in this order, and its own colour: its chapter's,
# unless a line of the panel has it already (chapter 09 in FP16 and in BF16), then the first free one.
LINE_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p")
BASELINE_GREYS = ("black", "#6b6b6b")  # cuBLAS's lines, hollow markers; a family has at most two


def size_plot_series(res):
    """The lines of GFLOP/s against size (cubes only: one number per size), as dicts (label, dtype,
    x, y, baseline): cuBLAS in each precision (from the baseline rows, chapter 07's where it ran
    that size), then the best variant of each chapter across sizes (the sweep table's chapters)."""
    series = []
    baselines = defaultdict(dict)  # variant -> size -> gflops, chapter 07 first
    for r in sorted(res.all_rows, key=lambda r: r["chapter"] != bs.PREFERRED_CUBLAS_CHAPTER):
        s, g = bs.shape_of(r), bs.number(r["gflops"])
        if r["variant"] in bs.GPU_BASELINES and r["status"] == "PASS" and g and s[0] == s[1] == s[2]:
            baselines[r["variant"]].setdefault(s[0], g)
    for variant, dtype in bs.GPU_BASELINES.items():
        pts = sorted(baselines.get(variant, {}).items())
        if pts:
            series.append(dict(label=f"cuBLAS {dtype.upper()} ({variant})", dtype=dtype, baseline=True,
                               x=[p[0] for p in pts], y=[p[1] for p in pts]))
    for chapter, dtype in res.sweep_keys:
        pts = sorted((s[0], bs.number(r["gflops"])) for s, r in res.best[(chapter, dtype)].items() if s[0] == s[1] == s[2])
        if pts:
            series.append(dict(label=f"{chapter} ({dtype})", dtype=dtype, baseline=False, chapter=chapter,
                               x=[p[0] for p in pts], y=[p[1] for p in pts]))
    return series


def size_panels(series):
    """[(family name, its dtypes, [plot arguments of each line])] for the families that have lines,
    each line with a colour and a marker no other line of its panel has."""
    panels = []
    for family, dtypes in PRECISION_FAMILIES:
        lines = [s for s in series if s["dtype"] in dtypes]
        if not lines:
            continue
        used, styled, greys = set(), [], iter(BASELINE_GREYS)
        for i, s in enumerate(lines):
            if s["baseline"]:
                color = next(greys)
            else:
                own = chapter_color(s["chapter"])
                color = own if own not in used else next((c for c in CHAPTER_PALETTE if c not in used), own)
            used.add(color)
            styled.append(dict(x=s["x"], y=s["y"], label=s["label"], color=color,
                               marker=LINE_MARKERS[i % len(LINE_MARKERS)], linestyle=DTYPE_DASHES.get(s["dtype"], "-"),
                               linewidth=1.8 if s["baseline"] else 1.5,
                               **(dict(markerfacecolor="white") if s["baseline"] else {})))
        panels.append((family, dtypes, styled))
    return panels


def peak_of_family(res, dtypes):
    """The theoretical peak (GFLOP/s) of a panel's precisions, or None."""
    if dtypes[0] == "fp32":
        return res.ceilings.get("fp32_theory")
    return (res.ceilings.get(dtypes[0]) or (None,))[0]


def gapped(xs, ys, panel_xs):
    """A series' points with a NaN (a break in its line) at each size of the panel that it was not
    run at, between its first and last: a line from 1024 to 4096 would claim a rate at 2048."""
    have = dict(zip(xs, ys))
    grid = sorted(x for x in panel_xs | set(xs) if min(xs) <= x <= max(xs)) if xs else []
    return grid, [have.get(x, float("nan")) for x in grid]


def draw_sizes(plt, res, path, gpu_name):
    """GFLOP/s against size, one panel per precision family, each with its own legend beside it."""
    panels = size_panels(size_plot_series(res))
    fig, axes = plt.subplots(max(len(panels), 1), 1, figsize=(10, 0.8 + 3.4 * max(len(panels), 1)),
                             sharex=True, squeeze=False)
    axes = [ax for row in axes for ax in row]
    for ax, (family, dtypes, lines) in zip(axes, panels):
        panel_xs = {x for line in lines for x in line["x"]}
        for line in lines:
            ax.plot(*gapped(line.pop("x"), line.pop("y"), panel_xs), **line)
        peak = peak_of_family(res, dtypes)
        if peak:
            ax.axhline(peak, color="gray", linestyle=(0, (4, 4)), linewidth=1, label=f"{family} peak (theory)")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_ylabel("GFLOP/s")
        ax.set_title(family, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        # Beside the panel: inside, a legend of six lines hides the lines it names.
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    axes[-1].set_xlabel("M = N = K")
    fig.suptitle(f"Best variant of each chapter against size - {gpu_name}")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def ladder_limit(values):
    """The right end of the ladder's axis: a little room past its longest bar, or past cuBLAS's 100 %."""
    return max(values + [100.0]) * 1.1


def draw_ladder(plt, res, path, gpu_name, colors):
    """% of cuBLAS per chapter at the ladder shape, one horizontal bar each (its best variant: the
    highest % of cuBLAS, the figure the bar shows), and cuBLAS at 100 %."""
    bars = [(key, res.best[key][res.ladder_shape]) for key in res.ladder_keys if res.ladder_shape in res.best[key]]
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.45 * max(len(bars), 1)))
    values = [res.pct_cublas(r) or 0.0 for _, r in bars]
    right = ladder_limit(values)
    ys = list(range(len(bars)))[::-1]  # the first chapter on top
    ax.barh(ys, values, color=[colors[k[0]] for k, _ in bars], height=0.7)
    for y, v in zip(ys, values):
        # Inside the end of a long bar (the axis leaves little room past it), past a short one.
        inside = v > 0.2 * right
        ax.annotate(f"{v:.1f}% " if inside else f" {v:.1f}%", (v, y), va="center", fontsize=8,
                    ha="right" if inside else "left", color="white" if inside else "black")
    ax.axvline(100, color="black", linewidth=1, linestyle="--", label="cuBLAS (100 %)")
    ax.set_yticks(ys)
    ax.set_yticklabels([f'{k[0]} ({k[1]}): {r["variant"]}' for k, r in bars], fontsize=8)
    ax.set_xlabel("% of cuBLAS (same precision, same run); dashed: cuBLAS itself, 100 %")
    ax.set_xlim(0, right)
    ax.set_title(f"The ladder at {shape_text(res.ladder_shape)} - {gpu_name}")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


ROOFS = (("fp32", "FP32"), ("tf32", "TF32 tensor cores"), ("fp16", "FP16 and BF16 tensor cores"),
         ("fp8_e4m3", "FP8 tensor cores"))


def dodged(xs, step=1.06):
    """The x of each labelled point of the roofline, spread sideways: the best variants at the ladder
    shape share their FLOP/byte per input width (every FP32 chapter the same x), and markers drawn at
    one x hide each other. Points of one x move apart by factors of `step` around it (a log axis)."""
    groups = defaultdict(list)
    for i, x in enumerate(xs):
        groups[round(x, 6)].append(i)
    out = list(xs)
    for members in groups.values():
        for j, i in enumerate(members):
            out[i] = xs[i] * step ** (j - (len(members) - 1) / 2)
    return out


def draw_roofline(plt, res, path, gpu_name, colors):
    """Every variant of the ladder's chapters at every shape, at its minimum-traffic FLOP/byte,
    under the memory roof and the compute roof of each precision (FP8's where the GPU has it);
    the best of each chapter at the ladder shape labelled (spread sideways where they share an x)."""
    fig, ax = plt.subplots(figsize=(11.5, 6))
    gpu_rows = [r for r in res.rows if in_ladder(r["chapter"]) and not bs.is_baseline(r) and bs.number(r["gflops"])]
    ais = [intensity(r) for r in gpu_rows] or [1.0]
    c = res.ceilings
    bw = c.get("bw")
    ridges = [c[d][0] / bw[0] for d, _ in ROOFS if bw and c.get(d)]
    x_lo, x_hi = min(ais + ridges) / 4, max(ais + ridges) * 4
    xs = [x_lo * (x_hi / x_lo) ** (i / 200) for i in range(201)]
    if bw:
        # The memory roof stops where it meets the highest compute ceiling (its ridge point):
        # beyond it a kernel is bound by compute, and the line would cross every ceiling.
        top = max(ridges) if ridges else x_hi
        mem_xs = [x for x in xs if x < top] + [top]
        ax.plot(mem_xs, [x * bw[0] for x in mem_xs], color="black", linewidth=1, alpha=0.4,
                label=f"memory {bw[0]:.0f} GB/s ({bw[1]})")
    for dtype, label in ROOFS:
        if c.get(dtype):
            roof = [min(c[dtype][0], x * bw[0]) if bw else c[dtype][0] for x in xs]
            ax.plot(xs, roof, linestyle=DTYPE_DASHES[dtype], color="black", linewidth=1.6,
                    label=f"{label} {c[dtype][0]:.0f} GFLOP/s ({c[dtype][1]})")
    if c.get("fp32") and c["fp32"][1] == "measured" and c.get("fp32_theory"):
        ax.axhline(c["fp32_theory"], color="gray", linestyle=(0, (4, 4)), linewidth=1, label="FP32 peak (theory)")
    for r, ai in zip(gpu_rows, ais):
        ax.scatter(ai, bs.number(r["gflops"]), s=12, color=colors[r["chapter"]], alpha=0.35,
                   marker=DTYPE_MARKERS.get(r["dtype"], "o"))
    best = [(key, res.best[key][res.ladder_shape]) for key in res.ladder_keys if res.ladder_shape in res.best[key]]
    for (key, r), x in zip(best, dodged([intensity(r) for _, r in best])):
        ax.scatter(x, bs.number(r["gflops"]), s=60, color=colors[key[0]], edgecolor="black",
                   marker=DTYPE_MARKERS.get(key[1], "o"), label=f'{key[0]} {r["variant"]} ({key[1]})', zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_xlabel("FLOP per byte of DRAM traffic (minimum traffic: A, B, C moved once)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"Roofline - {gpu_name}")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        # Beside the axes: inside, it would hide the memory roof or the points.
        ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def draw_energy(plt, res, path, gpu_name, colors, energy):
    """GFLOP per joule of each chapter's best and of cuBLAS at the ladder shape."""
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.45 * len(energy)))
    ys = list(range(len(energy)))[::-1]
    values = [e for _, _, e in energy]
    ax.barh(ys, values, height=0.7, color=[colors[r["chapter"]] if not bs.is_baseline(r) else "black"
                                          for _, r, _ in energy])
    for y, (_, r, e) in zip(ys, energy):
        ax.annotate(f'  {e:.1f}  {r["variant"]}', (e, y), va="center", fontsize=8)
    ax.set_yticks(ys)
    ax.set_yticklabels([label for label, _, _ in energy], fontsize=8)
    ax.set_xscale("log")
    ax.set_xlim(min(values) / 2, max(values) * 8)
    ax.set_xlabel("GFLOP per joule of the whole board (log scale)")
    ax.set_title(f"Energy at {shape_text(res.ladder_shape)} - {gpu_name}")
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def make_plots(res, plot_dir):
    """Draws the plots into plot_dir (the energy plot only when the rows have GFLOP/J figures).
    Returns their file names, or None when matplotlib cannot be imported."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    os.makedirs(plot_dir, exist_ok=True)
    colors = defaultdict(str, {c: chapter_color(c) for c in {r["chapter"] for r in res.all_rows}})
    gpu_name = (res.gpu or {}).get("name") or next((r["gpu"] for r in res.all_rows if r["cc"]), "")
    names = plot_names(res.ladder_shape)
    paths = [os.path.join(plot_dir, name) for name in names]
    draw_sizes(plt, res, paths[0], gpu_name)
    draw_ladder(plt, res, paths[1], gpu_name, colors)
    draw_roofline(plt, res, paths[2], gpu_name, colors)
    energy = energy_rows(res)
    if not energy:
        return list(names[:3])
    draw_energy(plt, res, paths[3], gpu_name, colors, energy)
    return list(names)


def plots_block(res, t, plot_files):
    if plot_files is None:
        return INSTALL_LINE + "."
    shape = shape_text(res.ladder_shape)
    captions = [t["plot1"], t["plot2"].format(shape=shape), t["plot3"].format(shape=shape),
                t["plot4"].format(shape=shape)]
    return "\n\n".join(f"![{cap}](plots/{name})\n\n*{cap}*" for name, cap in zip(plot_files, captions))


# ---- filling the templates -------------------------------------------------------------------

# The generated parts of a report live between two markers, invisible when the Markdown is shown:
#     <!-- wb:fill LADDER_TABLE -->  ...the table...  <!-- wb:end LADDER_TABLE -->
# A re-fill replaces what is between each pair and keeps every other character of the report as it
# was, so the student's text survives any number of runs. A {{NAME}} anywhere (the template's, or
# one a student writes to bring back a table) becomes a marked block on the next fill.
#
# A block the student typed into is theirs too: each fill records a fingerprint of what it wrote
# into each block (the record, beside the report), and the next fill replaces a block only while it
# still holds what was written, or nothing. A report without a record (filled by an older version
# of this tool, or copied without it) is refilled as before; its backup keeps the old text.
INLINE = {"STUDENT_ID", "GPU", "DATE", "LADDER_SHAPE"}  # filled inside a line of text, not as a block
def marked(name, value):
    begin, end = markers.begin(name), markers.end(name)
    # Blank lines around a block keep a table from running into the markers in any Markdown viewer.
    return f"{begin}{value}{end}" if name in INLINE else f"{begin}\n\n{value}\n\n{end}"


def block_digest(content):
    """A short fingerprint of a block's content, blind to what an editor changes on its own: line
    endings, spaces at the end of a line, blank lines around the table."""
    lines = [line.rstrip() for line in content.strip().splitlines()]
    return hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()[:12]


def fill_blocks(text, values, last):
    """`text` with every marked block and every {{NAME}} of `values` filled, except blocks edited by
    hand: those whose content is neither empty nor what the last fill wrote (`last`: {name: digest},
    or None when unknown: then every block is filled). Returns (text, the names of the blocks kept,
    {name: digest of what this fill wrote}, the next fill's `last`)."""
    kept, record = set(), {}
    for name, value in values.items():
        begin, end = markers.begin(name), markers.end(name)
        written = last.get(name) if last else None

        def refill(m):
            content = m.group(0)[len(begin):-len(end)]
            if written is not None and content.strip() and block_digest(content) != written:
                kept.add(name)
                return m.group(0)
            return marked(name, value)

        text = markers.pair_pattern(name).sub(refill, text)
        text = text.replace("{{" + name + "}}", marked(name, value))
        # A kept block differs from this digest too, so it stays the student's until they empty it.
        record[name] = block_digest(value)
    return text, sorted(kept), record


def fill(text, values, expected, last=None):
    """Fills `text` (a template, or a report filled before) with `values` (see fill_blocks for
    `last`). Returns the new text, a list of one-line notes and the record of what was written
    (fill_blocks). The notes: a block edited by hand (kept), a marker without its partner (left as
    it is, the text around it kept), and a name in `expected` with no place left in the text (its
    markers deleted)."""
    text, kept, record = fill_blocks(text, values, last)
    notes = [f"block {name} was edited by hand since it was filled; kept as it is (delete its content to "
             f"have it filled again)" for name in kept]
    rest = text
    for name in values:
        rest = markers.pair_pattern(name).sub("", rest)
    lone = {(kind, name) for kind, name in markers.LINE.findall(rest) if name in values}
    for kind, name in sorted(lone, key=lambda m: (m[1], m[0])):
        other = "end" if kind == "fill" else "fill"
        notes.append(f"a 'wb:{kind} {name}' marker has no 'wb:{other} {name}': left as it is; put the "
                     f"missing marker back (or replace both by {{{{{name}}}}}) to have it filled again")
    for name in expected:
        if markers.begin(name) not in text and markers.end(name) not in text:
            notes.append(f"no place for {name} (its markers were deleted, or the report is older than the "
                         f"template): write {{{{{name}}}}} where it should go and run make report again")
    return text, notes, record


def record_path(report_path):
    """Where the fingerprints of a report's filled blocks are kept: a small JSON file beside it."""
    folder, name = os.path.split(report_path)
    return os.path.join(folder, f".{name}.filled.json")


def read_record(path):
    """{name: digest} from a record, or None when there is none or it cannot be read (the report
    is then refilled as a report from before records)."""
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not all(isinstance(v, str) for v in record.values()):
        return None
    return record


# Sections of a template that belong to some chapters: kept when one of them is in the homework (or
# when there is none). Innermost first, so a section may hold smaller ones (section 3 holds 3.1-3.4).
ONLY = re.compile(r"<!-- wb:only ([0-9A-Za-z_ ]+) -->\n((?:(?!<!-- wb:only ).)*?)<!-- wb:only-end -->\n", re.S)


def homework_sections(template, homework):
    """The template with the sections of chapters outside the homework left out and every
    wb:only marker taken away."""
    def keep(m):
        return m.group(2) if homework is None or set(m.group(1).split()) & set(homework) else ""

    while True:
        pruned = ONLY.sub(keep, template)
        if pruned == template:
            return pruned
        template = pruned


def read_homework(path, named):
    """(the rubric's "homework" list or None, problem or None). A missing rubric is no homework,
    unless REPORT_RUBRIC named it."""
    if not os.path.exists(path):
        return None, (f"{path} does not exist" if named else None)
    try:
        with open(path, encoding="utf-8") as f:
            rubric = json.load(f)
    except (OSError, ValueError) as e:
        return None, f"{path} is not JSON that can be read ({e})"
    if not isinstance(rubric, dict) or "homework" not in rubric:
        return None, None
    homework = rubric["homework"]
    if not (isinstance(homework, list) and homework and all(isinstance(c, str) for c in homework)):
        return None, f'{path}: "homework" must be a list of chapter folders, e.g. ["02_naive_kernel", "03_shared_tiling"]'
    chapters = sorted(d for d in os.listdir(ROOT) if re.fullmatch(r"[0-9][0-9]_\w+", d)
                      and os.path.isdir(os.path.join(ROOT, d)))
    unknown = [c for c in homework if c not in chapters]
    if unknown:
        return None, (f"{path}: the homework names {', '.join(repr(c) for c in unknown)}, which is no chapter "
                      f"folder here (chapters: {', '.join(chapters)})")
    return sorted(set(homework)), None


def output_problem(out_dir, names):
    """Why the report cannot be written into out_dir (one sentence), or None. Checked before any
    work by trying, not by asking for permissions (root passes every permission check, yet cannot
    create a file in /proc): a folder is made and removed where out_dir is still to be created, a
    file is made and removed in every folder the report writes into, and every file it replaces
    is opened for appending (which changes nothing)."""
    d = out_dir
    while not os.path.lexists(d):
        parent = os.path.dirname(os.path.abspath(d))
        if parent == os.path.abspath(d):
            break
        d = parent
    if not os.path.isdir(d):
        return f"{d} is not a folder"

    def cannot(probe, where):
        try:
            probe(where)
            return None
        except OSError as e:
            return f"nothing can be written in {where} ({e.strerror or e})"

    def make_folder(where):
        os.rmdir(tempfile.mkdtemp(prefix=".wb-report-probe-", dir=where))

    def make_file(where):
        fd, path = tempfile.mkstemp(prefix=".wb-report-probe-", dir=where)
        os.close(fd)
        os.remove(path)

    if d != out_dir:
        return cannot(make_folder, d)  # the folders below d are created by this run
    problem = cannot(make_file, out_dir)
    if problem:
        return problem
    for name, want_dir in names:
        path = os.path.join(out_dir, name)
        if not os.path.lexists(path):
            continue
        if os.path.isdir(path) != want_dir:
            return f"{path} cannot be written"
        try:
            if want_dir:
                make_file(path)
            else:
                open(path, "a").close()
        except OSError as e:
            return f"{path} cannot be written ({e.strerror or e})"
    return None


def next_backup(path):
    """PATH.bak.N with the first N that is free: a backup never replaces an earlier one."""
    n = 1
    while os.path.lexists(f"{path}.bak.{n}"):
        n += 1
    return f"{path}.bak.{n}"


def write_file(path, text):
    """Replaces `path` in one step: a crash never leaves half a file."""
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def write_report(path, text):
    """Writes the report; the previous version, if any, is copied to the next PATH.bak.N first.
    Returns that backup's path, or None."""
    backup = None
    if os.path.exists(path):
        backup = next_backup(path)
        shutil.copyfile(path, backup)
    write_file(path, text)
    return backup


def register(sub):
    p = add_command(sub, "report", "make report: the homework report, filled from measured results", __doc__)
    p.set_defaults(run=lambda a: main())


def main():
    def path_setting(name, default):
        return os.environ.get(name) or default

    csv_path = path_setting("REPORT_CSV", "results/bench.csv")
    env_path = path_setting("REPORT_ENV", os.path.join(os.path.dirname(csv_path), "env.json"))
    out_dir = path_setting("REPORT_OUT", "report")
    template_dir = path_setting("REPORT_TEMPLATE", os.path.join(ROOT, "report_template"))
    student = os.environ.get("STUDENT_ID", "").strip()
    rubric_path = path_setting("REPORT_RUBRIC", os.path.join(ROOT, "report_template", "rubric.json"))
    homework, problem = read_homework(rubric_path, bool(os.environ.get("REPORT_RUBRIC")))
    if problem:
        print(f"report: REPORT_RUBRIC: {problem}", file=sys.stderr)
        return 2
    shape_named = bool(os.environ.get("REPORT_SHAPE"))
    try:
        ladder_shape = parse_shape(os.environ.get("REPORT_SHAPE") or DEFAULT_SHAPE)
    except ValueError as e:
        print(f"report: REPORT_SHAPE: {e}", file=sys.stderr)
        return 2

    outputs = [(name, False) for name, _ in TEMPLATES] + \
        [(os.path.basename(record_path(name)), False) for name, _ in TEMPLATES] + [("plots", True), ("data", True)]
    problem = output_problem(out_dir, outputs)
    if problem:
        print(f"report: cannot write the report into {out_dir} (REPORT_OUT): {problem}", file=sys.stderr)
        return 2
    if not os.path.exists(csv_path):
        print(f"report: {csv_path} does not exist. Run `make bench` on the GPU machine first, or point "
              f"REPORT_CSV at a results file (e.g. REPORT_CSV=results/h200/bench.csv make report).", file=sys.stderr)
        return 2
    try:
        res = Results(csv_path, env_path, ladder_shape, shape_named, homework, rubric_path)
    except bs.NotResultsCsv as e:
        print(f"report: {e}", file=sys.stderr)
        return 2
    if not res.all_rows:
        print(f"report: {csv_path} holds no rows: nothing to report", file=sys.stderr)
        return 2
    if not res.rows:
        print(f"report: {csv_path} holds no rows of the homework's chapters ({', '.join(homework)}, from "
              f"{rubric_path}): nothing to report", file=sys.stderr)
        return 2
    if shape_named and ladder_shape not in res.shapes:
        print(f"report: REPORT_SHAPE={os.environ['REPORT_SHAPE']}: no variant in {csv_path} passed its check at "
              f"{shape_text(ladder_shape)}; the shapes it has: {', '.join(bs.shape_label(s) for s in res.shapes)}",
              file=sys.stderr)
        return 2
    if res.fell_back:
        print(f"report: note: no chapter ran {shape_text(res.wanted_shape)} (the default shape): the report is at "
              f"{shape_text(res.ladder_shape)}, the largest cube measured (REPORT_SHAPE=... picks another)",
              file=sys.stderr)
    try:
        return write_everything(res, out_dir, template_dir, student)
    except OSError as e:  # e.g. the disk filled up: one line, as for a folder refused at the start
        where = e.filename or out_dir
        print(f"report: stopped: {where} cannot be written or read ({e.strerror or e})", file=sys.stderr)
        return 2


def write_everything(res, out_dir, template_dir, student):
    """The plots, the copies of the inputs and both reports into out_dir. Returns 0."""
    csv_path, env_path = res.csv_path, res.env_path
    os.makedirs(out_dir, exist_ok=True)
    plot_dir = os.path.join(out_dir, "plots")
    if os.path.isdir(plot_dir):  # never leave plots of an earlier run next to new tables
        for name in os.listdir(plot_dir):
            if name in plot_names(res.ladder_shape) or re.fullmatch(r"(ladder|energy)_[0-9x]+\.png", name):
                os.remove(os.path.join(plot_dir, name))
    plot_files = make_plots(res, plot_dir)
    data_dir = os.path.join(out_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    shutil.copyfile(csv_path, os.path.join(data_dir, "bench.csv"))
    if res.env:
        shutil.copyfile(env_path, os.path.join(data_dir, "env.json"))

    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    written = []
    for name, lang in TEMPLATES:
        t = TEXT[lang]
        with open(os.path.join(template_dir, name), encoding="utf-8") as f:
            template = homework_sections(f.read(), res.homework)
        dst = os.path.join(out_dir, name)
        refill = os.path.exists(dst)
        if refill:  # the student's report: only what lies between markers changes
            with open(dst, encoding="utf-8") as f:
                text = f.read()
        else:
            text = template
        who = student or ", ".join(sorted({r["student"] for r in res.all_rows if r.get("student")})) or "-"
        gpu = (res.gpu or {}).get("name") or next((r["gpu"] for r in res.all_rows if r["cc"]), "-")
        warning = whose_numbers(res, student, t)[0]
        byline = t["byline"].format(student=who, gpu=gpu, date=now)
        values = {
            "BYLINE": (f"**{warning}**\n\n" if warning else "") + byline,
            "PROVENANCE": provenance(res, t, student, now),
            "DEVICE_TABLE": device_table(res, t),
            "LADDER_SHAPE": shape_text(res.ladder_shape),
            "LADDER_TABLE": ladder_table(res, t),
            "SWEEP_TABLE": sweep_table(res, t),
            "VARIANT_TABLE": variants_table(res, t),
            "CUBLAS_TABLE": cublas_table(res, t),
            "END_TO_END_TABLE": end_to_end_table(res, t),
            "HOPPER_TABLE": hopper_table(res, t),
            "ROOFLINE_TABLE": roofline_table(res, t),
            "CORRECTNESS_TABLE": correctness_table(res, t),
            "TENSOR_CORE_TABLE": tensor_core_table(res, t),
            "PRECISION_TABLE": precision_table(res, t),
            "ENERGY_TABLE": energy_table(res, t),
            "PLOTS": plots_block(res, t, plot_files),
            "STUDENT_ID": who,
            "GPU": gpu,
            "DATE": now,
        }
        expected = [n for n in values if "{{" + n + "}}" in template]
        text, notes, record = fill(text, values, expected, read_record(record_path(dst)) if refill else None)
        for note in notes:
            print(f"report: {dst}: {note}", file=sys.stderr)
        left = sorted(set(re.findall(r"\{\{[A-Za-z0-9_]*\}\}", text)))
        if left:
            print(f"report: warning: {name} has placeholders this tool does not know: {', '.join(left)}", file=sys.stderr)
        backup = write_report(dst, text)
        write_file(record_path(dst), json.dumps(record, indent=0, sort_keys=True) + "\n")
        if backup:
            print(f"report: the previous {dst} is kept as {backup}")
        written.append(dst + (" (re-filled, your text kept)" if refill else ""))

    warning = whose_numbers(res, student, TEXT["en"])[0]
    if warning:
        print(f"report: note: {warning} (said in bold at the top of the report)", file=sys.stderr)
    of_homework = "" if res.homework is None else f" ({len(res.rows)} of them of the homework's chapters)"
    print(f"report: {' and '.join(written)} filled from {len(res.all_rows)} rows of {csv_path}{of_homework}"
          f"{'' if res.env else ' (no device facts: ' + env_path + ' is missing)'}")
    if plot_files is None:
        print(f"report: no plots: {INSTALL_LINE}")
    else:
        print(f"report: plots in {plot_dir}/: {', '.join(plot_files)}")
    return 0

