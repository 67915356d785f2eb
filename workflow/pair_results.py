"""The per-pair results a reference keeps, so that no finished pair is ever computed twice.

A pair's comparison tables and a seed's probes are small, but they need both runs' checkpoints
and dumps, which stay on the machine that trained them. A reference folder therefore keeps
each one with its provenance (the config slice, the code version and the parameter digest of
every checkpoint it read):

- ``export`` carries the results the folder holds and the exporting tree lacks, as long as
  every digest they name is one the reference lists for that run and checkpoint;
- ``restore`` copies them back into a tree (``make restore``), where Snakemake takes them as
  built: it never rebuilds a file whose inputs are missing but whose readers are current, as
  long as nothing upstream of it is rebuilt (``make restore`` makes the MNIST copy first). A
  result is restored only when the tree's code and config would make it again: the same code
  version of its rule's library code, the same config slice, the same checkpoint grid.

Restored results let the statistics of a study come from runs trained on several machines, each
run checkable bit for bit against ``checkpoints.csv``; a tree that retrains one of their runs
recomputes them, since the run is then newer.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.artifacts import read_csv, read_json
from workflow.config import DEFAULT_VARIANT
from workflow.identity import RunId
from workflow.provenance import REPO_ROOT, code_version
from workflow.slices import dump_config, probe_config, probe_settings

# Reference subfolder -> (results subfolder, the tables the rules write there, their adapter).
KINDS = {
    "comparisons": (
        "runs",
        ("**/ABC_vs_BAC/*.csv", "**/vs_stream~0/order~*/*.csv"),
        "compare_runs",
    ),
    "probes": ("probes", ("seed~*.csv",), "train_probes"),
}
SEGMENT_CHECKPOINTS = {"base": "checkpoints", "extended": "extended_checkpoints"}


def provenance_of(table: Path) -> Path:
    return table.with_suffix(".provenance.json")


@dataclass(frozen=True)
class PairResult:
    """A table and its provenance, at ``relative`` under the reference subfolder ``kind``."""

    kind: str
    relative: Path

    def in_reference(self, folder: Path) -> Path:
        return folder / self.kind / self.relative

    def in_tree(self, results: Path) -> Path:
        return results / KINDS[self.kind][0] / self.relative


def find(root: Path, where: Callable[[str], Path]) -> list[PairResult]:
    """The results under ``root``: a reference folder (``where`` = the kind itself) or a tree's
    results (``where`` = the kind's results subfolder)."""
    found = []
    for kind, (_, patterns, _) in KINDS.items():
        base = root / where(kind)
        for pattern in patterns:
            found += [PairResult(kind, p.relative_to(base)) for p in sorted(base.glob(pattern))]
    return found


def in_tree(results: Path) -> list[PairResult]:
    return find(results, lambda kind: Path(KINDS[kind][0]))


def in_reference(folder: Path) -> list[PairResult]:
    return find(folder, Path)


def digests_read(provenance: Mapping[str, Any]) -> dict[tuple, str]:
    """(run key, segment, update) -> the parameter digest the result says it read."""
    if "first" in provenance:  # a comparison of two runs over a segment
        segment = provenance["segment"]
        return {
            (RunId.from_wildcards(provenance[which]), segment, int(update)): digest
            for which in ("first", "second")
            for update, digest in provenance["params_digests"][which].items()
        }
    return {  # probes: each backbone at its checkpoint
        (RunId.from_wildcards(run), "base", int(run["update"])): provenance["params_digests"][
            run["order"]
        ]
        for run in provenance["runs"]
    }


def checkpoint_digests(checkpoints: pd.DataFrame) -> dict[tuple, str]:
    """(run key, segment, update) -> digest, from a reference's ``checkpoints.csv``."""
    rows = checkpoints[checkpoints["params_digest"].fillna("") != ""]
    return {
        (RunId.from_wildcards(row), row["segment"], int(row["update"])): row["params_digest"]
        for row in rows.to_dict("records")
    }


def agrees(provenance: Mapping[str, Any], listed: Mapping[tuple, str]) -> bool:
    """Whether every checkpoint the result read is one the reference lists, bit for bit."""
    return all(listed.get(key) == digest for key, digest in digests_read(provenance).items())


def copy(source_table: Path, target_table: Path) -> None:
    """A table and, where it has one, its provenance."""
    for source, target in (
        (source_table, target_table),
        (provenance_of(source_table), provenance_of(target_table)),
    ):
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def carried(
    earlier: Path, tree: Iterable[PairResult], checkpoints: pd.DataFrame
) -> tuple[list[PairResult], int]:
    """(results of the earlier folder to keep, how many it held that cannot be kept): those
    the tree lacks, with a provenance whose every digest the merged reference lists."""
    have, listed = set(tree), checkpoint_digests(checkpoints)
    keep, dropped = [], 0
    for result in in_reference(earlier):
        if result in have:
            continue
        table = result.in_reference(earlier)
        prov = provenance_of(table)
        if prov.is_file() and agrees(read_json(prov), listed):
            keep.append(result)
        else:
            dropped += 1
    return keep, dropped


def expected(result: PairResult, config: Mapping[str, Any], prov: Mapping[str, Any]) -> dict:
    """What the current code and config would record for the result's provenance."""
    adapter = REPO_ROOT / "workflow" / "scripts" / f"{KINDS[result.kind][2]}.py"
    if result.kind == "comparisons":
        variant = prov["first"].get("variant", DEFAULT_VARIANT)
        return {"code_version": code_version(adapter), "config": dump_config(config, variant)}
    return {
        "code_version": code_version(adapter),
        "config": probe_config(config),
        "probes": probe_settings(config),
        "activation": config["model"]["activation"],
    }


def stale(
    result: PairResult, table: Path, prov: Mapping[str, Any], config: Mapping[str, Any]
) -> str | None:
    """Why the tree's code and config would not make this result (its table, its provenance)
    as it is; None if they would."""
    for key, value in expected(result, config, prov).items():
        if prov.get(key) != value:
            return f"its {key} is not the current one"
    if result.kind == "comparisons":
        grid = config["training"][SEGMENT_CHECKPOINTS[prov["segment"]]]
        if read_csv(table)["update"].tolist() != list(grid):
            return "its checkpoints are not the config's"
    return None


@dataclass(frozen=True)
class Restored:
    restored: int
    present: int
    refused: dict[str, int]


def restore(folder: Path, results: Path, config: Mapping[str, Any]) -> Restored:
    """Copy the reference ``folder``'s results that the tree lacks into ``results``."""
    listed = checkpoint_digests(read_csv(folder / "checkpoints.csv"))
    restored = present = 0
    refused: dict[str, int] = {}
    for result in in_reference(folder):
        table, target = result.in_reference(folder), result.in_tree(results)
        if target.is_file() and provenance_of(target).is_file():
            present += 1
            continue
        prov = read_json(provenance_of(table)) if provenance_of(table).is_file() else None
        if prov is None:
            why = "no provenance"
        elif not agrees(prov, listed):
            why = "a checkpoint it read is not the reference's"
        else:
            why = stale(result, table, prov, config)
        if why:
            refused[why] = refused.get(why, 0) + 1
            continue
        copy(table, target)
        restored += 1
    return Restored(restored, present, refused)
