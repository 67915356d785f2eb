"""Snakemake adapter: collect the audited runs; fail, naming them, if any checkpoint differs."""

import pandas as pd

from workflow.artifacts import read_csv, write_csv
from workflow.joblog import job_log

smk = snakemake  # noqa: F821 (injected by Snakemake)

with job_log(smk.log[0]) as log:
    table = pd.concat([read_csv(path) for path in smk.input], ignore_index=True)
    different = table[~table["identical"].astype(bool)]
    if len(different):
        lines = [
            f"  {r.checkpoint}: original {r.original}, rerun {r.rerun}"
            for r in different.itertuples()
        ]
        raise RuntimeError(
            f"determinism audit failed: {len(different)} of {len(table)} checkpoints differ "
            "when retrained in a fresh process:\n" + "\n".join(lines)
        )
    write_csv(smk.output.audit, table)
    log(f"all {len(table)} audited checkpoints are bit-identical on rerun")
