# Set-up and entry points. `make smoke` and `make test` create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2
# The config files of CONFIG (one or more), each quoted, as Snakemake's option.
CONFIG_ARGS = $(if $(CONFIG),--configfile $(foreach file,$(CONFIG),'$(file)'))
# The results, logs and reference folders of a config (workflow.config: results/ and logs/ for
# the default config, results/<name>/ and logs/<name>/ for any other), which Python prints once
# it has validated the config: a value of the config never reaches a shell unchecked. Evaluated
# once, when a recipe first needs it (after the venv is made); an invalid config stops make.
folders_of = $(or $(shell $(BIN)/python -m workflow.config folders $(1)),$(error make: config $(or $(2),config.yaml) is not valid (see above); nothing ran))
FOLDERS = $(eval FOLDERS := $(call folders_of,$(CONFIG_ARGS),$(CONFIG)))$(FOLDERS)
RESULTS = $(word 1,$(FOLDERS))
LOGS = $(word 2,$(FOLDERS))
REFERENCE = $(word 3,$(FOLDERS))
# Those of the default config (`make full`) and of the small config (`make smoke`, the machine
# check of `make restore`), whatever CONFIG says.
DEFAULT_FOLDERS = $(eval DEFAULT_FOLDERS := $(call folders_of))$(DEFAULT_FOLDERS)
SMOKE = config/smoke.yaml
SMOKE_FOLDERS = $(eval SMOKE_FOLDERS := $(call folders_of,--configfile $(SMOKE),$(SMOKE)))$(SMOKE_FOLDERS)
SMOKE_RESULTS = $(word 1,$(SMOKE_FOLDERS))

.PHONY: smoke test test-slurm lint report full verify reference restore missing adopt-runs \
    status migrate-results

$(VENV)/installed: envs/requirements.txt envs/requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r envs/requirements-dev.txt
	touch $@

smoke: $(VENV)/installed
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml
	$(BIN)/snakemake --configfile config/smoke.yaml --report '$(SMOKE_RESULTS)/report.html'
	@echo "Results: $(SMOKE_RESULTS)/summary/*.csv (one per study), $(SMOKE_RESULTS)/tables/,"
	@echo "$(SMOKE_RESULTS)/figures/, and all of them with captions in $(SMOKE_RESULTS)/report.html"

#   make report [CONFIG=config/smoke.yaml]
report: $(VENV)/installed
	$(BIN)/snakemake --report '$(RESULTS)/report.html' $(CONFIG_ARGS)

lint: $(VENV)/installed
	$(BIN)/ruff check workflow tests benchmarks
	$(BIN)/ruff format --check workflow tests benchmarks
	$(BIN)/snakefmt --check Snakefile rules
	$(BIN)/snakemake --lint --configfile config/smoke.yaml

# One pytest worker per core; a test module stays on one worker (its module fixtures, the small
# config's tree among them, are made once).
test: $(VENV)/installed lint
	$(BIN)/python -m pytest -q -n $(CORES) --dist loadfile

# The small config through profiles/slurm on a real single-node SLURM cluster (root, Debian).
test-slurm: $(VENV)/installed
	bash tests/slurm/test_slurm.sh

# The full study, study by study in the order the reference accumulates them (resumable: rerun
# after an interruption; `snakemake --unlock` first if a run was killed). Log: logs/make.log.
# A step is its studies joined by "+" (workflow.registry's steps, read once the venv is made);
# each study's target rule (Snakefile, build_<study>) builds its summary and its figures, so
# that an export made after the step holds the study whole.
FULL_STEPS = $(eval FULL_STEPS := $(shell $(BIN)/python -m workflow.registry))$(FULL_STEPS)
FULL_LOG = $(word 2,$(DEFAULT_FOLDERS))/make.log
step_targets = $(patsubst %,build_%,$(subst +, ,$(1)))
full_step = echo "== $$(date -u +%FT%TZ) $(1)" | tee -a "$$log"; \
    $(BIN)/snakemake --profile profiles/local --cores $(CORES) $(1) >> "$$log" 2>&1 \
    || echo "== failed: $(1) (see $$log)" | tee -a "$$log";
full: $(VENV)/installed
	@log='$(FULL_LOG)'; mkdir -p "$$(dirname "$$log")"; \
	$(foreach step,$(FULL_STEPS),$(call full_step,$(strip $(call step_targets,$(step)))))
	$(BIN)/snakemake --profile profiles/local --cores $(CORES) >> '$(FULL_LOG)' 2>&1

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
	$(BIN)/snakemake --cores $(CORES) '$(RESULTS)/verify/$(SCOPE)/seeds~$(SEEDS).csv' \
	    $(CONFIG_ARGS)

