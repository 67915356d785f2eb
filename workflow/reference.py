"""Reference results: a small, tracked copy of a finished run's answer, checkable bit for bit.

    python -m workflow.reference export                  # results/full/ -> reference/full/
    python -m workflow.reference export --configfile config/smoke.yaml     # ... smoke/
    python -m workflow.reference export --tree /path/to/other/clone     # its results/full/
    python -m workflow.reference restore         # reference/full/'s pair results -> results/full/

A reference folder holds no checkpoints and no dumps, only what a reader and a verifier need:

    provenance.json    config (whole, and its digest), git commit, training code version,
                       packages, threads, kernels, device, CPU model and ISA flags, date, and
                       which studies are complete
    runs.csv           one row per training job: identity, segment, status, updates, wall time
    checkpoints.csv    one row per checkpoint: identity, segment, update, status, digest
    summary/, tables/  every finished study's summary and per-seed table
    comparisons/       each pair's per-checkpoint comparison table, with its provenance (the
                       results/full/runs/ layout)
    probes/            each main seed's probe table, with its provenance
    lr_search/         each trace of the stability search (results/full/activation/lr_search/)
    figures/           every figure (PNG; PDF too when small)

A study counts as complete when its summary exists; the exporter copies what is there and
lists the rest as pending, so a partial reference is always labelled as such. Runs the folder
already holds and the tree lacks are kept, with the export they came from
(``workflow.accumulate``), and so are the pair results (comparisons, probes, search traces)
that read only checkpoints it lists and that this code would make again
(``workflow.pair_results``, which also restores them into a tree). A study the folder holds
complete and the tree did not build is carried over (its summary, tables and figures,
``workflow.registry``) while its config and its pair results are unchanged; ``--reopen``
makes it pending instead, and ``--replace`` starts the folder afresh.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import manifest, pair_results, progress, registry
from workflow.accumulate import Merged, check_one_mkl_code, merge_earlier
from workflow.artifacts import read_csv, read_json, write_csv, write_json
from workflow.config import load_config, logs_root, results_root
from workflow.machine.caps import isa_caps
from workflow.machine.environment import machine_environment, today
from workflow.provenance import canonical_json
from workflow.run_tables import IDENTITY, run_tables

STUDIES = registry.NAMES
PDF_LIMIT_BYTES = 200_000


def config_digest(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(config).encode()).hexdigest()


# What a checkpoint's bits depend on besides its run's identity (seed, order, lr ...): the
# verification compares this slice, so a change elsewhere (statistics, studies) leaves the
# reference's digests checkable.
VERIFIED_KEYS = {
    "data": ("digests", "normalize", "subset"),
    "tasks": ("class_split", "common_per_digit"),
    "model": None,
    "training": None,
}
# Changes no bit: how often a job saves its resumable state.
NOT_VERIFIED = {"training": ("state_every",)}


def training_config(config: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for head, keys in VERIFIED_KEYS.items():
        section = config.get(head, {})
        chosen = keys if keys is not None else tuple(section)
        dropped = NOT_VERIFIED.get(head, ())
        out[head] = {key: section[key] for key in chosen if key in section and key not in dropped}
    return out


def training_digest(config: Mapping[str, Any]) -> str:
    return config_digest(training_config(config))


def git_commit(repo: Path) -> str:
    """HEAD's commit, with "+dirty" when tracked files differ from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def _copy(source: Path, target: Path) -> None:
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
            _copy(path, out / path.relative_to(earlier))
    done = progress.study_progress(out, config, carried)
    short = [s for s in carried if done.get(s) is not None and done[s].done < done[s].seeds]
    refuse_dropping(short, "the pair results it read are not all in the export")


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
    holds and the tree lacks are kept (workflow.accumulate) unless ``replace``; so are its
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
        _copy(results / AUDIT, out / AUDIT)
    elif not replace and (earlier / AUDIT).is_file():
        _copy(earlier / AUDIT, out / AUDIT)


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
        _copy(results / "summary" / f"{study}.csv", out / "summary" / f"{study}.csv")
    for table in sorted((results / "tables").glob("*.csv")):
        _copy(table, out / "tables" / table.name)
    for figure in sorted((results / "figures").glob("*.png")):
        _copy(figure, out / "figures" / figure.name)
        pdf = figure.with_suffix(".pdf")
        if pdf.is_file() and pdf.stat().st_size <= PDF_LIMIT_BYTES:
            _copy(pdf, out / "figures" / pdf.name)


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
        pair_results.copy(result.in_tree(results), result.in_reference(out))
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


