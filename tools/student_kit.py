#!/usr/bin/env python3
"""student_kit.py - the student starter kit: the workbook with the solution regions taken out.

A solution region is a run of lines in a chapter's source between two marker comments, each on a
line of its own (indentation free):

    // BEGIN SOLUTION: <one-line hint for the student>
    ...the solution...
    // END SOLUTION

In the kit each region becomes two lines at the same indentation, between which the student writes:

    // TODO(student): <the same hint>
    // END TODO(student)

The markers are comments, so the original compiles exactly as before. Regions are placed so that
the kit compiles too (an empty kernel body is legal): its programs run and report FAIL (the
harness poisons C with NaN before each run) and its tests fail until the TODOs are filled.

Usage:
    student_kit.py make KIT_DIR                  copy the workbook into KIT_DIR (new or empty folder),
                                                 every region replaced by its TODO
    student_kit.py restore KIT_DIR --from REPO   put the solution regions of REPO back into the kit,
                                                 matched by order and hint; whatever a student wrote
                                                 between the TODO lines is replaced
    student_kit.py check [REPO]                  validate the markers (balanced, not nested, hints
                                                 non-empty) and list the regions

The files copied are those git knows (tracked, plus untracked ones that are not ignored), read
from the working tree; without git, the tree is walked, leaving out build outputs. Only C, C++ and
CUDA sources are searched for markers. Nothing written into the kit reveals a solution.
Exit status: 0 done, 1 invalid markers or a kit that does not match, 2 bad usage. Python stdlib only.
"""
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_EXTS = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx", ".c")
BEGIN_RE = re.compile(r"^([ \t]*)// BEGIN SOLUTION:(.*)$")
END_RE = re.compile(r"^([ \t]*)// END SOLUTION[ \t]*$")
TODO_RE = re.compile(r"^([ \t]*)// TODO\(student\):(.*)$")
END_TODO_RE = re.compile(r"^([ \t]*)// END TODO\(student\)[ \t]*$")
# Anything marker-like that is not exactly one of the forms above is an error, not silently kept.
LOOSE_RE = re.compile(r"(BEGIN|END)[ _]SOLUTION")
# Used when git is not available: what the build and the tools write (see .gitignore).
SKIP_DIRS = {".git", "build", "report", "grade", "gpu-check", "__pycache__"}
SKIP_EXTS = (".o", ".a", ".ncu-rep", ".pyc")
# For the instructor only: they explain the markers and how to put the solutions back.
INSTRUCTOR_ONLY = {"docs/INSTRUCTORS.md", "docs/INSTRUCTORS.zh-CN.md"}


class KitError(Exception):
    """A problem with the markers or with a kit; exit status 1."""


class UsageError(Exception):
    """Bad usage; exit status 2."""


def is_source(path):
    return path.endswith(SOURCE_EXTS)


def split_lines(text):
    """Lines with their endings kept, so that joining them gives the text back byte for byte."""
    return text.splitlines(keepends=True)


def bare(line):
    return line.rstrip("\r\n")


def ending(line):
    return line[len(bare(line)):]


def brace_depth(lines):
    """{ minus } in code lines, leaving out comments, string and character literals."""
    depth = 0
    for line in lines:
        code = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', "", bare(line))
        code = code.split("//", 1)[0]
        depth += code.count("{") - code.count("}")
    return depth


def parse_regions(text, name):
    """The solution regions of `text`: a list of (begin, end, indent, hint), line indices of the
    two markers. Raises KitError on unbalanced or nested markers, an empty hint, or a region
    whose braces do not balance (taking it out would break the kit's build)."""
    regions, open_at = [], None
    lines = split_lines(text)
    for i, line in enumerate(lines):
        b, e = BEGIN_RE.match(bare(line)), END_RE.match(bare(line))
        if b:
            if open_at is not None:
                raise KitError(f"{name}:{i + 1}: BEGIN SOLUTION inside the region opened at line {open_at[0] + 1} "
                               "(regions may not nest)")
            hint = b.group(2).strip()
            if not hint:
                raise KitError(f"{name}:{i + 1}: BEGIN SOLUTION without a hint (write '// BEGIN SOLUTION: <hint>')")
            open_at = (i, b.group(1), hint)
        elif e:
            if open_at is None:
                raise KitError(f"{name}:{i + 1}: END SOLUTION without a BEGIN SOLUTION before it")
            depth = brace_depth(lines[open_at[0] + 1:i])
            if depth:
                raise KitError(f"{name}:{open_at[0] + 1}-{i + 1}: the region opens {depth:+d} more brace(s) than it "
                               "closes; the kit would not compile (move END SOLUTION past the closing braces)")
            regions.append((open_at[0], i, open_at[1], open_at[2]))
            open_at = None
        elif LOOSE_RE.search(line):
            raise KitError(f"{name}:{i + 1}: malformed marker (use '// BEGIN SOLUTION: <hint>' and '// END SOLUTION' "
                           "on lines of their own)")
    if open_at is not None:
        raise KitError(f"{name}:{open_at[0] + 1}: BEGIN SOLUTION is never closed by an END SOLUTION")
    return regions


