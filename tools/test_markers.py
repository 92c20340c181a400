"""Tests of wb.markers: the one marker syntax of the filled blocks, and `wb notes check`, which
regenerates every block of the notes from the committed file it cites."""
import io
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wb import ROOT, fill, markers, profile_table  # noqa: E402

# The blocks of the notes that the check cannot regenerate (their source is not committed), listed
# so that they stay visible: none today. A block added without its source shows up here.
NOT_REGENERATED = set()


def test_blocks_are_found_with_their_lines():
    text = "a\n<!-- wb:fill results -->\nrow 1\nrow 2\n<!-- wb:end results -->\nb\n<!-- wb:fill profile -->\n<!-- wb:end profile -->\n"
    found = markers.blocks(text, "x.md")
    assert [(b.name, b.line, b.content) for b in found] == [("results", 2, "row 1\nrow 2\n"), ("profile", 7, "")]


def test_replace_keeps_everything_outside_the_block():
    text = "before\n<!-- wb:fill results -->\nold\n<!-- wb:end results -->\nafter\n"
    new = markers.replace(text, "results", "new 1\nnew 2")
    assert new == "before\n<!-- wb:fill results -->\nnew 1\nnew 2\n<!-- wb:end results -->\nafter\n"
    assert markers.replace(new, "results", "old\n") == text
    assert markers.replace(text, "profile", "x") is None


def test_insert_after_puts_a_new_block_after_another():
    text = "<!-- wb:fill results -->\nr\n<!-- wb:end results -->\nrest\n"
    new = markers.insert_after(text, "results", "profile", "p")
    assert new == "<!-- wb:fill results -->\nr\n<!-- wb:end results -->\n\n<!-- wb:fill profile -->\np\n<!-- wb:end profile -->\nrest\n"


@pytest.mark.parametrize("text, message", [
    ("a\n<!-- wb:fill results -->\nrow\n", "x.md:2: <!-- wb:fill results --> has no <!-- wb:end results -->"),
    ("a\nb\n<!-- wb:end results -->\n", "x.md:3: <!-- wb:end results --> without <!-- wb:fill results -->"),
    ("<!-- wb:fill results -->\n<!-- wb:end profile -->\n", "x.md:2: <!-- wb:end profile --> without"),
    ("<!-- wb:fill results -->\n<!-- wb:fill profile -->\n", "x.md:2: <!-- wb:fill profile --> inside the block 'results'"),
    ("<!-- wb:fill results -->\n<!-- wb:end results -->\n<!-- wb:fill results -->\n<!-- wb:end results -->\n",
     "x.md:3: a second block 'results' (the first is at line 1)"),
    ("x\n<!-- H200-RESULTS -->\n", None),  # an old marker is no marker at all: plain text
    ("x\n<!-- wb:begin results -->\n", "x.md:2: unknown marker '<!-- wb:begin results -->'"),
    ("<!-- wb:fill nonsense -->\n<!-- wb:end nonsense -->\n", "x.md:1: unknown block name 'nonsense'"),
])
def test_a_marker_that_cannot_be_read_names_its_file_and_line(text, message):
    if message is None:
        assert markers.blocks(text, "x.md", markers.NOTE_NAMES) == []
        return
    with pytest.raises(markers.MarkerError) as e:
        markers.blocks(text, "x.md", markers.NOTE_NAMES)
    assert str(e.value).startswith(message)


def test_fill_writes_into_the_results_block_and_refuses_a_broken_one(tmp_path):
    note = tmp_path / "README.md"
    note.write_text("t\n<!-- wb:fill results -->\nold\n<!-- wb:end results -->\n", encoding="utf-8")
    assert fill.fill(str(note), "| new |")
    assert note.read_text(encoding="utf-8") == "t\n<!-- wb:fill results -->\n| new |\n<!-- wb:end results -->\n"
    note.write_text("t\n<!-- wb:fill results -->\nold\n", encoding="utf-8")
    with pytest.raises(markers.MarkerError):
        fill.fill(str(note), "| new |")
    assert note.read_text(encoding="utf-8") == "t\n<!-- wb:fill results -->\nold\n"


