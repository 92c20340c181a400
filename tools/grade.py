#!/usr/bin/env python3
"""grade.py - scores a graded run of the workbook (the files tools/grade.sh writes) against the
rubric, and the checksums of the checker files. Standard library only; needs no GPU.

  python3 tools/grade.py score GRADE_DIR [--rubric FILE] [--manifest FILE] [--root DIR]
      reads GRADE_DIR/{results.tsv,sweep.csv,bench.csv,checksums.json} and writes
      GRADE_DIR/grade.csv and GRADE_DIR/grade.md (rubric: report_template/rubric.json)
  python3 tools/grade.py manifest [--root DIR] > FILE
      the SHA-256 of every harness and test file (the reference manifest the instructor keeps
      outside the student's tree; `score --manifest FILE` flags every file that differs)
  python3 tools/grade.py shapes SEED
      the random shapes of the correctness sweep for SEED: line 1 all of them, line 2 the small
      ones that are also run with alpha and beta set
  python3 tools/grade.py bench-shape [--rubric FILE]
      the benchmark shape the rubric's performance tiers refer to

results.tsv (written by grade.sh), one record per line, tab-separated:
  seed - S | shapes - LIST | git - COMMIT | started - TIME | bench_shape - SHAPE
  build CHAPTER ok|fail          (CHAPTER "common" is the shared harness)
  tests CHAPTER PASSED FAILED SKIPPED EXIT_STATUS   (PASSED "-" when the binary reported nothing)
  sanitize CHAPTER ok|fail|skipped EXIT_STATUS
  sweep CHAPTER EXIT_STATUS | bench CHAPTER EXIT_STATUS
  gradable CHAPTER no CC          (a chapter whose code runs on compute capability CC only, on
                                   another GPU: not graded, and it costs no points)

Exit status: 0 done, 2 bad usage, unreadable input, or a GRADE_DIR where grade.csv and grade.md
cannot be written (found before scoring).
"""
import csv
import datetime
import glob
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wb_shapes  # noqa: E402
from wb_shapes import shape_text  # noqa: E402

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
DEFAULT_RUBRIC = os.path.join(ROOT, "report_template", "rubric.json")
BASELINES = {"cublas_sgemm", "cublas_tf32", "cublas_hgemm", "cublas_bgemm"}
# The files whose checksums make an edited checker visible (relative to the tree's root).
CHECKED_PATTERNS = [
    "common/*.h", "common/*.cuh", "common/*.hpp", "common/*.cpp", "common/*.cu", "common/*.mk",
    "common/Makefile", "common/tests/*", "[0-9][0-9]_*/test_*.cu", "[0-9][0-9]_*/Makefile",
    "tools/run_tests.sh", "tools/grade.sh", "tools/grade.py", "report_template/rubric.json",
]
CSV_COLUMNS = ["kind", "chapter", "variant", "dtype", "build", "tests", "correctness", "worst_rel_err",
               "sanitizer", "pct_cublas", "points", "max_points", "note",
               "student", "git", "gpu", "cc", "driver", "runtime", "timestamp", "seed",
               "harness_sha256", "checker"]


class UsageError(Exception):
    pass


# ---- shapes ------------------------------------------------------------------------------------

def is_skipped(row):
    """A row the program did not run on this GPU: status "skipped (needs sm_NN)"."""
    return row.get("status", "").startswith("skipped")

def sweep_shapes(seed):
    """Four shapes drawn from SEED: every M, N, K in 1..1500; the first two (one of them tiny) have
    no dimension that is a multiple of 16 (so of no tile of 16, 32, 64 or 128) and K % 4 != 0; the
    third has K % 4 != 0; the fourth is free. Returns (all, small) as lists of (M, N, K)."""
    rng = random.Random(seed)

    def dim(lo, hi, odd=False, k_odd=False):
        while True:
            v = rng.randint(lo, hi)
            if odd and v % 16 == 0:
                continue
            if k_odd and v % 4 == 0:
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


def parse_shape(text):
    try:
        return wb_shapes.parse_shape(text)
    except ValueError as e:
        raise UsageError(f"bad shape: {e}")


# ---- checksums ---------------------------------------------------------------------------------
def checksums(root):
    files = {}
    for pattern in CHECKED_PATTERNS:
        for path in glob.glob(os.path.join(root, pattern)):
            if os.path.isfile(path):
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, "rb") as f:
                    files[rel] = hashlib.sha256(f.read()).hexdigest()
    return dict(sorted(files.items()))


