"""test_report.py - tests of `make report` and `make bench`'s tools on a fixture, no GPU needed.

The fixture (report_fixture.csv, report_fixture_env.json) holds invented numbers in the spec's
schema: every chapter's kind of rows (FP32, TF32, FP16 and BF16; chapter 09's ladder), two failed
checks (one of them BF16), two commits, a CPU chapter; report_fixture_rubric.json is a rubric with a
homework of four chapters. The tests run the real entry points
(tools/report.sh, `python3 -m wb bench-summary`, tools/bench.sh) in temporary folders and check the
tables against numbers computed here, independently, from the same CSV. Run with pytest (make test
runs it).
"""
import csv
import functools
import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections import defaultdict

import pytest

from wb import ROOT, TOOLS
from wb import report as wb_report

FIXTURE_CSV = os.path.join(TOOLS, "report_fixture.csv")
FIXTURE_ENV = os.path.join(TOOLS, "report_fixture_env.json")
INSTALL_LINE = "install python3-matplotlib (apt) or pip install matplotlib for the plots"
BASELINES = {"cublas_sgemm", "cublas_tf32", "cublas_hgemm", "cublas_bgemm"}


def fixture_rows():
    with open(FIXTURE_CSV, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# A rubric without "homework": every chapter. The tests use it unless they name another, so they
# hold in a homework kit too, whose own rubric names only the homework's chapters.
ALL_CHAPTERS = os.path.join(tempfile.mkdtemp(prefix="wb-report-rubric-"), "rubric.json")
with open(ALL_CHAPTERS, "w", encoding="utf-8") as _f:
    _f.write('{"chapters": {}}\n')


def run(cmd, env_extra=None, cwd=ROOT):
    env = dict(os.environ)
    env.pop("STUDENT_ID", None)
    env["REPORT_RUBRIC"] = ALL_CHAPTERS
    env.update(env_extra or {})
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)


def read_reports(out):
    """The English and the Chinese report that a fill wrote into `out`."""
    texts = []
    for name in ("report.md", "report.zh-CN.md"):
        with open(os.path.join(out, name), encoding="utf-8") as f:
            texts.append(f.read())
    return tuple(texts)


def matplotlib_available():
    return run(["python3", "-c", "import matplotlib"]).returncode == 0


def hide_matplotlib(folder):
    """A folder to put first on PYTHONPATH in which `import matplotlib` fails, as on a machine
    without it."""
    package = os.path.join(folder, "matplotlib")
    os.makedirs(package, exist_ok=True)
    with open(os.path.join(package, "__init__.py"), "w") as f:
        f.write('raise ImportError("matplotlib hidden by test_report.py")\n')
    return folder


# A stand-in for matplotlib that draws nothing and writes down every call the report makes on a
# figure's axes (plot, scatter, barh, set_yticklabels, ...) with its arguments and the number of
# the axes it went to (0 for the first panel), one JSON list per saved file: the tests read what
# each plot shows (series, colours, styles, labels, panels) without pixels.
FAKE_PYPLOT = r'''
import json, os

class _Recorder:
    def __init__(self, calls=None, index=0):
        self.calls = [] if calls is None else calls
        self.index = index
    def __getattr__(self, name):
        def call(*args, **kwargs):
            self.calls.append({"call": name, "args": list(args), "kwargs": kwargs, "ax": self.index})
            if name == "get_legend_handles_labels":
                labels = [c["kwargs"]["label"] for c in self.calls
                          if "label" in c["kwargs"] and c["ax"] == self.index]
                return labels, labels
            return None
        return call

class _Figure(_Recorder):
    def __init__(self, calls):
        super().__init__()
        self.axes_calls = calls
    def savefig(self, path, **kwargs):
        with open(path, "w") as f:
            f.write("fake plot\n")
        with open(os.environ["WB_PLOT_LOG"], "a") as f:
            f.write(json.dumps({"file": os.path.basename(path), "calls": self.axes_calls}, default=list) + "\n")

def subplots(nrows=1, ncols=1, squeeze=True, **kwargs):
    calls = []
    grid = [[_Recorder(calls, r * ncols + c) for c in range(ncols)] for r in range(nrows)]
    fig = _Figure(calls)
    if not squeeze:
        return fig, grid
    if nrows * ncols == 1:
        return fig, grid[0][0]
    return fig, [ax for row in grid for ax in row]

def close(*args):
    pass
'''


def recording_matplotlib(folder):
    """A folder to put first on PYTHONPATH in which `import matplotlib` gets the stand-in above."""
    package = os.path.join(folder, "matplotlib")
    os.makedirs(package, exist_ok=True)
    with open(os.path.join(package, "__init__.py"), "w") as f:
        f.write("def use(backend):\n    pass\n")
    with open(os.path.join(package, "pyplot.py"), "w") as f:
        f.write(FAKE_PYPLOT)
    return folder


def recorded_plots(tmp, **settings):
    """Fills the report from the fixture with the recording stand-in; returns {file: [calls]}."""
    log = os.path.join(tmp, "plots.jsonl")
    if os.path.exists(log):
        os.remove(log)
    r = run(["bash", "tools/report.sh"], dict({
        "REPORT_CSV": FIXTURE_CSV, "REPORT_ENV": FIXTURE_ENV, "REPORT_OUT": os.path.join(tmp, "report"),
        "PYTHONPATH": recording_matplotlib(os.path.join(tmp, "fakempl")), "WB_PLOT_LOG": log}, **settings))
    if r.returncode != 0:
        raise AssertionError(r.stderr + r.stdout)
    import json
    with open(log) as f:
        return {entry["file"]: entry["calls"] for entry in map(json.loads, f)}


def json_key(value):
    """A hashable form of a recorded argument (a dash pattern comes back as nested lists)."""
    import json
    return json.dumps(value)


def calls_named(calls, name):
    return [c for c in calls if c["call"] == name]


# The chapters whose own kernels are the steps of the ladder (README, "The ladder, measured"): not
# 00 (the machine), 01 (the CPU), 07 (cuBLAS itself) or 08 (whole programs, copies included).
LADDER_CHAPTERS = {"02_naive_kernel", "03_shared_tiling", "04_register_unroll", "05_float4_vectorized",
                   "06_tensor_core_wmma", "09_hopper_wgmma"}


def block(text, name):
    """What a report holds between the markers of one placeholder."""
    return text[text.index(f"<!-- wb:fill {name} -->"):text.index(f"<!-- wb:end {name} -->")]


def best_at(rows, chapter, dtype, shape):
    """The expected best variant, computed the plain way: the highest % of cuBLAS (the figure
    printed), except on the CPU of chapter 01, whose % has one yardstick per thread count."""
    candidates = [r for r in rows if r["chapter"] == chapter and r["dtype"] == dtype and r["status"] == "PASS"
                  and (int(r["M"]), int(r["N"]), int(r["K"])) == shape and r["variant"] not in BASELINES
                  and not r["variant"].startswith("openblas")]
    column = "gflops" if chapter.startswith("01_") else "pct_cublas"
    return max(candidates, key=lambda r: float(r[column])) if candidates else None


