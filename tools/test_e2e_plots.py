"""Tests of `python3 -m wb e2e` (tools/wb/e2e.py): the crossover rule, the tables drawn from chapter
08's CSV files, the filling of the notes between their markers, and the pictures (skipped without
matplotlib)."""
import os

import pytest

from wb import cli
from wb import e2e as e2e_plots


def e2e_main(*args):
    """The exit status of `python3 -m wb e2e ARGS...`, run in this process."""
    try:
        return cli.main(["e2e", *args])
    except SystemExit as e:  # argparse's bad usage
        return e.code

CROSSOVER = """size,shape,path,kind,total_ms,min_ms,h2d_ms,kernel_ms,d2h_ms,overhead_ms,reps,status,rel_err
32,32x32x32,gpu_cublas_pinned,gpu,0.050000,0.049000,0.010000,0.008000,0.007000,0.025000,10,PASS,1.0e-07
32,32x32x32,gpu_cublas_pageable,gpu,0.001000,0.001000,0.010000,0.008000,0.007000,0.025000,10,PASS,1.0e-07
32,32x32x32,cpu_naive_1t,cpu,0.030000,0.030000,-1,-1,-1,-1,10,PASS,1.0e-07
32,32x32x32,cpu_blocked_omp_16t,cpu,0.020000,0.020000,-1,-1,-1,-1,10,PASS,1.0e-07
1024,1024x1024x1024,gpu_cublas_pinned,gpu,0.900000,0.800000,0.300000,0.200000,0.300000,0.100000,10,PASS,1.0e-07
1024,1024x1024x1024,cpu_naive_1t,cpu,-1,-1,-1,-1,-1,-1,0,skipped (expected 3.0 s; limit 2.0 s),
1024,1024x1024x1024,cpu_blocked_omp_16t,cpu,5.000000,4.900000,-1,-1,-1,-1,10,PASS,1.0e-07
4096,4096x4096x4096,gpu_cublas_pinned,gpu,9.000000,8.000000,3.000000,3.000000,2.500000,0.500000,3,PASS,1.0e-07
4096,4096x4096x4096,cpu_naive_1t,cpu,-1,-1,-1,-1,-1,-1,0,skipped (expected 190 s; limit 2.0 s),
4096,4096x4096x4096,cpu_blocked_omp_16t,cpu,300.000000,300.000000,-1,-1,-1,-1,3,PASS,1.0e-07
"""
STREAMS = """mode,streams,panels,ms,h2d_ms,gemm_ms,d2h_ms,copy_ms,goal_bound_ms,engine_bound_ms,ratio_goal,status,same_as_serial
serial,1,16,12.000000,2.000000,6.000000,4.000000,6.000000,6.000000,6.000000,2.0000,PASS,yes
pipelined,3,16,6.600000,2.000000,6.000000,4.000000,6.000000,6.000000,6.000000,1.1000,PASS,yes
pipelined_graph,3,16,6.500000,2.000000,6.000000,4.000000,6.000000,6.000000,6.000000,1.0833,PASS,yes
"""
GRAPHS = """path,shape,count,us_per_gemm,gpu_us_per_gemm,status,same_as_loop
loop,64x64x64,2000,9.0000,8.5000,PASS,yes
graph,64x64x64,2000,3.0000,2.9000,PASS,yes
strided_batched,64x64x64,2000,0.1000,0.0900,PASS,no
"""
TIMELINE = """stream,op,panel,start_ms,end_ms
0,h2d B,-1,0.000000,1.000000
0,h2d A,0,1.000000,1.500000
0,gemm,0,1.500000,3.000000
1,h2d A,1,1.500000,2.000000
0,d2h C,0,3.000000,3.500000
1,gemm,1,3.000000,4.500000
1,d2h C,1,4.500000,5.000000
"""
RUN = """command: ./08_end_to_end/08_end_to_end --out x
gpu: NVIDIA H200
cc: 9.0
driver: 13.0
runtime: 13.0
git: abc123
timestamp: 2026-12-01T12:00:00Z
cpu_threads: 16
openblas: not built in
link: PCIe 5 x16 (63.0 GB/s per direction)
link_how: sysfs
link_gbs: 63.0
"""


class Fixture:
    @pytest.fixture(autouse=True)
    def tmp_folder(self, tmp_path):
        self.dir = str(tmp_path)
        for name, text in [("crossover.csv", CROSSOVER), ("streams.csv", STREAMS), ("graphs.csv", GRAPHS),
                           ("timeline_serial.csv", TIMELINE), ("timeline_pipelined.csv", TIMELINE), ("run.txt", RUN)]:
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)


class TestCrossover(Fixture):
    def test_crossover_is_where_the_gpu_wins_for_good(self):
        rows = e2e_plots.read_csv(self.dir, "crossover.csv")
        sizes, gpu, cpu, answer = e2e_plots.crossover_summary(rows)
        assert sizes == [32, 1024, 4096]
        assert answer == 1024
        # the pageable row is faster at 32 but is not the pinned path the rule compares
        assert gpu[32] == (0.05, "gpu_cublas_pinned")
        assert cpu[32] == (0.02, "cpu_blocked_omp_16t")

    def test_a_loss_at_a_larger_size_moves_the_crossover(self):
        rows = e2e_plots.read_csv(self.dir, "crossover.csv")
        for r in rows:
            if r["size"] == "4096" and r["path"] == "gpu_cublas_pinned":
                r["total_ms"] = "400"
        assert e2e_plots.crossover_summary(rows)[3] is None

    def test_a_shape_that_is_not_a_cube_keeps_its_name(self):
        rows = [{"size": "930", "shape": "1000x1013x777"}, {"size": "64", "shape": "64x64x64"}]
        assert e2e_plots.size_label(rows, 930) == "1000x1013x777"
        assert e2e_plots.size_label(rows, 64) == "64^3"

    def test_tables_hold_the_numbers_and_the_skips(self):
        text = "\n".join(e2e_plots.crossover_lines(e2e_plots.read_csv(self.dir, "crossover.csv")))
        assert "from 1024^3 on" in text
        assert "skipped (expected 190 s" in text
        assert "| 4096^3 | 9.000 |" in text
        breakdown = "\n".join(e2e_plots.breakdown_lines(e2e_plots.read_csv(self.dir, "crossover.csv")))
        assert "| 4096^3 | 3.0000 | 3.0000 | 2.5000 | 0.5000 | 9.0000 | 33.3 |" in breakdown


