#!/usr/bin/env bash
# check_cuda12_api.sh - compiles every translation unit of the workbook against the CUDA 12.4
# runtime and cuBLAS headers, so that host-side API use that CUDA 12 does not have (or spells
# differently) is found without a CUDA 12 toolkit.
#
# Why it is built this way: PyPI's CUDA 12 wheels (nvidia-cuda-runtime-cu12, nvidia-cublas-cu12)
# ship the API headers (cuda_runtime.h, cuda_runtime_api.h, driver_types.h, cublas_v2.h, ...) but
# no nvcc front end. So the installed nvcc (13.x) compiles each file with those 12.4 headers first
# on the include path: every cudaXxx / cublasXxx call, cudaDeviceProp field and enum the code uses
# is checked against the 12.4 declarations (a call with the 13.0 signature only, or a field or
# function that 12.4 lacks, fails). Two probes first show that this is so. Device code is compiled
# to PTX for one virtual architecture (compute_90a, where every chapter's code paths exist) with
# the installed toolkit's compiler and device headers, and nothing is linked or run: this checks
# the host API use, not a CUDA 12 build.
#
#   tools/check_cuda12_api.sh                 every .cu/.cpp under common/ and the chapter folders
#   tools/check_cuda12_api.sh FILE...         only these files
#   --known PATH (first; repeatable)          files at PATH (a file, or a folder/) need a newer
#                                             CUDA 12 than the headers, as the README says: their
#                                             failure is not counted; should one compile, the check
#                                             fails (the README's exception is stale)
#   CUDA12_WHEELS=folder                      take the two wheels from this folder (offline machines:
#                                             fill it with `python3 -m pip download --no-deps -d folder
#                                             "nvidia-cuda-runtime-cu12==12.4.*" "nvidia-cublas-cu12==12.4.*"`)
#   CUDA12_VERSION=12.4                       the wheels' CUDA version
#
# Files that include CUTLASS headers are left out (they need the CUTLASS tree and are not host API
# code), and so are the test programs when no Catch2 is installed; each is named in the output.
# Exit status: 0 every file compiled; 1 a file failed (its first errors are shown); 2 the headers
# could not be had (no pip, no network and no CUDA12_WHEELS).
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
VERSION=${CUDA12_VERSION:-12.4}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "check_cuda12_api: nvcc not found (put the CUDA toolkit's bin/ on the PATH or set NVCC=)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# ---- the CUDA 12 headers, from the wheels --------------------------------------------------------
wheels=${CUDA12_WHEELS:-$work/wheels}
if [ -z "${CUDA12_WHEELS:-}" ]; then
  echo "check_cuda12_api: downloading nvidia-cuda-runtime-cu12==$VERSION.* and nvidia-cublas-cu12==$VERSION.* (headers only are used)"
  if ! python3 -m pip download -q --no-deps -d "$wheels" \
      "nvidia-cuda-runtime-cu12==$VERSION.*" "nvidia-cublas-cu12==$VERSION.*" >"$work/pip.log" 2>&1; then
    tail -3 "$work/pip.log" >&2
    echo "check_cuda12_api: could not download the CUDA $VERSION wheels (python3 -m pip and network needed, or set CUDA12_WHEELS=folder)" >&2
    exit 2
  fi
fi
# Only the include/ folders of the two wheels are unpacked (a wheel is a zip file).
python3 - "$wheels" "$work/inc" <<'EOF' || exit 2
import glob, os, sys, zipfile
wheels, out = sys.argv[1], sys.argv[2]
found = []
for pattern in ("nvidia_cuda_runtime_cu12-*.whl", "nvidia_cublas_cu12-*.whl"):
    matches = sorted(glob.glob(os.path.join(wheels, pattern)))
    if not matches:
        sys.exit(f"check_cuda12_api: no {pattern} in {wheels}")
    with zipfile.ZipFile(matches[-1]) as z:
        for name in z.namelist():
            if "/include/" in name and name.endswith((".h", ".hpp")):
                z.extract(name, out)
    found.append(os.path.basename(matches[-1]))
