"""How a job's machine computes, set up by the job itself: one call, before anything else.

    from workflow.machine import enter_job
    enter_job(snakemake.config["machine"], torch_threads=1)   # before numpy and torch load

A job's bits depend on more than its inputs: the vector code PyTorch and numpy's OpenBLAS
pick (capped by ``machine.cpu_isa``, workflow.machine.caps), the vendor code MKL runs
(``machine.mkl_cpu``, workflow.machine.mkl) and torch's deterministic set-up
(workflow.machine.determinism). Each library reads its setting once, when it loads, so the job
that computes makes this call first, before numpy and torch are imported: it sets the caps in
its own environment, keeps freed memory in the heap (workflow.machine.heap), and, for a job
that computes with torch, loads MKL's vendor shim (built on first use), configures torch and
checks the code MKL ran. Parsing the workflow sets up nothing (``check_machine`` only refuses
a clashing environment early), so ``snakemake -n`` compiles and writes nothing, and every job
gets its set-up wherever it runs, on a cluster node too. What a run records of its machine is
workflow.machine.environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from workflow.machine.caps import job_caps
from workflow.machine.environment import machine_identity
from workflow.machine.heap import keep_heap
from workflow.machine.mkl import check_mkl, load_shim, steers_mkl

# Libraries that read the caps when they load: the set-up must come first.
READ_AT_LOAD = ("numpy", "torch")


class MachineError(RuntimeError):
    """A job set up its machine too late."""


def enter_job(machine: Mapping[str, Any], torch_threads: int | None = None) -> None:
    """Set up this job's process for the config's ``machine``; ``torch_threads``: the job
    computes with torch, on that many threads (training.torch_threads)."""
    loaded = [name for name in READ_AT_LOAD if name in sys.modules]
    if loaded:
        raise MachineError(
            f"workflow.machine.enter_job must come before {' and '.join(loaded)} is imported "
            "(the caps act when it loads): call it first in the job's script"
        )
    os.environ.update(job_caps(machine, os.environ))
    keep_heap()
    if torch_threads is None:
        return
    shim = load_shim() if steers_mkl(machine["mkl_cpu"]) else None
    from workflow.machine.determinism import configure_torch

    configure_torch(torch_threads)
    if shim is not None:
        check_mkl(machine["mkl_cpu"], shim)


def check_machine(machine: Mapping[str, Any], environ: Mapping[str, str]) -> None:
    """Refuses, while the workflow is parsed, an environment whose variables clash with
    ``machine.cpu_isa``, before any job starts; changes nothing."""
    job_caps(machine, environ)


def job_identity(machine: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> dict:
    """The torch-free part of the machine (workflow.machine.environment.machine_identity)
    that a job will have once it has made its set-up, known without making it."""
    return machine_identity({**environ, **job_caps(machine, environ)})
