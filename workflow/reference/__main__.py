"""The command line, ``python -m workflow.reference export|restore``: ``workflow.reference``."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workflow.config import load_config, logs_root, results_root
from workflow.machine.caps import isa_caps
from workflow.provenance import REPO_ROOT
from workflow.reference import pair_results
from workflow.reference.export import export
from workflow.reference.studies import STUDIES, StudiesWouldBeLost


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
    import workflow.reference as package  # noqa: PLC0415 (its docstring is the help)

    prog = "python -m workflow.reference"
    parser = argparse.ArgumentParser(
        prog=prog, description=package.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
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
    repo = REPO_ROOT
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
