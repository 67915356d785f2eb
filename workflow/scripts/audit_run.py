"""Snakemake adapter: retrain one run in this fresh process and compare every checkpoint digest."""

# ruff: noqa: E402 (the imports after the set-up load numpy and torch)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy and torch load: the machine.* settings act when they load.
enter_job(smk.config["machine"], torch_threads=smk.params.config["training"]["torch_threads"])

import pandas as pd

from workflow.artifacts import load_checkpoint, write_csv
from workflow.identity import RunId
from workflow.joblog import job_log
from workflow.runs import start_training
from workflow.train import TrainSettings, train_history

cfg = smk.params.config
run = RunId.from_wildcards(smk.wildcards)
settings = TrainSettings.from_config(
    cfg["training"], lr=run.lr, optimizer_at_common=run.optim, checkpoints=smk.params.updates
)

with job_log(smk.log[0]) as log:
    data, model = start_training(run, cfg, smk.input.mnist)
    rerun, _ = train_history(
        model, data, run.order, run.seed, settings, lambda *_: None, log=log, stream=run.stream
    )
    rows = []
    for update, path in zip(settings.checkpoints, smk.input.checkpoints, strict=True):
        _, meta = load_checkpoint(path, expect={**run.as_dict(), "update": update})
        rows.append(
            {
                **run.as_dict(),
                "update": update,
                "checkpoint": path,
                "original": meta["params_digest"],
                "rerun": rerun.checkpoints.get(update),
                "torch_threads": meta["torch_threads"],
                "device": meta["device"],
                "memory_format": meta["memory_format"],
                "kernels": meta["kernels"],
                "torch": meta["packages"]["torch"],
            }
        )
    table = pd.DataFrame(rows)
    table["identical"] = table["original"] == table["rerun"]
    write_csv(smk.output.audit, table)
    log(f"{int(table['identical'].sum())}/{len(table)} checkpoints bit-identical on rerun")
