"""The machine a result was computed on, as far as it can change the bits.

    env = machine_environment(torch_threads=1)

Training is bit-reproducible only for the same torch build, thread count, kernels and device;
PyTorch's own kernels (conv2, the linear layers, oneDNN) also pick their code path from the
CPU's instruction set, so the CPU model, its ISA flags, the variables that capped it
(``workflow.machine.caps``), the capability torch detects and the vendor code MKL ran are
recorded too. torch and numpy are imported only where a function needs them, so torch-free
stages, and a job before its set-up (``workflow.machine.enter_job``), can import this.
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
# MKL's two questions about the CPU's vendor, and the count of them the vendor shim
# (workflow/machine/mkl.c) answered: its answers are the ones MKL ran only if MKL asked it.
MKL_QUERIES = ("mkl_serv_intel_cpu_true", "mkl_serv_cpuiszen")
SHIM_ASKED = "histres_mkl_asked"


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
    """The vendor code MKL ran in this process: "intel", "zen" (AMD's) or "other"; None where
    torch has no MKL. The vendor shim's answers count only where MKL asked it (it counts its
    answers): a shim the loader refused, or one MKL bypasses, leaves MKL its own choice, and
    that is what is recorded. Ask after MKL has run (a job's set-up runs one product)."""
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    libraries = sorted((Path(torch.__file__).parent / "lib").glob("libtorch_cpu.*"))
    return mkl_answer(ctypes.CDLL(None), [ctypes.CDLL(str(path)) for path in libraries])


def mkl_answer(global_scope: Any, torch_libraries: Iterable[Any]) -> str | None:
    """``mkl_cpu`` given the loaded libraries. Only a torch that carries MKL's queries has MKL.
    The shim answers in the global scope, before MKL's own; where it never answered, MKL's own
    functions (in torch's library) gave the answer."""
    libraries = list(torch_libraries)
    if not any(all(hasattr(lib, query) for query in MKL_QUERIES) for lib in libraries):
        return None
    asked = getattr(global_scope, SHIM_ASKED, None)
    scopes = [global_scope] if asked is not None and asked() > 0 else libraries

    def ask(query: str) -> bool:
        scope = next(scope for scope in scopes if hasattr(scope, query))
        return bool(getattr(scope, query)())

    intel, zen = (ask(query) for query in MKL_QUERIES)
    return "intel" if intel else "zen" if zen else "other"


def openblas_core() -> str | None:
    """The kernels numpy's OpenBLAS runs in this process (e.g. "Haswell"); None where numpy
    does not bundle OpenBLAS."""
    spec = importlib.util.find_spec("numpy")
    if spec is None or spec.origin is None:
        return None
    import numpy  # noqa: F401  (loads OpenBLAS, which reads OPENBLAS_CORETYPE once)

    libraries = sorted((Path(spec.origin).parents[1] / "numpy.libs").glob("libscipy_openblas*"))
    for path in libraries:
        query = getattr(ctypes.CDLL(str(path)), "scipy_openblas_get_corename64_", None)
        if query is not None:
            query.restype = ctypes.c_char_p
            return query().decode()
    return None


def isa_overrides(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    return {name: environ[name] for name in ISA_VARIABLES if name in environ}


def machine_identity(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """The torch-free part of the environment that decides a CPU's code path (in a process
    whose variables are ``environ``)."""
    return {
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "isa_overrides": isa_overrides(environ),
    }


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
