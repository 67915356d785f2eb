"""Seconds of the small config's benchmarked jobs (the torch rules write Snakemake benchmark
files; the others do not), by kind of job, for the benchmarks that run its DAG."""

from __future__ import annotations

from pathlib import Path

KINDS = {"train": "training", "extend": "training", "dump": "dump"}


def benchmarked_seconds(logs: Path) -> dict[str, float]:
    """Job wall time under ``logs`` (a config's logs folder) by kind: training, dump, other."""
    seconds = {"training": 0.0, "dump": 0.0, "other timed": 0.0}
    for path in logs.glob("**/*.benchmark.tsv"):
        kind = KINDS.get(path.name.split("_")[0], "other timed")
        seconds[kind] += float(path.read_text().splitlines()[1].split("\t")[0])
    return seconds
