# CUDA Matmul Workbook - top-level Makefile. `make help` lists the targets.
# Chapters are the folders NN_name/; a new chapter plugs in by adding its folder (with a
# Makefile that includes common/chapter.mk): nothing here lists them.
include common/config.mk

CHAPTERS := $(sort $(patsubst %/,%,$(wildcard [0-9][0-9]_*/)))
NUMBERS := $(foreach c,$(CHAPTERS),$(firstword $(subst _, ,$(c))))
GPU_CHAPTERS := $(filter-out 00_% 01_%,$(CHAPTERS))
chapter_of = $(filter $(1)_%,$(CHAPTERS))
SUBMAKE := $(MAKE) --no-print-directory

.DEFAULT_GOAL := all
.PHONY: all lib deps deps-all deps-missing help test test-build $(addprefix test-build-,$(CHAPTERS)) bench report grade student-kit sanitize check-env clean $(NUMBERS) \
        $(addprefix run-,$(NUMBERS)) $(addprefix test-,$(NUMBERS)) $(addprefix profile-,$(NUMBERS)) \
        $(addprefix sanitize-,$(NUMBERS)) $(addprefix tune-,$(NUMBERS)) $(addprefix build-,$(CHAPTERS))

all: $(addprefix build-,$(CHAPTERS))

# `make` starts with one line per missing dependency and the command that installs it;
# `make check-env` and `make deps` list every dependency, found or not (tools/check_deps.sh).
# The script is handed what config.mk found, so both say the same; CUTLASS's variables come from
# config.mk's CUTLASS block (or the command line) when they are there, else the script looks.
DEPS_ENV = WB_NVCC='$(NVCC)' WB_CXX='$(CXX)' WB_CATCH2_VERSION='$(CATCH2_VERSION)' WB_CATCH2_DIR='$(CATCH2_DIR)' \
  $(if $(filter-out undefined,$(origin CUTLASS_INC)),WB_CUTLASS_INC='$(CUTLASS_INC)') \
  $(if $(filter-out undefined,$(origin CUTLASS)),WB_CUTLASS='$(CUTLASS)')
deps-all:
	@$(DEPS_ENV) bash tools/check_deps.sh --all
deps: deps-all
# Missing nvcc or g++ stops here, before a page of compiler errors; the optional ones never stop.
deps-missing:
	@$(DEPS_ENV) bash tools/check_deps.sh
DEPS_FIRST := $(if $(filter check-env,$(MAKECMDGOALS)),deps-all,$(if $(filter all,$(or $(MAKECMDGOALS),all)),deps-missing))

lib: $(DEPS_FIRST)
	+@$(SUBMAKE) -C common all

# The library is built once, before the chapters, so parallel chapter builds never race on it.
$(addprefix build-,$(CHAPTERS)): build-%: lib
	+@$(SUBMAKE) -C $* all

$(NUMBERS): lib
	+@$(SUBMAKE) -C $(call chapter_of,$@) $(call chapter_of,$@)

$(addprefix run-,$(NUMBERS)): run-%: lib
	+@$(SUBMAKE) -C $(call chapter_of,$*) run

# A chapter's lab/ (tuning programs and their tests) is not part of `make all`, but its tests are
# part of `make test` (only the tests are built for it; `make tune-NN` builds the sweep program). The chapters' test builds are independent: `make -j test` builds them side by side.
LAB_TESTS := $(patsubst %.cu,%,$(wildcard [0-9][0-9]_*/lab/test_*.cu))
has_lab = $(filter $(1)/%,$(LAB_TESTS))
test-build: $(addprefix test-build-,$(CHAPTERS))
$(addprefix test-build-,$(CHAPTERS)): test-build-%: lib
	+@$(SUBMAKE) -C $* test_$* $(patsubst $*/%,%,$(call has_lab,$*))

# Every test binary runs, even after a failure; the last line adds them all up.
test: test-build
	@bash tools/run_tests.sh common/build/test_common common/build/test_gemm_tiles $(foreach c,$(CHAPTERS),$(c)/test_$(c)) $(LAB_TESTS) tools/test_report.py tools/test_grade.py tools/test_sass_loop.py tools/test_student_kit.py tools/test_kit_leaks.py tools/test_make_hints.py tools/test_best_sweep.py tools/test_e2e_plots.py tools/test_results_links.py tools/test_cohort.py

