"""wb.markers - `python3 -m wb notes check|list`: the one marker syntax for what the tools write into
Markdown, and the check that every filled block in the notes still says what its source says.

A filled block is two invisible lines and what lies between them:

    <!-- wb:fill NAME -->
    ...what a tool wrote, or an excerpt copied from a committed log...
    <!-- wb:end NAME -->

Each marker is a line of its own (the report's one-line values, e.g. the GPU's name inside a
sentence, are the one exception: report writes both markers around the value in that line). NAME
says what fills the block:

    results          wb fill, the chapter's rows of the bench CSV its caption cites (only the
                     shapes its caption lists, where it lists some)
    results-WORD     the same, from another run's CSV (wb fill CSV --block results-WORD), which
                     make bench leaves alone
    profile          wb profile-table --fill, the chapter's kernels in the Nsight Compute log it cites
    profile-WORD     wb profile-table --fill --block WORD, the log's section "== profile-NN WORD"
    e2e-SECTION      wb e2e fill, chapter 08's CSV files (SECTION: provenance, transfers, crossover,
                     breakdown, streams, graphs, managed)
    costs, precision, excerpt-WORD
                     an excerpt of the raw log (or CSV) the caption cites, copied by hand into a
                     fenced block (checked: it must appear in that file verbatim; the prose is not)
    ladder           wb fill, the top README's ladder: each chapter's best variant and chapter
                     07's CUTLASS rows as % of cuBLAS, from the bench CSV its caption cites
    env              wb fill --env, chapter 00's row from the JSON of 00_env_check --json
    cutlass          wb fill, the chapter's variants as % of chapter 07's CUTLASS kernel of the
                     same precision, from the bench CSV its caption cites, on the shapes its
                     results block shows (chapter 06)
    cutlass-WORD     the same, from the CSV of the note's block results-WORD, on its shapes
    ceiling          wb fill, the chapter's variants as % of its lab's ceiling (ceiling_NN.csv
                     beside the bench CSV its caption cites), on the shapes its results block shows
    UPPER_CASE       wb report, in a student's report (report/report.md)

`notes list` prints every block of the notes (file:line, name); `notes check` regenerates each
block from the committed file it cites and prints one line per block: ok, DIFFERS (exit status 1,
with the first line that differs) or "not regenerated" with the reason. A marker that is not on a
line of its own, has no partner, or names an unknown block is an error with its file:line (exit
status 1).

`notes lint` finds the measured-looking figures of the notes that no block holds: a number followed
by %, TFLOP/s, GFLOP/s, GB/s, a time unit (s, ms, µs, us, ns, min; 秒, 毫秒, 微秒, 分钟) or "x
faster"-like words (倍), outside every filled block. Each is a hand-typed measurement that no check keeps
in step with its source, and fails the lint (exit status 1, file:line and the figure). A figure
that is not a measurement (a spec sheet value, a target, arithmetic) stays when its line carries
the marker <!-- wb:not-measured --> (anywhere on the line, invisible when rendered). `notes check`
runs the lint after the blocks."""
import json
import os
import re
import subprocess
import textwrap
import sys
from typing import NamedTuple

from wb import ROOT, add_command

NOT_MEASURED = "<!-- wb:not-measured -->"  # on a line that states a figure which is no measurement (see notes lint)
LINE = re.compile(r"<!-- wb:(fill|end) ([A-Za-z0-9_.-]+) -->")
E2E_SECTIONS = ("provenance", "transfers", "crossover", "breakdown", "streams", "graphs", "managed")
SKIP_DIRS = {".git", "build", "report", "grade", "gpu-check", "__pycache__"}  # what tools and builds write
EXCERPTS = ("costs", "precision")
EXCERPT_PREFIX = "excerpt-"  # excerpt-WORD: any other excerpt of a committed log, checked like costs


class NoteNames(frozenset):
    """The block names of the notes: the fixed ones, and every excerpt-WORD."""

    def __contains__(self, name):
        return frozenset.__contains__(self, name) or any(
            name.startswith(prefix) and len(name) > len(prefix) for prefix in (EXCERPT_PREFIX, "results-", "cutlass-", "profile-"))

    def __iter__(self):
        return iter(list(frozenset.__iter__(self)) + [EXCERPT_PREFIX + "WORD", "results-WORD", "cutlass-WORD"])


