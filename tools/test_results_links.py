"""test_results_links.py - results/ holds what the notes cite, and what the notes cite is there.

The spec allows at most 60 tracked files under results/: the measured runs the notes and READMEs
cite, nothing else (earlier runs stay in git history, and a note points at one as
`git show COMMIT:results/PATH`). Checked here, no GPU needed:
  - at most 60 files under results/ (`git ls-files results`; in a tree without git, such as a
    starter kit, the files on disk, leaving out what `make bench` and `make measure-08` write
    there by default);
  - every Markdown link into results/ leads to a file or folder that exists;
  - every results/ path a note writes out (outside results/ itself) exists, except the files
    `make bench` writes (results/bench.csv, ...; git ignores them);
  - every `git show COMMIT:results/PATH` a note gives names a file or folder of that commit
    (where git and that commit are at hand).

Run with pytest (make test runs it).
"""
import glob
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from wb import ROOT

MAX_RESULTS_FILES = 60
# What `make bench` (tools/bench.sh) writes into results/: a student's own run, never committed.
MAKE_BENCH_WRITES = {"bench.csv", "bench_commands.tsv", "env.json", "env.txt", "bench.log"}
# Where `make measure-08` writes by default (its OUT in the top-level Makefile): also a student's own.
MEASURE_08_OUT = os.path.join("results", "08")
# Folders of the tree that are build or tool output, not notes.
SKIP_DIRS = {".git", "build", "report", "grade", "grade-reference", "gpu-check", "__pycache__"}

LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)]*)?\)")                       # [text](target)
GIT_SHOW = re.compile(r"git show ([^\s:`'\"]+):(results/[^\s`'\")]*)")   # git show COMMIT:results/...
# A results/ path written out: not part of a longer path or word, nor the results/ of `git show C:`.
PATH = re.compile(r"(?<![\w./:@-])((?:\.\./)*results/[\w.*/-]*)")


def is_git_checkout(root=ROOT):
    """True when root is the top of a git checkout and git is installed (a kit has no .git)."""
    if not shutil.which("git"):
        return False
    try:
        top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return False
    return os.path.realpath(top) == os.path.realpath(root)


def git(*args, stdin=None, root=ROOT):
    return subprocess.run(["git", "-C", root, *args], input=stdin, capture_output=True, text=True,
                          check=True).stdout


def results_files(root=ROOT):
    """Files under results/: tracked ones with git, else the ones on disk but those make bench and
    make measure-08 write there by default (a student's own runs)."""
    if is_git_checkout(root):
        return [p for p in git("ls-files", "-z", "--", "results", root=root).split("\0") if p]
    found = []
    for d, dirs, files in os.walk(os.path.join(root, "results")):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and os.path.join(rel, x) != MEASURE_08_OUT]
        found += [os.path.join(rel, f) for f in files if not (rel == "results" and f in MAKE_BENCH_WRITES)]
    return found


def notes():
    """The Markdown files of the workbook, as paths relative to ROOT."""
    if is_git_checkout():
        return [p for p in git("ls-files", "-z", "--", "*.md").split("\0") if p and os.path.exists(os.path.join(ROOT, p))]
    found = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith(".")]
        found += [os.path.relpath(os.path.join(d, f), ROOT) for f in files if f.endswith(".md")]
    return found


def exists(rel):
    """rel (relative to ROOT, may be a glob) names at least one file or folder."""
    path = os.path.join(ROOT, rel)
    return bool(glob.glob(path)) if "*" in rel else os.path.exists(path)


def missing_links(note, text):
    """Markdown links of `note` into results/ that lead nowhere."""
    bad = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        rel = os.path.normpath(os.path.join(os.path.dirname(note), target))
        if (rel == "results" or rel.startswith("results" + os.sep)) and not exists(rel):
            bad.append(f"{note}: link to {target}")
    return bad


def missing_paths(note, text):
    """results/ paths written out in `note` that do not exist (make bench's own files aside).
    A path that starts with ../ is relative to the note's folder, as a command run there reads it."""
    bad = []
    for raw in PATH.findall(text):
        token = raw.rstrip(".,;:")
        base = os.path.dirname(note) if token.startswith("../") else ""
        rel = os.path.normpath(os.path.join(base, token))
        if os.path.dirname(rel) == "results" and os.path.basename(rel) in MAKE_BENCH_WRITES:
            continue
        if not exists(rel):
            bad.append(f"{note}: {token}")
    return bad


