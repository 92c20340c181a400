#!/usr/bin/env bash
# bench.sh - `make bench`: the whole ladder in one run. Every chapter on its standard shapes, one
# shape per program run, with cuBLAS (OpenBLAS for the CPU chapter 01) timed in the same run on
# the same shape. Writes, in results/ (or $BENCH_OUT):
#   bench.csv           every measurement, in the spec's CSV schema (what `make report` reads)
#   bench_commands.tsv  chapter<TAB>command: the equivalent single command per chapter
#                       (python3 -m wb fill puts it under the tables of the notes)
#   env.json, env.txt   the device facts and measured ceilings (00_env_check --json)
#   bench.log           everything the programs printed
# and ends with the A/A checks (cuBLAS timed, and its energy measured, against itself: how much
# this run's ratios and GFLOP/J can be trusted) and the summary: the best variant of each chapter
# at each shape, as % of cuBLAS.
#
#   bash tools/bench.sh              run it (make bench)
#   bash tools/bench.sh --dry-run    print the plan (chapters, shapes, estimated longest launch)
#                                    and run nothing; with BENCH_ENV=file it plans for that GPU
#   BENCH_CHAPTERS="03 05" bash tools/bench.sh   only these chapters (two-digit numbers); the
#                                    A/A checks need 07 among them
#   bash tools/bench.sh --resume     (make bench-resume) go on with a run that stopped (machine
#                                    lost, watchdog, Ctrl-C): keeps the folder's files, skips every
#                                    program run that bench.log shows ended with status 0, drops
#                                    the rows of the others and runs them again; the checks and
#                                    the summary then cover the whole CSV. On the same GPU model
#                                    only (env.json's name); env.json is kept.
#
# Slow chapters get fewer and smaller shapes (SHAPES below), so the run takes a few minutes on a
# current GPU. On top of that every shape is checked against an estimate of its slowest launch
# (the chapter's slowest variant as a fraction of the GPU's FP32 peak, pessimistic on purpose):
# a shape whose estimate exceeds the limit is skipped, and the line says so. The limit is 1 s when
# the GPU drives a display (the Windows watchdog kills a kernel after about 2 s; 00_env_check
# reports "kernel_timeout"), and 5 s otherwise, to keep the whole run short.
# A chapter built for one compute capability only (09: sm_90a code, H100/H200/GH200) is left out of
# the plan, with one line that says why, when the GPU's compute capability (from env.json, else
# nvidia-smi) is another; when it is unknown the chapter runs, and its exit status 3 then skips it
# instead of stopping the run.
# Exit status: 0 all passed, 1 a program failed or a check failed, 2 bad usage or an output folder
# that cannot be written (found before anything runs), 3 no usable GPU.
set -u
cd "$(dirname "$0")/.."
. tools/gpu_needs.sh

dry_run=0
resume=0
case "${1:-}" in
  "") ;;
  --dry-run) dry_run=1 ;;
  --resume) resume=1 ;;
  *) echo "usage: bash tools/bench.sh [--dry-run | --resume]   (BENCH_OUT=folder, BENCH_ENV=env.json)" >&2; exit 2 ;;
esac
out=${BENCH_OUT:-results}
ALL_CHAPTERS="01 02 03 04 05 06 07 08 09"
chapters=${BENCH_CHAPTERS:-$ALL_CHAPTERS}
for nn in $chapters; do
  case " $ALL_CHAPTERS " in
    *" $nn "*) ;;
    *) echo "bench: BENCH_CHAPTERS: '$nn' is not a benched chapter (choose among $ALL_CHAPTERS)" >&2; exit 2 ;;
  esac
done
csv="$out/bench.csv"
cmds="$out/bench_commands.tsv"
log="$out/bench.log"