def parse_todos(text, name):
    """The TODO blocks of a kit file: a list of (begin, end, indent, hint), line indices."""
    todos, open_at = [], None
    for i, line in enumerate(split_lines(text)):
        t, e = TODO_RE.match(bare(line)), END_TODO_RE.match(bare(line))
        if t:
            if open_at is not None:
                raise KitError(f"{name}:{i + 1}: TODO(student) inside the one opened at line {open_at[0] + 1}")
            open_at = (i, t.group(1), t.group(2).strip())
        elif e:
            if open_at is None:
                raise KitError(f"{name}:{i + 1}: END TODO(student) without a TODO(student) before it")
            todos.append((open_at[0], i, open_at[1], open_at[2]))
            open_at = None
    if open_at is not None:
        raise KitError(f"{name}:{open_at[0] + 1}: TODO(student) is never closed by '// END TODO(student)'")
    return todos


def strip_solutions(text, name):
    """The kit's version of a file: every region replaced by its two TODO lines."""
    lines = split_lines(text)
    regions = parse_regions(text, name)
    out, pos = [], 0
    for begin, end, indent, hint in regions:
        out.extend(lines[pos:begin])
        nl = ending(lines[begin]) or "\n"
        out.append(f"{indent}// TODO(student): {hint}{nl}")
        out.append(f"{indent}// END TODO(student){ending(lines[end]) or nl}")
        pos = end + 1
    out.extend(lines[pos:])
    return "".join(out), len(regions)


def put_solutions_back(kit_text, original_text, name):
    """The original file rebuilt from a kit file: the TODO blocks, matched with the original's
    regions by order and hint, are replaced by the regions. Raises KitError when they differ."""
    regions = parse_regions(original_text, name)
    todos = parse_todos(kit_text, name)
    if len(regions) != len(todos):
        raise KitError(f"{name}: the kit has {len(todos)} TODO(student) block(s), the original "
                       f"{len(regions)} solution region(s)")
    orig, kit = split_lines(original_text), split_lines(kit_text)
    out, pos = [], 0
    for n, ((rb, re_, _, rhint), (tb, te, _, thint)) in enumerate(zip(regions, todos), 1):
        if rhint != thint:
            raise KitError(f"{name}: TODO {n} (line {tb + 1}) has the hint {thint!r}, "
                           f"the original's region {n} {rhint!r}")
        out.extend(kit[pos:tb])
        out.extend(orig[rb:re_ + 1])
        pos = te + 1
    out.extend(kit[pos:])
    return "".join(out)


# ---- the files of a workbook -----------------------------------------------------------------------

