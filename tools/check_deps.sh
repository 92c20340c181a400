#!/usr/bin/env bash
# check_deps.sh - one line per thing the workbook needs that is missing, with the command that
# installs it. `make` runs it first (missing things only), `make check-env` and `make deps` with
# --all (what was found too, and where).
#
#   tools/check_deps.sh          lines for missing things only (nothing when all is there)
#   tools/check_deps.sh --all    a line for every dependency, found or not
#
# Where nvcc, Catch2 and CUTLASS are is worked out in one place, common/config.mk; this script
# looks for none of them. The top-level Makefile passes its answers (WB_NVCC, WB_NVCC_PATH, WB_CXX,
# WB_CATCH2_VERSION, WB_CATCH2_DIR, WB_CATCH2_MISSING, WB_CUTLASS_INC, WB_CUTLASS); run by hand
# (tools/setup.sh does), the script asks config.mk through make. ncu and compute-sanitizer are reported by chapter 00
# (make check-env) and by make profile / make sanitize, from the same config.mk.
# Exit status: 2 when something without which nothing builds is missing (nvcc, g++), else 0:
# Catch2 stops only the test builds, and OpenBLAS, matplotlib and CUTLASS are optional.
set -u
cd "$(dirname "$0")/.."
all=0
[ "${1:-}" = "--all" ] && all=1

# The install commands are written for this user: `sudo` only when not root and sudo exists.
if [ "$(id -u)" -eq 0 ] || ! command -v sudo >/dev/null 2>&1; then sudo=""; else sudo="sudo "; fi
apt="${sudo}apt-get install -y"
fatal=0
found() { [ "$all" -eq 1 ] && echo "found: $1"; return 0; }
missing() { echo "missing: $1"; }
optional() { echo "missing (optional): $1"; }

# ---- what common/config.mk found, when make did not pass it --------------------------------------
if [ -z "${WB_NVCC+set}" ]; then
  if command -v make >/dev/null 2>&1; then
    while IFS='=' read -r name value; do declare "$name=$value"; done < <(
      make -s --no-print-directory -f common/config.mk --eval 'wb-found: ; @printf "%s\n" \
        "WB_NVCC=$(NVCC)" "WB_NVCC_PATH=$(NVCC_PATH)" "WB_CXX=$(CXX)" "WB_CATCH2_VERSION=$(CATCH2_VERSION)" "WB_CATCH2_DIR=$(CATCH2_DIR)" \
        "WB_CATCH2_MISSING=$(CATCH2_MISSING)" "WB_CUTLASS_INC=$(CUTLASS_INC)" "WB_CUTLASS=$(CUTLASS)"' wb-found 2>/dev/null)
  else
    missing "make (nothing builds without it): $apt g++ make"
    fatal=1
  fi
fi

# ---- nvcc and g++: nothing builds without them ---------------------------------------------------
# nvcc where config.mk found it (NVCC_PATH, empty for none); from a make that passes only NVCC, that.
nvcc=${WB_NVCC_PATH-${WB_NVCC:-}} nvcc_asked=${WB_NVCC:-nvcc}
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  found "nvcc $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p') ($nvcc)"
else
  missing "nvcc (the CUDA toolkit, looked for $nvcc_asked): install the CUDA toolkit from NVIDIA (https://developer.nvidia.com/cuda-downloads), or set CUDA_PATH=/path/to/cuda"
  fatal=1
fi
cxx=${WB_CXX:-g++}
if command -v "$cxx" >/dev/null 2>&1; then
  found "$cxx $("$cxx" -dumpfullversion 2>/dev/null) ($(command -v "$cxx"))"
else
  missing "$cxx (the host compiler): $apt g++ make"
  fatal=1
fi

# ---- Catch2: the tests ---------------------------------------------------------------------------
catch2_version=${WB_CATCH2_VERSION:-} catch2_dir=${WB_CATCH2_DIR:-}
if [ -n "$catch2_version" ]; then
  found "Catch2 v$catch2_version ($catch2_dir)"
else
  echo "${WB_CATCH2_MISSING:-missing: Catch2 (make test): see common/config.mk}"  # the line a test build stops with
fi

# ---- OpenBLAS: chapter 01's baseline -------------------------------------------------------------
# The same probe as common/chapter.mk's (chapter 01's OpenBLAS): the header and the library, compiled and linked.
probe=$(mktemp)
if printf '#include <cblas.h>\nint main(void) { openblas_set_num_threads(1); return 0; }\n' |
    "$cxx" -x c++ - -o "$probe" -lopenblas >/dev/null 2>&1; then
  found "OpenBLAS (chapter 01's baseline)"
else
  optional "OpenBLAS (chapter 01's BLAS baseline; without it that column shows -): $apt libopenblas-dev"
fi
rm -f "$probe"

# ---- python3 and matplotlib: make test's tool tests, make report ---------------------------------
# `make report` runs the first python3 on the PATH; apt's python3-matplotlib serves only the
# system one (/usr/bin/python3), so another python3 (pyenv, conda, a venv) gets pip's command.
python=$(command -v python3 || true)
if [ -z "$python" ]; then
  missing "python3 (make test's tool tests, make report, make grade): $apt python3 python3-matplotlib"
elif mpl=$("$python" -c 'import matplotlib; print(matplotlib.__version__)' 2>/dev/null); then
  found "matplotlib $mpl for $python (make report's plots)"
else
  system=$("$python" -c 'import sys; print(int(sys.prefix == sys.base_prefix and sys.prefix in ("/usr", "/usr/local")))' 2>/dev/null)
  if [ "$system" = 1 ] && [ "$(readlink -f "$python")" = "$(readlink -f /usr/bin/python3 2>/dev/null)" ]; then
    optional "matplotlib for $python (make report's plots; the tables are made without it): $apt python3-matplotlib"
  else
    optional "matplotlib for $python (make report's plots; the tables are made without it): $python -m pip install matplotlib"
  fi
fi

# ---- libclang's Python bindings: the grader reads a student's regions as C++ tokens ----------------
if [ -n "$python" ]; then
  if "$python" -c 'import clang.cindex' >/dev/null 2>&1; then
    found "libclang's Python bindings for $python (make grade reads regions as C++)"
  elif [ "$(readlink -f "$python")" = "$(readlink -f /usr/bin/python3 2>/dev/null)" ]; then
    optional "libclang's Python bindings for $python (make grade; nothing else needs them): $apt python3-clang"
  else
    optional "libclang's Python bindings for $python (make grade; nothing else needs them): $python -m pip install libclang"
  fi
fi

# ---- CUTLASS: chapter 07's CUTLASS rows ----------------------------------------------------------
if [ "${WB_CUTLASS:-}" = 0 ]; then
  [ "$all" -eq 1 ] && echo "off: CUTLASS (CUTLASS=0): chapter 07 builds without its CUTLASS rows"
else
  cutlass_inc=${WB_CUTLASS_INC:-}
  if [ -n "$cutlass_inc" ] && [ -e "$cutlass_inc/cutlass/cutlass.h" ]; then
    found "CUTLASS ($cutlass_inc)"
  else
    optional "CUTLASS (chapter 07's CUTLASS rows; the chapter builds and tests without them): bash tools/setup.sh --cutlass, or set CUTLASS_INC=/path/to/cutlass/include"
  fi
fi

[ "$fatal" -eq 0 ] || exit 2
exit 0
