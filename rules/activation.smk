# The activation study. The stability search is part of the DAG: candidates are tried in
# descending order, and a candidate's ten traces run only if every higher candidate failed.
# Its result picks the learning rate (hence the run paths) of ReLU and LeakyReLU runs.


checkpoint check_stability:
    input:
        traces=expand(
            rules.trace_stability.output.trace,
            seed=ACTIVATION["seeds"],
            order=ORDERS,
            allow_missing=True,
        ),
    output:
        verdict=f"{RESULTS}/activation/lr_search/lr~{{lr}}.json",
    log:
        f"{LOGS}/activation/lr_search/lr~{{lr}}.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        code=code("check_stability"),
    script:
        adapter("check_stability")


checkpoint select_learning_rate:
    input:
        verdicts=tried_candidates,
    output:
        selection=f"{RESULTS}/activation/selected_lr.json",
        table=report(
            f"{RESULTS}/summary/lr_search.csv",
            caption="../workflow/report/lr_search.rst",
            category="Summaries",
        ),
    log:
        f"{LOGS}/activation/select_learning_rate.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        candidates=ACTIVATION["candidates"],
        pinned=ACTIVATION["lr"],
        code=code("select_learning_rate"),
    script:
        adapter("select_learning_rate")


rule summarize_activation:
    input:
        unpack(activation_comparisons),
        selection=rules.select_learning_rate.output.selection,
        checkpoints=activation_checkpoints,
    output:
        summary=report(
            f"{RESULTS}/summary/activation.csv",
            caption="../workflow/report/activation.rst",
            category="Summaries",
        ),
        audit=f"{RESULTS}/tables/activation_audit.csv",
    log:
        f"{LOGS}/activation/summarize_activation.log",
    localrule: True
    conda:
        "../envs/histres.yaml"
    params:
        config=STATISTICS,
        updates=[SEGMENTS["base"][-1], *SEGMENTS["extended"]],
        segments=SEGMENTS,
        code=code("summarize_activation"),
    script:
        adapter("summarize_activation")
