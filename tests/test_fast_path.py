"""The engine's optimizations against the plain implementation of the protocol's model.

Pooling before the activation must give the same bits in training; channels_last and the fused
kernels change summation orders, so one step may differ by float rounding only.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from workflow import kernels
from workflow.machine.cbuild import BuildError
from workflow.machine.determinism import configure_torch
from workflow.model import HistoryNet, ModelSpec, build_model
from workflow.train import TrainingData, TrainSettings, train_history

STEPS = 8


class PlainNet(HistoryNet):
    """conv -> act -> pool, literally as the protocol writes it."""

    def forward(self, x):
        return self.representations(x)["logits"]


def _images_with_ties(n: int, generator: torch.Generator) -> torch.Tensor:
    """Normalized digits-like images whose black background makes exact ties in pooling windows."""
    images = torch.randint(0, 256, (n, 1, 28, 28), generator=generator)
    images[:, :, :10] = 0
    return (images.float().div(255) - 0.1307) / 0.3081


def train(cls, activation: str, memory, steps: int) -> np.ndarray:
    configure_torch(1)
    torch.manual_seed(5)
    model = cls(ModelSpec(activation=activation)).to(memory_format=memory)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    x = _images_with_ties(256, generator)
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


# The fused C kernels (workflow.kernels) against PyTorch's ops. With small integers as inputs
# and weights every sum is exact in float32, whatever its order, so values and gradients must
# match bit for bit, and tie-breaking inside pooling windows is checked exactly.


def _ties(shape, generator, low=-2, high=3) -> torch.Tensor:
    return torch.randint(low, high, shape, generator=generator).float()


def _plain_block(x, weight, bias, activation):
    act = torch.relu if activation == "relu" else (lambda z: F.leaky_relu(z, 0.25))
    return act(F.max_pool2d(F.conv2d(x, weight, bias, padding=1), 2))


@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
@pytest.mark.parametrize(("cin", "channels"), [(1, 32), (2, 20)])
def test_fused_conv_pool_matches_torch_exactly(activation, cin, channels):
    generator = torch.Generator().manual_seed(channels)
    x = _ties((6, cin, 8, 10), generator)
    weight = _ties((channels, cin, 3, 3), generator).requires_grad_()
    bias = _ties((channels,), generator).requires_grad_()
    grad = _ties((6, channels, 4, 5), generator)
    leaky = activation == "leaky_relu"
    fused = kernels.ConvPool.apply(x, weight, bias, leaky, 0.25)
    plain = _plain_block(x, weight, bias, activation)
    assert torch.equal(fused, plain)
    assert torch.equal(fused.permute(0, 2, 3, 1), fused.permute(0, 2, 3, 1).contiguous())
    fused_grads = torch.autograd.grad(fused, (weight, bias), grad)
    plain_grads = torch.autograd.grad(plain, (weight, bias), grad)
    for mine, theirs in zip(fused_grads, plain_grads, strict=True):
        assert torch.equal(mine, theirs)


@pytest.mark.parametrize("activation", ["relu", "leaky_relu"])
@pytest.mark.parametrize("channels", [64, 20])
def test_fused_pooling_matches_torch_exactly_with_ties_and_nan(activation, channels):
    generator = torch.Generator().manual_seed(channels)
    z = torch.randn(5, channels, 6, 4, generator=generator).round()  # many exact ties
    z[0, 0, 0, 1] = z[1, 3, 2, 2] = float("nan")
    z = z.contiguous(memory_format=torch.channels_last).requires_grad_()
    grad = torch.randn(5, channels * 3 * 2, generator=generator)
    act = torch.relu if activation == "relu" else (lambda v: F.leaky_relu(v, 0.25))
    fused = kernels.PoolFlat.apply(z, activation == "leaky_relu", 0.25)
    plain = act(F.max_pool2d(z, 2)).flatten(1)
    assert torch.allclose(fused, plain, rtol=0, atol=0, equal_nan=True)
    (mine,) = torch.autograd.grad(fused, z, grad)
    (theirs,) = torch.autograd.grad(plain, z, grad)
    assert torch.allclose(mine, theirs, rtol=0, atol=0, equal_nan=True)


def _train_engine(kernels_choice: str, steps: int) -> np.ndarray:
    data = _task_data()
    settings = TrainSettings(1, 32, 0.05, 0.9, 0.0, "reset", (steps,), 1, "cpu", kernels_choice)
    model = build_model(5, ModelSpec())
    train_history(model, data, "ABC", 5, settings, lambda *_: None, log=lambda _: None)
    return np.concatenate([p.detach().contiguous().numpy().ravel() for p in model.parameters()])


def _task_data() -> TrainingData:
    x = _images_with_ties(96, torch.Generator().manual_seed(2))
    idx = torch.arange(96)
    labels = idx % 10
    return TrainingData(x, labels, {"A": idx[labels < 5], "B": idx[labels >= 5], "C": idx})


def test_fused_training_agrees_with_torch_training_to_rounding():
    # Phases 1-2 (4 updates) and 1 update on C: one history's worth of small steps.
    fused, torch_ops = _train_engine("fused", 1), _train_engine("torch", 1)
    assert not np.array_equal(fused, torch_ops)  # different summation orders ...
    assert np.max(np.abs(fused - torch_ops)) <= 1e-5 * np.max(np.abs(torch_ops))  # ... only


def test_fused_training_is_deterministic():
    assert np.array_equal(_train_engine("fused", 6), _train_engine("fused", 6))


def test_a_missing_compiler_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", "no-such-compiler")
    monkeypatch.setenv("HISTRES_KERNELS", str(tmp_path))
    kernels.library.cache_clear()
    try:
        with pytest.raises(BuildError, match="no-such-compiler.*training.kernels"):
            kernels.library()
    finally:
        kernels.library.cache_clear()
