"""Resumable states of training, and the store that lets a killed training job continue.

    state.save(path, owner={"run": ..., "segment": "base"})
    state = ResumeState.load(path, owner)  # None: the segment that saved it diverged
    store = ResumeStore(folder, identity, checkpoints, every=2500, log=log)
    start = store.start(given=state)      # the job's own spare state after a kill, else given

A state is a plain dict on disk (torch.save, read back with ``weights_only=True``): tensors,
numbers and strings only, so loading one runs no code. It names its owner (the run and segment
that saved it) and carries the SHA-256 of its content: a state copied from another run, or
damaged, is refused when it is loaded, as checkpoints are.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import shutil
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from workflow.artifacts import ArtifactError, atomic_path

# What a diverged segment leaves for the next one: there is nothing to continue.
DIVERGED = {"update": None}
# Keys a state file adds to the state itself: who saved it, and the digest of the rest.
OWNER, DIGEST = "owner", "sha256"
REBUILD = "delete it and rerun the job that writes it (rule train_history, for a run's state.pt)"


class StateError(ArtifactError):
    """A state file that cannot be continued from: damaged, or saved by older code."""


class NotItsState(StateError):
    """A sound state, but one saved by another run, segment, config or code version."""


@dataclass(frozen=True)
class BetweenCheckpoints:
    """What a state saved between two checkpoints carries beyond the weights, so that the
    resumed run also records what the uninterrupted one records: the losses since the last
    checkpoint, the mean loss of each interval already closed, the C update this segment
    started from, and the run's record so far (as a dict of RunRecord's fields)."""

    pending_losses: torch.Tensor
    interval_loss: dict[int, float]
    first_c: int
    record: dict


@dataclass(frozen=True)
class ResumeState:
    """Everything C needs to continue from ``update`` as if it had never stopped.

    Frozen, but its dicts are the live ones handed over: whoever continues from a state copies
    what it would change, so that one state can be resumed twice.
    """

    update: int
    model: dict[str, torch.Tensor]
    optimizer: dict
    stream: dict
    between: BetweenCheckpoints | None = None
    # Which job saved it (run, code, config): a spare state is only ever resumed by that job.
    identity: str | None = None

    def to_dict(self) -> dict[str, Any]:
        state = {
            "update": self.update,
            "model": self.model,
            "optimizer": self.optimizer,
            "stream": self.stream,
        }
        if self.between is not None:
            state.update(_fields(self.between))
        if self.identity is not None:
            state["identity"] = self.identity
        return state

    @classmethod
    def from_dict(cls, state: Mapping[str, Any]) -> ResumeState:
        between = None
        if "record" in state:
            between = BetweenCheckpoints(
                **{f.name: state[f.name] for f in dataclasses.fields(BetweenCheckpoints)}
            )
        return cls(
            update=state["update"],
            model=state["model"],
            optimizer=state["optimizer"],
            stream=state["stream"],
            between=between,
            identity=state.get("identity"),
        )

    def save(self, path: str | Path, owner: Mapping[str, Any]) -> None:
        """Save, naming ``owner`` (the run and segment saving it, as plain values)."""
        _save(path, self.to_dict(), owner)

    @classmethod
    def load(cls, path: str | Path, owner: Mapping[str, Any]) -> ResumeState | None:
        """The state saved at ``path`` by ``owner``; None where the segment that saved it
        diverged. StateError where the file is damaged or carries no digest; NotItsState
        where another owner saved it."""
        state = _load(path, owner)
        return None if state["update"] is None else cls.from_dict(state)

    @staticmethod
    def save_diverged(path: str | Path, owner: Mapping[str, Any]) -> None:
        _save(path, DIVERGED, owner)


def _fields(between: BetweenCheckpoints) -> dict[str, Any]:
    # Not dataclasses.asdict, which would deep-copy every tensor.
    return {f.name: getattr(between, f.name) for f in dataclasses.fields(between)}


def _save(path: str | Path, state: Mapping[str, Any], owner: Mapping[str, Any]) -> None:
    sealed = {**state, OWNER: dict(owner)}
    sealed[DIGEST] = state_digest(sealed)
    # Atomic: a job killed while saving leaves the previous state, never half of one.
    with atomic_path(path) as tmp:
        torch.save(sealed, tmp)


def _load(path: str | Path, owner: Mapping[str, Any]) -> dict[str, Any]:
    try:
        state = torch.load(path, weights_only=True)
    except Exception as error:  # torch raises many kinds for a damaged file
        raise StateError(f"{path}: not a readable state ({error}); {REBUILD}") from error
    if not isinstance(state, dict) or DIGEST not in state or OWNER not in state:
        raise StateError(f"{path}: carries no owner or digest (saved by older code); {REBUILD}")
    stored = state.pop(DIGEST)
    found = state_digest(state)
    if found != stored:
        raise StateError(
            f"{path}: content does not match the SHA-256 stored with it ({str(stored)[:12]}... "
            f"stored, {found[:12]}... computed): the file is damaged; {REBUILD}"
        )
    saved_by = state.pop(OWNER)
    if saved_by != dict(owner):
        raise NotItsState(
            f"{path}: saved by {saved_by}, not by {dict(owner)}: it cannot continue this "
            f"job; {REBUILD}"
        )
    return state


def state_digest(value: Any) -> str:
    """SHA-256 of a state's content: keys in their order, tensors by dtype, shape and bytes,
    numbers exactly; the same before torch.save and after torch.load."""
    digest = hashlib.sha256()
    _feed(digest, value)
    return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    if isinstance(value, torch.Tensor):
        flat = value.detach().cpu().contiguous().reshape(-1)
        digest.update(f"t{value.dtype}{tuple(value.shape)}".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes())
    elif isinstance(value, Mapping):
        digest.update(f"d{len(value)}".encode())
        for key, item in value.items():
            _feed(digest, key)
            _feed(digest, item)
    elif isinstance(value, list | tuple):
        digest.update(f"l{len(value)}".encode())
        for item in value:
            _feed(digest, item)
    elif isinstance(value, bool) or value is None:
        digest.update(f"c{value}".encode())
    elif isinstance(value, int):
        digest.update(f"i{value}".encode())
    elif isinstance(value, float):
        digest.update(b"f" + struct.pack("<d", value))
    elif isinstance(value, str):
        encoded = value.encode()
        digest.update(f"s{len(encoded)}:".encode() + encoded)
    else:
        raise TypeError(f"a resumable state holds no {type(value).__name__}")


class ResumeStore:
    """A training job's spare state and checkpoints, in ``folder`` beside its outputs.

    They cannot be outputs: Snakemake removes an incomplete job's outputs before rerunning it,
    so the checkpoints written before a kill are kept here too and put back on resume. Every
    ``every`` C updates the job saves a state here (never, with 0); the job clears the folder
    once its outputs are written.
    """

    def __init__(
        self,
        folder: Path,
        identity: str,
        checkpoints: Mapping[int, Path],
        every: int,
        log: Callable[[str], None],
    ) -> None:
        self.folder, self.identity, self.checkpoints = folder, identity, checkpoints
        self.every, self.log = every, log
        self.state_path = folder / "state.pt"

    def start(self, given: ResumeState | None) -> ResumeState | None:
        """Where the job starts: the spare state a killed run of this same job left, with the
        checkpoints written before the kill put back among the outputs; otherwise ``given``.
        A state saved by another config or code version would continue another run."""
        if not self.state_path.exists():
            return given
        try:
            saved = ResumeState.load(self.state_path, self.owner)
        except NotItsState:
            saved = None
        except StateError as error:  # damaged: the job starts over, as without a state
            self.log(f"ignoring {error}")
            return given
        if saved is None or saved.identity != self.identity:
            self.log(f"ignoring {self.state_path}: it was saved by another config or code version")
            return given
        for update in saved.between.record["checkpoints"]:
            shutil.copy2(self.folder / f"update~{update}.npz", self.checkpoints[int(update)])
        self.log(f"resuming from the state saved at C update {saved.update}")
        return saved

    def keep_checkpoint(self, update: int) -> None:
        """A spare copy of the checkpoint just written, for a rerun after a kill (only where
        states are saved: without one, a rerun starts over and writes every checkpoint)."""
        if self.every:
            self.folder.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.checkpoints[update], self.folder / f"update~{update}.npz")

    @property
    def owner(self) -> dict[str, str]:
        """A spare state's owner: this job, by its identity (run, segment, code, config)."""
        return {"job": self.identity}

    def save(self, state: ResumeState) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        dataclasses.replace(state, identity=self.identity).save(self.state_path, self.owner)
        self.log(f"resumable state saved at C update {state.update}")

    def clear(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            self.folder.parent.rmdir()  # only once no other segment's states are left
