# Pair comparisons, torch-free: ABC vs BAC of a run group, and (noise floor) a replicate on
# another data stream vs the same order on stream 0.


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
        log:
            f"logs/{GROUP_ID}/seed~{{seed}}/ABC_vs_BAC/{segment}.log",
        conda:
            "../envs/histres.yaml"
        params:
            first=lambda w: identity(w, order="ABC"),
            second=lambda w: identity(w, order="BAC"),
            segment=segment,
            updates=updates,
            dump_config=DUMP_CONFIG,
            code=code("compare_runs"),
        script:
            adapter("compare_runs")

    rule:
        name:
            f"compare_streams_{segment}"
        input:
            records=lambda w, s=segment: [
                *run_record(s, stream=0)(w),
                *run_record(s)(w),
            ],
            dumps_first=run_files("dumps", updates, stream=0),
            dumps_second=run_files("dumps", updates),
            checkpoints_first=run_files("checkpoints", updates, stream=0),
            checkpoints_second=run_files("checkpoints", updates),
        output:
            comparison=f"{RUN}/vs_stream~0/{segment}.csv",
        log:
            f"logs/{RUN_ID}/vs_stream~0/{segment}.log",
        conda:
            "../envs/histres.yaml"
        params:
            first=lambda w: identity(w, stream=0),
            second=lambda w: identity(w),
            segment=segment,
            updates=updates,
            dump_config=DUMP_CONFIG,
            code=code("compare_runs"),
        script:
            adapter("compare_runs")
