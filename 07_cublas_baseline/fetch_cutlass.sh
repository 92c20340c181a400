#!/usr/bin/env bash
# fetch_cutlass.sh - puts CUTLASS's C++ headers (cutlass/ and cute/) in one folder, to build chapter
# 07's CUTLASS rows on a machine that cannot reach PyPI: run it where the network is, carry the
# folder over, and build with CUTLASS_INC pointing at it.
#
#   bash 07_cublas_baseline/fetch_cutlass.sh [DEST]
#   make 07 CUTLASS_INC=$PWD/DEST          (the default DEST is printed at the end)
#
# The headers come from this python3's nvidia-cutlass package when it is installed, else from the
# package's wheel, downloaded (not installed) with pip. Only the include tree is copied (about
# 27 MB); nothing is installed. The default DEST is 07_cublas_baseline/build/cutlass/include, which
# git ignores (make clean in the chapter leaves it alone).
set -euo pipefail

version=${CUTLASS_PIP_VERSION:-4.2.0.0}   # the release the chapter was built and measured with
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$here/build/cutlass/include}

installed=$(python3 -c 'import importlib.util as u, os
s = u.find_spec("cutlass_library")
print(os.path.join(s.submodule_search_locations[0], "source", "include") if s else "")' 2>/dev/null || true)

mkdir -p "$dest"
if [ -n "$installed" ] && [ -e "$installed/cutlass/cutlass.h" ]; then
  echo "fetch_cutlass: copying the installed headers from $installed"
  cp -R "$installed/cutlass" "$installed/cute" "$dest/"
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch_cutlass: downloading nvidia-cutlass==$version (the wheel only, no install)"
  python3 -m pip download --no-deps --only-binary=:all: -d "$tmp" "nvidia-cutlass==$version" >/dev/null
  # The wheel is a zip; its headers sit under cutlass_library/source/include/.
  python3 - "$tmp" "$dest" <<'PY'
import glob, os, sys, zipfile
tmp, dest = sys.argv[1], sys.argv[2]
prefix = "cutlass_library/source/include/"
wheel = glob.glob(os.path.join(tmp, "*.whl"))[0]
count = 0
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            target = os.path.join(dest, name[len(prefix):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as out:
                out.write(src.read())
            count += 1
print(f"fetch_cutlass: {count} header files from {os.path.basename(wheel)}")
PY
fi
[ -e "$dest/cutlass/cutlass.h" ] && [ -e "$dest/cute/tensor.hpp" ] ||
  { echo "fetch_cutlass: $dest holds no cutlass/cutlass.h and cute/tensor.hpp" >&2; exit 1; }
echo "fetch_cutlass: headers in $dest; build with: make 07 CUTLASS_INC=$dest"
