# common/config.mk - toolchain, GPU architecture, Catch2, CUTLASS, tools and flag stamps, for every
# Makefile. The settings (make VAR=value; `make help` prints these lines):
#   ARCH=sm_86, ARCH=86, ARCH="sm_80 sm_90"  GPU architecture(s): machine code for each, PTX of the last
#                        so newer GPUs still run. Default: this machine's GPU (nvcc -arch=native), else a list (below)
#   CUDA_PATH            the toolkit (default /usr/local/cuda, else where nvcc is); NVCC, CXX the compilers
#   OPT=-O3              optimisation; CXXFLAGS, NVCCFLAGS, LDFLAGS add flags
#   CATCH2_INC           the folder holding catch2/ (default /usr/include, /usr/local/include; when set,
#                        only there); CATCH2_LIB the folder of libCatch2.a (v3)
#   CUTLASS_INC          CUTLASS's headers for 07 (default: pip's nvidia-cutlass); CUTLASS=0 leaves it out
#   NCU, SANITIZER, NSYS Nsight Compute, compute-sanitizer, Nsight Systems (default: the PATH, then
#                        the toolkit's folders, so `sudo make profile-NN` finds them)
#   STUDENT_ID           (environment) goes into every CSV row
WB_ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
WB_COMMON := $(WB_ROOT)/common
WB_BUILD := $(WB_COMMON)/build
CHAPTERS := $(sort $(patsubst $(WB_ROOT)/%/,%,$(wildcard $(WB_ROOT)/[0-9][0-9]_*/)))
NUMBERS := $(foreach c,$(CHAPTERS),$(firstword $(subst _, ,$(c))))
SUB := $(MAKE) --no-print-directory
# Two-digit numbers that name no chapter (make 10): answered with the list of chapters.
NOT_CHAPTERS := $(filter-out $(NUMBERS),$(foreach t,0 1 2 3 4 5 6 7 8 9,$(addprefix $(t),0 1 2 3 4 5 6 7 8 9)))

CUDA_PATH ?= $(firstword $(wildcard /usr/local/cuda) $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null)))
NVCC ?= $(CUDA_PATH)/bin/nvcc

