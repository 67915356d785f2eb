"""Common relaxation on C: the endless C stream, checkpoints, and resumable states between them.

C is where a run can be stopped and continued: at a checkpoint (the extended segment continues
from the base segment's last one) or every ``state_every`` updates between checkpoints (a
killed job continues from there). Either way the continuation draws the same batches, applies
the same updates and records the same losses as an uninterrupted run.
"""

from __future__ import annotations

import copy
import time

import torch

from workflow.artifacts import params_digest
from workflow.history import Hooks, Progress, RunRecord
from workflow.learner import Diverged, Learner, Losses, shuffled_batches
from workflow.model import model_state
from workflow.resume import BetweenCheckpoints, ResumeState


class BatchStream:
    """The endless C stream: reshuffles with its own generator each time it is exhausted, or,
    with ``reshuffle=False``, repeats its first permutation at every pass.

    Its whole position (generator state, current permutation, batch index) is a small state
    dict, so a resumed run draws exactly the batches an uninterrupted run would have.
    """

    def __init__(
        self, indices: torch.Tensor, batch_size: int, seed: int, reshuffle: bool = True
    ) -> None:
        self.indices, self.batch_size, self.reshuffle = indices, batch_size, reshuffle
        self.generator = torch.Generator().manual_seed(seed)
        self.batches: tuple[torch.Tensor, ...] = ()
        self.position = 0

    def __next__(self) -> torch.Tensor:
        if self.position == len(self.batches):
            if self.reshuffle or not self.batches:
                self.batches = shuffled_batches(self.indices, self.batch_size, self.generator)
            self.position = 0
        self.position += 1
        return self.batches[self.position - 1]

    def state_dict(self) -> dict:
        order = torch.cat(self.batches) if self.batches else torch.empty(0, dtype=torch.long)
        return {"generator": self.generator.get_state(), "order": order, "position": self.position}

    def load_state_dict(self, state: dict) -> None:
        self.generator.set_state(state["generator"])
        self.batches = tuple(state["order"].split(self.batch_size)) if len(state["order"]) else ()
        self.position = state["position"]


class Relaxation:
    """C from its start (after the task phases) or from a resumable state, checkpoint by
    checkpoint. The losses between two checkpoints are averaged into ``interval_loss``; a state
    saved between them carries the ones so far, so the resumed interval's mean is the same."""

    def __init__(
        self,
        learner: Learner,
        batches: BatchStream,
        record: RunRecord,
        progress: Progress,
        hooks: Hooks,
    ) -> None:
        self.learner, self.batches, self.record = learner, batches, record
        self.progress, self.hooks = progress, hooks
        self.resumed_at = 0  # the C update this job started from
        self.pending = Losses()  # losses since the last checkpoint, from a state
        self.interval_loss: dict[int, float] = {}
        self.previous = 0  # the last checkpoint passed: the current interval starts after it
        self.first_c = 0  # where this segment's C started: its record counts updates from there
        self.before = 0  # updates this job ran before C, for the progress lines
        self.last = 0

    def resume_from(self, state: ResumeState) -> None:
        """Continue where ``state`` stopped; the caller has loaded its weights into the model."""
        # A copy: SGD updates its momentum buffers in place, and the caller's state must
        # stay the state it was.
        self.learner.optimizer.load_state_dict(copy.deepcopy(state.optimizer))
        self.batches.load_state_dict(state.stream)
        self.resumed_at = state.update
        between = state.between
        if between is not None:
            self.pending = Losses(between.pending_losses)
            self.interval_loss = dict(between.interval_loss)
        self.previous = state.update - len(self.pending)
        self.first_c = self.previous if between is None else between.first_c

    def run(self, checkpoints: tuple[int, ...], before: int) -> None:
        self.last, self.before = max(checkpoints), before
        started = time.perf_counter()
        for checkpoint in checkpoints:
            self._close_interval(checkpoint, self._losses_up_to(checkpoint))
        self.record.phases.append(
            {
                "phase": "common",
                "task": "C",
                "updates": self.last - self.first_c,
                "interval_loss": self.interval_loss,
                "seconds": time.perf_counter() - started,
            }
        )

    def final_state(self) -> ResumeState:
        """The state at the last checkpoint, for the next segment to continue from."""
        return ResumeState(
            update=self.last,
            model=self.learner.weights(),
            # No copy: training is over, nothing changes these buffers any more.
            optimizer=self.learner.optimizer.state_dict(),
            stream=self.batches.state_dict(),
        )

    @property
    def _saves_states(self) -> bool:
        return bool(self.hooks.on_state and self.hooks.state_every)

    def _losses_up_to(self, checkpoint: int) -> Losses:
        """The losses of the interval ending at ``checkpoint`` (with those a resumed state
        brought), handing out a state at every multiple of ``state_every`` on the way."""
        losses, self.pending = self.pending, Losses()
        while self.previous + len(losses) < checkpoint:
            at = self.previous + len(losses)
            todo = checkpoint - at
            if self._saves_states:
                todo = min(todo, self.hooks.state_every - at % self.hooks.state_every)
            self._updates(todo, losses)
            at = self.previous + len(losses)
            if self._saves_states and at % self.hooks.state_every == 0 and at < checkpoint:
                self.learner.mean_loss(losses, "common", self.previous + 1)  # never save NaNs
                self.hooks.on_state(self._snapshot(at, losses))
        return losses

    def _updates(self, count: int, losses: Losses) -> None:
        for _ in range(count):
            losses.append(self.learner.step(next(self.batches)))
            at = self.previous + len(losses)
            self.progress.maybe(self._job_updates(at), f"common C {at}/{self.last}", losses.last())

    def _close_interval(self, checkpoint: int, losses: Losses) -> None:
        if losses:
            self.interval_loss[checkpoint] = self.learner.mean_loss(
                losses, "common", self.previous + 1
            )
        elif not self.learner.finite():
            raise Diverged("common", checkpoint)
        self.previous = checkpoint
        model = self.learner.model
        # Checkpoints are handed over in eval mode: dumps must not see train-mode behaviour.
        model.eval()
        self.hooks.on_checkpoint(checkpoint, model)
        model.train()
        self.record.checkpoints[checkpoint] = params_digest(model_state(model))
        self.progress.maybe(
            self._job_updates(checkpoint),
            f"common C {checkpoint}/{self.last}",
            self.interval_loss.get(checkpoint),
            force=True,
        )

    def _job_updates(self, at: int) -> int:
        """Updates this job has run when C reaches ``at``: the progress lines count those."""
        return self.before + at - self.resumed_at

    def _snapshot(self, update: int, losses: Losses) -> ResumeState:
        return ResumeState(
            update=update,
            model=self.learner.weights(),
            optimizer=copy.deepcopy(self.learner.optimizer.state_dict()),
            stream=self.batches.state_dict(),
            between=BetweenCheckpoints(
                pending_losses=losses.values(),
                interval_loss=dict(self.interval_loss),
                first_c=self.first_c,
                record=copy.deepcopy(vars(self.record)),
            ),
        )
