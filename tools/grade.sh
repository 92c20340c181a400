#!/usr/bin/env bash
# grade.sh - `make grade`: grades one student's submission on a GPU, from the instructor's copy of
# the workbook. Nothing of the submission runs but the text between its TODO(student) lines:
#   1. checks for a GPU (no GPU: one line, exit status 3, nothing graded)
#   2. grade assemble (tools/wb/grade.py): a fresh kit from this workbook, checked against the kit's manifest,
#      with the student's region text poured in (GRADE_DIR/tree); every other change the submission
#      made is listed and not used
#   3. the reference: this workbook's own solution, benchmarked once per GPU model and commit (and
#      state of uncommitted edits) as the submissions are (kernels traced), kept in GRADE_REFERENCE/,
#      when the rubric's tiers are relative to it; gradings side by side wait for the one measuring
#   4. builds each homework chapter of the tree on its own (make -k): a broken one costs only itself
#   5. per chapter: the kit's tests with REQUIRE_GPU=1; the variant table (--help); a correctness
#      sweep on 4 random shapes from a fresh seed (GRADE_SEED= repeats it) and the two smallest again
#      with alpha = -1.5, beta = 0.5; compute-sanitizer memcheck and racecheck with verification off
#      on the chapter's small odd shapes and two more drawn from the same seed
#      (per variant when the chapter's run finds something); the benchmark at the rubric's shape with
#      cuBLAS in the same run. The sweep and the benchmark record which kernels each variant ran
#      (WB_KERNEL_TRACE, CUPTI), and cuobjdump lists the program's SASS where the rubric's idea
#      check reads it
#   6. grade score: GRADE_DIR/grade.csv and grade.md against the rubric
# A chapter built for one compute capability only (09: sm_90a) is not gradable on another GPU: it
# is left out of step 5, and the grade says so and costs it no points.
#
#   bash tools/grade.sh --submission DIR --manifest FILE [--rubric FILE] [--seed S]
#
# Settings (environment): GRADE_DIR (default grade; a new or empty folder, or one this script made
# before), GRADE_REFERENCE (default grade-reference), STUDENT_ID, GRADE_SEED, GRADE_TIMEOUT (seconds
# per program run, default 900), GRADE_JOBS (parallel build jobs), GRADE_GPU_LOCK (see gpu_needs.sh:
# gradings started side by side check results together but time their kernels alone),
# GRADE_NO_GPU=1 (act as if there were no GPU), CUOBJDUMP, SANITIZER (the tools; default: on the
# PATH, else in the CUDA toolkit).
# Exit status: 0 graded (whatever the grade), 1 the submission could not be assembled or scoring
# failed, 2 bad usage (a manifest from another workbook, a GRADE_DIR that cannot be written), 3 no
# usable GPU, 4 a tool the grading needs is missing (compute-sanitizer, cuobjdump, CUPTI, libclang).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
# The grader's Python half (tools/wb/grade.py), from any folder.
grade_py() { PYTHONPATH="$ROOT/tools${PYTHONPATH:+:$PYTHONPATH}" python3 -m wb grade "$@"; }
. tools/gpu_needs.sh