print("check_cuda12_api: headers from " + ", ".join(found))
EOF
INC12=("-I$work/inc/nvidia/cuda_runtime/include" "-I$work/inc/nvidia/cublas/include")
# The headers really are 12.x: CUDART_VERSION is what the code would see.
cudart=$(sed -n 's/^#define CUDART_VERSION *\([0-9]*\).*/\1/p' "$work/inc/nvidia/cuda_runtime/include/cuda_runtime_api.h")
runtime_version="$((cudart / 1000)).$((cudart % 1000 / 10))"
echo "check_cuda12_api: headers of CUDA $runtime_version (CUDART_VERSION $cudart); compiler $("$NVCC" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"

# ---- the check checks: two probes -----------------------------------------------------------------
# A file that reads cudaDeviceProp::clockRate (removed in CUDA 13) must compile, and one that calls
# cudaStreamGetDevice (added in 12.8) must not: then the declarations in force are 12.4's, and an
# API the headers lack fails the file, whatever the installed toolkit is.
mkdir -p "$work/probe"
cat >"$work/probe/has_12_fields.cu" <<'EOF_PROBE'
#include <cuda_runtime.h>
int clock_khz(const cudaDeviceProp& prop) { return prop.clockRate + prop.memoryClockRate; }
EOF_PROBE
cat >"$work/probe/uses_12_8_api.cu" <<'EOF_PROBE'
#include <cuda_runtime.h>
int device_of(cudaStream_t stream) { int device = -1; cudaStreamGetDevice(stream, &device); return device; }
EOF_PROBE
probe() { "$NVCC" "${INC12[@]}" -std=c++17 -gencode arch=compute_90a,code=compute_90a -c "$work/probe/$1" -o "$work/probe/$1.o" >"$work/probe/$1.log" 2>&1; }
if ! probe has_12_fields.cu; then
  sed -n 1,5p "$work/probe/has_12_fields.cu.log" >&2
  echo "check_cuda12_api: a probe that reads cudaDeviceProp::clockRate did not compile: the 12.4 headers are not the ones in force" >&2
  exit 2
fi
if probe uses_12_8_api.cu; then
  echo "check_cuda12_api: a probe that calls cudaStreamGetDevice (CUDA 12.8+) compiled: the 12.4 headers are not the ones in force" >&2
  exit 2
fi
echo "check_cuda12_api: probes as expected (12.4's cudaDeviceProp clock fields compile; cudaStreamGetDevice, 12.8+, does not)"

# ---- which files ---------------------------------------------------------------------------------
catch2_flags=()
if [ -e /usr/include/catch2/catch_test_macros.hpp ] || [ -e /usr/local/include/catch2/catch_test_macros.hpp ]; then
  catch2_flags=(-DWB_CATCH2_V3 -I/usr/local/include)
elif [ -e /usr/include/catch2/catch.hpp ] || [ -e /usr/local/include/catch2/catch.hpp ]; then
  catch2_flags=(-DWB_CATCH2_V2 -I/usr/local/include)
fi
known_dirs=()
while [ "${1:-}" = --known ]; do
  [ -n "${2:-}" ] || { echo "check_cuda12_api: --known needs a path" >&2; exit 2; }
  known_dirs+=("$2")
  shift 2
