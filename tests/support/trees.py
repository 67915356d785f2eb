"""Scratch copies of the repository for the tests that run Snakemake, the one MNIST copy they
share, and the small config's finished tree.

A copy holds the workflow's files, never your results/. ``copy_repo(dest, mnist=copy)`` puts
the session's verified MNIST copy (the ``mnist_copy`` fixture, made once by the workflow's own
rule prepare_mnist) into the tree, so that a test which trains does not fetch it again.

``smoke_tree(dest)`` runs the small config to completion in a copy. Where HISTRES_SMOKE_TREE
names a finished tree of the same code (`.ci/run` passes the one `make test-slurm` just built
through SLURM), it copies that tree instead, so that CI runs the small config once; a tree of
other code is refused by name, never used. Otherwise the copy starts from what `make smoke`
left in this checkout, if anything (its results, logs and Snakemake's records of them), and
Snakemake reruns what this code and config would make differently: nothing after a
`make smoke` of the same code, so that `make smoke` then `make test` runs the small config once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from base64 import urlsafe_b64decode
from pathlib import Path

import yaml

from workflow.manifest import digests

REPO = Path(__file__).resolve().parents[2]
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


# What `make smoke` leaves in the checkout for a copy to continue from. Snakemake's records
# (metadata: each output's params and code; incomplete: the jobs a kill interrupted) are what
# let it rerun exactly the stale jobs of the copy.
OWN_SMOKE_RUN = ("results/smoke", "logs/smoke", MNIST)
RECORDS = (".snakemake/metadata", ".snakemake/incomplete")


def recorded_output(record: Path, records: Path) -> str | None:
    """The output a Snakemake record is of: its name is the path in URL-safe base64, split into
    folders where long (None: not such a name)."""
    name = "".join(record.relative_to(records).parts)
    try:
        return urlsafe_b64decode(name).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def copy_records(source: Path, target: Path, roots: tuple[str, ...]) -> None:
    """Snakemake's records of the outputs under ``roots`` (and any it cannot name), not those
    of the checkout's other results (the full config's run to thousands)."""
    for records in RECORDS:
        for record in (source / records).rglob("*"):
            output = recorded_output(record, source / records)
            under = output is None or any(
                output == root or output.startswith(f"{root}/") for root in roots
            )
            if record.is_file() and under:
                copy_path(record, target / record.relative_to(source))


def copy_path(source: Path, target: Path) -> None:
    """A file or folder, with its times (Snakemake's mtime trigger reads them); absent: none."""
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def smoke_tree(dest: Path) -> Path:
    """The small config run to completion in ``dest`` (HISTRES_SMOKE_TREE: a copy of that one)."""
    built = os.environ.get("HISTRES_SMOKE_TREE")
    if not built:
        copy_repo(dest)
        if (REPO / "results/smoke").is_dir():
            for name in OWN_SMOKE_RUN:
                copy_path(REPO / name, dest / name)
            copy_records(REPO, dest, OWN_SMOKE_RUN)
        snakemake(dest, "--configfile", "config/smoke.yaml", "--rerun-incomplete")
        return dest
    shutil.copytree(built, dest, symlinks=True, dirs_exist_ok=True)
    ours, theirs = code_digests(REPO), code_digests(dest)
    other = sorted(
        name for name in ours.keys() | theirs.keys() if ours.get(name) != theirs.get(name)
    )
    assert not other, f"HISTRES_SMOKE_TREE={built} was built by other code: {other[:5]} differ"
    return dest


def code_digests(root: Path) -> dict[str, str]:
    """Path -> SHA-256 of every workflow file of a tree (workflow.manifest.digests), Python's
    caches aside."""
    found = {}
    for name in COPIED:
        path = root / name
        if path.is_dir():
            found |= {f"{name}/{k}": v for k, v in digests(path).items() if "__pycache__" not in k}
        elif path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found
