# cpu_code.mk - included (after chapter.mk) by the chapters whose program runs chapter 01's CPU
# code: 01 itself and 08 (its crossover). It adds 01's host flags and OpenBLAS to CHAPTER_NVCCFLAGS
# and CHAPTER_LDLIBS; 01's Makefile says what each flag is for.
#   -Xcompiler -march=native,-ffp-contract=fast,-fopenmp and -lgomp
#   OpenBLAS, found with a tiny compile-and-link test: when present, -DWB_HAVE_OPENBLAS and
#   -lopenblas. OPENBLAS=0 builds without it, OPENBLAS=1 insists on it.
# The programs are rebuilt when these flags change (OPENBLAS=0 after a build with it): the flags
# stamp's name is a checksum of them, and build/ is ignored by git. Set OPENBLAS_USE (what the
# chapter does with OpenBLAS) and OPENBLAS_NONE (what it does without) for the line printed then.
OPENBLAS ?= auto
OPENBLAS_PROBE := \#include <cblas.h>\nint main(void) { openblas_set_num_threads(1); return 0; }\n
ifeq ($(OPENBLAS),0)
  HAVE_OPENBLAS :=
else
  HAVE_OPENBLAS := $(shell f=$$(mktemp) && printf '$(OPENBLAS_PROBE)' | $(CXX) -x c++ - -o $$f -lopenblas >/dev/null 2>&1 && echo 1; rm -f $$f)
  ifeq ($(OPENBLAS)$(HAVE_OPENBLAS),1)
    $(error OPENBLAS=1 but cblas.h or -lopenblas is missing: sudo apt-get install libopenblas-dev)
  endif
endif

CHAPTER_NVCCFLAGS += -Xcompiler -march=native,-ffp-contract=fast,-fopenmp
CHAPTER_LDLIBS += -lgomp
ifeq ($(HAVE_OPENBLAS),1)
  CHAPTER_NVCCFLAGS += -DWB_HAVE_OPENBLAS
  CHAPTER_LDLIBS += -lopenblas
endif

FLAGS_STAMP := build/flags.$(shell echo '$(CHAPTER_NVCCFLAGS) $(CHAPTER_LDLIBS) $(OPT)' | cksum | cut -d' ' -f1)
$(PROGRAM) $(TEST_PROGRAM): $(FLAGS_STAMP)
$(FLAGS_STAMP):
	@mkdir -p build
	@rm -f build/flags.*
	@touch $@
	@echo "$(notdir $(CURDIR)): OpenBLAS $(if $(HAVE_OPENBLAS),found: $(OPENBLAS_USE),not used: $(OPENBLAS_NONE))"
