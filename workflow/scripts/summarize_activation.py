"""Snakemake adapter: ReLU vs LeakyReLU at the selected rate, and the non-finite audit."""

import numpy as np
import pandas as pd

from workflow.artifacts import load_checkpoint, read_json, write_csv
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.stats import Bootstrap
from workflow.studies import activation_summary

smk = snakemake  # noqa: F821 (injected by Snakemake)
bootstrap = Bootstrap.from_config(smk.params.config["statistics"])
selection = read_json(smk.input.selection)


def concat(*names):
    return read_comparisons([p for name in names for p in smk.input[name]], smk.params.segments)


with job_log(smk.log[0]) as log:
    audit = []
    for path in smk.input.checkpoints:
        state, meta = load_checkpoint(path)
        bad = sum(int((~np.isfinite(v)).sum()) for v in state.values())
        audit.append(
            {key: meta[key] for key in ("act", "lr", "seed", "order", "update", "status")}
            | {"non_finite_values": bad, "path": path}
        )
    audit = pd.DataFrame(
        audit,
        columns=["act", "lr", "seed", "order", "update", "status", "non_finite_values", "path"],
    )
    write_csv(smk.output.audit, audit)
    if selection["lr"] is None:
        summary = pd.DataFrame([{"metric": "delta_h_repr", "note": selection["how"]}])
    else:
        relu = concat("relu_base", "relu_extended")
        leaky = concat("leaky_relu_base", "leaky_relu_extended")
        summary = activation_summary(relu, leaky, smk.params.updates, bootstrap)
        summary.insert(0, "lr", selection["lr"])
        summary["non_finite_checkpoints"] = int((audit["non_finite_values"] > 0).sum())
        summary["diverged_checkpoints"] = int((audit["status"] != "ok").sum())
    write_csv(smk.output.summary, summary)
    log(f"lr {selection['lr']} ({selection['how']})\n{summary.to_string(index=False)}")