NOTE_NAMES = NoteNames({"results", "profile", "ladder", "env", "cutlass", "ceiling", *EXCERPTS} | {f"e2e-{s}" for s in E2E_SECTIONS})


class MarkerError(ValueError):
    """A marker that cannot be read; the message starts with file:line."""


class Block(NamedTuple):
    name: str
    line: int    # 1-based line of the fill marker
    start: int   # offset of the content (just after the fill marker's line)
    stop: int    # offset of the end marker
    content: str


def begin(name):
    return f"<!-- wb:fill {name} -->"


def end(name):
    return f"<!-- wb:end {name} -->"


def pair_pattern(name):
    """A fill marker of `name`, then the nearest end marker of `name` with no fill of it in
    between (for text a person edits, where a marker may have lost its partner: a lone marker
    never swallows the text up to a later pair)."""
    b, e = re.escape(begin(name)), re.escape(end(name))
    return re.compile(f"{b}(?:(?!{b}).)*?{e}", re.S)


def blocks(text, path="<text>", names=None):
    """Every block of `text`, in order. Raises MarkerError (file:line first) on a line that starts
    like a marker but is none, a block opened inside another, an end without its fill, a fill
    without its end, a name given twice, or (with `names`) a name not in `names`."""
    out, open_ = [], None
    offset = 0
    seen = {}
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        stripped = line.strip()
        if stripped.startswith("<!-- wb:") and not stripped.startswith(NOT_MEASURED):
            m = LINE.fullmatch(stripped)
            if not m:
                raise MarkerError(f"{path}:{number}: unknown marker {stripped!r} "
                                  f"(the markers are {begin('NAME')} and {end('NAME')}, each on its own line)")
            kind, name = m.groups()
            if names is not None and name not in names:
                raise MarkerError(f"{path}:{number}: unknown block name {name!r} (known: {', '.join(sorted(names))})")
            if kind == "fill":
                if open_:
                    raise MarkerError(f"{path}:{number}: {begin(name)} inside the block {open_[0]!r} "
                                      f"opened at line {open_[1]}, which has no {end(open_[0])} before it")
                if name in seen:
                    raise MarkerError(f"{path}:{number}: a second block {name!r} (the first is at line {seen[name]})")
                seen[name] = number
                open_ = (name, number, offset + len(line))
            else:
                if not open_ or open_[0] != name:
                    raise MarkerError(f"{path}:{number}: {end(name)} without {begin(name)} before it")
                out.append(Block(name, open_[1], open_[2], offset, text[open_[2]:offset]))
                open_ = None
        offset += len(line)
    if open_:
        raise MarkerError(f"{path}:{open_[1]}: {begin(open_[0])} has no {end(open_[0])} after it")
    return out


def find(text, name, path="<text>", names=None):
    """The block `name` of `text`, or None."""
    return next((b for b in blocks(text, path, names) if b.name == name), None)


def replace(text, name, body, path="<text>", names=None):
    """`text` with the content of block `name` replaced by `body` (a final newline is added when it
    has none), or None when there is no such block."""
    b = find(text, name, path, names)
    if b is None:
        return None
    if body and not body.endswith("\n"):
        body += "\n"
    return text[:b.start] + body + text[b.stop:]


def wrap(name, body):
    """A whole block: the fill marker, `body`, the end marker (no final newline)."""
    return begin(name) + "\n" + body.rstrip("\n") + "\n" + end(name)


def insert_after(text, after, name, body, path="<text>", names=None):
    """`text` with a new block `name` holding `body`, a blank line after the end of block `after`;
    None when there is no block `after`."""
    b = find(text, after, path, names)
    if b is None:
        return None
    cut = b.stop + len(end(after))
    return text[:cut] + "\n\n" + wrap(name, body) + text[cut:]


# ---- the notes and where their blocks come from --------------------------------------------------
def note_files(root=ROOT):
    """The Markdown files of the workbook that carry notes: every tracked *.md (every *.md outside
    build folders without git, e.g. in a student kit) outside results/, report_template/ and the
    student's report/ (the report's blocks are wb report's, with names of their own)."""
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True,
                                check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                  if f.endswith(".md") and not set(os.path.relpath(d, root).split(os.sep)) & SKIP_DIRS]
    return sorted(p for p in listed if not p.startswith(("results/", "report_template/", "report/", "grade/"))
                  and os.path.exists(os.path.join(root, p)))


def cited(content, pattern):
    m = re.search(pattern, content)
    return m.group(1) if m else None


