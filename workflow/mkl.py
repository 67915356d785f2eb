"""Which vendor's code MKL runs in every job (``machine.mkl_cpu``).

    os.environ.update(mkl_preload("zen", os.environ))   # before a job's Python starts

MKL (PyTorch's linear layers on x86-64) asks the CPU's vendor and runs its Intel kernels on
Intel CPUs and its Zen kernels on AMD ones, with other bits. ``zen`` preloads ``mkl_zen.c``,
compiled once per machine into ``HISTRES_KERNELS`` (as the fused kernels are), which answers
those queries as an AMD Zen CPU does: an Intel CPU then gives the reference's bits. Each run
records the code MKL took (``workflow.environment.mkl_cpu``). ``LD_PRELOAD`` acts when a
process starts: it reaches the jobs, never the process that sets it. Torch-free.
"""

from __future__ import annotations

import hashlib
import platform
import re
from collections.abc import Mapping
from functools import partial
from pathlib import Path

from workflow.cbuild import build, cache_folder, compiler

SOURCE = Path(__file__).with_name("mkl_zen.c")
FLAGS = ("-O2", "-shared", "-fPIC")


def shim() -> Path:
    """The compiled preload library, built on first use."""
    key = hashlib.sha256(SOURCE.read_bytes() + " ".join(FLAGS).encode()).hexdigest()[:16]
    target = cache_folder() / f"histres_mkl_zen-{key}.so"
    cc = partial(
        compiler,
        "machine.mkl_cpu: zen",
        "set machine.mkl_cpu: null, and an Intel CPU runs MKL's Intel code, whose bits differ "
        "from the reference's",
    )
    return build(cc, SOURCE, target, [FLAGS])


def mkl_preload(mkl_cpu: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a job needs for ``machine.mkl_cpu``: none for null, and none off Linux
    x86-64, where PyTorch has no MKL to steer (its record then says which code ran)."""
    if mkl_cpu is None or (platform.system(), platform.machine()) != ("Linux", "x86_64"):
        return {}
    path = str(shim())
    # The loader splits the list at colons as well as spaces.
    preloaded = [name for name in re.split(r"[:\s]+", environ.get("LD_PRELOAD", "")) if name]
    return {"LD_PRELOAD": " ".join(preloaded if path in preloaded else [path, *preloaded])}
