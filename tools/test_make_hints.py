"""test_make_hints.py - the make commands a student types, from where the notes say to type them.

A mistyped chapter number gets one line naming the target meant (status 2); the top-level targets
work inside a chapter folder; ARCH reaches nvcc, the default is this machine's GPU (nvcc
-arch=native) or, with none, the documented list; 09 is built for sm_90a whatever ARCH says;
CUTLASS=0 leaves CUTLASS out of 07; a missing tool or dependency is one line; `make -n` builds
nothing; CI (.ci/run) runs the README's commands. Builds are only printed (make -n), no GPU needed
but for the one check of what -arch=native found.

Run: python3 -m pytest tools/test_make_hints.py
"""
import glob
import os
import re
import shutil
import stat
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CHAPTERS = sorted(os.path.basename(p.rstrip("/")) for p in glob.glob(os.path.join(ROOT, "[0-9][0-9]_*/")))
NUMBERS = [c[:2] for c in CHAPTERS]
DEFAULT_ARCHS = ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"]
SUDO = "" if os.geteuid() == 0 or not shutil.which("sudo") else "sudo "


def chapter(number):
    return next(c for c in CHAPTERS if c.startswith(number + "_"))


def make(*args, cwd=ROOT, native="", env=None):
    """make in a clean environment (this test may run under make). `native` stands in for what
    nvcc -arch=native found ("" : no GPU); None lets make ask nvcc."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "WB_NATIVE", "ARCH")}
    if native is not None:
        clean["WB_NATIVE"] = native
    clean.update(env or {})
    return subprocess.run(["make", "--no-print-directory", *args], cwd=cwd, env=clean,
                          capture_output=True, text=True, timeout=300)


def gencode(*archs):
    """The -gencode flags for ARCH=archs: machine code for each, PTX of the last."""
    flags = [f"-gencode arch={a.replace('sm_', 'compute_')},code={a}" for a in archs]
    last = archs[-1].replace("sm_", "compute_")
    return " ".join(flags + [f"-gencode arch={last},code={last}"])


def nvcc_line(result, source):
    lines = [l for l in result.stdout.splitlines() if "nvcc" in l and f" {source}" in l]
    assert lines, result.stdout[-2000:] + result.stderr
    return lines[0]


def fake_tool(folder, name, body):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, stat.S_IRWXU)
    return path


# ---- a chapter number that names no chapter ----------------------------------------------------

@pytest.mark.parametrize("goal, meant", [("3", "03"), ("run-3", "run-03"), ("test-3", "test-03"),
                                         ("profile-2", "profile-02"), ("tune-5", "tune-05")])
@pytest.mark.parametrize("where", ["top", "chapter folder"])
def test_a_one_digit_number_names_the_chapter_meant(goal, meant, where):
    result = make(goal, cwd=ROOT if where == "top" else os.path.join(ROOT, chapter("02")))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    hints = [l for l in result.stderr.splitlines() if l.startswith("no chapter")]
    assert hints == [f"no chapter '{goal.split('-')[-1]}': chapters are {' '.join(NUMBERS)}; "
                     f"did you mean `make {meant}`?"]


@pytest.mark.parametrize("where", ["top", "chapter folder"])
def test_a_two_digit_number_that_is_no_chapter_lists_the_chapters(where):
    result = make("10", cwd=ROOT if where == "top" else os.path.join(ROOT, chapter("02")))
    assert result.returncode == 2, result.stdout + result.stderr
    hints = [l for l in result.stderr.splitlines() if l.startswith("no chapter")]
    assert hints == [f"no chapter '10': chapters are {' '.join(NUMBERS)}; `make help` lists the targets"]


def test_other_names_point_to_help_and_files_are_not_caught():
    result = make("test-foo")
    assert result.returncode == 2
    assert "no chapter 'foo'" in result.stderr and "`make help` lists the targets" in result.stderr
    assert make("README.md").returncode == 0  # a file with no rule is up to date
    result = make("help")
    assert result.returncode == 0 and "make profile-NN" in result.stdout


# ---- the top-level targets, at the top and inside a chapter folder -----------------------------

def test_chapter_targets_from_the_top():
    ch = chapter("03")
    for goal, expected in [("03", f"-C {ch} {ch}"), ("run-03", f"-C {ch} run"), ("test-03", f"-C {ch} test_{ch}"),
                           ("profile-03", f"-C {ch} profile"), ("sanitize-03", f"-C {ch} sanitize")]:
        result = make("-n", goal)
        assert result.returncode == 0, result.stderr
        assert expected in result.stdout, goal


def test_top_level_targets_inside_a_chapter_folder():
    here = os.path.join(ROOT, chapter("02"))
    ch03, ch00 = chapter("03"), chapter("00")
    for goal, expected in [("03", f"-C {ch03} {ch03}"), ("test-03", f"-C {ch03} test_{ch03}"),
                           ("run-03", f"-C {ch03} run"), ("check-env", f"./{ch00}/{ch00}"),
                           ("deps", "check_deps.sh --all"), ("measure-08", "--part all --out results/08"),
                           ("bench-resume", "bash tools/bench.sh --resume")]:
        result = make("-n", goal, cwd=here)
        assert result.returncode == 0, result.stderr
        assert f"-C {ROOT} {goal}" in result.stdout and expected in result.stdout, goal
    own = make("-n", "-B", "02", cwd=here)
    assert own.returncode == 0 and f"-C {ROOT} 02" not in own.stdout  # built here


def test_a_dry_run_builds_nothing(tmp_path):
    watched = [os.path.join(ROOT, "common", "build"), os.path.join(ROOT, chapter("03"))]

    def snapshot():
        return {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns
                for w in watched if os.path.isdir(w) for d, _, files in os.walk(w) for f in files}
    before = snapshot()
    for goal in ("test-03", "03", "all"):
        assert make("-n", "-B", goal).returncode == 0
    assert snapshot() == before
    assert make("-n", "measure-08", f"OUT={tmp_path}/08").returncode == 0
    assert not os.path.exists(tmp_path / "08")


# ---- the GPU architecture ----------------------------------------------------------------------

@pytest.mark.parametrize("arch, archs", [("sm_86", ["sm_86"]), ("86", ["sm_86"]),
                                         ("sm_80 sm_90", ["sm_80", "sm_90"])])
def test_arch_reaches_nvcc(arch, archs):
    ch = chapter("02")
    result = make("-n", "-B", "-C", ch, ch, f"ARCH={arch}")
    assert result.returncode == 0, result.stderr
    assert f" {gencode(*archs)} " in nvcc_line(result, f"{ch}.cu")


def test_no_gpu_builds_the_documented_list():
    ch = chapter("02")
    result = make("-n", "-B", "-C", ch, ch)
    assert f" {gencode(*DEFAULT_ARCHS)} " in nvcc_line(result, f"{ch}.cu")
    assert f"Now: {' '.join(DEFAULT_ARCHS)} [default list: no GPU found]" in make("help").stdout
    # What nvcc -arch=native found is built for.
    result = make("-n", "-B", "-C", ch, ch, native="sm_90")
    assert f" {gencode('sm_90')} " in nvcc_line(result, f"{ch}.cu")


def test_the_architectures_nvcc_names_for_native_are_built(tmp_path):
    """nvcc's dry run for -arch=native names them (its ptxas lines); a warning about native: none."""
    dry_run = ('echo "#$ cicc --display_error_number -arch compute_90" >&2; '
               'echo "#$ ptxas -arch=sm_90 -m64 a.ptx" >&2; echo "#$ ptxas -arch=sm_86 -m64 b.ptx" >&2')
    nvcc = fake_tool(str(tmp_path), "nvcc", dry_run)
    assert "Now: sm_86 sm_90 [this machine's GPU: nvcc -arch=native]" in make("help", f"NVCC={nvcc}", native=None).stdout
    nvcc = fake_tool(str(tmp_path), "nvcc", dry_run + "; echo \"nvcc warning : Cannot find valid GPU for "
                     "'-arch=native', default arch is used\" >&2")
    assert f"Now: {' '.join(DEFAULT_ARCHS)} [default list" in make("help", f"NVCC={nvcc}", native=None).stdout


