"""Which vendor's code MKL runs in a job (``machine.mkl_cpu``).

    shim = load_shim()          # in the job, before torch loads (workflow.machine.enter_job)
    check_mkl("zen", shim)      # after: fails unless MKL asked the shim and ran Zen's code

MKL (PyTorch's linear layers on x86-64) asks the CPU's vendor and runs its Intel kernels on
Intel CPUs and its Zen kernels on AMD ones, with other bits. ``zen`` loads ``mkl.c``, compiled
on first use into ``HISTRES_KERNELS`` and checked at every use (workflow.machine.cbuild), into
the job's global symbol scope before torch loads: its answers then come before MKL's own, as an
``LD_PRELOAD`` would put them, and an Intel CPU gives the reference's bits. The shim counts the
questions it answers, so the job knows which code MKL ran instead of trusting the config; a
shim that did not load, or that MKL never asked, stops the job before it computes anything.
Off Linux x86-64 PyTorch has no MKL to steer, and each run records the code that ran.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import platform
import re
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from workflow.machine.cbuild import build, cache_folder, compiler
from workflow.machine.environment import SHIM_ASKED, mkl_cpu

SOURCE = Path(__file__).with_suffix(".c")
FLAGS = ("-O2", "-shared", "-fPIC")


class MklError(RuntimeError):
    """MKL did not run the vendor code that machine.mkl_cpu asks for."""


def steers_mkl(mkl_cpu: str | None) -> bool:
    """Whether ``machine.mkl_cpu`` steers MKL here: a value, on Linux x86-64."""
    return mkl_cpu is not None and (platform.system(), platform.machine()) == ("Linux", "x86_64")


def shim() -> Path:
    """The compiled shim, built on first use, checked against its build record at each."""
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(FLAGS).encode()).hexdigest()[:16]
    target = cache_folder() / f"histres_mkl_zen-{key}.so"
    cc = partial(
        compiler,
        "machine.mkl_cpu: zen",
        "set machine.mkl_cpu: null, and an Intel CPU runs MKL's Intel code, whose bits differ "
        "from the reference's",
    )
    return build(cc, SOURCE, target, [FLAGS])


def load_shim() -> ctypes.CDLL:
    """The shim, loaded into the global symbol scope (before torch, or it comes too late)."""
    path = shim()
    try:
        return ctypes.CDLL(str(path), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
    except OSError as error:
        raise MklError(
            f"machine.mkl_cpu: the vendor shim {path} does not load ({error}): delete it and "
            "its .json record, and rerun (the job builds it anew)"
        ) from None


def check_mkl(wanted: str, shim_library: ctypes.CDLL) -> str | None:
    """The vendor code MKL runs in this process, once torch is loaded; an error unless it is
    ``wanted`` and MKL got it from the shim. None: this torch has no MKL to steer."""
    import torch

    torch.nn.functional.linear(torch.ones(2, 2), torch.ones(2, 2))  # MKL asks on first use
    ran = mkl_cpu()
    if ran is None:
        return None
    counter = getattr(shim_library, SHIM_ASKED, None)
    asked = counter() if counter is not None else 0
    if asked == 0 or ran != wanted:
        preload = os.environ.get("LD_PRELOAD")
        raise MklError(
            f"machine.mkl_cpu is {wanted}, but MKL ran its {ran} code: it asked the vendor "
            f"shim {asked} time(s)"
            + (f" (LD_PRELOAD={preload} may answer first: unset it)" if preload else "")
            + "; results would not be the reference's. Set machine.mkl_cpu: null to run "
            "MKL's own choice, which each run records"
        )
    return ran


def mkl_preload(mkl_cpu: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """For a process started outside the workflow (a benchmark's workers): the variables that
    put the shim before MKL from its start. Workflow jobs call workflow.machine.enter_job."""
    if not steers_mkl(mkl_cpu):
        return {}
    path = str(shim())
    # The loader splits the list at colons as well as spaces.
    preloaded = [name for name in re.split(r"[:\s]+", environ.get("LD_PRELOAD", "")) if name]
    return {"LD_PRELOAD": " ".join(preloaded if path in preloaded else [path, *preloaded])}