usage() { echo "usage: bash tools/grade.sh --submission DIR --manifest FILE [--rubric FILE] [--seed S]   (GRADE_DIR=folder, STUDENT_ID=id)" >&2; exit 2; }
rubric=${GRADE_RUBRIC:-report_template/rubric.json}
manifest=${GRADE_MANIFEST:-}
submission=${GRADE_SUBMISSION:-}
seed=${GRADE_SEED:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --rubric) [ $# -ge 2 ] || usage; rubric=$2; shift 2 ;;
    --manifest) [ $# -ge 2 ] || usage; manifest=$2; shift 2 ;;
    --submission) [ $# -ge 2 ] || usage; submission=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
  esac
done
[ -n "$submission" ] || { echo "grade: which submission? --submission DIR (make grade SUBMISSION=DIR)" >&2; exit 2; }
[ -n "$manifest" ] || { echo "grade: the kit's manifest is needed: --manifest FILE (make grade KIT_MANIFEST=FILE; make student-kit wrote it beside the kit)" >&2; exit 2; }
case "$seed" in ''|*[!0-9]*) [ -z "$seed" ] || { echo "grade: --seed wants a non-negative integer" >&2; exit 2; } ;; esac
[ -d "$submission" ] || { echo "grade: the submission $submission is not a folder" >&2; exit 2; }
[ -f "$manifest" ] || { echo "grade: manifest $manifest not found" >&2; exit 2; }
[ -f "$rubric" ] || { echo "grade: rubric $rubric not found" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "grade: python3 is needed (install python3)" >&2; exit 2; }
submission=$(cd "$submission" && pwd) manifest=$(cd "$(dirname "$manifest")" && pwd)/$(basename "$manifest")
rubric=$(cd "$(dirname "$rubric")" && pwd)/$(basename "$rubric")
G=${GRADE_DIR:-grade}
if [ -e "$G" ] && { [ ! -d "$G" ] || { [ -n "$(ls -A "$G" 2>/dev/null)" ] && [ ! -e "$G/.grade-dir" ]; }; }; then
  echo "grade: GRADE_DIR $G exists and is not a folder this grader made: choose a new or empty one" >&2; exit 2
fi
d=$G; while [ ! -e "$d" ]; do d=$(dirname "$d"); done
[ -d "$d" ] && [ -w "$d" ] || { echo "grade: cannot write the results folder $G (GRADE_DIR): not a writable folder" >&2; exit 2; }

# ---- 1. a GPU? -------------------------------------------------------------------------------
no_gpu() { echo "grade: no usable GPU ($1): run the grader on the GPU machine; nothing was graded" >&2; exit 3; }
[ "${GRADE_NO_GPU:-0}" = 1 ] && no_gpu "GRADE_NO_GPU=1"
if [ "${CUDA_VISIBLE_DEVICES+set}" = set ] && { [ -z "$CUDA_VISIBLE_DEVICES" ] || [ "$CUDA_VISIBLE_DEVICES" = -1 ]; }; then
  no_gpu "CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' hides every device"
fi
command -v nvidia-smi >/dev/null 2>&1 || no_gpu "nvidia-smi not found"
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || no_gpu "nvidia-smi lists no GPU"

# The tools the grading cannot do without: a grade without them would be a guess.
find_tool() { local t; t=$(command -v "$1" 2>/dev/null) || t="${CUDA_PATH:-/usr/local/cuda}/bin/$1"; [ -x "$t" ] && echo "$t"; }
san=${SANITIZER:-$(find_tool compute-sanitizer)}
[ -n "$san" ] || { echo "grade: compute-sanitizer not found (it ships with the CUDA toolkit; or SANITIZER=/path): nothing was graded" >&2; exit 4; }
objdump=${CUOBJDUMP:-$(find_tool cuobjdump)}

rm -rf "$G"; mkdir -p "$G" && touch "$G/.grade-dir" || { echo "grade: cannot create the results folder $G" >&2; exit 2; }
G=$(cd "$G" && pwd)
R="$G/results.tsv"
rec() { (IFS=$'\t'; echo "$*") >>"$R"; }
TO=${GRADE_TIMEOUT:-900}
# The machine's GPU lock (gpu_needs.sh): a program that times holds it alone, the checks share it.
run_timed() { wb_gpu_run "$TO" "$@"; }
run_check() { wb_gpu_run --shared "$TO" "$@"; }
# A sanitizer run's status as a finding: 9 (--error-exitcode) is one; 1 is the program's verdict on
# its timed launches, which it checks even with --no-check, and is the sweep's business.
san_status() { [ "$1" -eq 1 ] && echo 0 || echo "$1"; }
jobs=${GRADE_JOBS:-$(nproc 2>/dev/null || echo 4)}

# ---- 2. the tree to grade --------------------------------------------------------------------
grade_py assemble --submission "$submission" --manifest "$manifest" --out "$G" >"$G/assemble.log" 2>&1
rc=$?
cat "$G/assemble.log"
if [ $rc -ne 0 ]; then
  [ $rc -eq 2 ] && exit 2
  [ $rc -eq 4 ] && exit 4  # the C++ lexer (libclang) is missing
  exit 1
fi
homework=$(cat "$G/homework.txt")
T="$G/tree"

