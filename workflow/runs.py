"""The in-memory data a run trains on, and a training job's set-up.

data = training_data(arrays, run.protocol, config)

The evaluation set is workflow.images's, so that the dumps and probes never import training.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workflow.identity import RunId
from workflow.images import normalize, rotated_copies
from workflow.mnist import MnistArrays, load_npz
from workflow.model import HistoryNet, ModelSpec, build_model
from workflow.tasks import training_tasks
from workflow.train import TrainingData


def training_data(arrays: MnistArrays, protocol: str, config: dict) -> TrainingData:
    norm = config["data"]["normalize"]
    tasks = training_tasks(protocol, arrays.train_labels, config["tasks"], config["data"]["subset"])
    images = normalize(arrays.train_images, norm["mean"], norm["std"])
    labels = torch.from_numpy(arrays.train_labels.astype(np.int64))
    if protocol == "rotated":
        images, labels = rotated_copies(images), torch.cat([labels, labels])
    return TrainingData(
        images=images,
        labels=labels,
        tasks={name: torch.from_numpy(getattr(tasks, name)) for name in "ABC"},
    )


def start_training(run: RunId, config: dict, mnist: str) -> tuple[TrainingData, HistoryNet]:
    """A training job's data and initial model (its torch set-up is the job's first call,
    workflow.machine.enter_job)."""
    arrays = load_npz(Path(mnist), expected=config["data"]["digests"])
    spec = ModelSpec.from_config({**config["model"], "activation": run.act})
    return training_data(arrays, run.protocol, config), build_model(run.seed, spec)
