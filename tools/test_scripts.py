"""test_scripts.py - the two set-up scripts that are not make: tools/setup.sh and
tools/check_cuda12_api.sh.

setup.sh runs apt-get with sudo only when not root, installs only what is missing, retries without
the optional package, refuses other systems, and uses pip only where apt cannot serve (another
python3, CUTLASS). Fake apt-get, sudo, dpkg-query and python3 come first on the PATH: nothing is
installed. check_cuda12_api.sh is run with fake wheels and a fake compiler that rejects a planted
name (the real check, with the real compiler and the CUDA 12.4 headers, runs in CI).

Run: python3 -m pytest tools/test_scripts.py
"""
import os
import shutil
import stat
import subprocess
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETUP = os.path.join(ROOT, "tools", "setup.sh")
CHECK = os.path.join(ROOT, "tools", "check_cuda12_api.sh")
REQUIRED = "g++ make catch2 libopenblas-dev python3 python3-pytest"
PACKAGES = REQUIRED + " python3-matplotlib python3-clang"


def fake_tool(folder, name, body='echo fake "$@"'):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, stat.S_IRWXU)
    return path


class Setup:
    """A folder of fake tools for setup.sh, and the calls they recorded."""

    def __init__(self, folder):
        self.folder = str(folder)
        self.log = os.path.join(self.folder, "calls.log")
        self.os_release = os.path.join(self.folder, "os-release")
        with open(self.os_release, "w") as f:
            f.write('PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nID_LIKE=debian\n')
        fake_tool(self.folder, "apt-get", f'echo "apt-get $*" >>{self.log}')  # records, installs nothing
        fake_tool(self.folder, "dpkg-query", "exit 1")  # nothing installed

    def run(self, *args, as_user="root", path_first=None):
        env = dict(os.environ, WB_SETUP_OS_RELEASE=self.os_release, WB_SETUP_AS=as_user,
                   PATH=os.pathsep.join(filter(None, [path_first, self.folder, os.environ["PATH"]])))
        return subprocess.run(["bash", SETUP, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def python(self, kind, missing=()):
        """A fake python3 whose sysconfig says `kind` (managed, user, venv) and which cannot import
        the modules named in `missing`."""
        folder = os.path.join(self.folder, "py")
        os.makedirs(folder, exist_ok=True)
        body = "case \"$*\" in\n  *EXTERNALLY-MANAGED*) echo " + kind + " ;;\n"
        body += "".join(f"  *'import {m}'*) exit 1 ;;\n" for m in missing)
        body += "  *) exit 0 ;;\nesac"
        return folder, fake_tool(folder, "python3", body)


def running(result):
    return [l[len("setup: running: "):] for l in result.stdout.splitlines() if l.startswith("setup: running: ")]


@pytest.fixture
def setup(tmp_path):
    return Setup(tmp_path)


def test_as_root_apt_get_update_then_install_without_sudo(setup):
    folder, _ = setup.python("user")  # has pytest and matplotlib: no pip
    result = setup.run(path_first=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert running(result)[:2] == ["apt-get update", f"env DEBIAN_FRONTEND=noninteractive apt-get install -y {PACKAGES}"]
    assert setup.calls() == ["apt-get update", f"apt-get install -y {PACKAGES}"]
    assert not any("pip" in c for c in running(result))


def test_as_a_user_through_sudo(setup):
    fake_tool(setup.folder, "sudo", f'echo "sudo $*" >>{setup.log}')
    folder, _ = setup.python("user")
    result = setup.run("--dry-run", as_user="user", path_first=folder)
    assert result.returncode == 0, result.stdout + result.stderr
    assert running(result) == ["sudo apt-get update",
                               f"sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y {PACKAGES}"]
    assert setup.calls() == [], "--dry-run ran a command"


def test_a_user_without_sudo_is_told_what_to_do(setup):
    if shutil.which("sudo"):
        pytest.skip("sudo is installed here: a PATH without it cannot be made")
    result = setup.run(as_user="user")
    assert result.returncode == 2
    assert "not root and no sudo" in result.stderr
    assert setup.calls() == []


def test_installed_packages_are_left_alone(setup):
    fake_tool(setup.folder, "dpkg-query", "printf 'install ok installed'")
    result = setup.run()
    assert result.returncode == 0, result.stderr
    assert f"setup: already installed: {PACKAGES}" in result.stdout
    assert setup.calls() == [], "apt-get ran with nothing to install"


def test_offline_machine_without_apt_matplotlib_still_succeeds(setup):
    # Everything but python3-matplotlib is installed and apt can fetch nothing (an offline machine).
    fake_tool(setup.folder, "dpkg-query",
              'case "$*" in *python3-matplotlib*) exit 1 ;; esac; printf "install ok installed"')
    fake_tool(setup.folder, "apt-get", f'echo "apt-get $*" >>{setup.log}; exit 100')
    result = setup.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "could not install python3-matplotlib (optional" in result.stdout
    assert setup.calls() == ["apt-get update", "apt-get install -y python3-matplotlib"]


def test_required_packages_are_retried_without_the_optional_one(setup):
    # Nothing installed; apt has no python3-matplotlib: the required ones alone, then success.
    fake_tool(setup.folder, "apt-get",
              f'echo "apt-get $*" >>{setup.log}; case "$*" in *python3-matplotlib*) exit 100 ;; esac')
    result = setup.run()
    assert result.returncode == 0, result.stdout + result.stderr
    assert setup.calls()[1:] == [f"apt-get install -y {PACKAGES}", f"apt-get install -y {REQUIRED}"]
    # A required package apt cannot install is a failure (exit 1).
    fake_tool(setup.folder, "apt-get", f'echo "apt-get $*" >>{setup.log}; case "$*" in *update*) ;; *) exit 100 ;; esac')
    assert setup.run().returncode == 1


def test_other_systems_are_refused(setup):
    with open(setup.os_release, "w") as f:
        f.write('PRETTY_NAME="Fedora Linux 40"\nID=fedora\n')
    result = setup.run()
    assert result.returncode == 2
    assert "Debian and Ubuntu only (this is Fedora Linux 40)" in result.stderr
    assert setup.calls() == []


@pytest.mark.parametrize("kind,flags", [("managed", "--user --break-system-packages "), ("user", "--user "),
                                        ("venv", "")])
def test_cutlass_through_pip_as_each_python3_allows(setup, kind, flags):
    folder, python = setup.python(kind)
    result = setup.run("--dry-run", "--cutlass", path_first=folder)
    assert result.returncode == 0, result.stderr
    assert running(result)[-1] == f"{python} -m pip install {flags}--no-deps nvidia-cutlass==4.2.0.0"
    assert ("PEP 668" in result.stdout) == (kind == "managed")
    assert not any("pip" in c for c in running(setup.run("--dry-run", path_first=folder)))


@pytest.mark.parametrize("module", ["pytest", "matplotlib"])
def test_python_modules_through_pip_only_for_another_python3(setup, module):
    folder, python = setup.python("user", missing=(module,))
    result = setup.run("--dry-run", path_first=folder)
    assert result.returncode == 0, result.stderr
    assert running(result)[-1] == f"{python} -m pip install {module}"


# ---- check_cuda12_api.sh -------------------------------------------------------------------------

class ApiCheck:
    def __init__(self, folder):
        self.folder = str(folder)
        wheels = os.path.join(self.folder, "wheels")
        os.makedirs(wheels)
        for wheel, name, text in [
                ("nvidia_cuda_runtime_cu12-12.4.127-py3-none-any.whl", "nvidia/cuda_runtime/include/cuda_runtime_api.h",
                 "#define CUDART_VERSION 12040\n"),
                ("nvidia_cublas_cu12-12.4.5.8-py3-none-any.whl", "nvidia/cublas/include/cublas_v2.h", "\n")]:
            with zipfile.ZipFile(os.path.join(wheels, wheel), "w") as z:
                z.writestr(name, text)
        # A compiler that knows no API newer than 12.4: a file naming one fails, as with the headers.
        nvcc = fake_tool(self.folder, "nvcc", (
            'case "$*" in *--version*) echo "Cuda compilation tools, release 13.0, V13.0.0"; exit 0 ;; esac\n'
            'for a; do case "$a" in *.cu|*.cpp) f=$a ;; esac; done\n'
            'if grep -q "cudaStreamGetDevice\\|planted_api_of_12_5" "$f"; then '
            'echo "$f(1): error: identifier is undefined"; exit 1; fi'))
        self.env = dict(os.environ, CUDA12_WHEELS=wheels, NVCC=nvcc, CXX=nvcc)

    def source(self, name, text):
        path = os.path.join(self.folder, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run(self, *args):
        return subprocess.run(["bash", CHECK, *args], cwd=ROOT, env=self.env, capture_output=True, text=True,
                              timeout=60)


@pytest.fixture
def api(tmp_path):
    return ApiCheck(tmp_path)


def test_a_newer_api_fails_the_file_and_the_check(api):
    good = api.source("good.cu", "int f() { return cudaGetDevice(nullptr); }\n")
    bad = api.source("bad.cu", "int g() { return planted_api_of_12_5(); }\n")
    result = api.run(good, bad)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "probes as expected" in result.stdout
    assert f"ok      {good}" in result.stdout
    assert f"FAILED  {bad}" in result.stdout
    assert "2 file(s) compiled against the CUDA 12.4 headers, 1 failed" in result.stdout
    assert api.run(good).returncode == 0


def test_known_files_are_counted_apart_until_they_compile(api):
    good = api.source("good.cu", "int f();\n")
    bad = api.source("bad.cu", "int g() { return planted_api_of_12_5(); }\n")
    result = api.run("--known", bad, good, bad)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{bad} needs a newer CUDA than 12.4" in result.stdout
    result = api.run("--known", good, good)
    assert result.returncode == 1
    assert f"{good} now compiles against 12.4" in result.stderr


def test_cutlass_files_are_left_out_through_their_headers(api):
    api.source("gemms.cuh", "#include <cutlass/gemm/device/gemm.h>\n")
    uses = api.source("uses.cu", '#include "gemms.cuh"\nint g() { return planted_api_of_12_5(); }\n')
    plain = api.source("plain.cu", "int f();\n")
    result = api.run(uses, plain)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"left out {uses} (CUTLASS" in result.stdout


def test_a_compiler_that_ignores_the_headers_is_caught(api):
    # Were the 12.4 headers not in force, the 12.8 probe would compile: the check refuses to run.
    fake_tool(api.folder, "nvcc", 'case "$*" in *--version*) echo "release 13.0" ;; esac; exit 0')
    result = api.run(api.source("good.cu", "int f();\n"))
    assert result.returncode == 2
    assert "the 12.4 headers are not the ones in force" in result.stderr