def test_nvcc_is_asked_for_the_gpu_of_this_machine():
    """Without a GPU nvcc's answer is the documented list; with one, what nvidia-smi reports."""
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
        caps = sorted({"sm_" + c.strip().replace(".", "") for c in smi.stdout.split()} if smi.returncode == 0 else [])
    except OSError:
        caps = []
    help_text = make("help", native=None).stdout
    if caps:
        assert f"Now: {' '.join(caps)} [this machine's GPU: nvcc -arch=native]" in help_text
    else:
        assert f"Now: {' '.join(DEFAULT_ARCHS)} [default list: no GPU found]" in help_text


def test_09_is_built_for_sm_90a_whatever_arch_says():
    ch = chapter("09")
    line = nvcc_line(make("-n", "-B", "-C", ch, ch, "ARCH=sm_86"), f"{ch}.cu")
    assert "-gencode arch=compute_90a,code=sm_90a" in line and "compute_86" not in line


def test_cutlass_0_leaves_cutlass_out_of_07():
    ch = chapter("07")
    result = make("-n", "-B", "-C", ch, ch, "CUTLASS=0", "ARCH=sm_90")
    assert result.returncode == 0, result.stderr
    assert "-DWB_CUTLASS_FOUND=0" in nvcc_line(result, "cutlass_missing.cu")
    assert "cutlass_ampere" not in result.stdout and "-isystem" not in result.stdout


# ---- a missing tool or dependency: one line ----------------------------------------------------

