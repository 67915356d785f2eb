rule dump_representations:
    input:
        mnist=rules.prepare_mnist.output.npz,
        checkpoints=lambda wildcards: run_paths(wildcards, "checkpoints"),
    output:
        dumps=expand(
            "results/{{study}}/seed~{{seed}}/order~{{order}}/dumps/update~{update}.parquet",
            update=CHECKPOINTS,
        ),
    log:
        "logs/{study}/seed~{seed}/order~{order}/dump_representations.log",
    benchmark:
        "benchmarks/{study}/seed~{seed}/order~{order}/dump_representations.tsv"
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=3000,
    params:
        config=slice_config(
            "data.digests",
            "data.normalize",
            "data.subset",
            "tasks.probe_per_digit",
            "model",
            "training.torch_threads",
            "training.device",
            "evaluation",
        ),
        code=code("dump_representations"),
    script:
        adapter("dump_representations")
