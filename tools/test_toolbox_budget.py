"""The toolbox in common/ stays tiny: a line budget per header (non-blank lines, comments included),
900 in all (docs/CONTRACT.md, "Layout"). The old library beside it (libwb: gemm_harness, numerics,
options.cpp, ...) goes as the chapters move onto the toolbox; until then its lines are not counted
here, and the tile helpers that chapters 03-06 share are held to what they are now, never more."""
import os

from wb import ROOT

BUDGET = {  # header -> its budget
    "cuda_check.cuh": 40,   # every CUDA and cuBLAS call checked, and every launch
    "gpu.cuh": 80,          # the deviceQuery-style summary, peaks, the clear exit without a GPU
    "options.cuh": 150,     # the options every chapter program shares
    "data.cuh": 60,         # inputs from a key, and what C holds before a launch
    "timing.cuh": 150,      # per-launch fresh inputs, checks and event timing
    "verify.cuh": 150,      # the FP64 check: gamma bound and normwise ceiling
    "cublas.cuh": 120,      # the cuBLAS references, and the comparison with them
    "csv.cuh": 30,          # one CSV row per measurement
    "gemm_tiles.cuh": 120,  # bounds-safe tile loads and stores of chapters 03-06
}
TOTAL = 900
# Until chapters 03-06 use the toolbox's gemm_tiles.cuh alone: its lines and gemm_device.cuh's.
TILES_NOW = {"gemm_tiles.cuh": 147, "gemm_device.cuh": 34}


def lines(name):
    with open(os.path.join(ROOT, "common", name), encoding="utf-8") as f:
        return sum(1 for line in f if line.strip())


def test_each_header_within_its_budget():
    over = {h: lines(h) for h in BUDGET if h not in TILES_NOW and lines(h) > BUDGET[h]}
    assert not over, f"over budget (non-blank lines): {over}"


def test_the_tile_helpers_only_shrink():
    now = {h: lines(h) for h in TILES_NOW}
    assert all(now[h] <= TILES_NOW[h] for h in now), now


def test_the_toolbox_within_900_lines():
    assert sum(BUDGET.values()) <= TOTAL
    counted = sum(lines(h) for h in BUDGET if h not in TILES_NOW) + BUDGET["gemm_tiles.cuh"]
    assert counted <= TOTAL
