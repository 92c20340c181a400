#!/usr/bin/env bash
# report.sh - `make report`: the homework report (report_template/) filled from the measured
# results into report/: tables, device facts, provenance, and plots when matplotlib is installed.
#
#   make report                                        from results/bench.csv and results/env.json
#   REPORT_CSV=results/h200/bench.csv make report      from another run (its env.json beside it)
#   STUDENT_ID=20231234 make report                    who the report is by
#   REPORT_RUBRIC=file: a rubric whose "homework" lists chapters makes the report cover only those
#   (default report_template/rubric.json)
#   REPORT_OUT=folder, REPORT_ENV=file, REPORT_SHAPE=2048 (the ladder's shape; default 4096, or
#   the largest cube measured when no chapter ran 4096, said so in the report)
#
# Filling again keeps the student's text: only the tables between the report's wb markers change
# (tools/wb/report.py says how).
# Exit status: 0 done, 2 bad input before any work: no results to report (run `make bench` first),
# a CSV that is not the workbook's (one line names the missing columns), a REPORT_SHAPE that is not a size or not in the results, a REPORT_RUBRIC that cannot be read or
# names no chapter here, or a REPORT_OUT that cannot be written.
set -u
cd "$(dirname "$0")/.."
if ! command -v python3 >/dev/null 2>&1; then
  echo "make report: python3 is needed (Debian/Ubuntu: sudo apt-get install python3)" >&2
  exit 2
fi
PYTHONPATH="$PWD/tools${PYTHONPATH:+:$PYTHONPATH}" exec python3 -m wb report "$@"
