# CUDA Matmul Workbook - the top-level Makefile. Chapters are the folders NN_name/, each with a short
# Makefile that includes common/chapter.mk: nothing here lists them. `make help` prints the ## lines.
include common/config.mk

CHAPTERS := $(WB_CHAPTERS)
NUMBERS := $(WB_NUMBERS)
ch = $(filter $(1)_%,$(CHAPTERS))
SUB := $(MAKE) --no-print-directory
# A chapter's lab tests are part of `make test` and `make test-NN` (not of `make all`).
LAB_TESTS := $(patsubst %.cu,%,$(wildcard [0-9][0-9]_*/lab/test_*.cu))
tests_of = $(1)/test_$(1) $(filter $(1)/%,$(LAB_TESTS))
PASSED_ON := $(NUMBERS) $(foreach p,run profile sanitize tune,$(addprefix $(p)-,$(NUMBERS)))
.DEFAULT_GOAL := all
.PHONY: all lib deps deps-all deps-missing help test test-build bench report grade student-kit sanitize check-env clean \
        measure-08 timeline-08 $(PASSED_ON) $(addprefix test-,$(NUMBERS)) $(foreach p,build- test-build-,$(addprefix $(p),$(CHAPTERS)))

## make, make all      every chapter and its tests (it starts with a line for each missing dependency)
all: $(addprefix build-,$(CHAPTERS))
# The library is built once, before the chapters, so parallel chapter builds never race on it.
lib: $(if $(filter check-env,$(MAKECMDGOALS)),deps-all,$(if $(filter all,$(or $(MAKECMDGOALS),all)),deps-missing))
	+@$(SUB) -C common all
$(addprefix build-,$(CHAPTERS)): build-%: lib ; +@$(SUB) -C $* all
## make NN             one chapter, e.g. make 03 (inside a chapter folder too)
## make run-NN         its default sweep (RUN_ARGS=...)
## make profile-NN     Nsight Compute with the metrics the chapter's notes discuss (needs ncu)
## make sanitize-NN    compute-sanitizer memcheck + racecheck on small odd shapes; make sanitize: all
## make tune-NN        the chapter's tuning sweep, where its lab has one
# NN builds the chapter's program, run-NN is `make run` inside it, and so on; profile-, sanitize- and
# tune-NN look for their tool (or lab) first, so no `lib` before them.
$(NUMBERS) $(addprefix run-,$(NUMBERS)): lib
$(PASSED_ON):
	+@$(SUB) -C $(call ch,$(lastword $(subst -, ,$@))) $(if $(findstring -,$@),$(firstword $(subst -, ,$@)),$(call ch,$@))
sanitize:
	@$(call wb_require,$(SANITIZER_PATH),$(SANITIZER_MISSING))
	+@$(SUB) lib
	+@for c in $(filter-out 00_% 01_%,$(CHAPTERS)); do $(SUB) -C $$c sanitize || exit 1; done
	@echo "sanitize: memcheck and racecheck clean for $(words $(filter-out 00_% 01_%,$(CHAPTERS))) chapter(s)"

## make test           every test, ending "tests: N passed, N failed, N skipped"; GPU tests are skipped
##                     (and counted) without a GPU, a failure with REQUIRE_GPU=1. make test-NN: one chapter
# Every test binary runs, even after a failure. `make -j test` builds the chapters' tests side by side.
test-build: $(addprefix test-build-,$(CHAPTERS))
$(addprefix test-build-,$(CHAPTERS)): test-build-%: lib
	+@$(SUB) -C $* $(patsubst $*/%,%,$(call tests_of,$*))
test: test-build
	@bash tools/run_tests.sh common/build/test_common common/build/test_gemm_tiles $(foreach c,$(CHAPTERS),$(c)/test_$(c)) $(LAB_TESTS) $(wildcard tools/test_*.py)
$(addprefix test-,$(NUMBERS)): test-%:
	@bash tools/run_tests.sh $(call tests_of,$(call ch,$*))
$(foreach n,$(NUMBERS),$(eval test-$(n): test-build-$(call ch,$(n))))

## make check-env      one line per dependency (found, or how to install it), then your GPU and toolkit
##                     with measured ceilings (00_env_check; ENV_ARGS=...); make deps: only the lines
check-env: 00 ; @./$(call ch,00)/$(call ch,00) $(ENV_ARGS)
# The lines come from tools/check_deps.sh, given what config.mk found, so both say the same.
DEPS_ENV = WB_NVCC='$(NVCC)' WB_NVCC_PATH='$(NVCC_PATH)' WB_CXX='$(CXX)' WB_CATCH2_VERSION='$(CATCH2_VERSION)' WB_CATCH2_DIR='$(CATCH2_DIR)' \
  $(if $(filter-out undefined,$(origin CUTLASS_INC)),WB_CUTLASS_INC='$(CUTLASS_INC)') \
  $(if $(filter-out undefined,$(origin CUTLASS)),WB_CUTLASS='$(CUTLASS)')
