"""The in-memory data a run trains on, and a training job's set-up.

data = training_data(arrays, run.protocol, config)

The evaluation set is workflow.images's, so that the dumps and probes never import training.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workflow.identity import RunId
from workflow.images import normalize, rotated
from workflow.mnist import MnistArrays, load_npz
from workflow.model import HistoryNet, ModelSpec, build_model
from workflow.tasks import training_tasks
from workflow.train import TrainingData


def training_data(arrays: MnistArrays, protocol: str, config: dict) -> TrainingData:
    """The images tasks A, B and C index, normalized, at their canonical indices (a resumable
    state's batch order holds those); only the images a task uses are computed (the small
    config uses 1,000 of 60,000: 1.4 s a job) and every other row is NaN, so that reading one
    would end the run as diverged rather than train on it."""
    norm = config["data"]["normalize"]
    tasks = training_tasks(protocol, arrays.train_labels, config["tasks"], config["data"]["subset"])
    indices = {name: getattr(tasks, name) for name in "ABC"}
    n = len(arrays.train_labels)
    # The rotated protocol's image n + i is image i turned (workflow.tasks).
    copies = 2 if protocol == "rotated" else 1
    images = torch.full((copies * n, 1, *arrays.train_images.shape[1:]), float("nan"))
    used = np.unique(np.concatenate(list(indices.values())))
    upright, turned = used[used < n], used[used >= n] - n
    images[upright] = normalize(arrays.train_images[upright], **norm)
    if len(turned):
        images[n + turned] = rotated(normalize(arrays.train_images[turned], **norm))
    labels = torch.from_numpy(np.tile(arrays.train_labels.astype(np.int64), copies))
    return TrainingData(
        images=images,
        labels=labels,
        tasks={name: torch.from_numpy(index) for name, index in indices.items()},
    )


def start_training(run: RunId, config: dict, mnist: str) -> tuple[TrainingData, HistoryNet]:
    """A training job's data and initial model (its torch set-up is the job's first call,
    workflow.machine.enter_job)."""
    arrays = load_npz(Path(mnist), expected=config["data"]["digests"])
    spec = ModelSpec.from_config({**config["model"], "activation": run.act})
    return training_data(arrays, run.protocol, config), build_model(run.seed, spec)
