"""A run whose weights overflow is recorded as diverged and counted in the summary, not dropped.

The test trains a scratch copy of the repository, so it never touches your results/.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from tests.support.trees import MAIN_RUN, copy_repo, snakemake

pytestmark = pytest.mark.workflow


def test_diverging_runs_are_recorded_and_counted_not_dropped(tmp_path, mnist_copy):
    workdir = copy_repo(tmp_path, mnist=mnist_copy)
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    config["training"]["lr"] = 1e25  # deliberately unstable: the weights overflow
    config["studies"]["main"]["seeds"] = [101]
    config["studies"]["sensitivity"]["seeds"] = [101]  # variants pair with main seeds
    (workdir / "unstable.yaml").write_text(yaml.safe_dump(config))
    snakemake(workdir, "results/smoke/summary/main.csv", "--configfile", "unstable.yaml")
    run = workdir / MAIN_RUN.replace("/lr~0.05/", "/lr~1e+25/")
    record = json.loads((run / "seed~101/order~ABC/run.json").read_text())
    assert record["status"] == "diverged"
    assert record["diverged_at"]["phase"] in {"phase1", "phase2", "common"}
    assert isinstance(record["diverged_at"]["update"], int)
    per_seed = pd.read_csv(workdir / "results/smoke/tables/main_per_seed.csv")
    assert set(per_seed["status"]) == {"diverged"}
    summary = pd.read_csv(workdir / "results/smoke/summary/main.csv")
    assert (summary["n_diverged"] == 1).all()
    assert (summary["n"] == 0).all()
