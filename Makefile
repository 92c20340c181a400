# CUDA Matmul Workbook - top-level Makefile. `make help` lists the targets. Chapters are the folders
# NN_name/, each with a Makefile that includes common/chapter.mk: nothing here lists them.
include common/config.mk

CHAPTERS := $(WB_CHAPTERS)
NUMBERS := $(WB_NUMBERS)
chapter_of = $(filter $(1)_%,$(CHAPTERS))
SUBMAKE := $(MAKE) --no-print-directory
# A chapter's lab tests are part of `make test` and `make test-NN` (not of `make all`).
LAB_TESTS := $(patsubst %.cu,%,$(wildcard [0-9][0-9]_*/lab/test_*.cu))
tests_of = $(1)/test_$(1) $(filter $(1)/%,$(LAB_TESTS))
PER_CHAPTER := run test profile sanitize tune

.DEFAULT_GOAL := all
.PHONY: all lib deps deps-all deps-missing help test test-build bench report grade student-kit sanitize \
        check-env clean measure-08 timeline-08 $(NUMBERS) $(foreach p,build- test-build-,$(addprefix $(p),$(CHAPTERS))) \
        $(foreach p,$(PER_CHAPTER),$(addprefix $(p)-,$(NUMBERS)))

all: $(addprefix build-,$(CHAPTERS))

# One line per dependency (tools/check_deps.sh), given what config.mk found so both say the same:
# `make` starts with the missing ones (and stops without nvcc or g++), `make check-env` and
# `make deps` list them all.
DEPS_ENV = WB_NVCC='$(NVCC)' WB_NVCC_PATH='$(NVCC_PATH)' WB_CXX='$(CXX)' WB_CATCH2_VERSION='$(CATCH2_VERSION)' WB_CATCH2_DIR='$(CATCH2_DIR)' \
  $(if $(filter-out undefined,$(origin CUTLASS_INC)),WB_CUTLASS_INC='$(CUTLASS_INC)') \
  $(if $(filter-out undefined,$(origin CUTLASS)),WB_CUTLASS='$(CUTLASS)')
deps deps-all:
	@$(DEPS_ENV) bash tools/check_deps.sh --all
deps-missing:
	@$(DEPS_ENV) bash tools/check_deps.sh
DEPS_FIRST := $(if $(filter check-env,$(MAKECMDGOALS)),deps-all,$(if $(filter all,$(or $(MAKECMDGOALS),all)),deps-missing))

# The library is built once, before the chapters, so parallel chapter builds never race on it.
lib: $(DEPS_FIRST)
	+@$(SUBMAKE) -C common all
$(addprefix build-,$(CHAPTERS)): build-%: lib
	+@$(SUBMAKE) -C $* all
$(NUMBERS): lib
	+@$(SUBMAKE) -C $(call chapter_of,$@) $(call chapter_of,$@)
$(addprefix run-,$(NUMBERS)): run-%: lib
	+@$(SUBMAKE) -C $(call chapter_of,$*) run

# Every test binary runs, even after a failure; the last line adds them all up. `make -j test`
# builds the chapters' tests side by side.
test-build: $(addprefix test-build-,$(CHAPTERS))
$(addprefix test-build-,$(CHAPTERS)): test-build-%: lib
	+@$(SUBMAKE) -C $* $(patsubst $*/%,%,$(call tests_of,$*))
test: test-build
	@bash tools/run_tests.sh common/build/test_common common/build/test_gemm_tiles $(foreach c,$(CHAPTERS),$(c)/test_$(c)) $(LAB_TESTS) tools/test_report.py tools/test_grade.py tools/test_sass_loop.py tools/test_student_kit.py tools/test_kit_leaks.py tools/test_make_hints.py tools/test_scripts.py tools/test_best_sweep.py tools/test_e2e_plots.py tools/test_markers.py tools/test_results_links.py tools/test_cohort.py
$(addprefix test-,$(NUMBERS)): test-%: lib
	+@$(SUBMAKE) -C $(call chapter_of,$*) $(patsubst $(call chapter_of,$*)/%,%,$(call tests_of,$(call chapter_of,$*)))
	@bash tools/run_tests.sh $(call tests_of,$(call chapter_of,$*))

