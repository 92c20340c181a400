"""pytest's settings for the workbook's Python tests (tools/test_*.py).

- Tests that need a GPU carry the marker `gpu`. Without a usable GPU they are skipped, with a reason
  that starts with wb.testrun.NO_GPU (the runner counts those apart, as it does the C++ tests'
  skips for lack of a GPU); with REQUIRE_GPU=1 a missing GPU fails them instead.
- The tools are run by the tests as `python3 -m wb ...`: PYTHONPATH gets this folder (absolute), so
  a test that runs a tool from another folder still finds the package.
"""
import functools
import os
import subprocess

import pytest

from wb import TOOLS
from wb.testrun import NO_GPU, gpu_required

os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (TOOLS, os.environ.get("PYTHONPATH")) if p)


@functools.lru_cache(maxsize=None)
def gpu_present():
    """A GPU the driver lists (nvidia-smi -L), as the GPU machine's tools see it."""
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and "GPU " in r.stdout


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a GPU; skipped without one, a failure with REQUIRE_GPU=1")


# Runs after pytest's own skip marks (a test skipped for another reason, e.g. inside a student kit,
# is not a GPU test left untested) and before the test's fixtures and class set-up.
def pytest_runtest_setup(item):
    if item.get_closest_marker("gpu") is None or gpu_present():
        return
    if gpu_required():
        pytest.fail("REQUIRE_GPU=1 but no GPU is usable (nvidia-smi -L lists none)", pytrace=False)
    pytest.skip(f"{NO_GPU} (nvidia-smi -L lists none)")
