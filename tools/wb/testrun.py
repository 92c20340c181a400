"""wb.testrun - `python3 -m wb test TEST...` (make test, make test-NN): runs the workbook's tests and
adds them all up in one closing line, "tests: N passed, N failed, N skipped" (test cases). CI and
the tests read that line: its form stays as it is.

A TEST is a Catch2 test binary (run from its own folder; common/test_main.cpp appends its counts to
the file WB_TEST_SUMMARY names, as "NAME P F S G", G being the skips that lacked a GPU) or a Python
test file; the Python files run together in one pytest session in this process (tools/conftest.py
has the GPU marker). A binary that is missing, crashes or reports no counts counts as one failed
test case; so does a Python file pytest cannot collect, and the whole Python part when pytest is
not installed.

When test cases were skipped, a line before the last says so in words: those kernels were not
tested at all, which "0 failed" hides. Skips for another reason (a GPU too old for the test,
CUTLASS not built, a tool missing) print their reasons above.
Exit status: 0 when nothing failed, 1 otherwise.
"""
import os
import subprocess
import sys
import tempfile

from wb import ROOT, add_command

NO_GPU = "no usable GPU"


def gpu_required():
    """REQUIRE_GPU=1 (any value but empty and 0): a missing GPU is a failure, not a skip."""
    value = os.environ.get("REQUIRE_GPU", "")
    return value not in ("", "0")


class Tally:
    def __init__(self):
        self.passed = self.failed = self.skipped = self.gpu_skipped = 0

    def add(self, passed, failed, skipped, gpu_skipped=0):
        self.passed += passed
        self.failed += failed
        self.skipped += skipped
        self.gpu_skipped += gpu_skipped


def run_binary(path, tally):
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        print(f"run_tests: {path} is missing (build failed?)")
        tally.add(0, 1, 0)
        return
    print(f"== {path}", flush=True)
    with tempfile.NamedTemporaryFile("r", prefix="wb-test-summary.", suffix=".txt") as summary:
        env = dict(os.environ, WB_TEST_SUMMARY=summary.name)
        rc = subprocess.call(["./" + os.path.basename(path)], cwd=os.path.dirname(path) or ".", env=env)
        fields = summary.read().split()
    try:
        p, f, s = (int(x) for x in fields[1:4])
        g = int(fields[4]) if len(fields) > 4 else 0
    except ValueError:
        fields = []
    if len(fields) < 4:
        print(f"run_tests: {path} ended (status {rc}) without reporting its counts")
        tally.add(0, 1, 0)
        return
    tally.add(p, f, s, g)
    if rc != 0 and f == 0:
        print(f"run_tests: {path} exited with status {rc}")
        tally.add(0, 1, 0)


class PytestCounts:
    """A pytest plugin: each test's outcome over its setup, call and teardown (a failure in any phase
    fails it), and each file pytest could not collect as one failed case."""

    def __init__(self):
        self.outcome = {}
        self.no_gpu = set()

    def pytest_runtest_logreport(self, report):
        before = self.outcome.get(report.nodeid)
        if report.failed:
            self.outcome[report.nodeid] = "failed"
        elif report.skipped and before != "failed":
            self.outcome[report.nodeid] = "skipped"
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            if NO_GPU in reason:
                self.no_gpu.add(report.nodeid)
        elif report.when == "call" and before is None:
            self.outcome[report.nodeid] = "passed"

    def pytest_collectreport(self, report):
        if report.failed:
            self.outcome["collect:" + report.nodeid] = "failed"

    def counts(self):
        values = list(self.outcome.values())
        return values.count("passed"), values.count("failed"), values.count("skipped"), len(self.no_gpu)


def run_pytest(files, tally):
    print(f"== pytest {' '.join(files)}", flush=True)
    try:
        import pytest
    except ImportError:
        print(f"run_tests: pytest is not installed for {sys.executable} (bash tools/setup.sh installs it): "
              f"{len(files)} Python test file(s) not run")
        tally.add(0, 1, 0)
        return
    plugin = PytestCounts()
    rc = pytest.main(["-rfEs", "-p", "no:cacheprovider", *files], plugins=[plugin])
    p, f, s, g = plugin.counts()
    print(f"[pytest] test cases: {p} passed, {f} failed, {s} skipped", flush=True)
    tally.add(p, f, s, g)
    if rc not in (0, 5) and f == 0:  # 5: no test collected, e.g. a file of skipped classes only
        print(f"run_tests: pytest exited with status {rc}")
        tally.add(0, 1, 0)


def empty_regions(root):
    """(empty, total) TODO(student) regions of a starter kit's sources, or None outside a kit. A region
    is empty while it holds no code (comments and blank lines do not count)."""
    from wb import kit as sk
    from wb.grade import is_blank
    if not sk.is_kit(root):
        return None
    empty = total = 0
    for p in sk.repo_files(root):
        if not sk.is_source(p):
            continue
        text = sk.read_text(os.path.join(root, p))
        if text is None or "TODO(student)" not in text:
            continue
        lines = sk.split_lines(text)
        try:
            todos = [t for t in sk.parse_todos(text, p) if t.kind == sk.SOLUTION]
        except sk.KitError:
            continue  # damaged markers: the grader says so; here they count as nothing
        total += len(todos)
        empty += sum(is_blank("".join(lines[t.begin + 1:t.end])) for t in todos)
    return empty, total


def main(tests):
    tally = Tally()
    python = [t for t in tests if t.endswith(".py")]
    for t in tests:
        if not t.endswith(".py"):
            run_binary(t, tally)
    if python:
        run_pytest(python, tally)
    print()
    if tally.gpu_skipped:
        print(f"WARNING: {tally.gpu_skipped} GPU test case(s) were SKIPPED (no usable GPU): those kernels were NOT "
              "tested. Run REQUIRE_GPU=1 make test on a GPU machine.")
    if tally.skipped > tally.gpu_skipped:
        print(f"note: {tally.skipped - tally.gpu_skipped} test case(s) were skipped for another reason (a GPU too old "
              "for them, CUTLASS not built, a tool missing); their reasons are printed above.")
    regions = empty_regions(ROOT)
    if regions and regions[1]:
        print(f"kit: {regions[0]} of {regions[1]} TODO(student) regions still empty"
              + (" (their variants fail their GPU tests until you fill them)" if regions[0] else ""))
    print(f"tests: {tally.passed} passed, {tally.failed} failed, {tally.skipped} skipped", flush=True)
    return 0 if tally.failed == 0 else 1


def register(sub):
    p = add_command(sub, "test", "run C++ test binaries and Python test files; one closing count", __doc__)
    p.add_argument("tests", nargs="+", metavar="TEST", help="a Catch2 test binary or a tools/test_*.py file")
    p.set_defaults(run=lambda a: main(a.tests))