class TestReportFixture:
    """Runs `make report` on the fixture once (without matplotlib) for the table tests."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-report-")
        cls.out = os.path.join(cls.tmp, "report")
        cls.result = run(["bash", "tools/report.sh"], {
            "REPORT_CSV": FIXTURE_CSV, "REPORT_ENV": FIXTURE_ENV, "REPORT_OUT": cls.out,
            "STUDENT_ID": "S7654321", "PYTHONPATH": hide_matplotlib(os.path.join(cls.tmp, "nompl"))})
        cls.rows = fixture_rows()
        cls.en, cls.zh = read_reports(cls.out) if cls.result.returncode == 0 else ("", "")

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setup_method(self):
        assert self.result.returncode == 0, self.result.stderr + self.result.stdout

    def test_both_languages_are_filled_completely(self):
        for text in (self.en, self.zh):
            assert "{{" not in text
            assert "S7654321" in text
        assert "## 5. Correctness" in self.en
        assert "## 5. 正确性" in self.zh
        assert "最佳变体" in self.zh
        assert os.path.exists(os.path.join(self.out, "data", "bench.csv"))
        assert os.path.exists(os.path.join(self.out, "data", "env.json"))

    def test_ladder_numbers_match_the_csv(self):
        shape = (4096, 4096, 4096)
        keys = sorted({(r["chapter"], r["dtype"]) for r in self.rows if r["chapter"] in LADDER_CHAPTERS})
        assert len(keys) >= 7
        for chapter, dtype in keys:
            r = best_at(self.rows, chapter, dtype, shape)
            assert r is not None, (chapter, dtype)
            line = (f'| {chapter} | {dtype} | `{r["variant"]}` | {float(r["gflops"]):.1f} | '
                    f'{float(r["pct_cublas"]):.1f} | {float(r["pct_peak"]):.1f} | {float(r["rel_err"]):.2e} |')
            assert line in self.en
            assert line in self.zh  # same numbers in the Chinese report
        # The failed check never makes a variant "best", even where it would be the fastest.
        assert "| 03_shared_tiling | fp32 | `tiled_32_4rows` |" in self.en

    def test_the_ladder_is_the_chapters_own_kernels(self):
        # Chapter 07's rows are cuBLAS (section 4.3), chapter 08's whole programs with their copies
        # (section 4.8), chapter 01's the CPU: none is a step of the ladder, nor a point of the roofline.
        chapters = {r["chapter"] for r in self.rows}
        assert {"01_cpu_matmul", "07_cublas_baseline", "08_end_to_end"} <= chapters
        for text in (self.en, self.zh):
            for name in ("LADDER_TABLE", "ROOFLINE_TABLE"):
                shown = {c for c in chapters if f"| {c} |" in block(text, name)}
                assert shown == chapters & LADDER_CHAPTERS, name
            # Across sizes: the ladder's chapters, and chapter 01 beside them (its CPU code).
            shown = {c for c in chapters if f"| {c} |" in block(text, "SWEEP_TABLE")}
            assert shown == (chapters & LADDER_CHAPTERS) | {"01_cpu_matmul"}
        assert "| 07_cublas_baseline | `gemmex_fp16` |" in self.en  # still in the variant and check tables

    def test_cpu_chapter_is_compared_with_cublas_sgemm_of_chapter_07(self):
        blas = best_at(self.rows, "01_cpu_matmul", "fp32", (1024, 1024, 1024))
        cublas = next(r for r in self.rows if r["chapter"] == "07_cublas_baseline" and r["variant"] == "cublas_sgemm"
                      and r["M"] == "1024")
        pct = 100 * float(blas["gflops"]) / float(cublas["gflops"])
        assert f'{float(blas["gflops"]):.1f} ({pct:.1f}%)' in self.en

    def test_every_measured_row_is_in_the_variant_table(self):
        for r in self.rows:
            if (r["M"], r["N"], r["K"]) == ("4096", "4096", "4096"):
                assert f'| {r["chapter"]} | `{r["variant"]}` | {r["dtype"]} | {float(r["ms_median"]):.3f} | ' \
                              f'{float(r["gflops"]):.1f} |' in self.en

    def test_correctness_table_counts_pass_and_fail(self):
        assert "| 03_shared_tiling | `transposed_b_32` | fp32 | 2 | 1 | 1 | 0 | 3.10e-01 | 1000x1013x4097 |" in \
                      self.en
        assert "| 07_cublas_baseline | `gemmex_fp16` | fp16 | 4 | 4 | 0 | 0 | 1.50e-07 |" in self.en
        baselines = [r for r in self.rows if r["variant"] in BASELINES or r["variant"].startswith("openblas")]
        assert f"{len(baselines)} checked, {len(baselines)} PASS" in self.en

    def test_cublas_sweep_table(self):
        for r in self.rows:
            if r["chapter"] == "07_cublas_baseline" and r["variant"] in BASELINES:
                assert f'{float(r["gflops"]):.1f} ({float(r["pct_peak"]):.1f}%)' in self.en

    def test_cutlass_table_beside_cublas(self):
        # The fixture has no CUTLASS rows: the section says how to get them.
        assert "No CUTLASS rows in these results" in self.en
        assert "结果中没有 CUTLASS 行" in self.zh
        row = dict(self.rows[0], chapter="07_cublas_baseline", variant="cutlass_fp16_tensorop", dtype="fp16", M="4096",
                   N="4096", K="4096", gflops="437882.2", pct_cublas="62.9", status="PASS")
        failed = dict(row, variant="cutlass_bf16_wgmma", status="FAIL")
        text = wb_report.cutlass_table(type("R", (), {"rows": [row, failed]})(), wb_report.TEXT["en"])
        assert "| 4096³ | 437882.2 (62.9%) |" in text.replace("4096x4096x4096", "4096³")
        assert "cutlass_bf16_wgmma" not in text  # a failed row is no measurement

    def test_device_table_and_ceilings(self):
        assert "| GPU | Fixture GPU (invented numbers) |" in self.en
        assert "| FP32 peak (theory) | 60000 GFLOP/s |" in self.en
        assert "| FP32 FMA rate (measured) | 55000 GFLOP/s (91.7% of theory) |" in self.en
        assert "| DRAM bandwidth (measured, best copy) | 4100 GB/s (85.4% of theory) |" in self.en
        assert "FP32 55000 GFLOP/s (measured FMA rate)" in self.en
        assert "memory 4100 GB/s (measured copy)" in self.en

    def test_roofline_places_variants_at_minimum_traffic_intensity(self):
        # 2 * 4096^3 / (4 * 3 * 4096^2) = 4096 / 6 for FP32; FP16 inputs: 2 * 4096^3 / (8 * 4096^2) = 1024.
        assert "| 05_float4_vectorized | `async3_128x256x8` | fp32 | 682.7 | 55000 | 36000.0 | 65.5 | compute |" in \
                      self.en
        assert "| 06_tensor_core_wmma | `wmma_fp16_64x64` | fp16 | 1024.0 | 960000 | 210000.0 | 21.9 | compute |" in \
                      self.en

    def test_traffic_counts_each_input_type_at_its_own_width(self):
        from wb import report
        s = (4096, 4096, 4096)
        c = 4 * 4096 * 4096  # FP32 C written once (beta = 0)
        assert report.traffic_bytes(s, "fp32", 0.0) == 4 * 2 * 4096 * 4096 + c
        assert report.traffic_bytes(s, "bf16", 0.0) == 2 * 2 * 4096 * 4096 + c
        assert report.traffic_bytes(s, "fp8_e4m3", 0.0) == 1 * 2 * 4096 * 4096 + c
        assert report.traffic_bytes(s, "fp8_e4m3", 1.0) == 2 * 4096 * 4096 + 2 * c

    def test_provenance(self):
        with open(FIXTURE_CSV, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()[:16]
        assert digest in self.en
        ours = sum(r["git"] == "fixture00001" for r in self.rows)
        assert f"`fixture00001` ({ours} rows)" in self.en
        assert f"`fixture00002-dirty` ({len(self.rows) - ours} rows)" in self.en
        assert "2026-01-01T10:01:00Z" in self.en
        assert "**Student:** S7654321" in self.en

    def test_without_matplotlib_one_line_says_how_to_install_it(self):
        assert self.en.count(INSTALL_LINE) == 1
        assert self.zh.count(INSTALL_LINE) == 1
        assert INSTALL_LINE in self.result.stdout
        assert "plots/" not in self.en
        plots = os.path.join(self.out, "plots")
        assert not (os.path.isdir(plots) and os.listdir(plots))


    def test_tensor_core_section_lists_every_tf32_and_fp16_row(self):
        assert "### 4.7 Tensor cores: WMMA, mma.sync" in self.en
        assert "### 4.7 张量核心：WMMA、mma.sync" in self.zh
        rows = [r for r in self.rows if r["chapter"] == "06_tensor_core_wmma" and r["M"] == "4096"]
        assert len(rows) >= 5
        for r in rows:
            name = f'`{r["variant"]}`' + (" (cuBLAS baseline, same run)" if r["variant"] in BASELINES else "")
            line = (f'| 06_tensor_core_wmma | {name} | {r["dtype"]} | {float(r["gflops"]) / 1000:.1f} | '
                    f'{float(r["pct_cublas"]):.1f} | {float(r["pct_peak"]):.1f} | {float(r["rel_err"]):.2e} | PASS |')
            assert line in self.en
        assert "| 06_tensor_core_wmma | `tf32_mma_sync` | tf32 | 150.0 | 39.5 |" in self.zh
        # Chapter 07's cuBLAS calls stay in section 4.3, not in the tensor-core table.
        section = self.en[self.en.index("### 4.7"):self.en.index("## 5. Correctness")]
        assert "07_cublas_baseline" not in section

    def test_precision_table_against_fp32_of_chapter_05(self):
        tensor = ("06_tensor_core_wmma", "09_hopper_wgmma")  # the chapters with tensor-core rows at 4096

        def errs(chapters, dtype):
            return sorted(float(r["rel_err"]) for r in self.rows if r["chapter"] in chapters and r["dtype"] == dtype
                          and r["M"] == "4096" and r["status"] == "PASS" and r["variant"] not in BASELINES)

        def median(v):
            return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2

        fp32, tf32 = errs(("05_float4_vectorized",), "fp32"), errs(tensor, "tf32")
        fp16, bf16 = errs(tensor, "fp16"), errs(tensor, "bf16")
        assert f"| tf32 | TF32: 11-bit significand (10 stored), 8-bit exponent | 2^-11 = 4.88e-04 | {len(tf32)} | " \
                      f"{median(tf32):.2e} | {max(tf32):.2e} | 2.00e-07 | {median(tf32) / median(fp32):.1f} | " \
                      f"06_tensor_core_wmma, 09_hopper_wgmma |" in self.en
        assert f"| fp32 | FP32: 24-bit significand, 8-bit exponent | 2^-24 = 5.96e-08 | {len(fp32)} | " \
                      f"{median(fp32):.2e} |" in self.en
        assert f"| fp16 | FP16：11 位有效数字（存 10 位），5 位指数 | 2^-11 = 4.88e-04 | {len(fp16)} | " \
                      f"{median(fp16):.2e} |" in self.zh
        # BF16: u = 2^-8; the failed cluster_multicast row is not counted; cuBLAS BF16 apart.
        assert len(bf16) == 4
        assert f"| bf16 | BF16: 8-bit significand (7 stored), 8-bit exponent | 2^-8 = 3.91e-03 | {len(bf16)} | " \
                      f"{median(bf16):.2e} | {max(bf16):.2e} | 1.50e-07 | {median(bf16) / median(fp32):.1f} | " \
                      f"09_hopper_wgmma |" in self.en
        assert "| bf16 | BF16：8 位有效数字（存 7 位），8 位指数 | 2^-8 = 3.91e-03 |" in self.zh
        assert "--precision" in self.en

    def test_precision_text_says_which_errors_are_above_u(self):
        # The fixture's errors: FP32 (chapter 05) 1.4e-07, above FP32's u = 2^-24 (a sum of K terms);
        # every tensor-core precision far below its u.
        block_en, block_zh = block(self.en, "PRECISION_TABLE"), block(self.zh, "PRECISION_TABLE")
        assert "- **fp32**: largest 1.40e-07 = 2.3 u, above u: u is the accumulation's own rounding" in block_en
        assert "- **tf32**: largest 2.30e-07 = 0.00047 u, below u:" in block_en
        assert "- **bf16**: largest 1.60e-07 = 4.1e-05 u, below u:" in block_en
        assert "- **fp32**：最大 1.40e-07 = 2.3 u，高于 u：" in block_zh
        assert "- **tf32**：最大 2.30e-07 = 0.00047 u，低于 u：" in block_zh

    def test_hopper_section_fills_from_the_csv(self):
        assert "### 4.9 Hopper: TMA, wgmma and warp specialization (chapter 09)" in self.en
        assert "### 4.9 Hopper：TMA、wgmma 与 warp 专门化（第 09 章）" in self.zh
        section = self.en[self.en.index("### 4.9"):self.en.index("## 5. Correctness")]
        assert "| step | variant | FP16 TFLOP/s | FP16 % of cuBLAS | BF16 TFLOP/s | BF16 % of cuBLAS |" in section
        rows = {(r["variant"], r["dtype"]): r for r in self.rows if r["chapter"] == "09_hopper_wgmma" and r["M"] == "4096"}

        def cells(variant, dtype):
            r = rows[(variant, dtype)]
            pct = f'{float(r["pct_cublas"]):.1f}' if r["status"] == "PASS" else r["status"]
            return f'{float(r["gflops"]) / 1000:.1f} | {pct}'

        assert f"|  | `cublas_hgemm` / `cublas_bgemm` (cuBLAS baseline, same run) | {cells('cublas_hgemm', 'fp16')} | " \
                      f"{cells('cublas_bgemm', 'bf16')} |" in section
        steps = ["wgmma_64x128", "wgmma_128x256", "warp_specialized", "persistent", "cluster_multicast"]
        at = []
        for n, v in enumerate(steps, 1):
            line = f"| {n} | `{v}` | {cells(v, 'fp16')} | {cells(v, 'bf16')} |"
            assert line in section
            at.append(section.index(line))
        assert at == sorted(at)  # in the order of the ladder
        # A variant that failed its check shows FAIL, not its % (even though it was the fastest).
        assert "| 5 | `cluster_multicast` | 696.5 | 99.5 | 741.6 | FAIL |" in section
        assert "| step | variant | TF32 TFLOP/s | TF32 % of cuBLAS |" in section
        assert f"|  | `cublas_tf32` (cuBLAS baseline, same run) | {cells('cublas_tf32', 'tf32')} |" in section
        assert f"| 6 | `tf32_persistent` | {cells('tf32_persistent', 'tf32')} |" in section
        zh = self.zh[self.zh.index("### 4.9"):self.zh.index("## 5. 正确性")]
        assert "| 步骤 | 变体 | FP16 TFLOP/s | FP16 占 cuBLAS 的 % | BF16 TFLOP/s | BF16 占 cuBLAS 的 % |" in zh
        assert "| 4 | `persistent` | 703.5 | 100.5 | 734.4 | 102.0 |" in zh
        for text in (section, zh):
            assert text.count("**Write:**") + text.count("**撰写：**") >= 1
        # Section 4.7's table leaves chapter 09 to this section.
        tc = self.en[self.en.index("### 4.7"):self.en.index("#### What the precision costs")]
        assert "09_hopper_wgmma" not in tc

    def test_hopper_caption_says_what_its_percent_of_cublas_is(self):
        # The table sets TFLOP/s beside % of cuBLAS; the % is not their ratio, and the caption says so.
        en = block(self.en, "HOPPER_TABLE")
        assert "% of cuBLAS is the median of the per-round ratios" in en
        assert "rounds alternating with cuBLAS" in en and "(paired rounds)" in en
        assert "It is not the ratio of the two TFLOP/s columns" in en
        zh = block(self.zh, "HOPPER_TABLE")
        assert "占 cuBLAS 的 % 是各轮比值的中位数" in zh
        assert "轮流交替计时（成对的轮次）" in zh and "它不是两个 TFLOP/s 列之比" in zh

    def test_end_to_end_section_names_the_faster_processor_per_shape(self):
        # the fixture's chapter 08 rows: the CPU wins at 256 (copies dominate), the GPU at 4096
        section = self.en[self.en.index("Chapter 08, end to end"):self.en.index("wb:end END_TO_END_TABLE")]
        assert "| 256x256x256 | `e2e_cpu_openblas_16t` | 0.050 | 671.1 | 12.9 | PASS | CPU |" in section
        assert "| 4096x4096x4096 | `e2e_gpu_cublas_pinned` | 6.500 | 21144.5 | 41.5 | PASS | GPU |" in section
        rows08 = [r for r in self.rows if r["chapter"] == "08_end_to_end"]
        assert len(rows08) == 6
        for r in rows08:
            assert f'`{r["variant"]}` | {float(r["ms_median"]):.3f} |' in section
        zh = self.zh[self.zh.index("第 08 章，端到端"):self.zh.index("wb:end END_TO_END_TABLE")]
        assert "| 256x256x256 | `e2e_cpu_openblas_16t` | 0.050 | 671.1 | 12.9 | PASS | CPU |" in zh

    def test_bf16_rows_are_summarised_like_fp16(self):
        # The ladder: chapter 09's BF16 best is persistent (the faster cluster_multicast failed its check).
        assert "| 09_hopper_wgmma | bf16 | `persistent` | 734400.0 | 102.0 | 76.5 | 1.60e-07 |" in self.en
        # cuBLAS BF16 is a baseline (counted with the others), never a "best" variant.
        assert "`cublas_bgemm` | 720000.0 | 100.0" not in self.en
        assert "| 09_hopper_wgmma | `cluster_multicast` | bf16 | 1 | 0 | 1 | 0 | 2.50e-01 | 4096x4096x4096 |" in \
                      self.en
        # Roofline: 2-byte inputs, and the FP16 tensor-core ceiling, which is BF16's too.
        assert "| 09_hopper_wgmma | `persistent` | bf16 | 1024.0 | 960000 | 734400.0 | 76.5 | compute |" in self.en
        assert "| FP16 and BF16 tensor-core peak (theory) | 960000 GFLOP/s |" in self.en
        assert "| FP16 与 BF16 张量核心峰值（理论） | 960000 GFLOP/s |" in self.zh
        assert "FP16 and BF16 tensor cores 960000 GFLOP/s (theoretical)" in self.en


def between_markers_removed(text):
    """The report with the content of every marker pair taken out: what a re-fill must keep."""
    import re
    return re.sub(r"(<!-- wb:fill (\w+) -->).*?(<!-- wb:end \2 -->)", r"\1\3", text, flags=re.S)


FIXTURE_RUBRIC = os.path.join(TOOLS, "report_fixture_rubric.json")


class TestHomework:
    """A rubric with "homework" (a kit for a subset of chapters): the report's chapter sections,
    tables and plots cover those chapters only, in both languages."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-homework-")
        cls.out = os.path.join(cls.tmp, "report")
        cls.result = run(["bash", "tools/report.sh"], {
            "REPORT_CSV": FIXTURE_CSV, "REPORT_ENV": FIXTURE_ENV, "REPORT_OUT": cls.out, "REPORT_RUBRIC": FIXTURE_RUBRIC,
            "PYTHONPATH": hide_matplotlib(os.path.join(cls.tmp, "nompl"))})
        cls.en, cls.zh = read_reports(cls.out) if cls.result.returncode == 0 else ("", "")
        import json
        with open(FIXTURE_RUBRIC, encoding="utf-8") as f:
            cls.homework = set(json.load(f)["homework"])
        cls.chapters = {r["chapter"] for r in fixture_rows()}

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setup_method(self):
        assert self.result.returncode == 0, self.result.stderr + self.result.stdout

    def shown(self, text, name):
        return {c for c in self.chapters if f"| {c} |" in block(text, name)}

    def test_the_tables_cover_the_homeworks_chapters(self):
        assert self.homework & self.chapters == {"02_naive_kernel", "03_shared_tiling", "06_tensor_core_wmma"}
        for text in (self.en, self.zh):
            for name in ("LADDER_TABLE", "SWEEP_TABLE", "VARIANT_TABLE", "ROOFLINE_TABLE", "CORRECTNESS_TABLE"):
                assert self.shown(text, name) == self.homework & self.chapters, name
            assert self.shown(text, "TENSOR_CORE_TABLE") == {"06_tensor_core_wmma"}
            assert "09_hopper_wgmma" not in block(text, "PRECISION_TABLE")
            assert "05_float4_vectorized" not in block(text, "PRECISION_TABLE")
        # The check of the baselines counts the homework's chapters' cuBLAS rows only.
        baselines = [r for r in fixture_rows() if r["chapter"] in self.homework and r["variant"] in BASELINES]
        assert f"{len(baselines)} checked, {len(baselines)} PASS" in self.en

    def test_the_sections_of_other_chapters_are_left_out(self):
        for text, kept, gone in (
                (self.en, ["## 1. The machine", "### 3.1 Shared-memory tiling", "### 3.2 Bank conflicts",
                           "### 4.1 The ladder", "### 4.7 Tensor cores", "#### What the precision costs",
                           "## 5. Correctness", "## 7. Summary and outlook"],
                 ["### 3.3 Registers", "### 3.4 Vector loads", "### 4.3 cuBLAS itself", "### 4.8 The whole program",
                  "### 4.9 Hopper", "{{CUBLAS_TABLE}}", "END_TO_END_TABLE", "HOPPER_TABLE"]),
                (self.zh, ["## 1. 机器", "### 3.1 共享内存分块", "### 4.7 张量核心", "#### 精度的代价", "## 7. 总结与展望"],
                 ["### 3.3 寄存器", "### 3.4 向量化加载", "### 4.3 cuBLAS 本身", "### 4.8 整个程序", "### 4.9 Hopper"])):
            for heading in kept:
                assert heading in text
            for heading in gone:
                assert heading not in text
            assert "wb:only" not in text  # the section markers never reach the student's copy
        assert self.result.stderr == ""  # no "no place for END_TO_END_TABLE" lines

    def test_the_provenance_names_the_homework(self):
        assert f"- **Chapters:** the homework of `{FIXTURE_RUBRIC}`: 00_env_check, 02_naive_kernel, " \
                      f"03_shared_tiling, 06_tensor_core_wmma; left out of this report: 01_cpu_matmul, " \
                      f"05_float4_vectorized, 07_cublas_baseline, 08_end_to_end, 09_hopper_wgmma" in self.en
        assert f"- **章节:** `{FIXTURE_RUBRIC}` 规定的作业：00_env_check" in self.zh
        assert "; no rows in these results: 00_env_check" in self.en

    def test_the_plots_cover_the_homeworks_chapters(self):
        plots = recorded_plots(self.tmp, REPORT_RUBRIC=FIXTURE_RUBRIC)
        labels = calls_named(plots["ladder_4096.png"], "set_yticklabels")[0]["args"][0]
        assert {label.split()[0] for label in labels} == self.homework & self.chapters
        lines = {c["kwargs"]["label"].split()[0] for c in calls_named(plots["gflops_vs_size.png"], "plot")}
        assert lines - {"cuBLAS"} == self.homework & self.chapters
        points = {c["kwargs"]["label"].split()[0] for c in calls_named(plots["roofline.png"], "scatter")
                  if "label" in c["kwargs"]}
        assert points == self.homework & self.chapters

    def test_without_homework_every_chapter_as_before(self):
        rubric = os.path.join(self.tmp, "no_homework.json")
        with open(rubric, "w", encoding="utf-8") as f:
            f.write('{"chapters": {}}\n')
        out = os.path.join(self.tmp, "all")
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_OUT": out, "REPORT_RUBRIC": rubric,
                                              "PYTHONPATH": hide_matplotlib(os.path.join(self.tmp, "nompl"))})
        assert r.returncode == 0, r.stderr
        with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
            text = f.read()
        for heading in ("### 3.3 Registers", "### 4.3 cuBLAS itself", "### 4.8 The whole program", "### 4.9 Hopper"):
            assert heading in text
        assert "wb:only" not in text
        assert "- **Chapters:**" not in text

    def test_a_bad_rubric_is_one_line_and_exit_2(self):
        bad = os.path.join(self.tmp, "bad.json")
        cases = {"missing": (os.path.join(self.tmp, "none.json"), "does not exist"),
                 "not json": ('{"homework": [', "is not JSON"),
                 "not a list": ('{"homework": "02_naive_kernel"}', "a list of chapter folders"),
                 "no such chapter": ('{"homework": ["02_naive_kernel", "06_tensor_cores"]}', "'06_tensor_cores'")}
        for what, (content, words) in cases.items():
            path = content
            if what != "missing":
                with open(bad, "w", encoding="utf-8") as f:
                    f.write(content)
                path = bad
            out = os.path.join(self.tmp, "bad_report")
            r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_OUT": out, "REPORT_RUBRIC": path})
            assert r.returncode == 2, r.stdout + r.stderr
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert "REPORT_RUBRIC" in r.stderr
            assert words in r.stderr
            assert not os.path.exists(out)

    def test_a_report_filled_before_says_which_tables_are_not_homework(self):
        # A student's report/ filled before the homework was set keeps its sections (their text is
        # theirs); the tables of chapters outside the homework say so instead of measuring them.
        out = os.path.join(self.tmp, "earlier")
        env = {"REPORT_CSV": FIXTURE_CSV, "REPORT_OUT": out, "PYTHONPATH": hide_matplotlib(os.path.join(self.tmp, "nompl"))}
        assert run(["bash", "tools/report.sh"], env).returncode == 0
        r = run(["bash", "tools/report.sh"], dict(env, REPORT_RUBRIC=FIXTURE_RUBRIC))
        assert r.returncode == 0, r.stderr
        with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
            text = f.read()
        assert "### 4.8 The whole program" in text
        assert f"Chapter 08_end_to_end is not part of this homework (`{FIXTURE_RUBRIC}`)." in \
                      block(text, "END_TO_END_TABLE")
        assert "Chapter 09_hopper_wgmma is not part of this homework" in block(text, "HOPPER_TABLE")
        assert "Chapter 07_cublas_baseline is not part of this homework" in block(text, "CUBLAS_TABLE")


