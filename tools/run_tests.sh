#!/usr/bin/env bash
# run_tests.sh TEST... - make test's runner: `python3 -m wb test` (tools/wb/testrun.py says what it
# prints; its last line, "tests: N passed, N failed, N skipped", stays as it is: CI parses it).
# Exit status: 0 when nothing failed, 1 otherwise.
tools=$(cd "$(dirname "$0")" && pwd)
PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m wb test "$@"
