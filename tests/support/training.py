"""Training fixtures shared by the tests of the training loop, its resumable state and the
tampering cases: tiny settings and data, a model as the adapter builds it, bitwise equality of
nested states, and a segment job that can be "killed" at a chosen C batch.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

from workflow.images import normalize
from workflow.model import ModelSpec, build_model
from workflow.relaxation import BatchStream
from workflow.runs import RunId
from workflow.segment import SegmentJob, train_segment
from workflow.tasks import first_per_digit
from workflow.train import TrainingData, TrainSettings

MEAN, STD = 0.1307, 0.3081
CHECKPOINTS = (0, 5, 10)

SETTINGS = TrainSettings(
    epochs_per_task=1,
    batch_size=32,
    lr=0.05,
    momentum=0.9,
    weight_decay=0.0,
    optimizer_at_common="reset",
    checkpoints=CHECKPOINTS,
    torch_threads=1,
    device="cpu",
    kernels="fused",
)


def training_data(n: int = 256, seed: int = 0) -> TrainingData:
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % 10)
    images = normalize(rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8), MEAN, STD)
    idx = np.arange(n)
    tasks = {
        "A": torch.from_numpy(idx[labels < 5]),
        "B": torch.from_numpy(idx[labels >= 5]),
        "C": torch.from_numpy(first_per_digit(labels, 5)),
    }
    return TrainingData(images, torch.from_numpy(labels).long(), tasks)


DATA = training_data()


def states_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def fresh_model(seed: int, state: dict | None = None) -> torch.nn.Module:
    """A model built the way the adapter builds it, then loaded with a saved state."""
    model = build_model(seed, ModelSpec())
    if state is not None:
        model.load_state_dict(state["model"])
    return model


def tensors_equal(a, b) -> bool:
    """Bitwise equality of nested dicts / lists / tensors / scalars (optimizer and stream state)."""
    if isinstance(a, torch.Tensor):
        return (
            isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and np.array_equal(a.numpy(), b.numpy())
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(tensors_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(tensors_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b


# A segment job of one run (workflow.segment), as its adapter would make it.
RUN = RunId("class_split", "relu", 0.05, "reset", 0, 1, "ABC")
BASE, EXTENDED = (0, 10, 20), (30,)


class Killed(Exception):
    """Stands for SIGKILL: the job stops where it is, leaving what it wrote."""


def job(folder: Path, segment: str = "base", code: str = "code-1", state_every: int = 4):
    updates = BASE if segment == "base" else EXTENDED
    run = folder / "run"
    return SegmentJob(
        run=RUN,
        segment=segment,
        settings=dataclasses.replace(SETTINGS, checkpoints=updates),
        config={"training": {"lr": 0.05}},
        code=code,
        checkpoints={u: run / f"checkpoints/update~{u}.npz" for u in updates},
        record=run / ("run.json" if segment == "base" else "extension.json"),
        given_state=run / "state.pt" if segment == "extended" else None,
        final_state=run / "state.pt" if segment == "base" else None,
        state_every=state_every,
    )


def train(job: SegmentJob, kill_at: int | None = None) -> list[str]:
    """Run the job as its adapter does; with ``kill_at``, stop it as it draws that C batch."""
    lines: list[str] = []
    draw, drawn = BatchStream.__next__, [0]

    def killing(stream: BatchStream) -> torch.Tensor:
        drawn[0] += 1
        if drawn[0] == kill_at:
            raise Killed(kill_at)
        return draw(stream)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BatchStream, "__next__", killing)
        train_segment(job, build_model(RUN.seed, ModelSpec()), DATA, lines.append)
    return lines