class TestWhoseNumbers:
    """The report says at its top, in bold, when its numbers are not the student's own."""

    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)
        self.out = os.path.join(self.tmp, "report")

    def fill(self, csv_path, student=None):
        env = {"REPORT_CSV": csv_path, "REPORT_OUT": self.out,
               "PYTHONPATH": hide_matplotlib(os.path.join(self.tmp, "nompl"))}
        if student is not None:
            env["STUDENT_ID"] = student
        shutil.rmtree(self.out, ignore_errors=True)
        r = run(["bash", "tools/report.sh"], env)
        assert r.returncode == 0, r.stderr
        texts = []
        for name in ("report.md", "report.zh-CN.md"):
            with open(os.path.join(self.out, name), encoding="utf-8") as f:
                texts.append(f.read())
        return r, texts

    def top(self, text):
        """The first line of the byline block: the report's first filled line."""
        return block(text, "BYLINE").split("\n")[2]

    def fixture_with_students(self, students):
        """The fixture with the student column replaced, row by row, by students(i)."""
        rows = fixture_rows()
        path = os.path.join(self.tmp, "students.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            for i, r in enumerate(rows):
                w.writerow(dict(r, student=students(i)))
        return path

    def test_the_workbooks_reference_run_is_never_a_students(self):
        reference = os.path.join("results", "h200", "bench.csv")
        if not os.path.exists(os.path.join(ROOT, reference)):
            pytest.skip("no reference run in results/h200")
        r, (en, zh) = self.fill(reference, student="42")
        assert self.top(en).startswith("**These are not your measurements: `results/h200/bench.csv` is one "
                                                "of the workbook's reference runs"), self.top(en)
        assert self.top(zh).startswith("**这些不是你测得的数据：`results/h200/bench.csv` 是本教程的参考测量之一"), \
                        self.top(zh)
        assert "reference runs" in r.stderr
        assert "- **Whose numbers:** " in en

    def test_rows_of_another_or_no_student(self):
        # The fixture's rows are all S0000001's.
        _, (en, zh) = self.fill(FIXTURE_CSV, student="S7654321")
        n = len(fixture_rows())
        assert self.top(en) == f"**None of the {n} rows of `{FIXTURE_CSV}` is marked as measured by S7654321 " \
                                       f"(their student field: S0000001): as far as the results say, these are not " \
                                       f"your own numbers. `STUDENT_ID=S7654321 make bench` measures yours.**"
        assert self.top(zh).startswith(f"**`{FIXTURE_CSV}` 的 {n} 行中没有一行标明由 S7654321 测得"), self.top(zh)
        mixed = self.fixture_with_students(lambda i: "" if i < 10 else "S0000001")
        _, (en, _) = self.fill(mixed, student="S0000001")
        assert self.top(en).startswith(f"**10 of {n} rows of `{mixed}` are not marked as measured by S0000001 "
                                                f"(their student field: empty)"), self.top(en)

    def test_the_students_own_rows_carry_no_warning(self):
        own = self.fixture_with_students(lambda i: "S7654321")
        for student in ("S7654321", None):  # STUDENT_ID, or the one id of the CSV
            _, (en, zh) = self.fill(own, student=student)
            assert self.top(en).startswith("**Student:** S7654321 · "), self.top(en)
            assert self.top(zh).startswith("**学生：** S7654321 · "), self.top(zh)
            assert f"- **Whose numbers:** all {len(fixture_rows())} rows are marked as measured by S7654321" in en


class TestRefill:
    """`make report` again must keep everything the student wrote."""

    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)
        self.out = os.path.join(self.tmp, "report")
        self.nompl = hide_matplotlib(os.path.join(self.tmp, "nompl"))

    def fill(self, csv_path=FIXTURE_CSV):
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": csv_path, "REPORT_ENV": FIXTURE_ENV,
                                              "REPORT_OUT": self.out, "PYTHONPATH": self.nompl})
        assert r.returncode == 0, r.stderr
        return r

    def read(self, name):
        with open(os.path.join(self.out, name), encoding="utf-8") as f:
            return f.read()

    def write(self, name, text):
        with open(os.path.join(self.out, name), "w", encoding="utf-8") as f:
            f.write(text)

    def other_csv(self):
        """The fixture with chapter 06's FP16 kernel made faster: new numbers in several tables."""
        path = os.path.join(self.tmp, "other.csv")
        with open(FIXTURE_CSV, encoding="utf-8") as f:
            text = f.read()
        assert ",210000.0,700000.0,30.00," in text
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(",210000.0,700000.0,30.00,", ",245000.0,700000.0,35.00,"))
        return path

    def test_a_refill_keeps_every_write_section(self):
        self.fill()
        answers = {}
        for name, word in (("report.md", "**Write:**"), ("report.zh-CN.md", "**撰写：**")):
            text = self.read(name)
            n = text.count(word)
            assert n >= 12, name  # every section of the template asks for text
            parts = text.split(word)
            for i in range(1, len(parts)):
                parts[i] = f" ANSWER-{name}-{i}: my own words, with a | pipe and {{braces}}.\n" + parts[i]
            answers[name] = word.join(parts)
            self.write(name, answers[name])
        r = self.fill(self.other_csv())
        assert "your text kept" in r.stdout
        assert r.stderr == ""
        for name in answers:
            new = self.read(name)
            for i in range(1, answers[name].count("ANSWER-") + 1):
                assert f" ANSWER-{name}-{i}: my own words, with a | pipe and {{braces}}.\n" in new
            # Every character outside the markers is as the student left it ...
            assert between_markers_removed(new) == between_markers_removed(answers[name])
            # ... and the tables follow the new results; the previous version is kept beside it.
            assert "| 06_tensor_core_wmma | `wmma_fp16_64x64` | fp16 | 245.0 | 35.0 |" in new
            assert "| 06_tensor_core_wmma | `wmma_fp16_64x64` | fp16 | 210.0 |" not in new
            assert "{{" not in new.replace("{braces}", "")
            assert self.read(name + ".bak.1") == answers[name]

    def test_a_block_edited_by_hand_is_kept_and_named(self):
        self.fill()
        text = self.read("report.md")
        mine = block(text, "LADDER_TABLE") + "\nMY READING OF THE LADDER, typed into the table's block.\n\n"
        self.write("report.md", text.replace(block(text, "LADDER_TABLE"), mine))
        for _ in range(2):  # and again: a block stays the student's until they empty it
            r = self.fill(self.other_csv())
            lines = r.stderr.strip().splitlines()
            assert lines == [f"report: {self.out}/report.md: block LADDER_TABLE was edited by hand since it was "
                             f"filled; kept as it is (delete its content to have it filled again)"], r.stderr
            new = self.read("report.md")
            assert block(new, "LADDER_TABLE") == mine
            assert "| 06_tensor_core_wmma | `wmma_fp16_64x64` | fp16 | 245.0 |" in new  # the others follow the CSV
        # Emptied, the block is filled again, from the results.
        self.write("report.md", new.replace(mine, "<!-- wb:fill LADDER_TABLE -->\n"))
        r = self.fill(self.other_csv())
        assert r.stderr == ""
        assert "MY READING" not in self.read("report.md")
        assert "| 06_tensor_core_wmma | fp16 | `wmma_fp16_64x64` | 245000.0 | 35.0 |" in \
            block(self.read("report.md"), "LADDER_TABLE")

    def test_a_report_from_before_the_record_is_refilled_as_before(self):
        self.fill()
        os.remove(os.path.join(self.out, ".report.md.filled.json"))  # as an older version left it
        text = self.read("report.md")
        self.write("report.md", text.replace(block(text, "SWEEP_TABLE"),
                                             "<!-- wb:fill SWEEP_TABLE -->\nold words\n"))
        r = self.fill()
        assert r.stderr == ""
        assert "old words" not in self.read("report.md")
        assert "old words" in self.read("report.md.bak.1")  # ... and the backup keeps them

    def test_backups_never_overwrite_each_other(self):
        self.fill()
        versions = []
        for n in (1, 2, 3):
            versions.append(self.read("report.md") + f"\nversion {n}\n")
            self.write("report.md", versions[-1])
            r = self.fill()
            assert f"report: the previous {self.out}/report.md is kept as {self.out}/report.md.bak.{n}" in r.stdout
        for n, text in enumerate(versions, 1):
            assert self.read(f"report.md.bak.{n}") == text
        assert not os.path.exists(os.path.join(self.out, "report.md.bak"))

    def test_deleted_markers_cost_one_line_and_no_text(self):
        self.fill()
        text = self.read("report.md")
        # The student deleted the end marker of the ladder and both markers of the sweep table.
        text = text.replace("<!-- wb:end LADDER_TABLE -->", "MY NOTE ON THE LADDER")
        text = text.replace("<!-- wb:fill SWEEP_TABLE -->", "").replace("<!-- wb:end SWEEP_TABLE -->", "")
        # ... and wants the ladder a second time at the end: a complete pair after the lone marker.
        text += "\n{{LADDER_TABLE}}\n"
        self.write("report.md", text)
        r = self.fill(self.other_csv())
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 2, r.stderr
        assert "wb:fill LADDER_TABLE" in lines[0]
        assert "SWEEP_TABLE" in lines[1]
        new = self.read("report.md")
        start = new.index("<!-- wb:fill LADDER_TABLE -->")
        assert new[start:new.index("MY NOTE ON THE LADDER") + 21] == \
                         text[text.index("<!-- wb:fill LADDER_TABLE -->"):text.index("MY NOTE ON THE LADDER") + 21]
        assert "| 06_tensor_core_wmma | `wmma_fp16_64x64` | fp16 | 245.0 |" in new  # the rest is refilled
        # Writing the placeholder back brings the table back, between markers.
        self.write("report.md", new.replace("MY NOTE ON THE LADDER", "MY NOTE ON THE LADDER\n\n{{SWEEP_TABLE}}"))
        r = self.fill()
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr  # only the lone LADDER marker
        final = self.read("report.md")
        assert "<!-- wb:fill SWEEP_TABLE -->" in final
        # The lone begin marker never pairs with the later end marker across the student's note.
        assert "MY NOTE ON THE LADDER" in final
        assert final.count("<!-- wb:fill LADDER_TABLE -->") == 2
        assert final.count("<!-- wb:end LADDER_TABLE -->") == 1

    def test_an_unwritable_report_folder_is_refused_before_any_work(self):
        blocker = os.path.join(self.tmp, "a_file")
        with open(blocker, "w") as f:
            f.write("not a folder\n")
        blocked = os.path.join(self.tmp, "blocked")
        os.makedirs(os.path.join(blocked, "report.zh-CN.md"))  # a folder where a file must go
        for out in (os.path.join(blocker, "report"), blocker, blocked):
            r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_OUT": out})
            assert r.returncode == 2, r.stdout + r.stderr
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert "REPORT_OUT" in r.stderr
            assert r.stdout == ""
        assert os.listdir(blocked) == ["report.zh-CN.md"]  # nothing written next to it

    def test_a_folder_even_root_cannot_write_is_refused_in_one_line(self):
        # /proc takes no new files, not even from root, whom a permission check (os.access) lets
        # through: only trying to write tells.
        if not os.path.isdir("/proc/self"):
            pytest.skip("no /proc on this system")
        for out in ("/proc/wb_report_test", "/proc/self/wb_report_test/report"):
            r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_OUT": out})
            assert r.returncode == 2, r.stdout + r.stderr
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert "REPORT_OUT" in r.stderr
            assert "Traceback" not in r.stderr
            assert r.stdout == ""


