# Training: one job per run for phases 1-2 and C to the last base checkpoint; long-horizon
# runs continue from the resumable state that job leaves; the stability search's short traces.


rule train_history:
    input:
        mnist=ancient(rules.prepare_mnist.output.npz),
        device=device_checked(),
    output:
        checkpoints=expand(
            f"{RUN}/checkpoints/update~{{update}}.npz",
            update=SEGMENTS["base"],
            allow_missing=True,
        ),
        record=f"{RUN}/run.json",
        state=f"{RUN}/state.pt",
    log:
        f"{LOGS}/{RUN_ID}/train_history.log",
    benchmark:
        f"{LOGS}/{RUN_ID}/train_history.benchmark.tsv"
    priority: training_priority
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=4000,
    params:
        config=run_training_config,
        segment="base",
        updates=SEGMENTS["base"],
        code=code("train_history"),
    script:
        adapter("train_history")


rule extend_history:
    input:
        mnist=ancient(rules.prepare_mnist.output.npz),
        device=device_checked(),
        state=rules.train_history.output.state,
    output:
        checkpoints=expand(
            f"{RUN}/checkpoints/update~{{update}}.npz",
            update=SEGMENTS["extended"],
            allow_missing=True,
        ),
        record=f"{RUN}/extension.json",
    log:
        f"{LOGS}/{RUN_ID}/extend_history.log",
    benchmark:
        f"{LOGS}/{RUN_ID}/extend_history.benchmark.tsv"
    priority: training_priority
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=4000,
    params:
        config=run_training_config,
        segment="extended",
        updates=SEGMENTS["extended"],
        code=code("train_history"),
    script:
        adapter("train_history")


rule trace_stability:
    input:
        mnist=ancient(rules.prepare_mnist.output.npz),
        device=device_checked(),
    output:
        trace=f"{RESULTS}/activation/lr_search/lr~{{lr}}/seed~{{seed}}/order~{{order}}.json",
    log:
        f"{LOGS}/activation/lr_search/lr~{{lr}}/seed~{{seed}}/order~{{order}}.log",
    benchmark:
        f"{LOGS}/activation/lr_search/lr~{{lr}}/seed~{{seed}}/order~{{order}}.benchmark.tsv"
    priority: training_priority
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=4000,
    params:
        config=TRAINING_CONFIG[DEFAULT_VARIANT],
        trace_updates=config["studies"]["activation"]["trace_updates"],
        optim=config["training"]["optimizer_at_common"],
        code=code("trace_stability"),
    script:
        adapter("trace_stability")
