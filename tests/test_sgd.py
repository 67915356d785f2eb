"""workflow.sgd against torch.optim.SGD: the same weights, bit for bit, and the same state."""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn.functional as F

from workflow.model import HistoryNet
from workflow.sgd import MomentumSGD


def _train(make, steps: int, weight_decay: float, resume_at: int | None = None):
    torch.manual_seed(0)
    model = HistoryNet()
    x, y = torch.randn(16, 1, 28, 28), torch.randint(0, 10, (16,))
    opt = make(model.parameters(), lr=0.05, momentum=0.9, weight_decay=weight_decay)
    for step in range(steps):
        if step == resume_at:  # a resumable state, reloaded into a fresh optimizer
            saved = copy.deepcopy(opt.state_dict())
            opt = make(model.parameters(), lr=0.05, momentum=0.9, weight_decay=weight_decay)
            opt.load_state_dict(saved)
        opt.zero_grad()
        F.cross_entropy(model(x + step), y).backward()
        opt.step()
    return model, opt


@pytest.mark.parametrize("weight_decay", [0.0, 5e-4])
def test_the_weights_are_torch_sgds_bit_for_bit(weight_decay: float) -> None:
    ours, mine = _train(MomentumSGD, 6, weight_decay, resume_at=3)
    theirs, torch_opt = _train(torch.optim.SGD, 6, weight_decay)
    for a, b in zip(ours.parameters(), theirs.parameters(), strict=True):
        assert torch.equal(a, b)
    state, reference = mine.state_dict(), torch_opt.state_dict()
    assert state["param_groups"] == reference["param_groups"]
    assert state["state"].keys() == reference["state"].keys()
    for i, entry in state["state"].items():
        assert torch.equal(entry["momentum_buffer"], reference["state"][i]["momentum_buffer"])


def test_a_torch_sgd_state_loads_and_continues_bit_for_bit() -> None:
    _, torch_opt = _train(torch.optim.SGD, 2, 0.0)
    mine = MomentumSGD(HistoryNet().parameters(), lr=0.05, momentum=0.9, weight_decay=0.0)
    mine.load_state_dict(copy.deepcopy(torch_opt.state_dict()))
    assert mine.state_dict()["param_groups"] == torch_opt.state_dict()["param_groups"]


def test_a_state_of_other_settings_is_refused() -> None:
    _, opt = _train(MomentumSGD, 1, 0.0)
    other = MomentumSGD(HistoryNet().parameters(), lr=0.01, momentum=0.9, weight_decay=0.0)
    with pytest.raises(ValueError, match="other settings"):
        other.load_state_dict(opt.state_dict())
