# Set-up and entry points. `make smoke` and `make test` create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
# Each config writes to results/<name>/ and logs/<name>/ (its `name:` key).
NAME = $(shell awk '/^name:/ {print $$2; exit}' $(or $(CONFIG),config.yaml))

.PHONY: smoke test test-slurm lint report full verify reference restore missing adopt-runs \
    status migrate-results

$(VENV)/installed: envs/requirements.txt envs/requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r envs/requirements-dev.txt
	touch $@

smoke: $(VENV)/installed
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml
	$(BIN)/snakemake --configfile config/smoke.yaml --report results/smoke/report.html
	@echo "Results: results/smoke/summary/*.csv (one per study), results/smoke/tables/,"
	@echo "results/smoke/figures/, and all of them with captions in results/smoke/report.html"

#   make report [CONFIG=config/smoke.yaml]
report: $(VENV)/installed
	$(BIN)/snakemake --report results/$(NAME)/report.html $(if $(CONFIG),--configfile $(CONFIG))

lint: $(VENV)/installed
	$(BIN)/ruff check workflow tests benchmarks
	$(BIN)/ruff format --check workflow tests benchmarks
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/snakemake --lint --configfile config/smoke.yaml

test: $(VENV)/installed lint
	$(BIN)/python -m pytest -q

# The small config through profiles/slurm on a real single-node SLURM cluster (root, Debian).
test-slurm: $(VENV)/installed
	bash tests/slurm/test_slurm.sh

# The full study, study by study in the order the reference accumulates them (resumable: rerun
# after an interruption; `snakemake --unlock` first if a run was killed). Log: logs/full/make.log.
# A step is its studies joined by "+"; each study's target rule (Snakefile, build_<study>) builds
# its summary and its figures, so that an export made after the step holds the study whole.
FULL_STEPS := main+noise_floor+probes sensitivity pilot rotated long activation+lr_search
FULL_LOG := logs/full/make.log
step_targets = $(patsubst %,build_%,$(subst +, ,$(1)))
full_step = echo "== $$(date -u +%FT%TZ) $(1)" | tee -a $(FULL_LOG); \
    $(BIN)/snakemake --profile profiles/local --cores $(CORES) $(1) >> $(FULL_LOG) 2>&1 \
    || echo "== failed: $(1) (see $(FULL_LOG))" | tee -a $(FULL_LOG);
full: $(VENV)/installed
	@mkdir -p logs/full
	@$(foreach step,$(FULL_STEPS),$(call full_step,$(strip $(call step_targets,$(step)))))
	$(BIN)/snakemake --profile profiles/local --cores $(CORES) >> $(FULL_LOG) 2>&1

# Retrain the named seeds' runs and compare every checkpoint digest with reference/<config name>/:
#   make verify SEEDS=101 [SCOPE=all] [CONFIG=config/smoke.yaml]
# SCOPE=main (default): the main runs' base segment; SCOPE=all: every run and segment of the
# seeds. Fails, naming the first differing checkpoint, unless every digest matches.
SCOPE ?= main
ifneq ($(filter verify,$(MAKECMDGOALS)),)
ifeq ($(strip $(SEEDS)),)
$(error make verify needs SEEDS, e.g. make verify SEEDS=101 or SEEDS=101,202)
endif
ifeq ($(filter $(SCOPE),main all),)
$(error make verify: SCOPE must be main or all, not "$(SCOPE)")
endif
endif
# The target comes before --configfile, which would take it for a second config file.
verify: $(VENV)/installed
	$(BIN)/snakemake --cores $(CORES) results/$(NAME)/verify/$(SCOPE)/seeds~$(SEEDS).csv \
	    $(if $(CONFIG),--configfile $(CONFIG))

# Write reference/<config name>/ from a finished (or partly finished) run, and the README's
# results section from it where the README has one (full, cuda; TREE: the tree that ran it).
# Runs the folder holds and the tree lacks are kept, and so are its complete studies, which the
# tree must have built: REOPEN names those it computes anew (new code, say), REPLACE=1 starts
# the folder afresh:
#   make reference [TREE=/path/to/clone] [CONFIG=config/smoke.yaml] [REOPEN="probes"] [REPLACE=1]
TREE ?= .
reference: $(VENV)/installed
	$(BIN)/python -m workflow.reference export --tree $(TREE) \
	    $(if $(CONFIG),--configfile $(CONFIG)) $(if $(REPLACE),--replace) \
	    $(foreach study,$(REOPEN),--reopen $(study))
	$(BIN)/python -m workflow.results_page reference/$(NAME)