def test_profile_table_adds_its_block_after_the_results(tmp_path):
    note = tmp_path / "README.md"
    note.write_text("<!-- wb:fill results -->\nr\n<!-- wb:end results -->\nrest\n", encoding="utf-8")
    assert profile_table.fill(str(note), "p")
    assert [b.name for b in markers.blocks(note.read_text(encoding="utf-8"))] == ["results", "profile"]
    assert profile_table.fill(str(note), "q")  # the second time, into the block it made
    assert markers.find(note.read_text(encoding="utf-8"), "profile").content == "q\n"


def test_every_block_of_the_notes_matches_its_source():
    out = io.StringIO()
    status, skipped = markers.check(out=out)
    assert status == 0, out.getvalue()
    assert {(path, name) for path, _, name, _ in skipped} == NOT_REGENERATED, out.getvalue()
    report = out.getvalue()
    for kind in ("results", "profile", "e2e-crossover", "costs", "precision", "env", "ladder", "excerpt-ceiling"):
        assert f": {kind}: ok (from results/" in report


def test_no_old_marker_syntax_is_left_in_the_notes():
    old = ("H200-RESULTS", "H200-PROFILE", "H200-COSTS", "H200-PRECISION", "wb:08:", "wb:begin")
    for path in markers.note_files() + [os.path.join("report_template", n) for n in os.listdir(os.path.join(ROOT, "report_template"))]:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        assert not [o for o in old if o in text], path


def copy_of_notes(tmp_path, files):
    """A copy of the workbook's notes `files` and the results they cite, under tmp_path."""
    for path in files:
        os.makedirs(tmp_path / os.path.dirname(path), exist_ok=True)
        shutil.copy(os.path.join(ROOT, path), tmp_path / path)
    shutil.copytree(os.path.join(ROOT, "results"), tmp_path / "results")
    return tmp_path


@pytest.mark.parametrize("path, name, old, new", [
    ("03_shared_tiling/README.md", "results", "| PASS |", "| FAIL |"),
    ("03_shared_tiling/README.zh-CN.md", "profile", "|", "| 1 |"),
    ("08_end_to_end/README.md", "e2e-graphs", "| PASS |", "| FAIL |"),
    ("07_cublas_baseline/README.md", "costs", "ms", "us"),
    ("00_env_check/README.zh-CN.md", "env", "GFLOP/s", "TFLOP/s"),
    ("README.md", "ladder", " % |", "1 % |"),
    ("README.zh-CN.md", "ladder", "cuBLAS", "CUTLASS"),
    ("09_hopper_wgmma/README.md", "results", "| PASS |", "| FAIL |"),
    ("09_hopper_wgmma/README.zh-CN.md", "excerpt-ceiling", "78.3%", "80.3%"),
    ("09_hopper_wgmma/README.md", "excerpt-step5-after", "102.1", "103.1"),  # an excerpt indented in a list item
    ("06_tensor_core_wmma/README.md", "cutlass", " % |", "1 % |"),
    ("06_tensor_core_wmma/README.zh-CN.md", "cutlass", "`tf32_pipelined`", "`tf32_mma_sync`"),
    ("06_tensor_core_wmma/README.md", "cutlass-run129", " % |", "1 % |"),
    ("09_hopper_wgmma/README.zh-CN.md", "results-run129", "| PASS |", "| FAIL |"),
])
def test_a_wrong_number_in_a_note_fails_the_check(tmp_path, path, name, old, new):
    root = copy_of_notes(tmp_path, [path, "08_end_to_end/README.md"])
    with open(root / path, encoding="utf-8") as f:
        text = f.read()
    block = markers.find(text, name)
    wrong = block.content.replace(old, new, 1) if name != "profile" else block.content[:-1] + " 1 |\n"
    assert wrong != block.content
    with open(root / path, "w", encoding="utf-8") as f:
        f.write(text[:block.start] + wrong + text[block.stop:])
    out = io.StringIO()
    status, _ = markers.check(str(root), [path], out)
    assert status == 1
    assert f"{path}:{block.line}: {name}: DIFFERS from results/" in out.getvalue()