def expected(path, block, text, root=ROOT):
    """(what the block should hold, the source it came from), or (None, why it cannot be
    regenerated). `path` is relative to `root`; `text` is the whole note."""
    from wb import bench_summary, e2e, fill, profile_table
    lang = "zh" if path.endswith(".zh-CN.md") else "en"
    name, content = block.name, block.content
    if name == "results" or name.startswith("results-"):
        src = cited(content, r"`([^`]+\.csv)`[)）]")
        cmd = cited(content, r"\n`([^`]+)`\n")
        if not src or not cmd:
            return None, "its caption names no command and CSV"
        rows = fill.read_rows(os.path.join(root, src))
        chapter = os.path.dirname(path)
        mine = [r for r in rows if r["chapter"] == chapter]
        if not mine:
            return None, f"{src} has no rows of {chapter}"
        return fill.table(mine, lang, cmd, src, fill.shown_shapes(content)) + "\n", src
    if name == "profile" or name.startswith("profile-"):
        src = cited(content, r"`(results/[^`]+\.log)`")
        caption = content.split("\n\n", 1)[0]
        if not src:
            return None, "its caption cites no log"
        key = (os.path.dirname(path)[:2], name[len("profile-"):])  # profile-WORD: the section "== profile-NN WORD"
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            log = f.read()
        chapters = profile_table.parse(log if "== profile-" in log else f"== profile-{key[0]}\n" + log)
        if key not in chapters:
            return None, f"{src} has no section == profile-{' '.join(key).strip()}"
        return caption + "\n\n" + profile_table.table(*chapters[key]) + "\n", src
    if name == "ladder":
        src = cited(content, r"`([^`]+\.csv)`[)）]")
        if not src:
            return None, "its caption names no CSV"
        return bench_summary.ladder(fill.read_rows(os.path.join(root, src)), lang, src) + "\n", src
    if name == "cutlass" or name.startswith("cutlass-"):
        src = cited(content, r"`([^`]+\.csv)`[)）]")
        if not src:
            return None, "its caption names no CSV"
        rows = fill.read_rows(os.path.join(root, src))
        results = find(text, fill.results_of_versus(name), path)
        only = fill.shown_shapes(results.content) if results else None
        return bench_summary.versus_cutlass(rows, os.path.dirname(path), lang, src, only) + "\n", src
    if name == "ceiling":
        src = cited(content, r"`([^`]+\.csv)`[;；]")
        roof = cited(content, r"`([^`]+ceiling_\d\d\.csv)`")
        if not src or not roof:
            return None, "its caption names no bench CSV or no ceiling CSV"
        rows = fill.read_rows(os.path.join(root, src))
        results = find(text, fill.NAME, path)
        only = fill.shown_shapes(results.content) if results else None
        return bench_summary.versus_ceiling(rows, fill.read_rows(os.path.join(root, roof)), os.path.dirname(path), lang,
                                            src, roof, only) + "\n", src
    if name.startswith("e2e-"):
        prov = find(text, "e2e-provenance", path)
        folder = prov and cited(prov.content, r"--out (\S+?)`")
        if not folder:
            return None, "the e2e-provenance block names no --out folder"
        return "\n".join(e2e.sections(os.path.join(root, folder), lang)[name[4:]]) + "\n", folder
    if name in EXCERPTS or name.startswith(EXCERPT_PREFIX):
        src = cited(content, r"`(results/[^`]+\.(?:log|csv|txt))`")
        fence = cited(content, r"(?s)```\n(.*?)```")
        if not src or fence is None:
            return None, "it cites no log or holds no fenced excerpt"
        with open(os.path.join(root, src), encoding="utf-8", errors="replace") as f:
            log = f.read()
        # Only the excerpt comes from the log; the caption and the reading around it are prose. An
        # excerpt inside a list item is indented with it: the indentation is the note's, not the log's.
        verbatim = textwrap.dedent(fence.rstrip(" "))
        return (content if fence in log or verbatim in log else content.replace(fence, "(not found in the log)\n")), src
    if name == "env":
        src = cited(content, r"--json (\S+?)`")
        if not src:
            return None, "it names no JSON of 00_env_check --json"
        with open(os.path.join(root, src), encoding="utf-8") as f:
            env = json.load(f)
        return fill.env_row(env, lang, src) + "\n", src
    return None, "no tool writes it"


