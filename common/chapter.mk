# common/chapter.mk - the rules of every chapter folder. A chapter's Makefile is:
#
#   PROFILE_METRICS := <ncu metrics the notes discuss, comma-separated>   (GPU chapters)
#   include ../common/chapter.mk
#
# and then, inside the folder: make, make NN, make run, make test, make profile, make sanitize.
# Optional per chapter: CHAPTER_NVCCFLAGS, CHAPTER_LDLIBS, RUN_ARGS, PROFILE_ARGS, SANITIZE_ARGS,
# CPU_ONLY := 1 (no profile/sanitize targets).
include $(dir $(lastword $(MAKEFILE_LIST)))config.mk

CHAPTER := $(notdir $(CURDIR))
NN := $(firstword $(subst _, ,$(CHAPTER)))
PROGRAM := $(CHAPTER)
TEST_PROGRAM := test_$(CHAPTER)
LOCAL_HEADERS := $(wildcard *.cuh *.h)

# Small odd shapes: every edge path runs, and racecheck stays fast.
SANITIZE_ARGS ?= --sizes 67x45x33,130x97x75 --warmup 1 --reps 1
PROFILE_ARGS ?= --size 4096 --warmup 1 --reps 1 --no-check
NCU ?= ncu
SANITIZER ?= compute-sanitizer

.DEFAULT_GOAL := all
.PHONY: all $(NN) run test profile sanitize clean common-lib help

all: $(PROGRAM) $(TEST_PROGRAM)
$(NN): $(PROGRAM)

common-lib:
	@$(MAKE) --no-print-directory -C $(WB_COMMON) lib

$(WB_LIB) $(WB_TEST_MAIN): common-lib
	@:

$(PROGRAM): $(CHAPTER).cu $(LOCAL_HEADERS) $(WB_HEADERS) $(WB_LIB) | common-lib
	$(NVCC) $(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) -o $@ $< $(WB_LIB) $(WB_LDLIBS) $(CHAPTER_LDLIBS)

# The tests also run the program itself (exit statuses), so it is built first.
$(TEST_PROGRAM): $(TEST_PROGRAM).cu $(LOCAL_HEADERS) $(WB_HEADERS) $(WB_LIB) | common-lib $(PROGRAM)
ifeq ($(CATCH2_VERSION),)
	$(error $(CATCH2_MISSING))
endif
	@$(MAKE) --no-print-directory -C $(WB_COMMON) $(WB_TEST_MAIN)
	$(NVCC) $(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) $(CATCH2_CFLAGS) -o $@ $< $(WB_TEST_MAIN) $(WB_LIB) $(CATCH2_LIBS) $(WB_LDLIBS) $(CHAPTER_LDLIBS)

run: $(PROGRAM)
	./$(PROGRAM) $(RUN_ARGS)

test: $(TEST_PROGRAM)
	@mkdir -p $(dir $(WB_TEST_SUMMARY))
	WB_TEST_SUMMARY=$(WB_TEST_SUMMARY) ./$(TEST_PROGRAM)

ifneq ($(CPU_ONLY),1)
# Nsight Compute with the few metrics this chapter's notes discuss. The clocks are left alone
# (--clock-control none) so the numbers match the timed runs. cuBLAS's kernels are profiled
# too, next to the chapter's: the comparison is part of the lesson.
profile: $(PROGRAM)
	$(NCU) --clock-control none $(if $(PROFILE_METRICS),--metrics $(PROFILE_METRICS)) ./$(PROGRAM) $(PROFILE_ARGS)

# memcheck (out-of-bounds and misaligned accesses) and racecheck (shared-memory races) over every
# variant; either finding fails the target.
sanitize: $(PROGRAM)
	$(SANITIZER) --tool memcheck --error-exitcode 9 ./$(PROGRAM) $(SANITIZE_ARGS)
	$(SANITIZER) --tool racecheck --racecheck-report all --error-exitcode 9 ./$(PROGRAM) $(SANITIZE_ARGS)
endif

clean:
	rm -f $(PROGRAM) $(TEST_PROGRAM) *.o

help:
	@echo "$(CHAPTER): make | make $(NN) | make run [RUN_ARGS=...] | make test$(if $(filter 1,$(CPU_ONLY)),, | make profile | make sanitize) | make clean"
	@echo "then ./$(PROGRAM) --help lists the program's options. Architecture: $(ARCH_LIST) ($(ARCH_SOURCE))."
