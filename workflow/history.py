"""What training a history takes and hands out: its settings, data, record, progress line and
hooks, and which history it is (order, seed, data stream).

The types sit below the engine (workflow.train, workflow.learner, workflow.relaxation), which
all import them, so that no module of the engine imports another in a cycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields

import torch

from workflow.resume import ResumeState
from workflow.tasks import stream_seed

Log = Callable[[str], None]
PROGRESS_SECONDS = 30.0


C_ORDERS = ("reshuffle", "fixed")


@dataclass(frozen=True)
class TrainSettings:
    epochs_per_task: int
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    optimizer_at_common: str
    checkpoints: tuple[int, ...]
    torch_threads: int
    device: str
    kernels: str
    # How C is ordered after each pass (config training.c_order): "reshuffle" draws a new
    # permutation, "fixed" repeats the first. The default keeps positional constructions valid.
    c_order: str = "reshuffle"

    def __post_init__(self) -> None:
        if self.c_order not in C_ORDERS:
            raise ValueError(f"c_order must be one of {C_ORDERS}, not {self.c_order!r}")

    @classmethod
    def from_config(cls, training: dict, **overrides) -> TrainSettings:
        """Settings from ``config["training"]``; a run's identity (lr, policy) may override."""
        values = {f.name: training[f.name] for f in fields(cls) if f.name in training}
        values.update(overrides)
        return cls(**{**values, "checkpoints": tuple(values["checkpoints"])})


@dataclass
class TrainingData:
    """Normalized training images (N,1,28,28), labels, and canonical indices of each task."""

    images: torch.Tensor
    labels: torch.Tensor
    tasks: dict[str, torch.Tensor]


@dataclass
class RunRecord:
    status: str = "ok"
    diverged_at: dict | None = None
    init_digest: str = ""
    phases: list[dict] = field(default_factory=list)
    checkpoints: dict[int, str] = field(default_factory=dict)


class Progress:
    """A line every PROGRESS_SECONDS (and at each checkpoint): where, how far, the last loss,
    updates/s and the ETA. Cheap to call every update: it reads the clock, nothing else."""

    def __init__(self, total: int, log: Log) -> None:
        self.total, self.log, self.start = total, log, time.perf_counter()
        self.last = self.start

    def maybe(
        self, done: int, where: str, loss: torch.Tensor | float | None, force: bool = False
    ) -> None:
        now = time.perf_counter()
        if not force and now - self.last < PROGRESS_SECONDS:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        eta = f"ETA {(self.total - done) / rate / 60:.1f} min" if rate > 0 else "ETA unknown"
        # No update since the last checkpoint (C update 0, say) has no loss to show.
        shown = "no loss yet" if loss is None else f"loss {float(loss):.4f}"
        self.log(
            f"{where}: update {done}/{self.total} ({100 * done / max(self.total, 1):.1f}%), "
            f"{shown}, {rate:.1f} updates/s, {eta}"
        )


@dataclass(frozen=True)
class History:
    """Which history a run trains: its task order, and the seed and data stream that fix every
    shuffle (the initial weights come with the model)."""

    order: str
    seed: int
    stream: int = 0

    def shuffle_seed(self, phase: str) -> int:
        return stream_seed(self.seed, self.order, phase, self.stream)


@dataclass(frozen=True)
class Hooks:
    """What training hands out as it goes. Checkpoints come in eval mode; with ``on_state``,
    a resumable state comes every ``state_every`` C updates between checkpoints."""

    on_checkpoint: Callable[[int, torch.nn.Module], None]
    log: Log = print
    on_state: Callable[[ResumeState], None] | None = None
    state_every: int = 0
