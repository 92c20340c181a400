# gpu_needs.sh - sourced by bench.sh and grade.sh: the chapters whose code runs on one compute
# capability only (09: sm_90a code runs on 9.0 and on no other GPU; on another GPU its program exits
# 3, which for every other chapter means "no usable GPU"), and the capability of the GPU the
# programs use.
#   wb_needs_cc CHAPTER        the capability CHAPTER (NN or NN_name) needs; nothing for any GPU
#   wb_needs_gpus CHAPTER      the GPUs that have it, in words
#   wb_gpu_cc ENV_JSON [SMI]   GPU 0's capability: the "cc" of ENV_JSON (00_env_check --json),
#                              else nvidia-smi's (unless SMI is 0); nothing when unknown
#   wb_gpu_run [--shared] SECONDS CMD...
#                              CMD under `timeout SECONDS`, holding the machine's GPU lock, so that
#                              gradings started side by side (a class graded in parallel) build at
#                              the same time and never time kernels while another's run. A program
#                              that times (benchmark, reference, 00's ceilings) holds the lock alone;
#                              one that only checks results (tests, sweep, sanitizer) takes it
#                              --shared, beside other checks but never beside a timing. The lock is
#                              the file GRADE_GPU_LOCK (default ${TMPDIR:-/tmp}/wb-grade-gpu.lock);
#                              without flock(1) or that file, CMD runs unlocked.
wb_needs_cc() { case "$1" in 09|09_*) echo 9.0 ;; esac; }
wb_needs_gpus() { case "$1" in 09|09_*) echo "H100, H200, GH200" ;; esac; }
wb_gpu_cc() {
  local cc=""
  [ -f "$1" ] && cc=$(grep -o '"cc": *"[^"]*"' "$1" | head -1 | sed 's/.*: *"//; s/"$//')
  if [ -z "$cc" ] && [ "${2:-1}" != 0 ] && command -v nvidia-smi >/dev/null 2>&1; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' \r')
  fi
  case "$cc" in [0-9]*.[0-9]*) echo "$cc" ;; esac
}
wb_gpu_run() {
  local mode=-x lock=${GRADE_GPU_LOCK:-${TMPDIR:-/tmp}/wb-grade-gpu.lock} t=()
  [ "$1" = --shared ] && { mode=-s; shift; }
  command -v timeout >/dev/null 2>&1 && t=(timeout "$1")
  shift
  { [ -e "$lock" ] || : >"$lock"; } 2>/dev/null
  if command -v flock >/dev/null 2>&1 && [ -r "$lock" ]; then
    flock "$mode" "$lock" ${t[@]+"${t[@]}"} "$@"
  else
    ${t[@]+"${t[@]}"} "$@"
  fi
}
