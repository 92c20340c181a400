"""wb.kit - `python3 -m wb kit`: the student starter kit: the workbook with the solutions taken out.

Two kinds of region, each a run of lines between two marker comments on lines of their own
(indentation free), in a C, C++ or CUDA source anywhere in the workbook (lab/ folders included):

    // BEGIN SOLUTION: <one-line hint for the student>
    ...the solution...
    // END SOLUTION

    // BEGIN INSTRUCTOR ONLY: <one line saying what is left out>
    ...code the kit leaves out whole, e.g. planted-bug kernels that are near-copies of a solution...
    // END INSTRUCTOR ONLY

In the kit a solution region becomes two lines at the same indentation, between which the student
writes; an instructor-only region becomes one line:

    // TODO(student): <the same hint>
    // END TODO(student)

    // INSTRUCTOR ONLY (left out of the starter kit): <the same line>

The markers are comments, so the original compiles exactly as before. Regions are placed so that
the kit compiles too (an empty kernel body is legal; an instructor-only region holds whole
definitions or test cases): the kit's programs run and report FAIL (the harness poisons C with NaN
before each run) and its tests fail until the TODOs are filled.

Usage (--help lists the options):
    python3 -m wb kit make KIT_DIR [--homework "00 02 03 06"] [--manifest FILE]
        write the kit into KIT_DIR (new or empty folder), then scan it for leaks (exit 1 if any).
        Only the homework chapters' solutions are taken out (default: every chapter); the others
        stay whole and are not graded, and the kit's rubric (report_template/rubric.json) names the
        homework. The grader's manifest (every kit file's SHA-256, the homework, and per region
        file its regions' hints and its text outside them) goes to FILE, by default
        KIT_DIR.manifest.json beside the kit: the instructor keeps it, the students never see it.
    python3 -m wb kit restore KIT_DIR --from REPO
        put the regions of REPO back into the kit, matched by order and hint (whatever a student
        wrote between the TODO lines is replaced), and the instructors' guide in place of its stub
    python3 -m wb kit leaks KIT_DIR [--from REPO] [--homework ...]
        scan a kit for solution code (wb/kit_leaks.py)
    python3 -m wb kit check [REPO]
        validate the markers (balanced, not nested, hints non-empty, braces balanced) and list the
        regions

The files copied are those git tracks, read from the working tree (uncommitted edits included;
untracked files are left out and named on stderr: a scratch folder must not reach students).
Without git the tree is walked, leaving out build outputs. Nothing of .git is ever copied: the
kit is a fresh folder with no history. The instructors' guide is replaced by a short stub, so the
links to it still lead somewhere. Exit status: 0 done, 1 invalid markers, a kit that does not
match, or a leak; 2 bad usage. Python stdlib only.
"""
import datetime
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import namedtuple