def check(root=ROOT, files=None, out=sys.stdout):
    """Checks every block of the notes; returns (exit status, the not-regenerated blocks as
    (file, line, name, reason))."""
    status, skipped = 0, []
    for path in files if files is not None else note_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        try:
            found = blocks(text, path, NOTE_NAMES)
        except MarkerError as e:
            print(f"error: {e}", file=out)
            status = 1
            continue
        for b in found:
            try:
                want, src = expected(path, b, text, root)
            except OSError as e:
                want, src = None, f"its source cannot be read ({e.strerror}: {e.filename})"
            except (ValueError, KeyError, IndexError, TypeError) as e:
                want, src = None, f"its source is not what its tool reads ({e!r})"
            where = f"{path}:{b.line}: {b.name}"
            if want is None:
                print(f"{where}: not regenerated: {src}", file=out)
                skipped.append((path, b.line, b.name, src))
            elif want == b.content:
                print(f"{where}: ok (from {src})", file=out)
            else:
                have, new = b.content.splitlines(), want.splitlines()
                i = next((i for i, (x, y) in enumerate(zip(have, new)) if x != y), min(len(have), len(new)))
                print(f"{where}: DIFFERS from {src}, content line {i + 1}: the note has "
                      f"{(have[i] if i < len(have) else '(nothing)')!r}, the source gives "
                      f"{(new[i] if i < len(new) else '(nothing)')!r}", file=out)
                status = 1
    return status, skipped


# ---- the lint: measured-looking figures outside every block --------------------------------------
# A number (with an optional ~ or ≈, thousands separators, a decimal part, a range "95-99") and a
# unit that only a measurement gives in these notes.
FIGURE = re.compile(
    r"(?<![\w.`/-])[~≈]?\d[\d,]*(?:\.\d+)?(?:\s?[-–]\s?\d[\d,]*(?:\.\d+)?)?\s?"
    r"(?:%|％|[TGM]FLOP/s|[TGM]B/s|(?:ms|µs|us|ns|min|s)\b|x (?:faster|slower|cheaper|more|less|as)\b|(?<=\d)[x×](?![\w(])|倍(?!数)|\s?(?:毫秒|微秒|秒|分钟))")


def figures(text, path="<text>"):
    """[(line, figure, the line)]: each measured-looking figure of `text` outside its blocks and
    outside lines that carry NOT_MEASURED. Raises MarkerError as blocks() does."""
    inside = set()
    for b in blocks(text, path, NOTE_NAMES):
        first = text.count("\n", 0, b.start) + 1
        inside.update(range(first, text.count("\n", 0, b.stop) + 1))
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if number in inside or NOT_MEASURED in line:
            continue
        found += [(number, m.group(0).strip(), line) for m in FIGURE.finditer(line)]
    return found


def lint(root=ROOT, files=None, out=sys.stdout):
    """Prints file:line and the figure for each measured-looking figure outside every block of the
    notes; returns the exit status (1 when there is one, or a marker cannot be read)."""
    status = 0
    for path in files if files is not None else note_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        try:
            found = figures(text, path)
        except MarkerError as e:
            print(f"error: {e}", file=out)
            status = 1
            continue
        for number, figure, _ in found:
            print(f"{path}:{number}: {figure!r} is a hand-typed figure outside every filled block "
                  f"(fill it from a committed file, or mark a figure that is not measured with {NOT_MEASURED})", file=out)
            status = 1
    return status


def register(sub):
    p, cmds = add_command(sub, "notes", "the filled blocks of the notes: list them, check them against their sources",
                          __doc__, nested=True)
    cmds.add_parser("list", help="every filled block: file:line and name")
    cmds.add_parser("check", help="regenerate every block from what it cites, then lint; exit 1 when one differs")
    cmds.add_parser("lint", help="the measured-looking figures outside every block; exit 1 when there is one")
    p.set_defaults(run=main)


def main(a):
    if a.cmd == "lint":
        status = lint()
        print(f"notes lint: {'failed' if status else 'passed'}")
        return status
    if a.cmd == "check":
        status, skipped = check()
        status = lint() or status
        print(f"notes check: {'failed' if status else 'passed'}, {len(skipped)} block(s) not regenerated")
        return status
    status = 0
    for path in note_files():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        try:
            for b in blocks(text, path, NOTE_NAMES):
                print(f"{path}:{b.line}: {b.name}")
        except MarkerError as e:
            print(f"error: {e}")
            status = 1
    return status