def combined_digest(files):
    text = "".join(f"{p} {h}\n" for p, h in sorted(files.items()))
    return hashlib.sha256(text.encode()).hexdigest()


def git_commit(root):
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=20)
        if head.returncode != 0 or not head.stdout.strip():
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=20)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def manifest(root):
    files = checksums(root)
    return {"kind": "cuda-matmul-workbook checker manifest", "git": git_commit(root),
            "created": now(), "sha256_all": combined_digest(files), "files": files}


def compare(reference, current):
    """[(path, MODIFIED|MISSING|NEW)] for every file that is not as in the reference."""
    out = []
    for path, digest in reference.items():
        if path not in current:
            out.append((path, "MISSING"))
        elif current[path] != digest:
            out.append((path, "MODIFIED"))
    for path in current:
        if path not in reference:
            out.append((path, "NEW"))
    return sorted(out)


# ---- reading a graded run ----------------------------------------------------------------------
def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def number(text):
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def read_results(path):
    """The records of results.tsv: info, build, tests, sanitize, sweep, bench and not_gradable
    ({chapter: the compute capability it needs})."""
    info, build, tests, sanitize, sweep, bench, not_gradable = {}, {}, {}, {}, {}, {}, {}
    if not os.path.exists(path):
        return info, build, tests, sanitize, sweep, bench, not_gradable
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = line.rstrip("\n").split("\t")
            if len(p) < 3:
                continue
            key, chapter, rest = p[0], p[1], p[2:]
            if key == "build":
                build[chapter] = rest[0]
            elif key == "tests":
                tests[chapter] = rest
            elif key == "sanitize":
                sanitize[chapter] = rest[0]
            elif key == "sweep":
                sweep[chapter] = int(rest[0]) if rest[0].lstrip("-").isdigit() else 1
            elif key == "bench":
                bench[chapter] = int(rest[0]) if rest[0].lstrip("-").isdigit() else 1
            elif key == "gradable":
                if rest[0] == "no":
                    not_gradable[chapter] = rest[1] if len(rest) > 1 else "?"
            else:
                info[key] = rest[0]
    return info, build, tests, sanitize, sweep, bench, not_gradable


def read_csv(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r.get("chapter") and r["chapter"] != "chapter"]


def load_rubric(path):
    try:
        with open(path, encoding="utf-8") as f:
            rubric = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the rubric {path}: {e}")
    if not isinstance(rubric.get("chapters"), dict):
        raise UsageError(f"the rubric {path} has no \"chapters\" object")
    for name, ch in rubric["chapters"].items():
        for perf in ch.get("performance", []):
            if "dtype" not in perf or not isinstance(perf.get("tiers"), list):
                raise UsageError(f"rubric {name}: every performance entry needs \"dtype\" and \"tiers\"")
    return rubric


def check_writable(folder, names):
    """UsageError unless the files `names` can be written in `folder`: checked before scoring, so a
    grade is never computed only to be lost."""
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isdir(path) or (os.path.exists(path) and not os.access(path, os.W_OK)):
            raise UsageError(f"cannot write {path}")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise UsageError(f"cannot write in {folder}: {e.strerror}")


def tier_points(tiers, pct):
    best = 0
    for t in tiers:
        if pct is not None and pct >= float(t["min_pct_cublas"]):
            best = max(best, t["points"])
    return best


def most_common(rows, key):
    values = Counter(r.get(key, "") for r in rows if r.get(key, ""))
    return values.most_common(1)[0][0] if values else "unknown"


def fmt_num(v, spec):
    return "" if v is None else format(v, spec)


# ---- scoring -----------------------------------------------------------------------------------
def test_state(rec):
    """(passed: bool, text) from a tests record [P, F, S, rc]."""
    if rec is None:
        return False, "not run"
    p, f, s, rc = (rec + ["", "", "", ""])[:4]
    if p == "-" or not p.isdigit():
        return False, f"no counts (exit {rc})"
    ok = int(f) == 0 and int(p) > 0 and rc == "0"
    text = f"{p} passed, {f} failed, {s} skipped"
    if rc not in ("0", "") and int(f) == 0:
        text += f" (exit {rc})"
    return ok, text