from wb import ROOT, add_command
SOURCE_EXTS = (".cu", ".cuh", ".h", ".hpp", ".cpp", ".cc", ".cxx", ".c")
SOLUTION, INSTRUCTOR = "SOLUTION", "INSTRUCTOR ONLY"
BEGIN_RE = re.compile(r"^([ \t]*)// BEGIN (SOLUTION|INSTRUCTOR ONLY):(.*)$")
END_RE = re.compile(r"^([ \t]*)// END (SOLUTION|INSTRUCTOR ONLY)[ \t]*$")
TODO_RE = re.compile(r"^([ \t]*)// TODO\(student\):(.*)$")
END_TODO_RE = re.compile(r"^([ \t]*)// END TODO\(student\)[ \t]*$")
LEFT_OUT = "// INSTRUCTOR ONLY (left out of the starter kit):"
LEFT_OUT_RE = re.compile(r"^([ \t]*)" + re.escape(LEFT_OUT) + r"(.*)$")
# Anything marker-like that is not exactly one of the forms above is an error, not silently kept.
LOOSE_RE = re.compile(r"(BEGIN|END)[ _](SOLUTION|INSTRUCTOR[ _]ONLY)")
RUBRIC = "report_template/rubric.json"
MANIFEST_KIND = "cuda-matmul-workbook kit manifest"
# Used when git is not available: what the build and the tools write (see .gitignore).
SKIP_DIRS = {".git", "build", "report", "grade", "gpu-check", "__pycache__"}
SKIP_EXTS = (".o", ".a", ".ncu-rep", ".pyc")
# For the instructor only: they explain the markers and how to put the solutions back. The kit
# gets a stub in their place (the README links to the guide).
INSTRUCTOR_ONLY = {"docs/INSTRUCTORS.md", "docs/INSTRUCTORS.zh-CN.md"}
GUIDE_STUBS = {
    "docs/INSTRUCTORS.md": (
        "# Instructors' guide\n\n"
        "[中文](INSTRUCTORS.zh-CN.md)\n\n"
        "This is a student starter kit. The instructors' guide (how the solutions were taken out, how\n"
        "to put them back, how homework is graded) is not part of it; your instructor has it.\n\n"
        "In the kernels, write your code between `// TODO(student): <hint>` and `// END TODO(student)`.\n"
        "`make test` runs the tests: they fail until the TODOs are filled in, and on a machine without\n"
        "a GPU they are skipped, which tests nothing. Start with the [README](../README.md).\n"),
    "docs/INSTRUCTORS.zh-CN.md": (
        "# 教师指南\n\n"
        "[English](INSTRUCTORS.md)\n\n"
        "这是学生起步包。教师指南（答案如何被取出、如何放回、作业如何评分）不在其中，由你的教师保管。\n\n"
        "在内核中，把你的代码写在 `// TODO(student): <提示>` 与 `// END TODO(student)` 之间。\n"
        "`make test` 运行测试：在填完 TODO 之前它们会失败；在没有 GPU 的机器上它们被跳过，\n"
        "也就是什么都没有测试。请从 [README](../README.zh-CN.md) 开始。\n"),
}

# A region of an original file (line indices of its two markers) or its placeholder in a kit file
# (begin == end for an instructor-only line).
Region = namedtuple("Region", "begin end indent hint kind")


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
    """The regions of `text`, a list of Region. Raises KitError on unbalanced or nested markers
    (of either kind), an END of the other kind, an empty hint, or a region whose braces do not
    balance (taking it out would break the kit's build)."""
    regions, open_at = [], None
    lines = split_lines(text)
    for i, line in enumerate(lines):
        b, e = BEGIN_RE.match(bare(line)), END_RE.match(bare(line))
        if b:
            if open_at is not None:
                raise KitError(f"{name}:{i + 1}: BEGIN {b.group(2)} inside the region opened at line "
                               f"{open_at.begin + 1} (regions may not nest)")
            hint = b.group(3).strip()
            if not hint:
                raise KitError(f"{name}:{i + 1}: BEGIN {b.group(2)} without a hint "
                               f"(write '// BEGIN {b.group(2)}: <hint>')")
            open_at = Region(i, None, b.group(1), hint, b.group(2))
        elif e:
            if open_at is None:
                raise KitError(f"{name}:{i + 1}: END {e.group(2)} without a BEGIN {e.group(2)} before it")
            if e.group(2) != open_at.kind:
                raise KitError(f"{name}:{i + 1}: END {e.group(2)} closes the BEGIN {open_at.kind} of line "
                               f"{open_at.begin + 1}")
            depth = brace_depth(lines[open_at.begin + 1:i])
            if depth:
                raise KitError(f"{name}:{open_at.begin + 1}-{i + 1}: the region opens {depth:+d} more brace(s) "
                               f"than it closes; the kit would not compile (move END {open_at.kind} past the "
                               "closing braces)")
            regions.append(open_at._replace(end=i))
            open_at = None
        elif LOOSE_RE.search(line):
            raise KitError(f"{name}:{i + 1}: malformed marker (use '// BEGIN SOLUTION: <hint>', "
                           "'// BEGIN INSTRUCTOR ONLY: <hint>' and their '// END ...' on lines of their own)")
    if open_at is not None:
        raise KitError(f"{name}:{open_at.begin + 1}: BEGIN {open_at.kind} is never closed by an END {open_at.kind}")
    return regions


