"""Snakemake adapter: compare the retrained runs' digests with the reference folder's; write the
comparison and its report, and fail when any checkpoint differs or a reference run is missing."""

import sys
from pathlib import Path

import pandas as pd

from workflow.artifacts import atomic_path, read_csv, read_json, write_csv
from workflow.groups import main_group
from workflow.joblog import job_log
from workflow.reference.tables import read_reference
from workflow.reference.verify import (
    check_config,
    check_runs_present,
    compare,
    describe_run,
    environment_differences,
    first_difference,
    missing_runs,
    parse_seeds,
    reference_environment,
    report,
    select_checkpoints,
    verdict,
)

smk = snakemake  # noqa: F821 (injected by Snakemake)
scope, seeds = smk.wildcards.scope, parse_seeds(smk.wildcards.seeds)
reference = Path(smk.params.reference)


def announce(text, log):
    """To the log, and to the terminal: the job log holds this process's own stderr."""
    for line in text.rstrip("\n").splitlines():
        log(line)
    print(text, file=sys.__stderr__, end="", flush=True)


with job_log(smk.log[0]) as log:
    provenance, checkpoints = read_reference(reference)
    check_config(provenance, smk.params.config)
    group = main_group(smk.params.config)
    expected = select_checkpoints(checkpoints, seeds, scope, group)
    check_runs_present(missing_runs(expected, seeds, group), str(reference))
    reruns = [read_csv(path) for path in smk.input.digests]
    # The environment each run was retrained in, by run: a mismatch is explained by its own.
    environments = {
        describe_run(rows.iloc[0]): read_json(path)
        for rows, path in zip(reruns, smk.input.environments, strict=True)
    }
    table = compare(expected, pd.concat(reruns, ignore_index=True))
    first = first_difference(table)
    here = environments[describe_run(table.iloc[0] if first is None else first)]
    text = report(
        table,
        environment_differences(reference_environment(provenance), here),
        title=f"verify {reference}, scope {scope}, seeds {smk.wildcards.seeds}:",
    )
    announce(text, log)
    if first is not None:
        differing = table[~table["identical"]]
        log("every differing checkpoint:\n" + differing.to_string(index=False))
    verdict(table, str(reference))
    write_csv(smk.output.table, table)
    with atomic_path(smk.output.report) as tmp:
        tmp.write_text(text)
