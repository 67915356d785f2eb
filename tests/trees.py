"""Scratch copies of the repository for the tests that run Snakemake, and the one MNIST copy
they share.

A copy holds the workflow's files, never your results/. ``copy_repo(dest, mnist=copy)`` puts
the session's verified MNIST copy (the ``mnist_copy`` fixture, made once by the workflow's own
rule prepare_mnist) into the tree, so that a test which trains does not fetch it again.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
COPIED = ("Snakefile", "config.yaml", "config", "envs", "rules", "workflow")
MNIST = "resources/mnist.npz"

# Guards against a hung job, not speed limits: a slow or shared machine must not fail a test.
HANG_S = 3600

# The small config writes to results/smoke/ and logs/smoke/ (its name).
MAIN_RUN = (
    "results/smoke/runs/protocol~class_split/variant~default/act~relu/lr~0.05/optim~reset/stream~0"
)


def copy_repo(dest: Path, mnist: Path | None = None) -> Path:
    """The workflow's files in ``dest``, with ``mnist`` as its MNIST copy when given."""
    for name in COPIED:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, dest / name)
    if mnist is not None:
        (dest / MNIST).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(mnist, dest / MNIST)
    return dest


def snakemake(workdir: Path, *args: str, timeout: int = HANG_S) -> str:
    """Snakemake's output of a run that must succeed."""
    result = run_snakemake(workdir, *args, timeout=timeout)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-5000:]
    return output


def failing_snakemake(workdir: Path, *args: str) -> str:
    """Snakemake's output of a run that must fail."""
    result = run_snakemake(workdir, *args)
    assert result.returncode != 0, result.stdout[-3000:]
    return result.stdout + result.stderr


def run_snakemake(workdir: Path, *args: str, timeout: int = HANG_S) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*SNAKEMAKE, "--cores", "2", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def smoke_with(workdir: Path, name: str, **training) -> str:
    """An override file: the small config with these training keys changed."""
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    config["training"].update(training)
    (workdir / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return f"{name}.yaml"


def prepared_mnist(workdir: Path) -> Path:
    """MNIST fetched and verified by rule prepare_mnist in a copy of the repository."""
    snakemake(copy_repo(workdir), MNIST)
    return workdir / MNIST
