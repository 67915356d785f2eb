"""Snakemake adapter: pick each seed's earliest behaviourally matched checkpoint."""

from workflow.artifacts import write_csv
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.matching import select_matches

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config["matching"]

with job_log(smk.log[0]) as log:
    comparisons = read_comparisons(smk.input.comparisons, smk.params.segments)
    matches = select_matches(comparisons, cfg["max_accuracy_gap_pp"], cfg["min_accuracy_pct"])
    log("matches:\n" + matches.to_string(index=False))
    write_csv(smk.output.matches, matches)
