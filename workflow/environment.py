"""The machine a result was computed on, as far as it can change the bits.

    env = machine_environment(torch_threads=1)

Training is bit-reproducible only for the same torch build, thread count, kernels and device;
PyTorch's own kernels (conv2, the linear layers, oneDNN) also pick their code path from the
CPU's instruction set, so the CPU model, its ISA flags and the capability torch detects are
recorded too. torch is imported only if it is installed, so torch-free stages can call this.
"""

from __future__ import annotations

import datetime
import importlib.util
import os
import platform
import re
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


def isa_overrides() -> dict[str, str]:
    return {name: os.environ[name] for name in ISA_VARIABLES if name in os.environ}


def machine_identity() -> dict[str, Any]:
    """The torch-free part of the environment that decides a CPU's code path."""
    return {"cpu_model": cpu_model(), "cpu_flags": cpu_flags(), "isa_overrides": isa_overrides()}


def machine_environment(**settings: Any) -> dict[str, Any]:
    """Packages, CPU and the given training settings (threads, kernels, device ...)."""
    return {
        **settings,
        "packages": package_versions(),
        "cpu_model": cpu_model(),
        "cpu_flags": cpu_flags(),
        "torch_cpu_capability": torch_capability(),
        "isa_overrides": isa_overrides(),
        "platform": platform.platform(),
    }


def today() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