def parse_todos(text, name):
    """The placeholders of a kit file, a list of Region: TODO(student) blocks (kind SOLUTION)
    and instructor-only lines (kind INSTRUCTOR ONLY, begin == end)."""
    todos, open_at = [], None
    for i, line in enumerate(split_lines(text)):
        t, e, o = TODO_RE.match(bare(line)), END_TODO_RE.match(bare(line)), LEFT_OUT_RE.match(bare(line))
        if t:
            if open_at is not None:
                raise KitError(f"{name}:{i + 1}: TODO(student) inside the one opened at line {open_at.begin + 1}")
            open_at = Region(i, None, t.group(1), t.group(2).strip(), SOLUTION)
        elif e:
            if open_at is None:
                raise KitError(f"{name}:{i + 1}: END TODO(student) without a TODO(student) before it")
            todos.append(open_at._replace(end=i))
            open_at = None
        elif o and open_at is None:
            todos.append(Region(i, i, o.group(1), o.group(2).strip(), INSTRUCTOR))
    if open_at is not None:
        raise KitError(f"{name}:{open_at.begin + 1}: TODO(student) is never closed by '// END TODO(student)'")
    return todos


def placeholder(region, nl, end_nl):
    """The kit's lines for one region."""
    if region.kind == INSTRUCTOR:
        return [f"{region.indent}{LEFT_OUT} {region.hint}{end_nl}"]
    return [f"{region.indent}// TODO(student): {region.hint}{nl}", f"{region.indent}// END TODO(student){end_nl}"]


def strip_solutions(text, name, solutions=True):
    """The kit's version of a file: every region replaced by its placeholder (with solutions=False,
    only the instructor-only ones: a chapter that is not part of the homework stays whole). Returns
    the text and the number of regions replaced."""
    lines = split_lines(text)
    regions = [r for r in parse_regions(text, name) if solutions or r.kind == INSTRUCTOR]
    out, pos = [], 0
    for r in regions:
        out.extend(lines[pos:r.begin])
        nl = ending(lines[r.begin]) or "\n"
        out.extend(placeholder(r, nl, ending(lines[r.end]) or nl))
        pos = r.end + 1
    out.extend(lines[pos:])
    return "".join(out), len(regions)


def put_solutions_back(kit_text, original_text, name):
    """The original file rebuilt from a kit file: the placeholders, matched with the original's
    regions by order, kind and hint, are replaced by the regions. Raises KitError when they differ.
    A file of a chapter the kit kept whole holds its solution regions still: only its
    instructor-only placeholders are matched."""
    regions = parse_regions(original_text, name)
    todos = parse_todos(kit_text, name)
    if not any(t.kind == SOLUTION for t in todos) and parse_regions(kit_text, name):
        regions = [r for r in regions if r.kind == INSTRUCTOR]
    if len(regions) != len(todos):
        raise KitError(f"{name}: the kit has {len(todos)} placeholder(s) (TODO(student) blocks and "
                       f"instructor-only lines), the original {len(regions)} region(s)")
    orig, kit = split_lines(original_text), split_lines(kit_text)
    out, pos = [], 0
    for n, (r, t) in enumerate(zip(regions, todos), 1):
        if (r.kind, r.hint) != (t.kind, t.hint):
            raise KitError(f"{name}: placeholder {n} (line {t.begin + 1}) has the hint {t.hint!r} ({t.kind}), "
                           f"the original's region {n} {r.hint!r} ({r.kind})")
        out.extend(kit[pos:t.begin])
        out.extend(orig[r.begin:r.end + 1])
        pos = t.end + 1
    out.extend(kit[pos:])
    return "".join(out)


# ---- the files of a workbook -----------------------------------------------------------------------

