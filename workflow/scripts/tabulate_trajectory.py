"""Snakemake adapter: the order effect, the noise floor and their excess at every C checkpoint,
per seed and over seeds, from each seed's square of pairs."""

from workflow.artifacts import write_csv
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.noise_floor import per_seed_trajectory, trajectory_summary
from workflow.stats import Bootstrap

smk = snakemake  # noqa: F821 (injected by Snakemake)
bootstrap = Bootstrap.from_config(smk.params.config["statistics"])

with job_log(smk.log[0]) as log:
    pairs = {
        pair: read_comparisons(smk.input[pair], smk.params.segments) for pair in smk.params.pairs
    }
    per_seed, n_diverged = per_seed_trajectory(pairs)
    summary = trajectory_summary(per_seed, n_diverged, bootstrap)
    write_csv(smk.output.per_seed, per_seed)
    write_csv(smk.output.summary, summary)
    log(summary[summary["metric"] == "excess"].to_string(index=False))
