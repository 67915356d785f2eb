# Set-up and entry points. `make smoke` and `make test` create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 2

.PHONY: smoke test lint

$(VENV)/installed: envs/requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r envs/requirements.txt
	touch $@

smoke: $(VENV)/installed
	$(BIN)/snakemake --cores $(CORES) --configfile config/smoke.yaml
	@echo "Results: results/summary/main.csv and results/tables/main_per_seed.csv"

lint: $(VENV)/installed
	$(BIN)/ruff check workflow tests
	$(BIN)/snakemake --lint --configfile config/smoke.yaml

test: $(VENV)/installed lint
	$(BIN)/python -m pytest -q
