# The sensitivity study, torch-free: each variant (`variants:`) next to the default runs of the
# same seeds, and the matching rule changed one part at a time on the main comparisons.


rule summarize_sensitivity:
    input:
        default=PER_SEED.format(study="main"),
        noise_floor=PER_SEED.format(study="noise_floor"),
        variants=expand(
            PER_SEED, study=[f"variant_{v}" for v in SENSITIVITY["variants"]]
        ),
        comparisons=pair_comparisons(run_group(), STUDIES["main"]["seeds"]),
    output:
        summary=report(
            SUMMARY.format(study="sensitivity"),
            caption="../workflow/report/sensitivity.rst",
            category="Summaries",
        ),
        per_seed=report(
            PER_SEED.format(study="sensitivity"),
            caption="../workflow/report/per_seed.rst",
            category="Per-seed tables",
        ),
    log:
        f"{LOGS}/sensitivity/summarize_sensitivity.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=slice_config("matching", "statistics", "studies.sensitivity"),
        segments=BASE_SEGMENT,
        code=code("summarize_sensitivity"),
    script:
        adapter("summarize_sensitivity")
