# CUDA Matmul Workbook - the top-level Makefile. Chapters are the folders NN_name/, each with a short
# Makefile that includes common/chapter.mk: nothing here lists them. `make help` prints the ## lines.
include common/config.mk

ch = $(filter $(1)_%,$(CHAPTERS))
# A chapter's lab tests are part of `make test` and `make test-NN` (not of `make all`).
LAB_TESTS := $(patsubst %.cu,%,$(wildcard [0-9][0-9]_*/lab/test_*.cu))
tests_of = $(1)/test_$(1) $(filter $(1)/%,$(LAB_TESTS))
PASSED_ON := $(NUMBERS) $(foreach p,run profile sanitize tune,$(addprefix $(p)-,$(NUMBERS)))
.PHONY: all lib common-tests deps deps-all deps-missing help test test-build test-cohort bench bench-resume report grade student-kit sanitize check-env clean \
        measure-08 timeline-08 0 1 2 3 4 5 6 7 8 9 $(PASSED_ON) $(foreach p,test- test-build- build-,$(addprefix $(p),$(NUMBERS)))

## make, make all      every chapter and its tests (it starts with a line for each missing dependency)
all: $(addprefix build-,$(NUMBERS))
# The library is built once, before the chapters, so parallel chapter builds never race on it.
lib: $(if $(filter check-env,$(MAKECMDGOALS)),deps-all,$(if $(filter all,$(or $(MAKECMDGOALS),all)),deps-missing))
	+@$(SUB) -C common lib
$(addprefix build-,$(NUMBERS)): build-%: lib ; +@$(SUB) -C $(call ch,$*) all
## make NN             one chapter, e.g. make 03 (inside a chapter folder too)
## make run-NN         its default sweep (RUN_ARGS=...)
## make profile-NN     Nsight Compute with the metrics the chapter's notes discuss (needs ncu)
## make sanitize-NN    compute-sanitizer memcheck + racecheck on small odd shapes; make sanitize: all
## make tune-NN        the chapter's tuning sweep, where its lab has one
# profile-, sanitize- and tune-NN look for their tool (or lab) first, so no `lib` before them.
$(NUMBERS) $(addprefix run-,$(NUMBERS)): lib
$(PASSED_ON):
	+@$(SUB) -C $(call ch,$(lastword $(subst -, ,$@))) $(if $(findstring -,$@),$(firstword $(subst -, ,$@)),$(call ch,$@))
sanitize:
	@$(call wb_require,$(SANITIZER_PATH),$(SANITIZER_MISSING))
	+@$(SUB) lib
	+@for c in $(filter-out 00_% 01_%,$(CHAPTERS)); do $(SUB) -C $$c sanitize || exit 1; done
	@echo "sanitize: memcheck and racecheck clean for $(words $(filter-out 00_% 01_%,$(CHAPTERS))) chapter(s)"

## make test, test-NN  every test (one chapter's), ending "tests: N passed, N failed, N skipped"; GPU
##                     tests are skipped (and counted) without a GPU, a failure with REQUIRE_GPU=1
# common's own tests are built with the tests, never by make NN (a student waits for one chapter only).
test-build: common-tests $(addprefix test-build-,$(NUMBERS))
common-tests: lib ; +@$(SUB) -C common all
$(addprefix test-build-,$(NUMBERS)): test-build-%: lib
	+@$(SUB) -C $(call ch,$*) $(patsubst $(call ch,$*)/%,%,$(call tests_of,$(call ch,$*)))
## make test-cohort  the planted students graded for real on the GPU (tools/test_cohort.py; not in make test)
test: test-build
	@bash tools/run_tests.sh common/build/test_common common/build/test_gemm_tiles common/build/test_toolbox $(foreach c,$(CHAPTERS),$(c)/test_$(c)) $(LAB_TESTS) $(filter-out $(COHORT),$(wildcard tools/test_*.py))
# The cohort grades a class on the GPU (minutes): its own target, so REQUIRE_GPU=1 make test stays short.
COHORT := tools/test_cohort.py
test-cohort: ; @bash tools/run_tests.sh $(COHORT)
$(addprefix test-,$(NUMBERS)): test-%: test-build-%
	@bash tools/run_tests.sh $(call tests_of,$(call ch,$*))

## make check-env      make deps (a line per dependency), then your GPU's measured ceilings (00_env_check; ENV_ARGS=)
check-env: 00 ; @./$(call ch,00)/$(call ch,00) $(ENV_ARGS)
# The lines come from tools/check_deps.sh, given what config.mk found, so both say the same.
deps deps-all deps-missing:
	@WB_NVCC='$(NVCC)' WB_NVCC_PATH='$(NVCC_PATH)' WB_CXX='$(CXX)' WB_CATCH2_VERSION='$(CATCH2_VERSION)' WB_CATCH2_DIR='$(CATCH2_DIR)' \
	  WB_CATCH2_MISSING='$(CATCH2_MISSING)' WB_CUTLASS_INC='$(CUTLASS_INC)' WB_CUTLASS='$(CUTLASS)' bash tools/check_deps.sh $(if $(filter deps-missing,$@),,--all)

