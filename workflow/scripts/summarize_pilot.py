"""Snakemake adapter: the pilot study (optimizer state at C preserved vs reset)."""

from workflow.artifacts import read_csv, write_csv
from workflow.joblog import job_log
from workflow.stats import Bootstrap
from workflow.studies import pilot_summary

smk = snakemake  # noqa: F821 (injected by Snakemake)
bootstrap = Bootstrap.from_config(smk.params.config["statistics"])

with job_log(smk.log[0]) as log:
    tables = dict(zip(smk.params.policies, map(read_csv, smk.input.per_seed), strict=True))
    summary = pilot_summary(tables, bootstrap)
    write_csv(smk.output.summary[0], summary)
    log(summary.to_string(index=False))