$(addprefix test-,$(NUMBERS)): test-%: lib
	+@$(SUBMAKE) -C $(call chapter_of,$*) test_$(call chapter_of,$*) $(patsubst $(call chapter_of,$*)/%,%,$(call has_lab,$(call chapter_of,$*)))
	@bash tools/run_tests.sh $(call chapter_of,$*)/test_$(call chapter_of,$*) $(call has_lab,$(call chapter_of,$*))

# No `lib` prerequisite: the chapter first checks that the tool exists, then builds what it needs.
$(addprefix profile-,$(NUMBERS)): profile-%:
	+@$(SUBMAKE) -C $(call chapter_of,$*) profile

$(addprefix sanitize-,$(NUMBERS)): sanitize-%:
	+@$(SUBMAKE) -C $(call chapter_of,$*) sanitize

sanitize:
	@$(call wb_require,$(SANITIZER_PATH),$(SANITIZER_MISSING))
	+@$(SUBMAKE) lib
	+@for c in $(GPU_CHAPTERS); do $(SUBMAKE) -C $$c sanitize || exit 1; done
	@echo "sanitize: memcheck and racecheck clean for $(words $(GPU_CHAPTERS)) chapter(s)"

# The exploration sweeps of a chapter's lab (its `tune` target), where the chapter has one.
$(addprefix tune-,$(NUMBERS)): tune-%:
	@test -e $(call chapter_of,$*)/lab/tune_$*.cu || \
	  { echo "$(call chapter_of,$*) has no tuning sweep (no lab/tune_$*.cu)" >&2; exit 2; }
	+@$(SUBMAKE) -C $(call chapter_of,$*) tune

# Chapter 08 on the GPU: every part of its program into OUT (CSV files and run.txt), then the
# pictures and tables.md drawn from them (tools/wb/e2e.py); `PYTHONPATH=tools python3 -m wb e2e fill OUT`
# puts the tables into the chapter's notes. MEASURE_ARGS adds options (e.g. --reps 5).
.PHONY: measure-08 timeline-08
measure-08 timeline-08: OUT ?= results/08
measure-08: lib
	+@$(SUBMAKE) -C $(call chapter_of,08) $(call chapter_of,08)
	@mkdir -p $(OUT)
	bash -o pipefail -c './$(call chapter_of,08)/$(call chapter_of,08) --part all --out $(OUT) $(MEASURE_ARGS) 2>&1 | tee $(OUT)/run.log'
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)

