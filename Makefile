# Set-up and entry points. `make smoke` and `make test` create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: smoke test test-slurm lint report

$(VENV)/installed: envs/requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r envs/requirements.txt
	touch $@

smoke: $(VENV)/installed
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml
	$(BIN)/snakemake --configfile config/smoke.yaml --report results/report.html
	@echo "Results: results/summary/*.csv (one per study), results/tables/, results/figures/,"
	@echo "and all of them with captions in results/report.html"

report: $(VENV)/installed
	$(BIN)/snakemake --report results/report.html

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