# Copy the pair results (comparisons, probes, search traces) that reference/<config name>/ holds
# and the tree lacks into results/<config name>/, where this code and config would make them
# again: a new machine then trains only the runs no finished pair holds. The MNIST copy comes
# first: made after them, it would be newer input of every job upstream of them, and Snakemake
# would redo them all. Then the machine check: the small reference's seed-101 pair, retrained
# here in under a minute, must give reference/smoke's bits, or runs trained here could not join
# the reference's (README, "On which machines the bits match"). Opt in: a plain `make full`
# computes everything itself.
#   make restore [CONFIG=config/smoke.yaml]
MACHINE_CHECK := results/smoke/verify/main/seeds~101.csv
MACHINE_CHECK_LOG := $(patsubst results/%.csv,logs/%.log,$(MACHINE_CHECK))
restore: $(VENV)/installed
	$(BIN)/snakemake --cores 1 resources/mnist.npz $(if $(CONFIG),--configfile $(CONFIG))
	$(BIN)/snakemake --cores $(CORES) $(MACHINE_CHECK) --configfile config/smoke.yaml \
	    || { echo "make restore: this machine does not give reference/smoke's bits (report:"; \
	         echo "$(MACHINE_CHECK_LOG)), so the runs it trains would differ from"; \
	         echo "the reference's; nothing restored. To restore anyway, pairs from two kinds of"; \
	         echo "machine: $(BIN)/python -m workflow.reference restore$(if $(CONFIG), --configfile $(CONFIG))"; \
	         exit 1; }
	$(BIN)/python -m workflow.reference restore $(if $(CONFIG),--configfile $(CONFIG))

# Jobs done and left per rule, and an ETA from this machine's finished jobs; starts nothing:
#   make status [CONFIG=config/smoke.yaml] [TARGETS="results/full/summary/main.csv"]
status: $(VENV)/installed
	@$(BIN)/python -m workflow.status --cores $(CORES) $(TARGETS) \
	    $(if $(CONFIG),--configfile $(CONFIG))

# Intermediate files (checkpoints, dumps, comparisons) that are missing although everything
# downstream looks current: Snakemake does not rebuild them on its own. Lists them and fails if
# any; `snakemake <file>` rebuilds one, and the next run updates everything below it.
missing: $(VENV)/installed
	@$(BIN)/snakemake --summary $(if $(CONFIG),--configfile $(CONFIG)) 2>/dev/null \
	    | awk -F'\t' '$$5 == "missing" {print $$1; n++} END {if (n) {print n " missing"; exit 1} else print "no file is missing"}'

# Keep finished training after a code change that changes none of its bits (show that first:
# make verify, or the determinism audit): `snakemake --touch` marks the training jobs done
# under the new code, recording their params and code hash as Snakemake does for a job it ran
# (so a later config change still retrains), and makes their outputs newer than their inputs,
# so that only the stages after training rerun. See README, "Reproducibility".
TRAINING_TARGETS = find results/$(NAME)/runs -type f \( -name run.json -o -name extension.json \) \
    2>/dev/null; find results/$(NAME)/activation/lr_search -type f -name 'order~*.json' 2>/dev/null
adopt-runs: $(VENV)/installed
	$(BIN)/snakemake $$($(TRAINING_TARGETS)) --touch --cores 1 \
	    $(if $(CONFIG),--configfile $(CONFIG))

# A tree of the layout before per-config folders and run variants (results/runs/...): move its
# runs, logs, benchmarks and stability traces into results/<name>/ and logs/<name>/, then keep
# the runs with `make adopt-runs`. Moves nothing if any target exists.
migrate-results: $(VENV)/installed
	$(BIN)/python -m workflow.migrate $(if $(CONFIG),--configfile $(CONFIG))
