"""What a model sees: MNIST's uint8 arrays as normalized tensors, rotated copies, and the
evaluation set that dumps and probes read.

    images, labels, layout = evaluation_data(arrays, "class_split", config)

Torch, but no training: the dumps and probes import this, not the training loop.
"""

from __future__ import annotations

import numpy as np
import torch

from workflow.mnist import MnistArrays
from workflow.tasks import EvaluationImages, evaluation_images


def normalize(images: np.ndarray, mean: float, std: float) -> torch.Tensor:
    """uint8 (N,28,28) -> float32 (N,1,28,28), bit-identical to ToTensor() + Normalize()."""
    x = torch.from_numpy(np.ascontiguousarray(images)).unsqueeze(1)
    return (x.float().div(255) - mean) / std


def rotated(images: torch.Tensor) -> torch.Tensor:
    """The images rotated 90 degrees counter-clockwise."""
    return torch.rot90(images, 1, dims=(-2, -1))


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
    images[turned] = rotated(images[turned])
    labels = torch.from_numpy(arrays.test_labels[layout.image].astype(np.int64))
    return images, labels, layout