# --resume: the program runs an earlier run finished ("chapter shape" lines). bench.log frames every
# run with "== ./DIR/DIR --size SHAPE ..." and "== exit status N"; only status 0 counts as done.
declare -A DONE=()
if [ "$resume" -eq 1 ]; then
  if [ ! -f "$csv" ] || [ ! -f "$log" ]; then
    echo "bench: --resume: no earlier run in $out (bench.csv and bench.log are needed); run make bench" >&2
    exit 2
  fi
  while read -r c s; do DONE["$c $s"]=1; done < <(awk '
    /^== \.\// { c = $2; sub(/^\.\//, "", c); sub(/\/.*/, "", c); s = $4 }
    /^== exit status / { if ($4 == "0" && c != "") print c, s; c = "" }' "$log")
fi

# ---- what runs where -------------------------------------------------------------------------
ODD=1000x1013x4097       # nothing a multiple of anything: the edge paths are timed too
FLAT=4096x4096x1024      # short K: fewer FLOP per byte, and fewer K steps to hide latency in
declare -A SHAPES=(
  [01]="256 512 1024"
  [02]="1024 2048 4096 $ODD"
  [03]="1024 2048 4096 $ODD"
  [04]="1024 2048 4096 $ODD"
  [05]="1024 2048 4096 8192 $FLAT $ODD"
  [06]="1024 2048 4096 8192 $FLAT $ODD"
  [07]="128 256 512 1024 2048 4096 8192 $FLAT $ODD"
  [08]="256 1024 4096"
  [09]="1024 4096 8192 $FLAT $ODD"
)
# Extra options per chapter. 01: the naive CPU loop needs seconds per call at 1024.
# 07: its cost measurements (handle, first call) belong to its own notes, not to the bench.
# 08: the crossover part only: end to end (copies from and to pinned host memory included) for
# cuBLAS and 05's best, beside chapter 01's CPU code; its other parts run with `make measure-08`.
# --energy: the GFLOP per joule of every row (NVML), for the GPU chapters that run the common harness.
declare -A OPTIONS=(
  [01]="--warmup 1 --reps 3"
  [02]="--energy"
  [03]="--energy"
  [04]="--energy"
  [05]="--energy"
  [06]="--energy"
  [07]="--no-costs --energy"
  [08]="--part crossover"
  [09]="--energy"
)
# The slowest variant of each GPU chapter as a fraction of the FP32 peak, rounded down (02's
# uncoalesced kernel is the slowest of all; 03 has a bank-conflict demonstration; 07's slowest is
# cuBLAS in pedantic FP32).
declare -A SLOWEST=([02]=0.004 [03]=0.02 [04]=0.03 [05]=0.03 [06]=0.03 [07]=0.2 [08]=0.03 [09]=0.5)
WATCHDOG_LIMIT_S=1
LIMIT_S=5

# The output folder must be writable before anything is measured: results nobody can save are a
# lost run. (--dry-run writes nothing, so it needs none.) A folder that does not exist yet is fine
# when its nearest existing ancestor is writable.
if [ "$dry_run" -eq 0 ]; then
  d=$out
  while [ ! -e "$d" ] && [ ! -L "$d" ]; do d=$(dirname "$d"); done
  if ! { [ -d "$d" ] && [ -w "$d" ] && [ -x "$d" ]; } || ! mkdir -p "$out" 2>/dev/null; then
    echo "bench: cannot write the results folder $out (BENCH_OUT): not a writable folder" >&2
    exit 2
  fi
fi

# ---- the device facts ------------------------------------------------------------------------
env_json="$out/env.json"
if [ "$dry_run" -eq 1 ]; then
  env_json=${BENCH_ENV:-$env_json}
elif [ "$resume" -eq 1 ] && [ -f "$env_json" ]; then
  # The rows already there were measured on the GPU env.json names: a resumed run must be on the same.
  was=$(grep -o '"name": *"[^"]*"' "$env_json" | head -1 | sed 's/.*: *"//; s/"$//')
  now=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -1)
  if [ -n "$now" ] && [ -n "$was" ] && [ "$now" != "$was" ]; then
    echo "bench: --resume: the rows in $out were measured on $was, this GPU is $now; run make bench" >&2
    exit 2
  fi
  echo "bench: resuming the run in $out (${#DONE[@]} program runs done; device facts from $env_json)"