# sm_75 (Turing) is the oldest architecture CUDA 13 builds for.
DEFAULT_ARCHS := sm_75 sm_80 sm_86 sm_89 sm_90
ifeq ($(origin ARCH),undefined)
  # nvcc's dry run names what -arch=native would build (ptxas -arch=sm_XX), compiling nothing. With
  # no GPU nvcc warns about native: the list above is built. Asked once; sub-makes inherit it.
  ifeq ($(origin WB_NATIVE),undefined)
    export WB_NATIVE := $(shell $(NVCC) -arch=native --dryrun -x cu -c /dev/null -o /dev/null 2>&1 | awk \
      '/^nvcc (fatal|error)|^nvcc warning.*native/ { bad = 1 } /ptxas/ { for (i = 1; i <= NF; i++) if ($$i ~ /^-arch=sm_/) a[substr($$i, 7)] } \
       END { if (!bad) for (s in a) print s }' | sort)
  endif
  ARCH := $(or $(WB_NATIVE),$(DEFAULT_ARCHS))
  ARCH_SOURCE := $(if $(WB_NATIVE),this machine's GPU: nvcc -arch=native,default list: no GPU found)
else
  ARCH_SOURCE := set by ARCH
endif
ARCH_LIST := $(patsubst sm_sm_%,sm_%,$(addprefix sm_,$(ARCH)))
PTX_ARCH = $(subst sm_,compute_,$(lastword $(ARCH_LIST)))
GENCODE = $(foreach a,$(ARCH_LIST),-gencode arch=$(subst sm_,compute_,$(a)),code=$(a)) -gencode arch=$(PTX_ARCH),code=$(PTX_ARCH)

GIT_COMMIT ?= $(shell git -C $(WB_ROOT) rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git -C $(WB_ROOT) diff --quiet HEAD -- 2>/dev/null || echo -dirty)
OPT ?= -O3
WB_CXXFLAGS = -std=c++17 $(OPT) -Wall -Wextra -I$(WB_COMMON) -I$(CUDA_PATH)/include $(CXXFLAGS)
WB_NVCCFLAGS = -std=c++17 $(OPT) -lineinfo $(GENCODE) -Xcompiler -Wall,-Wextra -I$(WB_COMMON) $(NVCCFLAGS)
WB_LDLIBS = $(LDFLAGS) -lcublas -lcublasLt -lpthread -ldl

# Catch2 v3 where both are, else v2. A CATCH2_INC that holds neither is reported, not passed over.
CATCH2_HEADER := $(firstword $(foreach h,catch_test_macros.hpp catch.hpp,\
                   $(wildcard $(addsuffix /catch2/$(h),$(or $(CATCH2_INC),/usr/include /usr/local/include)))))
CATCH2_DIR := $(patsubst %/catch2/,%,$(dir $(CATCH2_HEADER)))
CATCH2_VERSION := $(if $(CATCH2_HEADER),$(if $(findstring catch_test_macros,$(CATCH2_HEADER)),3,2))
CATCH2_CFLAGS := $(if $(CATCH2_VERSION),-DWB_CATCH2_V$(CATCH2_VERSION) $(addprefix -I,$(filter-out /usr/include,$(CATCH2_DIR))))
CATCH2_LIBS := $(if $(filter 3,$(CATCH2_VERSION)),$(addprefix -L,$(CATCH2_LIB)) -lCatch2)
# The line tools/check_deps.sh prints; `sudo ` only for a user who is not root and has sudo.
WB_SUDO = $(if $(filter 0,$(shell id -u)),,$(if $(shell command -v sudo 2>/dev/null),sudo ))
CATCH2_MISSING = missing: Catch2 (make test; the programs build without it): $(WB_SUDO)apt-get install -y \
  catch2, or set CATCH2_INC=/path/to/include$(if $(CATCH2_INC), (CATCH2_INC=$(CATCH2_INC) holds no catch2/))

# CUTLASS (07's CUTLASS rows): python3 is asked once, and only by a make that reads CUTLASS_INC.
CUTLASS ?= 1
ifeq ($(CUTLASS),0)
  CUTLASS_INC :=
else ifeq ($(origin CUTLASS_INC),undefined)
  CUTLASS_INC = $(eval CUTLASS_INC := $(shell python3 -c 'import importlib.util as u, os; s = u.find_spec("cutlass_library"); \
    print(os.path.join(s.submodule_search_locations[0], "source", "include") if s else "")' 2>/dev/null))$(CUTLASS_INC)
endif
CUTLASS_FOUND = $(if $(and $(filter-out 0,$(CUTLASS)),$(strip $(CUTLASS_INC)),$(wildcard $(CUTLASS_INC)/cutlass/cutlass.h)),1,0)

# The tools, looked for here only and only where used (profile, sanitize, timeline-08) or reported
# (chapter 00 is built with them). Versioned folders sort by name: the last is the newest.
NCU ?= ncu
SANITIZER ?= compute-sanitizer
NSYS ?= nsys
wb_find_tool = $(firstword $(shell command -v '$(1)' 2>/dev/null) $(if $(findstring /,$(1)),,\
               $(wildcard $(CUDA_PATH)/bin/$(1)) $(lastword $(wildcard $(addsuffix /$(1),$(2))))))
NVCC_PATH = $(call wb_find_tool,$(NVCC))
NCU_PATH = $(call wb_find_tool,$(NCU),$(CUDA_PATH)/nsight-compute* /opt/nvidia/nsight-compute/*)
SANITIZER_PATH = $(call wb_find_tool,$(SANITIZER),$(CUDA_PATH)/compute-sanitizer)
NSYS_PATH = $(call wb_find_tool,$(NSYS),$(CUDA_PATH)/nsight-systems* /opt/nvidia/nsight-systems/*/bin)
# $(call wb_missing,NAME,VARIABLE,PACKAGE,DEFAULT): a missing tool's line; its apt package for CUDA 13.0: cuda-PACKAGE-13-0.
CUDA_PKG_VERSION = $(or $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\.\([0-9]*\).*/\1-\2/p'),X-Y)
wb_missing = $(1) not found$(if $(findstring /,$($(2))), at $($(2))): install it with the CUDA toolkit \
  (package cuda-$(3)-$(CUDA_PKG_VERSION)) or set $(2)=/path/to/$(4)
NCU_MISSING = $(call wb_missing,ncu (Nsight Compute),NCU,nsight-compute,ncu)
SANITIZER_MISSING = $(call wb_missing,compute-sanitizer,SANITIZER,sanitizer,compute-sanitizer)
# A recipe line `@$(call wb_require,$(NCU_PATH),$(NCU_MISSING))` stops with that line and status 2.
wb_require = $(if $(strip $(1)),:,echo "$(strip $(2))" >&2; exit 2)

# $(call wb_stamp,DIR/NAME,KEY) is the file DIR/NAME.KEY, made (DIR/NAME's older ones removed) when
# missing: what depends on it is rebuilt when KEY changes. wb_sum is a KEY for flags, without the
# tree's own path, so a copy of a build elsewhere (the grader's) still matches. The stamps' rules are
# the first rules of every Makefile, so the default goal is named here.
wb_stamp = $(eval $(1).$(2): ; @mkdir -p $$(@D) && rm -f $(1).* && touch $$@)$(1).$(2)
wb_sum = $(firstword $(shell echo '$(subst ',,$(subst $(WB_ROOT),.,$(1)))' | cksum))
WB_STAMP := $(call wb_stamp,$(WB_BUILD)/flags,$(call wb_sum,$(NVCC) $(WB_NVCCFLAGS) $(CXX) $(WB_CXXFLAGS) $(CATCH2_CFLAGS)))
.DEFAULT_GOAL := all

WB_LIB := $(WB_BUILD)/libwb.a
WB_TEST_MAIN := $(WB_BUILD)/test_main.o
WB_HEADERS := $(wildcard $(WB_COMMON)/*.h $(WB_COMMON)/*.cuh $(WB_COMMON)/*.hpp)