[ -n "$seed" ] || seed=$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') % 1000000000 ))
shapes_out=$(grade_py shapes "$seed") || exit 2
shapes=$(echo "$shapes_out" | sed -n 1p)
small=$(echo "$shapes_out" | sed -n 2p)
san_shapes=$(echo "$shapes_out" | sed -n 3p)
bench_shape=$(grade_py bench-shape --rubric "$rubric") || exit 2
rec seed - "$seed"; rec shapes - "$shapes"; rec sanitize_shapes - "$san_shapes"; rec bench_shape - "$bench_shape"
rec started - "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
rec student - "${STUDENT_ID:-}"
# Rows each variant must have in sweep.csv: one per sweep shape, one per alpha/beta shape.
rec sweep_rows - $(( $(echo "$shapes" | tr ',' '\n' | wc -l) + $(echo "$small" | tr ',' '\n' | wc -l) ))
echo "grade: student ${STUDENT_ID:-(STUDENT_ID not set)}, homework $(echo $homework), results in $G/"
echo "grade: sweep seed $seed (GRADE_SEED=$seed repeats it): shapes $shapes; alpha/beta on $small"

# Kernel tracing needs CUPTI (the programs load it): checked once, on the first GPU chapter's run.
cupti_missing() { grep -q "WB_KERNEL_TRACE is set but the kernels cannot be traced" "$1"; }

# ---- 3. the reference on this GPU ------------------------------------------------------------
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
if [ "$(grade_py needs-reference --rubric "$rubric")" = yes ]; then
  # The workbook's version: its commit, and where tracked files differ from it, a hash of the
  # difference, so that a workbook with local edits is measured once per state of those edits.
  version=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
  edits=$(git -C "$ROOT" diff HEAD 2>/dev/null)
  [ -n "$edits" ] && version="$version-edited-$(printf '%s' "$edits" | sha1sum | cut -c1-12)"
  slug=$(echo "$gpu_name" | tr -c 'A-Za-z0-9\n' '_')
  refdir=${GRADE_REFERENCE:-$ROOT/grade-reference}/$slug
  ref="$refdir/${version}_${bench_shape}.csv"
  # Measured by the first grading that needs it; gradings started beside it wait for it (the lock
  # file in refdir) instead of building and timing the same thing at once.
  measure_reference() {
    if [ -s "$ref" ]; then echo "grade: the reference on $gpu_name at $bench_shape: $ref (measured before)"; return; fi
    echo "grade: the reference (this workbook's solution) on $gpu_name at $bench_shape -> $ref"
    local c extra tmp="$ref.tmp.$$"
    rm -f "$tmp"
    make --no-print-directory -j"$jobs" lib >>"$G/reference.log" 2>&1
    for c in $homework; do
      case "$c" in 00_*|01_*) continue ;; esac
      extra=""; case "$c" in 07_*) extra="--no-costs" ;; 08_*) extra="--part crossover" ;; esac
      make --no-print-directory -j"$jobs" -C "$c" "$c" >>"$G/reference.log" 2>&1 &&
        WB_KERNEL_TRACE="$G/reference_trace.tsv" run_timed ./"$c"/"$c" --size "$bench_shape" $extra --csv "$tmp" >>"$G/reference.log" 2>&1
    done
    [ -s "$tmp" ] && mv "$tmp" "$ref"
    rm -f "$tmp"
  }
  mkdir -p "$refdir" 2>/dev/null
  if command -v flock >/dev/null 2>&1 && { : >>"$refdir/.lock"; } 2>/dev/null; then
    ( flock 9; measure_reference ) 9<"$refdir/.lock"
  else
    measure_reference
  fi
  [ -s "$ref" ] && cp "$ref" "$G/reference.csv"
fi

# ---- 4. build ----------------------------------------------------------------------------------
# The tree's common/ is this workbook's, file for file (the manifest says so), so this workbook's
# own build of it is reused when there is one: a class's grading then compiles it once. The copies
# are made newer than the tree's sources, and GIT_COMMIT names this workbook's commit, so make
# sees them up to date; its flag stamp still rebuilds them for other flags.
build_vars=()
if [ -f "$ROOT/common/build/libwb.a" ] && [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no -- common 2>/dev/null)" ]; then
  cp -r "$ROOT/common/build" "$T/common/build" && find "$T/common/build" -exec touch {} +
  stamp=$(ls "$ROOT/common/build" | sed -n 's/^git\.//p' | head -1)
  [ -n "$stamp" ] && build_vars=(GIT_COMMIT="$stamp")
