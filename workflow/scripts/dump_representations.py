"""Snakemake adapter: evaluate every checkpoint of one history and write its Parquet dumps."""

from pathlib import Path

import numpy as np
import torch

from workflow.artifacts import load_checkpoint, write_parquet
from workflow.data import load_npz
from workflow.dump import empty_table, evaluate, layer_widths
from workflow.joblog import job_log
from workflow.model import HistoryNet, ModelSpec
from workflow.provenance import record
from workflow.tasks import evaluation_images
from workflow.train import configure_torch, normalize

smk = snakemake  # noqa: F821 (injected by Snakemake)
cfg = smk.params.config
seed, order, study = int(smk.wildcards.seed), smk.wildcards.order, smk.wildcards.study
identity = {"study": study, "seed": seed, "order": order}

with job_log(smk.log[0]) as log:
    configure_torch(cfg["training"]["torch_threads"])
    device = torch.device(cfg["training"]["device"])
    arrays = load_npz(Path(smk.input.mnist), expected=cfg["data"]["digests"])
    indices = evaluation_images(
        arrays.test_labels, cfg["tasks"]["probe_per_digit"], cfg["data"]["subset"]
    )
    norm = cfg["data"]["normalize"]
    images = normalize(arrays.test_images[indices.test], norm["mean"], norm["std"])
    labels = torch.from_numpy(arrays.test_labels[indices.test].astype("int64"))
    probe = np.isin(indices.test, indices.probe)
    model = HistoryNet(ModelSpec.from_config(cfg["model"]))
    for checkpoint, dump in zip(smk.input.checkpoints, smk.output.dumps, strict=True):
        state, meta = load_checkpoint(checkpoint)
        for key, value in identity.items():
            if meta.get(key) != value:
                raise ValueError(f"{checkpoint}: holds {key}={meta.get(key)!r}, expected {value!r}")
        ident = {
            **identity,
            "update": meta["update"],
            "status": meta["status"],
            "params_digest": meta["params_digest"],
        }
        if meta["status"] != "ok":
            write_parquet(
                dump,
                empty_table(layer_widths(model)),
                {**record(cfg, smk.params.code, **ident), "summary": None},
            )
            log(f"update {meta['update']}: run diverged before it, empty dump")
            continue
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        model.to(device=device, memory_format=torch.channels_last)
        table, summary = evaluate(
            model, images, labels, indices.test, probe, cfg["evaluation"]["batch_size"]
        )
        write_parquet(dump, table, {**record(cfg, smk.params.code, **ident), "summary": summary})
        log(
            f"update {meta['update']}: accuracy {summary['accuracy_pct']:.2f}%, "
            f"loss {summary['loss']:.4f}"
        )
