# Pair comparisons, torch-free: ABC vs BAC of a run group, and (noise floor) a run on another
# data stream vs a run of either order on stream 0. A pair's first run is the ABC one (stream 0
# first when both have one order), so the per-pair columns named ABC/BAC read the same way.


for segment, updates in SEGMENTS.items():

    rule:
        name:
            f"compare_orders_{segment}"
        input:
            records=lambda w, s=segment: [
                *run_record(s, order="ABC")(w),
                *run_record(s, order="BAC")(w),
            ],
            dumps_first=run_files("dumps", updates, order="ABC"),
            dumps_second=run_files("dumps", updates, order="BAC"),
            checkpoints_first=run_files("checkpoints", updates, order="ABC"),
            checkpoints_second=run_files("checkpoints", updates, order="BAC"),
        output:
            comparison=f"{GROUP}/seed~{{seed}}/ABC_vs_BAC/{segment}.csv",
            provenance=f"{GROUP}/seed~{{seed}}/ABC_vs_BAC/{segment}.provenance.json",
        log:
            f"{LOGS}/{GROUP_ID}/seed~{{seed}}/ABC_vs_BAC/{segment}.log",
        priority: AFTER_TRAINING
        conda:
            "../envs/histres.yaml"
        params:
            first=lambda w: run_identity(w, order="ABC"),
            second=lambda w: run_identity(w, order="BAC"),
            segment=segment,
            updates=updates,
            dump_config=dump_config,
            code=code("compare_runs"),
        script:
            adapter("compare_runs")

    rule:
        name:
            f"compare_streams_{segment}"
        input:
            records=lambda w, s=segment: [
                *run_record(s, **stream0_run(w))(w),
                *run_record(s)(w),
            ],
            dumps_first=lambda w, u=updates: run_files("dumps", u, **first_run(w))(w),
            dumps_second=lambda w, u=updates: run_files("dumps", u, **second_run(w))(w),
            checkpoints_first=lambda w, u=updates: run_files(
                "checkpoints", u, **first_run(w)
            )(w),
            checkpoints_second=lambda w, u=updates: run_files(
                "checkpoints", u, **second_run(w)
            )(w),
        output:
            comparison=f"{RUN}/vs_stream~0/order~{{other}}/{segment}.csv",
            provenance=f"{RUN}/vs_stream~0/order~{{other}}/{segment}.provenance.json",
        log:
            f"{LOGS}/{RUN_ID}/vs_stream~0/order~{{other}}/{segment}.log",
        priority: AFTER_TRAINING
        conda:
            "../envs/histres.yaml"
        params:
            first=lambda w: run_identity(w, **first_run(w)),
            second=lambda w: run_identity(w, **second_run(w)),
            segment=segment,
            updates=updates,
            dump_config=dump_config,
            code=code("compare_runs"),
        script:
            adapter("compare_runs")
