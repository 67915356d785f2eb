"""Which studies an export holds: those the tree built, and those the folder holds complete
and the tree did not build, carried over while their config and pair results are unchanged."""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from workflow import progress, registry
from workflow.artifacts import read_json

STUDIES = registry.NAMES


def copy_file(source: Path, target: Path) -> None:
    """A file to ``target``, its folders made."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


class StudiesWouldBeLost(RuntimeError):
    """The folder holds complete studies that the exporting tree neither built nor can carry."""


def studies_built(results: Path, folder: Path | None = None) -> list[str]:
    """The studies the tree built: its summary there, and every file of the study that the
    reference ``folder`` holds there too. A tree that rebuilt a summary and not yet its figures
    (a half-finished ``build_<study>``) has not built the study: exported, it would drop them."""

    def names(study: str, where: Path) -> set[Path]:
        return {path.relative_to(where) for path in registry.BY_NAME[study].files(where)}

    return [
        study
        for study in STUDIES
        if (results / "summary" / f"{study}.csv").is_file()
        and (folder is None or names(study, folder) <= names(study, results))
    ]


def studies_held(folder: Path) -> list[str]:
    """The studies a reference folder lists as complete (none for a new folder)."""
    provenance = folder / "provenance.json"
    return read_json(provenance).get("studies_complete", []) if provenance.is_file() else []


def to_carry(held: Sequence[str], built: Sequence[str], reopened: Sequence[str] = ()) -> list:
    """The studies the folder holds complete that the tree did not build and that are not
    reopened: their summary, tables and figures are carried over from the folder."""
    return [study for study in held if study not in built and study not in reopened]


def study_config(config: Mapping[str, Any], study: str) -> dict[str, Any]:
    """What a study's files depend on in the config: everything but the other studies' entries
    (the main seeds stay: probes and sensitivity read them), the name and the machine."""
    keep = {study, "main"}
    studies = {name: value for name, value in config.get("studies", {}).items() if name in keep}
    rest = {key: value for key, value in config.items() if key not in ("name", "machine")}
    return rest | {"studies": studies}


def refuse_dropping(lost: Sequence[str], why: str) -> None:
    """Refuses an export that would turn a study the folder holds complete into a pending
    one. Runs and pair results accumulate across trees; a study's summary, tables and figures
    come from the tree, or are carried over from the folder while its pair results and config
    are unchanged (a restored tree builds most studies in seconds, but not one that reads
    checkpoints, such as activation's audit)."""
    if lost:
        targets = " ".join(f"build_{study}" for study in lost)
        raise StudiesWouldBeLost(
            f"the folder holds {', '.join(lost)} complete and the tree does not ({why}): build "
            f"them in the tree first (snakemake --profile profiles/local {targets}), or "
            "reopen them (--reopen, where their results are being computed anew), or start "
            "the folder afresh with --replace"
        )


def check_carried(carried: Sequence[str], made_with: Mapping[str, Any], config) -> None:
    """A study is carried over only under the config it was made with."""
    changed = [s for s in carried if study_config(made_with, s) != study_config(config, s)]
    refuse_dropping(changed, "its config changed, so it cannot be carried over")


def carry_studies(earlier: Path, out: Path, carried: Sequence[str], config) -> None:
    """Copies the carried studies' files, then checks that the pair results each one read
    are all still in ``out``."""
    if not carried:
        return
    for study in carried:
        for path in registry.BY_NAME[study].files(earlier):
            copy_file(path, out / path.relative_to(earlier))
    done = progress.study_progress(out, config, carried)
    short = [s for s in carried if done.get(s) is not None and done[s].done < done[s].seeds]
    refuse_dropping(short, "the pair results it read are not all in the export")
