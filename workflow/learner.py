"""What every phase of a history shares: the model on its device, its optimizer, one SGD update.

The task phases (workflow.train) and C (workflow.relaxation) draw their batches differently but
must update the weights, and decide that a run diverged, in exactly the same way: both go
through one ``Learner``.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

from workflow.history import TrainingData, TrainSettings
from workflow.kernels import fused_forward
from workflow.sgd import MomentumSGD

MEMORY_FORMAT = torch.channels_last


class Diverged(Exception):
    """``update`` counts from the start of training in phases 1-2, from the start of C in C."""

    def __init__(self, phase: str, update: int) -> None:
        super().__init__(f"non-finite loss or weights in {phase} at update {update}")
        self.phase, self.update = phase, update


def shuffled_batches(
    indices: torch.Tensor, batch_size: int, generator: torch.Generator
) -> tuple[torch.Tensor, ...]:
    """One pass over ``indices`` in a seeded order; the last partial batch is kept, as a default
    DataLoader keeps it."""
    order = indices[torch.randperm(len(indices), generator=generator)]
    return order.split(batch_size)


class Losses:
    """The per-update losses of an interval, kept on the device in one buffer that doubles when
    full.

    Not a list of the scalar tensors ``step`` returns: tens of thousands of small live
    allocations, scattered through the heap that each step's activations are freed into, kept
    it from being reused (measured: +0.3 GB of RSS per 1,000 updates, 15 GB over an extended
    segment's 25,000-update interval; flat with this buffer).
    """

    def __init__(self, values: torch.Tensor | None = None) -> None:
        self._buffer = torch.empty(0) if values is None else values.clone()
        self._count = len(self._buffer)

    def append(self, loss: torch.Tensor) -> None:
        if self._count == len(self._buffer):
            grown = torch.empty(max(1024, 2 * self._count), dtype=loss.dtype, device=loss.device)
            grown[: self._count] = self._buffer[: self._count]
            self._buffer = grown
        self._buffer[self._count] = loss
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def last(self) -> torch.Tensor:
        return self._buffer[self._count - 1]

    def values(self) -> torch.Tensor:
        """A copy on the CPU, of exactly the losses so far (never a view of the buffer)."""
        return self._buffer[: self._count].to("cpu", copy=True)


class Learner:
    """The model moved to its device and memory format, with the data it indexes batches from.

    The optimizer is an attribute because C may start with a fresh one ("reset") or with the
    one the task phases built up ("preserve"), or with one loaded from a resumable state.
    """

    def __init__(self, model: torch.nn.Module, data: TrainingData, settings: TrainSettings):
        self.settings = settings
        self.device = torch.device(settings.device)
        self.model = model.to(device=self.device, memory_format=MEMORY_FORMAT).train()
        self.forward = partial(fused_forward, model) if settings.kernels == "fused" else model
        self.images = data.images.to(self.device)
        self.labels = data.labels.to(self.device)
        self.optimizer = self.fresh_optimizer()

    def fresh_optimizer(self) -> MomentumSGD:
        return MomentumSGD(
            self.model.parameters(),
            lr=self.settings.lr,
            momentum=self.settings.momentum,
            weight_decay=self.settings.weight_decay,
        )

    def reset_optimizer(self) -> None:
        """C under the "reset" policy starts without the momentum the task phases left."""
        self.optimizer = self.fresh_optimizer()

    def step(self, batch: torch.Tensor) -> torch.Tensor:
        """One update on the images ``batch`` indexes; the loss stays on the device (reading it
        back every update would synchronise a GPU)."""
        batch = batch.to(self.device)
        x = self.images.index_select(0, batch).contiguous(memory_format=MEMORY_FORMAT)
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.forward(x), self.labels.index_select(0, batch))
        loss.backward()
        self.optimizer.step()
        return loss.detach()

    def finite(self) -> bool:
        return all(bool(torch.isfinite(p).all()) for p in self.model.parameters())

    def mean_loss(self, losses: Losses, phase: str, first_update: int) -> float:
        """The mean of losses checked once per interval rather than per update (each check reads
        the device); a diverged run is dated to its first non-finite loss, or to the interval's
        last update when only the weights went non-finite."""
        values = losses.values().double().numpy()
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad) or not self.finite():
            at = first_update + (int(bad[0]) if len(bad) else len(values) - 1)
            raise Diverged(phase, at)
        return float(values.mean())

    def weights(self) -> dict[str, torch.Tensor]:
        """A CPU copy of the weights for a resumable state (torch.save keeps them tensors)."""
        return {k: v.detach().cpu().clone() for k, v in self.model.state_dict().items()}
