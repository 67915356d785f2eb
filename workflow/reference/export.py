"""Writing a reference folder from a tree's results and logs (``export``), sealed by its
SHA256SUMS; what the folder held and the tree lacks is carried over (``workflow.reference``)."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import manifest
from workflow.artifacts import write_csv, write_json
from workflow.machine.environment import machine_environment, today
from workflow.reference import pair_results
from workflow.reference.accumulate import Merged, check_one_mkl_code, merge_earlier
from workflow.reference.digests import config_digest, git_commit, training_digest
from workflow.reference.studies import (
    STUDIES,
    carry_studies,
    check_carried,
    copy_file,
    studies_built,
    studies_held,
    to_carry,
)
from workflow.reference.tables import IDENTITY, run_tables

PDF_LIMIT_BYTES = 200_000


def export(
    results: Path,
    logs: Path,
    out: Path,
    config: Mapping[str, Any],
    repo: Path,
    commit: str | None = None,
    replace: bool = False,
    reopened: Sequence[str] = (),
) -> dict[str, Any]:
    """Write the reference folder ``out`` from a config's results and logs (results/<name>,
    logs/<name>); returns its provenance. ``commit`` overrides what git says of ``repo``, for a
    copy of the tree whose history is not the one it was made from. The runs ``out`` already
    holds and the tree lacks are kept (workflow.reference.accumulate) unless ``replace``; so are its
    complete studies, which the tree must have built, except the ``reopened`` ones."""
    if commit is None:
        commit = git_commit(repo)  # before writing: the folder's own files would make it dirty
    segments = {
        "base": config["training"]["checkpoints"],
        "extended": config["training"]["extended_checkpoints"],
    }
    # The folder being replaced stays aside until the new one is written: what it holds and
    # the tree lacks is carried over, and a failed export leaves it as it was.
    earlier = out.with_name(f".{out.name}.earlier")
    if earlier.exists() and not out.exists():
        earlier.rename(out)  # an export killed while writing: the folder it had set aside
    built = studies_built(results, None if replace else out)
    carried = [] if replace else to_carry(studies_held(out), built, reopened)
    if carried:
        check_carried(carried, pair_results.folder_config(out), config)
    runs, checkpoints = run_tables(results, logs, segments)
    if earlier.exists():
        shutil.rmtree(earlier)
    if out.exists():
        out.rename(earlier)
    try:
        kept = None if replace else carried
        merged = _merged(earlier, runs, checkpoints, config, replace)
        provenance = _write(results, out, earlier, config, commit, built, kept, merged)
    except BaseException:
        if out.exists():
            shutil.rmtree(out)
        if earlier.exists():
            earlier.rename(out)
        raise
    if earlier.exists():
        shutil.rmtree(earlier)
    return provenance


AUDIT = Path("audit") / "determinism.csv"


def carry_audit(results: Path, earlier: Path, out: Path, replace: bool) -> None:
    """The tree's determinism audit, else the folder's: it retrains checkpoints, which a
    restored tree lacks, and its runs' digests stay in ``checkpoints.csv`` (the export drops
    none it cannot match)."""
    if (results / AUDIT).is_file():
        copy_file(results / AUDIT, out / AUDIT)
    elif not replace and (earlier / AUDIT).is_file():
        copy_file(earlier / AUDIT, out / AUDIT)


def _merged(
    earlier: Path, runs: pd.DataFrame, checkpoints: pd.DataFrame, config, replace: bool
) -> Merged:
    """The tree's runs and checkpoints, with the earlier folder's that the tree lacks."""
    if replace:
        return Merged(runs, checkpoints)
    digest = training_digest(config)
    return merge_earlier(earlier, runs, checkpoints, digest, [*IDENTITY, "segment"])


def _copy_built(results: Path, out: Path, built: Sequence[str]) -> None:
    """The tree's summaries of the studies it built, its tables and its figures (PDFs while
    small); a carried study's files then overwrite any the tree half rebuilt."""
    for study in built:
        copy_file(results / "summary" / f"{study}.csv", out / "summary" / f"{study}.csv")
    for table in sorted((results / "tables").glob("*.csv")):
        copy_file(table, out / "tables" / table.name)
    for figure in sorted((results / "figures").glob("*.png")):
        copy_file(figure, out / "figures" / figure.name)
        pdf = figure.with_suffix(".pdf")
        if pdf.is_file() and pdf.stat().st_size <= PDF_LIMIT_BYTES:
            copy_file(pdf, out / "figures" / pdf.name)


def _write(
    results: Path,
    out: Path,
    earlier: Path,
    config: Mapping[str, Any],
    commit: str,
    built: Sequence[str],
    carried: Sequence[str] | None,
    merged: Merged,
) -> dict[str, Any]:
    """Writes ``out`` (the earlier folder set aside as ``earlier``); ``carried``: the studies
    to carry over from it, None to start afresh (``--replace``)."""
    replace = carried is None
    mkl = check_one_mkl_code(merged.runs)
    out.mkdir(parents=True)
    _copy_built(results, out, built)
    tree_results = pair_results.in_tree(results)
    for result in tree_results:
        taken = pair_results.source(result, results, None if replace else earlier)
        pair_results.copy(taken, result.in_reference(out))
    kept, unkept = (
        ([], 0)
        if replace
        else pair_results.carried(earlier, tree_results, merged.checkpoints, config)
    )
    for result in kept:
        pair_results.copy(result.in_reference(earlier), result.in_reference(out))
    carry_studies(earlier, out, carried or [], config)
    complete = [study for study in STUDIES if study in built or study in (carried or [])]
    carry_audit(results, earlier, out, replace)
    write_csv(out / "runs.csv", merged.runs)
    write_csv(out / "checkpoints.csv", merged.checkpoints)
    provenance = {
        "name": config["name"],
        "config_digest": config_digest(config),
        "training_config_digest": training_digest(config),
        "export_commit": commit,
        "training_code": sorted(set(merged.runs["code_version"])),
        "date": today(),
        "studies_complete": complete,
        "studies_pending": [s for s in STUDIES if s not in complete],
        "studies_carried": list(carried or []),
        "carried_over": merged.carried,
        "dropped_earlier_runs": merged.dropped,
        "carried_over_results": len(kept),
        "dropped_earlier_results": unkept,
        "environment": _environment(config["training"], mkl),
        "config": config,
    }
    write_json(out / "provenance.json", provenance)
    manifest.seal(out, earlier=None if replace else earlier)
    return provenance


def _environment(training: Mapping[str, Any], mkl: str | None) -> dict[str, Any]:
    """The machine the runs trained on, with the runs' MKL code (None: no CPU run says),
    never this process's: the preload reaches jobs only (workflow.mkl)."""
    environment = machine_environment(
        torch_threads=training["torch_threads"],
        kernels=training["kernels"],
        device=training["device"],
        memory_format="channels_last",
    )
    return environment | {"mkl_cpu": mkl}
