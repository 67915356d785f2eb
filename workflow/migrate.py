"""Move a results tree of the layout before per-config folders and run variants into the
current one, so finished training is kept (``make migrate-results``; then ``make adopt-runs``).

    results/runs/protocol~P/act~...        -> results/<name>/runs/protocol~P/variant~default/act~...
    logs/runs/protocol~P/act~...           -> logs/<name>/runs/protocol~P/variant~default/act~...
    benchmarks/runs/.../<job>.tsv          -> logs/<name>/runs/.../<job>.benchmark.tsv
    results/activation/lr_search/          -> results/<name>/activation/lr_search/

Everything else of the old tree (comparisons, summaries, figures) is left where it is: the
workflow rebuilds it in the new place from the moved runs. Nothing is overwritten: a target that
exists already stops the move before anything moves.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from workflow.config import DEFAULT_VARIANT, load_config


def _run_groups(root: Path) -> list[tuple[Path, Path]]:
    """(old, new) for each protocol folder's act~ subfolders under ``root`` (a runs/ folder)."""
    moves = []
    for protocol in sorted(root.glob("protocol~*")):
        for group in sorted(protocol.glob("act~*")):
            moves.append((group, protocol.name + f"/variant~{DEFAULT_VARIANT}/" + group.name))
    return moves


def planned_moves(tree: Path, name: str) -> list[tuple[Path, Path]]:
    """Every (source, target) of the migration of ``tree`` (a work tree) to config ``name``."""
    results, logs = tree / "results" / name, tree / "logs" / name
    moves = [(old, results / "runs" / new) for old, new in _run_groups(tree / "results/runs")]
    moves += [(old, logs / "runs" / new) for old, new in _run_groups(tree / "logs/runs")]
    for old, new in _run_groups(tree / "benchmarks/runs"):
        for tsv in sorted(old.rglob("*.tsv")):
            target = logs / "runs" / new / tsv.relative_to(old)
            moves.append((tsv, target.with_name(tsv.stem + ".benchmark.tsv")))
    traces = tree / "results/activation/lr_search"
    if traces.is_dir():
        moves.append((traces, results / "activation" / "lr_search"))
    return moves


def migrate(tree: Path, name: str) -> list[tuple[Path, Path]]:
    moves = planned_moves(tree, name)
    clashes = [str(target) for _, target in moves if target.exists()]
    if clashes:
        raise FileExistsError(f"not moving anything: these exist already: {clashes}")
    for source, target in moves:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(source, target)
    for old in ("results/runs", "logs/runs", "benchmarks/runs"):
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
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--tree", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    name = load_config([args.tree / "config.yaml", *args.configfile])["name"]
    moves = migrate(args.tree, name)
    print(f"moved {len(moves)} folders and files into results/{name}/ and logs/{name}/")


if __name__ == "__main__":
    main()
