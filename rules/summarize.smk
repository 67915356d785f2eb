# Matching and statistics, torch-free. "Pair views" (main, rotated, each pilot policy) share
# one matching and summary rule; the other studies have a summary rule each.


rule select_matches:
    input:
        comparisons=view_comparisons,
    output:
        matches=f"{RESULTS}/{{view}}/matches.csv",
        # The rule it applied and the table's digest, which its readers check.
        provenance=f"{RESULTS}/{{view}}/matches.provenance.json",
    log:
        f"{LOGS}/{{view}}/select_matches.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=slice_config("matching"),
        segments=BASE_SEGMENT,
        code=code("select_matches"),
    script:
        adapter("select_matches")


rule summarize_pairs:
    input:
        comparisons=view_comparisons,
        matches=rules.select_matches.output.matches,
    output:
        summary=report(
            f"{RESULTS}/summary/{{view}}.csv",
            caption="../workflow/report/summary.rst",
            category="Summaries",
        ),
        per_seed=report(
            f"{RESULTS}/tables/{{view}}_per_seed.csv",
            caption="../workflow/report/per_seed.rst",
            category="Per-seed tables",
        ),
        provenance=f"{RESULTS}/summary/{{view}}.provenance.json",
    log:
        f"{LOGS}/{{view}}/summarize_pairs.log",
    wildcard_constraints:
        view="|".join(PAIR_VIEWS),
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=STATISTICS,
        segments=BASE_SEGMENT,
        code=code("summarize_pairs"),
    script:
        adapter("summarize_pairs")


rule summarize_pilot:
    input:
        per_seed=expand(
            f"{RESULTS}/tables/pilot_{{policy}}_per_seed.csv",
            policy=STUDIES["pilot"]["policies"],
        ),
    output:
        summary=report(
            expand(SUMMARY, study="pilot"),
            caption="../workflow/report/pilot.rst",
            category="Summaries",
        ),
    log:
        f"{LOGS}/pilot/summarize_pilot.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=STATISTICS,
        policies=STUDIES["pilot"]["policies"],
        code=code("summarize_pilot"),
    script:
        adapter("summarize_pilot")


rule summarize_long:
    input:
        base=comparisons(run_group(), STUDIES["long"]["seeds"], "base"),
        extended=comparisons(run_group(), STUDIES["long"]["seeds"], "extended"),
    output:
        summary=report(
            expand(SUMMARY, study="long"),
            caption="../workflow/report/long.rst",
            category="Summaries",
        ),
    log:
        f"{LOGS}/long/summarize_long.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=STATISTICS,
        updates=[SEGMENTS["base"][-1], *SEGMENTS["extended"]],
        segments=SEGMENTS,
        code=code("summarize_long"),
    script:
        adapter("summarize_long")


rule summarize_noise_floor:
    input:
        **noise_floor_pairs(),
        matches=f"{RESULTS}/noise_floor/matches.csv",
    output:
        summary=report(
            SUMMARY.format(study="noise_floor"),
            caption="../workflow/report/noise_floor.rst",
            category="Summaries",
        ),
        per_seed=PER_SEED.format(study="noise_floor"),
        decision=report(
            f"{RESULTS}/tables/noise_floor_decision.csv",
            caption="../workflow/report/noise_floor_decision.rst",
            category="Summaries",
        ),
    log:
        f"{LOGS}/noise_floor/summarize_noise_floor.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        pairs=list(noise_floor_pairs()),
        config=slice_config("statistics", "studies.noise_floor"),
        segments=BASE_SEGMENT,
        code=code("summarize_noise_floor"),
    script:
        adapter("summarize_noise_floor")


# The main study's own seeds against their noise floor, at its two endpoints: the published 20
# seeds' reading, which the noise floor study extends.
rule summarize_order_vs_noise:
    input:
        **noise_floor_pairs(STUDIES["main"]["seeds"]),
        matches=f"{RESULTS}/main/matches.csv",
    output:
        summary=report(
            f"{RESULTS}/tables/order_vs_noise_endpoints.csv",
            caption="../workflow/report/noise_floor.rst",
            category="Summaries",
        ),
        per_seed=f"{RESULTS}/tables/order_vs_noise_endpoints_per_seed.csv",
    log:
        f"{LOGS}/main/summarize_order_vs_noise.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        pairs=list(noise_floor_pairs()),
        config=STATISTICS,
        segments=BASE_SEGMENT,
        code=code("summarize_noise_floor"),
    script:
        adapter("summarize_noise_floor")


# The order effect against the noise floor at every C checkpoint, for the main seeds (the
# headline figure) and for the noise floor study's seeds.
rule tabulate_trajectory:
    input:
        unpack(lambda w: noise_floor_pairs(MATCH_VIEWS[TRAJECTORIES[w.trajectory]][1])),
    output:
        summary=report(
            f"{RESULTS}/tables/{{trajectory}}.csv",
            caption="../workflow/report/trajectory.rst",
            category="Per-seed tables",
        ),
        per_seed=f"{RESULTS}/tables/{{trajectory}}_per_seed.csv",
    log:
        f"{LOGS}/trajectories/{{trajectory}}.log",
    wildcard_constraints:
        trajectory="|".join(TRAJECTORIES),
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        pairs=list(noise_floor_pairs()),
        config=STATISTICS,
        segments=BASE_SEGMENT,
        code=code("tabulate_trajectory"),
    script:
        adapter("tabulate_trajectory")
