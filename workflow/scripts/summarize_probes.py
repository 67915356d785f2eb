"""Snakemake adapter: probe accuracy differences per budget over model seeds, TOST at 500.

At the budget with extra probe seeds the primary probe seed is reported alone and pooled with
the extra seeds (two rows, told apart by ``probe_seeds``)."""

import pandas as pd

from workflow.artifacts import write_csv
from workflow.joblog import job_log
from workflow.stats import Bootstrap
from workflow.studies import per_seed_differences, probes_summary
from workflow.tables import read_table

smk = snakemake  # noqa: F821 (injected by Snakemake)
bootstrap = Bootstrap.from_config(smk.params.config["statistics"])

with job_log(smk.log[0]) as log:
    rows = pd.concat(
        [
            read_table(path, "delete it and rerun: rule train_probes rebuilds it")
            for path in smk.input.probes
        ],
        ignore_index=True,
    )
    per_seed = per_seed_differences(rows, int(smk.params.probe_seed))
    summary = probes_summary(per_seed, smk.params.tost, bootstrap)
    write_csv(smk.output.per_seed, per_seed)
    write_csv(smk.output.summary, summary)
    log(summary.to_string(index=False))
