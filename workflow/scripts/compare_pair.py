"""Snakemake adapter: compare the two histories of one seed at every checkpoint."""

import pandas as pd

from workflow.artifacts import ArtifactError, load_checkpoint, read_json, read_parquet, write_csv
from workflow.compare import compare_checkpoint
from workflow.joblog import job_log

smk = snakemake  # noqa: F821 (injected by Snakemake)
seed, study = int(smk.wildcards.seed), smk.wildcards.study
orders = smk.params.orders
updates = smk.params.updates

with job_log(smk.log[0]) as log:
    runs = {order: read_json(path) for order, path in zip(orders, smk.input.records, strict=True)}
    digests = {order: run["init_digest"] for order, run in runs.items()}
    if len(set(digests.values())) != 1:
        raise ArtifactError(
            f"seed {seed}: the two orders did not start from identical "
            f"weights (initial digests {digests})"
        )
    log(f"seed {seed}: both orders start from weights {digests[orders[0]][:16]}")
    rows = []
    for i, update in enumerate(updates):
        loaded = {}
        for order in orders:
            dump = smk.input[f"dumps_{order}"][i]
            expect = {"study": study, "seed": seed, "order": order, "update": update}
            table, meta = read_parquet(dump, expect=expect)
            state, _ = load_checkpoint(smk.input[f"checkpoints_{order}"][i])
            loaded[order] = (table, meta, state)
        row = {"seed": seed, "update": update}
        if all(meta["status"] == "ok" for _, meta, _ in loaded.values()):
            (a, meta_a, state_a), (b, meta_b, state_b) = (loaded[o] for o in orders)
            row["pair_status"] = "ok"
            row.update(
                compare_checkpoint(a, b, meta_a["summary"], meta_b["summary"], state_a, state_b)
            )
            log(f"update {update}: H_repr {row['h_repr']:.4f}, gap {row['acc_gap_pp']:.2f} pp")
        else:
            row["pair_status"] = "diverged"
            log(f"update {update}: a run diverged before this checkpoint")
        rows.append(row)
    write_csv(smk.output.comparison, pd.DataFrame(rows))
