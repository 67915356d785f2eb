"""Checks the workflow makes while it is parsed or planned, before any job can start.

    check_mnist_copy(Path("resources/mnist.npz"), config["data"]["digests"])
    device_dry_run("cuda", local=True, python=sys.executable, cwd=repo)

The MNIST copy: every training job reads it, and Snakemake deletes a job's outputs before it
runs the job. A copy changed after it was verified (one pixel) made each training job delete its
finished checkpoints and only then fail on the digest. Checked while the workflow is parsed,
a bad copy stops every invocation, dry runs included, before any job; and since its readers
take it as an ancient() input (its bytes are pinned by ``data.digests``, not by its time), a
good copy fetched again retrains nothing. A job upstream of training could not do this: a new
input of the training rules reruns every finished run ("set of input files has changed").

The device: in a dry run of local execution, the machine that plans is the machine that will
train, so ``snakemake -n`` checks training.device as rule check_device would. Under cluster
execution the jobs run on nodes the dry run cannot see: the dry run says so, and rule
check_device checks the device on the node, before any training job.

Torch-free: the device check runs in a child process.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from workflow.mnist import DataError, load_npz

CHILD = "import sys; from workflow.device import check_device; check_device(sys.argv[1])"
CHILD_TIMEOUT_S = 300


class PreflightError(RuntimeError):
    """The workflow cannot start: the data or the device is not what the config says."""


def check_mnist_copy(path: Path, digests: Mapping[str, str]) -> None:
    """PreflightError naming the file and the digests where ``path`` exists and is not the
    config's MNIST; nothing where it does not exist yet (rule prepare_mnist verifies what it
    fetches)."""
    if not path.exists():
        return
    try:
        load_npz(path, expected=dict(digests))
    except DataError as error:
        raise PreflightError(
            f"{error}. Nothing was run, and no output was removed. Replace the copy: delete "
            f"{path}, fetch a verified one alone first (snakemake --cores 1 {path} "
            "[--configfile ...]), then run the workflow: runs trained from the good copy are "
            "kept"
        ) from error


def device_dry_run(device: str, local: bool, python: str, cwd: Path) -> str:
    """In a dry run: PreflightError where ``device`` does not exist on this machine and the
    jobs run here (``local``); otherwise a line saying what was checked, or why it could not
    be."""
    if device == "cpu":
        return "training.device cpu: always present"
    if not local:
        return (
            f"training.device {device}: not checked by this dry run. Under cluster execution the "
            "jobs run on other machines, which a dry run on this one cannot see; rule "
            "check_device checks the device on the node that trains, before any training job"
        )
    try:
        child = subprocess.run(
            [python, "-c", CHILD, device],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=CHILD_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"training.device {device}: not checked by this dry run ({error})"
    lines = child.stderr.strip().splitlines()
    if child.returncode == 0:
        return f"training.device {device}: present on this machine, which runs the jobs"
    if lines and lines[-1].startswith("ModuleNotFoundError"):
        return (
            f"training.device {device}: not checked by this dry run ({lines[-1]} in {python}); "
            "rule check_device checks it before any training job"
        )
    found = lines[-1].removeprefix("ValueError: ") if lines else f"exit {child.returncode}"
    raise PreflightError(
        f"{found}. The jobs would run on this machine (local execution), so this dry run "
        "checked it here; for another machine, plan there or use a cluster profile"
    )
