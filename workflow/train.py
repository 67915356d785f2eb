"""Train one history: task 1, task 2, then common relaxation on C, with checkpoints during C.

    record = train_history(model, data, order="ABC", seed=101, settings=..., on_checkpoint=save)

Data lives in memory as normalized tensors; a batch is drawn by index from a seeded
permutation (the last partial batch is kept, as a default DataLoader does). One process trains
the whole history and hands every checkpoint to ``on_checkpoint``: importing torch costs
seconds, so there is never a process per checkpoint.
"""

from __future__ import annotations

import copy
import ctypes
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.deterministic

from workflow.artifacts import params_digest
from workflow.heap import HEAP_ENVIRONMENT
from workflow.kernels import fused_forward
from workflow.tasks import stream_seed

Log = Callable[[str], None]
PROGRESS_SECONDS = 30.0


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


class Diverged(Exception):
    """``update`` counts from the start of training in phases 1-2, from the start of C in C."""

    def __init__(self, phase: str, update: int) -> None:
        super().__init__(f"non-finite loss or weights in {phase} at update {update}")
        self.phase, self.update = phase, update


def configure_torch(threads: int) -> None:
    """Deterministic kernels and a fixed thread count: the conditions for bit-exact reruns."""
    torch.set_num_threads(threads)
    # cuBLAS is deterministic only with a fixed workspace; it must be set before CUDA starts.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    # The public torch.use_deterministic_algorithms also imports torch._inductor to set its
    # flag, which costs about 1.5 s per job; nothing here compiles, so set the core flag alone.
    if hasattr(torch._C, "_set_deterministic_algorithms"):
        torch._C._set_deterministic_algorithms(True, warn_only=False)
    else:
        torch.use_deterministic_algorithms(True)
    if not torch.are_deterministic_algorithms_enabled():
        raise RuntimeError("torch refused deterministic algorithms")
    # Deterministic mode otherwise fills every new tensor with NaN, which costs time and
    # changes no result of a kernel that writes its whole output.
    torch.utils.deterministic.fill_uninitialized_memory = False
    _keep_heap()


# HEAP_ENVIRONMENT (workflow.heap): jobs get it before Python starts (rules/common.smk);
# _keep_heap applies it at run time to processes started any other way.


def _keep_heap() -> None:
    if all(os.environ.get(key) == value for key, value in HEAP_ENVIRONMENT.items()):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    options = {"MALLOC_TRIM_THRESHOLD_": -1, "MALLOC_TOP_PAD_": -2, "MALLOC_MMAP_THRESHOLD_": -3}
    for key, value in HEAP_ENVIRONMENT.items():
        libc.mallopt(options[key], int(value))


def normalize(images: np.ndarray, mean: float, std: float) -> torch.Tensor:
    """uint8 (N,28,28) -> float32 (N,1,28,28), bit-identical to ToTensor() + Normalize()."""
    x = torch.from_numpy(np.ascontiguousarray(images)).unsqueeze(1)
    return (x.float().div(255) - mean) / std