def read_reference(folder: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    """(provenance, checkpoints) of a reference folder."""
    return read_json(folder / "provenance.json"), read_csv(folder / "checkpoints.csv")


def _print_export(out: Path, provenance: Mapping[str, Any]) -> None:
    print(
        f"{out}: complete {', '.join(provenance['studies_complete']) or 'none'}; "
        f"pending {', '.join(provenance['studies_pending']) or 'none'}; "
        f"{len(provenance['carried_over'])} run(s) and {provenance['carried_over_results']} "
        "pair result(s) carried over from the folder's earlier export"
    )
    if provenance["dropped_earlier_runs"]:
        print(
            f"{provenance['dropped_earlier_runs']} run(s) of the earlier export dropped: "
            "trained under another training config"
        )
    if provenance["dropped_earlier_results"]:
        print(
            f"{provenance['dropped_earlier_results']} pair result(s) of the earlier export "
            "dropped: no provenance, a checkpoint they read is not the reference's, or this "
            "code and config would not make them again"
        )


def _print_restore(folder: Path, results: Path, done: pair_results.Restored) -> None:
    print(
        f"{folder} -> {results}: {done.restored} pair result(s) restored, "
        f"{done.present} already in the tree"
    )
    for why, count in sorted(done.refused.items()):
        print(f"{count} not restored ({why}): the workflow computes them")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workflow.reference", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    export_cmd = commands.add_parser(
        "export", help="write reference/<name>/ from results/<name>/ and logs/<name>/"
    )
    restore_cmd = commands.add_parser(
        "restore",
        help="copy the reference's pair results that results/<name>/ lacks into it, where "
        "the tree's code and config would make them again",
    )
    for command in (export_cmd, restore_cmd):
        command.add_argument("--configfile", action="append", default=[])
        command.add_argument(
            "--tree", type=Path, default=Path("."), help="work tree holding results/ and logs/"
        )
        command.add_argument("--out", type=Path, help="default: reference/<config name>")
    export_cmd.add_argument(
        "--commit", help="the commit the code was, where the checkout's git cannot tell"
    )
    export_cmd.add_argument(
        "--replace",
        action="store_true",
        help="start the folder afresh instead of keeping the runs it holds and the tree lacks",
    )
    export_cmd.add_argument(
        "--reopen",
        action="append",
        default=[],
        choices=STUDIES,
        metavar="STUDY",
        help="let a study the folder holds complete become pending, where the tree computes "
        "it anew (new code, say); repeat for several",
    )
    args = parser.parse_args(argv)
    repo = Path(__file__).resolve().parent.parent
    config = load_config([repo / "config.yaml", *args.configfile])
    # The environment an export records is the one the config's jobs get (before torch loads).
    os.environ.update(isa_caps(config["machine"]["cpu_isa"], os.environ))
    out = args.out or repo / "reference" / config["name"]
    results, logs = args.tree / results_root(config), args.tree / logs_root(config)
    if args.command == "restore":
        _print_restore(out, results, pair_results.restore(out, results, config))
        return
    try:
        provenance = export(
            results, logs, out, config, repo, args.commit, args.replace, args.reopen
        )
    except StudiesWouldBeLost as error:
        sys.exit(f"{out}: nothing exported: {error}")
    _print_export(out, provenance)


if __name__ == "__main__":
    main()
