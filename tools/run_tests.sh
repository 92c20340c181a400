#!/usr/bin/env bash
# run_tests.sh BINARY... - runs each Catch2 test binary of the workbook (from its own folder) and
# ends with one line that adds them all up: "tests: N passed, N failed, N skipped" (test cases).
# A binary that crashes or prints no count is counted as one failed test case.
# Exit status: 0 when nothing failed, 1 otherwise.
set -u
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
passed=0 failed=0 skipped=0
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
  if read -r _ p f s <"$summary" 2>/dev/null && [ -n "${s:-}" ]; then
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
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
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
