"""Snakemake adapter: pick each seed's earliest behaviourally matched checkpoint."""

from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.match_table import write_matches
from workflow.matching import select_matches
from workflow.provenance import record

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config["matching"]

with job_log(smk.log[0]) as log:
    comparisons = read_comparisons(smk.input.comparisons, smk.params.segments)
    matches = select_matches(comparisons, cfg["max_accuracy_gap_pp"], cfg["min_accuracy_pct"])
    log("matches:\n" + matches.to_string(index=False))
    # The rule it applied and the table's digest, which every reader checks.
    write_matches(
        smk.output.matches,
        smk.output.provenance,
        matches,
        record(smk.params.config, smk.params.code, view=smk.wildcards.view),
    )