deps deps-all deps-missing:
	@$(DEPS_ENV) bash tools/check_deps.sh $(if $(filter deps-missing,$@),,--all)

## make bench          every chapter on the standard shapes -> results/bench.csv
## make report         the homework report (report/) from results/bench.csv; STUDENT_ID=, REPORT_CSV=
bench: all ; @bash tools/bench.sh
report: ; @bash tools/report.sh

## make measure-08 OUT=dir   chapter 08's parts (CSV files, run.log, pictures, tables.md; MEASURE_ARGS=...)
## make timeline-08 OUT=dir  its streams part, under Nsight Systems where installed
measure-08 timeline-08: OUT ?= results/08
measure-08 timeline-08: 08
measure-08:
	@mkdir -p $(OUT)
	bash -o pipefail -c './$(CH08)/$(CH08) --part all --out $(OUT) $(MEASURE_ARGS) 2>&1 | tee $(OUT)/run.log'
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)
timeline-08:
	@mkdir -p $(OUT)
	@echo "timeline-08: $(if $(NSYS_PATH),recording with $(NSYS_PATH) -> $(OUT)/timeline_nsys.nsys-rep,nsys (Nsight Systems) is not installed here: the timeline is the picture drawn from CUDA events ($(OUT)/timeline.png))"
	$(if $(NSYS_PATH),$(NSYS_PATH) profile --trace=cuda$(comma)cublas --force-overwrite true --output $(OUT)/timeline_nsys) ./$(CH08)/$(CH08) --part streams --out $(OUT) $(MEASURE_ARGS)
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)
CH08 = $(call ch,08)
comma := ,

## make student-kit KIT_DIR=... [HOMEWORK="00 02 03 06"]  the starter kit (solutions replaced by
##                     TODO(student) blocks) and its grading manifest (KIT_DIR.manifest.json)
student-kit:
	@test -n "$(KIT_DIR)" || { echo "make student-kit KIT_DIR=/path/outside/the/workbook (new or empty folder)" >&2; exit 2; }
	@PYTHONPATH=tools python3 -m wb kit make "$(KIT_DIR)" $(if $(HOMEWORK),--homework "$(HOMEWORK)") $(if $(KIT_MANIFEST),--manifest "$(KIT_MANIFEST)")
## make grade SUBMISSION=dir KIT_MANIFEST=file  grade a student's tree on the GPU -> grade/grade.csv,
##                     grade/grade.md; STUDENT_ID=, RUBRIC=, GRADE_DIR=
# No `all` before it: grade.sh builds each chapter itself, so a broken one does not stop it.
grade:
	@bash tools/grade.sh $(if $(SUBMISSION),--submission "$(SUBMISSION)") $(if $(KIT_MANIFEST),--manifest "$(KIT_MANIFEST)") $(if $(RUBRIC),--rubric "$(RUBRIC)")

## make clean          remove everything built
clean: ; +@for d in common $(CHAPTERS); do $(SUB) -C $$d clean; done

# `make 3`, `make run-3`: one line naming the chapter meant and status 2, not make's "No rule to make
# target" (no catch-all rule: real files are never matched).
meant = $(filter 0$(2),$(NUMBERS))
no_chapter = echo "no chapter '$(2)': chapters are $(NUMBERS); $(if $(meant),did you mean \`make \
  $(patsubst %$(2),%$(meant),$(1))\`?,\`make help\` lists the targets)" >&2; exit 2
.PHONY: $(filter-out $(NUMBERS),0 1 2 3 4 5 6 7 8 9)
$(filter-out $(NUMBERS),0 1 2 3 4 5 6 7 8 9): ; @$(call no_chapter,$@,$@)
$(foreach p,run test profile sanitize tune,$(eval $(p)-%: ; @$$(call no_chapter,$$@,$$*)))

help:
	@echo "CUDA Matmul Workbook. Chapters: $(CHAPTERS)"
	@sed -n 's/^## /  /p' Makefile
	@echo "Inside a chapter folder: make, make NN, make run, make test, make profile, make sanitize, make lab, make tune,"
	@echo "make clean, and the targets above. Settings (make VAR=value), from common/config.mk:"
	@sed -n 's/^#   /  /p' common/config.mk
	@echo "Now: $(ARCH_LIST) [$(ARCH_SOURCE)] (with no GPU: $(DEFAULT_ARCHS)); ncu: $(or $(NCU_PATH),not found);"
	@echo "compute-sanitizer: $(or $(SANITIZER_PATH),not found); Catch2: v$(or $(CATCH2_VERSION),- none)"
