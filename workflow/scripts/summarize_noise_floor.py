"""Snakemake adapter: the order effect against the same-order noise floor, from every pair of
each seed's square of runs, at the stream-0 pair's matched checkpoint and the common one; with
the decision rule's verdict where the rule asks for it (the noise floor study)."""

from workflow.artifacts import write_csv
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.match_table import read_matches
from workflow.noise_floor import noise_floor_decision, noise_floor_summary, noise_floor_table
from workflow.stats import Bootstrap

smk = snakemake  # noqa: F821 (injected by Snakemake)
stats = smk.params.config["statistics"]
bootstrap = Bootstrap.from_config(stats)

with job_log(smk.log[0]) as log:
    pairs = {
        pair: read_comparisons(smk.input[pair], smk.params.segments) for pair in smk.params.pairs
    }
    matches = read_matches(smk.input.matches, pairs["ABC_BAC"], smk.config["matching"])
    per_seed = noise_floor_table(pairs, matches, stats["common_endpoint"])
    summary = noise_floor_summary(per_seed, bootstrap)
    write_csv(smk.output.per_seed, per_seed)
    write_csv(smk.output.summary, summary)
    log(summary.to_string(index=False))
    if "decision" in smk.output.keys():
        rule = smk.params.config["studies"]["noise_floor"]["decision"]
        primary = {"common": f"common_{stats['common_endpoint']}", "matched": "matched"}
        decision = noise_floor_decision(per_seed, rule, primary[rule["primary_endpoint"]])
        write_csv(smk.output.decision, decision)
        log(decision.to_string(index=False))