fi
if make --no-print-directory -C "$T" -j"$jobs" ${build_vars[@]+"${build_vars[@]}"} lib >>"$G/build.log" 2>&1; then rec build common ok; else rec build common fail; echo "grade: the shared harness (common/) did not build"; fi
for c in $homework; do
  if make --no-print-directory -k -j"$jobs" -C "$T/$c" ${build_vars[@]+"${build_vars[@]}"} all >>"$G/build.log" 2>&1 && [ -x "$T/$c/$c" ]; then
    rec build "$c" ok; echo "grade: build $c ok"
  else
    rec build "$c" fail; echo "grade: build $c FAILED (see $G/build.log); graded as not built"
  fi
done
built() { grep -q "^build	$1	ok$" "$R"; }

# A GPU listed by nvidia-smi may still be unusable (driver too old, no code for it): 00 says so.
env_json="$G/env.json"
if [ -x "$T/00_env_check/00_env_check" ]; then
  (cd "$T" && run_timed ./00_env_check/00_env_check --json "$env_json") >"$G/env.log" 2>&1
  rc=$?
  [ $rc -eq 3 ] && no_gpu "$(grep -m1 "^00_env_check: error:" "$G/env.log" || echo "00_env_check exit status 3")"
  rec program 00_env_check "$rc"
fi
cc=$(wb_gpu_cc "$env_json")

