# common/chapter.mk - the rules of every chapter folder. A chapter's Makefile is:
#
#   PROFILE_METRICS := <ncu metrics the notes discuss, comma-separated>   (GPU chapters)
#   include ../common/chapter.mk
#
# and then, inside the folder: make, make NN, make run, make test, make profile, make sanitize.
# The top-level targets the notes use (make 03, make test-03, make check-env, ...) work inside the
# folder too: they are handed to the top-level Makefile.
# Optional per chapter: CHAPTER_NVCCFLAGS, CHAPTER_LDLIBS, RUN_ARGS, PROFILE_ARGS, SANITIZE_ARGS,
# CPU_ONLY := 1 (profile and sanitize then say why there is nothing to profile).
include $(dir $(lastword $(MAKEFILE_LIST)))config.mk

CHAPTER := $(notdir $(CURDIR))
NN := $(firstword $(subst _, ,$(CHAPTER)))
PROGRAM := $(CHAPTER)
TEST_PROGRAM := test_$(CHAPTER)
LOCAL_HEADERS := $(wildcard *.cuh *.h)

# Small odd shapes: every edge path runs, and racecheck stays fast.
SANITIZE_ARGS ?= --sizes 67x45x33,130x97x75 --warmup 1 --reps 1
PROFILE_ARGS ?= --size 4096 --warmup 1 --reps 1 --no-check

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
# A Catch2 test binary from its .cu (the chapter's tests, and its lab's).
define build_test
$(if $(CATCH2_VERSION),,$(error $(CATCH2_MISSING)))
+@$(MAKE) --no-print-directory -C $(WB_COMMON) $(WB_TEST_MAIN)
$(NVCC) $(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) $(CATCH2_CFLAGS) -o $@ $< $(WB_TEST_MAIN) $(WB_LIB) $(CATCH2_LIBS) $(WB_LDLIBS) $(CHAPTER_LDLIBS)
endef

$(TEST_PROGRAM): $(TEST_PROGRAM).cu $(LOCAL_HEADERS) $(WB_HEADERS) $(WB_LIB) | common-lib $(PROGRAM)
	$(build_test)

