"""The machine a result was computed on, as far as it can change the bits.

    env = machine_environment(torch_threads=1)

Training is bit-reproducible only for the same torch build, thread count, kernels and device;
PyTorch's own kernels (conv2, the linear layers, oneDNN) also pick their code path from the
CPU's instruction set, so the CPU model, its ISA flags and the capability torch detects are
recorded too. torch is imported only if it is installed, so torch-free stages can call this.

The config's ``machine.cpu_isa`` caps that instruction set for every job (``isa_caps``), so
that a wider CPU takes the reference's code path:

    os.environ.update(isa_caps("avx2", os.environ))   # before torch is imported
"""

from __future__ import annotations

import ctypes
import datetime
import importlib.util
import os
import platform
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from workflow.provenance import package_versions

# Instruction-set flags that decide which vector code torch, oneDNN and OpenBLAS run.
ISA_FLAG = re.compile(r"^(sse\d.*|ssse3|avx.*|fma.?|f16c|amx.*|asimd.*|sve.*|neon)$")
# Variables that cap the instruction set of ATen, oneDNN or MKL: they change the bits as
# another CPU would (measured for ATen and oneDNN; see the README's reproducibility section).
ISA_VARIABLES = (
    "ATEN_CPU_CAPABILITY",
    "ONEDNN_MAX_CPU_ISA",
    "DNNL_MAX_CPU_ISA",
    "MKL_ENABLE_INSTRUCTIONS",
    "MKL_CBWR",
)


# machine.cpu_isa -> the variables that cap ATen, oneDNN and MKL at that instruction set.
ISA_CAPS = {
    "avx2": {
        "ATEN_CPU_CAPABILITY": "avx2",
        "ONEDNN_MAX_CPU_ISA": "AVX2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2",
    },
}


class IsaConflict(ValueError):
    """The environment already caps the instruction set otherwise than the config asks."""


def isa_caps(cpu_isa: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The variables a job needs for ``machine.cpu_isa``; None caps nothing and leaves the
    environment to decide, as every run records."""
    if cpu_isa is None:
        return {}
    wanted = ISA_CAPS[cpu_isa]
    refuse_clashes(cpu_isa, wanted, ISA_VARIABLES, environ)
    return dict(wanted)


def refuse_clashes(
    cpu_isa: str, wanted: Mapping[str, str], names: Iterable[str], environ: Mapping[str, str]
) -> None:
    """Refuses a variable of ``names`` that ``environ`` sets otherwise than ``wanted`` (one
    left over in a shell must not change which code path the results come from)."""
    clashes = [
        f"{name}={environ[name]}"
        for name in names
        if name in environ and environ[name] != wanted.get(name)
    ]
    if clashes:
        raise IsaConflict(
            f"machine.cpu_isa {cpu_isa} sets "
            + " ".join(f"{name}={value}" for name, value in wanted.items())
            + ", but the environment has "
            + ", ".join(clashes)
            + ": unset it, or set machine.cpu_isa to null to let the environment decide"
        )


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model"):
                return value.strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> list[str]:
    """The ISA flags of the first CPU, sorted (empty where /proc/cpuinfo is unreadable)."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("flags", "Features"):
                return sorted(flag for flag in value.split() if ISA_FLAG.match(flag))
    except OSError:
        pass
    return []


def torch_capability() -> str | None:
    """The vector ISA torch dispatches its CPU kernels to (e.g. "AVX2"), if torch is here."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def mkl_cpu() -> str | None:
    """The answer MKL receives in this process when it asks which vendor's code to run:
    "intel", "zen" (AMD's) or "other"; None where torch has no MKL. It reads the answer, not
    the code taken: a torch that bound these queries inside its own library would ignore the
    preload, and only bits show that (tests/test_environment.py compares a product's bits
    with and without the preload)."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    libraries = sorted((Path(torch.__file__).parent / "lib").glob("libtorch_cpu.*"))
    return mkl_answer(ctypes.CDLL(None), [ctypes.CDLL(str(path)) for path in libraries])


MKL_QUERIES = ("mkl_serv_intel_cpu_true", "mkl_serv_cpuiszen")


def mkl_answer(global_scope: Any, torch_libraries: Iterable[Any]) -> str | None:
    """``mkl_cpu`` given the loaded libraries. Only a torch that carries MKL's queries has MKL:
    the preloaded shim (workflow/mkl.py) answers them in any process. The global scope is asked
    first, where the shim's answers stand before MKL's own."""
    libraries = list(torch_libraries)
    if not any(all(hasattr(lib, query) for query in MKL_QUERIES) for lib in libraries):
        return None
    scopes = [global_scope, *libraries]

    def ask(query: str) -> bool:
        scope = next(scope for scope in scopes if hasattr(scope, query))
        return bool(getattr(scope, query)())

    intel, zen = (ask(query) for query in MKL_QUERIES)
    return "intel" if intel else "zen" if zen else "other"


def isa_overrides() -> dict[str, str]:
    return {name: os.environ[name] for name in ISA_VARIABLES if name in os.environ}


def machine_identity() -> dict[str, Any]:
    """The torch-free part of the environment that decides a CPU's code path."""
    return {"cpu_model": cpu_model(), "cpu_flags": cpu_flags(), "isa_overrides": isa_overrides()}


def run_machine() -> dict[str, Any]:
    """What a run records of the machine that trained it: the CPU, its ISA flags, the
    capability torch dispatches to, the variables that capped it and the vendor code MKL ran."""
    return {**machine_identity(), "torch_cpu_capability": torch_capability(), "mkl_cpu": mkl_cpu()}


def machine_environment(**settings: Any) -> dict[str, Any]:
    """Packages, CPU and the given training settings (threads, kernels, device ...)."""
    return {
        **settings,
        "packages": package_versions(),
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "torch_cpu_capability": torch_capability(),
        "isa_overrides": isa_overrides(),
        "mkl_cpu": mkl_cpu(),
        "platform": platform.platform(),
    }


def today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