def git_files(repo, *which):
    """Paths git lists for `repo` (None when `repo` is not the top of a git work tree)."""
    try:
        top = subprocess.run(["git", "-C", repo, "rev-parse", "--show-toplevel"], capture_output=True, text=True,
                             check=True).stdout.strip()
        if os.path.realpath(top) != os.path.realpath(repo):
            return None
        r = subprocess.run(["git", "-C", repo, "ls-files", "-z"] + list(which), capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sorted({p for p in r.stdout.decode("utf-8", "surrogateescape").split("\0") if p})


def shippable(repo, p):
    full = os.path.join(repo, p)
    return ".git" not in p.split("/") and os.path.isfile(full) and not os.path.islink(full)


def repo_files(repo):
    """Relative paths of the workbook's files: what git tracks (as it is in the working tree), else
    a walk of the tree without build outputs. Nothing under a .git folder."""
    names = git_files(repo, "--cached")
    if names is not None:
        return [p for p in names if shippable(repo, p)]
    files = []
    for here, dirs, names in os.walk(repo):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        rel = os.path.relpath(here, repo)
        for n in sorted(names):
            p = os.path.normpath(os.path.join(rel, n)).replace(os.sep, "/")
            if n.endswith(SKIP_EXTS) or not shippable(repo, p):
                continue
            # Chapter binaries (NN_name/NN_name, NN_name/test_NN_name) are build outputs.
            parts = p.split("/")
            if len(parts) == 2 and re.fullmatch(r"\d\d_[^/]*", parts[0]) and \
                    parts[1] in (parts[0], "test_" + parts[0]):
                continue
            files.append(p)
    return files


def untracked_files(repo):
    """Untracked files git does not ignore: left out of the kit, named so nobody is surprised."""
    return git_files(repo, "--others", "--exclude-standard") or []


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

def is_kit(root):
    """True when `root` is a starter kit rather than the workbook: its instructors' guide is the stub."""
    path = os.path.join(root, "docs/INSTRUCTORS.md")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read() == GUIDE_STUBS["docs/INSTRUCTORS.md"]
    except OSError:
        return False


def chapters_of(repo):
    """The chapter folders of a workbook (NN_name), sorted."""
    return sorted(d for d in os.listdir(repo) if re.fullmatch(r"\d\d_\w+", d) and os.path.isdir(os.path.join(repo, d)))


def resolve_homework(words, repo=ROOT):
    """Chapter folder names for a homework list such as "00 02 03_shared_tiling 6" (numbers or
    names, blanks or commas between them); None or "all" for every chapter."""
    chapters = chapters_of(repo)
    if words is None or (isinstance(words, str) and words.strip() in ("", "all")):
        return chapters
    if isinstance(words, str):
        words = re.split(r"[\s,]+", words.strip())
    picked = []
    for w in words:
        number = w.split("_", 1)[0]
        match = [c for c in chapters if c == w or (number.isdigit() and c.split("_", 1)[0] == f"{int(number):02d}")]
        if len(match) != 1:
            raise UsageError(f"student_kit: HOMEWORK names no chapter '{w}' (chapters: {' '.join(chapters)})")
        if match[0] not in picked:
            picked.append(match[0])
    return sorted(picked)


def chapter_of_path(p):
    """The chapter folder a relative path lies in, or None (common/, tools/, ...)."""
    first = p.split("/", 1)[0]
    return first if re.fullmatch(r"\d\d_\w+", first) else None


def in_homework(p, homework):
    chapter = chapter_of_path(p)
    return chapter is None or chapter in homework


def file_sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def git_head(repo):
    try:
        r = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if r.returncode != 0 or not r.stdout.strip():
        return "unknown"
    dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=20).stdout.strip()
    return r.stdout.strip() + ("-dirty" if dirty else "")


def report_note(note, homework=None):
    """A report section's note of the rubric as text. A plain string stays as it is; a list of parts
    is joined ("a, b and c"), leaving out each part {"text": ..., "only": [chapters]} whose chapters
    are none of the homework's (homework None: all parts), so a subset homework's notes name no
    section its report does not have."""
    if not isinstance(note, list):
        return note or ""
    parts = [p if isinstance(p, str) else p["text"] for p in note
             if isinstance(p, str) or homework is None or set(p.get("only", [])) & set(homework)]
    return ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)


def kit_rubric(repo, homework):
    """The rubric the kit carries: the workbook's, cut to the homework chapters."""
    path = os.path.join(repo, RUBRIC)
    with open(path, encoding="utf-8") as f:
        rubric = json.load(f)
    rubric["homework"] = homework
    rubric["chapters"] = {c: rules for c, rules in rubric.get("chapters", {}).items() if c in homework}
    for section in rubric.get("report", []):
        section["note"] = report_note(section.get("note"), homework)
    return json.dumps(rubric, indent=2, ensure_ascii=False) + "\n"