# Write reference/<config name>/ from a finished (or partly finished) run (TREE: the tree that
# ran it), sealed by its SHA256SUMS, then its results page RESULTS.md. Runs and pair results the
# folder holds and the tree lacks are kept, and so are its complete studies the tree did not
# build, while their config and pairs are unchanged: REOPEN names those computed anew (new code,
# say), REPLACE=1 starts the folder afresh:
#   make reference [TREE=/path/to/clone] [CONFIG=config/smoke.yaml] [REOPEN="probes"] [REPLACE=1]
TREE ?= .
reference: $(VENV)/installed
	$(BIN)/python -m workflow.reference export --tree '$(TREE)' \
	    $(CONFIG_ARGS) $(if $(REPLACE),--replace) \
	    $(foreach study,$(REOPEN),--reopen '$(study)')
	$(BIN)/python -m workflow.results_page '$(REFERENCE)'

# Copy the pair results (comparisons, probes, search traces) that reference/<config name>/ holds
# and the tree lacks into the config's results folder, where this code and config would make them
# again: a new machine then trains only the runs no finished pair holds. The MNIST copy comes
# first (its readers take it as ancient(), so its time never reruns them). Then the machine
# check: the small reference's seed-101 pair, retrained here in under a minute, must give
# reference/smoke's bits, or runs trained here could not join the reference's
# (docs/reproducibility.md). Opt in: a plain `make full` computes everything itself.
#   make restore [CONFIG=config/smoke.yaml]
MACHINE_CHECK = $(SMOKE_RESULTS)/verify/main/seeds~101.csv
MACHINE_CHECK_LOG = $(word 2,$(SMOKE_FOLDERS))/verify/main/seeds~101.log
restore: $(VENV)/installed
	$(BIN)/snakemake --cores 1 resources/mnist.npz $(CONFIG_ARGS)
	$(BIN)/snakemake --cores $(CORES) '$(MACHINE_CHECK)' --configfile config/smoke.yaml \
	    || { echo "make restore: this machine does not give reference/smoke's bits (report:"; \
	         echo "$(MACHINE_CHECK_LOG)), so the runs it trains would differ from"; \
	         echo "the reference's; nothing restored. To restore anyway, pairs from two kinds of"; \
	         echo "machine: $(BIN)/python -m workflow.reference restore $(CONFIG_ARGS)"; \
	         exit 1; }
	$(BIN)/python -m workflow.reference restore $(CONFIG_ARGS)

# Jobs done and left per rule, and an ETA from this machine's finished jobs; starts nothing:
#   make status [CONFIG=config/smoke.yaml] [TARGETS="results/summary/main.csv"]
status: $(VENV)/installed
	@$(BIN)/python -m workflow.status --cores $(CORES) $(TARGETS) $(CONFIG_ARGS)

# Intermediate files (checkpoints, dumps, comparisons) that are missing although everything
# downstream looks current: Snakemake does not rebuild them on its own. Lists them and fails if
# any; `snakemake <file>` rebuilds one, and the next run updates everything below it.
missing: $(VENV)/installed
	@$(BIN)/snakemake --summary $(CONFIG_ARGS) 2>/dev/null \
	    | awk -F'\t' '$$5 == "missing" {print $$1; n++} END {if (n) {print n " missing"; exit 1} else print "no file is missing"}'

# Keep finished training after a code change that changes none of its bits (show that first:
# make verify, or the determinism audit): `snakemake --touch` marks the training jobs done
# under the new code, recording their params and code hash as Snakemake does for a job it ran
# (so a later config change still retrains), and makes their outputs newer than their inputs,
# so that only the stages after training rerun (docs/reproducibility.md).
TRAINING_TARGETS = find '$(RESULTS)/runs' -type f \( -name run.json -o -name extension.json \) \
    2>/dev/null; find '$(RESULTS)/activation/lr_search' -type f -name 'order~*.json' 2>/dev/null
# The MNIST copy first: its content is fixed by its digests, checked at every parse, and while
# its own job is due Snakemake 9.27 leaves the training jobs below it undecided.
adopt-runs: $(VENV)/installed
	$(BIN)/snakemake resources/mnist.npz --touch --cores 1 $(CONFIG_ARGS)
	$(BIN)/snakemake $$($(TRAINING_TARGETS)) --touch --cores 1 $(CONFIG_ARGS)

# A tree of an earlier layout (workflow.migrate): the default config's results/full/ and
# logs/full/ move to results/ and logs/ with Snakemake's records of every file, so nothing
# reruns that would not have run before; a tree from before per-config folders and run variants
# (results/runs/protocol~P/act~...) moves its runs, logs, benchmarks and stability traces into
# the config's folders, and `make adopt-runs` then keeps its runs. Moves nothing if any target
# exists.
migrate-results: $(VENV)/installed
	$(BIN)/python -m workflow.migrate $(CONFIG_ARGS)