def model_state(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """A copy of the weights as C-order numpy arrays (never a view of the live tensors)."""
    return {
        name: value.detach().cpu().contiguous().numpy().copy()
        for name, value in model.state_dict().items()
    }


def _batches(indices: torch.Tensor, batch_size: int, generator: torch.Generator):
    order = indices[torch.randperm(len(indices), generator=generator)]
    return order.split(batch_size)


class BatchStream:
    """The endless C stream: reshuffles with its own generator each time it is exhausted.

    Its whole position (generator state, current permutation, batch index) is a small state
    dict, so a resumed run draws exactly the batches an uninterrupted run would have.
    """

    def __init__(self, indices: torch.Tensor, batch_size: int, seed: int) -> None:
        self.indices, self.batch_size = indices, batch_size
        self.generator = torch.Generator().manual_seed(seed)
        self.batches: tuple[torch.Tensor, ...] = ()
        self.position = 0

    def __next__(self) -> torch.Tensor:
        if self.position == len(self.batches):
            self.batches, self.position = _batches(self.indices, self.batch_size, self.generator), 0
        self.position += 1
        return self.batches[self.position - 1]

    def state_dict(self) -> dict:
        order = torch.cat(self.batches) if self.batches else torch.empty(0, dtype=torch.long)
        return {"generator": self.generator.get_state(), "order": order, "position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self.batches = tuple(state["order"].split(self.batch_size)) if len(state["order"]) else ()
        self.position = state["position"]


class _Progress:
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


def _finite(model: torch.nn.Module) -> bool:
    return all(bool(torch.isfinite(p).all()) for p in model.parameters())


def train_history(
    model: torch.nn.Module,
    data: TrainingData,
    order: str,
    seed: int,
    settings: TrainSettings,
    on_checkpoint: Callable[[int, torch.nn.Module], None],
    log: Log = print,
    stream: int = 0,
    resume: dict | None = None,
    on_state: Callable[[dict], None] | None = None,
    state_every: int = 0,
) -> tuple[RunRecord, dict | None]:
    """Train ``model`` through the history ``order``; return its record and resumable state.

    Without ``resume``, ``model`` holds the initial weights and training runs phases 1-2, then
    C up to the last of ``settings.checkpoints``. With ``resume`` (a state returned earlier),
    C continues from where that state stopped, bit-identically to an uninterrupted run. The
    state is None when the run diverged. With ``on_state``, a resumable state (the same kind,
    plus the record so far) is handed over every ``state_every`` C updates between checkpoints,
    so a killed job can continue from it; pass only the checkpoints after its update then.
    """
    device = torch.device(settings.device)
    memory = torch.channels_last
    model.to(device=device, memory_format=memory).train()
    forward = partial(fused_forward, model) if settings.kernels == "fused" else model
    images = data.images.to(device)
    labels = data.labels.to(device)
    record = RunRecord(init_digest=params_digest(model_state(model)))
    if resume and "record" in resume:
        record = RunRecord(**copy.deepcopy(resume["record"]))

    def optimizer() -> torch.optim.Optimizer:
        return torch.optim.SGD(
            model.parameters(),
            lr=settings.lr,
            momentum=settings.momentum,
            weight_decay=settings.weight_decay,
        )

    def step(opt: torch.optim.Optimizer, batch: torch.Tensor) -> torch.Tensor:
        batch = batch.to(device)
        x = images.index_select(0, batch).contiguous(memory_format=memory)
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(forward(x), labels.index_select(0, batch))
        loss.backward()
        opt.step()
        return loss.detach()

    def mean_loss(losses: list[torch.Tensor], phase: str, first_update: int) -> float:
        values = torch.stack(losses).double().cpu().numpy()
        bad = np.flatnonzero(~np.isfinite(values))
        if len(bad) or not _finite(model):
            at = first_update + (int(bad[0]) if len(bad) else len(values) - 1)
            raise Diverged(phase, at)
        return float(values.mean())

    def resumable(update: int, optimizer_state: dict) -> dict:
        """Everything C needs to continue from ``update`` as if it had never stopped."""
        return {
            "update": update,
            "model": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            "optimizer": optimizer_state,
            "stream": batches.state_dict(),
        }

    def task_updates(task: str) -> int:
        return math.ceil(len(data.tasks[task]) / settings.batch_size)

    resumed_at = resume["update"] if resume else 0
    if settings.checkpoints[0] < resumed_at:
        raise ValueError(
            f"checkpoints {settings.checkpoints} must come after the resumed update {resumed_at}"
        )
    # A state saved between checkpoints carries the losses since the last one.
    pending = (
        list(resume["pending_losses"].unbind()) if resume and "pending_losses" in resume else []
    )
    previous = resumed_at - len(pending)
    common_updates = max(settings.checkpoints)
    total = common_updates - resumed_at
    if resume is None:
        total += settings.epochs_per_task * (task_updates(order[0]) + task_updates(order[1]))
    progress = _Progress(total, log)
    done = 0
    opt = optimizer()
    batches = BatchStream(
        data.tasks["C"], settings.batch_size, stream_seed(seed, order, "common", stream)
    )
    try:
        if resume is None:
            for phase, task in (("phase1", order[0]), ("phase2", order[1])):
                generator = torch.Generator().manual_seed(stream_seed(seed, order, phase, stream))
                started, epoch_losses, phase_start = time.perf_counter(), [], done
                for epoch in range(settings.epochs_per_task):
                    first, losses = done + 1, []
                    where = f"{phase} task {task} epoch {epoch + 1}"
                    for b in _batches(data.tasks[task], settings.batch_size, generator):
                        losses.append(step(opt, b))
                        progress.maybe(done + len(losses), where, losses[-1])
                    done += len(losses)
                    epoch_losses.append(mean_loss(losses, phase, first))
                record.phases.append(
                    {
                        "phase": phase,
                        "task": task,
                        "updates": done - phase_start,
                        "epoch_loss": epoch_losses,
                        "seconds": time.perf_counter() - started,
                    }
                )
            if settings.optimizer_at_common == "reset":
                opt = optimizer()
        else:
            # A copy: SGD updates its momentum buffers in place, and the caller's state must
            # stay the state it was.
            opt.load_state_dict(copy.deepcopy(resume["optimizer"]))
            batches.load_state_dict(resume["stream"])

        started = time.perf_counter()
        interval_loss = dict(resume.get("interval_loss", {})) if resume else {}
        first_c = resume.get("first_c", previous) if resume else previous

        def snapshot(update: int, losses: list[torch.Tensor]) -> dict:
            return {
                **resumable(update, copy.deepcopy(opt.state_dict())),
                "pending_losses": torch.stack(losses).cpu() if losses else torch.empty(0),
                "interval_loss": dict(interval_loss),
                "first_c": first_c,
                "record": copy.deepcopy(vars(record)),
            }

        for checkpoint in settings.checkpoints:
            # Losses of this interval so far: a resumed state brings those it had.
            losses, pending = pending, []
            while previous + len(losses) < checkpoint:
                todo = checkpoint - previous - len(losses)
                if on_state and state_every:
                    todo = min(todo, state_every - (previous + len(losses)) % state_every)
                for _ in range(todo):
                    losses.append(step(opt, next(batches)))
                    at = previous + len(losses)
                    progress.maybe(
                        done + at - max(previous, resumed_at),
                        f"common C {at}/{common_updates}",
                        losses[-1],
                    )
                at = previous + len(losses)
                if on_state and state_every and at % state_every == 0 and at < checkpoint:
                    mean_loss(losses, "common", previous + 1)  # never save a diverged state
                    on_state(snapshot(at, losses))
            if losses:
                interval_loss[checkpoint] = mean_loss(losses, "common", previous + 1)
            elif not _finite(model):
                raise Diverged("common", checkpoint)
            done += checkpoint - max(previous, resumed_at)
            previous = checkpoint
            model.eval()
            on_checkpoint(checkpoint, model)
            model.train()
            record.checkpoints[checkpoint] = params_digest(model_state(model))
            progress.maybe(
                done,
                f"common C {checkpoint}/{common_updates}",
                interval_loss.get(checkpoint),
                force=True,
            )
        record.phases.append(
            {
                "phase": "common",
                "task": "C",
                "updates": common_updates - first_c,
                "interval_loss": interval_loss,
                "seconds": time.perf_counter() - started,
            }
        )
    except Diverged as stop:
        record.status = "diverged"
        record.diverged_at = {"phase": stop.phase, "update": stop.update}
        log(f"diverged: {stop}")
        return record, None
    return record, resumable(common_updates, opt.state_dict())