def git_show_citations(text):
    """[(commit, path)] of every `git show COMMIT:results/PATH` in text, the path without a trailing /;
    the pattern itself as the READMEs write it (a path with a capitalised word: PATH, FOLDER/FILE) is
    an example, not a citation."""
    cited = [(c, p.rstrip(".,;:").rstrip("/")) for c, p in GIT_SHOW.findall(text)]
    return [(c, p) for c, p in cited if not re.search(r"(^|/)[A-Z]+(/|$)", p)]


class TestResultsLinks:
    longMessage = False  # the messages list what is wrong, one per line

    @classmethod
    def setup_class(cls):
        cls.texts = {}
        for p in notes():
            with open(os.path.join(ROOT, p), encoding="utf-8") as f:
                cls.texts[p] = f.read()

    def test_at_most_60_files_under_results(self):
        files = results_files()
        assert len(files) > 0, "no results/ at all"
        assert len(files) <= MAX_RESULTS_FILES, \
                             f"{len(files)} files under results/ (the spec allows {MAX_RESULTS_FILES}): keep what " \
                             "the notes cite; earlier runs stay in git history (see results/h200/README.md)"

    def test_links_into_results_lead_to_files(self):
        bad = [b for p, t in self.texts.items() for b in missing_links(p, t)]
        assert not bad, "Markdown links into results/ that lead nowhere:\n" + "\n".join(bad)

    def test_results_paths_in_the_notes_exist(self):
        # results/'s own READMEs are left out: their run logs name files that are in git history,
        # and say so; their links are checked above.
        bad = [b for p, t in self.texts.items() if not p.startswith("results" + os.sep)
               for b in missing_paths(p, t)]
        assert not bad, "results/ paths named in the notes that are not in the tree (a run that left " \
                              "the tree is cited as `git show COMMIT:results/PATH`):\n" + "\n".join(bad)

    def test_git_show_citations_exist_in_their_commit(self):
        if not is_git_checkout():
            pytest.skip("no git checkout: the history the notes point at is not here")
        cited = sorted({(p, c, path) for p, t in self.texts.items() for c, path in git_show_citations(t)})
        assert len(cited) > 0
        revision = re.compile(r"[0-9a-f]{7,40}([~^][0-9]*)*")  # a commit, maybe with ~N or ^
        bad = [f"{p}: git show {c}:{path} (not a commit)" for p, c, path in cited if not revision.fullmatch(c)]
        cited = [x for x in cited if revision.fullmatch(x[1])]
        commits = sorted({c for _, c, _ in cited})
        kinds = git("cat-file", "--batch-check", stdin="".join(c + "^{commit}\n" for c in commits)).splitlines()
        present = {c for c, line in zip(commits, kinds) if not line.endswith("missing")}
        cited = [x for x in cited if x[1] in present]  # a shallow clone may lack old commits
        answers = git("cat-file", "--batch-check", stdin="".join(f"{c}:{path}\n" for _, c, path in cited)).splitlines()
        bad += [f"{p}: git show {c}:{path}" for (p, c, path), a in zip(cited, answers) if a.endswith("missing")]
        assert not bad, "git show citations that name nothing in their commit:\n" + "\n".join(bad)

    def test_without_git_the_files_on_disk_count_but_a_students_own_runs(self):
        with tempfile.TemporaryDirectory() as kit:
            for rel in ("results/h200/bench.csv", "results/h200/09/README.md", "results/cpu/01.csv",
                        "results/bench.csv", "results/env.json", "results/08/run.txt", "results/08/crossover.csv"):
                os.makedirs(os.path.dirname(os.path.join(kit, rel)), exist_ok=True)
                open(os.path.join(kit, rel), "w").close()
            if is_git_checkout(kit):
                pytest.skip("the temporary folder is itself the top of a git checkout")
            assert sorted(results_files(kit)) == ["results/cpu/01.csv", "results/h200/09/README.md",
                                                          "results/h200/bench.csv"]

    def test_the_checks_catch_what_they_are_for(self):
        note = "09_hopper_wgmma/README.md"
        text = ("[raw](../results/h200/09/no_such_run.csv), [bench](../results/h200/bench.csv), "
                "`results/h200/gone.log`, `--csv ../results/cpu/01_cpu_matmul.csv`, `results/bench.csv`, "
                "`git show 1234abc:results/h200/old.csv`, `results/h200/sweeps/*/evaluation.txt`, "
                "`git show C:results/h200/PATH`.")
        assert missing_links(note, text) == [f"{note}: link to ../results/h200/09/no_such_run.csv"]
        assert missing_paths(note, text) == [f"{note}: ../results/h200/09/no_such_run.csv",
                                                     f"{note}: results/h200/gone.log"]
        assert git_show_citations(text) == [("1234abc", "results/h200/old.csv")]
