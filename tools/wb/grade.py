"""wb.grade - `python3 -m wb grade`: the grader's Python half (tools/grade.sh runs the GPU half). Standard library only; no
GPU needed.

The instructor grades a student's submission with the instructor's own copy of the workbook and
the manifest that `make student-kit` wrote beside the kit. Nothing of the submission is used but
the text between its TODO(student) lines: `assemble` writes a fresh kit from the instructor's tree,
checks it against the manifest, pours the student's region text into it, and lists every other
difference the submission has (edited tests, tools, launchers, deleted files) by file. What is built
and run is that tree, with the kit's harness, tests, variant tables and Makefiles.

  python3 -m wb grade assemble --submission DIR --manifest FILE --out DIR
  python3 -m wb grade score GRADE_DIR [--rubric FILE]
  python3 -m wb grade homework --manifest FILE         the homework chapters, one a line
  python3 -m wb grade variants HELP_FILE               the variant names a program's --help lists
  python3 -m wb grade shapes SEED                      the random sweep shapes of SEED (2 lines)
  python3 -m wb grade bench-shape [--rubric FILE]      the benchmark shape of the rubric
  python3 -m wb grade needs-reference [--rubric FILE]  "yes" when tiers are relative to the reference run
  python3 -m wb grade idea CHAPTER [--rubric FILE]     "sass" when the chapter's idea rule reads SASS

What `score` reads in GRADE_DIR (grade.sh writes it):
  results.tsv          seed, shapes, started, bench_shape, gpu_cc; build/tests/program/sweep/bench per
                       chapter; sanitize CHAPTER TOOL VARIANT ok|fail EXIT ("*": the whole chapter);
                       gradable CHAPTER no CC
  sweep.csv, bench.csv the programs' CSV rows; reference.csv: the workbook's own solution on this GPU
  trace_CH.tsv         the kernels each variant ran (common/kernel_trace.h)
  sass_CH.txt          cuobjdump -sass of the chapter's program
  variants_CH.txt      the program's --help (its variant table)
  changes.tsv, regions.tsv, kernels.tsv   written by assemble
and writes grade.csv (one row per chapter, variant, report section, total) and grade.md.

Exit status: 0 done; 1 the submission could not be assembled at all; 2 bad usage or unreadable
input (a manifest that does not match this workbook included).
"""
import collections
import csv
import datetime
import hashlib
import json
import os
import random
import re
import sys

from wb import ROOT, add_command
from wb import kit as sk
from wb import shapes as wb_shapes
from wb.bench_summary import number  # a CSV number, or None
from wb.shapes import shape_text

DEFAULT_RUBRIC = os.path.join(ROOT, "report_template", "rubric.json")
BASELINES = {"cublas_sgemm", "cublas_tf32", "cublas_hgemm", "cublas_bgemm", "cublaslt_fp8"}
CSV_COLUMNS = ["kind", "chapter", "variant", "dtype", "build", "tests", "correctness", "worst_rel_err",
               "sanitizer", "kernels", "idea", "pct_cublas", "points", "max_points", "note",
               "student", "gpu", "cc", "driver", "runtime", "timestamp", "seed", "kit", "changes"]
# Kernel names that belong to libraries (cuBLAS, cuBLASLt, CUTLASS, CUB, Thrust), for the message.
LIBRARY_RE = re.compile(r"^(sm\d+_|ampere_|volta_|turing_|hopper_|xmma|cublas|cutlass|cub::|thrust::|gemm|"
                        r"splitKreduce|gemv|dot_kernel|scal_kernel|axpy)", re.I)


class UsageError(Exception):
    pass


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_text(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


# ==== assemble: the tree to grade ===================================================================

def read_json(path, what):
    """The JSON object in path; UsageError naming `what` when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {what} {path}: {e}")


def load_manifest(path):
    m = read_json(path, "the kit manifest")
    if m.get("kind") != sk.MANIFEST_KIND or not isinstance(m.get("files"), dict):
        raise UsageError(f"{path} is not a kit manifest (make student-kit writes one beside the kit)")
    return m


def submission_files(root):
    """Every file of the submission that is not a build output (relative paths)."""
    out = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in sk.SKIP_DIRS and not d.startswith("."))
        rel = os.path.relpath(here, root)
        for n in sorted(names):
            p = os.path.normpath(os.path.join(rel, n)).replace(os.sep, "/")
            parts = p.split("/")
            if n.endswith(sk.SKIP_EXTS) or os.path.islink(os.path.join(here, n)):
                continue
            if len(parts) == 2 and re.fullmatch(r"\d\d_\w+", parts[0]) and parts[1] in (parts[0], "test_" + parts[0]):
                continue  # a chapter's binaries
            out.append(p)
    return out


def code_lines(text):
    """The lines of `text` with comments, string and character literals taken out."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    out = []
    for line in text.split("\n"):
        line = re.sub(r'"(\\.|[^"\\])*"|\'(\\.|[^\'\\])*\'', '""', line)
        out.append(line.split("//", 1)[0])
    return out


# The alternative spellings of punctuation (digraphs): a region must not hide a brace or a directive
# in them. Spelled as their usual tokens before any rule looks at them.
DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]", "%:": "#", "%:%:": "##",
            "??=": "#", "??=??=": "##", "??<": "{", "??>": "}", "??(": "[", "??)": "]"}  # and trigraphs
PAIRS = {"{": "}", "(": ")", "[": "]"}


class LexerMissing(RuntimeError):
    """libclang's Python bindings are not installed: regions cannot be read as C++."""