@pytest.mark.parametrize("goal, setting, line", [
    ("profile-02", "NCU", r"ncu \(Nsight Compute\) not found at /nonexistent: install it with the CUDA toolkit "
                          r"\(package cuda-nsight-compute-[0-9X]+-[0-9Y]+\) or set NCU=/path/to/ncu"),
    ("sanitize", "SANITIZER", r"compute-sanitizer not found at /nonexistent: install it with the CUDA toolkit "
                              r"\(package cuda-sanitizer-[0-9X]+-[0-9Y]+\) or set SANITIZER=/path/to/compute-sanitizer")])
def test_a_missing_tool_stops_before_any_build(goal, setting, line):
    for cwd, target in [(ROOT, goal), (os.path.join(ROOT, chapter("03")), goal.split("-")[0])]:
        result = make(target, f"{setting}=/nonexistent", cwd=cwd)
        assert result.returncode == 2, result.stdout + result.stderr
        assert re.fullmatch(line, result.stderr.splitlines()[0])
        assert "nvcc" not in result.stdout


def test_the_tool_found_is_the_one_that_runs(tmp_path):
    ncu = fake_tool(str(tmp_path), "ncu", "exit 0")
    result = make("-n", "profile", f"NCU={ncu}", cwd=os.path.join(ROOT, chapter("02")))
    assert f"{ncu} --clock-control none --metrics " in result.stdout
    assert "runs on the CPU only" in make("profile-01").stderr


def test_missing_catch2_is_one_line_and_the_programs_still_build(tmp_path):
    expected = (f"missing: Catch2 (make test; the programs build without it): {SUDO}apt-get install -y catch2, "
                f"or set CATCH2_INC=/path/to/include (CATCH2_INC={tmp_path} holds no catch2/)")
    deps = make("deps", f"CATCH2_INC={tmp_path}")
    assert expected in deps.stdout.splitlines()
    ch = chapter("03")
    tests = make("-n", "-B", "-C", ch, f"test_{ch}", f"CATCH2_INC={tmp_path}")
    assert tests.returncode == 2 and expected in tests.stderr
    assert len([l for l in tests.stderr.splitlines() if "Catch2" in l]) == 1
    program = make("-n", "-B", "-C", ch, ch, f"CATCH2_INC={tmp_path}")
    assert program.returncode == 0 and "Catch2" not in program.stderr


def test_make_starts_with_the_missing_dependencies_and_stops_without_nvcc(tmp_path):
    deps = make("deps")
    for name in ("nvcc", "Catch2", "OpenBLAS", "matplotlib", "CUTLASS"):
        assert len([l for l in deps.stdout.splitlines() if re.match(r"^[a-z ()]+: " + name, l)]) == 1, name
    assert "check_deps.sh --all" in make("-n", "check-env").stdout
    expected = "missing: nvcc (the CUDA toolkit, looked for /nonexistent/nvcc): install the CUDA toolkit"
    # For real: it must stop at that line (the objects would go to a folder of their own).
    result = make("NVCC=/nonexistent/nvcc", f"WB_BUILD={tmp_path}")
    assert result.returncode == 2 and result.stdout.startswith(expected), result.stdout[:500]
    assert os.listdir(tmp_path) == []


# ---- CI runs the README's commands -------------------------------------------------------------

def readme_blocks(path):
    """{name: [lines]} of the fenced blocks after `<!-- ci:NAME -->` lines, read apart from .ci/run."""
    blocks, lines = {}, open(path, encoding="utf-8").read().splitlines()
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- ci:(\w+) -->", line)
        if m:
            j = next(j for j in range(i + 1, len(lines)) if lines[j].strip())
            assert lines[j].startswith("```"), f"{path}: block {m.group(1)} is not followed by a fence"
            blocks[m.group(1)] = lines[j + 1:lines.index("```", j + 1)]
    return blocks


def ci_show(readme=None):
    env = dict(os.environ, **({"WB_README": readme} if readme else {}))
    return subprocess.run(["bash", os.path.join(ROOT, ".ci", "run"), "--show"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)


def test_ci_runs_what_the_readme_says():
    result = ci_show()
    assert result.returncode == 0, result.stderr
    shown, name = {}, None
    for line in result.stdout.splitlines():
        if line.startswith("== "):
            name = line[3:]
            shown[name] = []
        else:
            shown[name].append(line)
    blocks = readme_blocks(os.path.join(ROOT, "README.md"))
    assert all(shown[n] == blocks[n] for n in ("setup", "test", "cutlass"))
    assert "make test" in [c.strip() for c in " && ".join(blocks["test"]).split("&&")]
    assert {"make test-07", "make CUTLASS=0 test-07"} <= set(shown["cutlass-checks"])
    assert readme_blocks(os.path.join(ROOT, "README.zh-CN.md")) == blocks


def test_a_missing_readme_block_stops_ci(tmp_path):
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    for body in (text.replace("<!-- ci:test -->\n", ""), text + "\n<!-- ci:setup -->\n```\nrm -rf /\n```\n"):
        path = tmp_path / "README.md"
        path.write_text(body, encoding="utf-8")
        result = ci_show(str(path))
        assert result.returncode == 2 and result.stdout == ""
        assert re.match(r"ci: .* has no usable block for step '\w+'", result.stderr)
