#!/usr/bin/env python3
"""Tests of best_sweep.py: the shapes are reproducible and the evaluation catches a bad `best`."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import best_sweep  # noqa: E402
import wb_unittest  # noqa: E402


def row(variant, shape, ms, pct, chapter="05_float4_vectorized", dtype="fp32"):
    m, n, k = shape
    return {"chapter": chapter, "variant": variant, "dtype": dtype, "M": str(m), "N": str(n), "K": str(k),
            "ms_median": str(ms), "pct_cublas": str(pct), "status": "unchecked"}


class BestSweepTest(unittest.TestCase):
    def test_shapes_are_seeded_and_in_range(self):
        a = best_sweep.random_shapes(30, 7, 256, 8192)
        self.assertEqual(a, best_sweep.random_shapes(30, 7, 256, 8192))
        self.assertNotEqual(a, best_sweep.random_shapes(30, 8, 256, 8192))
        for s in a:
            dims = [int(x) for x in s.split("x")]
            self.assertEqual(len(dims), 3)
            self.assertTrue(all(256 <= d <= 8192 for d in dims))

    def test_best_within_slack_passes(self):
        rows = []
        for i, shape in enumerate([(300, 400, 500), (1000, 1000, 1000)]):
            rows += [row("cublas_sgemm", shape, 1.0, 100), row("warptile", shape, 1.0, 95),
                     row("splitk", shape, 1.2, 80), row("best", shape, 1.02, 93)]
        lines, failures = best_sweep.evaluate(rows, median_goal=90, floor_goal=75)
        self.assertEqual(failures, [])
        self.assertIn("median  93.0%", lines[0])

    def test_slow_best_and_low_median_fail(self):
        shape = (512, 512, 512)
        rows = [row("warptile", shape, 1.0, 95), row("best", shape, 1.05, 70)]
        _, failures = best_sweep.evaluate(rows, median_goal=90, floor_goal=75)
        self.assertTrue(any("5.0% slower than warptile" in f for f in failures), failures)
        self.assertTrue(any("median" in f for f in failures))
        self.assertTrue(any("min" in f for f in failures))

    def test_small_shapes_and_other_precisions_are_apart(self):
        rows = [row("warptile", (100, 512, 512), 1.0, 95), row("best", (100, 512, 512), 2.0, 92),
                row("wmma_smem", (512, 512, 512), 1.0, 50, "06_tensor_core_wmma", "fp16"),
                row("wmma_best", (512, 512, 512), 1.0, 50, "06_tensor_core_wmma", "fp16"),
                row("tf32_wmma", (512, 512, 512), 1.0, 40, "06_tensor_core_wmma", "tf32"),
                row("tf32_best", (512, 512, 512), 1.1, 36, "06_tensor_core_wmma", "tf32")]
        lines, failures = best_sweep.evaluate(rows, median_goal=90, floor_goal=75)
        self.assertEqual(len(lines), 3)
        # M < 256: not held to the 3% goal; the median goal is for chapter 05 only
        self.assertEqual(failures, ["06_tensor_core_wmma tf32 512x512x512: tf32_best is 10.0% slower than tf32_wmma"])

    def test_rounds_count_with_their_median(self):
        shape = (1000, 1000, 1000)
        rows = []
        # best is unlucky in one round of three, the ladder row lucky in another: the medians decide
        for best_ms, ladder_ms in ((1.00, 1.00), (1.30, 0.99), (1.01, 0.80)):
            rows += [row("warptile", shape, ladder_ms, 95), row("best", shape, best_ms, 94)]
        lines, failures = best_sweep.evaluate(rows, median_goal=90, floor_goal=75)
        self.assertEqual(failures, [])
        self.assertIn("+2.0%", lines[0])  # 1.01 against 0.99
        self.assertIn("median of 3 rounds", lines[0])
        # ... and a best slow in two rounds of three is slow
        rows += [row("warptile", shape, 1.0, 95), row("best", shape, 1.2, 80),
                 row("warptile", shape, 1.0, 95), row("best", shape, 1.2, 80)]
        _, failures = best_sweep.evaluate(rows, median_goal=90, floor_goal=75)
        self.assertTrue(any("20.0% slower than warptile" in f for f in failures), failures)

    def test_a_failed_row_is_not_timed(self):
        shape = (512, 512, 512)
        failed = row("warptile", shape, 0.1, 500)
        failed["status"] = "FAIL"
        rows = [failed, row("warptile", shape, 1.0, 95), row("best", shape, 1.0, 95)]
        _, failures = best_sweep.evaluate(rows, median_goal=90, floor_goal=75)
        self.assertEqual(failures, [])


if __name__ == "__main__":
    sys.exit(wb_unittest.run_module(__name__, "test_best_sweep"))