# The streams part under Nsight Systems where nsys is installed (OUT/timeline_nsys.nsys-rep); the
# picture from CUDA events (OUT/timeline.png) is drawn either way.
NSYS_PATH = $(call wb_find_tool,nsys,$(CUDA_PATH)/nsight-systems* /opt/nvidia/nsight-systems/*/bin)
timeline-08: lib
	+@$(SUBMAKE) -C $(call chapter_of,08) $(call chapter_of,08)
	@mkdir -p $(OUT)
	@if [ -n "$(NSYS_PATH)" ]; then \
	  echo "timeline-08: recording with $(NSYS_PATH) -> $(OUT)/timeline_nsys.nsys-rep"; \
	  $(NSYS_PATH) profile --trace=cuda,cublas --force-overwrite true --output $(OUT)/timeline_nsys \
	    ./$(call chapter_of,08)/$(call chapter_of,08) --part streams --out $(OUT) $(MEASURE_ARGS) || exit $$?; \
	else \
	  echo "timeline-08: nsys (Nsight Systems) is not installed here: the timeline is the picture drawn from CUDA events ($(OUT)/timeline.png)"; \
	  ./$(call chapter_of,08)/$(call chapter_of,08) --part streams --out $(OUT) $(MEASURE_ARGS) || exit $$?; \
	fi
	PYTHONPATH=tools python3 -m wb e2e plots $(OUT)

check-env: lib
	+@$(SUBMAKE) -C $(call chapter_of,00) 00_env_check
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

# ---- chapter numbers that name no chapter ------------------------------------------------------
# `make 3` or `make run-3` would otherwise get make's bare "No rule to make target". Explicit rules
# for every one- and two-digit number that is not a chapter, and pattern rules for the prefixed
# targets (the explicit rules above win for real chapters), print which chapter was meant; no
# catch-all `%:` rule, so real files and the sub-makes are never matched by accident.
DIGITS := 0 1 2 3 4 5 6 7 8 9
NOT_CHAPTERS := $(filter-out $(NUMBERS),$(DIGITS) $(foreach a,$(DIGITS),$(foreach b,$(DIGITS),$(a)$(b))))
# $(call no_chapter,TARGET,NUMBER): "no chapter '3': ...; did you mean `make 03`?" and status 2.
meant = $(filter 0$(2),$(NUMBERS))
no_chapter = echo "no chapter '$(2)': chapters are $(NUMBERS); $(if $(meant),did you mean \`make \
  $(patsubst %$(2),%$(meant),$(1))\`?,\`make help\` lists the targets)" >&2; exit 2
.PHONY: $(NOT_CHAPTERS)
$(NOT_CHAPTERS):
	@$(call no_chapter,$@,$@)
run-%:
	@$(call no_chapter,$@,$*)
test-%:
	@$(call no_chapter,$@,$*)
profile-%:
	@$(call no_chapter,$@,$*)
sanitize-%:
	@$(call no_chapter,$@,$*)
tune-%:
	@$(call no_chapter,$@,$*)

clean:
	+@$(SUBMAKE) -C common clean
	+@for c in $(CHAPTERS); do $(SUBMAKE) -C $$c clean; done

help:
	@echo "CUDA Matmul Workbook"
	@echo ""
	@echo "  make / make all     build every chapter and its tests"
	@echo "  make NN             build one chapter, e.g. make 03 (inside a chapter folder too)"
	@echo "  make run-NN         build and run one chapter with its default sweep (ARGS via RUN_ARGS=...)"
	@echo "  make test           all tests; GPU tests are skipped (and counted) without a GPU;"
	@echo "                      REQUIRE_GPU=1 make test turns a missing GPU into a failure"
	@echo "  make test-NN        one chapter's tests"
	@echo "  make bench          every chapter on the standard shapes -> results/bench.csv"
	@echo "  make report         the homework report (report/) from results/bench.csv; STUDENT_ID=, REPORT_CSV="
	@echo "  make student-kit KIT_DIR=... [HOMEWORK=\"00 02 03 06\"]  the starter kit: the homework's solutions"
	@echo "                      replaced by TODO(student) blocks; its grading manifest beside it (KIT_DIR.manifest.json)"
	@echo "  make grade SUBMISSION=dir KIT_MANIFEST=file  grade a student's tree on the GPU with this workbook's"
	@echo "                      tools -> grade/grade.csv, grade/grade.md; STUDENT_ID=, RUBRIC=, GRADE_DIR="
	@echo "  make profile-NN     Nsight Compute with the metrics chapter NN discusses (needs ncu)"
	@echo "  make sanitize       compute-sanitizer memcheck + racecheck over every GPU chapter;"
	@echo "                      make sanitize-NN one chapter. Without the tool both say which"
	@echo "                      package installs it (or NCU=/SANITIZER= below) and exit 2"
	@echo "  make tune-NN        a chapter's tuning sweep, where it has one (its lab)"
	@echo "  make measure-08 OUT=dir  chapter 08's parts on the GPU: CSV files, pictures, tables.md in dir"
	@echo "  make timeline-08 OUT=dir chapter 08's streams timeline (Nsight Systems where installed)"
	@echo "  make check-env      what is installed (one line per dependency, and how to install a missing"
	@echo "                      one), then your GPU and toolkit with measured ceilings (00_env_check)"
	@echo "  make deps           only the dependency lines (make prints the missing ones first)"
	@echo "  make clean          remove everything built"
	@echo ""
	@echo "Settings (make VAR=value):"
	@echo "  ARCH=sm_86          GPU architecture(s). Now: $(ARCH_LIST) [$(ARCH_SOURCE)]."
	@echo "                      Default: detected with nvidia-smi; with no GPU: $(DEFAULT_ARCHS)"
	@echo "                      plus PTX, so newer GPUs still run (the driver compiles it at start)."
	@echo "  CUDA_PATH=...       toolkit (now: $(CUDA_PATH)); NVCC=..., CXX=... compilers"
	@echo "  NCU=..., SANITIZER=...  Nsight Compute and compute-sanitizer (default: on the PATH, else in"
	@echo "                      the CUDA toolkit). Now: $(or $(NCU_PATH),ncu not found), $(or $(SANITIZER_PATH),compute-sanitizer not found)"
	@echo "  CATCH2_INC=...      Catch2 headers (found: v$(if $(CATCH2_VERSION),$(CATCH2_VERSION),- none))"
	@echo "  OPT=-O3             optimisation; CXXFLAGS/NVCCFLAGS/LDFLAGS add flags"
	@echo "  STUDENT_ID=...      written into every CSV row (environment variable)"
	@echo ""
	@echo "Chapters: $(CHAPTERS)"
	@echo "Inside a chapter folder: make, make NN, make run, make test, make profile, make sanitize, and"
	@echo "the targets above (make 03, make test-03, make check-env, ...) work too."
