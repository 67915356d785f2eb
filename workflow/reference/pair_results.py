"""The per-pair results a reference keeps, so that no finished pair is ever computed twice.

A pair's comparison tables and a seed's probes are small, but they need both runs' checkpoints
and dumps, which stay on the machine that trained them. A reference folder therefore keeps
each one with its provenance (the config slice, the code version and the parameter digest of
every checkpoint it read); and the stability search's short traces, which read no checkpoint
but which the activation study needs before it can train a run (an hour and a half here):

- ``export`` carries the results the folder holds and the exporting tree lacks, as long as
  every digest they name is one the reference lists for that run and checkpoint, and the
  exporting code and config would make them again;
- ``restore`` copies them back into a tree (``make restore``), where Snakemake takes them as
  built: it never rebuilds a file whose inputs are missing but whose readers are current, as
  long as nothing upstream of it is rebuilt (``make restore`` makes the MNIST copy first). A
  result is restored only when the tree's code and config would make it again: the same code
  version of its rule's library code, the same config slice, the same checkpoint grid (for a
  trace: the same optimizer policy and trace length).

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

from workflow import manifest
from workflow.artifacts import read_csv, read_json
from workflow.config import DEFAULT_VARIANT
from workflow.identity import RunId
from workflow.lineage import accepted
from workflow.slices import dump_config, probe_config, probe_settings, training_config
from workflow.tables import record_digest

# Reference subfolder -> (results subfolder, the tables the rules write there, their adapter).
KINDS = {
    "comparisons": (
        "runs",
        ("**/ABC_vs_BAC/*.csv", "**/vs_stream~0/order~*/*.csv"),
        "compare_runs",
    ),
    "probes": ("probes", ("seed~*.csv",), "train_probes"),
    "lr_search": ("activation/lr_search", ("lr~*/seed~*/order~*.json",), "trace_stability"),
}
# A trace holds its provenance (trace_stability); a table has it beside it.
EMBEDDED = {"lr_search"}
SEGMENT_CHECKPOINTS = {"base": "checkpoints", "extended": "extended_checkpoints"}


def provenance_of(table: Path) -> Path:
    return table.with_suffix(".provenance.json")


def provenance(kind: str, table: Path) -> dict[str, Any] | None:
    """A result's provenance (None where it has none)."""
    if kind in EMBEDDED:
        return read_json(table).get("provenance")
    sidecar = provenance_of(table)
    return read_json(sidecar) if sidecar.is_file() else None


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


def digests_read(kind: str, provenance: Mapping[str, Any]) -> dict[tuple, str]:
    """(run key, segment, update) -> the parameter digest the result says it read."""
    if kind == "lr_search":
        return {}  # a trace trains from the initial weights and keeps no checkpoint
    if kind == "comparisons":  # a comparison of two runs over a segment
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


def agrees(kind: str, provenance: Mapping[str, Any], listed: Mapping[tuple, str]) -> bool:
    """Whether every checkpoint the result read is one the reference lists, bit for bit."""
    return all(listed.get(key) == digest for key, digest in digests_read(kind, provenance).items())


def copy(source_table: Path, target_table: Path) -> None:
    """A table and, where it has one, its provenance."""
    for source, target in (
        (source_table, target_table),
        (provenance_of(source_table), provenance_of(target_table)),
    ):
        if source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def source(result: PairResult, results: Path, earlier: Path | None) -> Path:
    """Where an export takes a result the tree holds from: the tree, unless the folder
    (``earlier``; None: started afresh) holds the same table read from the same checkpoints,
    under a code version this code reproduces (a tree restored from an older export, say);
    then the folder's record stays as it is, so that re-exporting changes no file of it."""
    tree = result.in_tree(results)
    held = None if earlier is None else result.in_reference(earlier)
    if held is None or not held.is_file() or held.read_bytes() != tree.read_bytes():
        return tree
    mine, theirs = provenance(result.kind, tree), provenance(result.kind, held)
    if mine is None or theirs is None:
        return tree
    same_reads = mine.get("params_digests") == theirs.get("params_digests")
    reproduced = theirs.get("code_version") in accepted(KINDS[result.kind][2])
    return held if same_reads and reproduced else tree


