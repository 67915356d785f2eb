"""Snakemake adapter: per-seed endpoint table and the study's summary statistics."""

from workflow.artifacts import write_csv, write_json
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.match_table import read_matches
from workflow.provenance import record
from workflow.stats import Bootstrap
from workflow.summary import endpoint_table, summarize

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config["statistics"]
bootstrap = Bootstrap.from_config(cfg)

with job_log(smk.log[0]) as log:
    comparisons = read_comparisons(smk.input.comparisons, smk.params.segments)
    matches = read_matches(smk.input.matches, comparisons, smk.config["matching"])
    per_seed = endpoint_table(comparisons, matches, cfg["common_endpoint"])
    summary = summarize(per_seed, bootstrap)
    write_csv(smk.output.per_seed, per_seed)
    write_csv(smk.output.summary, summary)
    write_json(
        smk.output.provenance,
        record(
            smk.params.config,
            smk.params.code,
            view=smk.wildcards.view,
            inputs=list(map(str, smk.input)),
        ),
    )
    log(summary.to_string(index=False))
