# common/chapter.mk - the rules of every chapter folder: make (program and tests), make NN, run, test,
# profile, sanitize, lab, tune, clean. A chapter's Makefile sets what differs, then includes this:
#   PROFILE_METRICS (ncu's metrics the notes discuss), PROFILE_ARGS, SANITIZE_ARGS, RUN_ARGS, TUNE_ARGS
#   CHAPTER_NVCCFLAGS, CHAPTER_LDLIBS, STAMP_TEXT  flags, libraries, anything else: a change rebuilds
#   CPU_ONLY := 1  no GPU code (profile and sanitize say so)
#   CPU_CODE := 1  chapter 01's CPU code: its host flags, and OpenBLAS where found
#   CLEAN_FILES += ... (after the include)  more for make clean
include $(dir $(lastword $(MAKEFILE_LIST)))config.mk

CHAPTER := $(notdir $(CURDIR))
NN := $(firstword $(subst _, ,$(CHAPTER)))
PROGRAM := $(CHAPTER)
TEST_PROGRAM := test_$(CHAPTER)
# Small odd shapes: every edge path runs, and racecheck stays fast.
SANITIZE_ARGS ?= --sizes 67x45x33,130x97x75 --warmup 1 --reps 1
PROFILE_ARGS ?= --size 4096 --warmup 1 --reps 1 --no-check

ifeq ($(CPU_CODE),1)
  # -march=native (build where you run), -ffp-contract=fast (a * b + c as one FMA), OpenMP. OpenBLAS
  # is found with a tiny compile-and-link test; OPENBLAS=0 builds without it, OPENBLAS=1 insists.
  OPENBLAS ?= auto
  OPENBLAS_PROBE := \#include <cblas.h>\nint main(void) { openblas_set_num_threads(1); return 0; }\n
  HAVE_OPENBLAS := $(if $(filter 0,$(OPENBLAS)),,$(shell f=$$(mktemp) && printf '$(OPENBLAS_PROBE)' | \
                     $(CXX) -x c++ - -o $$f -lopenblas >/dev/null 2>&1 && echo 1; rm -f $$f))
  $(if $(filter 1,$(OPENBLAS)),$(if $(HAVE_OPENBLAS),,$(error OPENBLAS=1 but cblas.h or -lopenblas is missing: $(WB_SUDO)apt-get install libopenblas-dev)))
  CHAPTER_NVCCFLAGS += -Xcompiler -march=native,-ffp-contract=fast,-fopenmp $(if $(HAVE_OPENBLAS),-DWB_HAVE_OPENBLAS)
  CHAPTER_LDLIBS += -lgomp $(if $(HAVE_OPENBLAS),-lopenblas)
endif

CHAPTER_STAMP := $(call wb_stamp,$(WB_BUILD)/$(CHAPTER),$(call wb_sum,$(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) $(CHAPTER_LDLIBS) $(STAMP_TEXT)))
DEPS := $(wildcard *.cuh *.h) $(WB_HEADERS) $(WB_LIB) $(CHAPTER_STAMP)
BUILD = $(NVCC) $(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) -o $@ $< $(WB_LIB) $(WB_LDLIBS) $(CHAPTER_LDLIBS)
# A Catch2 test binary (the chapter's, its lab's); without Catch2, the line that says how to get it.
BUILD_TEST = $(if $(CATCH2_VERSION),,$(error $(CATCH2_MISSING)))$(NVCC) $(WB_NVCCFLAGS) $(CHAPTER_NVCCFLAGS) \
  $(CATCH2_CFLAGS) -o $@ $< $(WB_TEST_MAIN) $(WB_LIB) $(CATCH2_LIBS) $(WB_LDLIBS) $(CHAPTER_LDLIBS)
# The lab (lab/*.cu, not in `make all`): lab/tune_NN is `make tune`'s sweep, lab/test_NN_lab runs with the tests.
LAB := $(patsubst %.cu,%,$(wildcard lab/*.cu))
LAB_TEST := $(filter lab/test_%,$(LAB))

.PHONY: all $(NN) run test profile sanitize lab tune clean FORCE
all: $(PROGRAM) $(TEST_PROGRAM)
$(NN): $(PROGRAM)
lab: $(LAB)

# The library, then the test main: common/'s own make is always asked, as it knows their sources.
$(WB_LIB): FORCE ; +@$(SUB) -C $(WB_COMMON) lib
$(WB_TEST_MAIN): $(WB_LIB) FORCE ; +@$(SUB) -C $(WB_COMMON) test-main

$(PROGRAM): $(CHAPTER).cu $(DEPS)
	$(BUILD)
# The tests also run the program (its exit statuses), so it is built first.
$(TEST_PROGRAM): $(TEST_PROGRAM).cu $(DEPS) $(WB_TEST_MAIN) | $(PROGRAM)
	$(BUILD_TEST)
$(LAB): %: %.cu $(wildcard lab/*.cuh lab/*.h) $(DEPS)
	$(if $(filter $@,$(LAB_TEST)),$(BUILD_TEST),$(BUILD))
$(LAB_TEST): $(WB_TEST_MAIN)

run: $(PROGRAM) ; ./$(PROGRAM) $(RUN_ARGS)
test: $(TEST_PROGRAM) $(LAB_TEST) ; @bash $(WB_ROOT)/tools/run_tests.sh $^
tune: $(filter lab/tune_%,$(LAB))
	$(if $^,./$^ $(TUNE_ARGS),@echo "$(CHAPTER) has no tuning sweep (no lab/tune_$(NN).cu)" >&2; exit 2)

ifneq ($(CPU_ONLY),1)
# Nsight Compute with this chapter's metrics, clocks left alone (--clock-control none) so the numbers
# match the timed runs; cuBLAS's kernels are profiled too. compute-sanitizer: memcheck (out of bounds,
# misaligned) and racecheck (shared-memory races); a finding fails. The tool is looked for first.
profile:
	@$(call wb_require,$(NCU_PATH),$(NCU_MISSING))
	+@$(SUB) $(PROGRAM)
	$(NCU_PATH) --clock-control none $(if $(PROFILE_METRICS),--metrics $(PROFILE_METRICS)) ./$(PROGRAM) $(PROFILE_ARGS)
sanitize:
	@$(call wb_require,$(SANITIZER_PATH),$(SANITIZER_MISSING))
	+@$(SUB) $(PROGRAM)
	$(SANITIZER_PATH) --tool memcheck --error-exitcode 9 ./$(PROGRAM) $(SANITIZE_ARGS)
	$(SANITIZER_PATH) --tool racecheck --racecheck-report all --error-exitcode 9 ./$(PROGRAM) $(SANITIZE_ARGS)
else
profile sanitize:
	@echo "$(CHAPTER) runs on the CPU only: no GPU kernel to $(if $(filter profile,$@),profile with Nsight Compute,check with compute-sanitizer)" >&2; exit 2
endif

# The top-level targets, typed in a chapter folder, go to the top (this chapter's NN is built here).
TOP_TARGETS := $(filter-out $(NN),$(NUMBERS) 0 1 2 3 4 5 6 7 8 9) $(NOT_CHAPTERS) check-env deps deps-all deps-missing \
               bench bench-resume report grade help measure-08 timeline-08
.PHONY: $(TOP_TARGETS)
$(TOP_TARGETS): ; +@$(SUB) -C $(WB_ROOT) $@
$(foreach p,run test profile sanitize tune,$(eval $(p)-%: ; +@$$(SUB) -C $$(WB_ROOT) $$@))

clean: ; rm -f $(PROGRAM) $(TEST_PROGRAM) $(LAB) $(CLEAN_FILES) *.o
