#!/usr/bin/env python3
"""test_make_hints.py - the make targets a student types, from where the notes say to type them.

A mistyped chapter number gets one line that names the right target and exit status 2; the targets
the notes use from the top (make 03, make test-03, make check-env, make profile-02) also work inside
a chapter folder; profile and sanitize without their tool say which one is missing and how to get
it, before anything is built. No GPU and no compiler run: every build is only printed (make -n).

The set-up: each missing dependency (nvcc, Catch2, OpenBLAS, matplotlib, CUTLASS) gets one line
with the command that installs it, from `make`, `make check-env` and `make deps` alike (missing
ones simulated: an empty CATCH2_INC, a compiler that links nothing, a python3 without matplotlib);
.ci/run runs the README's marked blocks and nothing else; tools/setup.sh runs apt-get with sudo only
when not root, installs only what is missing, and pip only where apt cannot serve (fake apt-get,
sudo, dpkg-query and python3 on the PATH: nothing is installed).

Run: tools/test_make_hints.py. Ends with "[test_make_hints] test cases: P passed, F failed,
S skipped" (tools/wb_unittest.py). Exit status 1 on a failure.
"""
import glob
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import unittest

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
import wb_unittest  # noqa: E402

CHAPTERS = sorted(os.path.basename(p.rstrip("/")) for p in glob.glob(os.path.join(ROOT, "[0-9][0-9]_*/")))
NUMBERS = [c[:2] for c in CHAPTERS]


def chapter(number):
    return next(c for c in CHAPTERS if c.startswith(number + "_"))


def make(*args, cwd=ROOT, env_extra=None):
    """Runs make with a clean make environment (this test may itself run under make)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    env.update(env_extra or {})
    # ARCH is fixed so that no nvidia-smi runs and the printed commands are the same everywhere.
    return subprocess.run(["make", "--no-print-directory", "ARCH=sm_90", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def fake_tool(folder, name, body='echo fake "$@"'):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, stat.S_IRWXU)
    return path


# The install command a missing-dependency line gives this user: sudo only when not root and present.
SUDO = "" if os.geteuid() == 0 or not shutil.which("sudo") else "sudo "


class BadChapterNumbers(unittest.TestCase):
    def assert_hint(self, result, number, meant):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")
        hint = [line for line in result.stderr.splitlines() if line.startswith("no chapter")]
        self.assertEqual(len(hint), 1, result.stderr)
        self.assertIn(f"no chapter '{number}': chapters are {' '.join(NUMBERS)}", hint[0])
        if meant:
            self.assertIn(f"did you mean `make {meant}`?", hint[0])
        else:
            self.assertNotIn("did you mean", hint[0])
            self.assertIn("`make help` lists the targets", hint[0])

    def test_one_digit_numbers_name_the_chapter_meant(self):
        for goal, number, meant in [("3", "3", "03"), ("run-3", "3", "run-03"), ("test-3", "3", "test-03"),
                                    ("profile-2", "2", "profile-02"), ("sanitize-4", "4", "sanitize-04"),
                                    ("tune-5", "5", "tune-05")]:
            with self.subTest(goal=goal):
                self.assert_hint(make(goal), number, meant)

    def test_numbers_of_no_chapter(self):
        # One digit d whose 0d is no chapter either (there is none once chapters 00-09 all exist).
        lone = [str(d) for d in range(10) if f"0{d}" not in NUMBERS][-1:]
        for goal, number in [("99", "99"), ("run-99", "99"), ("test-foo", "foo")] + [(d, d) for d in lone]:
            with self.subTest(goal=goal):
                self.assert_hint(make(goal), number, None)

    def test_inside_a_chapter_folder_too(self):
        result = make("3", cwd=os.path.join(ROOT, chapter("02")))
        self.assertEqual(result.returncode, 2)
        self.assertIn("did you mean `make 03`?", result.stderr)
        result = make("test-3", cwd=os.path.join(ROOT, chapter("02")))
        self.assertIn("did you mean `make test-03`?", result.stderr)


class RealTargetsStillWork(unittest.TestCase):
    def test_chapter_targets_recurse_into_the_chapter(self):
        ch = chapter("03")
        for goal, expected in [("03", f"-C {ch} {ch}"), ("run-03", f"-C {ch} run"),
                               ("test-03", f"-C {ch} test_{ch}"), ("profile-03", f"-C {ch} profile"),
                               ("sanitize-03", f"-C {ch} sanitize")]:
            with self.subTest(goal=goal):
                result = make("-n", goal)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(expected, result.stdout)
                self.assertNotIn("no chapter", result.stderr)

    def test_files_and_help_are_not_caught(self):
        result = make("README.md")
        self.assertEqual(result.returncode, 0, result.stderr)  # a file with no rule is up to date
        self.assertNotIn("no chapter", result.stderr)
        result = make("help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("make profile-NN", result.stdout)
        self.assertIn("NCU=", result.stdout)


class InsideAChapterFolder(unittest.TestCase):
    """The notes' top-level commands, typed after `cd NN_name`, are handed to the top."""

    def test_top_level_targets_are_forwarded(self):
        here = os.path.join(ROOT, chapter("02"))
        ch03, ch00 = chapter("03"), chapter("00")
        for goal, expected in [("03", f"-C {ch03} {ch03}"), ("test-03", f"-C {ch03} test_{ch03}"),
                               ("run-03", f"-C {ch03} run"), ("profile-02", "--clock-control none"),
                               ("sanitize-02", "--tool racecheck"), ("check-env", f"./{ch00}/{ch00}")]:
            with self.subTest(goal=goal):
                result = make("-n", goal, cwd=here)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(f"-C {ROOT} {goal}", result.stdout)
                self.assertIn(expected, result.stdout)

    def test_dependency_targets_are_forwarded(self):
        # The README's `make deps` (and the two it is made of), and chapter 08's `make measure-08`,
        # typed after `cd NN_name`.
        here = os.path.join(ROOT, chapter("05"))
        for goal, expected in [("deps", "check_deps.sh --all"), ("deps-all", "check_deps.sh --all"),
                               ("deps-missing", "check_deps.sh"), ("measure-08", "--part all --out results/08")]:
            with self.subTest(goal=goal):
                result = make("-n", goal, cwd=here)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertIn(f"-C {ROOT} {goal}", result.stdout)
                self.assertIn(expected, result.stdout)
        self.assertIn("make deps", make("help", cwd=here).stdout)

    def test_own_number_and_help(self):
        here = os.path.join(ROOT, chapter("02"))
        result = make("-n", "02", cwd=here)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn(f"-C {ROOT} 02", result.stdout)  # built here, not handed to the top
        result = make("help", cwd=here)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("make test-NN", result.stdout)
        self.assertIn("make check-env", result.stdout)