def write_kit(kit, repo, homework):
    """Writes the kit's files; returns ({path: sha256}, {region file: [hints]}, number of regions)."""
    found = scan(repo)
    files, regions, total = {}, {}, 0
    # Each file is written anew (never a clone or a copy of .git): the kit carries no history.
    for p in repo_files(repo):
        src, dst = os.path.join(repo, p), os.path.join(kit, p)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if p in INSTRUCTOR_ONLY:
            with open(dst, "wb") as f:
                stub = GUIDE_STUBS.get(p, "This file is for instructors and is not part of the kit.\n")
                f.write(stub.encode("utf-8"))
        elif p == RUBRIC:
            with open(dst, "wb") as f:
                f.write(kit_rubric(repo, homework).encode("utf-8"))
        elif p in found:
            with open(src, "rb") as f:
                text = f.read().decode("utf-8")
            solutions = in_homework(p, homework)
            stripped, n = strip_solutions(text, p, solutions)
            total += n
            if solutions and any(r.kind == SOLUTION for r in found[p]):
                regions[p] = [r.hint for r in found[p] if r.kind == SOLUTION]
            with open(dst, "wb") as f:
                f.write(stripped.encode("utf-8"))
            shutil.copymode(src, dst)
        else:
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
        files[p] = file_sha256(dst)
    return files, regions, total


def kit_manifest(kit, repo, homework, files, regions):
    """What the grader needs to judge a submission against this kit, kept by the instructor."""
    texts = {}
    for p in regions:
        with open(os.path.join(kit, p), "rb") as f:
            texts[p] = f.read().decode("utf-8")
    return {"kind": MANIFEST_KIND, "workbook_git": git_head(repo),
            "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "homework": homework, "files": files,
            "regions": {p: {"hints": hints, "kit_text": texts[p]} for p, hints in sorted(regions.items())}}


def default_manifest_path(kit):
    return os.path.abspath(kit).rstrip(os.sep) + ".manifest.json"


def cmd_make(kit, repo=ROOT, homework=None, manifest=None):
    if inside(kit, repo):
        raise UsageError(f"student_kit: refusing to write the kit inside the workbook itself ({kit}); "
                         "choose a folder outside it")
    if os.path.exists(kit) and (not os.path.isdir(kit) or os.listdir(kit)):
        raise UsageError(f"student_kit: {kit} exists and is not an empty folder; choose a new or empty one")
    found = scan(repo)  # validates every file before anything is written
    if not any(r.kind == SOLUTION for rs in found.values() for r in rs):
        raise KitError("student_kit: no solution regions found (is this already a student kit?)")
    homework = resolve_homework(homework, repo)
    manifest = manifest or default_manifest_path(kit)
    if inside(manifest, kit) or inside(manifest, repo):
        raise UsageError(f"student_kit: the manifest ({manifest}) must be kept outside the kit and the workbook")
    os.makedirs(kit, exist_ok=True)
    files, regions, total = write_kit(kit, repo, homework)
    os.makedirs(os.path.dirname(os.path.abspath(manifest)), exist_ok=True)
    with open(manifest, "w", encoding="utf-8") as f:
        json.dump(kit_manifest(kit, repo, homework, files, regions), f, indent=1, ensure_ascii=False)
        f.write("\n")
    left_out = untracked_files(repo)
    if left_out:
        shown = ", ".join(left_out[:5]) + (f" and {len(left_out) - 5} more" if len(left_out) > 5 else "")
        print(f"student_kit: {len(left_out)} untracked file(s) left out of the kit (commit them to ship them): "
              f"{shown}", file=sys.stderr)
    print(f"student_kit: wrote {kit} for the homework {' '.join(homework)}: {total} region(s) replaced by "
          "TODO(student) blocks and instructor-only lines")
    for p, rs in sorted(found.items()):
        n_todo = len(regions.get(p, []))
        print(f"  {p}: {n_todo} TODO, {sum(r.kind == INSTRUCTOR for r in rs)} left out")
    print(f"student_kit: the grader's manifest of this kit: {manifest} (keep it; never hand it out)")
    with open(manifest, encoding="utf-8") as f:
        commit = json.load(f)["workbook_git"]
    if commit.endswith("-dirty"):
        print(f"student_kit: warning: the kit holds uncommitted edits of the workbook ({commit}): the grader must "
              "then run from this same working tree; commit first to grade from any checkout", file=sys.stderr)
    from wb.kit_leaks import describe_leak, find_leaks
    leaks = find_leaks(kit, repo, chapters=homework)
    if leaks:
        raise KitError("student_kit: the kit holds solution code; do not hand it out:\n  " +
                       "\n  ".join(describe_leak(x) for x in leaks))
    print("student_kit: leak scan: no file of the kit holds a solution")
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
    for p in sorted(INSTRUCTOR_ONLY | {RUBRIC}):  # the kit holds stubs and the rubric cut to the homework
        if os.path.isfile(os.path.join(repo, p)):
            with open(os.path.join(repo, p), "rb") as f:
                rebuilt[p] = f.read().decode("utf-8")
    for p, text in rebuilt.items():
        os.makedirs(os.path.dirname(os.path.join(kit, p)), exist_ok=True)
        with open(os.path.join(kit, p), "wb") as f:
            f.write(text.encode("utf-8"))
    print(f"student_kit: restored {sum(len(r) for r in found.values())} region(s) in {len(found)} "
          f"file(s) of {kit} from {repo}, and the instructors' guide and the rubric")
    return 0


