"""What a study of a reference folder still needs: the training jobs of its seeds whose pair
results are not in yet, and the hours they take, timed by the folder's own runs.csv.

A job is a run's segment (``base``, or ``extended`` for the long horizon). It is timed at the
median wall time of the finished jobs in runs.csv of the same protocol and segment that ran
from the start (a resumed job's wall time leaves out the killed job's), and the jobs run two at
a time on 2 cores, as the reference's were timed: its training jobs are single-threaded and ran
two side by side. Dumps and comparisons (about half a minute a run) are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import progress
from workflow.artifacts import read_csv
from workflow.identity import RunId

# The reference's training jobs ran two at a time on 2 cores (one thread each).
CORES = 2
Job = tuple[RunId, str]


@dataclass(frozen=True)
class Kind:
    """Training jobs of one protocol and segment, timed by runs.csv's finished ones."""

    protocol: str
    segment: str
    jobs: int
    timed: int
    median_s: float


@dataclass(frozen=True)
class Remaining:
    """The seeds a study still needs and their training jobs, by kind."""

    study: str
    seeds_left: int
    kinds: tuple[Kind, ...]

    @property
    def jobs(self) -> int:
        return sum(kind.jobs for kind in self.kinds)

    @property
    def hours(self) -> float:
        """Hours of training on ``CORES`` cores; nan when some kind has no job to time it by."""
        return sum(kind.jobs * kind.median_s for kind in self.kinds) / CORES / 3600


def trained(runs: pd.DataFrame) -> set[Job]:
    """The jobs runs.csv lists."""
    return {
        (
            RunId(
                protocol=row.protocol,
                act=row.act,
                lr=float(row.lr),
                optim=row.optim,
                stream=int(row.stream),
                seed=int(row.seed),
                order=row.order,
                variant=row.variant,
            ),
            row.segment,
        )
        for row in runs.itertuples(index=False)
    }


def jobs_left(folder: Path, config: Mapping[str, Any], study: str) -> tuple[int, set[Job]]:
    """(seeds not complete, the training jobs they need that runs.csv does not list)."""
    pairs, probes = progress.held(folder)
    lr = progress.activation_lr(config, pairs, progress.searched_lr(folder))
    source = "main" if study == "probes" else study
    needed: set[Job] = set()
    left = 0
    for seed in progress.study_seeds(config, study):
        wanted = progress.needs(config, source, seed, lr)
        done = seed in probes if study == "probes" else all(pair in pairs for pair in wanted)
        if done:
            continue
        left += 1
        for runs, segment in wanted:
            for run in runs:
                needed.add((run, "base"))
                if segment != "base":
                    needed.add((run, segment))
    return left, needed - trained(read_csv(folder / "runs.csv"))


def timing(runs: pd.DataFrame, protocol: str, segment: str) -> tuple[int, float]:
    """(how many finished, never-resumed jobs of that protocol and segment have a wall time,
    their median wall time in seconds; nan when none)."""
    resumed = (
        runs["resumed_at"].notna() if "resumed_at" in runs else pd.Series(False, index=runs.index)
    )
    timed = runs[
        (runs["protocol"] == protocol)
        & (runs["segment"] == segment)
        & (runs["status"] == "ok")
        & ~resumed
        & runs["wall_s"].notna()
    ]
    return len(timed), float(timed["wall_s"].median()) if len(timed) else math.nan


def remaining(folder: Path, config: Mapping[str, Any], study: str) -> Remaining | None:
    """The study's remaining training, or None when its pairs cannot be counted (the search,
    or the activation study before its rate is chosen)."""
    if study == "lr_search":
        return None
    pairs, _ = progress.held(folder)
    if (
        study == "activation"
        and progress.activation_lr(config, pairs, progress.searched_lr(folder)) is None
    ):
        return None
    left, jobs = jobs_left(folder, config, study)
    runs = read_csv(folder / "runs.csv")
    counts: dict[tuple[str, str], int] = {}
    for run, segment in jobs:
        counts[run.protocol, segment] = counts.get((run.protocol, segment), 0) + 1
    kinds = tuple(
        Kind(protocol, segment, count, *timing(runs, protocol, segment))
        for (protocol, segment), count in sorted(counts.items())
    )
    return Remaining(study, left, kinds)
