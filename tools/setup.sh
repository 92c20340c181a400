#!/usr/bin/env bash
# setup.sh - installs what the workbook needs besides the NVIDIA driver and the CUDA toolkit, on
# Debian 12, Ubuntu 22.04 or 24.04 (and their relatives), as root or as a user with sudo.
#
#   bash tools/setup.sh               g++, make, Catch2, OpenBLAS, python3, pytest and matplotlib (apt-get)
#   bash tools/setup.sh --cutlass     and CUTLASS's C++ headers for chapter 07 (optional; pip)
#   bash tools/setup.sh --dry-run     print the commands, run none
#
# What it does, in order, printing each command before it runs it:
#  1. apt-get update, then apt-get install -y of the packages that are not installed yet (nothing
#     at all when every one is there, so a machine without network that has them passes);
#     `sudo` in front only when you are not root.
#  2. pytest (make test runs the Python tests with it) and matplotlib for the python3 that `make
#     test` and `make report` run (the first on the PATH): apt's packages serve /usr/bin/python3
#     only, so another python3 (pyenv, conda, a venv) gets `python3 -m pip install pytest` and
#     `... matplotlib`. matplotlib is optional; pytest is not: a python3 left without it is
#     reported, and make test then fails with a line that says so.
#  3. with --cutlass: `python3 -m pip install --user --no-deps nvidia-cutlass==...` (in a venv:
#     without --user). Only the C++ headers inside that package are used, hence --no-deps. On a
#     python3 that apt manages (PEP 668: Debian 12, Ubuntu 24.04) pip refuses to install at all
#     unless told --break-system-packages; with --user it writes to ~/.local only and, with
#     --no-deps, installs nothing that apt's packages provide, so no system package changes.
#  4. tools/check_deps.sh --all: what was found, and one line for anything still missing.
# Exit status: 0 done (optional parts may have been skipped, with a line that says so); 1 apt-get
# failed; 2 not Debian/Ubuntu, or not root and no sudo.
set -u
cd "$(dirname "$0")/.."
dry_run=0 cutlass=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=1 ;;
    --cutlass) cutlass=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown option '$arg' (options: --cutlass, --dry-run, --help)" >&2; exit 2 ;;
  esac
done
# The CUTLASS release chapter 07 was built and measured with.
CUTLASS_PIP=${CUTLASS_PIP:-nvidia-cutlass==4.2.0.0}
# For the tests: another os-release file, and "root" or "user" instead of asking id -u.
os_release=${WB_SETUP_OS_RELEASE:-/etc/os-release}
as=${WB_SETUP_AS:-$([ "$(id -u)" -eq 0 ] && echo root || echo user)}

say() { echo "setup: $*"; }
run() {
  say "running: $*"
  [ "$dry_run" -eq 1 ] && return 0
  "$@"
}

# ---- which system ---------------------------------------------------------------------------------
# shellcheck disable=SC1090
os_id=$( . "$os_release" 2>/dev/null; echo "${ID:-} ${ID_LIKE:-}")
os_name=$( . "$os_release" 2>/dev/null; echo "${PRETTY_NAME:-unknown}")
case " $os_id " in
  *" debian "*|*" ubuntu "*) ;;
  *) say "this script knows Debian and Ubuntu only (this is $os_name). Install by hand: g++, make," \
         "Catch2 (v2 or v3), OpenBLAS (optional), python3 with matplotlib (optional)" >&2
     exit 2 ;;
