"""How far a config's workflow is: jobs done and left per rule, and an ETA (``make status``).

    python -m workflow.status [--configfile config/smoke.yaml] [--cores 2] [TARGET ...]

Starts nothing. Two dry runs give the counts: every job of the targets (``--forceall``) and the
jobs still to run, those running now included (their outputs are marked incomplete until they
finish, so the dry runs pass ``--rerun-incomplete``, or Snakemake would refuse to plan). A rule's
total is the larger of the two: the forced run plans nothing behind a checkpoint it would rerun
(the activation study's runs wait for the stability search's selection), where the other, whose
checkpoint has run, plans them all.

The ETA multiplies the jobs left of each rule by the median wall time of that rule's finished
jobs on this machine (Snakemake's benchmark files) and divides by the cores. A machine that has
trained nothing yet (one that `make restore` set up) takes the training rules' times from the
reference folder's runs (``reference/<name>/runs.csv``, wall time per run and segment), and says
so; other rules with no finished job are named as unmeasured instead of guessed.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from workflow.config import load_config, logs_root

# Benchmark files of each rule that has them (rules/*.smk, `benchmark:`), in the config's logs
# folder. Each pattern starts at a folder of the config's own: the default config's logs/ also
# holds the other configs' logs/<name>/, whose jobs are not its own.
BENCHMARKS = {
    "train_history": "runs/**/train_history.benchmark.tsv",
    "extend_history": "runs/**/extend_history.benchmark.tsv",
    "dump_representations": "runs/**/dump_base_representations.benchmark.tsv",
    "dump_extended_representations": "runs/**/dump_extended_representations.benchmark.tsv",
    "trace_stability": "activation/lr_search/**/order~*.benchmark.tsv",
    "train_probes": "probes/seed~*.benchmark.tsv",
    "audit_run": "audit/**/*.benchmark.tsv",
}
# The training rules whose jobs are the reference's runs.csv rows, by segment.
REFERENCE_SEGMENTS = {"train_history": "base", "extend_history": "extended"}


def job_counts(dry_run_output: str) -> dict[str, int]:
    """The 'Job stats' table of a dry run as {rule: jobs}; empty when nothing would run."""
    if "Job stats:" not in dry_run_output:
        return {}
    table = dry_run_output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    counts = {rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}
    counts.pop("total", None)
    return counts


def median_seconds(root: Path, patterns: Mapping[str, str] = BENCHMARKS) -> dict[str, float]:
    """Median wall seconds of the finished jobs of each rule, from its benchmark files."""
    medians = {}
    for rule, pattern in patterns.items():
        seconds = [_seconds(path) for path in sorted(root.glob(pattern))]
        seconds = [s for s in seconds if s is not None]
        if seconds:
            medians[rule] = statistics.median(seconds)
    return medians


def reference_seconds(runs_csv: Path) -> dict[str, float]:
    """Median wall seconds of the training jobs a reference folder lists, per training rule."""
    if not runs_csv.is_file():
        return {}
    runs = pd.read_csv(runs_csv)
    medians = {}
    for rule, segment in REFERENCE_SEGMENTS.items():
        seconds = runs.loc[runs["segment"] == segment, "wall_s"].dropna()
        if len(seconds):
            medians[rule] = float(seconds.median())
    return medians


def _seconds(path: Path) -> float | None:
    try:
        return float(pd.read_csv(path, sep="\t")["s"].iloc[0])
    except (OSError, ValueError, KeyError, IndexError):
        return None


def progress_table(
    total: Mapping[str, int],
    left: Mapping[str, int],
    seconds: Mapping[str, float],
    reference: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """A row per rule; ``reference`` times a rule that ``seconds`` (this machine) does not."""
    reference = reference or {}
    rows = []
    for rule in sorted(total.keys() | left.keys(), key=lambda r: (-left.get(r, 0), r)):
        n_left = left.get(rule, 0)
        n_total = max(total.get(rule, 0), n_left)
        timed = "here" if rule in seconds else "reference" if rule in reference else None
        per_job = seconds.get(rule, reference.get(rule))
        rows.append(
            {
                "rule": rule,
                "done": n_total - n_left,
                "total": n_total,
                "left": n_left,
                "s_per_job": per_job,
                "timed": timed,
                "job_hours_left": None if per_job is None else n_left * per_job / 3600,
            }
        )
    return pd.DataFrame(rows)


def report(table: pd.DataFrame, cores: int) -> str:
    lines = [table.to_string(index=False, na_rep="-", float_format=lambda x: f"{x:.2f}")]
    done, total = int(table["done"].sum()), int(table["total"].sum())
    lines.append(f"jobs: {done} of {total} done, {total - done} left")
    pending = table[table["left"] > 0]
    unmeasured = pending[pending["s_per_job"].isna()]["rule"].tolist()
    hours = float(pending["job_hours_left"].fillna(0).sum()) / max(cores, 1)
    if len(pending):
        eta = f"ETA about {hours:.1f} h on {cores} core(s) for the measured rules"
        borrowed = pending[pending["timed"] == "reference"]["rule"].tolist()
        if borrowed:
            eta += f" ({', '.join(borrowed)} timed by the reference's runs, not on this machine)"
        if unmeasured:
            eta += f"; not yet measured here: {', '.join(unmeasured)}"
        lines.append(eta)
    else:
        lines.append("nothing left to run")
    return "\n".join(lines)


def dry_runs(targets: list[str], configfiles: list[str]) -> tuple[list[str], list[str]]:
    """The arguments of the two dry runs: (every job, the jobs left)."""
    common = ["-n", "--nolock", "--rerun-incomplete", *targets]
    if configfiles:
        common += ["--configfile", *configfiles]
    return ["--forceall", *common], common


def _dry_run(args: Iterable[str]) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "snakemake", *args], capture_output=True, text=True, check=False
    )
    text = out.stdout + out.stderr
    if out.returncode:
        raise SystemExit(f"snakemake dry run failed:\n{text[-3000:]}")
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m workflow.status", description=__doc__)
    parser.add_argument("targets", nargs="*")
    parser.add_argument("--configfile", action="append", default=[])
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    every, remaining = dry_runs(args.targets, args.configfile)
    total, left = job_counts(_dry_run(every)), job_counts(_dry_run(remaining))
    config = load_config(["config.yaml", *args.configfile])
    seconds = median_seconds(Path(logs_root(config)))
    reference = reference_seconds(Path("reference") / config["name"] / "runs.csv")
    print(report(progress_table(total, left, seconds, reference), args.cores))


if __name__ == "__main__":
    main()