def score(grade_dir, rubric_path, manifest_path, root):
    rubric = load_rubric(rubric_path)
    if not os.path.isdir(grade_dir):
        raise UsageError(f"{grade_dir} is not a folder (run tools/grade.sh first)")
    check_writable(grade_dir, ("grade.csv", "grade.md"))
    info, build, tests, sanitize, sweep_rc, bench_rc, not_gradable = read_results(os.path.join(grade_dir, "results.tsv"))
    if not build:
        raise UsageError(f"{grade_dir}/results.tsv is missing or empty (run tools/grade.sh first)")
    sweep_rows = read_csv(os.path.join(grade_dir, "sweep.csv"))
    bench_rows = read_csv(os.path.join(grade_dir, "bench.csv"))
    bench_shape = parse_shape(info.get("bench_shape", rubric.get("bench_shape", "4096")))
    gates_correct = rubric.get("correctness_gates_performance", True)
    gates_sanitizer = rubric.get("sanitizer_gates_performance", False)

    # ---- provenance
    all_rows = bench_rows + sweep_rows
    ck_path = os.path.join(grade_dir, "checksums.json")
    if os.path.exists(ck_path):
        with open(ck_path, encoding="utf-8") as f:
            current = json.load(f).get("files", {})
        ck_source = "taken at the graded run (checksums.json)"
    else:
        current = checksums(root)
        ck_source = f"computed now from {os.path.abspath(root)}"
    differences = None
    if manifest_path:
        try:
            with open(manifest_path, encoding="utf-8") as f:
                reference = json.load(f)["files"]
        except (OSError, ValueError, KeyError) as e:
            raise UsageError(f"cannot read the manifest {manifest_path}: {e}")
        differences = compare(reference, current)
    if differences is None:
        checker = "not checked (no reference manifest)"
    elif differences:
        checker = f"MODIFIED ({len(differences)} file(s))"
    else:
        checker = "ok (matches the reference manifest)"
    student = os.environ.get("STUDENT_ID") or most_common(all_rows, "student")
    if student == "unknown":
        student = "(not set)"
    prov = {
        "student": student,
        "git": info.get("git") or most_common(all_rows, "git"),
        "gpu": most_common(all_rows, "gpu"), "cc": most_common(all_rows, "cc"),
        "driver": most_common(all_rows, "driver"), "runtime": most_common(all_rows, "runtime"),
        "timestamp": info.get("started") or most_common(all_rows, "timestamp"),
        "seed": info.get("seed", "unknown"),
        "harness_sha256": combined_digest(current), "checker": checker,
    }
    if prov["git"] == "unknown":
        prov["git"] = git_commit(root)

    # ---- per chapter
    chapters = list(rubric["chapters"])
    for c in sorted(set(build) - {"common"} - set(chapters)):
        chapters.append(c)  # built but not in the rubric: shown with no points
    common_ok = build.get("common", "ok") == "ok"
    info["build_common"] = build.get("common", "-")
    info["tests_common"] = test_state(tests.get("common"))[1] if "common" in tests else "not run"
    out_rows, summary, variant_lines = [], [], []
    auto_points = auto_max = 0
    for chapter in chapters:
        rules = rubric["chapters"].get(chapter, {})
        perf_rules = rules.get("performance", [])
        if chapter in not_gradable:
            # This GPU cannot run the chapter (e.g. 09's sm_90a code on a GPU that is not 9.0):
            # nothing of it is graded, and its points leave the maximum too.
            note = f"not gradable on this GPU (needs compute capability {not_gradable[chapter]})"
            built = build.get(chapter)
            build_text = "missing" if built is None else "ok" if built == "ok" else "FAIL"
            t_text = test_state(tests.get(chapter))[1] if chapter in tests else "-"
            summary.append(dict(chapter=chapter, build=build_text, tests=t_text, sweep="-", sanitizer="-",
                                best="-", pct=None, points=0, max=0, note=note))
            out_rows.append(dict(kind="chapter", chapter=chapter, build=build_text, tests=t_text, points=0,
                                 max_points=0, note=note))
            continue
        max_pts = (rules.get("tests", 0) + rules.get("correctness", 0) + rules.get("sanitizer", 0)
                   + sum(max([t["points"] for t in p["tiers"]] or [0]) for p in perf_rules))
        auto_max += max_pts
        built = build.get(chapter)
        notes = []
        if built is None:
            build_text = "missing"
            notes.append("chapter folder missing" if common_ok else "shared harness (common/) did not build")
        else:
            build_text = "ok" if built == "ok" else "FAIL"
        if built != "ok":
            if built is not None:
                notes.append("did not build")
            summary.append(dict(chapter=chapter, build=build_text, tests="-", sweep="-", sanitizer="-",
                                best="-", pct=None, points=0, max=max_pts, note="; ".join(notes)))
            out_rows.append(dict(kind="chapter", chapter=chapter, build=build_text, points=0,
                                 max_points=max_pts, note="; ".join(notes)))
            continue
        t_ok, t_text = test_state(tests.get(chapter))
        pts = rules.get("tests", 0) if t_ok else 0
        if not t_ok and rules.get("tests", 0):
            notes.append("tests failed")

        # correctness: the sweep on random shapes (and the bench rows, verified too)
        # A variant is a name and a precision: chapter 09 runs each step in FP16 and in BF16.
        rows_s = [r for r in sweep_rows if r["chapter"] == chapter]
        rows_b = [r for r in bench_rows if r["chapter"] == chapter]
        per_variant = defaultdict(list)
        for r in rows_s:
            per_variant[(r["variant"], r["dtype"])].append(r)
        dtypes_of = defaultdict(set)
        for r in rows_s + rows_b:
            dtypes_of[r["variant"]].add(r["dtype"])

        def label(v, dtype):  # the name, with the precision where the name alone is ambiguous
            return f"{v} {dtype}" if len(dtypes_of[v]) > 1 else v
        has_sweep = chapter in sweep_rc
        # A variant that needs a newer GPU than this one is "skipped (needs sm_NN)" in every row: it
        # was not run here, which is neither a pass nor a failure of the student's code.
        ran_s = [r for r in rows_s if not is_skipped(r)]
        sweep_ok = has_sweep and sweep_rc[chapter] == 0 and bool(ran_s) and all(r["status"] == "PASS" for r in ran_s)
        not_here = sorted({label(r["variant"], r["dtype"]) for r in rows_s if is_skipped(r)})
        if not has_sweep:
            sweep_text = "-"
        elif sweep_ok:
            sweep_text = "PASS" + (f" (not run on this GPU: {', '.join(not_here)})" if not_here else "")
        else:
            bad = sorted({label(r["variant"], r["dtype"]) for r in ran_s if r["status"] != "PASS"})
            sweep_text = "FAIL" + (f" ({', '.join(bad)})" if bad else f" (exit {sweep_rc[chapter]}, {len(rows_s)} rows)")
        if rules.get("correctness", 0):
            if sweep_ok:
                pts += rules["correctness"]
            else:
                notes.append("random-shape sweep failed" if has_sweep else "sweep not run")
        san = sanitize.get(chapter, "-")
        if rules.get("sanitizer", 0):
            if san == "ok":
                pts += rules["sanitizer"]
            else:
                notes.append("sanitizer " + ("not available" if san == "skipped" else "failed" if san == "fail" else "not run"))
        gate_ok = (t_ok and sweep_ok or not gates_correct) and (san == "ok" or not gates_sanitizer)
        if perf_rules and not gate_ok:
            notes.append("no performance points: " + ("correctness" if not (t_ok and sweep_ok) else "sanitizer")
                         + " gates performance")

        # performance: the best variant that passed, at the benchmark shape
        at_shape = {(r["variant"], r["dtype"]): r for r in rows_b
                    if (int(r["M"]), int(r["N"]), int(r["K"])) == bench_shape}
        variants = [k for k in dict.fromkeys([(r["variant"], r["dtype"]) for r in rows_s + rows_b])
                    if k[0] not in BASELINES]
        best_text, best_pct = [], None
        chosen = {}
        for perf in perf_rules:
            tiers, dtype = perf["tiers"], perf["dtype"]
            cands = []
            for key in variants:
                b = at_shape.get(key)
                if key[1] != dtype or b is None or b["status"] != "PASS":
                    continue
                if not per_variant[key] or any(r["status"] != "PASS" for r in per_variant[key]):
                    continue  # a variant must pass every random shape to count
                cands.append((number(b["pct_cublas"]) or 0.0, key[0]))
            if cands:
                pct, v = max(cands)
                got = tier_points(tiers, pct) if gate_ok else 0
                chosen[(v, dtype)] = got
                pts += got
                best_text.append(f"{v} ({dtype})")
                best_pct = pct if best_pct is None else best_pct
            else:
                best_text.append(f"none ({dtype})")
                if gate_ok:
                    notes.append(f"no {dtype} variant passed at {shape_text(bench_shape)}")
        auto_points += pts

        for key in variants:
            v, dtype = key
            vr = per_variant[key]
            b = at_shape.get(key)
            errs = [number(r["rel_err"]) for r in vr + [r for r in rows_b if (r["variant"], r["dtype"]) == key]]
            errs = [e for e in errs if e is not None]
            worst = max(errs) if errs else None
            rows_v = vr + ([b] if b else [])
            statuses = [r["status"] for r in rows_v]
            if rows_v and all(is_skipped(r) for r in rows_v):
                correct = "not run on this GPU (" + rows_v[0]["status"].split("(", 1)[-1].rstrip(")") + ")"
            else:
                correct = "not run" if not statuses else ("PASS" if all(s == "PASS" for s in statuses) else "FAIL")
            pct = number(b["pct_cublas"]) if b else None
            perf = next((p for p in perf_rules if p["dtype"] == dtype), None)
            vmax = max([t["points"] for t in perf["tiers"]] or [0]) if perf else 0
            vpts = tier_points(perf["tiers"], pct) if perf and gate_ok and correct == "PASS" else 0
            vnote = "counted" if key in chosen else ""
            out_rows.append(dict(kind="variant", chapter=chapter, variant=v, dtype=dtype, build="ok",
                                 tests=t_text, correctness=correct, worst_rel_err=fmt_num(worst, ".3e"),
                                 sanitizer=san, pct_cublas=fmt_num(pct, ".2f"), points=vpts, max_points=vmax,
                                 note=vnote))
            variant_lines.append((chapter, v, dtype, correct, worst, pct, vpts, vmax, vnote))
        summary.append(dict(chapter=chapter, build="ok", tests=t_text, sweep=sweep_text, sanitizer=san,
                            best=", ".join(best_text) or "-", pct=best_pct, points=pts, max=max_pts,
                            note="; ".join(notes)))
        out_rows.append(dict(kind="chapter", chapter=chapter, build="ok", tests=t_text, correctness=sweep_text,
                             sanitizer=san, pct_cublas=fmt_num(best_pct, ".2f"), points=pts, max_points=max_pts,
                             note="; ".join(notes)))

    report_max = 0
    for sec in rubric.get("report", []):
        report_max += sec["points"]
        out_rows.append(dict(kind="report", chapter="report", variant=sec["section"], points="",
                             max_points=sec["points"], note="graded by hand" + (f": {sec['note']}" if sec.get("note") else "")))
    out_rows.append(dict(kind="total", chapter="automatic", points=auto_points, max_points=auto_max))
    out_rows.append(dict(kind="total", chapter="report", points="", max_points=report_max, note="graded by hand"))

    with open(os.path.join(grade_dir, "grade.csv"), "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=CSV_COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in out_rows:
            w.writerow({**{k: "" for k in CSV_COLUMNS}, **r, **prov})

    md = write_md(grade_dir, info, prov, summary, variant_lines, rubric, rubric_path, auto_points, auto_max,
                  report_max, differences, current, ck_source, bench_shape)
    return auto_points, auto_max, md


def write_md(grade_dir, info, prov, summary, variant_lines, rubric, rubric_path, auto_points, auto_max,
             report_max, differences, current, ck_source, bench_shape):
    L = [f"# Grade: {prov['student']}", ""]
    if differences:
        L += [f"> **WARNING: {len(differences)} checker file(s) differ from the reference manifest** "
              "(list at the end). The results below come from the student's own checker.", ""]
    L += ["## Provenance", "", "| field | value |", "|---|---|",
          f"| STUDENT_ID | {prov['student']} |", f"| git commit | `{prov['git']}` |",
          f"| GPU | {prov['gpu']} (cc {prov['cc']}) |", f"| driver (CUDA version it supports) | {prov['driver']} |",
          f"| CUDA runtime | {prov['runtime']} |", f"| graded run started | {prov['timestamp']} |",
          f"| scored | {now()} |", f"| sweep seed | {prov['seed']} |",
          f"| sweep shapes | {info.get('shapes', 'unknown')} |",
          f"| benchmark shape | {shape_text(bench_shape)} |",
          f"| rubric | {rubric.get('name', '')} (`{os.path.basename(rubric_path)}`, sha256 "
          f"{hashlib.sha256(open(rubric_path, 'rb').read()).hexdigest()[:16]}) |",
          f"| harness + tests sha256 | `{prov['harness_sha256']}` ({len(current)} files, {ck_source}) |",
          f"| checker files | {prov['checker']} |", ""]
    gate = "yes" if rubric.get("correctness_gates_performance", True) else "no"
    L += ["## Chapters", "", f"Shared harness (common/): build {info.get('build_common', '-')}, "
          f"tests {info.get('tests_common', '-')}.", "",
          f"Performance: the best variant that passed every check, as % of cuBLAS at {shape_text(bench_shape)}. "
          f"Correctness gates performance: {gate}.", "",
          "| chapter | build | tests | random-shape sweep | sanitizer | best variant | % of cuBLAS | points | note |",
          "|---|---|---|---|---|---|---:|---:|---|"]
    for s in summary:
        pct = f"{s['pct']:.1f}%" if s["pct"] is not None else "-"
        L.append(f"| {s['chapter']} | {s['build']} | {s['tests']} | {s['sweep']} | {s['sanitizer']} | {s['best']} | "
                 f"{pct} | {s['points']} / {s['max']} | {s['note']} |")
    L += ["", "## Variants", "",
          "| chapter | variant | dtype | correctness | worst rel.err | % of cuBLAS | tier points | |",
          "|---|---|---|---|---:|---:|---:|---|"]
    for ch, v, dt, corr, worst, pct, vp, vm, note in variant_lines:
        L.append(f"| {ch} | `{v}` | {dt} | {corr} | {fmt_num(worst, '.2e') or '-'} | "
                 f"{(format(pct, '.1f') + '%') if pct is not None else '-'} | {vp} / {vm} | {note} |")
    L += ["", "## Report (graded by hand)", "", "| section | points | what to look for |", "|---|---:|---|"]
    for sec in rubric.get("report", []):
        L.append(f"| {sec['section']} | __ / {sec['points']} | {sec.get('note', '')} |")
    L += ["", "## Total", "", f"- automatic: **{auto_points} / {auto_max}**",
          f"- report: __ / {report_max} (by hand)", f"- total: __ / {auto_max + report_max}", ""]
    L += ["## Checker files", ""]
    if differences is None:
        L.append("No reference manifest was given (`--manifest FILE`): the checksums were recorded but not compared.")
    elif not differences:
        L.append("Every harness and test file matches the reference manifest.")
    else:
        L += ["| file | state |", "|---|---|"] + [f"| `{p}` | {state} |" for p, state in differences]
    L.append("")
    path = os.path.join(grade_dir, "grade.md")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))
    return path


