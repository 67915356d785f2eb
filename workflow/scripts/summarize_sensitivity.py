"""Snakemake adapter: the sensitivity study. Each training variant's per-seed table next to the
default runs of the same seeds, and each matching rule re-applied to the main comparisons."""

from workflow.artifacts import read_csv, write_csv
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.match_table import read_matches
from workflow.matching import MatchRule
from workflow.noise_floor import noise_floor_table
from workflow.sensitivity import (
    METRICS,
    matched_values,
    one_at_a_time,
    rule_endpoint_table,
    sensitivity_summary,
    with_noise_floor,
)
from workflow.stats import Bootstrap

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config
study, matching = cfg["studies"]["sensitivity"], cfg["matching"]

with job_log(smk.log[0]) as log:
    main = read_csv(smk.input.default)
    default = main[main["seed"].isin(study["seeds"])]
    floor_pairs = {
        pair: read_comparisons(smk.input[f"floor_{pair}"], smk.params.segments)
        for pair in smk.params.floor_pairs
    }
    main_matches = read_matches(
        smk.input.main_matches,
        read_comparisons(smk.input.comparisons, smk.params.segments),
        matching,
    )
    floor_matches = main_matches[main_matches["seed"].isin(study["seeds"])]
    floor = noise_floor_table(floor_pairs, floor_matches, cfg["statistics"]["common_endpoint"])
    variants = {"default": with_noise_floor(default, floor)}
    variants |= dict(zip(study["variants"], map(read_csv, smk.input.variants), strict=True))
    protocol = MatchRule.protocol(matching["max_accuracy_gap_pp"], matching["min_accuracy_pct"])
    rules = one_at_a_time(protocol, study["max_gaps_pp"], study["grids"], study["persistence"])
    rules = {"default" if rule == protocol else name: rule for name, rule in rules.items()}
    values = matched_values(
        read_comparisons(smk.input.comparisons, smk.params.segments), rules, METRICS
    )
    matching_arms = {name: rule_endpoint_table(values[values["rule"] == name]) for name in rules}
    summary, per_seed = sensitivity_summary(
        {"variant": variants, "matching": matching_arms},
        "default",
        Bootstrap.from_config(cfg["statistics"]),
    )
    write_csv(smk.output.per_seed, per_seed)
    write_csv(smk.output.summary, summary)
    log(summary[summary["metric"] == "h_repr"].to_string(index=False))
