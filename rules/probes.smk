# Frozen fc1 linear probes on the main pairs at the probe endpoint (torch).

PROBES = config["studies"]["probes"]


rule train_probes:
    input:
        mnist=ancient(rules.prepare_mnist.output.npz),
        checkpoints=expand(
            f"{RUN}/checkpoints/update~{PROBES['endpoint']}.npz",
            **run_group(),
            seed="{seed}",
            order=ORDERS,
        ),
    output:
        probes=f"{RESULTS}/probes/seed~{{seed}}.csv",
        provenance=f"{RESULTS}/probes/seed~{{seed}}.provenance.json",
    log:
        f"{LOGS}/probes/seed~{{seed}}.log",
    benchmark:
        f"{LOGS}/probes/seed~{{seed}}.benchmark.tsv"
    priority: AFTER_TRAINING
    conda:
        "../envs/histres.yaml"
    threads: config["training"]["torch_threads"]
    resources:
        mem_mb=3000,
    params:
        config=slices.probe_config(config),
        probes=slices.probe_settings(config),
        activation=run_group()["act"],
        # What each checkpoint must say it is (the reader checks the identity it stores).
        runs=lambda w: [
            {
                **run_identity({**run_group(), "seed": w.seed}, order=order),
                "update": PROBES["endpoint"],
            }
            for order in ORDERS
        ],
        code=code("train_probes"),
    script:
        adapter("train_probes")


rule summarize_probes:
    input:
        probes=expand(
            rules.train_probes.output.probes, seed=config["studies"]["main"]["seeds"]
        ),
    output:
        summary=report(
            f"{RESULTS}/summary/probes.csv",
            caption="../workflow/report/probes.rst",
            category="Summaries",
        ),
        per_seed=f"{RESULTS}/tables/probes_per_seed.csv",
    log:
        f"{LOGS}/probes/summarize_probes.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=STATISTICS,
        probe_seed=PROBES["probe_seed"],
        tost=sorted_keys(
            {k: PROBES[k] for k in ("tost_budget", "tost_margin_pp", "tost_alpha")}
        ),
        code=code("summarize_probes"),
    script:
        adapter("summarize_probes")
