rule summarize_study:
    input:
        comparisons=seed_paths("results/{study}/seed~{seed}/comparison.csv"),
        matches=rules.select_matches.output.matches,
    output:
        summary="results/summary/{study}.csv",
        per_seed="results/tables/{study}_per_seed.csv",
        provenance="results/summary/{study}.provenance.json",
    log:
        "logs/{study}/summarize_study.log",
    conda:
        "../envs/histres.yaml"
    params:
        config=slice_config("statistics"),
        code=code("summarize_study"),
    script:
        adapter("summarize_study")
