"""The in-memory data a run trains and is evaluated on, and a training job's set-up.

data = training_data(arrays, run.protocol, config)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from workflow.identity import RunId
from workflow.mnist import MnistArrays, load_npz
from workflow.model import HistoryNet, ModelSpec, build_model
from workflow.tasks import EvaluationImages, evaluation_images, training_tasks
from workflow.train import TrainingData, configure_torch, normalize


def rotated_copies(images: torch.Tensor) -> torch.Tensor:
    """Images followed by the same images rotated 90 degrees counter-clockwise."""
    return torch.cat([images, torch.rot90(images, 1, dims=(-2, -1))])


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
    """A training job's torch set-up, its run's data and its initial model."""
    configure_torch(config["training"]["torch_threads"])
    arrays = load_npz(Path(mnist), expected=config["data"]["digests"])
    spec = ModelSpec.from_config({**config["model"], "activation": run.act})
    return training_data(arrays, run.protocol, config), build_model(run.seed, spec)


def evaluation_data(
    arrays: MnistArrays, protocol: str, config: dict
) -> tuple[torch.Tensor, torch.Tensor, EvaluationImages]:
    """Normalized test images (rotated where the protocol says), their labels, and the layout."""
    norm = config["data"]["normalize"]
    layout = evaluation_images(
        protocol, arrays.test_labels, config["tasks"]["probe_per_digit"], config["data"]["subset"]
    )
    images = normalize(arrays.test_images[layout.image], norm["mean"], norm["std"])
    turned = torch.from_numpy(layout.angle == 90)
    images[turned] = torch.rot90(images[turned], 1, dims=(-2, -1))
    labels = torch.from_numpy(arrays.test_labels[layout.image].astype(np.int64))
    return images, labels, layout