# ---- command line ------------------------------------------------------------------------------
USAGE = ("usage: grade.py score GRADE_DIR [--rubric FILE] [--manifest FILE] [--root DIR] | "
         "grade.py manifest [--root DIR] | grade.py shapes SEED | grade.py bench-shape [--rubric FILE]")


def parse_flags(args, allowed):
    opts, pos = {}, []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            name = a[2:]
            if name not in allowed or i + 1 >= len(args):
                raise UsageError(f"unknown option or missing value: {a}")
            opts[name] = args[i + 1]
            i += 2
        else:
            pos.append(a)
            i += 1
    return opts, pos


def main(argv):
    try:
        if not argv or argv[0] in ("-h", "--help"):
            if argv:
                print(__doc__)
                return 0
            raise UsageError("no command")
        cmd, args = argv[0], argv[1:]
        if cmd == "score":
            opts, pos = parse_flags(args, {"rubric", "manifest", "root"})
            if len(pos) != 1:
                raise UsageError("score takes one GRADE_DIR")
            pts, mx, md = score(pos[0], opts.get("rubric", DEFAULT_RUBRIC), opts.get("manifest"),
                                opts.get("root", ROOT))
            print(f"grade: automatic points {pts} / {mx}; {os.path.join(pos[0], 'grade.csv')} and {md}")
            return 0
        if cmd == "manifest":
            opts, pos = parse_flags(args, {"root"})
            if pos:
                raise UsageError("manifest takes no argument besides --root")
            print(json.dumps(manifest(opts.get("root", ROOT)), indent=1))
            return 0
        if cmd == "shapes":
            if len(args) != 1 or not args[0].isdigit():
                raise UsageError("shapes takes one SEED (a non-negative integer)")
            shapes, small = sweep_shapes(int(args[0]))
            print(",".join(map(shape_text, shapes)))
            print(",".join(map(shape_text, small)))
            return 0
        if cmd == "bench-shape":
            opts, pos = parse_flags(args, {"rubric"})
            if pos:
                raise UsageError("bench-shape takes no argument besides --rubric")
            rubric = load_rubric(opts.get("rubric", DEFAULT_RUBRIC))
            print(shape_text(parse_shape(rubric.get("bench_shape", "4096"))))
            return 0
        raise UsageError(f"unknown command '{cmd}'")
    except UsageError as e:
        print(f"grade.py: {e}. {USAGE}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