# ---- the lab (optional): what exists to explore rather than to teach -------------------------------
# lab/tune_NN.cu: a program that sweeps every tuning configuration (`make tune`, TUNE_ARGS=...);
# lab/test_NN_lab.cu: the tests of what lives in lab/. Neither is part of `make all`; the top-level
# `make test` builds and runs the lab's tests.
LAB_TUNE := $(if $(wildcard lab/tune_$(NN).cu),lab/tune_$(NN))
LAB_TEST := $(if $(wildcard lab/test_$(NN)_lab.cu),lab/test_$(NN)_lab)
LAB_HEADERS := $(wildcard lab/*.cuh lab/*.h)
.PHONY: lab tune
ifneq ($(LAB_TUNE)$(LAB_TEST),)
lab: $(LAB_TUNE) $(LAB_TEST)
endif
ifneq ($(LAB_TUNE),)
$(LAB_TUNE): $(LAB_TUNE).cu $(LAB_HEADERS) $(LOCAL_HEADERS) $(WB_HEADERS) $(WB_LIB) | common-lib
	$(NVCC) $(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) -o $@ $< $(WB_LIB) $(WB_LDLIBS) $(CHAPTER_LDLIBS)
tune: $(LAB_TUNE)
	./$(LAB_TUNE) $(TUNE_ARGS)
else
tune:
	@echo "$(CHAPTER) has no tuning sweep (no lab/tune_$(NN).cu)" >&2; exit 2
endif
ifneq ($(LAB_TEST),)
$(LAB_TEST): $(LAB_TEST).cu $(LAB_HEADERS) $(LOCAL_HEADERS) $(WB_HEADERS) $(WB_LIB) | common-lib
	$(build_test)
endif

run: $(PROGRAM)
	./$(PROGRAM) $(RUN_ARGS)

test: $(TEST_PROGRAM)
	@mkdir -p $(dir $(WB_TEST_SUMMARY))
	WB_TEST_SUMMARY=$(WB_TEST_SUMMARY) ./$(TEST_PROGRAM)

ifneq ($(CPU_ONLY),1)
# Nsight Compute with the few metrics this chapter's notes discuss. The clocks are left alone
# (--clock-control none) so the numbers match the timed runs. cuBLAS's kernels are profiled
# too, next to the chapter's: the comparison is part of the lesson. The tool is looked for
# before the program is built, so a missing one costs no compile.
profile:
	@$(call wb_require,$(NCU_PATH),$(NCU_MISSING))
	+@$(MAKE) --no-print-directory $(PROGRAM)
	$(or $(NCU_PATH),$(NCU)) --clock-control none $(if $(PROFILE_METRICS),--metrics $(PROFILE_METRICS)) ./$(PROGRAM) $(PROFILE_ARGS)

# memcheck (out-of-bounds and misaligned accesses) and racecheck (shared-memory races) over every
# variant; either finding fails the target.
sanitize:
	@$(call wb_require,$(SANITIZER_PATH),$(SANITIZER_MISSING))
	+@$(MAKE) --no-print-directory $(PROGRAM)
	$(or $(SANITIZER_PATH),$(SANITIZER)) --tool memcheck --error-exitcode 9 ./$(PROGRAM) $(SANITIZE_ARGS)
	$(or $(SANITIZER_PATH),$(SANITIZER)) --tool racecheck --racecheck-report all --error-exitcode 9 ./$(PROGRAM) $(SANITIZE_ARGS)
else
profile sanitize:
	@echo "$(CHAPTER) runs on the CPU only: no GPU kernel to $(if $(filter profile,$@),profile with Nsight Compute,check with compute-sanitizer)" >&2; exit 2
endif

# ---- the top-level targets, from inside this folder ---------------------------------------------
# The notes give commands such as `make 03`, `make test-03` or `make check-env`; a student who has
# already done `cd NN_name` gets the same result here instead of "No rule to make target". Every
# one- or two-digit number but this chapter's own goes to the top, which builds that chapter or,
# for a number that names none (`make 3`), says which one was meant.
space := $(subst ,, )
WB_DIGITS := 0 1 2 3 4 5 6 7 8 9
OTHER_NUMBERS := $(filter-out $(NN),$(WB_DIGITS) $(foreach a,$(WB_DIGITS),$(foreach b,$(WB_DIGITS),$(a)$(b))))
# (measure-08 and timeline-08 read OUT=dir from the top folder, as chapter 08's notes write it.)
TOP_TARGETS := check-env deps deps-all deps-missing bench report grade measure-08 timeline-08
TO_TOP := $(MAKE) --no-print-directory -C $(WB_ROOT)
.PHONY: $(OTHER_NUMBERS) $(TOP_TARGETS)

$(OTHER_NUMBERS) $(TOP_TARGETS):
	+@$(TO_TOP) $@
# One rule per prefix: a pattern rule with several targets would mean one recipe makes them all.
run-%:
	+@$(TO_TOP) $@
test-%:
	+@$(TO_TOP) $@
profile-%:
	+@$(TO_TOP) $@
sanitize-%:
	+@$(TO_TOP) $@
tune-%:
	+@$(TO_TOP) $@

clean:
	rm -f $(PROGRAM) $(TEST_PROGRAM) $(LAB_TUNE) $(LAB_TEST) *.o

help:
	@echo "$(CHAPTER): make | make $(NN) | make run [RUN_ARGS=...] | make test$(if $(filter 1,$(CPU_ONLY)),, | make profile | make sanitize) | make clean"
	@echo "then ./$(PROGRAM) --help lists the program's options. Architecture: $(ARCH_LIST) ($(ARCH_SOURCE))."
	@echo "From here too (handed to the top-level Makefile): make NN, make run-NN, make test-NN, make profile-NN,"
	@echo "make sanitize-NN, make tune-NN, make $(subst $(space), | make ,$(TOP_TARGETS)). make -C .. help explains them."
	@echo "$(if $(filter 1,$(CPU_ONLY)),,make profile needs ncu (or NCU=/path/to/ncu), make sanitize compute-sanitizer (or SANITIZER=...): when one is missing it says so and exits 2.)"