class TestReportEdgeCases:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)

    def fill_without_plots(self, csv_path=FIXTURE_CSV, env_path=FIXTURE_ENV, **extra):
        """`make report` without matplotlib; asserts it succeeded and returns (report.md, report.zh-CN.md)."""
        out = os.path.join(self.tmp, "report")
        r = run(["bash", "tools/report.sh"], dict({
            "REPORT_CSV": csv_path, "REPORT_ENV": env_path, "REPORT_OUT": out,
            "PYTHONPATH": hide_matplotlib(os.path.join(self.tmp, "nompl"))}, **extra))
        assert r.returncode == 0, r.stderr
        texts = []
        for name in ("report.md", "report.zh-CN.md"):
            with open(os.path.join(out, name), encoding="utf-8") as f:
                texts.append(f.read())
        return texts

    def test_plots_are_drawn_with_matplotlib(self):
        if not matplotlib_available():
            pytest.skip("matplotlib is not installed for python3")
        out = os.path.join(self.tmp, "report")
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_ENV": FIXTURE_ENV, "REPORT_OUT": out})
        assert r.returncode == 0, r.stderr
        for name in ("gflops_vs_size.png", "ladder_4096.png", "roofline.png"):
            path = os.path.join(out, "plots", name)
            assert os.path.exists(path), name
            with open(path, "rb") as f:
                assert f.read(8) == b"\x89PNG\r\n\x1a\n", name
            assert os.path.getsize(path) > 10000, name
            with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
                assert f"(plots/{name})" in f.read()
        with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
            assert INSTALL_LINE not in f.read()

    def test_missing_results_exit_2_and_say_what_to_run(self):
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": os.path.join(self.tmp, "nope.csv"),
                                              "REPORT_OUT": os.path.join(self.tmp, "report")})
        assert r.returncode == 2
        assert "make bench" in r.stderr

    def test_a_csv_of_another_schema_is_one_line_exit_2_and_nothing_written(self):
        path = os.path.join(self.tmp, "x.csv")
        with open(path, "w", encoding="utf-8") as f:
            f.write("name,ms,gflops\nmine,1.0,2.0\n")
        out = os.path.join(self.tmp, "report")
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": path, "REPORT_OUT": out})
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1, r.stderr
        assert f"{path} is not a workbook results CSV: missing columns chapter, variant, dtype, M, N, K, " in lines[0]
        assert ", gflops," not in lines[0] and lines[0].endswith("; make bench writes one")
        assert "Traceback" not in r.stderr and r.stdout == ""
        assert not os.path.exists(out)

    def test_an_older_csv_without_the_student_column_is_read(self):
        rows = fixture_rows()
        path = os.path.join(self.tmp, "old.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            columns = [c for c in rows[0] if c != "student"]
            w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
            w.writeheader()
            w.writerows(rows)
        en, _ = self.fill_without_plots(csv_path=path)
        assert "| 03_shared_tiling | fp32 | `tiled_32_4rows` |" in en

    def test_energy_table_from_the_gflops_per_j_column(self):
        # The fixture has no energy column: both reports say so instead of a table.
        en, zh = self.fill_without_plots()
        assert "No energy figures in these results" in block(en, "ENERGY_TABLE")
        assert "没有能耗数据" in block(zh, "ENERGY_TABLE")
        # With the column: the ladder's best rows and cuBLAS get GFLOP/J and mJ per call.
        rows = fixture_rows()
        shape = (4096, 4096, 4096)
        best = best_at(rows, "03_shared_tiling", "fp32", shape)
        for r in rows:
            r["gflops_per_j"] = ""
            if r is best:
                r["gflops_per_j"] = "40.0"
            elif r["chapter"] == "07_cublas_baseline" and r["variant"] == "cublas_sgemm" and \
                    (int(r["M"]), int(r["N"]), int(r["K"])) == shape:
                r["gflops_per_j"] = "100.0"
        path = os.path.join(self.tmp, "energy.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        en, zh = self.fill_without_plots(csv_path=path)
        table = block(en, "ENERGY_TABLE")
        mj = 2.0 * 4096 ** 3 / 1e9 / 40.0 * 1e3  # FLOP / (GFLOP/J) in millijoules
        assert f"| 03_shared_tiling (fp32) | `{best['variant']}` |" in table
        assert f"| 40.0 | {mj:.2f} |" in table
        assert "| cuBLAS (fp32) | `cublas_sgemm` |" in table
        assert "| 100.0 |" in table
        assert "GFLOP/J" in block(zh, "ENERGY_TABLE")

    def test_without_device_facts_the_tables_still_fill(self):
        text, _ = self.fill_without_plots(env_path=os.path.join(self.tmp, "none.json"))
        assert "Device facts not found" in text
        assert "| GPU | Fixture GPU (invented numbers) |" in text
        # The FP32 peak comes back from the CSV's own % of peak column: 60000 GFLOP/s.
        assert "FP32 60000 GFLOP/s (theoretical peak)" in text
        assert "| FP32 peak (theory), from the CSV's % of peak | 60000 GFLOP/s |" in text
        assert "memory bandwidth unknown" in text
        assert "{{" not in text

    def test_another_ladder_shape(self):
        text, _ = self.fill_without_plots(REPORT_SHAPE="1024")
        assert "Best variant of each chapter's own kernels at 1024x1024x1024 (" in text
        assert "| 02_naive_kernel | fp32 | `coalesced_32x8` | 2900.0 | 7.6 |" in block(text, "LADDER_TABLE")
        assert "| 01_cpu_matmul | `blocked_omp_8t` | fp32 | 2.261 | 950.0 |" in block(text, "VARIANT_TABLE")
        # Chapter 09 ran at other shapes only: the section says where.
        assert "Chapter 09 has no rows at 1024x1024x1024 in these results (it ran at 4096, 8192)" in text

    def test_a_shape_not_in_the_results_is_refused_in_one_line(self):
        out = os.path.join(self.tmp, "report")
        for shape in ("777", "4096x4096x1024"):
            r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_OUT": out, "REPORT_SHAPE": shape})
            assert r.returncode == 2, r.stdout + r.stderr
            assert r.stdout == ""
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1, r.stderr
            assert "REPORT_SHAPE" in lines[0]
            assert ("777x777x777" if shape == "777" else shape) in lines[0]
            assert "128, 256, 1024, 4096, 8192, 1000x1013x4097" in lines[0]  # what there is
            assert not os.path.exists(out)  # refused before any work

    def without_4096(self):
        path = os.path.join(self.tmp, "no4096.csv")
        with open(FIXTURE_CSV, encoding="utf-8") as f:
            kept = [line for line in f if ",4096,4096,4096," not in line]
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(kept)
        return path

    def test_without_the_default_shape_the_report_says_which_it_used(self):
        # A laptop's bench may skip 4096 (a display watchdog): with REPORT_SHAPE unset the report
        # uses the largest cube measured, and says so in bold where the ladder begins.
        out = os.path.join(self.tmp, "report")
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": self.without_4096(), "REPORT_ENV": FIXTURE_ENV,
                                              "REPORT_OUT": out, "PYTHONPATH": hide_matplotlib(os.path.join(self.tmp, "nompl"))})
        assert r.returncode == 0, r.stderr
        assert "4096x4096x4096" in r.stderr
        assert "8192x8192x8192" in r.stderr
        for name, words in (("report.md", "**No chapter ran 4096x4096x4096 (the default shape): the ladder, the "
                                          "roofline and the tables at one shape are at 8192x8192x8192"),
                            ("report.zh-CN.md", "**没有任何章节运行过 4096x4096x4096（默认形状）")):
            with open(os.path.join(out, name), encoding="utf-8") as f:
                text = f.read()
            assert words in text
            ladder = text[text.index("<!-- wb:fill LADDER_TABLE -->"):]
            assert ladder.split("\n")[2].startswith("**"), ladder[:300]  # the block's first line
        # Named explicitly, a shape that is not there is refused instead.
        r = run(["bash", "tools/report.sh"], {"REPORT_CSV": self.without_4096(), "REPORT_OUT": out,
                                              "REPORT_SHAPE": "4096"})
        assert r.returncode == 2, r.stderr

    def test_the_ladder_plot_is_named_after_its_shape(self):
        out = os.path.join(self.tmp, "report")
        for shape, name in (("4096", "ladder_4096.png"), ("1024", "ladder_1024.png"),
                            ("1000x1013x4097", "ladder_1000x1013x4097.png")):
            r = run(["bash", "tools/report.sh"], {"REPORT_CSV": FIXTURE_CSV, "REPORT_ENV": FIXTURE_ENV,
                                                  "REPORT_OUT": out, "REPORT_SHAPE": shape,
                                                  "PYTHONPATH": recording_matplotlib(os.path.join(self.tmp, "fakempl")),
                                                  "WB_PLOT_LOG": os.path.join(self.tmp, "plots.jsonl")})
            assert r.returncode == 0, r.stderr
            ladders = sorted(n for n in os.listdir(os.path.join(out, "plots")) if n.startswith("ladder"))
            assert ladders == [name]  # the plot of the shape before is gone
            with open(os.path.join(out, "report.md"), encoding="utf-8") as f:
                assert f"(plots/{name})" in f.read()

    def test_a_tensor_core_error_above_u_is_named_and_explained(self):
        # As on the H200: chapter 09's TF32 step, whose tensor cores read FP32 data as TF32, is off
        # by 8.03e-04 against the reference from inputs rounded to nearest: above u = 4.88e-04.
        path = os.path.join(self.tmp, "tf32.csv")
        with open(FIXTURE_CSV, encoding="utf-8") as f:
            text = f.read()
        row = [line for line in text.splitlines() if line.startswith("09_hopper_wgmma,tf32_persistent,tf32,4096,")]
        assert len(row) == 1
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(row[0], row[0].replace(",2.300e-07,", ",8.030e-04,")))
        en, zh = self.fill_without_plots(csv_path=path)
        prec = block(en, "PRECISION_TABLE")
        assert "| 8.03e-04 |" in prec
        line = next(l for l in prec.splitlines() if l.startswith("- **tf32**"))
        assert "largest 8.03e-04 = 1.6 u, above u (`tf32_persistent` of 09_hopper_wgmma)" in line
        assert "truncat" in line
        assert "below u" not in line
        assert "FP32 accumulation only" not in prec  # what the note said before, next to 8.03e-04
        line = next(l for l in block(zh, "PRECISION_TABLE").splitlines() if l.startswith("- **tf32**"))
        assert "最大 8.03e-04 = 1.6 u，高于 u（09_hopper_wgmma 的 `tf32_persistent`）" in line

    def test_without_chapter_09_its_section_says_why(self):
        # A bench on a GPU that is not compute capability 9.0 has no chapter 09 rows.
        path = os.path.join(self.tmp, "no09.csv")
        with open(FIXTURE_CSV, encoding="utf-8") as f:
            kept = [line for line in f if not line.startswith("09_hopper_wgmma,")]
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(kept)
        text, zh = self.fill_without_plots(csv_path=path)
        assert "Chapter 09 is not in these results. It runs only on compute capability 9.0" in text
        assert "{{" not in text
        assert "结果中没有第 09 章。它只在计算能力 9.0 的 GPU" in zh


