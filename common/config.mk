# common/config.mk - toolchain, GPU architecture and Catch2, shared by every Makefile.
#
# Variables you may set on the command line (make VAR=value):
#   ARCH        GPU architectures to build for, e.g. ARCH=sm_86 or ARCH="sm_80 sm_90".
#               Default: the compute capability of the installed GPU(s), read with nvidia-smi;
#               with no GPU: $(DEFAULT_ARCHS) plus PTX of the last one, so newer GPUs still run.
#   CUDA_PATH   the CUDA toolkit (default /usr/local/cuda, else where nvcc is found)
#   NVCC, CXX   compilers (default $(CUDA_PATH)/bin/nvcc and g++)
#   CATCH2_INC  folder holding catch2/ headers (default: searched in /usr/include, /usr/local/include;
#               when set, only there)
#   CATCH2_LIB  folder holding libCatch2.a for Catch2 v3 (default: the linker's search path)
#   NCU         Nsight Compute for make profile (default: ncu, on the PATH or in the toolkit)
#   SANITIZER   compute-sanitizer for make sanitize (default: the same search)
#   NSYS        Nsight Systems for make timeline-08 (default: the same search)

WB_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
WB_COMMON := $(WB_ROOT)/common
WB_BUILD := $(WB_COMMON)/build

# ---- toolchain -------------------------------------------------------------------------------
CUDA_PATH ?= $(firstword $(wildcard /usr/local/cuda) $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)))
NVCC ?= $(CUDA_PATH)/bin/nvcc
CXX ?= g++
ifeq ($(CXX),c++)
  CXX := g++
endif

# ---- GPU architecture ------------------------------------------------------------------------
# sm_75 (Turing) is the oldest architecture CUDA 13 still builds for.
DEFAULT_ARCHS := sm_75 sm_80 sm_86 sm_89 sm_90
ifeq ($(origin ARCH),undefined)
  DETECTED_CC := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | grep -E '^[0-9]+\.[0-9]+$$' | tr -d '.' | sort -u)
  ifneq ($(strip $(DETECTED_CC)),)
    ARCH := $(addprefix sm_,$(DETECTED_CC))
    ARCH_SOURCE := detected with nvidia-smi
  else
    ARCH := $(DEFAULT_ARCHS)
    ARCH_SOURCE := default list (no GPU detected)
  endif
else
  ARCH_SOURCE := set by ARCH
endif
# Accept "86" as well as "sm_86"; machine code for each, PTX for the last (forward compatible).
ARCH_LIST := $(foreach a,$(ARCH),$(if $(findstring sm_,$(a)),$(a),sm_$(a)))
GENCODE := $(foreach a,$(ARCH_LIST),-gencode arch=$(subst sm_,compute_,$(a)),code=$(a)) \
           -gencode arch=$(subst sm_,compute_,$(lastword $(ARCH_LIST))),code=$(subst sm_,compute_,$(lastword $(ARCH_LIST)))

# ---- flags -----------------------------------------------------------------------------------
# OPT sets the optimisation level; CXXFLAGS / NVCCFLAGS / LDFLAGS add to the workbook's own flags.
GIT_COMMIT ?= $(shell git -C $(WB_ROOT) rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git -C $(WB_ROOT) diff --quiet HEAD -- 2>/dev/null || echo -dirty)
OPT ?= -O3
WB_CXXFLAGS = -std=c++17 $(OPT) -Wall -Wextra -I$(WB_COMMON) -I$(CUDA_PATH)/include $(CXXFLAGS)
WB_NVCCFLAGS = -std=c++17 $(OPT) -lineinfo $(GENCODE) -Xcompiler -Wall,-Wextra -I$(WB_COMMON) $(NVCCFLAGS)
WB_LDLIBS = $(LDFLAGS) -lcublas -lpthread -ldl

# ---- Catch2 v2 or v3 -------------------------------------------------------------------------
# CATCH2_INC, when given, is the only place looked in: a wrong one is reported, not passed over.
CATCH2_DIRS := $(or $(CATCH2_INC),/usr/include /usr/local/include)
CATCH2_V3_HEADER := $(firstword $(wildcard $(addsuffix /catch2/catch_test_macros.hpp,$(CATCH2_DIRS))))
CATCH2_V2_HEADER := $(firstword $(wildcard $(addsuffix /catch2/catch.hpp,$(CATCH2_DIRS))))
ifneq ($(CATCH2_V3_HEADER),)
  CATCH2_VERSION := 3
  CATCH2_DIR := $(patsubst %/catch2/catch_test_macros.hpp,%,$(CATCH2_V3_HEADER))
  CATCH2_CFLAGS := -DWB_CATCH2_V3 $(if $(filter /usr/include,$(CATCH2_DIR)),,-I$(CATCH2_DIR))
  CATCH2_LIBS := $(if $(CATCH2_LIB),-L$(CATCH2_LIB)) -lCatch2
else ifneq ($(CATCH2_V2_HEADER),)
  CATCH2_VERSION := 2
  CATCH2_DIR := $(patsubst %/catch2/catch.hpp,%,$(CATCH2_V2_HEADER))
  CATCH2_CFLAGS := -DWB_CATCH2_V2 $(if $(filter /usr/include,$(CATCH2_DIR)),,-I$(CATCH2_DIR))
  CATCH2_LIBS :=
else
  CATCH2_VERSION :=
endif
# One line, the same as tools/check_deps.sh prints; the install command has `sudo ` only for a
# user who is not root and has sudo.
WB_SUDO = $(if $(filter 0,$(shell id -u)),,$(if $(shell command -v sudo 2>/dev/null),sudo ))
CATCH2_MISSING = missing: Catch2 (make test; the programs build without it): $(WB_SUDO)apt-get install -y \
  catch2, or set CATCH2_INC=/path/to/include$(if $(CATCH2_INC), (CATCH2_INC=$(CATCH2_INC) holds no catch2/))