class MissingTools(unittest.TestCase):
    NCU_LINE = re.compile(r"^ncu \(Nsight Compute\) not found at /nonexistent: install it with the CUDA "
                          r"toolkit \(package cuda-nsight-compute-[0-9X]+-[0-9Y]+\) or set NCU=/path/to/ncu$")
    SANITIZER_LINE = re.compile(r"^compute-sanitizer not found at /nonexistent: install it with the CUDA "
                                r"toolkit \(package cuda-sanitizer-[0-9X]+-[0-9Y]+\) or set "
                                r"SANITIZER=/path/to/compute-sanitizer$")

    def assert_refused(self, result, pattern):
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        first = result.stderr.splitlines()[0] if result.stderr else ""
        self.assertRegex(first, pattern)
        self.assertNotIn("nvcc", result.stdout)  # refused before anything was built
        self.assertNotIn("Error 127", result.stderr)

    def test_profile_without_ncu(self):
        here = os.path.join(ROOT, chapter("02"))
        self.assert_refused(make("profile", "NCU=/nonexistent", cwd=here), self.NCU_LINE)
        self.assert_refused(make("profile-02", "NCU=/nonexistent"), self.NCU_LINE)
        self.assert_refused(make("profile-02", "NCU=/nonexistent", cwd=here), self.NCU_LINE)

    def test_sanitize_without_compute_sanitizer(self):
        here = os.path.join(ROOT, chapter("03"))
        self.assert_refused(make("sanitize", "SANITIZER=/nonexistent", cwd=here), self.SANITIZER_LINE)
        self.assert_refused(make("sanitize-03", "SANITIZER=/nonexistent"), self.SANITIZER_LINE)
        self.assert_refused(make("sanitize", "SANITIZER=/nonexistent"), self.SANITIZER_LINE)

    def test_a_tool_is_found_on_the_path_or_where_named(self):
        with tempfile.TemporaryDirectory() as folder:
            ncu = fake_tool(folder, "ncu")
            sanitizer = fake_tool(folder, "compute-sanitizer")
            result = make("help", env_extra={"PATH": folder + os.pathsep + os.environ.get("PATH", "")})
            self.assertIn(f"Now: {ncu}, {sanitizer}", result.stdout)
            result = make("help", f"NCU={ncu}", "SANITIZER=/nonexistent")
            self.assertIn(f"Now: {ncu}, compute-sanitizer not found", result.stdout)
            # The command that runs is the tool found, with the chapter's metrics.
            result = make("-n", "profile", f"NCU={ncu}", cwd=os.path.join(ROOT, chapter("02")))
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(f"{ncu} --clock-control none --metrics ", result.stdout)

    def test_cpu_chapter_says_why(self):
        result = make("profile-01")
        self.assertEqual(result.returncode, 2)
        self.assertIn("runs on the CPU only", result.stderr)


