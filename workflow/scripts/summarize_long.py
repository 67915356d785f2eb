"""Snakemake adapter: the long-horizon study (H_repr at 10k, 25k, 50k and its change)."""

import pandas as pd

from workflow.artifacts import read_csv, write_csv
from workflow.joblog import job_log
from workflow.studies import long_summary

smk = snakemake  # noqa: F821 (injected by Snakemake)
updates = smk.params.updates

with job_log(smk.log[0]) as log:
    frames = [read_csv(path) for path in [*smk.input.base, *smk.input.extended]]
    comparisons = pd.concat(frames, ignore_index=True)
    summary = long_summary(
        comparisons, updates, updates[0], updates[-1], smk.params.config["statistics"]
    )
    write_csv(smk.output.summary[0], summary)
    log(summary.to_string(index=False))
