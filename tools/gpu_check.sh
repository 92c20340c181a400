#!/usr/bin/env bash
# gpu_check.sh [STEP...] - the whole GPU check of the workbook in one call, for a lent or shared
# GPU machine: each step runs under its own time limit and is skipped when the overall budget
# (GPU_CHECK_BUDGET seconds, default 560) could not cover its limit. Logs go to LOG_DIR (default
# gpu-check/), one file per step, plus summary.txt; the folder is packed into LOG_DIR.tgz after
# every step (or into PACK_TO), with results/h200/, so whatever finished is kept even if the call
# is cut short. Steps: build test sanitize tune tune06 precision06 probe bench profile
# (default: build test sanitize tune bench profile).
# A copy of the tree without .git records its commit only when told: GIT_COMMIT=abc123 bash tools/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
[ -n "${GIT_COMMIT:-}" ] && export GIT_COMMIT
log=${LOG_DIR:-gpu-check}
budget=${GPU_CHECK_BUDGET:-560}
mkdir -p "$log"
start=$(date +%s)
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build test sanitize tune bench profile)

pack() {
  local extra=()
  [ -d results/h200 ] && extra=(-C "$PWD" results/h200)
  tar czf "${PACK_TO:-$log.tgz}" -C "$(dirname "$log")" "$(basename "$log")" "${extra[@]}" 2>/dev/null
}
step() {  # step NAME LIMIT COMMAND...
  local name=$1 limit=$2
  shift 2
  local used=$(( $(date +%s) - start ))
  if [ $((used + limit)) -gt "$budget" ]; then
    echo "$name: skipped (used ${used}s of ${budget}s, needs up to ${limit}s)" | tee -a "$log/summary.txt"
    return
  fi
  local t0=$(date +%s)
  timeout "$limit" bash -c "$*" > "$log/$name.log" 2>&1
  local rc=$?
  echo "$name: status $rc in $(( $(date +%s) - t0 ))s" | tee -a "$log/summary.txt"
  pack
}

# The chapters `profile` covers: 02 to 06, and 09 on the one capability it runs on.
. tools/gpu_needs.sh
profiled="02 03 04 05 06"
[ "$(wb_gpu_cc "" 2>/dev/null)" = "$(wb_needs_cc 09)" ] && profiled="$profiled 09"

for s in "${steps[@]}"; do
  case $s in
    build)    step build 240 "make -k -j\$(nproc) all" ;;
    test)     step test 300 "REQUIRE_GPU=1 make test" ;;
    sanitize) step sanitize 300 "make sanitize" ;;
    tune)     step tune 150 "make -C 05_float4_vectorized lab >/dev/null && ./05_float4_vectorized/lab/tune_05 --sizes 2048,4096,8192,4096x4096x1024,1000x1013x4097 --csv $log/tune.csv" ;;
    tune06)   step tune06 150 "make -C 06_tensor_core_wmma lab >/dev/null && ./06_tensor_core_wmma/lab/tune_06 --sizes 4096,8192 --csv $log/tune06.csv" ;;
    precision06) step precision06 90 "make -C 06_tensor_core_wmma lab >/dev/null && ./06_tensor_core_wmma/lab/tune_06 --precision --sizes 1024,4096" ;;
    costs07)  step costs07 60 "./07_cublas_baseline/07_cublas_baseline --costs-only" ;;
    probe)    step probe 120 "./00_env_check/00_env_check --json $log/env.json; for c in 03_shared_tiling 04_register_unroll; do ./\$c/\$c --sizes 4096,1000x1013x4097 --csv $log/probe.csv; done" ;;
    bench)    step bench 420 "BENCH_OUT=results/h200 bash tools/bench.sh" ;;
    profile)  step profile 200 "for n in $profiled; do echo \"== profile-\$n\"; make --no-print-directory profile-\$n PROFILE_ARGS='--size 2048 --warmup 1 --reps 1 --no-check'; done" ;;
    *) echo "gpu_check: unknown step '$s'"; exit 2 ;;
  esac
done
grep -h "^tests:" "$log/test.log" 2>/dev/null
cat "$log/summary.txt"
