"""Snakemake adapter: train one run (phases 1-2, then C) or continue one to later checkpoints.

The rule says which: ``params.segment`` is "base" (from the initial weights) or "extended"
(from the resumable state the base segment left).
"""

import contextlib
import dataclasses
import shutil
from pathlib import Path

import torch

from workflow.artifacts import atomic_path, save_checkpoint, write_json
from workflow.joblog import job_log
from workflow.provenance import canonical_json, record
from workflow.runs import RunId, start_training
from workflow.train import TrainSettings, model_state, train_history

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config
run = RunId.from_wildcards(smk.wildcards)
segment = smk.params.segment
# Not a param: it changes no result, so changing it must rerun nothing.
state_every = smk.config["training"]["state_every"]
settings = TrainSettings.from_config(
    cfg["training"], lr=run.lr, optimizer_at_common=run.optim, checkpoints=smk.params.updates
)
paths = dict(zip(settings.checkpoints, map(Path, smk.output.checkpoints), strict=True))
# Resumable states of a killed job live beside its outputs but are not outputs: Snakemake
# removes an incomplete job's outputs before rerunning it, so checkpoints written before the
# kill are kept here too and put back on resume.
spare = Path(smk.output.record).parent / ".resume" / segment
identity = canonical_json({"run": run.as_dict(), "code": smk.params.code, "config": cfg})


def provenance(**extra):
    return record(
        cfg,
        smk.params.code,
        **run.as_dict(),
        segment=segment,
        torch_threads=settings.torch_threads,
        memory_format="channels_last",
        kernels=settings.kernels,
        device=settings.device,
        **extra,
    )


with job_log(smk.log[0]) as log:
    data, model = start_training(run, cfg, smk.input.mnist)
    log(
        f"{run}: {segment} segment, tasks "
        + ", ".join(f"{t}={len(data.tasks[t])}" for t in "ABC")
        + f"; {settings}"
    )
    resume = torch.load(smk.input.state, weights_only=True) if segment == "extended" else None
    saved = spare / "state.pt"
    if saved.exists():
        state = torch.load(saved, weights_only=True)
        if state.get("identity") == identity:
            resume = state
            for update in state["record"]["checkpoints"]:
                shutil.copy2(spare / f"update~{update}.npz", paths[int(update)])
            log(f"resuming from the state saved at C update {state['update']}")
        else:
            log(f"ignoring {saved}: it was saved by another config or code version")
    if resume is not None and resume["update"] is not None:
        settings = dataclasses.replace(
            settings, checkpoints=tuple(u for u in settings.checkpoints if u >= resume["update"])
        )

    def on_checkpoint(update, model):
        save_checkpoint(paths[update], model_state(model), provenance(update=update, status="ok"))
        if state_every:
            spare.mkdir(parents=True, exist_ok=True)
            shutil.copy2(paths[update], spare / f"update~{update}.npz")

    def on_state(state):
        spare.mkdir(parents=True, exist_ok=True)
        with atomic_path(saved) as tmp:
            torch.save({**state, "identity": identity}, tmp)
        log(f"resumable state saved at C update {state['update']}")

    outcome, state = None, None
    if resume is not None and resume["update"] is None:
        log("the base segment diverged: there is nothing to continue")
    else:
        if resume is not None:
            model.load_state_dict(resume["model"])
        outcome, state = train_history(
            model,
            data,
            run.order,
            run.seed,
            settings,
            on_checkpoint,
            log=log,
            stream=run.stream,
            resume=resume,
            on_state=on_state,
            state_every=state_every,
        )
    for update, path in paths.items():
        if outcome is None or update not in outcome.checkpoints:
            # Downstream rules need every declared file; these say the run never got there.
            save_checkpoint(path, {}, provenance(update=update, status="diverged"))
    summary = vars(outcome) if outcome else {"status": "diverged", "diverged_at": "base segment"}
    write_json(smk.output.record, {**summary, "provenance": provenance()})
    if "state" in smk.output.keys():
        with atomic_path(smk.output.state) as tmp:
            torch.save(state or {"update": None}, tmp)
    shutil.rmtree(spare, ignore_errors=True)
    with contextlib.suppress(OSError):
        spare.parent.rmdir()  # only once no other segment's states are left
    log(f"finished with status {summary['status']}")
