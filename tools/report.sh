#!/usr/bin/env bash
# report.sh - `make report`. The filled homework report (report_template/, plots) is not part of
# the workbook yet; until it is, this says so instead of failing obscurely.
echo "make report: the report generator is not written yet. Measured rows are in results/bench.csv"
echo "(make bench); tools/fill_results.py turns them into the tables of the chapter notes."
exit 2
