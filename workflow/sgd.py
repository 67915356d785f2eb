"""SGD with momentum exactly as ``torch.optim.SGD`` computes it, without building an Optimizer.

Building an ``Optimizer`` imports ``torch._dynamo`` (1.5 s, a tenth of a small-config training
job, paid by every job). The update here is torch's own functional (``torch.optim.sgd.sgd``),
called with the arguments ``SGD.step`` gives it, so the bits are ``torch.optim.SGD``'s on every
device; ``state_dict`` has ``SGD``'s layout, so resumable states written by either load in both.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch
from torch.optim.sgd import sgd

# The hyperparameters of an SGD param group other than the three a run sets, at torch's
# defaults; a state that differs in any of them was not made by this update rule.
FIXED = {
    "dampening": 0,
    "nesterov": False,
    "maximize": False,
    "foreach": None,
    "differentiable": False,
    "fused": None,
}


class MomentumSGD:
    """One param group: ``lr``, ``momentum`` and ``weight_decay`` over ``params``."""

    def __init__(
        self,
        params: Iterable[torch.nn.Parameter],
        *,
        lr: float,
        momentum: float,
        weight_decay: float,
    ) -> None:
        self.params = list(params)
        self.group = {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, **FIXED}
        self.buffers: list[torch.Tensor | None] = [None] * len(self.params)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        buffers = [self.buffers[i] for i in live]
        g = self.group
        sgd(
            [self.params[i] for i in live],
            [self.params[i].grad for i in live],
            buffers,
            weight_decay=g["weight_decay"],
            momentum=g["momentum"],
            lr=g["lr"],
            dampening=g["dampening"],
            nesterov=g["nesterov"],
            maximize=g["maximize"],
            has_sparse_grad=False,
            foreach=g["foreach"],
            fused=g["fused"],
        )
        if g["momentum"] != 0:
            for i, buffer in zip(live, buffers, strict=True):
                self.buffers[i] = buffer

    def state_dict(self) -> dict:
        """``torch.optim.SGD.state_dict()``'s layout: buffers by parameter index."""
        state = {i: {"momentum_buffer": b} for i, b in enumerate(self.buffers) if b is not None}
        params = list(range(len(self.params)))
        return {"state": state, "param_groups": [{**self.group, "params": params}]}

    def load_state_dict(self, saved: dict) -> None:
        """Takes the buffers of a state this update rule (or ``torch.optim.SGD`` with the same
        settings) wrote; a state of other settings is refused rather than half applied."""
        (group,) = saved["param_groups"]
        theirs = {k: v for k, v in group.items() if k != "params"}
        if theirs != self.group or group["params"] != list(range(len(self.params))):
            raise ValueError(f"optimizer state of other settings: {theirs} (here {self.group})")
        buffers: list[torch.Tensor | None] = [None] * len(self.params)
        for i, entry in saved["state"].items():
            p = self.params[int(i)]
            buffers[int(i)] = entry["momentum_buffer"].to(dtype=p.dtype, device=p.device)
        self.buffers = buffers