elif [ -x 00_env_check/00_env_check ]; then
  echo "bench: device facts and measured ceilings (00_env_check) -> $env_json"
  ./00_env_check/00_env_check --json "$env_json" >"$out/env.txt" 2>&1
  rc=$?
  if [ "$rc" -eq 3 ]; then
    cat "$out/env.txt"
    echo "bench: no usable GPU, nothing measured"
    exit 3
  fi
  [ "$rc" -ne 0 ] && echo "bench: 00_env_check exited with status $rc (see $out/env.txt); going on"
else
  echo "bench: 00_env_check is not built (make 00): no device facts, no launch-time estimates"
fi

# The first value of a key in the JSON 00_env_check writes (GPU 0 comes first).
json_value() { grep -o "\"$1\": *[^,}]*" "$2" 2>/dev/null | head -1 | sed 's/^[^:]*: *//'; }
peak=""
limit=$LIMIT_S
if [ -f "$env_json" ]; then
  peak=$(json_value peak_fp32_gflops "$env_json")
  if [ "$(json_value kernel_timeout "$env_json")" = "true" ]; then
    limit=$WATCHDOG_LIMIT_S
    echo "bench: this GPU has a kernel time limit (display watchdog): no launch may be estimated above ${limit} s"
  fi
fi
case "$peak" in ''|null) peak="" ;; esac
# The compute capability of GPU 0 (the one the programs use): 00_env_check's, else nvidia-smi's
# (not for --dry-run, which plans for BENCH_ENV's GPU); "" when unknown.
cc=$(wb_gpu_cc "$env_json" $((1 - dry_run)))

# Estimated seconds of the slowest launch of chapter $1 on shape $2 ("" when unknown).
estimate_s() {
  local frac=${SLOWEST[$1]:-}
  [ -n "$frac" ] && [ -n "$peak" ] || return 0
  echo "$2" | awk -F x -v frac="$frac" -v peak="$peak" \
    '{ m = $1; n = (NF == 3) ? $2 : $1; k = (NF == 3) ? $3 : $1;
       printf "%.3f", 2 * m * n * k / (frac * peak * 1e9) }'
}

# ---- the plan --------------------------------------------------------------------------------
plan_chapter=()
plan_shape=()
declare -A RAN=()
for nn in $chapters; do
  dir=$(ls -d ${nn}_*/ 2>/dev/null | head -1)
  dir=${dir%/}
  if [ -z "$dir" ]; then
    echo "bench: chapter $nn does not exist yet, skipped"
    continue
  fi
  # (--resume) Shapes an earlier run finished stay in the commands (in the order of SHAPES, as in a
  # complete run), need no build and do not run.
  finished=""
  for shape in ${SHAPES[$nn]}; do
    [ -n "${DONE["$dir $shape"]:-}" ] && finished="${finished:+$finished,}$shape"
  done
  if [ ! -x "$dir/$dir" ] && [ "$dry_run" -eq 0 ]; then
    [ -n "$finished" ] && RAN[$dir]=$finished
    [ "$finished" != "$(echo ${SHAPES[$nn]} | tr ' ' ,)" ] && echo "bench: $dir is not built (make $nn), skipped"
    continue
  fi
  need=$(wb_needs_cc "$nn")
  if [ -n "$need" ] && [ -n "$cc" ] && [ "$cc" != "$need" ]; then
    [ -n "$finished" ] && RAN[$dir]=$finished
    echo "bench: $dir left out: it runs only on compute capability $need ($(wb_needs_gpus "$nn")), this GPU is $cc"
    continue
  fi
  for shape in ${SHAPES[$nn]}; do
    if [ -n "${DONE["$dir $shape"]:-}" ]; then
      RAN[$dir]="${RAN[$dir]:+${RAN[$dir]},}$shape"
      continue
    fi
    est=$(estimate_s "$nn" "$shape")
    if [ -n "$est" ] && awk -v e="$est" -v l="$limit" 'BEGIN { exit !(e > l) }'; then
      echo "bench: $dir $shape skipped: its slowest launch would take about ${est} s (limit ${limit} s)"
      continue
    fi
    plan_chapter+=("$dir")
    plan_shape+=("$shape")
    RAN[$dir]="${RAN[$dir]:+${RAN[$dir]},}$shape"
  done
