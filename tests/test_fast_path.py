"""The engine's optimizations against the plain implementation of the protocol's model.

Pooling before the activation must give the same bits in training; channels_last changes the
convolution kernels' summation order, so one step may differ by float rounding only.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from workflow.model import HistoryNet, ModelSpec
from workflow.train import configure_torch

STEPS = 8


class PlainNet(HistoryNet):
    """conv -> act -> pool, literally as the protocol writes it."""

    def forward(self, x):
        return self.representations(x)["logits"]


def train(cls, activation: str, memory, steps: int) -> np.ndarray:
    configure_torch(1)
    torch.manual_seed(5)
    model = cls(ModelSpec(activation=activation)).to(memory_format=memory)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    # Background pixels at the normalized value of black make exact ties inside pooling windows.
    images = torch.randint(0, 256, (256, 1, 28, 28), generator=generator)
    images[:, :, :10] = 0
    x = (images.float().div(255) - 0.1307) / 0.3081
    y = torch.randint(0, 10, (256,), generator=generator)
    for step in range(steps):
        batch = slice(32 * step % 256, 32 * step % 256 + 32)
        opt.zero_grad()
        F.cross_entropy(model(x[batch].contiguous(memory_format=memory)), y[batch]).backward()
        opt.step()
    return np.concatenate([p.detach().contiguous().numpy().ravel() for p in model.parameters()])


@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
def test_pooling_before_the_activation_trains_to_the_same_bits(activation):
    fast = train(HistoryNet, activation, torch.channels_last, STEPS)
    plain = train(PlainNet, activation, torch.channels_last, STEPS)
    assert np.array_equal(fast, plain)


def test_channels_last_differs_from_the_plain_layout_by_rounding_only():
    fast = train(HistoryNet, "relu", torch.channels_last, 1)
    plain = train(PlainNet, "relu", torch.contiguous_format, 1)
    assert np.max(np.abs(fast - plain)) <= 1e-6 * np.max(np.abs(plain))