def repo_files(repo):
    """Relative paths of the workbook's files: git's tracked and untracked-but-not-ignored files
    that exist, else a walk of the tree without build outputs."""
    try:
        r = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True)
        top = subprocess.run(["git", "-C", repo, "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             check=True).stdout.strip()
        if os.path.realpath(top) == os.path.realpath(repo):
            names = sorted({p for p in r.stdout.decode("utf-8", "surrogateescape").split("\0") if p})
            return [p for p in names if os.path.isfile(os.path.join(repo, p)) and not os.path.islink(os.path.join(repo, p))]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for here, dirs, names in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = os.path.relpath(here, repo)
        for n in sorted(names):
            p = os.path.normpath(os.path.join(rel, n))
            full = os.path.join(repo, p)
            if n.endswith(SKIP_EXTS) or os.path.islink(full) or not os.path.isfile(full):
                continue
            # Chapter binaries (NN_name/NN_name, NN_name/test_NN_name) are build outputs.
            parts = p.split(os.sep)
            if len(parts) == 2 and re.fullmatch(r"\d\d_[^/]*", parts[0]) and \
                    parts[1] in (parts[0], "test_" + parts[0]):
                continue
            files.append(p)
    return files


def read_text(path):
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def scan(repo):
    """{relative path: regions} for every source file of `repo` that has regions."""
    found = {}
    for p in repo_files(repo):
        if is_source(p):
            text = read_text(os.path.join(repo, p))
            if text is not None:
                regions = parse_regions(text, p)
                if regions:
                    found[p] = regions
    return found


def inside(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# ---- the commands -------------------------------------------------------------------------------------

def cmd_make(kit, repo=ROOT):
    if inside(kit, repo):
        raise UsageError(f"student_kit: refusing to write the kit inside the workbook itself ({kit}); "
                         "choose a folder outside it")
    if os.path.exists(kit) and (not os.path.isdir(kit) or os.listdir(kit)):
        raise UsageError(f"student_kit: {kit} exists and is not an empty folder; choose a new or empty one")
    found = scan(repo)  # validates every file before anything is written
    if not found:
        raise KitError("student_kit: no solution regions found (is this already a student kit?)")
    os.makedirs(kit, exist_ok=True)
    total = 0
    for p in repo_files(repo):
        if p in INSTRUCTOR_ONLY:
            continue
        src, dst = os.path.join(repo, p), os.path.join(kit, p)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if p in found:
            with open(src, "rb") as f:
                text = f.read().decode("utf-8")
            stripped, n = strip_solutions(text, p)
            total += n
            with open(dst, "wb") as f:
                f.write(stripped.encode("utf-8"))
            shutil.copymode(src, dst)
        else:
            shutil.copy2(src, dst)
    print(f"student_kit: wrote {kit}: {total} solution region(s) in {len(found)} file(s) replaced by "
          "TODO(student) blocks")
    for p, regions in sorted(found.items()):
        print(f"  {p}: {len(regions)}")
    return 0


def cmd_restore(kit, repo):
    if not os.path.isdir(kit):
        raise UsageError(f"student_kit: {kit} is not a folder")
    if not os.path.isdir(repo):
        raise UsageError(f"student_kit: {repo} (--from) is not a folder")
    if os.path.realpath(kit) == os.path.realpath(repo):
        raise UsageError("student_kit: the kit and --from are the same folder")
    found = scan(repo)
    if not found:
        raise KitError(f"student_kit: {repo} has no solution regions to restore from")
    rebuilt = {}
    for p in sorted(found):  # everything is checked before the first file is written
        path = os.path.join(kit, p)
        if not os.path.isfile(path):
            raise KitError(f"student_kit: {p} is missing from the kit")
        with open(path, "rb") as f:
            kit_text = f.read().decode("utf-8")
        with open(os.path.join(repo, p), "rb") as f:
            original = f.read().decode("utf-8")
        rebuilt[p] = put_solutions_back(kit_text, original, p)
    for p, text in rebuilt.items():
        with open(os.path.join(kit, p), "wb") as f:
            f.write(text.encode("utf-8"))
    print(f"student_kit: restored {sum(len(r) for r in found.values())} solution region(s) in {len(found)} "
          f"file(s) of {kit} from {repo}")
    return 0


def cmd_check(repo):
    if not os.path.isdir(repo):
        raise UsageError(f"student_kit: {repo} is not a folder")
    found = scan(repo)
    if not found:
        raise KitError(f"student_kit: no solution regions in {repo}")
    for p, regions in sorted(found.items()):
        for begin, end, _, hint in regions:
            print(f"{p}:{begin + 1}-{end + 1}: {hint}")
    print(f"student_kit: markers OK: {sum(len(r) for r in found.values())} region(s) in {len(found)} file(s)")
    return 0


USAGE = ("usage: student_kit.py make KIT_DIR | restore KIT_DIR --from REPO | check [REPO]"
         "  (see the top of tools/student_kit.py)")


def main(argv):
    args = list(argv)
    if not args:
        raise UsageError(USAGE)
    if args[0] in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    cmd, rest = args[0], args[1:]
    if cmd == "make":
        if len(rest) != 1 or rest[0].startswith("-"):
            raise UsageError(f"student_kit: make takes one KIT_DIR; {USAGE}")
        return cmd_make(rest[0])
    if cmd == "restore":
        if len(rest) != 3 or rest[1] != "--from" or rest[0].startswith("-"):
            raise UsageError(f"student_kit: restore takes KIT_DIR --from REPO; {USAGE}")
        return cmd_restore(rest[0], rest[2])
    if cmd == "check":
        if len(rest) > 1:
            raise UsageError(f"student_kit: check takes at most one REPO; {USAGE}")
        return cmd_check(rest[0] if rest else ROOT)
    raise UsageError(f"student_kit: unknown command {cmd!r}; {USAGE}")


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        print(e, file=sys.stderr)
        sys.exit(2)
    except KitError as e:
        print(e if str(e).startswith("student_kit") else f"student_kit: {e}", file=sys.stderr)
        sys.exit(1)
