#!/usr/bin/env bash
# run_tests.sh BINARY... - runs each Catch2 test binary of the workbook (from its own folder) and
# ends with one line that adds them all up: "tests: N passed, N failed, N skipped" (test cases).
# A binary that crashes or prints no count is counted as one failed test case. When test cases
# were skipped, a line before the last one says so in words: those kernels were not tested at all,
# which "0 failed" hides. The C++ binaries report how many of their skips lacked a GPU (a fifth
# count); the others (a GPU too old for the test, CUTLASS not built, a tool missing) print their
# reasons above.
# The last line stays exactly as it is (CI parses it).
# Exit status: 0 when nothing failed, 1 otherwise.
set -u
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
passed=0 failed=0 skipped=0 gpu_skipped=0
for bin in "$@"; do
  if [ ! -x "$bin" ]; then
    echo "run_tests: $bin is missing (build failed?)"
    failed=$((failed + 1))
    continue
  fi
  : >"$summary"
  echo "== $bin"
  (cd "$(dirname "$bin")" && WB_TEST_SUMMARY="$summary" "./$(basename "$bin")")
  rc=$?
  if read -r _ p f s g <"$summary" 2>/dev/null && [ -n "${s:-}" ]; then
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s)) gpu_skipped=$((gpu_skipped + ${g:-0}))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
      echo "run_tests: $bin exited with status $rc"
      failed=$((failed + 1))
    fi
  else
    echo "run_tests: $bin ended (status $rc) without reporting its counts"
    failed=$((failed + 1))
  fi
done
echo
if [ "$gpu_skipped" -gt 0 ]; then
  echo "WARNING: $gpu_skipped GPU test case(s) were SKIPPED (no usable GPU): those kernels were NOT tested." \
    "Run REQUIRE_GPU=1 make test on a GPU machine."
fi
if [ "$skipped" -gt "$gpu_skipped" ]; then
  echo "note: $((skipped - gpu_skipped)) test case(s) were skipped for another reason (a GPU too old for them," \
    "CUTLASS not built, a tool missing); their reasons are printed above."
fi
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
