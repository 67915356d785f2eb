"""Snakemake adapter: evaluate every checkpoint of one run segment and write its Parquet dumps."""

# ruff: noqa: E402 (the imports after the set-up load numpy and torch)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy and torch load: the machine.* settings act when they load.
enter_job(smk.config["machine"], torch_threads=smk.params.config["training"]["torch_threads"])

from pathlib import Path

import torch

from workflow.artifacts import load_checkpoint, write_parquet
from workflow.dump import empty_table, evaluate, layer_widths
from workflow.identity import RunId
from workflow.images import evaluation_data
from workflow.joblog import job_log
from workflow.mnist import load_npz
from workflow.model import HistoryNet, ModelSpec
from workflow.provenance import record

TRAINED_WITH = (
    "config",
    "code_version",
    "packages",
    "segment",
    "torch_threads",
    "memory_format",
    "kernels",
    "device",
)

cfg = smk.params.config
run = RunId.from_wildcards(smk.wildcards)

with job_log(smk.log[0]) as log:
    device = torch.device(cfg["training"]["device"])
    arrays = load_npz(Path(smk.input.mnist), expected=cfg["data"]["digests"])
    images, labels, layout = evaluation_data(arrays, run.protocol, cfg)
    model = HistoryNet(ModelSpec.from_config({**cfg["model"], "activation": run.act}))
    for update, checkpoint, dump in zip(
        smk.params.updates, smk.input.checkpoints, smk.output.dumps, strict=True
    ):
        state, meta = load_checkpoint(checkpoint, expect={**run.as_dict(), "update": update})
        identity = {
            **run.as_dict(),
            "update": meta["update"],
            "status": meta["status"],
            "params_digest": meta["params_digest"],
            # How the checkpoint was trained, so that a dump explains itself.
            "checkpoint": {key: meta.get(key) for key in TRAINED_WITH},
        }
        if meta["status"] != "ok":
            write_parquet(
                dump,
                empty_table(layer_widths(model)),
                {**record(cfg, smk.params.code, **identity), "summary": None},
            )
            log(f"update {meta['update']}: the run diverged before it, empty dump")
            continue
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        model.to(device=device, memory_format=torch.channels_last)
        table, summary = evaluate(
            model,
            images,
            labels,
            layout.image,
            layout.probe,
            cfg["evaluation"]["batch_size"],
            angles=layout.angle,
        )
        write_parquet(dump, table, {**record(cfg, smk.params.code, **identity), "summary": summary})
        log(
            f"update {meta['update']}: accuracy {summary['accuracy_pct']:.2f}%, "
            f"loss {summary['loss']:.4f}"
        )