def cpp_tokens(text):
    """[(spelling, line)] of `text` read as C++ by libclang's tokenizer, as the most permissive
    compiler would read it (line splices joined first, as translation phase 2 does, so a line number
    counts the lines after joining; trigraphs on; digraphs and trigraphs spelled as their usual
    tokens; comments left out): whatever a region does with comment markers in strings, raw
    strings or splices, these are the tokens the compiler sees."""
    try:
        from clang import cindex
    except ImportError:
        raise LexerMissing("the C++ lexer of the grader is missing: install python3-clang (apt) or libclang (pip); "
                           "tools/setup.sh does") from None
    text = re.sub(r"\\\r?\n", "", text)
    tu = cindex.Index.create().parse("region.cu", args=["-x", "c++", "-std=c++17", "-trigraphs"],
                                     unsaved_files=[("region.cu", text)], options=0)
    out = []
    for t in tu.get_tokens(extent=tu.cursor.extent):
        if t.kind == cindex.TokenKind.COMMENT:
            continue
        out.append((DIGRAPHS.get(t.spelling, t.spelling), t.location.line))
    return out


def region_problem(text):
    """Why a student's region text cannot be graded, or "" when it can. The text goes into one
    function body of the kit, read as C++ tokens: no preprocessor directive in any spelling but
    `#pragma unroll [N]` and `_Pragma("unroll [N]")`, braces, parentheses and brackets that balance
    without ever closing one the region did not open (nothing leaves the function), and no marker
    text that would confuse the next reader."""
    if sk.LOOSE_RE.search(text) or "TODO(student)" in text:
        return "holds region marker text"
    tokens = cpp_tokens(text)
    stack = []
    for i, (tok, line) in enumerate(tokens):
        if tok in ("#", "##"):
            rest = [t for t, ln in tokens[i + 1:] if ln == line]
            if not (tok == "#" and rest[:2] == ["pragma", "unroll"] and len(rest) <= 3 and
                    all(re.fullmatch(r"\d+", t) for t in rest[2:])):
                return f"line {line}: a preprocessor directive ({tok}{rest[0] if rest else ''}) is not allowed in a region"
        elif tok == "_Pragma":
            call = [t for t, _ in tokens[i + 1:i + 4]]
            if not (len(call) == 3 and call[0] == "(" and call[2] == ")" and re.fullmatch(r'"unroll( \d+)?"', call[1])):
                return f"line {line}: _Pragma other than _Pragma(\"unroll\") is not allowed in a region"
        elif tok in PAIRS:
            stack.append(tok)
        elif tok in PAIRS.values():
            if not stack or PAIRS[stack[-1]] != tok:
                return f"line {line}: closes a {tok} the region did not open (code outside the function)"
            stack.pop()
    if stack:
        return f"opens {len(stack)} bracket(s) it does not close ({' '.join(stack)})"
    return ""


def is_blank(text):
    return not "".join(code_lines(text)).strip()


def kit_layout(kit_text, name):
    """(lines, [TODO blocks]) of a kit file."""
    return sk.split_lines(kit_text), [t for t in sk.parse_todos(kit_text, name) if t.kind == sk.SOLUTION]


def student_regions(text, name, hints):
    """The student's text of each region of a region file, matched by order and hint, and the file
    with the regions emptied (to compare with the kit's). Raises sk.KitError when the markers are
    not the kit's."""
    lines, todos = kit_layout(text, name)
    if [t.hint for t in todos] != hints:
        raise sk.KitError(f"the TODO(student) markers are not the kit's ({len(todos)} found, {len(hints)} expected, "
                          "or their hints were edited)")
    contents, blanked, pos = [], [], 0
    for t in todos:
        blanked.extend(lines[pos:t.begin + 1])
        contents.append("".join(lines[t.begin + 1:t.end]))
        pos = t.end
    blanked.extend(lines[pos:])
    return contents, "".join(blanked)


def fill_regions(kit_text, name, contents):
    lines, todos = kit_layout(kit_text, name)
    out, pos = [], 0
    for t, text in zip(todos, contents):
        out.extend(lines[pos:t.begin + 1])
        if text:
            out.append(text if text.endswith("\n") else text + "\n")
        pos = t.end
    out.extend(lines[pos:])
    return "".join(out)


def edit_size(a, b):
    """ "N line(s) removed, M added": the size of the edit from text a to text b."""
    import difflib
    diff = [line for line in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
            if not line.startswith(("+++", "---"))]
    return f"{sum(x[:1] == '-' for x in diff)} line(s) removed, {sum(x[:1] == '+' for x in diff)} added"


# How the mangled name of a kernel in an unnamed namespace spells that namespace.
ANONYMOUS_NAMESPACE = "_GLOBAL__N_1"


def declared_kernels(text):
    """The qualified names ("ch03::sgemm_smem_tiled") of the __global__ functions a source text
    declares, read as C++ tokens: the namespaces around each declaration count, so a kernel renamed
    into another namespace is not the chapter's."""
    tokens = [t for t, _ in cpp_tokens(text)]
    scopes, pending, out = [], None, set()
    for i, tok in enumerate(tokens):
        if tok == "namespace":
            names = []
            for t in tokens[i + 1:]:
                if t == "{":
                    break
                if t != "::":
                    names.append(t)
            pending = names or [ANONYMOUS_NAMESPACE]
        elif tok == "{":
            scopes.append(pending or [])
            pending = None
        elif tok == "}":
            if scopes:
                scopes.pop()
        elif tok == ";":
            pending = None
        elif tok == "__global__":
            # The kernel's name: the identifier before the first "(" that is not an attribute's.
            j = i + 1
            while j < len(tokens):
                t = tokens[j]
                if t in ("__launch_bounds__", "__cluster_dims__", "__maxnreg__") and tokens[j + 1:j + 2] == ["("]:
                    j += 1
                    depth = 0
                    while j < len(tokens):
                        depth += (tokens[j] == "(") - (tokens[j] == ")")
                        j += 1
                        if depth == 0:
                            break
                    continue
                if t == "(":
                    if tokens[j - 1].isidentifier():
                        out.add("::".join([n for scope in scopes for n in scope] + [tokens[j - 1]]))
                    break
                j += 1
    return out