# ---- CUTLASS (chapter 07's CUTLASS rows; optional) -------------------------------------------
#   CUTLASS_INC  folder holding CUTLASS's cutlass/ and cute/ headers. Default: the headers that
#                `python3 -m pip install nvidia-cutlass` installs (cutlass_library/source/include),
#                found through python3 without importing the package; empty when there are none.
#   CUTLASS=0    builds chapter 07 without its CUTLASS rows even when the headers are there.
# CUTLASS_FOUND is 1 or 0; CUTLASS_STATUS is one line for make help / check-env. The python3
# lookup runs once, and only in a make that asks for one of these variables.
CUTLASS ?= 1
ifeq ($(CUTLASS),0)
  CUTLASS_INC :=
else ifeq ($(origin CUTLASS_INC),undefined)
  CUTLASS_INC = $(eval CUTLASS_INC := $(shell python3 -c 'import importlib.util as u, os; \
    s = u.find_spec("cutlass_library"); \
    print(os.path.join(s.submodule_search_locations[0], "source", "include") if s else "")' 2>/dev/null))$(CUTLASS_INC)
endif
CUTLASS_FOUND = $(if $(filter 0,$(CUTLASS)),0,$(if $(and $(strip $(CUTLASS_INC)),$(wildcard $(CUTLASS_INC)/cutlass/cutlass.h)),1,0))
CUTLASS_STATUS = $(if $(filter 0,$(CUTLASS)),CUTLASS: off (CUTLASS=0): chapter 07 builds without its CUTLASS rows,$\
  $(if $(filter 1,$(CUTLASS_FOUND)),CUTLASS: found at $(CUTLASS_INC),$\
  CUTLASS: not found$(if $(strip $(CUTLASS_INC)), at CUTLASS_INC=$(CUTLASS_INC)) (chapter 07 builds without its CUTLASS rows): $\
  python3 -m pip install nvidia-cutlass or set CUTLASS_INC=/path/to/cutlass/include))
# ---- end of CUTLASS ---------------------------------------------------------------------------

# ---- the tools: the one place that looks for them -------------------------------------------
# A name (the default) is looked up on the PATH, then where a CUDA toolkit installs it, so
# `sudo make profile-NN` (whose PATH rarely holds the toolkit) still finds it; a path is taken as
# given. The *_PATH variables are expanded only where a tool is used (profile, sanitize,
# timeline-08) or reported (chapter 00's program is built with them), so no other build pays for
# the lookup.
NCU ?= ncu
SANITIZER ?= compute-sanitizer
NSYS ?= nsys
# $(call wb_find_tool,NAME-OR-PATH,FOLDER-PATTERNS): the program to run, or nothing. Versioned
# folders (nsight-compute-2025.3.1) sort by name: the last is the newest.
wb_find_tool = $(firstword $(shell command -v '$(1)' 2>/dev/null) $(if $(findstring /,$(1)),,\
               $(wildcard $(CUDA_PATH)/bin/$(1)) $(lastword $(wildcard $(addsuffix /$(1),$(2))))))
NVCC_PATH = $(call wb_find_tool,$(NVCC))
NCU_PATH = $(call wb_find_tool,$(NCU),$(CUDA_PATH)/nsight-compute* /opt/nvidia/nsight-compute/*)
SANITIZER_PATH = $(call wb_find_tool,$(SANITIZER),$(CUDA_PATH)/compute-sanitizer)
NSYS_PATH = $(call wb_find_tool,$(NSYS),$(CUDA_PATH)/nsight-systems* /opt/nvidia/nsight-systems/*/bin)
# "13-0" for CUDA 13.0: the suffix of the toolkit's apt packages.
CUDA_PKG_VERSION = $(or $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1-\2/p'),X-Y)
NCU_MISSING = ncu (Nsight Compute) not found$(if $(findstring /,$(NCU)), at $(NCU)): install it with \
  the CUDA toolkit (package cuda-nsight-compute-$(CUDA_PKG_VERSION)) or set NCU=/path/to/ncu
SANITIZER_MISSING = compute-sanitizer not found$(if $(findstring /,$(SANITIZER)), at $(SANITIZER)): \
  install it with the CUDA toolkit (package cuda-sanitizer-$(CUDA_PKG_VERSION)) or set \
  SANITIZER=/path/to/compute-sanitizer
# A recipe line: `@$(call wb_require,$(NCU_PATH),$(NCU_MISSING))` stops with that one line on
# stderr and exit status 2 when the tool was not found (instead of the shell's status 127).
wb_require = $(if $(strip $(1)),:,echo "$(strip $(2))" >&2; exit 2)

# ---- the common library ----------------------------------------------------------------------
WB_LIB := $(WB_BUILD)/libwb.a
WB_TEST_MAIN := $(WB_BUILD)/test_main.o
WB_HEADERS := $(wildcard $(WB_COMMON)/*.h $(WB_COMMON)/*.cuh $(WB_COMMON)/*.hpp)
# Rebuilds everything when the architecture or the compilers change.
# The flags without the tree's own path, so a copy of a build elsewhere (the grader's) still matches.
WB_STAMP := $(WB_BUILD)/flags.$(shell echo '$(subst $(WB_ROOT),.,$(NVCC) $(WB_NVCCFLAGS) $(CXX) $(WB_CXXFLAGS) $(CATCH2_CFLAGS))' | cksum | cut -d' ' -f1)

# The test runner: counts go to a summary file that `make test` adds up.
WB_TEST_SUMMARY ?= $(WB_BUILD)/test-summary.txt