# No `lib` prerequisite: the chapter first checks that its tool (or its lab) is there.
$(foreach p,profile sanitize tune,$(addprefix $(p)-,$(NUMBERS))):
	+@$(SUBMAKE) -C $(call chapter_of,$(lastword $(subst -, ,$@))) $(firstword $(subst -, ,$@))
sanitize:
	@$(call wb_require,$(SANITIZER_PATH),$(SANITIZER_MISSING))
	+@$(SUBMAKE) lib
	+@for c in $(filter-out 00_% 01_%,$(CHAPTERS)); do $(SUBMAKE) -C $$c sanitize || exit 1; done
	@echo "sanitize: memcheck and racecheck clean for $(words $(filter-out 00_% 01_%,$(CHAPTERS))) chapter(s)"

# Chapter 08 on the GPU: every part of its program into OUT (CSV files and run.txt), then the
# pictures and tables.md drawn from them (tools/wb/e2e.py); `PYTHONPATH=tools python3 -m wb e2e fill OUT`
# puts the tables into the chapter's notes. MEASURE_ARGS adds options (e.g. --reps 5).
CH08 = $(call chapter_of,08)
measure-08 timeline-08: OUT ?= results/08
measure-08 timeline-08: lib
measure-08:
	+@$(SUBMAKE) -C $(CH08) $(CH08)
	@mkdir -p $(OUT)
	bash -o pipefail -c './$(CH08)/$(CH08) --part all --out $(OUT) $(MEASURE_ARGS) 2>&1 | tee $(OUT)/run.log'
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)
# The streams part, under Nsight Systems where nsys is installed (OUT/timeline_nsys.nsys-rep); the
# picture from CUDA events (OUT/timeline.png) is drawn either way.
comma := ,
timeline-08:
	+@$(SUBMAKE) -C $(CH08) $(CH08)
	@mkdir -p $(OUT)
	@echo "timeline-08: $(if $(NSYS_PATH),recording with $(NSYS_PATH) -> $(OUT)/timeline_nsys.nsys-rep,nsys (Nsight Systems) is not installed here: the timeline is the picture drawn from CUDA events ($(OUT)/timeline.png))"
	$(if $(NSYS_PATH),$(NSYS_PATH) profile --trace=cuda$(comma)cublas --force-overwrite true --output $(OUT)/timeline_nsys) ./$(CH08)/$(CH08) --part streams --out $(OUT) $(MEASURE_ARGS)
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)

check-env: lib
	+@$(SUBMAKE) -C $(call chapter_of,00) $(call chapter_of,00)
	@./$(call chapter_of,00)/$(call chapter_of,00) $(ENV_ARGS)
bench: all
	@bash tools/bench.sh
report:
	@bash tools/report.sh

# The student starter kit: the workbook with each solution region replaced by a TODO(student) block.
student-kit:
	@test -n "$(KIT_DIR)" || { echo "make student-kit KIT_DIR=/path/outside/the/workbook (new or empty folder)" >&2; exit 2; }
	@PYTHONPATH=tools python3 -m wb kit make "$(KIT_DIR)" $(if $(HOMEWORK),--homework "$(HOMEWORK)") $(if $(KIT_MANIFEST),--manifest "$(KIT_MANIFEST)")

# No `all` prerequisite on purpose: grade.sh builds each chapter itself, so a broken one does not stop it.
grade:
	@bash tools/grade.sh $(if $(SUBMISSION),--submission "$(SUBMISSION)") $(if $(KIT_MANIFEST),--manifest "$(KIT_MANIFEST)") $(if $(RUBRIC),--rubric "$(RUBRIC)")

# `make 3` or `make run-3`: one line naming the chapter meant and status 2, not make's "No rule to
# make target" (no catch-all rule: real files are never matched).
meant = $(filter 0$(2),$(NUMBERS))
no_chapter = echo "no chapter '$(2)': chapters are $(NUMBERS); $(if $(meant),did you mean \`make \
  $(patsubst %$(2),%$(meant),$(1))\`?,\`make help\` lists the targets)" >&2; exit 2
