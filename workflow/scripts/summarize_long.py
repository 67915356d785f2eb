"""Snakemake adapter: the long-horizon study (H_repr at 10k, 25k, 50k and its change)."""

from workflow.artifacts import write_csv
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.stats import Bootstrap
from workflow.studies import long_summary

smk = snakemake  # noqa: F821 (injected by Snakemake)
updates = smk.params.updates
bootstrap = Bootstrap.from_config(smk.params.config["statistics"])

with job_log(smk.log[0]) as log:
    comparisons = read_comparisons([*smk.input.base, *smk.input.extended], smk.params.segments)
    summary = long_summary(comparisons, updates, updates[0], updates[-1], bootstrap)
    write_csv(smk.output.summary[0], summary)
    log(summary.to_string(index=False))