def assemble(submission, manifest_path, out):
    m = load_manifest(manifest_path)
    if not os.path.isdir(submission):
        raise UsageError(f"the submission {submission} is not a folder")
    cpp_tokens("")  # before anything is written: without the lexer no region can be read
    tree = os.path.join(out, "tree")
    if os.path.exists(tree):
        raise UsageError(f"{tree} exists already: assemble into a new folder")
    homework = m["homework"]
    os.makedirs(tree)
    files, regions, _ = sk.write_kit(tree, ROOT, homework)
    differ = sorted(set(files.items()) ^ set(m["files"].items()))
    if differ:
        names = sorted({p for p, _ in differ})
        raise UsageError(f"this workbook is not the one the kit was made from: {len(names)} file(s) of a fresh kit "
                         f"differ from the manifest (first: {names[0]}); grade from the workbook at commit "
                         f"{m.get('workbook_git', 'unknown')}")

    changes, region_rows = [], []
    for p in sorted(m["files"]):
        src = os.path.join(submission, p)
        if not os.path.isfile(src):
            changes.append((p, "MISSING", "the kit's file is used"))
            if p in m["regions"]:
                for n, hint in enumerate(m["regions"][p]["hints"], 1):
                    region_rows.append((p, n, hint, "empty", "the file is missing"))
            continue
        if p not in m["regions"]:
            if sk.file_sha256(src) != m["files"][p]:
                changes.append((p, "MODIFIED", "not used: the kit's file is graded"))
            continue
        hints, kit_text = m["regions"][p]["hints"], m["regions"][p]["kit_text"]
        text = read_text(src)
        try:
            contents, blanked = student_regions(text, p, hints)
        except sk.KitError as e:
            changes.append((p, "MARKERS", f"{e}: every region of the file is graded empty"))
            for n, hint in enumerate(hints, 1):
                region_rows.append((p, n, hint, "empty", "markers damaged"))
            continue
        if blanked != kit_text:
            changes.append((p, "MODIFIED", f"outside the TODO(student) regions ({edit_size(kit_text, blanked)}): "
                                           "not used, the kit's text is graded"))
        accepted = []
        for n, (hint, body) in enumerate(zip(hints, contents), 1):
            why = region_problem(body)
            if is_blank(body):
                region_rows.append((p, n, hint, "empty", ""))
                accepted.append("")
            elif why:
                region_rows.append((p, n, hint, "rejected", why))
                accepted.append("")
            else:
                region_rows.append((p, n, hint, "filled", f"{body.count(chr(10))} line(s)"))
                accepted.append(body)
        with open(os.path.join(tree, p), "w", encoding="utf-8", newline="") as f:
            f.write(fill_regions(kit_text, p, accepted))
    for p in submission_files(submission):
        if p not in m["files"]:
            changes.append((p, "NEW", "not used"))

    # The kernels each chapter declares outside the regions (the kit's text): a variant may run
    # these and no others. common/'s are the harness's.
    kernels = []
    for p in sorted(files):
        if p.endswith(sk.SOURCE_EXTS) and "/test_" not in "/" + p:
            owner = sk.chapter_of_path(p) or p.split("/", 1)[0]
            text = m["regions"][p]["kit_text"] if p in m["regions"] else read_text(os.path.join(tree, p))
            for name in sorted(declared_kernels(text)):
                kernels.append((owner, name, p))
    write_tsv(os.path.join(out, "changes.tsv"), ["file", "state", "what"], changes)
    write_tsv(os.path.join(out, "regions.tsv"), ["file", "n", "hint", "state", "detail"], region_rows)
    write_tsv(os.path.join(out, "kernels.tsv"), ["chapter", "kernel", "file"], kernels)
    with open(os.path.join(out, "homework.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(homework) + "\n")
    with open(os.path.join(out, "kit.json"), "w", encoding="utf-8") as f:
        json.dump({"manifest": os.path.abspath(manifest_path), "workbook_git": m.get("workbook_git"),
                   "created": m.get("created"), "homework": homework,
                   "manifest_sha256": sk.file_sha256(manifest_path)}, f, indent=1)
    filled = sum(r[3] == "filled" for r in region_rows)
    print(f"grade: assembled {tree}: {filled} of {len(region_rows)} region(s) filled, "
          f"{sum(r[3] == 'rejected' for r in region_rows)} rejected; {len(changes)} other change(s) listed, not used")
    return 0


def write_tsv(path, header, rows):
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def read_tsv(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


# ==== what ran: traces, SASS, variant tables ========================================================

def mangled_parts(name):
    """The qualified name of an Itanium-mangled function (["hopper", "wgmma_loop"]), or [name] when
    it is not mangled (extern "C" kernels, as cuBLAS's)."""
    if not name.startswith("_Z"):
        return [name]
    i, parts = 2, []
    nested = name[i:i + 1] == "N"
    i += nested
    while i < len(name):
        while i < len(name) and name[i] in "KVrL":
            i += 1
        m = re.match(r"\d+", name[i:])
        if not m:
            break
        n = int(m.group(0))
        i += len(m.group(0))
        parts.append(name[i:i + n])
        i += n
        if not nested or name[i:i + 1] in ("I", "E", ""):
            break
    return parts or [name]


def short_name(name):
    """A kernel's name as a person reads it: the qualified name, with the first template argument
    when it is a name (CUTLASS's Kernel2<cutlass_80_simt_sgemm_...>); unmangled names as they are."""
    parts = mangled_parts(name)
    text = "::".join(parts)
    if name.startswith("_Z"):
        at = name.find(parts[-1]) + len(parts[-1])
        m = re.match(r"I(\d+)", name[at:])
        if m and name[at + 1 + len(m.group(1)):at + 1 + len(m.group(1)) + int(m.group(1))].isidentifier():
            text += "<" + name[at + 1 + len(m.group(1)):at + 1 + len(m.group(1)) + int(m.group(1))] + ">"
    return text if len(text) <= 90 else text[:87] + "..."


def read_trace(path):
    """{(variant, dtype): [kernel dict]} from a trace file."""
    out = collections.defaultdict(list)
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 8:
                continue
            label = p[0].split(" ")
            if len(label) < 3:
                continue
            shape = wb_shapes.parse_shape(label[2])
            if p[1] == "-":  # a window in which nothing ran
                out[(label[0], label[1])]
                continue
            out[(label[0], label[1])].append(dict(kernel=p[1], launches=int(p[2]), smem=int(p[3]) + int(p[4]),
                                                  regs=int(p[5]), block=int(p[6]), grid=int(p[7]), shape=shape))
    return out


def read_sass(path):
    """{mangled kernel name: Counter of opcodes (full, e.g. LDS.U.128)} from cuobjdump -sass."""
    from wb import sass_loop
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        return {name: collections.Counter(op for _, op, _ in body) for name, body in sass_loop.kernels(f)}


def read_variants(path):
    """[(name, dtype)] from a program's --help: the lines under "variants:"."""
    if not os.path.exists(path):
        return []
    out, on = [], False
    for line in read_text(path).splitlines():
        if line.strip() == "variants:":
            on = True
            continue
        m = re.match(r"\s+(\S+)\s+(fp32|tf32|fp16|bf16|fp8_e4m3):", line) if on else None
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def read_results(path):
    info, recs = {}, collections.defaultdict(dict)
    if not os.path.exists(path):
        return info, recs
    for line in read_text(path).splitlines():
        p = line.split("\t")
        if len(p) < 3:
            continue
        if p[1] == "-":
            info[p[0]] = p[2]
        elif p[0] == "sanitize":
            recs["sanitize"][(p[1], p[2], p[3])] = p[4:]
        else:
            recs[p[0]][p[1]] = p[2:]
    return info, recs


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r.get("chapter") and r["chapter"] != "chapter"]


# The status of a row whose correctness run passed but one of whose timed launches, on fresh
# inputs, computed a wrong result (common/fresh_inputs.cuh).
TIMED_FAIL = "FAIL (wrong in a timed run)"


def is_skipped(row):
    return row.get("status", "").startswith("skipped")


# ==== the rubric ====================================================================================

def load_rubric(path):
    rubric = read_json(path, "the rubric")
    if not isinstance(rubric.get("chapters"), dict):
        raise UsageError(f"the rubric {path} has no \"chapters\" object")
    if rubric.get("scoring", "per_variant") not in ("per_variant", "chapter"):
        raise UsageError(f"rubric {path}: \"scoring\" is per_variant or chapter")
    for name, ch in rubric["chapters"].items():
        for perf in ch.get("performance", []):
            if "dtype" not in perf or not isinstance(perf.get("tiers"), list):
                raise UsageError(f"rubric {name}: every performance entry needs \"dtype\" and \"tiers\"")
            for t in perf["tiers"]:
                if ("min_pct_cublas" in t) == ("min_pct_reference" in t) or "points" not in t:
                    raise UsageError(f"rubric {name}: a tier has \"points\" and one of \"min_pct_cublas\", "
                                     "\"min_pct_reference\"")
    return rubric


def needs_reference(rubric):
    return any("min_pct_reference" in t for ch in rubric["chapters"].values()
               for perf in ch.get("performance", []) for t in perf["tiers"])


def tier_points(tiers, pct, ref_pct):
    best = 0
    for t in tiers:
        if pct is None:
            continue
        if "min_pct_cublas" in t:
            reached = pct >= float(t["min_pct_cublas"])
        else:
            reached = ref_pct is not None and ref_pct > 0 and 100.0 * pct / ref_pct >= float(t["min_pct_reference"])
        if reached:
            best = max(best, t["points"])
    return best


# ==== scoring =======================================================================================

def sweep_shapes(seed):
    """Four shapes drawn from SEED: every M, N, K in 1..1500; the first two (one of them tiny) have
    no dimension that is a multiple of 16 (so of no tile of 16, 32, 64 or 128) and K % 4 != 0; the
    third has K % 4 != 0; the fourth is free. Returns (all, small) as lists of (M, N, K)."""
    rng = random.Random(seed)

    def dim(lo, hi, odd=False, k_odd=False):
        while True:
            v = rng.randint(lo, hi)
            if (odd and v % 16 == 0) or (k_odd and v % 4 == 0):
                continue
            return v

    shapes = [
        (dim(257, 1500, True), dim(257, 1500, True), dim(257, 1500, True, True)),
        (dim(1, 40, True), dim(1, 40, True), dim(1, 40, True, True)),
        (dim(1, 1500), dim(1, 1500), dim(1, 1500, k_odd=True)),
        (dim(1, 1500), dim(1, 1500), dim(1, 1500)),
    ]
    small = sorted(shapes, key=lambda s: s[0] * s[1] * s[2])[:2]
    return shapes, small


def sanitizer_shapes(seed):
    """Two small shapes drawn from SEED for the sanitizer, beside the chapter's own (its Makefile's
    SANITIZE_ARGS, which ship in the kit): dimensions in 17..160, none a multiple of 16, K % 4 != 0,
    so a race or an out-of-bounds access that shows only on edges a student did not test is run
    too. Small, because the sanitizer runs a kernel tens of times slower."""
    rng = random.Random(f"sanitizer-{seed}")

    def dim(k=False):
        while True:
            v = rng.randint(17, 160)
            if v % 16 and not (k and v % 4 == 0):
                return v

    return [(dim(), dim(), dim(k=True)) for _ in range(2)]


class Chapter:
    """What is known of one graded chapter's run, read from the grade folder."""

    def __init__(self, g, name):
        self.name = name
        self.variants = read_variants(os.path.join(g, f"variants_{name}.txt"))
        self.traces = read_trace(os.path.join(g, f"trace_{name}.tsv"))
        self.sass = read_sass(os.path.join(g, f"sass_{name}.txt"))


def kernel_verdict(chapter, kernels, declared, policy):
    """"" when every kernel the variant ran is the chapter's (or the harness's), else why not."""
    if policy == "any":
        return ""
    if not kernels:
        return "launched no kernel"
    own = declared.get(chapter, set()) | declared.get("common", set())
    for k in kernels:
        parts = mangled_parts(k["kernel"])
        name = "::".join(parts)  # the whole qualified name: another namespace is another kernel
        if name in own and not LIBRARY_RE.match(parts[0]):
            continue
        short = short_name(k["kernel"])
        others = sorted(c for c, names in declared.items() if c not in (chapter, "common") and name in names)
        if others:
            return f"launched chapter {others[0][:2]}'s kernel {short}"
        if LIBRARY_RE.match(parts[0]) or not k["kernel"].startswith("_Z"):
            return f"launched a library kernel: {short}"
        return f"launched a kernel that {chapter} does not declare: {short}"
    return ""


def idea_verdict(idea, kernels, sass):
    """"" when one kernel the variant ran shows every mark of the chapter's idea, else what is missing."""
    if not idea:
        return ""
    if not kernels:
        return "launched no kernel"
    missing = []
    for name in dict.fromkeys(k["kernel"] for k in kernels):
        records = [k for k in kernels if k["kernel"] == name]
        lacks = []
        if idea.get("smem") and not any(r["smem"] > 0 for r in records):
            lacks.append("no shared memory")
        if idea.get("sass"):
            ops = None if sass is None else sass.get(name)
            if ops is None:
                lacks.append("its SASS is not in the program (cuobjdump)")
            else:
                for pattern in idea["sass"]:
                    if not any(re.search(pattern, op) for op in ops):
                        lacks.append(f"no {pattern.strip('^')} instruction")
        if idea.get("min_c_per_thread"):
            big = max(records, key=lambda r: r["shape"][0] * r["shape"][1])
            per = big["shape"][0] * big["shape"][1] / max(1, big["grid"] * big["block"])
            if per < idea["min_c_per_thread"]:
                lacks.append(f"{per:.1f} element(s) of C per thread (at least {idea['min_c_per_thread']})")
        if not lacks:
            return ""
        missing.append(f"{short_name(name)}: {', '.join(lacks)}")
    return f"not the chapter's idea ({idea.get('what', '')}): " + "; ".join(missing)


def judge_variant(key, chapter, ch, recs, info, sweep_rows, bench_rows, bench_shape, declared, rubric):
    """What the graded run says of one variant: right everywhere, the chapter's own kernels and idea,
    clean under the sanitizer, its % of cuBLAS at the benchmark shape, and why not where it is not."""
    v, dtype = key
    rows_s = [r for r in sweep_rows if r["chapter"] == chapter and (r["variant"], r["dtype"]) == key]
    rows_b = [r for r in bench_rows if r["chapter"] == chapter and (r["variant"], r["dtype"]) == key]
    rows = rows_s + rows_b
    if rows and all(is_skipped(r) for r in rows):
        return dict(key=key, here=False, why="not run on this GPU (" + rows[0]["status"].split("(", 1)[-1].rstrip(")") + ")")
    reasons = []
    nsweep = int(info.get("sweep_rows", "0") or 0)
    # IMPLAUSIBLE: every check passed but the time is faster than the GPU can compute (a replay the
    # checks did not see): right, and no performance credit (pct below comes from PASS rows only).
    right = [r for r in rows if r["status"] in ("PASS", "IMPLAUSIBLE")]
    correct = bool(rows_s) and bool(rows_b) and len(right) == len(rows) and len(rows_s) >= nsweep
    if not rows:
        reasons.append("no result rows (the program stopped before it)")
    elif not correct:
        timed = sorted({shape_text(row_shape(r)) for r in rows if r["status"] == TIMED_FAIL})
        bad = sorted({shape_text(row_shape(r)) for r in rows if r not in right and r["status"] != TIMED_FAIL})
        if timed:
            reasons.append(f"wrong in a timed run (fresh inputs, checked after the launch) at {', '.join(timed[:3])}")
        if bad or not timed:
            reasons.append(f"wrong result at {', '.join(bad[:3])}" if bad else "not run on every shape")
    implausible = sorted({shape_text(row_shape(r)) for r in rows if r["status"] == "IMPLAUSIBLE"})
    if implausible:
        reasons.append(f"implausible rate (above the GPU's peak) at {', '.join(implausible[:3])}: "
                       "no performance credit")
    kernels = ch.traces.get(key, [])
    kv = kernel_verdict(chapter, kernels, declared, rubric.get("kernels", {}).get(chapter, "own"))
    iv = idea_verdict(rubric.get("ideas", {}).get(chapter), kernels, ch.sass) if not kv else ""
    reasons += [x for x in (kv, iv) if x]
    san = {}
    for tool in ("memcheck", "racecheck"):
        rec = recs["sanitize"].get((chapter, tool, v)) or recs["sanitize"].get((chapter, tool, "*"))
        san[tool] = "not run" if rec is None else ("ok" if rec[0] == "ok" else "FAIL")
    race = san["racecheck"] == "FAIL" and rubric.get("race_fails_correctness", True)
    if race:
        reasons.append("racecheck reported a shared-memory race")
    if san["memcheck"] == "FAIL":
        reasons.append("memcheck reported a memory error")
    b = next((r for r in rows_b if row_shape(r) == bench_shape), None)
    errs = [e for e in (number(r["rel_err"]) for r in rows) if e is not None]
    # Sanitizer credit needs a variant that computes something: an empty region is clean too.
    computes = bool(right)
    return dict(key=key, here=True, correct=correct and not race, own=not kv and not iv,
                san_ok=computes and all(x == "ok" for x in san.values()), san=san,
                pct=number(b["pct_cublas"]) if b and b["status"] == "PASS" else None,
                worst=max(errs) if errs else None, why="; ".join(reasons),
                kernels=", ".join(dict.fromkeys(short_name(k["kernel"]) for k in kernels)) or "-")


def row_shape(r):
    return int(r["M"]), int(r["N"]), int(r["K"])


def score(g, rubric_path):
    rubric = load_rubric(rubric_path)
    if not os.path.isdir(g):
        raise UsageError(f"{g} is not a folder (run tools/grade.sh first)")
    for name in ("grade.csv", "grade.md"):
        path = os.path.join(g, name)
        if os.path.isdir(path) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise UsageError(f"cannot write {path}")
    info, recs = read_results(os.path.join(g, "results.tsv"))
    if not recs.get("build"):
        raise UsageError(f"{g}/results.tsv is missing or has no build records (run tools/grade.sh first)")
    homework = [c for c in read_text(os.path.join(g, "homework.txt")).split()] if os.path.exists(
        os.path.join(g, "homework.txt")) else sorted(c for c in recs["build"] if c != "common")
    sweep_rows = read_csv(os.path.join(g, "sweep.csv"))
    bench_rows = read_csv(os.path.join(g, "bench.csv"))
    ref_rows = read_csv(os.path.join(g, "reference.csv"))
    bench_shape = wb_shapes.parse_shape(info.get("bench_shape", rubric.get("bench_shape", "4096")))
    declared = collections.defaultdict(set)
    for r in read_tsv(os.path.join(g, "kernels.tsv")):
        declared[r["chapter"]].add(r["kernel"])
    changes = read_tsv(os.path.join(g, "changes.tsv"))
    regions = read_tsv(os.path.join(g, "regions.tsv"))
    per_variant = rubric.get("scoring", "per_variant") == "per_variant"

    all_rows = bench_rows + sweep_rows
    def most_common(key):
        values = collections.Counter(r.get(key, "") for r in all_rows if r.get(key, ""))
        return values.most_common(1)[0][0] if values else "unknown"
    kit = {}
    if os.path.exists(os.path.join(g, "kit.json")):
        with open(os.path.join(g, "kit.json"), encoding="utf-8") as f:
            kit = json.load(f)
    prov = {"student": os.environ.get("STUDENT_ID") or info.get("student") or "(not set)",
            "gpu": most_common("gpu"), "cc": most_common("cc"), "driver": most_common("driver"),
            "runtime": most_common("runtime"), "timestamp": info.get("started", "unknown"),
            "seed": info.get("seed", "unknown"),
            "kit": f"{kit.get('workbook_git', 'unknown')} (manifest sha256 {kit.get('manifest_sha256', '?')[:16]})",
            "changes": str(len(changes))}

    out_rows, summary, variant_lines = [], [], []
    auto_points = auto_max = 0.0
    for chapter in homework:
        rules = rubric["chapters"].get(chapter, {})
        perf_rules = rules.get("performance", [])
        max_pts = (rules.get("tests", 0) + rules.get("correctness", 0) + rules.get("sanitizer", 0)
                   + rules.get("program", 0) + sum(max([t["points"] for t in p["tiers"]] or [0]) for p in perf_rules))
        built = recs["build"].get(chapter, ["missing"])[0]
        if chapter in recs.get("gradable", {}):
            note = f"not gradable on this GPU (needs compute capability {recs['gradable'][chapter][1]})"
            summary.append(dict(chapter=chapter, build=built, tests="-", variants="-", points=0, max=0, note=note))
            out_rows.append(dict(kind="chapter", chapter=chapter, build=built, points=0, max_points=0, note=note))
            continue
        auto_max += max_pts
        if built != "ok":
            note = "did not build" if built == "fail" else "not built"
            summary.append(dict(chapter=chapter, build=built, tests="-", variants="-", points=0, max=max_pts, note=note))
            out_rows.append(dict(kind="chapter", chapter=chapter, build=built, points=0, max_points=max_pts, note=note))
            continue
        ch = Chapter(g, chapter)
        t = recs["tests"].get(chapter)
        tp = tf = 0
        tests_text = "not run"
        if t and t[0].isdigit():
            tp, tf = int(t[0]), int(t[1])
            tests_text = f"{t[0]} passed, {t[1]} failed, {t[2]} skipped" + (f" (exit {t[3]})" if t[3] != "0" else "")
        elif t:
            tests_text = f"no counts (exit {t[3] if len(t) > 3 else '?'})"
        tests_ok = tf == 0 and tp > 0 and t is not None and t[3] == "0"
        notes = []
        pts = 0.0
        if rules.get("program"):
            prog = recs["program"].get(chapter, ["?"])[0]
            if prog == "0":
                pts += rules["program"]
            else:
                notes.append(f"program exited {prog}")

        # ---- per variant
        ran = list(dict.fromkeys((r["variant"], r["dtype"]) for r in sweep_rows + bench_rows if r["chapter"] == chapter))
        # The program's variant table, unless the graded runs write rows of other names (chapter
        # 08's crossover part: its e2e_* paths); then what ran is what there is.
        expected = ch.variants if ch.variants and (set(ch.variants) & set(ran) or not ran) else ran
        expected = [v for v in expected if v[0] not in BASELINES]
        results = [judge_variant(key, chapter, ch, recs, info, sweep_rows, bench_rows, bench_shape, declared,
                                 rubric) for key in expected]
        here = [r for r in results if r["here"]]
        n = len(here)
        own = [r for r in here if r["own"]]
        good = [r for r in own if r["correct"]]
        if not expected and os.path.exists(os.path.join(g, f"variants_{chapter}.txt")):
            notes.append("no variants ran")
        # ---- points
        if per_variant:
            # A chapter without variants (00: the setup) is judged by its tests and its program alone.
            frac_own = len(own) / n if n else (0.0 if expected else 1.0)
            if rules.get("tests"):
                pts += rules["tests"] * (tp / (tp + tf) if tp + tf else 0.0) * frac_own if t and t[3] in ("0", "1") \
                    else 0.0
            if rules.get("correctness"):
                pts += rules["correctness"] * (len(good) / n if n else 0.0)
            if rules.get("sanitizer"):
                pts += rules["sanitizer"] * (sum(r["san_ok"] for r in own) / n if n else 0.0)
        else:
            all_good = n > 0 and len(good) == n
            if tests_ok and len(own) == n and rules.get("tests"):
                pts += rules["tests"]
            if all_good and rules.get("correctness"):
                pts += rules["correctness"]
            if n and all(r["san_ok"] for r in here) and len(own) == n and rules.get("sanitizer"):
                pts += rules["sanitizer"]
        if not tests_ok and rules.get("tests"):
            notes.append("tests failed" if tf else "tests did not report")
        # ---- performance: the fastest fully good variant per precision
        counted = {}
        best_text = []
        for perf in perf_rules:
            dtype = perf["dtype"]
            pool = good if per_variant or (n and len(good) == n and tests_ok) else []
            cands = [(r["pct"], r["key"][0]) for r in pool if r["key"][1] == dtype and r["pct"] is not None]
            refs = [number(r["pct_cublas"]) for r in ref_rows if r["chapter"] == chapter and r["dtype"] == dtype
                    and r["status"] == "PASS" and r["variant"] not in BASELINES
                    and row_shape(r) == bench_shape]
            ref = max([x for x in refs if x is not None], default=None)
            if any("min_pct_reference" in tier for tier in perf["tiers"]) and ref is None:
                notes.append(f"no reference run for {dtype}: its tiers cannot be reached")
            if cands:
                pct, v = max(cands)
                got = tier_points(perf["tiers"], pct, ref)
                counted[(v, dtype)] = got
                pts += got
                best_text.append(f"{v} ({dtype}) {pct:.1f}%" + (f" = {100 * pct / ref:.0f}% of the reference" if ref else ""))
            else:
                best_text.append(f"none ({dtype})")
        pts = round(pts, 2)
        auto_points += pts
        for r in results:
            v, dtype = r["key"]
            if not r["here"]:
                line = dict(chapter=chapter, variant=v, dtype=dtype, correctness=r["why"], kernels="-", idea="-",
                            sanitizer="-", pct=None, worst=None, note="not run on this GPU")
            else:
                line = dict(chapter=chapter, variant=v, dtype=dtype,
                            correctness="PASS" if r["correct"] else "FAIL",
                            kernels=r["kernels"], idea="ok" if r["own"] else "NO",
                            sanitizer=f"memcheck {r['san']['memcheck']}, racecheck {r['san']['racecheck']}",
                            pct=r["pct"], worst=r["worst"],
                            note=("counted for performance; " if r["key"] in counted else "") + (r["why"] or "ok"))
            variant_lines.append(line)
            out_rows.append(dict(kind="variant", chapter=chapter, variant=v, dtype=dtype, build="ok", tests=tests_text,
                                 correctness=line["correctness"], worst_rel_err=fmt(line["worst"], ".3e"),
                                 sanitizer=line["sanitizer"], kernels=line["kernels"], idea=line["idea"],
                                 pct_cublas=fmt(line["pct"], ".2f"), points=counted.get(r["key"], ""),
                                 note=line["note"]))
        vtext = f"{len(good)} of {n} good" + (f" ({n - len(own)} not the chapter's own work)" if len(own) < n else "")
        summary.append(dict(chapter=chapter, build="ok", tests=tests_text, variants=vtext,
                            best=", ".join(best_text) or "-", points=pts, max=max_pts, note="; ".join(notes)))
        out_rows.append(dict(kind="chapter", chapter=chapter, build="ok", tests=tests_text, correctness=vtext,
                             points=pts, max_points=max_pts, note="; ".join(notes)))

    report_max = sum(sec["points"] for sec in rubric.get("report", []))
    for sec in rubric.get("report", []):
        note = sk.report_note(sec.get("note"), homework)
        out_rows.append(dict(kind="report", chapter="report", variant=sec["section"], max_points=sec["points"],
                             note="graded by hand" + (f": {note}" if note else "")))
    auto_points = round(auto_points, 2)
    out_rows.append(dict(kind="total", chapter="automatic", points=auto_points, max_points=auto_max))
    out_rows.append(dict(kind="total", chapter="report", max_points=report_max, note="graded by hand"))
    with open(os.path.join(g, "grade.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in out_rows:
            w.writerow({**{k: "" for k in CSV_COLUMNS}, **r, **prov})
    md = write_md(g, info, prov, rubric, rubric_path, summary, variant_lines, changes, regions, auto_points, auto_max,
                  report_max, bench_shape, per_variant)
    return auto_points, auto_max, md


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def pts_text(p):
    return f"{p:g}" if isinstance(p, (int, float)) else str(p)


def write_md(g, info, prov, rubric, rubric_path, summary, variant_lines, changes, regions, auto_points, auto_max,
             report_max, bench_shape, per_variant):
    with open(rubric_path, "rb") as f:
        rubric_sha = hashlib.sha256(f.read()).hexdigest()[:16]
    L = [f"# Grade: {prov['student']}", ""]
    if changes:
        L += [f"> The submission changed {len(changes)} file(s) outside its TODO(student) regions (listed at the "
              "end). None of those changes was used: the grade comes from the kit's files with the student's "
              "region text.", ""]
    L += ["## Provenance", "", "| field | value |", "|---|---|",
          f"| STUDENT_ID | {prov['student']} |", f"| kit (workbook commit, manifest) | {prov['kit']} |",
          f"| GPU | {prov['gpu']} (cc {prov['cc']}) |", f"| driver / runtime | {prov['driver']} / {prov['runtime']} |",
          f"| graded run started | {prov['timestamp']} |", f"| scored | {now()} |",
          f"| sweep seed / shapes | {prov['seed']} / {info.get('shapes', 'unknown')} |",
          f"| sanitizer shapes (beside the chapter's own) | {info.get('sanitize_shapes', 'unknown')} |",
          f"| benchmark shape | {shape_text(bench_shape)} |",
          f"| rubric | {rubric.get('name', '')} (`{os.path.basename(rubric_path)}`, sha256 {rubric_sha}) |",
          f"| scoring | {'per variant' if per_variant else 'per chapter (all or nothing)'} |", ""]
    L += ["## Chapters", "",
          "| chapter | build | tests | variants | best (% of cuBLAS) | points | note |", "|---|---|---|---|---|---:|---|"]
    for s in summary:
        L.append(f"| {s['chapter']} | {s['build']} | {s['tests']} | {s['variants']} | {s.get('best', '-')} | "
                 f"{pts_text(s['points'])} / {pts_text(s['max'])} | {s['note']} |")
    L += ["", "## Variants", "", "A variant counts when its result is right on every shape, it ran only the "
          "chapter's own kernels, and they show the chapter's idea.", "",
          "| chapter | variant | dtype | correct | kernels that ran | idea | sanitizer | worst rel.err | % of cuBLAS | note |",
          "|---|---|---|---|---|---|---|---:|---:|---|"]
    for v in variant_lines:
        L.append(f"| {v['chapter']} | `{v['variant']}` | {v['dtype']} | {v['correctness']} | {v['kernels']} | {v['idea']} | "
                 f"{v['sanitizer']} | {fmt(v['worst'], '.2e') or '-'} | {fmt(v['pct'], '.1f') or '-'} | {v['note']} |")
    L += ["", "## Report (graded by hand)", "", "| section | points | what to look for |", "|---|---:|---|"]
    for sec in rubric.get("report", []):
        note = sk.report_note(sec.get("note"), [c["chapter"] for c in summary])  # the homework's chapters
        L.append(f"| {sec['section']} | __ / {sec['points']} | {note} |")
    L += ["", "## Total", "", f"- automatic: **{pts_text(auto_points)} / {pts_text(auto_max)}**",
          f"- report: __ / {report_max} (by hand)", f"- total: __ / {pts_text(auto_max + report_max)}", ""]
    L += ["## The student's regions", "", "| file | region | hint | state | detail |", "|---|---:|---|---|---|"]
    L += [f"| `{r['file']}` | {r['n']} | {r['hint']} | {r['state']} | {r['detail']} |" for r in regions]
    L += ["", "## Other changes in the submission (not used)", ""]
    if changes:
        L += ["| file | state | what |", "|---|---|---|"] + [f"| `{c['file']}` | {c['state']} | {c['what']} |"
                                                             for c in changes]
    else:
        L.append("None: outside its regions the submission is the kit, file for file.")
    L.append("")
    path = os.path.join(g, "grade.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))
    return path


# ==== command line ==================================================================================

def register(top):
    parser, sub = add_command(top, "grade", "the grader's Python half (tools/grade.sh runs the GPU half)", __doc__,
                              nested=True)
    p = sub.add_parser("assemble", help="the tree to grade: a fresh kit with the student's region text")
    p.add_argument("--submission", required=True)
    p.add_argument("--manifest", required=True)
    p.add_argument("--out", required=True)
    p = sub.add_parser("score", help="grade.csv and grade.md from a graded run")
    p.add_argument("grade_dir")
    p.add_argument("--rubric", default=DEFAULT_RUBRIC)
    p = sub.add_parser("homework", help="the homework chapters of a kit manifest")
    p.add_argument("--manifest", required=True)
    p = sub.add_parser("shapes", help="the random sweep shapes of SEED")
    p.add_argument("seed", type=int)
    p = sub.add_parser("bench-shape", help="the rubric's benchmark shape")
    p.add_argument("--rubric", default=DEFAULT_RUBRIC)
    p = sub.add_parser("needs-reference", help="yes when the rubric's tiers need the reference run")
    p.add_argument("--rubric", default=DEFAULT_RUBRIC)
    p = sub.add_parser("variants", help="the variant names in a program's --help output, one a line")
    p.add_argument("help_file")
    p = sub.add_parser("idea", help="the idea rule of a chapter, as grade.sh needs it (sass or not)")
    p.add_argument("chapter")
    p.add_argument("--rubric", default=DEFAULT_RUBRIC)
    parser.set_defaults(run=main)


def main(a):
    try:
        if a.cmd == "assemble":
            try:
                return assemble(a.submission, a.manifest, a.out)
            except sk.UsageError as e:
                raise UsageError(str(e))
            except LexerMissing as e:
                print(f"grade: {e}. Nothing was graded.", file=sys.stderr)
                return 4
        if a.cmd == "score":
            pts, mx, md = score(a.grade_dir, a.rubric)
            print(f"grade: automatic points {pts_text(pts)} / {pts_text(mx)}; "
                  f"{os.path.join(a.grade_dir, 'grade.csv')} and {md}")
            return 0
        if a.cmd == "variants":
            print("\n".join(dict.fromkeys(v for v, _ in read_variants(a.help_file))))
            return 0
        if a.cmd == "homework":
            print("\n".join(load_manifest(a.manifest)["homework"]))
            return 0
        if a.cmd == "shapes":
            if a.seed < 0:
                raise UsageError("shapes takes a non-negative SEED")
            shapes, small = sweep_shapes(a.seed)
            print(",".join(map(shape_text, shapes)))
            print(",".join(map(shape_text, small)))
            print(",".join(map(shape_text, sanitizer_shapes(a.seed))))
            return 0
        rubric = load_rubric(a.rubric)
        if a.cmd == "bench-shape":
            try:
                print(shape_text(wb_shapes.parse_shape(rubric.get("bench_shape", "4096"))))
            except ValueError as e:
                raise UsageError(f"bad bench_shape: {e}")
        elif a.cmd == "needs-reference":
            print("yes" if needs_reference(rubric) else "no")
        else:
            print("sass" if rubric.get("ideas", {}).get(a.chapter, {}).get("sass") else "")
        return 0
    except UsageError as e:
        print(f"grade: {e}", file=sys.stderr)
        return 2