class TestTables(Fixture):
    def test_streams_goal_and_graph_speedup(self):
        s = "\n".join(e2e_plots.streams_lines(e2e_plots.read_csv(self.dir, "streams.csv")))
        assert "Goal (pipelined within 15% of max(total copy, total GEMM)): met (1.100)" in s
        g = "\n".join(e2e_plots.graphs_lines(e2e_plots.read_csv(self.dir, "graphs.csv")))
        assert "3.00x cheaper" in g
        assert "goal 2.5x: met" in g
        assert "runs (graphs_runs.csv)" not in g  # one run: no range

    def test_graph_range_over_runs(self):
        runs = [{"run": "1", "path": "loop", "us_per_gemm": "12"}, {"run": "1", "path": "graph", "us_per_gemm": "4"},
                {"run": "2", "path": "loop", "us_per_gemm": "8"}, {"run": "2", "path": "graph", "us_per_gemm": "5"},
                {"run": "3", "path": "loop", "us_per_gemm": "9"}]  # a run without its graph row is left out
        g = e2e_plots.graphs_lines(e2e_plots.read_csv(self.dir, "graphs.csv"), runs)
        assert g[-1] == ("Graph replay over 2 runs (graphs_runs.csv): 1.60-3.00x cheaper per GEMM; direct launches "
                         "8.00-12.00 us per GEMM, replayed 4.00-5.00 us per GEMM.")
        zh = e2e_plots.to_zh(g[-1])
        assert "共 2 次运行" in zh and "1.60-3.00 倍" in zh and "us" not in zh

    def test_missing_parts_say_so(self):
        secs = e2e_plots.sections(self.dir)
        assert secs["transfers"] == ["(the transfers part did not run)"]
        assert secs["managed"] == ["(the managed part did not run)"]
        assert "NVIDIA H200 (sm_90)" in secs["provenance"][0]
        assert "OpenBLAS not built in" in secs["provenance"][0]

    def test_fill_replaces_between_markers_only(self):
        notes = os.path.join(self.dir, "README.md")
        with open(notes, "w") as f:
            f.write("intro\n<!-- wb:fill e2e-graphs -->\nold table\n<!-- wb:end e2e-graphs -->\noutro\n")
        e2e_plots.fill(self.dir, [notes])
        with open(notes) as f:
            text = f.read()
        assert text.startswith("intro\n<!-- wb:fill e2e-graphs -->\n| path |")
        assert "old table" not in text
        assert text.endswith("<!-- wb:end e2e-graphs -->\noutro\n")
        e2e_plots.fill(self.dir, [notes])  # a second fill changes nothing
        with open(notes) as f:
            assert f.read() == text

    def test_chinese_notes_get_chinese_tables(self):
        zh = e2e_plots.sections(self.dir, "zh")
        assert "交叉点：从 1024^3 起" in "\n".join(zh["crossover"])
        assert "测量环境：NVIDIA H200" in zh["provenance"][0]
        assert "| 模式 | 流数 | 面板数 |" in "\n".join(zh["streams"])
        assert zh["transfers"] == ["（transfers 部分未运行）"]
        notes = os.path.join(self.dir, "README.zh-CN.md")
        with open(notes, "w") as f:
            f.write("<!-- wb:fill e2e-graphs -->\n<!-- wb:end e2e-graphs -->\n")
        e2e_plots.fill(self.dir, [notes])
        with open(notes) as f:
            assert "图重放：3.00" in f.read()

    def test_fill_without_markers_is_an_error(self):
        notes = os.path.join(self.dir, "plain.md")
        with open(notes, "w") as f:
            f.write("no markers\n")
        assert e2e_main("fill", self.dir, notes) == 2

    def test_fill_refuses_an_unbalanced_marker(self):
        notes = os.path.join(self.dir, "broken.md")
        text = "intro\n<!-- wb:fill e2e-graphs -->\nold table\n"  # its end marker lost
        with open(notes, "w") as f:
            f.write(text)
        assert e2e_main("fill", self.dir, notes) == 2
        with open(notes) as f:
            assert f.read() == text  # nothing written

    def test_plots_writes_tables_without_matplotlib(self):
        os.environ["WB_NO_MATPLOTLIB"] = "1"
        try:
            assert e2e_main("plots", self.dir) == 0
        finally:
            del os.environ["WB_NO_MATPLOTLIB"]
        with open(os.path.join(self.dir, "tables.md")) as f:
            text = f.read()
        assert "<!-- wb:fill e2e-crossover -->" in text
        assert not os.path.exists(os.path.join(self.dir, "crossover.png"))

    def test_pictures(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            pytest.skip("matplotlib not installed")
        assert e2e_plots.draw(self.dir) == ["crossover.png", "breakdown.png", "timeline.png"]
        for name in ("crossover.png", "breakdown.png", "timeline.png"):
            assert os.path.getsize(os.path.join(self.dir, name)) > 1000

    def test_bad_usage(self):
        assert e2e_main() == 2
        assert e2e_main("plots", os.path.join(self.dir, "nope")) == 2
