#!/usr/bin/env bash
# bench.sh - `make bench`: every chapter on its standard shapes, cuBLAS (or BLAS for 01) timed
# in the same run for every shape. Writes results/bench.csv (the spec's schema), the commands
# used (results/bench_commands.tsv), the device facts (results/env.json), and a summary.
# BENCH_OUT=folder writes there instead of results/.
set -u
cd "$(dirname "$0")/.."
out=${BENCH_OUT:-results}
mkdir -p "$out"
csv="$out/bench.csv"
cmds="$out/bench_commands.tsv"
rm -f "$csv" "$cmds"

# Shapes per chapter: slow chapters get fewer and smaller shapes, so the whole ladder takes a few
# minutes on a current GPU and no single launch runs long enough to trip a display watchdog.
declare -A ARGS=(
  [01]="--sizes 256,512,1024 --warmup 1 --reps 5"
  [02]="--sizes 1024,2048,4096"
  [03]="--sizes 1024,2048,4096,1000x1013x4097"
  [04]="--sizes 1024,2048,4096,1000x1013x4097"
  [05]="--sizes 1024,2048,4096,8192,4096x4096x1024,1000x1013x4097"
  [06]="--sizes 1024,2048,4096,8192,1000x1013x4097"
  [07]="--sizes 128,256,512,1024,2048,4096,8192"
)

chapters=()
for d in [0-9][0-9]_*/; do chapters+=("${d%/}"); done
total=0
for c in "${chapters[@]}"; do [ -n "${ARGS[${c%%_*}]:-}" ] && [ -x "$c/$c" ] && total=$((total + 1)); done

status=0
if [ -x 00_env_check/00_env_check ]; then
  echo "bench: device facts -> $out/env.json"
  ./00_env_check/00_env_check --json "$out/env.json" > "$out/env.txt" 2>&1 || status=$?
  [ "$status" -eq 3 ] && { cat "$out/env.txt"; exit 3; }
fi

i=0
for c in "${chapters[@]}"; do
  nn=${c%%_*}
  args=${ARGS[$nn]:-}
  [ -n "$args" ] || continue
  if [ ! -x "$c/$c" ]; then echo "bench: $c is not built, skipped"; continue; fi
  i=$((i + 1))
  echo "bench: [$i/$total] $c $args"
  printf '%s\t./%s/%s %s --csv %s\n' "$c" "$c" "$c" "$args" "$csv" >> "$cmds"
  ./"$c"/"$c" $args --csv "$csv"
  rc=$?
  [ $rc -ne 0 ] && { echo "bench: $c exited with status $rc"; status=1; }
done

python3 tools/bench_summary.py "$csv" || true
exit $status
