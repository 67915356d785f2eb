# Determinism audit: retrain sampled runs in fresh processes, compare every checkpoint's digest.


rule audit_run:
    input:
        mnist=ancient(rules.prepare_mnist.output.npz),
        # training.device exists here (rules/preflight.smk)
        device=device_checked(),
        checkpoints=expand(
            f"{RUN}/checkpoints/update~{{update}}.npz",
            update=SEGMENTS["base"],
            allow_missing=True,
        ),
    output:
        audit=f"{RESULTS}/audit/{RUN_ID}.csv",
    log:
        f"{LOGS}/audit/{RUN_ID}.log",
    benchmark:
        f"{LOGS}/audit/{RUN_ID}.benchmark.tsv"
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=4000,
    params:
        config=run_training_config,
        updates=SEGMENTS["base"],
        code=code("audit_run"),
    script:
        adapter("audit_run")


rule audit_determinism:
    input:
        expand(
            f"{RESULTS}/audit/{RUN_ID}.csv",
            **run_group(),
            seed=config["audit"]["seeds"],
            order=config["audit"]["orders"],
        ),
    output:
        audit=report(
            f"{RESULTS}/audit/determinism.csv",
            caption="../workflow/report/audit.rst",
            category="Determinism audit",
        ),
    log:
        f"{LOGS}/audit/determinism.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        code=code("audit_determinism"),
    script:
        adapter("audit_determinism")
