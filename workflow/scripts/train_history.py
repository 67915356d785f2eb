"""Snakemake adapter: train one run (phases 1-2, then C) or continue one to later checkpoints.

The rule says which: ``params.segment`` is "base" (from the initial weights) or "extended"
(from the resumable state the base segment left). workflow.segment runs the job, resuming it
from its own spare state when an earlier try was killed.
"""

# ruff: noqa: E402 (the imports after the set-up load numpy and torch)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy and torch load: the machine.* settings act when they load.
enter_job(smk.config["machine"], torch_threads=smk.params.config["training"]["torch_threads"])

from pathlib import Path

from workflow.joblog import job_log
from workflow.runs import RunId, start_training
from workflow.segment import SegmentJob, train_segment
from workflow.train import TrainSettings

cfg = smk.params.config
run = RunId.from_wildcards(smk.wildcards)
segment = smk.params.segment
settings = TrainSettings.from_config(
    cfg["training"], lr=run.lr, optimizer_at_common=run.optim, checkpoints=smk.params.updates
)
job = SegmentJob(
    run=run,
    segment=segment,
    settings=settings,
    config=cfg,
    code=smk.params.code,
    checkpoints=dict(zip(settings.checkpoints, map(Path, smk.output.checkpoints), strict=True)),
    record=Path(smk.output.record),
    given_state=Path(smk.input.state) if segment == "extended" else None,
    final_state=Path(smk.output.state) if "state" in smk.output.keys() else None,
    # Not a param: it changes no result, so changing it must rerun nothing.
    state_every=smk.config["training"]["state_every"],
)

with job_log(smk.log[0]) as log:
    data, model = start_training(run, cfg, smk.input.mnist)
    log(
        f"{run}: {segment} segment, tasks "
        + ", ".join(f"{t}={len(data.tasks[t])}" for t in "ABC")
        + f"; {settings}"
    )
    train_segment(job, model, data, log)