class DependencyLines(unittest.TestCase):
    """One line per missing dependency, and the command that installs it (tools/check_deps.sh)."""
    KINDS = ("found: ", "missing: ", "missing (optional): ", "off: ")

    def deps(self, *args, env_extra=None):
        result = make("deps", *args, env_extra=env_extra)
        for line in result.stdout.splitlines():
            self.assertTrue(line.startswith(self.KINDS), line)
        return result

    def line(self, result, name):
        lines = [l for l in result.stdout.splitlines() if l.split(": ", 1)[-1].startswith(name)
                 or re.match(r"^[a-z ()]+: " + re.escape(name), l)]
        self.assertEqual(len(lines), 1, f"{name}: {result.stdout}")
        return lines[0]

    def test_every_dependency_has_one_line(self):
        result = self.deps()
        self.assertEqual(result.returncode, 0, result.stderr)
        for name in ("nvcc", "Catch2", "OpenBLAS", "matplotlib", "CUTLASS"):
            with self.subTest(name=name):
                self.line(result, name)

    def test_missing_catch2_is_the_same_line_everywhere(self):
        with tempfile.TemporaryDirectory() as empty:
            expected = (f"missing: Catch2 (make test; the programs build without it): {SUDO}apt-get install -y "
                        f"catch2, or set CATCH2_INC=/path/to/include (CATCH2_INC={empty} holds no catch2/)")
            result = self.deps(f"CATCH2_INC={empty}")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(self.line(result, "Catch2"), expected)
            # A test build stops with that line; the chapter's program still builds (-B: every
            # recipe is expanded, -n: none runs).
            ch = chapter("03")
            test_build = make("-n", "-B", "-C", ch, f"test_{ch}", f"CATCH2_INC={empty}")
            self.assertEqual(test_build.returncode, 2, test_build.stdout[-500:] + test_build.stderr)
            self.assertIn(expected, test_build.stderr)
            self.assertEqual(len([l for l in test_build.stderr.splitlines() if "Catch2" in l]), 1)
            program = make("-n", "-B", "-C", ch, ch, f"CATCH2_INC={empty}")
            self.assertEqual(program.returncode, 0, program.stderr)
            self.assertNotIn("Catch2", program.stderr)
            common = make("-n", "-B", "-C", "common", "tests", f"CATCH2_INC={empty}")
            self.assertEqual(common.returncode, 2)
            self.assertIn(expected, common.stderr)

    def test_missing_openblas_is_optional(self):
        with tempfile.TemporaryDirectory() as folder:
            cxx = fake_tool(folder, "g++-that-links-nothing", "exit 1")
            result = self.deps(f"CXX={cxx}")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(self.line(result, "OpenBLAS"),
                             "missing (optional): OpenBLAS (chapter 01's BLAS baseline; without it that column "
                             f"shows -): {SUDO}apt-get install -y libopenblas-dev")

    def test_matplotlib_for_the_python3_make_report_uses(self):
        with tempfile.TemporaryDirectory() as folder:
            python = fake_tool(folder, "python3", "exit 1")  # imports nothing
            result = self.deps(env_extra={"PATH": folder + os.pathsep + os.environ["PATH"]})
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(self.line(result, "matplotlib"),
                             f"missing (optional): matplotlib for {python} (make report's plots; the tables "
                             f"are made without it): {python} -m pip install matplotlib")

    def test_cutlass_missing_found_and_off(self):
        with tempfile.TemporaryDirectory() as folder:
            result = self.deps(f"CUTLASS_INC={folder}")
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertEqual(self.line(result, "CUTLASS"),
                             "missing (optional): CUTLASS (chapter 07's CUTLASS rows; the chapter builds and tests "
                             "without them): bash tools/setup.sh --cutlass, or set CUTLASS_INC=/path/to/cutlass/include")
            os.makedirs(os.path.join(folder, "cutlass"))
            open(os.path.join(folder, "cutlass", "cutlass.h"), "w").close()
            self.assertEqual(self.line(self.deps(f"CUTLASS_INC={folder}"), "CUTLASS"), f"found: CUTLASS ({folder})")
            self.assertTrue(self.line(self.deps(f"CUTLASS_INC={folder}", "CUTLASS=0"), "CUTLASS").startswith(
                "off: CUTLASS (CUTLASS=0)"))

    def test_missing_nvcc_stops_make_before_any_compile(self):
        expected = "missing: nvcc (the CUDA toolkit, looked for /nonexistent/nvcc): install the CUDA toolkit"
        result = make("deps", "NVCC=/nonexistent/nvcc")
        self.assertEqual(result.returncode, 2)
        self.assertIn(expected, result.stdout)
        # A real `make`: the line, then it stops. Were it to go on, the host compiler would rebuild the
        # common library's objects, so they are pointed at a folder of their own.
        with tempfile.TemporaryDirectory() as build:
            result = make("NVCC=/nonexistent/nvcc", f"WB_BUILD={build}")
            self.assertEqual(os.listdir(build), [])
        self.assertEqual(result.returncode, 2, result.stdout[-500:])
        self.assertTrue(result.stdout.startswith(expected), result.stdout[:500])
        self.assertNotIn("/nonexistent/nvcc -", result.stdout)

    def first_line_of_make_n(self):
        """The first command `make -n` prints; the rest (every chapter, slow to print) is not awaited."""
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
        proc = subprocess.Popen(["make", "--no-print-directory", "ARCH=sm_90", "-n"], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        try:
            return proc.stdout.readline()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            proc.stdout.close()

    def test_make_and_check_env_start_with_the_lines(self):
        first = self.first_line_of_make_n()
        self.assertIn("tools/check_deps.sh", first)
        self.assertNotIn("--all", first)
        lines = make("-n", "check-env").stdout.splitlines()
        at = [i for i, l in enumerate(lines) if "tools/check_deps.sh --all" in l]
        runs = [i for i, l in enumerate(lines) if f"./{chapter('00')}/{chapter('00')}" in l]
        self.assertEqual(len(at), 1, lines)
        self.assertTrue(runs and at[0] < runs[0], lines)
        self.assertNotIn("check_deps", make("-n", "03").stdout)  # one chapter: no lines


def readme_blocks(path):
    """{name: [lines]} of the fenced blocks after `<!-- ci:NAME -->` lines, read independently of .ci/run."""
    blocks, lines = {}, open(path, encoding="utf-8").read().splitlines()
    for i, line in enumerate(lines):
        m = re.fullmatch(r"<!-- ci:(\w+) -->", line)
        if m:
            j = i + 1
            while not lines[j].strip():
                j += 1
            assert lines[j].startswith("```"), f"{path}: block {m.group(1)} is not followed by a fence"
            end = lines.index("```", j + 1)
            blocks[m.group(1)] = lines[j + 1:end]
    return blocks


class ReadmeCommands(unittest.TestCase):
    """.ci/run runs the README's set-up and test commands verbatim, and stops when they are not there."""
    CI = os.path.join(ROOT, ".ci", "run")

    def show(self, readme=None):
        env = dict(os.environ, **({"WB_README": readme} if readme else {}))
        return subprocess.run(["bash", self.CI, "--show"], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=60)

    def sections(self, text):
        out, name = {}, None
        for line in text.splitlines():
            if line.startswith("== "):
                name = line[3:]
                out[name] = []
            else:
                out[name].append(line)
        return out

    def test_ci_runs_what_the_readme_says(self):
        result = self.show()
        self.assertEqual(result.returncode, 0, result.stderr)
        shown = self.sections(result.stdout)
        blocks = readme_blocks(os.path.join(ROOT, "README.md"))
        for name in ("setup", "test", "cutlass"):
            with self.subTest(block=name):
                self.assertEqual(shown[name], blocks[name])
        self.assertEqual(blocks["setup"], ["bash tools/setup.sh"])
        self.assertIn("make test", [c.strip() for c in " && ".join(blocks["test"]).split("&&")])
        self.assertIn("make CUTLASS=0 test-07", shown["cutlass-checks"])
        self.assertIn("make test-07", shown["cutlass-checks"])
        self.assertTrue(shown["cuda12"][0].startswith("bash tools/check_cuda12_api.sh"), shown["cuda12"])
        # Every file CI lets fail the CUDA 12.4 check is one the README names as needing more.
        readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
        for known in re.findall(r"--known (\S+)", shown["cuda12"][0]):
            self.assertIn(known.split("/")[0], readme)

    def test_the_chinese_readme_gives_the_same_commands(self):
        self.assertEqual(readme_blocks(os.path.join(ROOT, "README.zh-CN.md")),
                         readme_blocks(os.path.join(ROOT, "README.md")))

    def test_a_missing_or_broken_block_stops_ci(self):
        text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
        planted = {
            "no test marker": text.replace("<!-- ci:test -->\n", ""),
            "marker not followed by a fence": text.replace("<!-- ci:setup -->\n", "<!-- ci:setup -->\nrun this:\n"),
            "marker twice": text + "\n<!-- ci:setup -->\n```\nrm -rf /\n```\n",
            "empty block": text.replace("<!-- ci:cutlass -->\n```\n" + "\n".join(readme_blocks(
                os.path.join(ROOT, "README.md"))["cutlass"]) + "\n```", "<!-- ci:cutlass -->\n```\n```"),
        }
        with tempfile.TemporaryDirectory() as folder:
            for what, body in planted.items():
                with self.subTest(planted=what):
                    self.assertNotEqual(body, text)
                    path = os.path.join(folder, "README.md")
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(body)
                    result = self.show(path)
                    self.assertEqual(result.returncode, 2, result.stdout)
                    self.assertRegex(result.stderr, r"^ci: .* has no usable block for step '\w+'")
                    self.assertEqual(result.stdout, "")


class SetupScript(unittest.TestCase):
    """tools/setup.sh with fake apt-get, sudo, dpkg-query and python3 first on the PATH."""
    SETUP = os.path.join(ROOT, "tools", "setup.sh")
    PACKAGES = "g++ make catch2 libopenblas-dev python3 python3-matplotlib"

    def setUp(self):
        self.folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.folder)
        self.log = os.path.join(self.folder, "calls.log")
        self.os_release = os.path.join(self.folder, "os-release")
        with open(self.os_release, "w") as f:
            f.write('PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nID_LIKE=debian\n')
        # Records its arguments: the calls can be read back and nothing is installed.
        fake_tool(self.folder, "apt-get", f'echo "apt-get $*" >>{self.log}')
        fake_tool(self.folder, "dpkg-query", "exit 1")  # nothing installed

    def setup(self, *args, as_user="root", path_first=None, env_extra=None):
        env = dict(os.environ, WB_SETUP_OS_RELEASE=self.os_release, WB_SETUP_AS=as_user,
                   PATH=os.pathsep.join(filter(None, [path_first, self.folder, os.environ["PATH"]])))
        env.update(env_extra or {})
        return subprocess.run(["bash", self.SETUP, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)

    def running(self, result):
        return [l[len("setup: running: "):] for l in result.stdout.splitlines() if l.startswith("setup: running: ")]

    def test_as_root_apt_get_update_then_install_without_sudo(self):
        result = self.setup()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(self.running(result)[:2], [
            "apt-get update", f"env DEBIAN_FRONTEND=noninteractive apt-get install -y {self.PACKAGES}"])
        with open(self.log) as f:
            self.assertEqual(f.read().splitlines(), ["apt-get update", f"apt-get install -y {self.PACKAGES}"])
        self.assertIn("found: ", result.stdout)  # it ends with check_deps.sh --all

    def test_as_a_user_through_sudo(self):
        fake_tool(self.folder, "sudo", f'echo "sudo $*" >>{self.log}')
        result = self.setup("--dry-run", as_user="user")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(self.running(result), [
            "sudo apt-get update", f"sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y {self.PACKAGES}"])
        self.assertFalse(os.path.exists(self.log), "--dry-run ran a command")

    def test_a_user_without_sudo_is_told_what_to_do(self):
        if shutil.which("sudo"):
            self.skipTest("sudo is installed here: a PATH without it cannot be made")
        result = self.setup(as_user="user")
        self.assertEqual(result.returncode, 2)
        self.assertIn("not root and no sudo", result.stderr)
        self.assertFalse(os.path.exists(self.log))

    def test_installed_packages_are_left_alone(self):
        fake_tool(self.folder, "dpkg-query", "printf 'install ok installed'")
        result = self.setup()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"setup: already installed: {self.PACKAGES}", result.stdout)
        self.assertFalse(os.path.exists(self.log), "apt-get ran with nothing to install")

    def test_offline_machine_without_apt_matplotlib_still_succeeds(self):
        # Everything but python3-matplotlib is installed and apt can fetch nothing (the GPU machine).
        fake_tool(self.folder, "dpkg-query", 'case "$*" in *python3-matplotlib*) exit 1 ;; esac; printf "install ok installed"')
        fake_tool(self.folder, "apt-get", f'echo "apt-get $*" >>{self.log}; exit 100')
        result = self.setup()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("could not install python3-matplotlib (optional", result.stdout)
        with open(self.log) as f:
            self.assertEqual(f.read().splitlines(), ["apt-get update", "apt-get install -y python3-matplotlib"])

    def test_required_packages_are_retried_without_the_optional_one(self):
        # Nothing installed; apt has no python3-matplotlib: the required ones alone, then success.
        fake_tool(self.folder, "apt-get",
                  f'echo "apt-get $*" >>{self.log}; case "$*" in *python3-matplotlib*) exit 100 ;; esac')
        result = self.setup()
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        with open(self.log) as f:
            self.assertEqual(f.read().splitlines()[1:], [f"apt-get install -y {self.PACKAGES}",
                                                         "apt-get install -y g++ make catch2 libopenblas-dev python3"])
        # A required package apt cannot install is a failure (exit 1).
        fake_tool(self.folder, "apt-get", f'echo "apt-get $*" >>{self.log}; case "$*" in *update*) ;; *) exit 100 ;; esac')
        self.assertEqual(self.setup().returncode, 1)

    def test_other_systems_are_refused(self):
        with open(self.os_release, "w") as f:
            f.write('PRETTY_NAME="Fedora Linux 40"\nID=fedora\n')
        result = self.setup()
        self.assertEqual(result.returncode, 2)
        self.assertIn("Debian and Ubuntu only (this is Fedora Linux 40)", result.stderr)
        self.assertFalse(os.path.exists(self.log))

    def fake_python(self, kind, has_matplotlib=True):
        folder = os.path.join(self.folder, "py")
        os.makedirs(folder, exist_ok=True)
        body = ("case \"$*\" in\n  *EXTERNALLY-MANAGED*) echo " + kind + " ;;\n"
                + ("" if has_matplotlib else "  *'import matplotlib'*) exit 1 ;;\n") + "  *) exit 0 ;;\nesac")
        return folder, fake_tool(folder, "python3", body)

    def test_cutlass_through_pip_as_each_python3_allows(self):
        spec = "--no-deps nvidia-cutlass==4.2.0.0"
        for kind, flags in [("managed", "--user --break-system-packages "), ("user", "--user "), ("venv", "")]:
            with self.subTest(python=kind):
                folder, python = self.fake_python(kind)
                result = self.setup("--dry-run", "--cutlass", path_first=folder)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(self.running(result)[-1], f"{python} -m pip install {flags}{spec}")
                self.assertEqual("PEP 668" in result.stdout, kind == "managed")
        folder, _ = self.fake_python("user")
        self.assertFalse(any("pip" in c for c in self.running(self.setup("--dry-run", path_first=folder))))

    def test_matplotlib_through_pip_only_for_another_python3(self):
        folder, python = self.fake_python("user", has_matplotlib=False)
        result = self.setup("--dry-run", path_first=folder)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.running(result)[-1], f"{python} -m pip install matplotlib")


