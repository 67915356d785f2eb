"""Snakemake adapter: compare two runs of one seed at every checkpoint of a segment.

The rule names the two runs (``params.first`` / ``params.second``: run identities) and gives
their dumps and checkpoints as ``dumps_first`` ... ``checkpoints_second``.
"""

# ruff: noqa: E402 (the imports after the set-up load numpy)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy loads: OpenBLAS reads machine.cpu_isa's cap when it loads.
enter_job(smk.config["machine"])

from workflow.artifacts import ArtifactError, load_checkpoint, read_json
from workflow.compare import compare_checkpoint
from workflow.comparisons import comparison_frame
from workflow.dumps import read_dump
from workflow.joblog import job_log
from workflow.provenance import record
from workflow.tables import write_table

runs = {"first": smk.params.first, "second": smk.params.second}

with job_log(smk.log[0]) as log:
    records = [read_json(path) for path in smk.input.records]
    starts = {
        r["provenance"]["order"] + f"/stream {r['provenance']['stream']}": r["init_digest"]
        for r in records
    }
    if smk.params.segment == "base" and len(set(starts.values())) != 1:
        raise ArtifactError(
            f"{smk.params.first} vs {smk.params.second}: the runs did not start "
            f"from identical weights (initial digests {starts})"
        )
    rows, digests = [], {"first": {}, "second": {}}
    for i, update in enumerate(smk.params.updates):
        loaded = {}
        for which, run in runs.items():
            dump = smk.input[f"dumps_{which}"][i]
            representations = read_dump(
                dump,
                expect={**run, "update": update, "config": smk.params.dump_config},
                rule="dump_representations",
            )
            table, meta = representations.table, representations.metadata
            checkpoint = smk.input[f"checkpoints_{which}"][i]
            state, checkpoint_meta = load_checkpoint(checkpoint, expect={**run, "update": update})
            if meta["params_digest"] != checkpoint_meta["params_digest"]:
                raise ArtifactError(
                    f"{dump} was made from parameters {meta['params_digest']}, but {checkpoint} "
                    f"holds {checkpoint_meta['params_digest']}: delete the dump and rerun "
                    "(rule dump_representations rebuilds it)"
                )
            loaded[which] = (table, meta, state)
            digests[which][update] = checkpoint_meta["params_digest"]
        row = {"seed": runs["first"]["seed"], "update": update}
        if all(meta["status"] == "ok" for _, meta, _ in loaded.values()):
            (a, meta_a, state_a), (b, meta_b, state_b) = loaded["first"], loaded["second"]
            row["pair_status"] = "ok"
            row.update(
                compare_checkpoint(a, b, meta_a["summary"], meta_b["summary"], state_a, state_b)
            )
            log(f"update {update}: H_repr {row['h_repr']:.4f}, gap {row['acc_gap_pp']:.2f} pp")
        else:
            row["pair_status"] = "diverged"
            log(f"update {update}: a run diverged before this checkpoint")
        rows.append(row)
    # Which checkpoints (by parameter digest) made each row, beside the usual provenance and
    # the table's own digest.
    write_table(
        smk.output.comparison,
        smk.output.provenance,
        comparison_frame(rows),
        record(
            smk.params.dump_config,
            smk.params.code,
            first=runs["first"],
            second=runs["second"],
            segment=smk.params.segment,
            params_digests=digests,
        ),
    )
