"""Snakemake adapter: retrain one run in this fresh process; write its checkpoint digests and
the environment they were computed in, for `verify_reference` to compare with a reference."""

# ruff: noqa: E402 (the imports after the set-up load numpy and torch)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy and torch load: the machine.* settings act when they load.
enter_job(smk.config["machine"], torch_threads=smk.params.config["training"]["torch_threads"])

import pandas as pd

from workflow.artifacts import write_csv, write_json
from workflow.identity import RunId
from workflow.joblog import job_log
from workflow.machine.environment import machine_environment
from workflow.runs import start_training
from workflow.train import TrainSettings, train_history

cfg = smk.params.config
run = RunId.from_wildcards(smk.wildcards)
segments = smk.params.updates
# One uninterrupted run through every segment: the engine's continuation from a saved state is
# bit-identical to this, so the extended segment's digests need no separate resumed job.
settings = TrainSettings.from_config(
    cfg["training"],
    lr=run.lr,
    optimizer_at_common=run.optim,
    checkpoints=[update for updates in segments.values() for update in updates],
)

with job_log(smk.log[0]) as log:
    log(f"{run}: retraining through {', '.join(segments)}; {settings}")
    data, model = start_training(run, cfg, smk.input.mnist)
    rerun, _ = train_history(
        model, data, run.order, run.seed, settings, lambda *_: None, log=log, stream=run.stream
    )
    rows = [
        {
            **run.as_dict(),
            "segment": segment,
            "update": update,
            "rerun_status": "ok" if update in rerun.checkpoints else "diverged",
            "rerun_digest": rerun.checkpoints.get(update, ""),
        }
        for segment, updates in segments.items()
        for update in updates
    ]
    write_csv(smk.output.digests, pd.DataFrame(rows))
    write_json(
        smk.output.environment,
        machine_environment(
            torch_threads=settings.torch_threads,
            kernels=settings.kernels,
            device=settings.device,
            memory_format="channels_last",
        ),
    )
    log(f"finished with status {rerun.status}: {len(rerun.checkpoints)}/{len(rows)} checkpoints")
