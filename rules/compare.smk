rule compare_pair:
    input:
        records=expand(
            "results/{{study}}/seed~{{seed}}/order~{order}/run.json",
            order=["ABC", "BAC"],
        ),
        dumps_ABC=pair_paths("dumps", "ABC"),
        dumps_BAC=pair_paths("dumps", "BAC"),
        checkpoints_ABC=pair_paths("checkpoints", "ABC"),
        checkpoints_BAC=pair_paths("checkpoints", "BAC"),
    output:
        comparison="results/{study}/seed~{seed}/comparison.csv",
    log:
        "logs/{study}/seed~{seed}/compare_pair.log",
    conda:
        "../envs/histres.yaml"
    params:
        orders=["ABC", "BAC"],
        updates=CHECKPOINTS,
        code=code("compare_pair"),
    script:
        adapter("compare_pair")


rule select_matches:
    input:
        comparisons=seed_paths("results/{study}/seed~{seed}/comparison.csv"),
    output:
        matches="results/{study}/matches.csv",
    log:
        "logs/{study}/select_matches.log",
    conda:
        "../envs/histres.yaml"
    params:
        config=slice_config("matching"),
        code=code("select_matches"),
    script:
        adapter("select_matches")