done
total=${#plan_chapter[@]}

if [ "$dry_run" -eq 1 ]; then
  echo "bench: plan, $total runs${peak:+ (FP32 peak ${peak} GFLOP/s, launch limit ${limit} s)}:"
  for ((i = 0; i < total; i++)); do
    c=${plan_chapter[$i]}
    est=$(estimate_s "${c%%_*}" "${plan_shape[$i]}")
    built=""
    [ -x "$c/$c" ] || built="(not built) "
    printf '  [%*d/%d] %-22s %-16s %s%s\n' ${#total} $((i + 1)) "$total" "$c" "${plan_shape[$i]}" "$built" \
      "${est:+slowest launch ~${est} s}"
  done
  exit 0
fi
if [ "$resume" -eq 0 ]; then
  [ "$total" -gt 0 ] || { echo "bench: nothing to run (make first)"; exit 1; }
  rm -f "$csv" "$log"
else
  [ "$total" -gt 0 ] || echo "bench: --resume: every program run is done; the checks and the summary follow"
  # Only the rows of finished runs stay: one that did not finish (killed, or a failure) runs again
  # in full when it is in the plan.
  # (The runs go in as a variable, not as a first file: an empty first file would make awk take the
  # CSV's lines for runs, and drop its header.)
  awk -F, -v done="$(printf '%s;' "${!DONE[@]}")" '
    BEGIN { n = split(done, d, ";")
            for (i = 1; i <= n; i++) { split(d[i], w, " "); s = w[2]; if (s !~ /x/) s = s "x" s "x" s; keep[w[1] "," s] = 1 } }
    FNR == 1 || (($1 "," $4 "x" $5 "x" $6) in keep)' "$csv" >"$csv.tmp" && mv "$csv.tmp" "$csv"
  echo "== resumed: $total program runs to go" >>"$log"
fi

# ---- the run ---------------------------------------------------------------------------------
rm -f "$cmds"
for c in "${!RAN[@]}"; do
  printf '%s\t./%s/%s --sizes %s %s--csv %s\n' "$c" "$c" "$c" "${RAN[$c]}" \
    "${OPTIONS[${c%%_*}]:+${OPTIONS[${c%%_*}]} }" "$csv" >>"$cmds"
done
sort -o "$cmds" "$cmds"

status=0
start=$SECONDS
declare -A WRONG_GPU=()  # chapters that exited 3 although a GPU is there (compute capability unknown)
for ((i = 0; i < total; i++)); do
  c=${plan_chapter[$i]}
  shape=${plan_shape[$i]}
  left=$((total - i - 1))
  if [ -n "${WRONG_GPU[$c]:-}" ]; then
    printf 'bench: [%*d/%d] %-22s %-16s skipped: needs compute capability %s\n' ${#total} $((i + 1)) "$total" "$c" \
      "$shape" "$(wb_needs_cc "$c")"
    continue
  fi
  printf 'bench: [%*d/%d] %-22s %-16s (%d left, %d s so far) ... ' ${#total} $((i + 1)) "$total" "$c" "$shape" \
    "$left" $((SECONDS - start))
  before=0 log_before=0
  [ -f "$csv" ] && before=$(wc -l <"$csv")
  [ -f "$log" ] && log_before=$(wc -l <"$log")
  t0=$SECONDS
  # shellcheck disable=SC2086  # OPTIONS holds several words on purpose
  { echo "== ./$c/$c --size $shape ${OPTIONS[${c%%_*}]:-} --csv $csv"
    ./"$c"/"$c" --size "$shape" ${OPTIONS[${c%%_*}]:-} --csv "$csv" 2>&1; echo "== exit status $?"; } >>"$log"
  rc=$(tail -1 "$log" | awk '{ print $NF }')
  need=$(wb_needs_cc "$c")
  if [ "$rc" -eq 3 ] && [ -n "$need" ]; then
    # Only when the compute capability was unknown: the program found a GPU it cannot run on.
    echo "not run: it runs only on compute capability $need ($(wb_needs_gpus "$c")); see $log"
    WRONG_GPU[$c]=1
    continue
  fi
  if [ "$rc" -eq 3 ]; then
    echo "no usable GPU"
    tail -n 3 "$log" | head -n 2
    exit 3
  fi
  # The fastest variant that passed, among the rows this run added (not the baselines).
  best=$(tail -n +"$((before + 1))" "$csv" 2>/dev/null | awk -F, '
    $1 != "chapter" && $16 == "PASS" && $11 != "" && $2 !~ /^(cublas_(sgemm|tf32|hgemm|bgemm)|openblas)/ {
      if ($11 + 0 > g) { g = $11 + 0; v = $2; p = $13 } }
    END { if (v != "") printf "best %s %.0f GFLOP/s%s", v, g, (p != "" ? sprintf(" = %.1f%% of the baseline", p) : "") }')
  if [ "$rc" -eq 0 ]; then
    echo "$((SECONDS - t0)) s, ${best:-no variant passed}"
  else
    echo "FAILED (exit status $rc), ${best:-no variant passed}"
    tail -n +"$((log_before + 1))" "$log" | grep -E "FAIL|error" | tail -n 5 | sed 's/^/    /'
    status=1
  fi
done

echo "bench: $total runs in $((SECONDS - start)) s; rows in $csv, programs' output in $log"

# The A/A check: chapter 07's `sgemm`, `gemmex_tf32`, `gemmex_fp16` and `gemmex_bf16` make exactly
# the baseline's cuBLAS call, timed as variants (in rounds alternating with the baseline, as every
# variant is). Their "% of cuBLAS" should read 100; how far they land from it is the noise of this
# run's ratios. Shapes from 1024^3 up must land within AA_TOLERANCE_PCT, else the run says which
# rows did not: ratios of this run closer to 100% than that band are not evidence of anything.
AA_TOLERANCE_PCT=3
if [ -f "$csv" ] && [ -n "${RAN[$(ls -d 07_*/ 2>/dev/null | head -1 | tr -d /)]:-}" ]; then
  awk -F, -v tol="$AA_TOLERANCE_PCT" '
    $1 ~ /^07_/ && $2 ~ /^(sgemm|gemmex_tf32|gemmex_fp16|gemmex_bf16)$/ && $16 == "PASS" && $13 != "" &&
    $4 * $5 * $6 >= 1024 * 1024 * 1024 {
      n++; d = $13 - 100; if (d < 0) d = -d
      if (d > tol) { bad++; rows = rows sprintf("\n    %s %sx%sx%s: %.1f%% of cuBLAS", $2, $4, $5, $6, $13) }
    }
    END {
      if (n == 0) { print "bench: A/A check: no row of chapter 07 at 1024^3 or above"; exit }
      if (bad == 0) printf "bench: A/A check: the %d rows of cuBLAS timed against itself (1024^3 and up) read 100%% +- %s%%\n", n, tol
      else printf "bench: A/A check: TOO NOISY, %d of %d rows of cuBLAS timed against itself are more than %s%% from 100%%:%s\n", bad, n, tol, rows
    }' "$csv" | tee -a "$log"
fi
# The energy A/A check: the same rows (and `lt_fp8_e4m3`) against their baseline rows' GFLOP per
# joule. The energy meter's noise is its own (a counter the driver refreshes now and then, not
# CUDA events), so it gets its own band: ENERGY_AA_TOLERANCE_PCT (python3 -m wb energy-aa --help).
ENERGY_AA_TOLERANCE_PCT=5
if command -v python3 >/dev/null 2>&1; then
  if [ -f "$csv" ] && [ -n "${RAN[$(ls -d 07_*/ 2>/dev/null | head -1 | tr -d /)]:-}" ]; then
    PYTHONPATH="$PWD/tools${PYTHONPATH:+:$PYTHONPATH}" python3 -m wb energy-aa --tolerance "$ENERGY_AA_TOLERANCE_PCT" \
      "$csv" | tee -a "$log"
  fi
  PYTHONPATH="$PWD/tools${PYTHONPATH:+:$PYTHONPATH}" python3 -m wb bench-summary "$csv" || status=1
else
  echo "bench: python3 not found: no summary table (install python3)"
fi
exit $status
