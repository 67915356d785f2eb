"""The protocol's CNN: conv 32 -> act -> pool -> conv 64 -> act -> pool -> fc 128 -> act -> fc 10.

Training uses ``forward``, which max-pools *before* the activation: both activations are
monotone, so ``pool(act(z)) == act(pool(z))`` exactly, and pooling first applies the activation to
a quarter of the values. ``representations`` follows the protocol's order and exposes the
post-activation conv maps before pooling, which is what the dumps need. On the CPU, training
normally runs the same function through ``workflow.kernels.fused_forward`` instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class ModelSpec:
    conv_channels: tuple[int, int] = (32, 64)
    hidden: int = 128
    activation: str = "relu"
    leaky_slope: float = 0.01

    @classmethod
    def from_config(cls, model: dict) -> ModelSpec:
        return cls(
            conv_channels=tuple(model["conv_channels"]),
            hidden=model["hidden"],
            activation=model["activation"],
            leaky_slope=model["leaky_slope"],
        )


class HistoryNet(nn.Module):
    def __init__(self, spec: ModelSpec = ModelSpec()) -> None:
        super().__init__()
        self.spec = spec
        c1, c2 = spec.conv_channels
        # Creation order fixes how the seeded default initialisation is drawn: keep it.
        self.conv1 = nn.Conv2d(1, c1, 3, padding=1)
        self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.fc1 = nn.Linear(c2 * 7 * 7, spec.hidden)
        self.fc2 = nn.Linear(spec.hidden, 10)
        if spec.activation == "relu":
            self.act = F.relu
        elif spec.activation == "leaky_relu":
            slope = spec.leaky_slope
            self.act = lambda z: F.leaky_relu(z, slope)
        else:
            raise ValueError(f"unknown activation {spec.activation!r}")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.act(F.max_pool2d(self.conv1(x), 2))
        x = self.act(F.max_pool2d(self.conv2(x), 2))
        return self.fc2(self.act(self.fc1(x.flatten(1))))

    def representations(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Pre-activations (``*_pre``) and post-activations of every exposed layer."""
        out: dict[str, torch.Tensor] = {}
        z = self.conv1(x)
        out["conv1_pre"], out["conv1"] = z, self.act(z)
        z = self.conv2(F.max_pool2d(out["conv1"], 2))
        out["conv2_pre"], out["conv2"] = z, self.act(z)
        z = self.fc1(F.max_pool2d(out["conv2"], 2).flatten(1))
        out["fc1_pre"], out["fc1"] = z, self.act(z)
        out["logits"] = self.fc2(out["fc1"])
        return out


def build_model(seed: int, spec: ModelSpec) -> HistoryNet:
    """PyTorch default initialisation drawn from ``seed``: the shared start of both orders."""
    torch.manual_seed(seed)
    return HistoryNet(spec)


def model_state(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """A copy of the weights as C-order numpy arrays (never a view of the live tensors)."""
    return {
        name: value.detach().cpu().contiguous().numpy().copy()
        for name, value in model.state_dict().items()
    }
