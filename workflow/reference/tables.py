"""A tree's training jobs as two tables: one row per job (identity, segment, status, updates,
wall time, machine) and one per checkpoint of its segment (digest, or "diverged" where the
run never reached it). Read from the jobs' records under ``results/runs`` and Snakemake's logs
and benchmark files under ``logs``; the reference export writes them as runs.csv and
checkpoints.csv."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.artifacts import read_csv, read_json
from workflow.config import DEFAULT_VARIANT
from workflow.provenance import canonical_json

# In the order of the results layout's path (runs/protocol~.../order~...), which the tables keep.
IDENTITY = ("protocol", "variant", "act", "lr", "optim", "stream", "seed", "order")
RECORDS = {"base": "run.json", "extended": "extension.json"}
JOBS = {"base": "train_history", "extended": "extend_history"}
RUN_COLUMNS = [
    *IDENTITY,
    "segment",
    "status",
    "diverged_at",
    "updates",
    "train_s",
    "wall_s",
    "resumed_at",
    "updates_per_s",
    "torch_threads",
    "kernels",
    "device",
    "memory_format",
    "torch",
    "cpu_model",
    "torch_cpu_capability",
    "isa_overrides",
    "mkl_cpu",
    "code_version",
]
CHECKPOINT_COLUMNS = [*IDENTITY, "segment", "update", "status", "params_digest"]


def _records(results: Path) -> Iterable[tuple[str, Path, dict]]:
    for segment, name in RECORDS.items():
        for path in sorted((results / "runs").glob(f"**/{name}")):
            yield segment, path, read_json(path)


def _job_file(logs: Path, run_dir: Path, results: Path, segment: str, suffix: str) -> Path:
    """A file Snakemake wrote for a run's training job: its log or its benchmark."""
    return logs / run_dir.relative_to(results) / f"{JOBS[segment]}{suffix}"


def _job_seconds(logs: Path, run_dir: Path, results: Path, segment: str) -> float | None:
    """Wall time of the training job, from Snakemake's benchmark file (beside its log)."""
    tsv = _job_file(logs, run_dir, results, segment, ".benchmark.tsv")
    if not tsv.is_file():
        return None
    return float(pd.read_csv(tsv, sep="\t")["s"].iloc[0])


# The line workflow.resume logs when a job continues from a saved state. The C updates before
# that state were timed by the job that saved it, whose seconds the run record does not keep.
RESUMED = re.compile(r"resuming from the state saved at C update (\d+)")


def _resumed_at(logs: Path, run_dir: Path, results: Path, segment: str) -> int | None:
    """The C update the job that wrote the record resumed from (None: it started afresh, or
    its log is gone); Snakemake's log holds the last attempt, the one that wrote the record."""
    log = _job_file(logs, run_dir, results, segment, ".log")
    found = RESUMED.findall(log.read_text()) if log.is_file() else []
    return int(found[-1]) if found else None


def _timed_updates(
    phases: Sequence[Mapping[str, Any]],
    updates: int,
    resumed_at: int | None,
    segment: str,
    segments: Mapping[str, Sequence[int]],
) -> int | None:
    """The record's ``updates`` its seconds cover: all but those of C before ``resumed_at``;
    None when a resumed job's record has no C phase (it diverged before C's end), so the split
    of its seconds is unknown."""
    if resumed_at is None:
        return updates
    if not any(phase["phase"] == "common" for phase in phases):
        return None
    # The segment's C starts after the base segment's last checkpoint when extended.
    first_c = 0 if segment == "base" else max(segments["base"])
    return updates - (resumed_at - first_c)


def machine_columns(machine: Mapping[str, Any] | None) -> dict[str, str]:
    """A run's machine as runs.csv shows it; empty where its record predates ``machine``."""
    if machine is None:
        return {"cpu_model": "", "torch_cpu_capability": "", "isa_overrides": "", "mkl_cpu": ""}
    caps = machine["isa_overrides"]
    return {
        "cpu_model": machine["cpu_model"],
        "torch_cpu_capability": machine["torch_cpu_capability"],
        "isa_overrides": " ".join(f"{k}={v}" for k, v in sorted(caps.items())) or "none",
        # Records before machine.mkl_cpu lack it; the CPU's vendor tells (accumulate.mkl_code).
        "mkl_cpu": machine.get("mkl_cpu") or "",
    }


def run_tables(
    results: Path, logs: Path, segments: Mapping[str, Sequence[int]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints): every training job under ``results/runs`` and every checkpoint of
    its segment (``segments``: the config's checkpoint updates), reached or not."""
    runs, checkpoints = [], []
    for segment, path, record in _records(results):
        prov = record["provenance"]
        # A run's record leaves the default variant out (workflow.identity.RunId.as_dict).
        identity = {key: prov.get(key, DEFAULT_VARIANT) for key in IDENTITY}
        phases = record.get("phases", [])
        updates = sum(phase["updates"] for phase in phases)
        train_s = sum(phase["seconds"] for phase in phases)
        wall_s = _job_seconds(logs, path.parent, results, segment)
        resumed_at = _resumed_at(logs, path.parent, results, segment)
        timed = _timed_updates(phases, updates, resumed_at, segment, segments)
        runs.append(
            {
                **identity,
                "segment": segment,
                "status": record["status"],
                "diverged_at": canonical_json(record["diverged_at"])
                if record.get("diverged_at")
                else "",
                "updates": updates,
                "train_s": round(train_s, 1),
                "wall_s": wall_s,
                "resumed_at": resumed_at,
                "updates_per_s": round(timed / train_s, 2) if train_s and timed else None,
                "torch_threads": prov["torch_threads"],
                "kernels": prov["kernels"],
                "device": prov["device"],
                "memory_format": prov["memory_format"],
                "torch": prov["packages"]["torch"],
                **machine_columns(prov.get("machine")),
                "code_version": prov["code_version"],
            }
        )
        reached = {int(update): digest for update, digest in record["checkpoints"].items()}
        for update in segments[segment]:
            checkpoints.append(
                {
                    **identity,
                    "segment": segment,
                    "update": update,
                    "status": "ok" if update in reached else "diverged",
                    "params_digest": reached.get(update, ""),
                }
            )
    key = [*IDENTITY, "segment"]
    runs_table = pd.DataFrame(runs, columns=RUN_COLUMNS)
    checkpoint_table = pd.DataFrame(checkpoints, columns=CHECKPOINT_COLUMNS)
    return (
        runs_table.sort_values(key, kind="stable", ignore_index=True),
        checkpoint_table.sort_values([*key, "update"], kind="stable", ignore_index=True),
    )


def read_reference(folder: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """(provenance, checkpoints) of a reference folder."""
    return read_json(folder / "provenance.json"), read_csv(folder / "checkpoints.csv")
