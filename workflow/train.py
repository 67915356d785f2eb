"""Train one history: task 1, task 2, then common relaxation on C, with checkpoints during C.

    record, state = train_history(model, data, "ABC", seed=101, settings=..., on_checkpoint=save)

This module holds the phase loop (tasks 1-2, then C); its settings, record and hooks are in
workflow.history, below every module of the engine. The rest of the engine: workflow.learner
(the SGD update every phase shares), workflow.relaxation (C: its endless stream, checkpoints
and resumable states), workflow.resume (the state and the store a killed job continues from)
and workflow.segment (one training job of a run, with its outputs).

Data lives in memory as normalized tensors; a batch is drawn by index from a seeded
permutation (the last partial batch is kept, as a default DataLoader does). One process trains
the whole history and hands every checkpoint to ``on_checkpoint``: importing torch costs
seconds, so there is never a process per checkpoint.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable

import torch

from workflow.artifacts import params_digest
from workflow.history import (
    History,
    Hooks,
    Log,
    Progress,
    RunRecord,
    TrainingData,
    TrainSettings,
)
from workflow.learner import Diverged, Learner, Losses, shuffled_batches
from workflow.model import model_state
from workflow.relaxation import BatchStream, Relaxation
from workflow.resume import ResumeState


def train_history(  # noqa: PLR0913 (the plain-values entry point its callers and tests use)
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
    """``run_history`` with every resumable state as the dict that torch.save writes and
    ``torch.load(..., weights_only=True)`` reads back (see workflow.resume.ResumeState)."""

    def hand_out(state: ResumeState) -> None:
        on_state(state.to_dict())

    hooks = Hooks(on_checkpoint, log, hand_out if on_state else None, state_every)
    start = None if resume is None else ResumeState.from_dict(resume)
    record, state = run_history(model, data, History(order, seed, stream), settings, hooks, start)
    return record, None if state is None else state.to_dict()


def run_history(
    model: torch.nn.Module,
    data: TrainingData,
    history: History,
    settings: TrainSettings,
    hooks: Hooks,
    resume: ResumeState | None = None,
) -> tuple[RunRecord, ResumeState | None]:
    """Train ``model`` through ``history``; return its record and resumable state.

    Without ``resume``, ``model`` holds the initial weights and training runs phases 1-2, then
    C up to the last of ``settings.checkpoints``. With ``resume``, whose weights the caller has
    loaded into ``model``, C continues from where that state stopped, bit-identically to an
    uninterrupted run; pass only the checkpoints from its update on. The state is None when
    the run diverged: the record says where.
    """
    learner = Learner(model, data, settings)
    record = RunRecord(init_digest=params_digest(model_state(model)))
    if resume is not None and resume.between is not None:
        record = RunRecord(**copy.deepcopy(resume.between.record))
    resumed_at = 0 if resume is None else resume.update
    if settings.checkpoints[0] < resumed_at:
        raise ValueError(
            f"checkpoints {settings.checkpoints} must come after the resumed update {resumed_at}"
        )
    total = max(settings.checkpoints) - resumed_at
    if resume is None:
        total += sum(_task_updates(data, task, settings) for task in history.order[:2])
    progress = Progress(total, hooks.log)
    batches = BatchStream(
        data.tasks["C"],
        settings.batch_size,
        history.shuffle_seed("common"),
        reshuffle=settings.c_order == "reshuffle",
    )
    relaxation = Relaxation(learner, batches, record, progress, hooks)
    try:
        before = 0
        if resume is None:
            before = _task_phases(learner, data, history, record, progress)
            if settings.optimizer_at_common == "reset":
                learner.reset_optimizer()
        else:
            relaxation.resume_from(resume)
        relaxation.run(settings.checkpoints, before)
    except Diverged as stop:
        record.status = "diverged"
        record.diverged_at = {"phase": stop.phase, "update": stop.update}
        hooks.log(f"diverged: {stop}")
        return record, None
    return record, relaxation.final_state()


def _task_updates(data: TrainingData, task: str, settings: TrainSettings) -> int:
    return settings.epochs_per_task * math.ceil(len(data.tasks[task]) / settings.batch_size)


def _task_phases(
    learner: Learner, data: TrainingData, history: History, record: RunRecord, progress: Progress
) -> int:
    """Phases 1-2, each task for ``epochs_per_task`` freshly shuffled epochs; returns the
    updates run. A phase's record is added as soon as it ends, so a run that diverges in
    phase 2 still records phase 1."""
    settings, done = learner.settings, 0
    for phase, task in (("phase1", history.order[0]), ("phase2", history.order[1])):
        generator = torch.Generator().manual_seed(history.shuffle_seed(phase))
        started, epoch_losses, phase_start = time.perf_counter(), [], done
        for epoch in range(settings.epochs_per_task):
            where, losses = f"{phase} task {task} epoch {epoch + 1}", Losses()
            for batch in shuffled_batches(data.tasks[task], settings.batch_size, generator):
                losses.append(learner.step(batch))
                progress.maybe(done + len(losses), where, losses.last())
            epoch_losses.append(learner.mean_loss(losses, phase, done + 1))
            done += len(losses)
        record.phases.append(
            {
                "phase": phase,
                "task": task,
                "updates": done - phase_start,
                "epoch_loss": epoch_losses,
                "seconds": time.perf_counter() - started,
            }
        )
    return done
