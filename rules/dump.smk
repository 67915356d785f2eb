# One dump job per run segment writes one Parquet file per checkpoint (a process per
# checkpoint would pay the torch import each time).

for segment, updates in SEGMENTS.items():

    rule:
        name:
            "dump_representations"
            if segment == "base"
            else f"dump_{segment}_representations"
        input:
            mnist=ancient(rules.prepare_mnist.output.npz),
            device=device_checked(),
            checkpoints=expand(
                f"{RUN}/checkpoints/update~{{update}}.npz",
                update=updates,
                allow_missing=True,
            ),
        output:
            dumps=expand(
                f"{RUN}/dumps/update~{{update}}.parquet",
                update=updates,
                allow_missing=True,
            ),
        log:
            f"{LOGS}/{RUN_ID}/dump_{segment}_representations.log",
        benchmark:
            f"{LOGS}/{RUN_ID}/dump_{segment}_representations.benchmark.tsv"
        priority: AFTER_TRAINING
        conda:
            "../envs/histres.yaml"
        threads: config["training"]["torch_threads"]
        resources:
            mem_mb=3000,
        params:
            config=dump_config,
            updates=updates,
            code=code("dump_representations"),
        script:
            adapter("dump_representations")
