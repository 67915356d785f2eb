# The sensitivity study, torch-free: each variant (`variants:`) next to the default runs of the
# same seeds, and the matching rule changed one part at a time on the main comparisons.


rule summarize_sensitivity:
    input:
        **{
            f"floor_{pair}": files
            for pair, files in noise_floor_pairs(SENSITIVITY["seeds"]).items()
        },
        default=PER_SEED.format(study="main"),
        # The floor of its own seeds only, so that it never waits for the noise floor study.
        main_matches=f"{RESULTS}/main/matches.csv",
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
        floor_pairs=list(noise_floor_pairs()),
        segments=BASE_SEGMENT,
        code=code("summarize_sensitivity"),
    script:
        adapter("summarize_sensitivity")