class TestPlots:
    """What each plot shows, read from the calls the report makes (a stand-in for matplotlib)."""

    @classmethod
    def setup_class(cls):
        cls.tmp = tempfile.mkdtemp(prefix="wb-plots-")
        cls.plots = recorded_plots(cls.tmp)

    @classmethod
    def teardown_class(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_every_line_against_size_has_its_own_colour_and_marker(self):
        # Chapter 09's FP16 and BF16 lines shared their chapter's colour, and a dozen lines shared one
        # panel. Now one panel per precision family, and inside a panel no two lines share a colour
        # or a marker.
        panels = defaultdict(list)
        for c in calls_named(self.plots["gflops_vs_size.png"], "plot"):
            kw = c["kwargs"]
            panels[c["ax"]].append((kw["label"], kw.get("color"), kw.get("marker")))
        labels = {s[0] for lines in panels.values() for s in lines}
        assert {"cuBLAS FP32 (cublas_sgemm)", "cuBLAS BF16 (cublas_bgemm)",
                "09_hopper_wgmma (fp16)", "09_hopper_wgmma (bf16)"} <= labels, labels
        for lines in panels.values():
            for label, colour, marker in lines:
                assert colour and marker, label  # a marker on every line: dashes alone are not enough
            assert len({colour for _, colour, _ in lines}) == len(lines), lines
            assert len({marker for _, _, marker in lines}) == len(lines), lines
        by_label = {s[0]: ax for ax, lines in panels.items() for s in lines}
        assert by_label["09_hopper_wgmma (fp16)"] == by_label["09_hopper_wgmma (bf16)"] == \
            by_label["cuBLAS BF16 (cublas_bgemm)"]
        assert by_label["cuBLAS FP32 (cublas_sgemm)"] != by_label["09_hopper_wgmma (fp16)"]

    def test_one_panel_per_precision_family_with_its_legend(self):
        calls = self.plots["gflops_vs_size.png"]
        families = {r["dtype"] for r in fixture_rows()}
        assert "fp8_e4m3" not in families  # the fixture measures no FP8: no FP8 panel
        titles = [c["args"][0] for c in calls_named(calls, "set_title")]
        assert titles == ["FP32", "TF32", "FP16 and BF16"]
        assert sorted(c["ax"] for c in calls_named(calls, "legend")) == [0, 1, 2]
        for c in calls_named(calls, "plot"):
            dtype = c["kwargs"]["label"].split("(")[-1].rstrip(")")
            panel = {"fp32": 0, "tf32": 1, "fp16": 2, "bf16": 2, "cublas_sgemm": 0, "cublas_tf32": 1,
                     "cublas_hgemm": 2, "cublas_bgemm": 2}[dtype]
            assert c["ax"] == panel, c["kwargs"]["label"]

    def test_the_memory_roof_ends_at_the_ridge(self):
        # Past the ridge point the memory line would run through the compute ceilings: it stops on
        # the highest of them (FP8 tensor cores on this compute capability 9.0: twice FP16's
        # 960000 GFLOP/s; 4100 GB/s measured).
        lines = [c for c in calls_named(self.plots["roofline.png"], "plot")
                 if c["kwargs"].get("label", "").startswith("memory")]
        assert len(lines) == 1
        xs, ys = lines[0]["args"][:2]
        ridge = 2 * 960000 / 4100
        assert xs[-1] == pytest.approx(ridge, abs=1e-6)
        assert ys[-1] == pytest.approx(2 * 960000, abs=1e-3)
        assert max(ys) <= 2 * 960000 * (1 + 1e-12)
        assert xs[0] < 55000 / 4100  # and it starts left of the lowest ridge (FP32)

    def test_energy_plot_only_with_energy_figures(self):
        assert "energy_4096.png" not in self.plots  # the fixture has no GFLOP/J column
        rows = fixture_rows()
        best = best_at(rows, "03_shared_tiling", "fp32", (4096, 4096, 4096))
        for r in rows:
            r["gflops_per_j"] = "40.0" if r is best else ""
        path = os.path.join(self.tmp, "energy.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        plots = recorded_plots(os.path.join(self.tmp, "energy"), REPORT_CSV=path)
        bars = calls_named(plots["energy_4096.png"], "barh")
        assert len(bars) == 1 and list(bars[0]["args"][1]) == [40.0]
        labels = calls_named(plots["energy_4096.png"], "set_yticklabels")[0]["args"][0]
        assert labels == ["03_shared_tiling (fp32)"]

    def test_the_ladder_figure_is_the_chapters_own_kernels(self):
        calls = self.plots["ladder_4096.png"]
        labels = calls_named(calls, "set_yticklabels")[0]["args"][0]
        shown = {label.split()[0] for label in labels}
        chapters = {r["chapter"] for r in fixture_rows()}
        assert shown == chapters & LADDER_CHAPTERS


H200_CSV = os.path.join(ROOT, "results", "h200", "bench.csv")
H200_ENV = os.path.join(ROOT, "results", "h200", "env.json")


@functools.lru_cache(maxsize=None)
def drawn_figures(csv_path=FIXTURE_CSV, env_path=FIXTURE_ENV):
    """The plots of `make report` drawn by matplotlib itself: ({file name: its Figure}, kept as
    each was saved, to read its axes, lines and limits; the Results they were drawn from)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    saved, savefig = {}, Figure.savefig

    def keep(fig, path, *args, **kwargs):
        saved[os.path.basename(path)] = fig
        return savefig(fig, path, *args, **kwargs)

    res = wb_report.Results(csv_path, env_path, (4096, 4096, 4096), False)
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as tmp:
        patch.setattr(Figure, "savefig", keep)
        wb_report.make_plots(res, os.path.join(tmp, "plots"))
    for fig in saved.values():
        FigureCanvasAgg(fig).draw()  # closed by the report: a canvas again, to measure what it drew
    return saved, res


class TestPlotsDrawn:
    """The plots as matplotlib draws them: panels, legends, roofs, limits."""

    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)

    def test_one_panel_per_precision_family_each_line_its_own_colour_and_marker(self):
        figs, _ = drawn_figures(H200_CSV, H200_ENV)
        fig = figs["gflops_vs_size.png"]
        assert [ax.get_title() for ax in fig.axes] == ["FP32", "TF32", "FP16 and BF16", "FP8"]
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            lines = [line for line in ax.get_lines() if line.get_marker() not in (None, "None", "")]
            assert 1 < len(lines) <= 8, ax.get_title()
            assert len({line.get_color() for line in lines}) == len(lines), ax.get_title()
            assert len({line.get_marker() for line in lines}) == len(lines), ax.get_title()
            # The legend names every line and fits on the figure, beside its panel.
            legend = ax.get_legend()
            labels = [text.get_text() for text in legend.get_texts()]
            assert {line.get_label() for line in lines} <= set(labels)
            box = legend.get_window_extent(renderer)
            assert box.x0 >= ax.get_window_extent(renderer).x1 and box.x1 <= fig.bbox.x1 + 1
        fp16 = {line.get_label() for line in fig.axes[2].get_lines()}
        assert {"09_hopper_wgmma (fp16)", "09_hopper_wgmma (bf16)", "cuBLAS BF16 (cublas_bgemm)"} <= fp16

    def test_only_the_families_measured_get_a_panel(self):
        figs, _ = drawn_figures()  # the fixture measures no FP8
        assert [ax.get_title() for ax in figs["gflops_vs_size.png"].axes] == ["FP32", "TF32", "FP16 and BF16"]

    def test_the_roofline_has_an_fp8_roof_and_the_fp8_points(self):
        figs, res = drawn_figures(H200_CSV, H200_ENV)
        ax = figs["roofline.png"].axes[0]
        import json
        with open(H200_ENV, encoding="utf-8") as f:
            fp8 = 2 * json.load(f)["gpus"][0]["peak_fp16_tc_gflops"]
        roofs = [line for line in ax.get_lines() if line.get_label().startswith("FP8 tensor cores")]
        assert len(roofs) == 1 and max(roofs[0].get_ydata()) == pytest.approx(fp8)
        fp16 = next(line for line in ax.get_lines() if line.get_label().startswith("FP16 and BF16"))
        assert max(fp16.get_ydata()) == pytest.approx(fp8 / 2)
        points = {(round(x, 6), round(y, 6)) for c in ax.collections for x, y in c.get_offsets()}
        measured = [r for r in res.rows if r["dtype"] == "fp8_e4m3" and wb_report.in_ladder(r["chapter"])
                    and r["variant"] not in wb_report.bs.GPU_BASELINES and float(r["gflops"] or 0) > 0]
        assert measured
        for r in measured:
            assert (round(wb_report.intensity(r), 6), round(float(r["gflops"]), 6)) in points, r["variant"]
        assert any(c.get_label() == f'09_hopper_wgmma {res.best[("09_hopper_wgmma", "fp8_e4m3")][(4096,) * 3]["variant"]} '
                   f'(fp8_e4m3)' for c in ax.collections)

    def test_no_fp8_roof_below_compute_capability_8_9(self):
        import json
        with open(FIXTURE_ENV, encoding="utf-8") as f:
            env = json.load(f)
        env["gpus"][0]["cc"] = "8.0"
        path = os.path.join(self.tmp, "a100.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(env, f)
        rows = [dict(r, cc="8.0") for r in fixture_rows()]
        csv_path = os.path.join(self.tmp, "a100.csv")
        with open(csv_path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        figs, res = drawn_figures(csv_path, path)
        assert res.ceilings["fp8_e4m3"] is None
        assert not [line for line in figs["roofline.png"].axes[0].get_lines() if "FP8" in line.get_label()]
        fixture = wb_report.Results(FIXTURE_CSV, FIXTURE_ENV, (4096, 4096, 4096), False)
        assert fixture.ceilings["fp8_e4m3"] == (2 * 960000, "theory")  # compute capability 9.0

    def test_the_ladder_ranks_by_percent_of_cublas_and_its_axis_fits_the_data(self):
        # Chapter 03's tiled_32 made faster in GFLOP/s than tiled_32_4rows but lower against cuBLAS,
        # and transposed_b_32 higher against cuBLAS but slower: the bar is transposed_b_32's %.
        rows = fixture_rows()
        for r in rows:
            if r["chapter"] == "03_shared_tiling" and r["M"] == r["N"] == r["K"] == "4096":
                if r["variant"] == "tiled_32":
                    r.update(gflops="12000.0", pct_cublas="21.00")
                if r["variant"] == "transposed_b_32":
                    r.update(gflops="10000.0", pct_cublas="23.00")
        path = os.path.join(self.tmp, "ranked.csv")
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
        figs, res = drawn_figures(path)
        fig = figs["ladder_4096.png"]
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert "03_shared_tiling (fp32): transposed_b_32" in labels
        widths = {label: bar.get_width() for label, bar in zip(labels, ax.patches)}
        assert widths["03_shared_tiling (fp32): transposed_b_32"] == pytest.approx(23.0)
        largest = max(widths.values())
        assert max(largest, 100) < ax.get_xlim()[1] <= 1.2 * max(largest, 100)  # not 140 %
        cublas = [line for line in ax.get_lines() if list(line.get_xdata()) == [100, 100]]
        assert len(cublas) == 1 and "cuBLAS" in cublas[0].get_label()


class TestBenchTools:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.tmp = str(tmp_path)

    def test_an_unwritable_results_folder_stops_bench_before_any_work(self):
        blocker = os.path.join(self.tmp, "a_file")
        with open(blocker, "w") as f:
            f.write("not a folder\n")
        for bad in (os.path.join(blocker, "results"), blocker):
            r = run(["bash", "tools/bench.sh"], {"BENCH_OUT": bad})
            assert r.returncode == 2, r.stdout + r.stderr
            assert r.stdout == ""  # not even the device facts were measured
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr
            assert bad in r.stderr

    def test_summary_names_the_best_variants_and_the_failures(self):
        r = run(["python3", "-m", "wb", "bench-summary", FIXTURE_CSV])
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        row = next(line for line in lines if line.startswith("03_shared_tiling"))
        assert row.split()[2:] == ["-", "-", "-", "22.1%", "-", "23.7%"]  # 128 ... 8192, odd
        assert "  03_shared_tiling fp32: tiled_32_4rows (all shapes)" in lines
        assert "  03_shared_tiling transposed_b_32 (fp32) 1000x1013x4097" in lines

    def test_summary_gives_chapter_01_as_percent_of_openblas_like_its_csv_rows(self):
        # Chapter 01 runs on the CPU; its CSV rows (pct_cublas) are % of OpenBLAS on as many threads,
        # and the summary prints that number, said so on the row, not a % of the GPU's cuBLAS.
        r = run(["python3", "-m", "wb", "bench-summary", FIXTURE_CSV])
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        row01 = next(line for line in lines if line.startswith("01_cpu_matmul"))
        want = [f'{float(best_at(fixture_rows(), "01_cpu_matmul", "fp32", (s, s, s))["pct_cublas"]):.1f}%'
                for s in (256, 1024)]
        assert want == ["77.8%", "86.4%"]
        cells = row01.split()[2:]
        assert [c for c in cells if c.endswith("%")] == want
        assert row01.endswith("(of OpenBLAS)"), row01
        assert "2.5%" not in row01  # 950 GFLOP/s against cuBLAS SGEMM's 38000 on the GPU
        assert any("chapter 01" in line and "OpenBLAS" in line for line in lines[:4]), lines[:4]

    def test_summary_treats_bf16_like_fp16(self):
        r = run(["python3", "-m", "wb", "bench-summary", FIXTURE_CSV])
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        rows09 = [line.split()[:2] for line in lines if line.startswith("09_hopper_wgmma")]
        assert rows09 == [["09_hopper_wgmma", "tf32"], ["09_hopper_wgmma", "fp16"], ["09_hopper_wgmma", "bf16"]]
        bf16 = next(line for line in lines if line.startswith("09_hopper_wgmma") and line.split()[1] == "bf16")
        assert bf16.split()[2:] == ["-", "-", "-", "102.0%", "-", "-"]  # 128 ... 8192, odd
        assert "  09_hopper_wgmma bf16: persistent (all shapes)" in lines
        assert "  09_hopper_wgmma fp16: persistent (all shapes)" in lines
        assert "  09_hopper_wgmma cluster_multicast (bf16) 4096" in lines
        assert not [line for line in lines if "cublas_bgemm" in line]  # a baseline, never "best"

    def test_dry_run_respects_the_display_watchdog(self):
        with open(FIXTURE_ENV, encoding="utf-8") as f:
            text = f.read()
        laptop = os.path.join(self.tmp, "laptop.json")
        with open(laptop, "w", encoding="utf-8") as f:
            f.write(text.replace('"kernel_timeout": false', '"kernel_timeout": true')
                    .replace('"peak_fp32_gflops": 60000', '"peak_fp32_gflops": 9000'))
        big = run(["bash", "tools/bench.sh", "--dry-run"], {"BENCH_ENV": FIXTURE_ENV, "BENCH_OUT": self.tmp})
        small = run(["bash", "tools/bench.sh", "--dry-run"], {"BENCH_ENV": laptop, "BENCH_OUT": self.tmp})
        assert big.returncode == 0, big.stderr
        assert small.returncode == 0, small.stderr
        assert re.search(r"02_naive_kernel +4096 ", big.stdout)
        assert not re.search(r"\] 02_naive_kernel +4096 ", small.stdout)
        assert "02_naive_kernel 4096 skipped" in small.stdout
        assert "kernel time limit" in small.stdout

    def test_bench_chapters_picks_the_chapters(self):
        only = run(["bash", "tools/bench.sh", "--dry-run"],
                   {"BENCH_ENV": FIXTURE_ENV, "BENCH_OUT": self.tmp, "BENCH_CHAPTERS": "03 05"})
        assert only.returncode == 0, only.stderr
        planned = {m.group(1) for m in re.finditer(r"\] (\d\d)_\w+ ", only.stdout)}
        assert planned == {"03", "05"}, only.stdout
        wrong = run(["bash", "tools/bench.sh", "--dry-run"],
                    {"BENCH_ENV": FIXTURE_ENV, "BENCH_OUT": self.tmp, "BENCH_CHAPTERS": "03 3"})
        assert wrong.returncode == 2
        assert wrong.stderr.strip() == ("bench: BENCH_CHAPTERS: '3' is not a benched chapter "
                                        "(choose among 01 02 03 04 05 06 07 08 09)")

    def test_dry_run_leaves_out_chapter_09_on_another_gpu(self):
        with open(FIXTURE_ENV, encoding="utf-8") as f:
            text = f.read()
        assert '"cc": "9.0"' in text
        ampere = os.path.join(self.tmp, "ampere.json")
        with open(ampere, "w", encoding="utf-8") as f:
            f.write(text.replace('"cc": "9.0"', '"cc": "8.6"'))
        hopper = run(["bash", "tools/bench.sh", "--dry-run"], {"BENCH_ENV": FIXTURE_ENV, "BENCH_OUT": self.tmp})
        other = run(["bash", "tools/bench.sh", "--dry-run"], {"BENCH_ENV": ampere, "BENCH_OUT": self.tmp})
        assert hopper.returncode == 0, hopper.stderr
        assert other.returncode == 0, other.stderr
        assert re.search(r"\] 09_hopper_wgmma +4096 ", hopper.stdout)
        assert "left out" not in hopper.stdout
        assert "] 09_hopper_wgmma" not in other.stdout
        why = [line for line in other.stdout.splitlines() if "09_hopper_wgmma" in line]
        assert why == ["bench: 09_hopper_wgmma left out: it runs only on compute capability 9.0 "
                               "(H100, H200, GH200), this GPU is 8.6"]
        assert re.search(r"\] 08_end_to_end +4096 ", other.stdout)  # every other chapter is still planned

    def fake_tree(self, chapters, env_text, fixture=FIXTURE_CSV):
        """A copy of the workbook's layout with stand-ins for the programs: they append the
        fixture's rows of their chapter and shape, and fail when one of those rows failed;
        00_env_check writes env_text as env.json. Every call is logged in calls.txt."""
        work = os.path.join(self.tmp, "wb")
        os.makedirs(os.path.join(work, "tools"))
        for name in ("bench.sh", "gpu_needs.sh"):
            shutil.copy(os.path.join(TOOLS, name), os.path.join(work, "tools", name))
        shutil.copytree(os.path.join(TOOLS, "wb"), os.path.join(work, "tools", "wb"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        header = ",".join(fixture_rows()[0].keys())
        calls = os.path.join(self.tmp, "calls.txt")
        program = f'''#!/usr/bin/env python3
import csv, os, sys
args = sys.argv[1:]
chapter = os.path.basename(sys.argv[0])
with open({calls!r}, "a") as f:
    f.write(chapter + " " + " ".join(args) + "\\n")
if "--json" in args:
    with open(args[args.index("--json") + 1], "w") as f:
        f.write({env_text!r})
    sys.exit(0)
size, out = args[args.index("--size") + 1], args[args.index("--csv") + 1]
shape = size.split("x") if "x" in size else [size] * 3
with open({fixture!r}, newline="") as f:
    rows = [r for r in csv.DictReader(f) if r["chapter"] == chapter and [r["M"], r["N"], r["K"]] == shape]
new = not os.path.exists(out) or os.path.getsize(out) == 0
with open(out, "a", newline="") as f:
    w = csv.DictWriter(f, fieldnames={header!r}.split(","), lineterminator="\\n")
    if new:
        w.writeheader()
    w.writerows(rows)
print(chapter, " ".join(args), len(rows), "rows")
sys.exit(1 if any(r["status"] == "FAIL" for r in rows) else 0)
'''
        for chapter, text in chapters.items():
            os.makedirs(os.path.join(work, chapter))
            path = os.path.join(work, chapter, chapter)
            with open(path, "w") as f:
                f.write(text or program)
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
        return work, calls

    def test_chapter_09_on_another_gpu_never_stops_the_run(self):
        # The stand-in of 09 does what the real program does on a GPU that is not 9.0: exit 3.
        not_hopper = ('#!/bin/sh\necho "09_hopper_wgmma $*" >>"$CALLS"\n'
                      'echo "09_hopper_wgmma: error: this chapter needs a Hopper GPU" >&2\nexit 3\n')
        with open(FIXTURE_ENV, encoding="utf-8") as f:
            ampere = f.read().replace('"cc": "9.0"', '"cc": "8.6"')
        fake = os.path.join(self.tmp, "fakebin")
        os.makedirs(fake)
        with open(os.path.join(fake, "nvidia-smi"), "w") as f:  # knows no compute capability either
            f.write("#!/bin/sh\nexit 9\n")
        os.chmod(os.path.join(fake, "nvidia-smi"), 0o755)
        path = fake + os.pathsep + os.environ["PATH"]
        for env_text, known in ((ampere, True), ("{}", False)):
            shutil.rmtree(os.path.join(self.tmp, "wb"), ignore_errors=True)
            work, calls = self.fake_tree({"00_env_check": None, "07_cublas_baseline": None,
                                          "09_hopper_wgmma": not_hopper}, env_text)
            open(calls, "w").close()
            r = run(["bash", "tools/bench.sh"], {"PATH": path, "CALLS": calls}, cwd=work)
            out = r.stdout
            assert r.returncode == 0, out + r.stderr  # nothing failed: 09 cannot run here
            assert "Best variant of each chapter" in out  # the run went on to its summary
            with open(calls) as f:
                ran09 = [c for c in f.read().splitlines() if c.startswith("09_hopper_wgmma")]
            with open(os.path.join(work, "results", "bench_commands.tsv")) as f:
                commands = [c.split("\t")[0] for c in f.read().splitlines()]
            if known:  # left out of the plan, never started
                assert "bench: 09_hopper_wgmma left out: it runs only on compute capability 9.0 " \
                              "(H100, H200, GH200), this GPU is 8.6" in out
                assert ran09 == []
                assert commands == ["07_cublas_baseline"]
                assert "[9/9] 07_cublas_baseline" in out
            else:  # unknown: tried once, then skipped shape by shape
                assert len(ran09) == 1, ran09
                assert "not run: it runs only on compute capability 9.0 (H100, H200, GH200)" in out
                assert out.count("skipped: needs compute capability 9.0") == 4
                assert "no usable GPU" not in out

    def test_bench_runs_every_planned_shape_with_fake_programs(self):
        with open(FIXTURE_ENV, encoding="utf-8") as f:
            env_text = f.read()
        work, _ = self.fake_tree({c: None for c in ("00_env_check", "01_cpu_matmul", "03_shared_tiling",
                                                    "07_cublas_baseline")}, env_text)
        os.makedirs(os.path.join(work, "05_float4_vectorized"))  # a chapter that is not built
        r = run(["bash", "tools/bench.sh"], cwd=work)
        out = r.stdout
        assert r.returncode == 1, out + r.stderr  # 03's odd shape has a failed check
        assert "05_float4_vectorized is not built (make 05), skipped" in out
        assert "chapter 02 does not exist yet, skipped" in out
        runs = 3 + 4 + 9  # 01, 03, 07 (SHAPES in bench.sh)
        assert f"[ 1/{runs}] 01_cpu_matmul" in out
        assert f"[{runs}/{runs}] 07_cublas_baseline" in out
        assert "(0 left" in out
        assert "FAILED (exit status 1)" in out
        assert "best tiled_32_4rows 11200 GFLOP/s = 22.1% of the baseline" in out
        with open(os.path.join(work, "results", "bench_commands.tsv")) as f:
            commands = f.read().splitlines()
        assert [c.split("\t")[0] for c in commands] == ["01_cpu_matmul", "03_shared_tiling", "07_cublas_baseline"]
        assert "./07_cublas_baseline/07_cublas_baseline --sizes 128,256,512,1024,2048,4096,8192," \
                      "4096x4096x1024,1000x1013x4097 --no-costs --energy --csv results/bench.csv" in commands[2]
        # The A/A check over 07's calls that are the baseline's own (the fixture's read 99.8-100.2%).
        assert "bench: A/A check: the 6 rows of cuBLAS timed against itself (1024^3 and up) read 100% +- 3%" in out
        with open(os.path.join(work, "results", "bench.csv"), newline="") as f:
            got = list(csv.DictReader(f))
        want = [r for r in fixture_rows() if r["chapter"] in ("01_cpu_matmul", "03_shared_tiling", "07_cublas_baseline")]
        assert len(got) == len(want)
        assert "Best variant of each chapter" in out  # the summary closes the run
        assert os.path.exists(os.path.join(work, "results", "env.json"))

    def test_bench_aa_check_names_the_noisy_rows(self):
        # The same run with one of 07's A/A rows 5% off: the run says so, and names the row.
        with open(FIXTURE_ENV, encoding="utf-8") as f:
            env_text = f.read()
        with open(FIXTURE_CSV, encoding="utf-8") as f:
            text = f.read()
        line = next(l for l in text.splitlines() if l.startswith("07_cublas_baseline,gemmex_fp16,fp16,4096,4096,4096,"))
        fields = line.split(",")
        fields[12] = "94.90"
        fixture = os.path.join(self.tmp, "noisy_fixture.csv")
        with open(fixture, "w", encoding="utf-8") as f:
            f.write(text.replace(line, ",".join(fields)))
        work, _ = self.fake_tree({c: None for c in ("00_env_check", "07_cublas_baseline")}, env_text, fixture)
        out = run(["bash", "tools/bench.sh"], cwd=work).stdout
        assert "bench: A/A check: TOO NOISY, 1 of 6 rows of cuBLAS timed against itself are more than 3% from 100%:" in out
        assert "gemmex_fp16 4096x4096x4096: 94.9% of cuBLAS" in out


def test_the_roofline_spreads_the_points_that_share_an_x():
    from wb import report as rp
    xs = rp.dodged([10.0, 10.0, 10.0, 20.0])
    assert xs[3] == 20.0  # alone at its x: where it is
    assert xs[1] == 10.0 and xs[0] < 10.0 < xs[2]  # three at one x: spread around it, in order
    assert abs(xs[0] * xs[2] - 100.0) < 1e-9  # symmetric on a log axis


def test_a_size_line_breaks_where_its_series_was_not_run():
    import math
    from wb import report as rp
    xs, ys = rp.gapped([1024, 4096, 8192], [1.0, 4.0, 8.0], {1024, 2048, 4096, 8192, 256})
    assert xs == [1024, 2048, 4096, 8192]  # nothing outside the series' own range
    assert ys[0] == 1.0 and math.isnan(ys[1]) and ys[2:] == [4.0, 8.0]
