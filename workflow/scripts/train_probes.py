"""Snakemake adapter: frozen fc1 linear probes for both networks of one main-study seed."""

# ruff: noqa: E402 (the imports after the set-up load numpy and torch)

from workflow.machine import enter_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
# First, before numpy and torch load: the machine.* settings act when they load.
enter_job(smk.config["machine"], torch_threads=smk.params.config["training"]["torch_threads"])

from pathlib import Path

import torch

from workflow.artifacts import load_checkpoint
from workflow.images import evaluation_data, normalize
from workflow.joblog import job_log
from workflow.mnist import load_npz
from workflow.model import HistoryNet, ModelSpec
from workflow.probes import ProbeSettings, probe_pair
from workflow.provenance import record
from workflow.tables import write_table
from workflow.tasks import first_per_digit

cfg = smk.params.config
seed = int(smk.wildcards.seed)
settings = ProbeSettings.from_config(smk.params.probes)

with job_log(smk.log[0]) as log:
    arrays = load_npz(Path(smk.input.mnist), expected=cfg["data"]["digests"])
    norm = cfg["data"]["normalize"]
    train_images = normalize(arrays.train_images, norm["mean"], norm["std"])
    candidates = first_per_digit(arrays.train_labels, cfg["data"]["subset"]["train_per_digit"])
    images, labels, layout = evaluation_data(arrays, "class_split", cfg)
    probe = torch.from_numpy(layout.probe)
    backbones, digests = {}, {}
    spec = ModelSpec.from_config({**cfg["model"], "activation": smk.params.activation})
    for run, path in zip(smk.params.runs, smk.input.checkpoints, strict=True):
        order = run["order"]
        state, meta = load_checkpoint(path, expect=run)
        if meta["status"] != "ok":
            raise ValueError(f"{path}: a probe needs an ok checkpoint, found {meta['status']}")
        digests[order] = meta["params_digest"]
        backbones[order] = HistoryNet(spec)
        backbones[order].load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    rows = probe_pair(
        backbones,
        train_images,
        arrays.train_labels,
        candidates,
        images[probe],
        labels[probe],
        settings,
    )
    rows.insert(0, "seed", seed)
    # Which backbones (by parameter digest) the probes read, beside the usual provenance and
    # the table's own digest.
    write_table(
        smk.output.probes,
        smk.output.provenance,
        rows,
        record(
            cfg,
            smk.params.code,
            seed=seed,
            runs=smk.params.runs,
            probes=smk.params.probes,
            activation=smk.params.activation,
            params_digests=digests,
        ),
    )
    log(f"seed {seed}: backbones unchanged by probing\n{rows.to_string(index=False)}")
