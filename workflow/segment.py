"""One training job: a segment of a run, from where it starts to every output it declares.

    job = SegmentJob(run, "base", settings, config, code, checkpoints, record, ...)
    train_segment(job, model, data, log)

A segment starts from the initial weights ("base"), from the state the base segment left
("extended"), or, after a kill, from the job's own spare state (workflow.resume). However it
ends, every declared file is written: downstream rules need them all, and those of a diverged
run say that it never got there.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from pathlib import Path

import torch

from workflow.artifacts import save_checkpoint, write_json
from workflow.machine.environment import run_machine
from workflow.model import model_state
from workflow.provenance import canonical_json, record
from workflow.resume import ResumeState, ResumeStore
from workflow.runs import RunId
from workflow.train import (
    History,
    Hooks,
    Log,
    RunRecord,
    TrainingData,
    TrainSettings,
    run_history,
)


@dataclass(frozen=True)
class SegmentJob:
    """A job as its rule declares it. ``given_state``: the base segment's state (the extended
    segment's input); ``final_state``: where the base segment leaves its own."""

    run: RunId
    segment: str
    settings: TrainSettings
    config: dict  # the rule's config slice
    code: str  # the code version of the adapter and the library it runs
    checkpoints: dict[int, Path]
    record: Path
    given_state: Path | None
    final_state: Path | None
    # C updates between the states a killed job continues from (0: none); changes no result.
    state_every: int

    def provenance(self, **extra) -> dict:
        return record(
            self.config,
            self.code,
            **self.run.as_dict(),
            segment=self.segment,
            torch_threads=self.settings.torch_threads,
            memory_format="channels_last",
            kernels=self.settings.kernels,
            device=self.settings.device,
            # The code path PyTorch's kernels took (the CPU, and machine.cpu_isa's caps).
            machine=run_machine(),
            **extra,
        )

    def state_owner(self, segment: str) -> dict:
        """What a run's state.pt names: the run, the segment that saved it, and the training
        config it trained under (by digest); the code may be an earlier version that gives the
        same bits (make adopt-runs)."""
        config = hashlib.sha256(canonical_json(self.config).encode()).hexdigest()
        return {"run": self.run.as_dict(), "segment": segment, "config": config}

    def store(self, log: Log) -> ResumeStore:
        """The job's spare states live beside its outputs; only this same job (run, segment,
        code and config) may resume from them."""
        identity = canonical_json(
            {
                "run": self.run.as_dict(),
                "segment": self.segment,
                "code": self.code,
                "config": self.config,
            }
        )
        folder = self.record.parent / ".resume" / self.segment
        return ResumeStore(folder, identity, self.checkpoints, self.state_every, log)


def train_segment(job: SegmentJob, model: torch.nn.Module, data: TrainingData, log: Log) -> None:
    store = job.store(log)
    # The extended segment continues the base segment's state.pt of this same run only.
    given = (
        None
        if job.given_state is None
        else ResumeState.load(job.given_state, job.state_owner("base"))
    )
    start = store.start(given)
    outcome, state = None, None
    if job.given_state is not None and start is None:
        log("the base segment diverged: there is nothing to continue")
    else:
        outcome, state = _train(job, model, data, store, start)
    status = _write_outputs(job, outcome, state)
    store.clear()
    log(f"finished with status {status}")


def _train(
    job: SegmentJob,
    model: torch.nn.Module,
    data: TrainingData,
    store: ResumeStore,
    start: ResumeState | None,
) -> tuple[RunRecord, ResumeState | None]:
    settings = job.settings
    if start is not None:
        # Checkpoints before the state's update are written already (or put back by the store).
        kept = tuple(u for u in settings.checkpoints if u >= start.update)
        settings = dataclasses.replace(settings, checkpoints=kept)
        model.load_state_dict(start.model)

    def on_checkpoint(update: int, model: torch.nn.Module) -> None:
        meta = job.provenance(update=update, status="ok")
        save_checkpoint(job.checkpoints[update], model_state(model), meta)
        store.keep_checkpoint(update)

    hooks = Hooks(on_checkpoint, store.log, store.save, store.every)
    history = History(job.run.order, job.run.seed, job.run.stream)
    return run_history(model, data, history, settings, hooks, start)


def _write_outputs(job: SegmentJob, outcome: RunRecord | None, state: ResumeState | None) -> str:
    for update, path in job.checkpoints.items():
        if outcome is None or update not in outcome.checkpoints:
            save_checkpoint(path, {}, job.provenance(update=update, status="diverged"))
    summary = vars(outcome) if outcome else {"status": "diverged", "diverged_at": "base segment"}
    write_json(job.record, {**summary, "provenance": job.provenance()})
    if job.final_state is not None:
        owner = job.state_owner(job.segment)
        if state is None:
            ResumeState.save_diverged(job.final_state, owner)
        else:
            state.save(job.final_state, owner)
    return summary["status"]
