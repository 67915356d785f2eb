"""Tests for workflow.model: shapes, forward/representations agreement, seeding, size."""

from __future__ import annotations

import pytest
import torch

from workflow.model import HistoryNet, ModelSpec, build_model

torch.set_num_threads(1)

SPECS = {
    "relu": ModelSpec(activation="relu"),
    "leaky_relu": ModelSpec(activation="leaky_relu", leaky_slope=0.01),
}


def _images(n: int = 6, seed: int = 0) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 28, 28, generator=generator)


@pytest.mark.parametrize("n", [1, 5])
def test_forward_output_shape(n: int) -> None:
    model = build_model(0, ModelSpec()).eval()
    with torch.no_grad():
        out = model(_images(n))
    assert out.shape == (n, 10)
    assert out.dtype == torch.float32


def test_representation_shapes_and_keys() -> None:
    model = build_model(1, ModelSpec()).eval()
    with torch.no_grad():
        reps = model.representations(_images(3))
    expected = {
        "conv1": (3, 32, 28, 28),
        "conv2": (3, 64, 14, 14),
        "fc1": (3, 128),
        "logits": (3, 10),
    }
    assert set(reps) == {
        "conv1",
        "conv1_pre",
        "conv2",
        "conv2_pre",
        "fc1",
        "fc1_pre",
        "logits",
    }
    for name, shape in expected.items():
        assert tuple(reps[name].shape) == shape, name
        if name != "logits":
            assert tuple(reps[f"{name}_pre"].shape) == shape, name


@pytest.mark.parametrize("activation", sorted(SPECS))
def test_post_activation_is_activation_of_pre(activation: str) -> None:
    model = build_model(2, SPECS[activation]).eval()
    with torch.no_grad():
        reps = model.representations(_images(4))
    for name in ("conv1", "conv2", "fc1"):
        pre = reps[f"{name}_pre"]
        if activation == "relu":
            expected = torch.relu(pre)
        else:
            expected = torch.nn.functional.leaky_relu(pre, 0.01)
        assert torch.equal(reps[name], expected), name
        # Negative pre-activations exist, so the activation actually does something.
        assert bool((pre < 0).any())
    if activation == "relu":
        assert float(reps["conv1"].min()) == 0.0
    else:
        assert float(reps["conv1"].min()) < 0.0


@pytest.mark.parametrize("activation", sorted(SPECS))
def test_forward_equals_representation_logits_bitwise(activation: str) -> None:
    model = build_model(3, SPECS[activation]).eval()
    x = _images(8)
    with torch.no_grad():
        logits = model(x)
        reps = model.representations(x)
    assert torch.equal(logits, reps["logits"])


def test_channels_last_matches_contiguous() -> None:
    model = build_model(4, ModelSpec()).eval()
    x = _images(5)
    with torch.no_grad():
        reference = model(x)
        model_cl = build_model(4, ModelSpec()).to(memory_format=torch.channels_last).eval()
        out = model_cl(x.contiguous(memory_format=torch.channels_last))
    assert model_cl.conv1.weight.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(out, reference, rtol=0, atol=1e-5)


def _state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_build_model_same_seed_is_bit_identical() -> None:
    a, b = _state(build_model(101, ModelSpec())), _state(build_model(101, ModelSpec()))
    assert a.keys() == b.keys()
    for name in a:
        assert torch.equal(a[name], b[name]), name


def test_build_model_seed_is_independent_of_prior_rng_use() -> None:
    a = _state(build_model(7, ModelSpec()))
    torch.rand(1000)  # consume global RNG state
    b = _state(build_model(7, ModelSpec()))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_build_model_different_seed_differs() -> None:
    a, b = _state(build_model(101, ModelSpec())), _state(build_model(202, ModelSpec()))
    for name in a:
        assert not torch.equal(a[name], b[name]), name


def test_activation_does_not_change_initial_weights() -> None:
    # Both activation arms of a seed must start from the same weights.
    a = _state(build_model(5, SPECS["relu"]))
    b = _state(build_model(5, SPECS["leaky_relu"]))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_parameter_count_default_spec() -> None:
    model = HistoryNet(ModelSpec())
    assert sum(p.numel() for p in model.parameters()) == 421_642
    assert [name for name, _ in model.named_parameters()] == [
        "conv1.weight",
        "conv1.bias",
        "conv2.weight",
        "conv2.bias",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]


def test_spec_from_config() -> None:
    spec = ModelSpec.from_config(
        {"conv_channels": [8, 16], "hidden": 20, "activation": "leaky_relu", "leaky_slope": 0.1}
    )
    assert spec == ModelSpec((8, 16), 20, "leaky_relu", 0.1)
    model = HistoryNet(spec).eval()
    with torch.no_grad():
        reps = model.representations(_images(2))
    assert tuple(reps["conv1"].shape) == (2, 8, 28, 28)
    assert tuple(reps["conv2"].shape) == (2, 16, 14, 14)
    assert tuple(reps["fc1"].shape) == (2, 20)


def test_unknown_activation_raises() -> None:
    with pytest.raises(ValueError, match="gelu"):
        HistoryNet(ModelSpec(activation="gelu"))
