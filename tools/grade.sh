#!/usr/bin/env bash
# grade.sh - `make grade`: grades a student's tree on a GPU, in one run:
#   1. checks for a GPU (no GPU: one line, exit status 3, nothing graded)
#   2. builds every chapter on its own (make -k), so a broken chapter costs only itself
#   3. runs each chapter's tests with REQUIRE_GPU=1 (counts from the "[test_...] test cases" line)
#   4. compute-sanitizer memcheck + racecheck per GPU chapter (make -C CHAPTER sanitize)
#   5. a correctness sweep on 4 random shapes drawn from a fresh seed (printed; GRADE_SEED= repeats
#      it): sizes up to 1500, none a multiple of any tile, K % 4 != 0; the two smallest shapes again
#      with alpha = -1.5, beta = 0.5. Every variant is verified by the program itself.
#   6. the benchmark at the rubric's shape (4096^3 by default), cuBLAS timed in the same run
#   7. tools/grade.py score: grade/grade.csv and grade/grade.md against the rubric
# A chapter built for one compute capability only (09: sm_90a, H100/H200/GH200) is not gradable on
# another GPU: steps 4-6 are left out for it, and the grade says so and costs it no points. The
# capability comes from 00_env_check (else nvidia-smi); when it is unknown the chapter is run, and
# its exit status 3 then marks it not gradable instead of ending the grading.
#
#   bash tools/grade.sh [--rubric FILE] [--manifest FILE] [--seed S]
#
# Settings (environment): GRADE_DIR (default grade), GRADE_SEED, GRADE_RUBRIC, GRADE_MANIFEST (the
# reference checksums the instructor keeps: python3 tools/grade.py manifest > FILE), STUDENT_ID,
# GRADE_TIMEOUT (seconds per program run, default 900), GRADE_NO_GPU=1 (act as if there were no GPU).
# Exit status: 0 graded (whatever the grade), 1 scoring failed, 2 bad usage (including a GRADE_DIR
# that cannot be written, found before anything runs), 3 no usable GPU.
set -u
cd "$(dirname "$0")/.."
. tools/gpu_needs.sh

usage() { echo "usage: bash tools/grade.sh [--rubric FILE] [--manifest FILE] [--seed S]   (GRADE_DIR=folder, STUDENT_ID=id)" >&2; exit 2; }
rubric=${GRADE_RUBRIC:-report_template/rubric.json}
manifest=${GRADE_MANIFEST:-}
seed=${GRADE_SEED:-}
while [ $# -gt 0 ]; do
  case "$1" in
    --rubric) [ $# -ge 2 ] || usage; rubric=$2; shift 2 ;;
    --manifest) [ $# -ge 2 ] || usage; manifest=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || usage; seed=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage ;;
  esac
done
case "$seed" in ''|*[!0-9]*) [ -z "$seed" ] || { echo "grade: --seed wants a non-negative integer" >&2; exit 2; } ;; esac
[ -f "$rubric" ] || { echo "grade: rubric $rubric not found" >&2; exit 2; }
[ -z "$manifest" ] || [ -f "$manifest" ] || { echo "grade: manifest $manifest not found" >&2; exit 2; }
command -v python3 >/dev/null 2>&1 || { echo "grade: python3 is needed to score (install python3)" >&2; exit 2; }
# The results folder is checked before anything runs (a grade nobody can save is lost work), but
# not created yet: without a GPU nothing at all is left behind.
G=${GRADE_DIR:-grade}
# True when folder $1 exists and is writable, or could be created: its nearest existing
# ancestor is a writable folder.
writable_dir() {
  local d=$1
  while [ ! -e "$d" ] && [ ! -L "$d" ]; do d=$(dirname "$d"); done
  [ -d "$d" ] && [ -w "$d" ] && [ -x "$d" ]
}
writable_dir "$G" || { echo "grade: cannot write the results folder $G (GRADE_DIR): not a writable folder" >&2; exit 2; }

