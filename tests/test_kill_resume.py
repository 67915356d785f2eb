"""A training job killed with SIGKILL continues from its last resumable state, bit-identically.

Runs Snakemake for real in scratch copies of the repository (about a minute on 2 cores).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest
import yaml

from tests.support.trees import MAIN_RUN, SNAKEMAKE, copy_repo, snakemake
from workflow.artifacts import load_checkpoint
from workflow.reference.tables import run_tables

pytestmark = pytest.mark.workflow

RUN = f"{MAIN_RUN}/seed~101/order~ABC"
TARGET = f"{RUN}/extension.json"
LAST = f"{RUN}/checkpoints/update~300.npz"


def long_config(workdir):
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    config["training"]["extended_checkpoints"] = [150, 300]
    config["training"]["state_every"] = 25
    (workdir / "long.yaml").write_text(yaml.safe_dump(config))


def test_killed_extension_resumes_to_the_same_bits(tmp_path, mnist_copy):
    (tmp_path / "killed").mkdir()
    (tmp_path / "fresh").mkdir()
    killed = copy_repo(tmp_path / "killed", mnist=mnist_copy)
    long_config(killed)
    log = killed / f"logs/smoke/{RUN.removeprefix('results/smoke/')}/extend_history.log"
    job = subprocess.Popen(
        [*SNAKEMAKE, "--cores", "1", TARGET, "--configfile", "long.yaml"],
        cwd=killed,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600
        while "state saved at C update 200" not in (log.read_text() if log.exists() else ""):
            assert job.poll() is None, "the job ended before it could be killed"
            assert time.monotonic() < deadline, "no resumable state within 10 minutes"
            time.sleep(0.5)
    finally:
        os.killpg(job.pid, signal.SIGKILL)
        job.wait(timeout=60)
    assert not (killed / LAST).exists()
    snakemake(killed, "--unlock", TARGET, "--configfile", "long.yaml")
    snakemake(killed, TARGET, "--configfile", "long.yaml", "--rerun-incomplete")
    assert "resuming from the state saved at C update" in log.read_text()
    assert not (killed / RUN / ".resume").exists()
    # The export reads the resumption from the log and times only the updates this job trained.
    config = yaml.safe_load((killed / "long.yaml").read_text())["training"]
    segments = {"base": config["checkpoints"], "extended": config["extended_checkpoints"]}
    runs, _ = run_tables(killed / "results/smoke", killed / "logs/smoke", segments)
    extended = runs[(runs["segment"] == "extended") & (runs["seed"] == 101)]
    extended = extended[extended["order"] == "ABC"].iloc[0]
    assert extended["resumed_at"] in (200, 225, 250, 275)

    fresh = copy_repo(tmp_path / "fresh", mnist=mnist_copy)
    long_config(fresh)
    snakemake(fresh, TARGET, "--configfile", "long.yaml")
    for update in (150, 300):
        path = f"{RUN}/checkpoints/update~{update}.npz"
        _, resumed = load_checkpoint(killed / path)
        _, uninterrupted = load_checkpoint(fresh / path)
        assert resumed["params_digest"] == uninterrupted["params_digest"], update