.PHONY: $(filter-out $(NUMBERS),0 1 2 3 4 5 6 7 8 9)
$(filter-out $(NUMBERS),0 1 2 3 4 5 6 7 8 9):
	@$(call no_chapter,$@,$@)
$(foreach p,$(PER_CHAPTER),$(eval $(p)-%: ; @$$(call no_chapter,$$@,$$*)))

clean:
	+@for d in common $(CHAPTERS); do $(SUBMAKE) -C $$d clean; done

help:
	@echo "CUDA Matmul Workbook. Chapters: $(CHAPTERS)"
	@echo "  make, make all      every chapter and its tests"
	@echo "  make NN             one chapter, e.g. make 03 (inside a chapter folder too)"
	@echo "  make run-NN         one chapter's default sweep (RUN_ARGS=...)"
	@echo "  make test           every test; GPU tests are skipped (and counted) without a GPU, a failure"
	@echo "                      with REQUIRE_GPU=1; make test-NN  one chapter's tests"
	@echo "  make bench          every chapter on the standard shapes -> results/bench.csv"
	@echo "  make report         the homework report (report/) from results/bench.csv; STUDENT_ID=, REPORT_CSV="
	@echo "  make profile-NN     Nsight Compute with the metrics chapter NN discusses (needs ncu)"
	@echo "  make sanitize       compute-sanitizer memcheck + racecheck over every GPU chapter; make sanitize-NN"
	@echo "                      one chapter. Without its tool each says which package installs it, status 2"
	@echo "  make tune-NN        a chapter's tuning sweep, where it has one (its lab)"
	@echo "  make measure-08 OUT=dir, make timeline-08 OUT=dir  chapter 08's parts (CSV, pictures, tables.md),"
	@echo "                      its streams timeline (Nsight Systems where installed)"
	@echo "  make check-env      one line per dependency (found, or how to install it), then your GPU and"
	@echo "                      toolkit with measured ceilings (00_env_check); make deps  only the lines"
	@echo "  make student-kit KIT_DIR=... [HOMEWORK=\"00 02 03 06\"]  the starter kit (solutions replaced by"
	@echo "                      TODO(student) blocks) and its grading manifest (KIT_DIR.manifest.json)"
	@echo "  make grade SUBMISSION=dir KIT_MANIFEST=file  grade a student's tree on the GPU -> grade/grade.csv,"
	@echo "                      grade/grade.md; STUDENT_ID=, RUBRIC=, GRADE_DIR="
	@echo "  make clean          remove everything built"
	@echo "Settings (make VAR=value):"
	@echo "  ARCH=sm_86          GPU architecture(s), also ARCH=\"sm_80 sm_90\". Now: $(ARCH_LIST) [$(ARCH_SOURCE)]."
	@echo "                      Default: this machine's GPU (nvcc -arch=native); with none: $(DEFAULT_ARCHS),"
	@echo "                      plus PTX so newer GPUs still run (the driver compiles it at start)"
	@echo "  CUDA_PATH=...       the toolkit (now: $(CUDA_PATH)); NVCC=..., CXX=... the compilers"
	@echo "  NCU=..., SANITIZER=...  Nsight Compute, compute-sanitizer (default: the PATH, then the toolkit)."
	@echo "                      Now: $(or $(NCU_PATH),ncu not found), $(or $(SANITIZER_PATH),compute-sanitizer not found)"
	@echo "  CATCH2_INC=...      Catch2's headers (found: v$(or $(CATCH2_VERSION),- none)); CUTLASS=0 leaves CUTLASS out of 07"
	@echo "  OPT=-O3             optimisation; CXXFLAGS, NVCCFLAGS, LDFLAGS add flags; STUDENT_ID (environment)"
	@echo "                      goes into every CSV row"
	@echo "Inside a chapter folder: make, make NN, make run, make test, make profile, make sanitize, and the"
	@echo "targets above (make 03, make test-03, make check-env, ...)."