def test_an_unbalanced_marker_fails_the_check_with_its_line(tmp_path):
    path = "02_naive_kernel/README.md"
    root = copy_of_notes(tmp_path, [path])
    with open(root / path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    at = lines.index("<!-- wb:end profile -->")
    del lines[at]
    with open(root / path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    out = io.StringIO()
    status, _ = markers.check(str(root), [path], out)
    assert status == 1
    start = lines.index("<!-- wb:fill profile -->") + 1
    assert f"error: {path}:{start}: <!-- wb:fill profile --> has no <!-- wb:end profile -->" in out.getvalue()


def test_the_command_line():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools"))
    run = subprocess.run([sys.executable, "-m", "wb", "notes", "check"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().endswith(f"notes check: passed, {len(NOT_REGENERATED)} block(s) not regenerated")
    run = subprocess.run([sys.executable, "-m", "wb", "notes", "list"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0
    assert "08_end_to_end/README.md:" in run.stdout and ": e2e-managed" in run.stdout


def test_a_block_whose_source_is_missing_is_listed_not_passed(tmp_path):
    path = "02_naive_kernel/README.md"
    root = copy_of_notes(tmp_path, [path])
    os.remove(root / "results" / "h200" / "bench.csv")
    out = io.StringIO()
    status, skipped = markers.check(str(root), [path], out)
    assert status == 0  # nothing differs; the block is listed instead
    assert [(p, name) for p, _, name, _ in skipped] == [(path, "results")]
    assert "results: not regenerated: its source cannot be read" in out.getvalue()


def test_fill_env_writes_chapter_00s_row(tmp_path, monkeypatch):
    for name in ("README.md", "README.zh-CN.md"):
        os.makedirs(tmp_path / "00_env_check", exist_ok=True)
        (tmp_path / "00_env_check" / name).write_text("| h |\n<!-- wb:fill env -->\nold\n<!-- wb:end env -->\n",
                                                       encoding="utf-8")
    shutil.copy(os.path.join(ROOT, "tools", "report_fixture_env.json"), tmp_path / "env.json")
    monkeypatch.chdir(tmp_path)
    assert fill.fill_env("env.json") == 0
    en = (tmp_path / "00_env_check" / "README.md").read_text(encoding="utf-8")
    zh = (tmp_path / "00_env_check" / "README.zh-CN.md").read_text(encoding="utf-8")
    assert ("| Fixture GPU (invented numbers) (sm_90, 120 SMs, driver CUDA 13.0) | 2026-01-01 | "
            "`./00_env_check/00_env_check --json env.json` (run by `make bench`) | 55000 GFLOP/s (91.7% of 60000) | "
            "4100 GB/s (85.4% of 4800) | 3950 GB/s (82.3%) | PASS, rel. error 1.2e-07 |") in en
    assert "| 4100 GB/s（理论 4800 的 85.4%） | 3950 GB/s（82.3%） | PASS，相对误差 1.2e-07 |" in zh
    (tmp_path / "env.json").write_text("{}", encoding="utf-8")
    assert fill.fill_env("env.json") == 1  # not the JSON of 00_env_check: one line, status 1
    assert (tmp_path / "00_env_check" / "README.md").read_text(encoding="utf-8") == en


def test_fill_without_a_csv_or_env_is_bad_usage():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools"))
    run = subprocess.run([sys.executable, "-m", "wb", "fill"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "--env" in run.stderr


def test_profile_caption_names_the_profiled_command_and_strips_namespaces(tmp_path, monkeypatch):
    log = tmp_path / "p.log"
    log.write_text("== profile-06\n/usr/local/cuda/bin/ncu --clock-control none --metrics m__x.sum "
                   "./06_tensor_core_wmma --size 4096 --reps 1\n"
                   "  void ch06::wmma_naive(ch06::WmmaArgs<__half>) (256, 256, 1)x(128, 1, 1), Context 1, Stream 13\n"
                   "    gpu__time_duration.sum    ms    5.04\n    m__x.sum    inst    7\n", encoding="utf-8")
    os.makedirs(tmp_path / "06_tensor_core_wmma")
    for name in ("README.md", "README.zh-CN.md"):
        (tmp_path / "06_tensor_core_wmma" / name).write_text(
            "<!-- wb:fill profile -->\nold\n<!-- wb:end profile -->\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert profile_table.main("p.log", True, "2026-01-01", "abc1234") == 0
    en = (tmp_path / "06_tensor_core_wmma" / "README.md").read_text(encoding="utf-8")
    assert ("2026-01-01, commit `abc1234`, `make profile-06`, which runs `./06_tensor_core_wmma --size 4096 --reps 1` "
            "(raw output: `p.log`") in en
    assert "| `wmma_naive` | 5.040 | 7 |" in en


def test_a_labelled_profile_section_fills_its_own_block_and_notes_check_regenerates_it(tmp_path, monkeypatch):
    ncu = "/usr/local/cuda/bin/ncu --clock-control none --metrics m__x.sum"
    kernel = "  void {}(P) (132, 1, 1)x(384, 1, 1), Context 1, Stream 13\n    gpu__time_duration.sum    us    {}\n    m__x.sum    inst    {}\n"
    log = tmp_path / "results" / "p.log"
    os.makedirs(log.parent)
    log.write_text("# two runs\n== profile-09\n" + f"{ncu} ./09_hopper_wgmma --size 4096\n" + kernel.format("step_a", 100, 1)
                   + "== profile-09 big\n" + f"{ncu} -k regex:b ./09_hopper_wgmma --size 8192 --variant b\n"
                   + kernel.format("step_b", 2000, 2) + f"{ncu} -k regex:c ./09_hopper_wgmma --size 8192 --variant b\n"
                   + kernel.format("step_b", 2100, 3)
                   + f"{ncu} ./07_cublas_baseline --size 8192\n" + kernel.format("Kernel<" + "Gemm<" * 30 + ">", 1900, 4),
                   encoding="utf-8")
    os.makedirs(tmp_path / "09_hopper_wgmma")
    for name in ("README.md", "README.zh-CN.md"):
        (tmp_path / "09_hopper_wgmma" / name).write_text(
            "<!-- wb:fill profile -->\nold\n<!-- wb:end profile -->\n\n<!-- wb:fill profile-big -->\nold\n<!-- wb:end profile-big -->\n",
            encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert profile_table.main("results/p.log", True, "2026-01-01", "abc1234", "big") == 0
    en = (tmp_path / "09_hopper_wgmma" / "README.md").read_text(encoding="utf-8")
    big = markers.find(en, "profile-big").content
    assert markers.find(en, "profile").content == "old\n"  # the unlabelled section's block is left alone
    assert "over `./09_hopper_wgmma --size 8192 --variant b`, `./07_cublas_baseline --size 8192` " in big
    assert "its section `== profile-09 big`" in big
    assert "| `step_b(P)` | 2.000 | 2 |" in big and "2.100" not in big  # a repeated launch keeps the first
    assert "step_a" not in big and "| `Kernel<Gemm<" in big and "…` | 1.900 | 4 |" in big  # CUTLASS's name is cut
    zh = (tmp_path / "09_hopper_wgmma" / "README.zh-CN.md").read_text(encoding="utf-8")
    assert "`== profile-09 big` 一节" in markers.find(zh, "profile-big").content
    assert profile_table.main("results/p.log", True, "2026-01-01", "abc1234") == 0
    en = (tmp_path / "09_hopper_wgmma" / "README.md").read_text(encoding="utf-8")
    assert "| `step_a(P)` | 0.100 | 1 |" in markers.find(en, "profile").content
    assert markers.find(en, "profile-big").content == big  # and the labelled one keeps what it had
    out = io.StringIO()
    assert markers.check(str(tmp_path), ["09_hopper_wgmma/README.md", "09_hopper_wgmma/README.zh-CN.md"], out)[0] == 0, out.getvalue()
    (tmp_path / "09_hopper_wgmma" / "README.md").write_text(en.replace("| 2 |", "| 5 |"), encoding="utf-8")
    out = io.StringIO()
    assert markers.check(str(tmp_path), ["09_hopper_wgmma/README.md"], out)[0] == 1 and "profile-big" in out.getvalue()


def test_the_ladder_has_each_chapters_best_and_cutlass_beside_cublas():
    rows = fill.read_rows(os.path.join(ROOT, "results", "h200", "bench.csv"))
    from wb import bench_summary
    text = bench_summary.ladder(rows, "en", "results/h200/bench.csv")
    labels = [line.split(" | ")[0] for line in text.splitlines() if line.startswith("| `")]
    assert "| `02_naive_kernel`" in labels and "| `09_hopper_wgmma`" in labels
    assert {"| `07_cublas_baseline` `cutlass_fp16_tensorop`", "| `07_cublas_baseline` `cutlass_tf32_tensorop`",
            "| `07_cublas_baseline` `cutlass_fp16_wgmma`", "| `07_cublas_baseline` `cutlass_bf16_wgmma`"} <= set(labels)
    assert not [label for label in labels if "01_cpu" in label or "08_end" in label]
    git = fill.read_rows(os.path.join(ROOT, "results", "h200", "bench.csv"))[0]["git"]
    assert f"git `{git}`" in text and "(raw rows: `results/h200/bench.csv`)" in text
    assert "| cuBLAS FP16, chapter 07's rows, TFLOP/s |" in text


def versus_rows():
    """A bench CSV's rows in miniature: chapter 06 and chapter 07's CUTLASS kernels, % of cuBLAS."""
    def row(chapter, variant, dtype, shape, pct, status="PASS"):
        m, n, k = shape
        return {"chapter": chapter, "variant": variant, "dtype": dtype, "M": str(m), "N": str(n), "K": str(k),
                "pct_cublas": str(pct), "status": status, "gpu": "G", "timestamp": "2026-12-03T00:00:00Z", "git": "abc"}
    big, odd = (4096, 4096, 4096), (1000, 1013, 4097)
    return [row("06_tensor_core_wmma", "cublas_tf32", "tf32", big, 100),
            row("06_tensor_core_wmma", "tf32_pipelined", "tf32", big, 45),
            row("06_tensor_core_wmma", "tf32_pipelined", "tf32", odd, 30),
            row("06_tensor_core_wmma", "mma_ldmatrix", "fp16", big, 66),
            row("06_tensor_core_wmma", "wmma_smem", "fp16", big, 1, status="FAIL"),
            row("07_cublas_baseline", "cutlass_tf32_tensorop", "tf32", big, 50),
            row("07_cublas_baseline", "cutlass_tf32_tensorop", "tf32", odd, 40),
            row("07_cublas_baseline", "cutlass_fp16_tensorop", "fp16", big, 60),
            row("07_cublas_baseline", "cutlass_fp16_wgmma", "fp16", big, 90)]


def test_versus_cutlass_divides_the_two_ratios_of_the_same_precision():
    from wb import bench_summary
    text = bench_summary.versus_cutlass(versus_rows(), "06_tensor_core_wmma", "en", "r.csv")
    lines = [line for line in text.splitlines() if line.startswith("| `")]
    # 45 / 50 and 30 / 40 in TF32; 66 / 60 in FP16 against the sm80 kernel, not the wgmma one; no
    # baseline row, no failed row, no shape CUTLASS lacks
    assert lines == ["| `tf32_pipelined` | TF32 | 90.0 % | 75.0 % |", "| `mma_ldmatrix` | FP16 | 110.0 % | - |"]
    assert "`cutlass_tf32_tensorop`, `cutlass_fp16_tensorop`" in text and "(raw rows: `r.csv`)" in text
    only = bench_summary.versus_cutlass(versus_rows(), "06_tensor_core_wmma", "zh", "r.csv", [(1000, 1013, 4097)])
    assert "| `tf32_pipelined` | TF32 | 75.0 % |" in only and "4096" not in only.split("\n")[2]
    with pytest.raises(ValueError):
        bench_summary.versus_cutlass(versus_rows(), "05_float4_vectorized", "en", "r.csv")


def test_versus_ceiling_divides_gflops_by_the_ceiling_of_the_input_type(tmp_path):
    from wb import bench_summary, fill
    rows = versus_rows()
    for r in rows:
        r["gflops"] = str(2 * float(r["pct_cublas"]))
    ceiling = [{"gpu": "G", "instruction": "mma.f16", "input": "fp16", "gflops": "264"},
               {"gpu": "G", "instruction": "mma.tf32", "input": "tf32", "gflops": "180"}]
    text = bench_summary.versus_ceiling(rows, ceiling, "06_tensor_core_wmma", "en", "r.csv", "c.csv")
    lines = [line for line in text.splitlines() if line.startswith("| `")]
    # 90 / 180 and 60 / 180 in TF32, 132 / 264 in FP16; no baseline row, no failed row
    assert lines == ["| `tf32_pipelined` | TF32 | 50.0 % | 33.3 % |", "| `mma_ldmatrix` | FP16 | 50.0 % | - |"]
    assert "`mma.tf32` 0.2 TFLOP/s, `mma.f16` 0.3 TFLOP/s" in text and "the ceiling: `c.csv`" in text
    only = bench_summary.versus_ceiling(rows, ceiling, "06_tensor_core_wmma", "zh", "r.csv", "c.csv", [(1000, 1013, 4097)])
    assert "| `tf32_pipelined` | TF32 | 33.3 % |" in only and "| `mma_ldmatrix` | FP16 | - |" in only
    with pytest.raises(ValueError, match="measured on H"):
        bench_summary.versus_ceiling(rows, [dict(ceiling[0], gpu="H")], "06_tensor_core_wmma", "en", "r.csv", "c.csv")
    with pytest.raises(ValueError):
        bench_summary.versus_ceiling(rows, ceiling, "05_float4_vectorized", "en", "r.csv", "c.csv")
    assert bench_summary.ceiling_path("results/h200/bench.csv", "06_tensor_core_wmma") == "results/h200/ceiling_06.csv"
    # notes check regenerates the chapter's block from the two files its caption names
    note = "06_tensor_core_wmma/README.md"
    text = open(os.path.join(ROOT, note), encoding="utf-8").read()
    block = markers.find(text, "ceiling", note)
    want, src = markers.expected(note, block, text)
    assert want == block.content and src == "results/h200/bench.csv"


def test_fill_ceiling_reads_the_ceiling_csv_beside_the_bench_csv(tmp_path, capsys):
    from wb import fill
    note = tmp_path / "README.md"
    note.write_text("<!-- wb:fill ceiling -->\n<!-- wb:end ceiling -->\n", encoding="utf-8")
    rows = versus_rows()
    for r in rows:
        r["gflops"] = str(2 * float(r["pct_cublas"]))
    bench = str(tmp_path / "bench.csv")
    assert fill.fill_ceiling(str(note), rows, "06_tensor_core_wmma", "en", bench) == 0  # a bench without a ceiling
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "warning" in err and "left as it was: no " + str(tmp_path / "ceiling_06.csv") in err
    assert note.read_text(encoding="utf-8") == "<!-- wb:fill ceiling -->\n<!-- wb:end ceiling -->\n"
    (tmp_path / "ceiling_06.csv").write_text("gpu,cc,instruction,input,iterations,gflops,peak_gflops,pct_peak\n"
                                            "G,9.0,mma.f16,fp16,1,264,1000,26.4\n", encoding="utf-8")
    assert fill.fill_ceiling(str(note), rows, "06_tensor_core_wmma", "en", bench) == 0
    assert "| `mma_ldmatrix` | FP16 | 50.0 % |" in note.read_text(encoding="utf-8")
    other = tmp_path / "other.md"
    other.write_text("no block\n", encoding="utf-8")
    assert fill.fill_ceiling(str(other), rows, "06_tensor_core_wmma", "en", bench) == 0  # left alone
    assert other.read_text(encoding="utf-8") == "no block\n" and capsys.readouterr().err == ""
    (tmp_path / "ceiling_06.csv").write_text("gpu,cc,instruction,input,iterations,gflops,peak_gflops,pct_peak\n"
                                            "H,9.0,mma.f16,fp16,1,264,1000,26.4\n", encoding="utf-8")
    assert fill.fill_ceiling(str(note), rows, "06_tensor_core_wmma", "en", bench) == 1  # another GPU's ceiling
    assert "measured on H" in capsys.readouterr().err


def test_fill_of_another_run_writes_its_own_block_against_cutlass(tmp_path, monkeypatch):
    """--block results-WORD fills the note's cutlass-WORD from that run's CSV, on the shapes its
    results-WORD block shows, and leaves the bench's `cutlass` block alone."""
    import csv as csvmod
    from wb import fill
    rows = versus_rows()
    header = sorted({k for r in rows for k in r} | {"ms_median", "ms_min", "gflops", "pct_peak", "rel_err", "cc",
                                                    "driver", "runtime", "alpha", "beta", "cublas_gflops"})
    with open(tmp_path / "run.csv", "w", newline="") as f:
        w = csvmod.DictWriter(f, header)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "1") for k in header})
    os.makedirs(tmp_path / "06_tensor_core_wmma")
    bench = "<!-- wb:fill cutlass -->\nbench\n<!-- wb:end cutlass -->\n"
    other = "<!-- wb:fill cutlass-run1 -->\n<!-- wb:end cutlass-run1 -->\n"
    for name in ("README.md", "README.zh-CN.md"):
        (tmp_path / "06_tensor_core_wmma" / name).write_text("# t\n\n" + bench + "\n" + other, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert fill.main("run.csv", None, "results-run1") == 0
    text = (tmp_path / "06_tensor_core_wmma" / "README.md").read_text(encoding="utf-8")
    assert "\nbench\n" in text
    assert "| `tf32_pipelined` | TF32 | 90.0 % | 75.0 % |" in text
    assert fill.versus_of("results") == "cutlass" and fill.results_of_versus("cutlass-run1") == "results-run1"


NOTE = "# t\n\n<!-- wb:fill results -->\n| `v` | 4096 | 98.7 % |\n<!-- wb:end results -->\n\n"


@pytest.mark.parametrize("line, figures", [
    ("Step 5 reaches 103.0 % of cuBLAS at 4096³.", ["103.0 %"]),
    ("the kernel takes 191.6 µs against 202.9 µs", ["191.6 µs", "202.9 µs"]),
    ("cuBLAS ran at 50.7 TFLOP/s and copies at 55 GB/s, 2.7 ms", ["50.7 TFLOP/s", "55 GB/s", "2.7 ms"]),
    ("steps 3 and 4 reach 95-99 % (~65 % before)", ["95-99 %", "~65 %"]),
    ("the uncoalesced one is 6.6x slower, or 10x", ["6.6x slower", "10x"]),
    ("第 5 步达到 cuBLAS 的 103.0 %，快 2.1 倍，用时 3 秒", ["103.0 %", "2.1 倍", "3 秒"]),
    ("a 64 x 128 tile of 1000x1013x4097, sm_90, 16 k-tiles, 132 SMs", []),
    ("a multiple of 132（不是 132 倍数的分块数）", []),
    ("PCIe 5 x16 carries 63.0 GB/s each way <!-- wb:not-measured -->", []),
    ("<!-- wb:not-measured --> a target of 90 % at the start of its line", []),
])
def test_lint_finds_hand_typed_figures(line, figures):
    assert [f for _, f, _ in markers.figures(NOTE + line + "\n")] == figures


def test_a_hand_typed_figure_in_a_note_fails_the_lint(tmp_path):
    path = "09_hopper_wgmma/README.md"
    root = copy_of_notes(tmp_path, [path])
    out = io.StringIO()
    assert markers.lint(str(root), [path], out) == 0, out.getvalue()
    with open(root / path, encoding="utf-8") as f:
        text = f.read()
    planted = text.replace("## Pitfalls\n", "## Pitfalls\n\nStep 4 reaches 97.3 % of cuBLAS at 8192³.\n", 1)
    with open(root / path, "w", encoding="utf-8") as f:
        f.write(planted)
    out = io.StringIO()
    assert markers.lint(str(root), [path], out) == 1
    number = planted.splitlines().index("Step 4 reaches 97.3 % of cuBLAS at 8192³.") + 1
    assert f"{path}:{number}: '97.3 %' is a hand-typed figure" in out.getvalue()
    # Marked as not measured, the line passes.
    with open(root / path, "w", encoding="utf-8") as f:
        f.write(planted.replace("at 8192³.\n", f"at 8192³. {markers.NOT_MEASURED}\n", 1))
    assert markers.lint(str(root), [path], io.StringIO()) == 0


def test_every_note_passes_the_lint():
    out = io.StringIO()
    assert markers.lint(out=out) == 0, out.getvalue()


def test_fill_block_results_word_is_left_alone_by_a_plain_fill(tmp_path, monkeypatch):
    os.makedirs(tmp_path / "01_cpu_matmul")
    for name in ("README.md", "README.zh-CN.md"):
        (tmp_path / "01_cpu_matmul" / name).write_text(
            "<!-- wb:fill results-vm -->\nold\n<!-- wb:end results-vm -->\n", encoding="utf-8")
    shutil.copy(os.path.join(ROOT, "results", "cpu", "01_cpu_matmul.csv"), tmp_path / "vm.csv")
    monkeypatch.chdir(tmp_path)
    assert fill.main("vm.csv") == 0  # the plain fill writes blocks `results` only
    assert (tmp_path / "01_cpu_matmul" / "README.md").read_text(encoding="utf-8").count("old") == 1
    assert fill.main("vm.csv", None, "results-vm") == 0
    en = (tmp_path / "01_cpu_matmul" / "README.md").read_text(encoding="utf-8")
    assert en.startswith("<!-- wb:fill results-vm -->\nMeasured on AMD EPYC (the CPU), 2026-11-29, git ")
    assert "| `blocked_1t` | 1024x1024x1024 |" in en and "(sm_" not in en
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "tools"))
    run = subprocess.run([sys.executable, "-m", "wb", "fill", "vm.csv", "--block", "nonsense"], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.count("\n") == 1


def test_fill_shows_the_shapes_a_note_selects_and_the_check_keeps_them(tmp_path, monkeypatch):
    chapter = "06_tensor_core_wmma"
    os.makedirs(tmp_path / chapter)
    for name in ("README.md", "README.zh-CN.md"):
        (tmp_path / chapter / name).write_text("# t\n\n<!-- wb:fill results -->\nold\n<!-- wb:end results -->\n",
                                               encoding="utf-8")
    shutil.copy(os.path.join(ROOT, "results", "h200", "bench.csv"), tmp_path / "bench.csv")
    monkeypatch.chdir(tmp_path)
    notes = [os.path.join(chapter, n) for n in ("README.md", "README.zh-CN.md")]

    def shapes_in(path):
        block = markers.find((tmp_path / path).read_text(encoding="utf-8"), "results")
        return {line.split(" | ")[1] for line in block.content.splitlines() if line.startswith("| `")}

    selection = {"4096x4096x4096", "1000x1013x4097"}
    assert fill.main("bench.csv", None, "results", fill.parse_selection(["06=4096,1000x1013x4097"])) == 0
    assert shapes_in(notes[0]) == shapes_in(notes[1]) == selection
    en = (tmp_path / notes[0]).read_text(encoding="utf-8")
    assert "The table shows the shapes 4096x4096x4096, 1000x1013x4097;" in en
    assert "表中只列出形状 4096x4096x4096, 1000x1013x4097；" in (tmp_path / notes[1]).read_text(encoding="utf-8")
    out = io.StringIO()
    assert markers.check(str(tmp_path), notes, out) == (0, []), out.getvalue()
    # A plain fill (what follows make bench) keeps the selection the note declares.
    assert fill.main("bench.csv") == 0
    assert (tmp_path / notes[0]).read_text(encoding="utf-8") == en
    # A row deleted by hand is caught: the check shows the declared shapes, not the ones left in the table.
    gone = en.replace(next(line for line in en.splitlines() if "| 1000x1013x4097 |" in line) + "\n", "", 1)
    (tmp_path / notes[0]).write_text(gone, encoding="utf-8")
    out = io.StringIO()
    assert markers.check(str(tmp_path), notes[:1], out)[0] == 1
    assert "results: DIFFERS from bench.csv" in out.getvalue()
    # A shape the run does not have is an error, and the note is left as it was.
    assert fill.main("bench.csv", None, "results", fill.parse_selection(["06=512"])) == 1
    assert (tmp_path / notes[0]).read_text(encoding="utf-8") == gone
    assert fill.main("bench.csv", None, "results", fill.parse_selection(["42=512"])) == 1
    with pytest.raises(ValueError):
        fill.parse_selection(["4096,8192"])
    # CHAPTER=all shows every shape again, and says nothing about a selection.
    assert fill.main("bench.csv", None, "results", fill.parse_selection([f"{chapter}=all"])) == 0
    assert len(shapes_in(notes[0])) == 6 and "The table shows the shapes" not in (tmp_path / notes[0]).read_text(encoding="utf-8")
