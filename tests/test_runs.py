"""Tests for workflow.runs: run identity, rotated copies and the protocols' in-memory data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from workflow.images import evaluation_data, normalize, rotated
from workflow.mnist import MnistArrays
from workflow.runs import RunId, training_data
from workflow.tasks import evaluation_images, training_tasks

torch.set_num_threads(1)

MEAN, STD = 0.1307, 0.3081
CONFIG = {
    "data": {
        "normalize": {"mean": MEAN, "std": STD},
        "subset": {"train_per_digit": None, "test_per_digit": None},
    },
    "tasks": {
        "class_split": {"A": [0, 1, 2, 3, 4], "B": [5, 6, 7, 8, 9]},
        "common_per_digit": 4,
        "probe_per_digit": 2,
    },
}


def _arrays(n_train: int = 80, n_test: int = 50, seed: int = 0) -> MnistArrays:
    rng = np.random.default_rng(seed)
    return MnistArrays(
        train_images=rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        train_labels=rng.permutation(np.arange(n_train) % 10).astype(np.uint8),
        test_images=rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        test_labels=rng.permutation(np.arange(n_test) % 10).astype(np.uint8),
    )


ARRAYS = _arrays()


# --------------------------------------------------------------------------- RunId


def test_run_id_from_wildcards_parses_types() -> None:
    wildcards = {
        "protocol": "rotated",
        "act": "leaky_relu",
        "lr": "0.045",
        "optim": "preserve",
        "stream": "1",
        "seed": "101",
        "order": "BAC",
        "unrelated": "ignored",
    }
    run = RunId.from_wildcards(wildcards)
    assert run == RunId("rotated", "leaky_relu", 0.045, "preserve", 1, 101, "BAC")
    assert isinstance(run.lr, float) and isinstance(run.stream, int)
    assert isinstance(run.seed, int)
    assert run.as_dict() == {
        "protocol": "rotated",
        "act": "leaky_relu",
        "lr": 0.045,
        "optim": "preserve",
        "stream": 1,
        "seed": 101,
        "order": "BAC",
    }
    # Hashable and frozen: usable as a key.
    assert {run: 1}[RunId.from_wildcards(wildcards)] == 1
    with pytest.raises(AttributeError):
        run.seed = 202  # type: ignore[misc]


def test_run_id_from_wildcards_rejects_bad_values() -> None:
    good = {
        "protocol": "class_split",
        "act": "relu",
        "lr": "0.05",
        "optim": "reset",
        "stream": "0",
        "seed": "7",
        "order": "ABC",
    }
    with pytest.raises(ValueError):
        RunId.from_wildcards({**good, "seed": "seven"})
    with pytest.raises(KeyError):
        RunId.from_wildcards({k: v for k, v in good.items() if k != "order"})


# --------------------------------------------------------------------------- rotated


def test_rotated_single_pixel_moves_counter_clockwise() -> None:
    image = torch.zeros(1, 1, 28, 28)
    image[0, 0, 0, 27] = 1.0  # top-right corner
    out = rotated(image)
    assert out.shape == (1, 1, 28, 28)
    # 90 degrees counter-clockwise: the top-right corner goes to the top-left.
    assert out[0, 0, 0, 0] == 1.0
    assert out.sum() == 1.0
    # And the top-left corner goes to the bottom-left.
    image = torch.zeros(1, 1, 28, 28)
    image[0, 0, 0, 0] = 1.0
    assert rotated(image)[0, 0, 27, 0] == 1.0


def test_rotated_is_rot90_of_each_image() -> None:
    images = torch.from_numpy(np.random.default_rng(1).normal(size=(5, 1, 28, 28))).float()
    out = rotated(images)
    for i in range(5):
        assert torch.equal(out[i], torch.rot90(images[i], 1, dims=(-2, -1)))
        # Three more quarter turns bring it back.
        assert torch.equal(torch.rot90(out[i], 3, dims=(-2, -1)), images[i])


# --------------------------------------------------------------------------- training_data


def test_training_data_class_split() -> None:
    data = training_data(ARRAYS, "class_split", CONFIG)
    assert data.images.shape == (80, 1, 28, 28)
    assert torch.equal(data.images, normalize(ARRAYS.train_images, MEAN, STD))
    assert data.labels.dtype == torch.int64
    np.testing.assert_array_equal(data.labels.numpy(), ARRAYS.train_labels)
    tasks = training_tasks(
        "class_split", ARRAYS.train_labels, CONFIG["tasks"], CONFIG["data"]["subset"]
    )
    for name in "ABC":
        np.testing.assert_array_equal(data.tasks[name].numpy(), getattr(tasks, name))


def test_training_data_rotated_has_both_angles() -> None:
    n = len(ARRAYS.train_labels)
    data = training_data(ARRAYS, "rotated", CONFIG)
    upright = normalize(ARRAYS.train_images, MEAN, STD)
    assert data.images.shape == (2 * n, 1, 28, 28)
    assert torch.equal(data.images[:n], upright)
    assert torch.equal(data.images[n:], torch.rot90(upright, 1, dims=(-2, -1)))
    np.testing.assert_array_equal(data.labels.numpy(), np.tile(ARRAYS.train_labels, 2))
    tasks = training_tasks(
        "rotated", ARRAYS.train_labels, CONFIG["tasks"], CONFIG["data"]["subset"]
    )
    for name in "ABC":
        np.testing.assert_array_equal(data.tasks[name].numpy(), getattr(tasks, name))
    # Every task index points at an existing image whose label is the canonical one.
    for name in "ABC":
        index = data.tasks[name].numpy()
        assert index.max() < 2 * n
        np.testing.assert_array_equal(data.labels.numpy()[index], ARRAYS.train_labels[index % n])
    # B is A rotated, image for image.
    assert torch.equal(
        data.images[data.tasks["B"]], torch.rot90(data.images[data.tasks["A"]], 1, dims=(-2, -1))
    )


@pytest.mark.parametrize("protocol", ["class_split", "rotated"])
def test_training_data_computes_only_the_images_a_task_uses(protocol: str) -> None:
    config = {**CONFIG, "data": {**CONFIG["data"], "subset": {"train_per_digit": 6}}}
    n = len(ARRAYS.train_labels)
    data = training_data(ARRAYS, protocol, config)
    full = training_data(ARRAYS, protocol, CONFIG)
    used = np.unique(np.concatenate([data.tasks[name].numpy() for name in "ABC"]))
    assert 0 < len(used) < len(data.images) == len(full.images)
    # At their canonical indices, the same bits as when every image is computed; NaN elsewhere.
    assert torch.equal(data.images[used], full.images[used])
    unused = np.setdiff1d(np.arange(len(data.images)), used)
    assert torch.isnan(data.images[unused]).all()
    assert torch.equal(data.labels, full.labels)
    assert (used >= n).any() == (protocol == "rotated")


# --------------------------------------------------------------------------- evaluation_data


def test_evaluation_data_class_split() -> None:
    images, labels, layout = evaluation_data(ARRAYS, "class_split", CONFIG)
    expected = evaluation_images("class_split", ARRAYS.test_labels, 2, CONFIG["data"]["subset"])
    np.testing.assert_array_equal(layout.image, expected.image)
    np.testing.assert_array_equal(layout.probe, expected.probe)
    assert torch.equal(images, normalize(ARRAYS.test_images[layout.image], MEAN, STD))
    np.testing.assert_array_equal(labels.numpy(), ARRAYS.test_labels[layout.image])
    assert not layout.angle.any()


def test_evaluation_data_rotated_rows_are_rotated_images() -> None:
    m = len(ARRAYS.test_labels)
    images, labels, layout = evaluation_data(ARRAYS, "rotated", CONFIG)
    assert images.shape == (2 * m, 1, 28, 28)
    upright = normalize(ARRAYS.test_images, MEAN, STD)
    np.testing.assert_array_equal(layout.image, np.tile(np.arange(m), 2))
    np.testing.assert_array_equal(layout.angle, np.repeat([0, 90], m))
    assert torch.equal(images[layout.angle == 0], upright)
    assert torch.equal(images[layout.angle == 90], torch.rot90(upright, 1, dims=(-2, -1)))
    np.testing.assert_array_equal(labels.numpy(), np.tile(ARRAYS.test_labels, 2))
    probe = layout.probe
    assert probe.sum() == 20
    assert (probe & (layout.angle == 0)).sum() == (probe & (layout.angle == 90)).sum() == 10


def test_evaluation_data_respects_test_subset() -> None:
    config = {
        **CONFIG,
        "data": {**CONFIG["data"], "subset": {"train_per_digit": None, "test_per_digit": 3}},
    }
    images, labels, layout = evaluation_data(ARRAYS, "rotated", config)
    assert images.shape[0] == 60
    assert np.bincount(labels.numpy(), minlength=10).tolist() == [6] * 10
    turned = torch.from_numpy(layout.angle == 90)
    expected = torch.rot90(
        normalize(ARRAYS.test_images[layout.image[turned.numpy()]], MEAN, STD), 1, dims=(-2, -1)
    )
    assert torch.equal(images[turned], expected)