done
if [ $# -gt 0 ]; then
  files=("$@")
else
  # Discovered, not listed: a new chapter (or a new file in one) is checked without editing this.
  mapfile -t files < <(find common [0-9][0-9]_* -path '*/build' -prune -o \( -name '*.cu' -o -name '*.cpp' \) -type f -print | sort)
fi
# A file is CUTLASS's when it, or a header of the workbook it includes (followed through the
# folder of the including file), includes CUTLASS or CuTe, or depends on the CUTLASS switch that
# only chapter 07's Makefile defines.
uses_cutlass() {
  local f=$1 inc
  case " $seen " in *" $f "*) return 1 ;; esac
  seen="$seen $f"
  grep -qE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](cutlass|cute)/|WB_CUTLASS_FOUND' "$f" && return 0
  while read -r inc; do
    [ -f "$(dirname "$f")/$inc" ] && uses_cutlass "$(dirname "$f")/$inc" && return 0
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  return 1
}
checked=()
for f in "${files[@]}"; do
  seen=""
  if uses_cutlass "$f"; then
    echo "check_cuda12_api: left out $f (CUTLASS templates, not the workbook's host API use)"
  elif [ ${#catch2_flags[@]} -eq 0 ] && grep -qE 'catch2/|catch_compat' "$f"; then
    echo "check_cuda12_api: left out $f (a Catch2 test and no Catch2 installed)"
  else
    checked+=("$f")
  fi
done
[ ${#checked[@]} -gt 0 ] || { echo "check_cuda12_api: no files to check" >&2; exit 2; }

# ---- compile each file ---------------------------------------------------------------------------
# The 12.4 folders come first, so they win over the toolkit's own cuda_runtime*.h and cublas*.h.
compile_one() {
  local f=$1 log
  log="$work/log/$(echo "$f" | tr '/' '_').log"
  local dir
  dir=$(dirname "$f")
  local common_flags=("${INC12[@]}" -I"$ROOT/common" -I"$ROOT/$dir" "${catch2_flags[@]}" -std=c++17)
  case "$f" in
    *.cu) "$NVCC" "${common_flags[@]}" -gencode arch=compute_90a,code=compute_90a -c "$f" -o "$work/obj/$$.$RANDOM.o" >"$log" 2>&1 ;;
    # g++ finds the rest of the toolkit (crt/, which the wheels do not ship) after the 12.4 folders.
    *.cpp) "${CXX:-g++}" "${common_flags[@]}" -I"$(dirname "$(dirname "$NVCC")")/include" -fsyntax-only "$f" >"$log" 2>&1 ;;
  esac
  local rc=$?
  if [ $rc -eq 0 ]; then echo "ok      $f"; else echo "FAILED  $f"; grep -m5 -E 'error' "$log" | sed 's/^/          /'; fi
  return $rc
}
export -f compile_one
export work ROOT NVCC
export INC12_0=${INC12[0]} INC12_1=${INC12[1]}
mkdir -p "$work/log" "$work/obj"
jobs=$(nproc 2>/dev/null || echo 2)
failed=0
# One file per job, side by side; the output of each file is printed as one block when it ends.
results=$(printf '%s\n' "${checked[@]}" | CATCH2_FLAGS="${catch2_flags[*]}" xargs -P "$jobs" -I{} bash -c '
  INC12=("$INC12_0" "$INC12_1"); read -r -a catch2_flags <<<"$CATCH2_FLAGS"; compile_one "$1"' _ {})
echo "$results"
# A file given with --known (or under a folder given so) needs a newer CUDA 12 than these headers,
# as the README says: its failure is shown and not counted. Should it compile, the README is stale.
failed=0 stale=0
while read -r status f; do
  known=0
  for k in "${known_dirs[@]}"; do case "$f" in "$k"*) known=1 ;; esac; done
  if [ "$status" = FAILED ] && [ "$known" -eq 1 ]; then
    echo "check_cuda12_api: $f needs a newer CUDA than $runtime_version (known, named in the README)"
  elif [ "$status" = FAILED ]; then
    failed=$((failed + 1))
  elif [ "$status" = ok ] && [ "$known" -eq 1 ]; then
    echo "check_cuda12_api: $f now compiles against $runtime_version: drop --known for it, and its exception from the README" >&2
    stale=$((stale + 1))
  fi
done < <(grep -E '^(ok|FAILED) ' <<<"$results")
echo "check_cuda12_api: ${#checked[@]} file(s) compiled against the CUDA $runtime_version headers, $failed failed${known_dirs[*]:+ (besides the known: ${known_dirs[*]})}"
[ "$failed" -eq 0 ] && [ "$stale" -eq 0 ]
