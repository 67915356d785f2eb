"""Snakemake adapter: train one (study, seed, order) history and write its checkpoints."""

from pathlib import Path

import torch

from workflow.artifacts import save_checkpoint, write_json
from workflow.data import load_npz
from workflow.joblog import job_log
from workflow.model import ModelSpec, build_model
from workflow.provenance import record
from workflow.tasks import class_split
from workflow.train import (
    TrainingData,
    TrainSettings,
    configure_torch,
    model_state,
    normalize,
    train_history,
)

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config
seed, order, study = int(smk.wildcards.seed), smk.wildcards.order, smk.wildcards.study
settings = TrainSettings.from_config(cfg["training"])
paths = dict(zip(settings.checkpoints, map(Path, smk.output.checkpoints), strict=True))


def provenance(**extra):
    return record(
        cfg,
        smk.params.code,
        study=study,
        seed=seed,
        order=order,
        torch_threads=settings.torch_threads,
        memory_format="channels_last",
        device=settings.device,
        **extra,
    )


with job_log(smk.log[0]) as log:
    configure_torch(settings.torch_threads)
    arrays = load_npz(Path(smk.input.mnist), expected=cfg["data"]["digests"])
    indices = class_split(arrays.train_labels, cfg["tasks"], cfg["data"]["subset"])
    norm = cfg["data"]["normalize"]
    data = TrainingData(
        images=normalize(arrays.train_images, norm["mean"], norm["std"]),
        labels=torch.from_numpy(arrays.train_labels.astype("int64")),
        tasks={task: torch.from_numpy(getattr(indices, task)) for task in "ABC"},
    )
    log(
        f"{study} seed {seed} order {order}: tasks "
        + ", ".join(f"{t}={len(data.tasks[t])}" for t in "ABC")
        + f"; {settings}"
    )
    model = build_model(seed, ModelSpec.from_config(cfg["model"]))

    def on_checkpoint(update, model):
        save_checkpoint(paths[update], model_state(model), provenance(update=update, status="ok"))

    run = train_history(model, data, order, seed, settings, on_checkpoint, log=log)
    for update, path in paths.items():
        if update not in run.checkpoints:
            # Downstream rules need every declared file; these say the run never got there.
            save_checkpoint(path, {}, provenance(update=update, status="diverged"))
    write_json(smk.output.record, {**vars(run), "provenance": provenance()})
    log(f"finished with status {run.status}")
