"""workflow.device: the check behind rule check_device (does training.device exist here?)."""

from __future__ import annotations

import pytest
import torch

from workflow.device import check_device

CUDA_DEVICES = torch.cuda.device_count() if torch.cuda.is_available() else 0


def test_the_cpu_always_exists() -> None:
    found = check_device("cpu")
    assert found["device"] == "cpu"
    assert found["torch"] == torch.__version__
    assert found["cuda_available"] is torch.cuda.is_available()
    assert found["cuda_device_count"] == CUDA_DEVICES
    assert isinstance(found["device_name"], str) and found["device_name"]
    assert found["host"]


@pytest.mark.skipif(CUDA_DEVICES > 7, reason="this machine has a CUDA device 7")
def test_a_missing_cuda_device_is_refused_naming_the_key() -> None:
    with pytest.raises(ValueError, match=r"^config key training\.device: cuda:7 requested") as e:
        check_device("cuda:7")
    # Says what this machine has, so the message is enough to act on.
    assert torch.__version__ in str(e.value)
    assert f"{CUDA_DEVICES} CUDA device(s)" in str(e.value)


@pytest.mark.skipif(CUDA_DEVICES > 0, reason="this machine has CUDA")
def test_cuda_without_cuda_is_refused() -> None:
    with pytest.raises(ValueError, match=r"config key training\.device: cuda requested, but CUDA"):
        check_device("cuda")


@pytest.mark.skipif(CUDA_DEVICES == 0, reason="no CUDA device here")
def test_an_existing_cuda_device_is_described() -> None:
    found = check_device("cuda:0")
    assert found["device_name"] == torch.cuda.get_device_name(0)


@pytest.mark.skipif(torch.backends.mps.is_available(), reason="this machine has MPS")
def test_mps_without_mps_is_refused() -> None:
    with pytest.raises(ValueError, match=r"config key training\.device: mps requested"):
        check_device("mps")


@pytest.mark.parametrize("name", ["tpu", "gpu", "cuda:x", ""])
def test_an_unknown_device_is_refused_naming_the_key(name) -> None:
    with pytest.raises(ValueError, match=r"config key training\.device: unknown device"):
        check_device(name)