# ---- 5. per chapter ------------------------------------------------------------------------------
summary=$(mktemp); trap 'rm -f "$summary"' EXIT
# The chapter's small odd shapes (its Makefile's SANITIZE_ARGS, which the kit ships), and two drawn
# for this grading (grade.py sanitizer_shapes): a race that shows only on other edges is run too.
# 08's --sizes are its whole programs' square sizes: it keeps its own.
sanitize_args() {
  local a
  a=$(make --no-print-directory -s -C "$T/$1" --eval 'wb-print-sanitize-args: ; @echo $(SANITIZE_ARGS)' wb-print-sanitize-args)
  case "$1" in 08_*) echo "$a"; return ;; esac
  case " $a " in
    *" --sizes "*) echo "$a" | sed -E "s/--sizes ([^ ]+)/--sizes \1,$san_shapes/" ;;
    *) echo "$a --sizes $san_shapes" ;;
  esac
}
for c in $homework; do
  built "$c" || continue
  bin=$T/$c/test_$c
  if [ -x "$bin" ]; then
    : >"$summary"
    echo "== $c/test_$c" >>"$G/tests.log"
    (cd "$T/$c" && REQUIRE_GPU=1 WB_TEST_SUMMARY="$summary" run_check "./test_$c") >>"$G/tests.log" 2>&1
    rc=$?
    if read -r _ p f s _ <"$summary" 2>/dev/null && [ -n "${s:-}" ]; then
      rec tests "$c" "$p" "$f" "$s" "$rc"; echo "grade: tests $c: $p passed, $f failed, $s skipped (exit $rc)"
    else
      rec tests "$c" - - - "$rc"; echo "grade: tests $c: no counts reported (exit $rc)"
    fi
  else
    rec tests "$c" - - - missing
  fi
  case "$c" in 00_*|01_*) continue ;; esac
  need=$(wb_needs_cc "$c")
  if [ -n "$need" ] && [ -n "$cc" ] && [ "$cc" != "$need" ]; then
    rec gradable "$c" no "$need"
    echo "grade: $c: not gradable on this GPU (needs compute capability $need; this GPU is $cc)"
    continue
  fi
  prog=$T/$c/$c
  extra=""; case "$c" in 07_*) extra="--no-costs" ;; 08_*) extra="--part crossover" ;; esac
  "$prog" --help >"$G/variants_$c.txt" 2>&1
  trace="$G/trace_$c.tsv"
  # shellcheck disable=SC2086  # extra is empty or two words
  { echo "== $c --sizes $shapes --seed $seed"
    (cd "$T" && WB_KERNEL_TRACE="$trace" run_check "$prog" --sizes "$shapes" --seed "$seed" --warmup 1 --reps 2 $extra --csv "$G/sweep.csv" 2>&1); } >>"$G/sweep.log"
  rc1=$?
  if cupti_missing "$G/sweep.log"; then
    echo "grade: the programs cannot trace their kernels: CUPTI (libcupti.so, part of the CUDA toolkit) was not found; set WB_CUPTI_LIB=/path/to/libcupti.so. Nothing was graded." >&2
    exit 4
  fi
  if [ $rc1 -eq 3 ] && [ -n "$need" ]; then  # the capability was unknown: the program found it wrong
    rec gradable "$c" no "$need"; echo "grade: $c: not gradable on this GPU (its program exited 3)"; continue
  fi
  [ $rc1 -eq 3 ] && no_gpu "$(grep -m1 -i 'error' "$G/sweep.log" || echo "$c exit status 3")"
  { echo "== $c --sizes $small --alpha -1.5 --beta 0.5 --seed $seed"
    (cd "$T" && WB_KERNEL_TRACE="$trace" run_check "$prog" --sizes "$small" --alpha -1.5 --beta 0.5 --seed "$seed" --warmup 1 --reps 2 $extra --csv "$G/sweep.csv" 2>&1); } >>"$G/sweep.log"
  rc2=$?
  rc=$rc1; [ $rc -eq 0 ] && rc=$rc2
  rec sweep "$c" "$rc"; echo "grade: sweep $c: $([ $rc -eq 0 ] && echo PASS || echo "FAILED (exit $rc)")"

  # The sanitizer judges memory and races only: verification is off, so a wrong result is the
  # sweep's business. A chapter that is not clean is run again one variant at a time (san_status).
  sargs=$(sanitize_args "$c")
  for tool in memcheck racecheck; do
    targs=(--tool "$tool" --error-exitcode 9); [ "$tool" = racecheck ] && targs+=(--racecheck-report all)
    echo "== $c $tool: $sargs --no-check" >>"$G/sanitize.log"
    # shellcheck disable=SC2086  # sargs is a list of options
    (cd "$T" && run_check "$san" "${targs[@]}" "$prog" $sargs --no-check) >>"$G/sanitize.log" 2>&1
    rc=$(san_status $?)
    if [ $rc -eq 0 ]; then
      rec sanitize "$c" "$tool" "*" ok 0
    else
      rec sanitize "$c" "$tool" "*" fail "$rc"
      for v in $(grade_py variants "$G/variants_$c.txt"); do
        # shellcheck disable=SC2086
        (cd "$T" && run_check "$san" "${targs[@]}" "$prog" $sargs --no-check --variant "$v") >>"$G/sanitize.log" 2>&1
        r=$(san_status $?)
        rec sanitize "$c" "$tool" "$v" "$([ $r -eq 0 ] && echo ok || echo fail)" "$r"
      done
    fi
    echo "grade: $tool $c: $([ $rc -eq 0 ] && echo clean || echo "FOUND something (exit $rc; per variant in grade.md)")"
  done

  { echo "== $c --size $bench_shape"
    (cd "$T" && WB_KERNEL_TRACE="$trace" run_timed "$prog" --size "$bench_shape" $extra --csv "$G/bench.csv" 2>&1); } >>"$G/bench.log"
  rc=$?
  rec bench "$c" "$rc"; echo "grade: bench $c at $bench_shape: exit $rc"
  if [ "$(grade_py idea "$c" --rubric "$rubric")" = sass ]; then
    [ -n "$objdump" ] || { echo "grade: cuobjdump not found (it ships with the CUDA toolkit; or CUOBJDUMP=/path): the idea check of $c needs it. Nothing was graded." >&2; exit 4; }
    "$objdump" -sass "$prog" >"$G/sass_$c.txt" 2>>"$G/build.log"
  fi
done

# ---- 6. score ----------------------------------------------------------------------------------
grade_py score "$G" --rubric "$rubric" || exit 1