class CudaApiCheck(unittest.TestCase):
    """tools/check_cuda12_api.sh's own logic, with fake wheels and a fake compiler that rejects a
    planted name (the real check, with the real compiler and headers, runs in CI)."""
    SCRIPT = os.path.join(ROOT, "tools", "check_cuda12_api.sh")

    def setUp(self):
        self.folder = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.folder)
        import zipfile
        wheels = os.path.join(self.folder, "wheels")
        os.makedirs(wheels)
        for wheel, name, text in [
                ("nvidia_cuda_runtime_cu12-12.4.127-py3-none-any.whl", "nvidia/cuda_runtime/include/cuda_runtime_api.h",
                 "#define CUDART_VERSION 12040\n"),
                ("nvidia_cublas_cu12-12.4.5.8-py3-none-any.whl", "nvidia/cublas/include/cublas_v2.h", "\n")]:
            with zipfile.ZipFile(os.path.join(wheels, wheel), "w") as z:
                z.writestr(name, text)
        # A compiler that knows no API newer than 12.4: a file naming one fails, as with the headers.
        self.nvcc = fake_tool(self.folder, "nvcc", (
            'case "$*" in *--version*) echo "Cuda compilation tools, release 13.0, V13.0.0"; exit 0 ;; esac\n'
            'for a; do case "$a" in *.cu|*.cpp) f=$a ;; esac; done\n'
            'if grep -q "cudaStreamGetDevice\\|planted_api_of_12_5" "$f"; then echo "$f(1): error: identifier is undefined"; exit 1; fi'))
        self.env = dict(os.environ, CUDA12_WHEELS=wheels, NVCC=self.nvcc, CXX=self.nvcc)

    def source(self, name, text):
        path = os.path.join(self.folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def check(self, *args):
        return subprocess.run(["bash", self.SCRIPT, *args], cwd=ROOT, env=self.env, capture_output=True, text=True,
                              timeout=60)

    def test_a_newer_api_fails_the_file_and_the_check(self):
        good = self.source("good.cu", "int f() { return cudaGetDevice(nullptr); }\n")
        bad = self.source("bad.cu", "int g() { return planted_api_of_12_5(); }\n")
        result = self.check(good, bad)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("probes as expected", result.stdout)
        self.assertIn(f"ok      {good}", result.stdout)
        self.assertIn(f"FAILED  {bad}", result.stdout)
        self.assertIn("2 file(s) compiled against the CUDA 12.4 headers, 1 failed", result.stdout)
        self.assertEqual(self.check(good).returncode, 0)

    def test_known_files_are_counted_apart_until_they_compile(self):
        good = self.source("good.cu", "int f();\n")
        bad = self.source("bad.cu", "int g() { return planted_api_of_12_5(); }\n")
        result = self.check("--known", bad, good, bad)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"{bad} needs a newer CUDA than 12.4", result.stdout)
        result = self.check("--known", good, good)
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"{good} now compiles against 12.4", result.stderr)

    def test_cutlass_files_are_left_out_through_their_headers(self):
        self.source("gemms.cuh", "#include <cutlass/gemm/device/gemm.h>\n")
        uses = self.source("uses.cu", '#include "gemms.cuh"\nint g() { return planted_api_of_12_5(); }\n')
        plain = self.source("plain.cu", "int f();\n")
        result = self.check(uses, plain)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"left out {uses} (CUTLASS", result.stdout)

    def test_a_compiler_that_ignores_the_headers_is_caught(self):
        # Were the 12.4 headers not in force, the 12.8 probe would compile: the check refuses to run.
        fake_tool(self.folder, "nvcc", 'case "$*" in *--version*) echo "release 13.0" ;; esac; exit 0')
        result = self.check(self.source("good.cu", "int f();\n"))
        self.assertEqual(result.returncode, 2)
        self.assertIn("the 12.4 headers are not the ones in force", result.stderr)


if __name__ == "__main__":
    sys.exit(wb_unittest.run_module(__name__, "test_make_hints"))