def cmd_leaks(kit, repo, homework=None):
    if not os.path.isdir(kit):
        raise UsageError(f"student_kit: {kit} is not a folder")
    if not os.path.isdir(repo):
        raise UsageError(f"student_kit: {repo} (--from) is not a folder")
    if not scan(repo):
        raise KitError(f"student_kit: {repo} has no solution regions to compare with")
    from wb.kit_leaks import describe_leak, find_leaks
    leaks = find_leaks(kit, repo, chapters=resolve_homework(homework, repo))
    for x in leaks:
        print(describe_leak(x))
    if leaks:
        raise KitError(f"student_kit: {len(leaks)} leak(s) in {kit}")
    print(f"student_kit: leak scan: no file of {kit} holds a solution")
    return 0


def cmd_check(repo):
    if not os.path.isdir(repo):
        raise UsageError(f"student_kit: {repo} is not a folder")
    found = scan(repo)
    if not found:
        raise KitError(f"student_kit: no solution regions in {repo}")
    for p, regions in sorted(found.items()):
        for r in regions:
            kind = "" if r.kind == SOLUTION else " [instructor only]"
            print(f"{p}:{r.begin + 1}-{r.end + 1}:{kind} {r.hint}")
    print(f"student_kit: markers OK: {sum(len(r) for r in found.values())} region(s) in {len(found)} file(s)")
    return 0


def register(top):
    parser, sub = add_command(top, "kit", "the student starter kit: make, restore, leaks, check", __doc__,
                              nested=True)
    p = sub.add_parser("make", help="write the kit into KIT_DIR (new or empty), then scan it for leaks")
    p.add_argument("kit")
    p.add_argument("--homework", help='the chapters whose solutions are taken out, e.g. "00 02 03 06" '
                   "(default: all; the other chapters stay whole and are not graded)")
    p.add_argument("--manifest", help="where the grader's manifest goes (default: KIT_DIR.manifest.json, "
                   "beside the kit); keep it, never hand it out")
    p = sub.add_parser("restore", help="put the regions of REPO back into the kit")
    p.add_argument("kit")
    p.add_argument("--from", dest="repo", required=True)
    p = sub.add_parser("leaks", help="scan a kit for solution code")
    p.add_argument("kit")
    p.add_argument("--from", dest="repo", default=ROOT)
    p.add_argument("--homework", help="only the regions of these chapters count (as for make)")
    p = sub.add_parser("check", help="validate the markers and list the regions")
    p.add_argument("repo", nargs="?", default=ROOT)
    parser.set_defaults(run=main)


def main(a):
    try:
        return command(a)
    except UsageError as e:
        print(e, file=sys.stderr)
        return 2
    except KitError as e:
        print(e if str(e).startswith("student_kit") else f"student_kit: {e}", file=sys.stderr)
        return 1


def command(a):
    if a.cmd == "make":
        return cmd_make(a.kit, ROOT, a.homework, a.manifest)
    if a.cmd == "restore":
        return cmd_restore(a.kit, a.repo)
    if a.cmd == "leaks":
        return cmd_leaks(a.kit, a.repo, a.homework)
    return cmd_check(a.repo)