def carried(
    earlier: Path, tree: Iterable[PairResult], checkpoints: pd.DataFrame, config: Mapping[str, Any]
) -> tuple[list[PairResult], int]:
    """(results of the earlier folder to keep, how many it held that cannot be kept): those
    the tree lacks, with a provenance whose every digest the merged reference lists, and which
    ``config`` and this code would make again (a study recomputed under new code never counts
    its old results as done)."""
    if not earlier.is_dir():
        return [], 0
    have, listed = set(tree), checkpoint_digests(checkpoints)
    made_with = folder_config(earlier)
    keep, dropped = [], 0
    for result in in_reference(earlier):
        if result in have:
            continue
        if refusal(result, result.in_reference(earlier), listed, config, made_with):
            dropped += 1
        else:
            keep.append(result)
    return keep, dropped


def folder_config(folder: Path) -> dict[str, Any]:
    """The config a reference folder's results were made with (its last export's)."""
    return read_json(folder / "provenance.json")["config"]


def search_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """What a trace is made with beyond its config slice and its path."""
    return {
        "optim": config["training"]["optimizer_at_common"],
        "trace_updates": config["studies"]["activation"]["trace_updates"],
    }


def expected(result: PairResult, config: Mapping[str, Any], prov: Mapping[str, Any]) -> dict:
    """What the current code and config would record for the result's provenance (the code
    version: one that this code reproduces, ``workflow.lineage``)."""
    adapter = KINDS[result.kind][2]
    code = prov["code_version"] if prov.get("code_version") in accepted(adapter) else None
    if result.kind == "comparisons":
        variant = prov["first"].get("variant", DEFAULT_VARIANT)
        return {"code_version": code, "config": dump_config(config, variant)}
    if result.kind == "lr_search":
        return {"code_version": code, "config": training_config(config, DEFAULT_VARIANT)}
    return {
        "code_version": code,
        "config": probe_config(config),
        "probes": probe_settings(config),
        "activation": config["model"]["activation"],
    }


def refusal(
    result: PairResult,
    table: Path,
    listed: Mapping[tuple, str],
    config: Mapping[str, Any],
    made_with: Mapping[str, Any],
) -> str | None:
    """Why a folder's result (``made_with``: the folder's config) cannot join a tree or a new
    export: it has no provenance, it read a checkpoint the reference does not list (``listed``),
    or this code and ``config`` would not make it as it is. None if it can."""
    prov = provenance(result.kind, table)
    if prov is None:
        return "no provenance"
    if not agrees(result.kind, prov, listed):
        return "a checkpoint it read is not the reference's"
    for key, value in expected(result, config, prov).items():
        if prov.get(key) != value:
            return f"its {key} is not the current one"
    if result.kind == "comparisons":
        grid = config["training"][SEGMENT_CHECKPOINTS[prov["segment"]]]
        if read_csv(table)["update"].tolist() != list(grid):
            return "its checkpoints are not the config's"
    if result.kind == "lr_search" and search_settings(made_with) != search_settings(config):
        return "its search settings are not the config's"
    return None


@dataclass(frozen=True)
class Restored:
    restored: int
    present: int
    refused: dict[str, int]


def restore(folder: Path, results: Path, config: Mapping[str, Any]) -> Restored:
    """Copy the reference ``folder``'s results that the tree lacks into ``results``, once every
    file of the folder is as its manifest lists it (workflow.manifest.ManifestError if not).
    A restored table's provenance gains the table's digest, which the tree's readers check."""
    manifest.check(folder)
    listed = checkpoint_digests(read_csv(folder / "checkpoints.csv"))
    made_with = folder_config(folder)
    restored = present = 0
    refused: dict[str, int] = {}
    for result in in_reference(folder):
        table, target = result.in_reference(folder), result.in_tree(results)
        if target.is_file() and provenance(result.kind, target) is not None:
            present += 1
            continue
        why = refusal(result, table, listed, config, made_with)
        if why:
            refused[why] = refused.get(why, 0) + 1
            continue
        copy(table, target)
        if result.kind not in EMBEDDED:
            record_digest(target)
        restored += 1
    return Restored(restored, present, refused)


def code_versions(folders: Iterable[Path]) -> set[tuple[str, str]]:
    """Every (adapter, code version) the pair results of reference ``folders`` record."""
    found = set()
    for folder in folders:
        for result in in_reference(folder):
            prov = provenance(result.kind, result.in_reference(folder))
            if prov is not None and "code_version" in prov:
                found.add((KINDS[result.kind][2], prov["code_version"]))
    return found
