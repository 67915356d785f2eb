"""The per-update loss buffer: the same float32 values a list of scalar tensors would hold."""

from __future__ import annotations

import torch

from workflow.learner import Losses


def _scalars(count: int) -> list[torch.Tensor]:
    return list(torch.randn(count, generator=torch.Generator().manual_seed(0)).unbind())


def test_values_equal_the_stacked_scalars_across_growth() -> None:
    scalars, losses = _scalars(2500), Losses()
    for loss in scalars:
        losses.append(loss)
    assert len(losses) == 2500
    assert torch.equal(losses.values(), torch.stack(scalars))
    assert torch.equal(losses.last(), scalars[-1])


def test_values_are_a_copy_of_exactly_the_losses_so_far() -> None:
    losses = Losses()
    losses.append(torch.tensor(1.5))
    values = losses.values()
    losses.append(torch.tensor(2.5))
    assert values.tolist() == [1.5] and values.untyped_storage().nbytes() == 4


def test_resumed_losses_continue_after_the_saved_ones() -> None:
    saved = torch.tensor([0.25, 0.5])
    losses = Losses(saved)
    losses.append(torch.tensor(0.75))
    saved[0] = 9.0  # the buffer must not alias the state it came from
    assert losses.values().tolist() == [0.25, 0.5, 0.75]


def test_no_losses_is_empty_and_false() -> None:
    losses = Losses()
    assert not losses and len(losses.values()) == 0
