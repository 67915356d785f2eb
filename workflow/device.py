"""Does the configured training device exist on this machine? (rule check_device)

    check_device("cpu")      -> {"device": "cpu", "torch": "2.x", ...}
    check_device("cuda:7")   -> ValueError: config key training.device: ... (on a 1-GPU node)

Run as a job, not in the process that parses the workflow: on a cluster training runs on
another node, and that node must have the device.
"""

from __future__ import annotations

import platform
import re
from typing import Any

import torch

from workflow.machine.environment import cpu_model

KEY = "config key training.device"
DEVICES = "cpu, cuda, cuda:N or mps"


def _facts() -> dict[str, Any]:
    cuda = torch.cuda.is_available()
    return {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cuda_available": cuda,
        "cuda_device_count": torch.cuda.device_count() if cuda else 0,
        "mps_available": torch.backends.mps.is_available(),
        "host": platform.node(),
    }


def check_device(name: str) -> dict[str, Any]:
    """What torch sees of device ``name`` here; ValueError naming training.device when it
    does not exist (or cannot hold a tensor)."""
    facts = _facts()
    here = (
        f"torch {facts['torch']} (CUDA build {facts['torch_cuda']}) on {facts['host']} sees "
        f"{facts['cuda_device_count']} CUDA device(s), MPS "
        f"{'available' if facts['mps_available'] else 'unavailable'}"
    )
    cuda = re.fullmatch(r"cuda(?::(\d+))?", name)
    if name == "cpu":
        description = cpu_model()
    elif cuda:
        index = int(cuda.group(1) or 0)
        if not facts["cuda_available"]:
            raise ValueError(f"{KEY}: {name} requested, but CUDA is not available: {here}")
        if index >= facts["cuda_device_count"]:
            raise ValueError(
                f"{KEY}: {name} requested, but there is no CUDA device {index}: {here}"
            )
        description = torch.cuda.get_device_name(index)
    elif name == "mps":
        if not facts["mps_available"]:
            raise ValueError(f"{KEY}: mps requested, but MPS is not available: {here}")
        description = "Apple MPS"
    else:
        raise ValueError(f"{KEY}: unknown device {name!r}; expected {DEVICES}")
    try:
        # Is it usable, not only listed (a driver too old for this torch fails here)?
        torch.ones(1, device=name).add_(1).cpu()
    except RuntimeError as error:
        raise ValueError(f"{KEY}: {name} is listed but unusable ({error}): {here}") from error
    return {"device": name, "device_name": description, **facts}
