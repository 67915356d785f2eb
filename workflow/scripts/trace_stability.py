"""Snakemake adapter: one short trace of the stability search (phases 1-2 plus a few C updates)."""

# ruff: noqa: E402 (the imports after the set-up load numpy and torch)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy and torch load: the machine.* settings act when they load.
enter_job(smk.config["machine"], torch_threads=smk.params.config["training"]["torch_threads"])

from workflow.artifacts import write_json
from workflow.joblog import job_log
from workflow.provenance import record
from workflow.runs import RunId, start_training
from workflow.train import TrainSettings, train_history

cfg = smk.params.config
run = RunId.from_wildcards(
    {
        **smk.wildcards,
        "protocol": "class_split",
        "act": "leaky_relu",
        "optim": smk.params.optim,
        "stream": "0",
    }
)
updates = smk.params.trace_updates
settings = TrainSettings.from_config(
    cfg["training"], lr=run.lr, optimizer_at_common=run.optim, checkpoints=(updates,)
)

with job_log(smk.log[0]) as log:
    data, model = start_training(run, cfg, smk.input.mnist)
    outcome, _ = train_history(model, data, run.order, run.seed, settings, lambda *_: None, log=log)
    losses = outcome.phases[-1].get("interval_loss", {}) if outcome.status == "ok" else {}
    write_json(
        smk.output.trace,
        {
            **run.as_dict(),
            "finite": outcome.status == "ok",
            "diverged_at": outcome.diverged_at,
            "final_loss": losses.get(updates),
            "provenance": record(cfg, smk.params.code),
        },
    )
    log(f"lr {run.lr}: {'finite' if outcome.status == 'ok' else 'diverged'}")