## make bench          every chapter on the standard shapes -> results/bench.csv
## make bench-resume   go on with a make bench that stopped: runs only what results/bench.log shows unfinished
## make report         the homework report (report/) from results/bench.csv; STUDENT_ID=, REPORT_CSV=
bench: all ; @bash tools/bench.sh
bench-resume: all ; @bash tools/bench.sh --resume
report: ; @bash tools/report.sh

## make measure-08 OUT=dir   chapter 08's parts (CSV files, run.log, pictures, tables.md; MEASURE_ARGS=...)
## make timeline-08 OUT=dir  its streams part, under Nsight Systems where installed
# Set on the command line (OUT=dir); a variable OUT in the environment (a common name) is not taken.
OUT = results/08
E2E = ./$(call ch,08)/$(call ch,08)
NSYS_RUN = $(NSYS_PATH) profile --trace=cuda,cublas --force-overwrite true --output $(OUT)/timeline_nsys
measure-08 timeline-08: 08 | $(OUT)
measure-08:
	bash -o pipefail -c '$(E2E) --part all --out $(OUT) $(MEASURE_ARGS) 2>&1 | tee $(OUT)/run.log'
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)
timeline-08:
	@echo "timeline-08: $(if $(NSYS_PATH),recording with $(NSYS_PATH) -> $(OUT)/timeline_nsys.nsys-rep,nsys (Nsight Systems) is not installed here: the timeline is the picture drawn from CUDA events ($(OUT)/timeline.png))"
	$(if $(NSYS_PATH),$(NSYS_RUN)) $(E2E) --part streams --out $(OUT) $(MEASURE_ARGS)
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)
$(OUT): ; @mkdir -p $@

## make student-kit KIT_DIR=... [HOMEWORK="00 02 03 06"]  the starter kit and its grading manifest
student-kit:
	@test -n "$(KIT_DIR)" || { echo "make student-kit KIT_DIR=/path/outside/the/workbook (new or empty folder)" >&2; exit 2; }
	@PYTHONPATH=tools python3 -m wb kit make "$(KIT_DIR)" $(if $(HOMEWORK),--homework "$(HOMEWORK)") $(if $(KIT_MANIFEST),--manifest "$(KIT_MANIFEST)")
## make grade SUBMISSION=dir KIT_MANIFEST=file  grade a student's tree on the GPU -> grade/ (RUBRIC=...)
# No `all` before it: grade.sh builds each chapter itself, so a broken one does not stop it.
grade:
	@bash tools/grade.sh $(if $(SUBMISSION),--submission "$(SUBMISSION)") $(if $(KIT_MANIFEST),--manifest "$(KIT_MANIFEST)") $(if $(RUBRIC),--rubric "$(RUBRIC)")

## make clean          remove everything built
clean: ; +@for d in common $(CHAPTERS); do $(SUB) -C $$d clean; done

# `make 3`, `make run-3`, `make 10`: a line naming the chapter meant or the chapters there are, status 2 (no
# catch-all: files are never matched).
no_chapter = echo "no chapter '$(2)': chapters are $(NUMBERS); $(if $(filter 0$(2),$(NUMBERS)),did you mean \`make \
  $(patsubst %$(2),%0$(2),$(1))\`?,\`make help\` lists the targets)" >&2; exit 2
.PHONY: $(NOT_CHAPTERS)
0 1 2 3 4 5 6 7 8 9 $(NOT_CHAPTERS): ; @$(call no_chapter,$@,$@)
$(foreach p,run test profile sanitize tune,$(eval $(p)-%: ; @$$(call no_chapter,$$@,$$*)))

help:
	@echo "CUDA Matmul Workbook. Chapters: $(CHAPTERS)"
	@sed -n 's/^## /  /p' Makefile
	@echo "Inside a chapter folder: make, make NN, make run, make test, make profile, make sanitize, make lab, make tune,"
	@echo "make clean, and the targets above. Settings (make VAR=value), from common/config.mk:"
	@sed -n 's/^#   /  /p' common/config.mk
	@echo "Now: $(ARCH_LIST) [$(ARCH_SOURCE)] (with no GPU: $(DEFAULT_ARCHS)); ncu: $(or $(NCU_PATH),not found);"
	@echo "compute-sanitizer: $(or $(SANITIZER_PATH),not found); Catch2: v$(or $(CATCH2_VERSION),- none)"
