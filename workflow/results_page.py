"""A reference folder's results page, ``<folder>/RESULTS.md``, and its comparison with the
published study, ``<folder>/replication.csv``: written from the folder's files and nothing
else, in the words of ``workflow/templates/`` (``workflow.phrases``).

    python -m workflow.results_page reference/full                      # write both
    python -m workflow.results_page reference/full --check              # fail if stale
    python -m workflow.results_page reference/full --config config.yaml # against a config

The page is the generator's own: no hand-written text lives in it, so regenerating it never
loses a word, and a test regenerates the committed pages and fails when they differ.
``--config`` names the config files (merged in order) the folder is heading to, when they ask
more seeds of a study than the export's config did: the page then says how many of those are in
and how many hours of training the rest need. Without it, the export's own config is the plan.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workflow import headlines, replication
from workflow.artifacts import read_csv, read_json, write_csv
from workflow.config import load_config
from workflow.noise_text import main_extras, noise_extras
from workflow.phrases import fill, say, text
from workflow.progress import study_progress, study_seeds
from workflow.remaining import Remaining, remaining
from workflow.replication_text import replication_section
from workflow.stats import Bootstrap

REPO = Path(__file__).resolve().parent.parent
PUBLISHED = REPO / "reference" / "published.csv"
PAGE, TABLE = "RESULTS.md", "replication.csv"


def about(folder: Path, prov: Mapping[str, Any]) -> str:
    env = prov["environment"]
    return say(
        "page.about",
        folder=shown(folder),
        date=prov["date"],
        commit=prov["export_commit"],
        name=prov["name"],
        digest=prov["config_digest"][:12],
        codes=", ".join(f"`{code}`" for code in prov["training_code"]),
        torch=env["packages"]["torch"],
        threads=env["torch_threads"],
        kernels=env["kernels"],
        device=env["device"],
        cpu=env["cpu_model"],
        cpu_path=headlines.cpu_path(env),
    )


def remaining_line(left: Remaining) -> str:
    kinds = left.kinds
    counts = {"study": left.study, "left": left.seeds_left, "jobs": left.jobs}
    untimed = [kind for kind in kinds if kind.timed == 0]
    if untimed:
        kind = untimed[0]
        return say("page.remaining_unknown", **counts, segment=kind.segment, protocol=kind.protocol)
    basis = "; ".join(
        say(
            "page.remaining_basis",
            jobs=kind.jobs,
            minutes=kind.median_s / 60,
            timed=kind.timed,
            segment=kind.segment,
            protocol=kind.protocol,
        )
        for kind in kinds
    )
    return say("page.remaining", **counts, hours=left.hours, basis=basis)


def status(folder: Path, prov: Mapping[str, Any], planned: Mapping[str, Any]) -> str:
    """The pending studies, the complete ones the plan extends to more seeds, and the training
    each still needs (timed only for a CPU reference: the hours are those of 2 cores)."""
    lines = [headlines.pending_line(folder, prov)]
    progress = study_progress(folder, planned)
    extended = [
        study
        for study in prov["studies_complete"]
        if progress.get(study) is not None
        and study_seeds(planned, study) != study_seeds(prov["config"], study)
    ]
    for study in extended:
        done = progress[study]
        exported = len(study_seeds(prov["config"], study))
        lines.append(
            say("page.extended", study=study, seeds=done.seeds, done=done.done, exported=exported)
        )
    if prov["environment"]["device"] == "cpu":
        for study in [*prov["studies_pending"], *extended]:
            left = remaining(folder, planned, study)
            if left is not None and left.jobs:
                lines.append(remaining_line(left))
    return "\n\n".join(lines)


def figures(folder: Path, study: str) -> str:
    """The study's figures the folder holds, each with its caption."""
    shown = [
        f"![{name}](figures/{name}.png)\n\n*{caption}*\n\n"
        for name, caption in text("figures").get(study, {}).items()
        if (folder / "figures" / f"{name}.png").is_file()
    ]
    return "".join(shown)


def studies(folder: Path, prov: Mapping[str, Any]) -> str:
    sections = []
    for study in prov["studies_complete"]:
        summary = read_csv(folder / "summary" / f"{study}.csv")
        body = headlines.study_text(study, summary, prov["config"])
        if study == "noise_floor":
            body += noise_extras(folder, prov["config"])
        if study == "main":
            body += main_extras(folder, round(1 - prov["config"]["statistics"]["ci_level"], 10))
        sections.append(
            fill(
                "study",
                study=study,
                question=headlines.QUESTIONS[study],
                figures=figures(folder, study),
                body=body,
            ).strip()
        )
    return "\n\n".join(sections)


def shown(path: Path) -> str:
    """A path as the page prints it: relative to the repository when inside it, so that the
    page reads the same from any working directory."""
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return path.as_posix()


def command(folder: Path, configs: list[Path]) -> str:
    return " ".join(
        ["python -m workflow.results_page", shown(folder)]
        + [f"--config {shown(path)}" for path in configs]
    )


def render(
    folder: Path, configs: list[Path], published: Path = PUBLISHED
) -> tuple[str, pd.DataFrame | None]:
    """(the page, the replication table or None where the config is not the published
    protocol's)."""
    prov = read_json(folder / "provenance.json")
    planned = load_config(configs) if configs else prov["config"]
    if planned["name"] != prov["name"]:
        raise ValueError(
            f"{folder}: exported under config {prov['name']!r}, but the config files "
            f"{[str(c) for c in configs]} are {planned['name']!r}: name the folder's own"
        )
    bootstrap = Bootstrap.from_config(prov["config"]["statistics"])
    section, table = replication_section(
        folder, prov["config"], replication.read_published(published)
    )
    page = fill(
        "results",
        command=command(folder, configs),
        name=prov["name"],
        about=about(folder, prov),
        training=headlines.training_line(folder, prov.get("carried_over", [])),
        status=status(folder, prov, planned),
        replication=section,
        statistics=say(
            "page.statistics", level=f"{bootstrap.level:.0%}", resamples=bootstrap.resamples
        ),
        studies=studies(folder, prov),
    )
    return page.rstrip() + "\n", table


def stale(folder: Path, page: str, table: pd.DataFrame | None) -> list[str]:
    """The files of ``folder`` that differ, byte for byte, from a fresh rendering."""
    fresh = {PAGE: page} | ({TABLE: table.to_csv(index=False)} if table is not None else {})
    return [
        name
        for name, content in fresh.items()
        if not (folder / name).is_file() or (folder / name).read_text() != content
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workflow.results_page", description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--config", type=Path, action="append", default=[])
    parser.add_argument("--check", action="store_true", help="fail if the files are stale")
    args = parser.parse_args(argv)
    page, table = render(args.folder, args.config)
    if args.check:
        if differ := stale(args.folder, page, table):
            print(
                f"{args.folder}: {', '.join(differ)} differ from the folder's files: run "
                f"{command(args.folder, args.config)}",
                file=sys.stderr,
            )
            return 1
        return 0
    (args.folder / PAGE).write_text(page)
    if table is not None:
        write_csv(args.folder / TABLE, table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
