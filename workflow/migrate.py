"""Move a results tree of an earlier layout into the current one, keeping finished work
(``make migrate-results``).

The default config (``full``) writes to results/ and logs/; a tree made before it did holds
its work in results/full/ and logs/full/, which move up, with Snakemake's records of every
moved file (``workflow.job_records``), so the moved tree plans exactly the jobs the old one
did (none, where it was complete) and a later change of params or code still reruns them:

    results/full/<entry>                   -> results/<entry>
    logs/full/<entry>                      -> logs/<entry>

A tree of the layout before per-config folders and run variants moves its runs into the
config's folders (results/ and logs/ for the default config, results/<name>/ and logs/<name>/
for any other); their params changed with the variant, so ``make adopt-runs`` keeps them then:

    results/runs/protocol~P/act~...        -> <results>/runs/protocol~P/variant~default/act~...
    logs/runs/protocol~P/act~...           -> <logs>/runs/protocol~P/variant~default/act~...
    benchmarks/runs/.../<job>.tsv          -> <logs>/runs/.../<job>.benchmark.tsv
    results/activation/lr_search/          -> <results>/activation/lr_search/

Everything else of that oldest tree (comparisons, summaries, figures) is left where it is: the
workflow rebuilds it in the new place from the moved runs. Nothing is overwritten: a target
that exists already stops the move before anything moves.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

import yaml

from workflow import job_records
from workflow.config import (
    DEFAULT_NAME,
    DEFAULT_VARIANT,
    ConfigError,
    load_config,
    logs_root,
    results_root,
    validate_config,
)


def _run_groups(root: Path) -> list[tuple[Path, Path]]:
    """(old, new) for each protocol folder's act~ subfolders under ``root`` (a runs/ folder)."""
    moves = []
    for protocol in sorted(root.glob("protocol~*")):
        for group in sorted(protocol.glob("act~*")):
            moves.append((group, protocol.name + f"/variant~{DEFAULT_VARIANT}/" + group.name))
    return moves


def _oldest_layout_moves(tree: Path, results: Path, logs: Path) -> list[tuple[Path, Path]]:
    moves = [(old, results / "runs" / new) for old, new in _run_groups(tree / "results/runs")]
    moves += [(old, logs / "runs" / new) for old, new in _run_groups(tree / "logs/runs")]
    for old, new in _run_groups(tree / "benchmarks/runs"):
        for tsv in sorted(old.rglob("*.tsv")):
            target = logs / "runs" / new / tsv.relative_to(old)
            moves.append((tsv, target.with_name(tsv.stem + ".benchmark.tsv")))
    traces = tree / "results/activation/lr_search"
    if traces.is_dir() and traces != results / "activation" / "lr_search":
        moves.append((traces, results / "activation" / "lr_search"))
    return moves


def _default_name_moves(tree: Path) -> list[tuple[Path, Path]]:
    """Every entry of results/full/ and logs/full/ one folder up."""
    moves = []
    for top in ("results", "logs"):
        old = tree / top / DEFAULT_NAME
        if old.is_dir():
            moves += [(entry, tree / top / entry.name) for entry in sorted(old.iterdir())]
    return moves


def planned_moves(tree: Path, name: str) -> list[tuple[Path, Path]]:
    """Every (source, target) of the migration of ``tree`` (a work tree) to config ``name``."""
    config = {"name": name}
    results, logs = tree / results_root(config), tree / logs_root(config)
    moves = _default_name_moves(tree) if name == DEFAULT_NAME else []
    return moves + _oldest_layout_moves(tree, results, logs)


def migrate(tree: Path, name: str) -> list[tuple[Path, Path]]:
    moves = planned_moves(tree, name)
    clashes = [str(target) for _, target in moves if target.exists()]
    if clashes:
        raise FileExistsError(f"not moving anything: these exist already: {clashes}")
    job_records.check_not_running(tree)
    for source, target in moves:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, target)
    relative = [(s.relative_to(tree).as_posix(), t.relative_to(tree).as_posix()) for s, t in moves]
    if name == DEFAULT_NAME:  # a path a record names moves even where its file is gone
        relative += [(f"{top}/{DEFAULT_NAME}", top) for top in ("results", "logs")]
    job_records.move_records(tree, relative)
    for old in ("results/runs", "logs/runs", "benchmarks/runs"):
        if not any(target.is_relative_to(tree / old) for _, target in moves):
            _remove_empty_folders(tree / old)
    for old in (f"results/{DEFAULT_NAME}", f"logs/{DEFAULT_NAME}"):
        _remove_empty_folders(tree / old)
    return moves


def _remove_empty_folders(root: Path) -> None:
    """The old tree's folders that the moves emptied, deepest first; anything left stays."""
    if not root.is_dir():
        return
    for folder in sorted((p for p in root.rglob("*") if p.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()
    if not any(root.iterdir()):
        root.rmdir()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workflow.migrate", description=__doc__)
    parser.add_argument("--configfile", nargs="+", action="extend", default=[])
    parser.add_argument("--tree", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    files = [args.tree / "config.yaml", *args.configfile]
    try:
        config = load_config(files)
        validate_config(config)
    except (OSError, yaml.YAMLError, ConfigError) as error:
        sys.exit(f"{' + '.join(map(str, files))}: {error}")
    try:
        moves = migrate(args.tree, config["name"])
    except (FileExistsError, job_records.SnakemakeRunning) as error:
        sys.exit(f"make migrate-results: {error}")
    print(
        f"moved {len(moves)} folders and files into {results_root(config)}/ and "
        f"{logs_root(config)}/, with Snakemake's records of them"
    )
    if any(target.name.startswith("act~") for _, target in moves):
        print("runs of the layout before run variants moved: keep them with `make adopt-runs`")


if __name__ == "__main__":
    main()