# ---- 1. a GPU? -------------------------------------------------------------------------------
no_gpu() { echo "grade: no usable GPU ($1): run the grader on the GPU machine; nothing was graded" >&2; exit 3; }
[ "${GRADE_NO_GPU:-0}" = 1 ] && no_gpu "GRADE_NO_GPU=1"
if [ "${CUDA_VISIBLE_DEVICES+set}" = set ] && { [ -z "$CUDA_VISIBLE_DEVICES" ] || [ "$CUDA_VISIBLE_DEVICES" = -1 ]; }; then
  no_gpu "CUDA_VISIBLE_DEVICES='$CUDA_VISIBLE_DEVICES' hides every device"
fi
command -v nvidia-smi >/dev/null 2>&1 || no_gpu "nvidia-smi not found"
nvidia-smi -L 2>/dev/null | grep -q '^GPU ' || no_gpu "nvidia-smi lists no GPU"

mkdir -p "$G" 2>/dev/null || { echo "grade: cannot create the results folder $G" >&2; exit 2; }
rm -f "$G"/{results.tsv,sweep.csv,bench.csv,checksums.json,env.json,grade.csv,grade.md,*.log}
R="$G/results.tsv"
rec() { (IFS=$'\t'; echo "$*") >>"$R"; }
TO=${GRADE_TIMEOUT:-900}
run_to() { if command -v timeout >/dev/null 2>&1; then timeout "$TO" "$@"; else "$@"; fi; }

[ -n "$seed" ] || seed=$(( $(od -An -N4 -tu4 /dev/urandom | tr -d ' ') % 1000000000 ))
shapes_out=$(python3 tools/grade.py shapes "$seed") || exit 2
shapes=$(echo "$shapes_out" | sed -n 1p)
small=$(echo "$shapes_out" | sed -n 2p)
bench_shape=$(python3 tools/grade.py bench-shape --rubric "$rubric") || exit 2
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ "$commit" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && commit="$commit-dirty"
rec seed - "$seed"; rec shapes - "$shapes"; rec bench_shape - "$bench_shape"; rec git - "$commit"; rec started - "$started"
python3 tools/grade.py manifest >"$G/checksums.json" || exit 2
echo "grade: student ${STUDENT_ID:-(STUDENT_ID not set)}, commit $commit, results in $G/"
echo "grade: sweep seed $seed (GRADE_SEED=$seed repeats it): shapes $shapes; alpha/beta on $small"

# ---- 2. build ----------------------------------------------------------------------------------
jobs=$(nproc 2>/dev/null || echo 4)
CHAPTERS=$(ls -d [0-9][0-9]_*/ 2>/dev/null | sed 's#/$##')
if make --no-print-directory lib >>"$G/build.log" 2>&1; then rec build common ok; else rec build common fail; echo "grade: the shared harness (common/) did not build"; fi
for c in $CHAPTERS; do
  if make --no-print-directory -k -j"$jobs" -C "$c" all >>"$G/build.log" 2>&1 && [ -x "$c/$c" ]; then
    rec build "$c" ok; echo "grade: build $c ok"
  else
    rec build "$c" fail; echo "grade: build $c FAILED (see $G/build.log); graded as not built"
  fi
done
built() { grep -q "^build	$1	ok$" "$R"; }

# A GPU listed by nvidia-smi may still be unusable (driver too old, no code for it): 00 says so.
if built 00_env_check; then
  ./00_env_check/00_env_check --json "$G/env.json" >"$G/env.log" 2>&1
  if [ $? -eq 3 ]; then
    no_gpu "$(grep -m1 -i error "$G/env.log" || echo "00_env_check exit status 3")"
  fi
fi
# The compute capability of GPU 0, the one the programs use ("" when unknown); the chapters that
# need one capability are named in tools/gpu_needs.sh.
cc=$(wb_gpu_cc "$G/env.json")
not_gradable() {  # chapter, capability it needs, what we know of this GPU
  rec gradable "$1" no "$2"
  echo "grade: $1: not gradable on this GPU (needs compute capability $2; $3): no sanitizer, sweep or benchmark"
}