esac
if [ "$as" = root ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  say "not root and no sudo: run this as root (or install sudo), it calls apt-get" >&2
  exit 2
fi
say "$os_name, as $as${sudo[*]:+ (with sudo)}"

# ---- 1. apt packages ------------------------------------------------------------------------------
# pip comes along only when CUTLASS is asked for and this python3 has none. python3-matplotlib
# (plots) and python3-clang (the grader's C++ lexer) are optional: when apt cannot install them (an
# offline machine), the rest still counts as done, and step 2 says whether the python3 on the PATH
# has them anyway.
packages=(g++ make catch2 libopenblas-dev python3 python3-pytest python3-matplotlib python3-clang)
optional=(python3-matplotlib python3-clang)
if [ "$cutlass" -eq 1 ] && ! python3 -m pip --version >/dev/null 2>&1; then packages+=(python3-pip); fi
needed=() needed_required=() needed_optional=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' && continue
  needed+=("$p")
  if [[ " ${optional[*]} " == *" $p "* ]]; then needed_optional+=("$p"); else needed_required+=("$p"); fi
done
if [ ${#needed[@]} -eq 0 ]; then
  say "already installed: ${packages[*]}"
else
  if ! run "${sudo[@]}" apt-get update; then
    say "apt-get update failed (no network?): installing from the package lists already here"
  fi
  if ! run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${needed[@]}"; then
    if [ ${#needed_required[@]} -gt 0 ] && [ ${#needed_required[@]} -lt ${#needed[@]} ]; then
      run "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "${needed_required[@]}" ||
        { say "apt-get install failed: see its message above" >&2; exit 1; }
    elif [ ${#needed_required[@]} -gt 0 ]; then
      say "apt-get install failed: see its message above" >&2
      exit 1
    fi
    say "apt-get could not install ${needed_optional[*]} (optional: make report's plots, the grader's C++ lexer); everything else is installed"
  fi
fi

# ---- 2. pytest, matplotlib and libclang for make test's, make report's and the grader's python3 -----
python=$(command -v python3 || echo python3)
# python_module IMPORT APT PIP WITHOUT: IMPORT importable by $python, from apt's APT for the system
# python3 (step 1), else from pip's PIP; WITHOUT says what is missing when it is not.
python_module() {
  if "$python" -c "import $1" >/dev/null 2>&1; then
    say "$3: $python has it"
  elif [ "$(readlink -f "$python")" = "$(readlink -f /usr/bin/python3 2>/dev/null)" ]; then
    # The system python3: apt's package (step 1) is the one to use, never pip.
    if [ "$dry_run" -eq 1 ]; then say "$3: for $python from apt's $2"
    else say "$3: still not importable by $python: $4"; fi
  else
    run "$python" -m pip install "$3" || say "$3: pip failed for $python: $4"
  fi
}
python_module pytest python3-pytest pytest "make test cannot run the Python tests (it says so and fails)"
python_module matplotlib python3-matplotlib matplotlib "make report will write the tables without plots"
python_module clang.cindex python3-clang libclang "the grader cannot read a student's regions as C++ (it says so, exit 4)"

# ---- 3. CUTLASS (optional) -------------------------------------------------------------------------
if [ "$cutlass" -eq 1 ]; then
  where=$("$python" -c 'import os, sys, sysconfig
venv = sys.prefix != sys.base_prefix
managed = os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED"))
print("venv" if venv else "managed" if managed else "user")' 2>/dev/null || echo user)
  case "$where" in
    venv) flags=() ;;
    managed) flags=(--user --break-system-packages)
             say "CUTLASS: $python is managed by apt (PEP 668). pip installs into ~/.local (--user)," \
                 "with no dependencies (--no-deps): no system package changes; --break-system-packages" \
                 "only lifts pip's refusal to install beside apt. (pip uninstall nvidia-cutlass removes it.)" ;;
    *) flags=(--user) ;;
  esac
  run "$python" -m pip install "${flags[@]}" --no-deps "$CUTLASS_PIP" ||
    say "CUTLASS: pip failed: chapter 07 builds without its CUTLASS rows (or set CUTLASS_INC=/path/to/cutlass/include)"
fi

# ---- 4. what is there now --------------------------------------------------------------------------
if [ "$dry_run" -eq 0 ]; then
  bash tools/check_deps.sh --all
  say "done. Next: make -j4 && make test"
fi
exit 0
