"""Snakemake adapter: the noise floor (same-order replicates) against the order effect."""

import pandas as pd

from workflow.artifacts import read_csv, write_csv
from workflow.joblog import job_log
from workflow.matching import select_matches
from workflow.studies import noise_floor_summary, noise_floor_table

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config


def concat(paths):
    return pd.concat([read_csv(path) for path in paths], ignore_index=True)


with job_log(smk.log[0]) as log:
    orders = concat(smk.input.orders)
    floors = {"ABC": concat(smk.input.floor_ABC), "BAC": concat(smk.input.floor_BAC)}
    matching = cfg["matching"]
    matches = select_matches(orders, matching["max_accuracy_gap_pp"], matching["min_accuracy_pct"])
    per_seed = noise_floor_table(orders, floors, matches, cfg["statistics"]["common_endpoint"])
    summary = noise_floor_summary(per_seed, cfg["statistics"])
    write_csv(smk.output.per_seed[0], per_seed)
    write_csv(smk.output.summary[0], summary)
    log(summary.to_string(index=False))