# ---- 3. tests ----------------------------------------------------------------------------------
summary=$(mktemp); trap 'rm -f "$summary"' EXIT
for c in common $CHAPTERS; do
  if [ "$c" = common ]; then bin=common/build/test_common; else bin=$c/test_$c; fi
  { [ "$c" = common ] || built "$c"; } || continue
  [ -x "$bin" ] || { rec tests "$c" - - - missing; continue; }
  : >"$summary"
  echo "== $bin" >>"$G/tests.log"
  (cd "$(dirname "$bin")" && REQUIRE_GPU=1 WB_TEST_SUMMARY="$summary" run_to "./$(basename "$bin")") >>"$G/tests.log" 2>&1
  rc=$?
  if read -r _ p f s _ <"$summary" 2>/dev/null && [ -n "${s:-}" ]; then
    rec tests "$c" "$p" "$f" "$s" "$rc"; echo "grade: tests $c: $p passed, $f failed, $s skipped (exit $rc)"
  else
    rec tests "$c" - - - "$rc"; echo "grade: tests $c: no counts reported (exit $rc)"
  fi
done

# ---- 4-6. sanitizer, sweep, benchmark per GPU chapter ------------------------------------------
san=$(command -v compute-sanitizer 2>/dev/null || true)
[ -z "$san" ] && [ -x "${CUDA_PATH:-/usr/local/cuda}/bin/compute-sanitizer" ] && san="${CUDA_PATH:-/usr/local/cuda}/bin/compute-sanitizer"
[ -z "$san" ] && echo "grade: compute-sanitizer not found: sanitizer marked skipped (no points)"
for c in $CHAPTERS; do
  case "$c" in 00_*|01_*) continue ;; esac
  need=$(wb_needs_cc "$c")
  if [ -n "$need" ] && [ -n "$cc" ] && [ "$cc" != "$need" ]; then
    not_gradable "$c" "$need" "this GPU is $cc"
    continue
  fi
  built "$c" || continue
  extra=""; case "$c" in 07_*) extra="--no-costs" ;; 08_*) extra="--part crossover" ;; esac
  if [ -n "$san" ]; then
    make --no-print-directory -C "$c" sanitize SANITIZER="$san" >>"$G/sanitize.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then rec sanitize "$c" ok 0; else rec sanitize "$c" fail "$rc"; fi
    echo "grade: sanitize $c: $([ $rc -eq 0 ] && echo clean || echo "FAILED (exit $rc)")"
  else
    rec sanitize "$c" skipped -
  fi
  # shellcheck disable=SC2086  # extra is empty or one word
  { echo "== ./$c/$c --sizes $shapes --seed $seed"
    run_to ./"$c"/"$c" --sizes "$shapes" --seed "$seed" --warmup 1 --reps 2 $extra --csv "$G/sweep.csv" 2>&1; } >>"$G/sweep.log"
  rc1=$?
  if [ $rc1 -eq 3 ] && [ -n "$need" ]; then  # the capability was unknown: the program found it wrong
    not_gradable "$c" "$need" "its program exited 3"
    continue
  fi
  [ $rc1 -eq 3 ] && no_gpu "$(grep -m1 -i 'error' "$G/sweep.log" || echo "./$c/$c exit status 3")"
  { echo "== ./$c/$c --sizes $small --alpha -1.5 --beta 0.5 --seed $seed"
    run_to ./"$c"/"$c" --sizes "$small" --alpha -1.5 --beta 0.5 --seed "$seed" --warmup 1 --reps 2 $extra --csv "$G/sweep.csv" 2>&1; } >>"$G/sweep.log"
  rc2=$?
  rc=$rc1; [ $rc -eq 0 ] && rc=$rc2
  rec sweep "$c" "$rc"; echo "grade: sweep $c: $([ $rc -eq 0 ] && echo PASS || echo "FAILED (exit $rc)")"
  { echo "== ./$c/$c --size $bench_shape"
    run_to ./"$c"/"$c" --size "$bench_shape" $extra --csv "$G/bench.csv" 2>&1; } >>"$G/bench.log"
  rc=$?
  rec bench "$c" "$rc"; echo "grade: bench $c at $bench_shape: exit $rc"
done

# ---- 7. score ----------------------------------------------------------------------------------
python3 tools/grade.py score "$G" --rubric "$rubric" ${manifest:+--manifest "$manifest"} || exit 1
