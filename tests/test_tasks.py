"""Tests for workflow.tasks: canonical index selection and the run-identity seed rule."""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pytest

from workflow.tasks import (
    EvaluationImages,
    TrainingTasks,
    derive_seed,
    evaluation_images,
    first_per_digit,
    stream_seed,
    training_tasks,
)

TASKS = {"class_split": {"A": [0, 1, 2, 3, 4], "B": [5, 6, 7, 8, 9]}, "common_per_digit": 6}


def _labels(n: int = 400, seed: int = 0) -> np.ndarray:
    """Shuffled labels with unequal digit counts (digit d appears at least 20 times)."""
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.repeat(np.arange(10), 20), rng.integers(0, 10, n - 200)])
    return rng.permutation(labels).astype(np.uint8)


def _first_n_by_loop(labels: np.ndarray, n: int, within=None) -> np.ndarray:
    candidates = range(len(labels)) if within is None else within
    counts = dict.fromkeys(range(10), 0)
    keep = []
    for i in candidates:
        if counts[int(labels[i])] < n:
            counts[int(labels[i])] += 1
            keep.append(i)
    return np.array(sorted(keep))


# --------------------------------------------------------------------------- first_per_digit


def test_first_per_digit_picks_first_n_in_canonical_order() -> None:
    labels = _labels()
    got = first_per_digit(labels, 7)
    np.testing.assert_array_equal(got, _first_n_by_loop(labels, 7))
    assert np.all(np.diff(got) > 0)
    assert np.bincount(labels[got], minlength=10).tolist() == [7] * 10


def test_first_per_digit_small_golden() -> None:
    labels = np.array([3, 0, 1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 9, 1, 2, 4, 5, 6, 7, 8, 0])
    np.testing.assert_array_equal(first_per_digit(labels, 1), [0, 1, 2, 4, 6, 7, 8, 9, 10, 11])
    # Every digit occurs at least twice in the first 20 positions; the third 0 (index 20) is cut.
    np.testing.assert_array_equal(first_per_digit(labels, 2), np.arange(20))
    with pytest.raises(ValueError, match="digit 1 has 2 images"):
        first_per_digit(labels, 3)


def test_first_per_digit_none_keeps_all() -> None:
    labels = _labels()
    np.testing.assert_array_equal(first_per_digit(labels, None), np.arange(len(labels)))
    within = np.array([5, 9, 11])
    got = first_per_digit(labels, None, within=within)
    np.testing.assert_array_equal(got, within)
    got[0] = -1
    assert within[0] == 5  # a copy, never the caller's array


def test_first_per_digit_within_restricts_candidates() -> None:
    labels = _labels()
    within = np.arange(1, len(labels), 2)  # odd positions only
    got = first_per_digit(labels, 3, within=within)
    assert np.all(got % 2 == 1)
    np.testing.assert_array_equal(got, _first_n_by_loop(labels, 3, within=within))


def test_first_per_digit_raises_when_a_digit_has_too_few() -> None:
    labels = np.repeat(np.arange(10), 5)
    labels[labels == 7] = 6  # digit 7 disappears
    with pytest.raises(ValueError, match="digit 7"):
        first_per_digit(labels, 1)
    with pytest.raises(ValueError, match="digit 0 has 5 images"):
        first_per_digit(np.repeat(np.arange(10), 5), 6)


# --------------------------------------------------------------------------- class_split


@pytest.mark.parametrize("train_per_digit", [None, 20])
def test_class_split_partitions_digits_and_balances_c(train_per_digit) -> None:
    labels = _labels()
    subset = {"train_per_digit": train_per_digit, "test_per_digit": None}
    tasks = training_tasks("class_split", labels, TASKS, subset)
    assert isinstance(tasks, TrainingTasks)
    a, b, c = tasks.A, tasks.B, tasks.C
    assert np.intersect1d(a, b).size == 0
    universe = first_per_digit(labels, train_per_digit)
    np.testing.assert_array_equal(np.sort(np.concatenate([a, b])), universe)
    assert set(labels[a].tolist()) == {0, 1, 2, 3, 4}
    assert set(labels[b].tolist()) == {5, 6, 7, 8, 9}
    for indices in (a, b, c):
        assert np.all(np.diff(indices) > 0)
    assert np.bincount(labels[c], minlength=10).tolist() == [6] * 10
    assert np.isin(c, universe).all()
    np.testing.assert_array_equal(c, _first_n_by_loop(labels, 6))
    if train_per_digit is None:
        assert len(a) + len(b) == len(labels)
    else:
        assert np.bincount(labels[a], minlength=10).tolist()[:5] == [20] * 5


def test_class_split_uneven_split() -> None:
    labels = _labels()
    tasks_cfg = {"class_split": {"A": [1, 7], "B": [0, 2, 3]}, "common_per_digit": 2}
    tasks = training_tasks(
        "class_split", labels, tasks_cfg, {"train_per_digit": None, "test_per_digit": None}
    )
    assert set(labels[tasks.A].tolist()) == {1, 7}
    assert set(labels[tasks.B].tolist()) == {0, 2, 3}
    assert len(tasks.A) == int(np.isin(labels, [1, 7]).sum())


def test_class_split_common_larger_than_subset_raises() -> None:
    labels = _labels()
    with pytest.raises(ValueError):
        training_tasks("class_split", labels, TASKS, {"train_per_digit": 5, "test_per_digit": None})


# --------------------------------------------------------------------------- evaluation_images


@pytest.mark.parametrize("test_per_digit", [None, 15])
def test_evaluation_images_probe_inside_test_and_balanced(test_per_digit) -> None:
    labels = _labels(seed=3)
    images = evaluation_images(
        "class_split", labels, 4, {"train_per_digit": None, "test_per_digit": test_per_digit}
    )
    assert isinstance(images, EvaluationImages)
    test, probe = images.image, images.probe
    if test_per_digit is None:
        np.testing.assert_array_equal(test, np.arange(len(labels)))
    else:
        assert np.bincount(labels[test], minlength=10).tolist() == [15] * 10
    # The probe is a boolean mask over the evaluated rows.
    assert probe.dtype == bool and probe.shape == test.shape
    assert np.bincount(labels[test[probe]], minlength=10).tolist() == [4] * 10
    np.testing.assert_array_equal(test[probe], _first_n_by_loop(labels, 4))
    assert images.angle.shape == test.shape
    assert images.angle.dtype == np.int16
    assert not images.angle.any()


def test_unknown_protocol_raises() -> None:
    labels = _labels()
    subset = {"train_per_digit": None, "test_per_digit": None}
    with pytest.raises(ValueError, match="upside_down"):
        training_tasks("upside_down", labels, TASKS, subset)
    with pytest.raises(ValueError, match="upside_down"):
        evaluation_images("upside_down", labels, 4, subset)


# --------------------------------------------------------------------------- rotated protocol


@pytest.mark.parametrize("train_per_digit", [None, 20])
def test_rotated_tasks_layout(train_per_digit) -> None:
    labels = _labels()
    n = len(labels)
    subset = {"train_per_digit": train_per_digit, "test_per_digit": None}
    tasks = training_tasks("rotated", labels, TASKS, subset)
    universe = first_per_digit(labels, train_per_digit)
    # A: every (subset) training image upright; B: the same images rotated (offset n).
    np.testing.assert_array_equal(tasks.A, universe)
    np.testing.assert_array_equal(tasks.B, n + universe)
    assert tasks.A.max() < n <= tasks.B.min()
    assert np.intersect1d(tasks.A, tasks.B).size == 0
    for indices in (tasks.A, tasks.B, tasks.C):
        assert np.all(np.diff(indices) > 0)
    # C: the common subset, per digit its first half upright and its second half rotated.
    common = _first_n_by_loop(labels, 6)
    upright, turned = tasks.C[tasks.C < n], tasks.C[tasks.C >= n] - n
    assert len(tasks.C) == 60
    assert np.intersect1d(upright, turned).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([upright, turned])), common)
    assert np.isin(upright, tasks.A).all() and np.isin(n + turned, tasks.B).all()
    assert np.bincount(labels[upright], minlength=10).tolist() == [3] * 10
    assert np.bincount(labels[turned], minlength=10).tolist() == [3] * 10
    for digit in range(10):
        of_digit = common[labels[common] == digit]
        np.testing.assert_array_equal(upright[labels[upright] == digit], of_digit[:3])
        np.testing.assert_array_equal(turned[labels[turned] == digit], of_digit[3:])


def test_rotated_tasks_small_golden() -> None:
    labels = np.tile(np.arange(10), 4)  # digit d at d, d + 10, d + 20, d + 30
    tasks = training_tasks(
        "rotated",
        labels,
        {"class_split": TASKS["class_split"], "common_per_digit": 2},
        {"train_per_digit": 3, "test_per_digit": None},
    )
    np.testing.assert_array_equal(tasks.A, np.arange(30))
    np.testing.assert_array_equal(tasks.B, 40 + np.arange(30))
    np.testing.assert_array_equal(tasks.C, np.concatenate([np.arange(10), 40 + np.arange(10, 20)]))


def test_rotated_common_with_odd_count_puts_the_extra_image_upright() -> None:
    labels = np.tile(np.arange(10), 5)
    tasks = training_tasks(
        "rotated",
        labels,
        {"class_split": TASKS["class_split"], "common_per_digit": 3},
        {"train_per_digit": None, "test_per_digit": None},
    )
    n = len(labels)
    assert np.bincount(labels[tasks.C[tasks.C < n]], minlength=10).tolist() == [2] * 10
    assert np.bincount(labels[tasks.C[tasks.C >= n] - n], minlength=10).tolist() == [1] * 10


@pytest.mark.parametrize("test_per_digit", [None, 15])
def test_rotated_evaluation_layout(test_per_digit) -> None:
    labels = _labels(seed=3)
    subset = {"train_per_digit": None, "test_per_digit": test_per_digit}
    images = evaluation_images("rotated", labels, 4, subset)
    test = first_per_digit(labels, test_per_digit)
    m = len(test)
    # Every test image at both angles: image ids repeated, angle 0 then 90.
    np.testing.assert_array_equal(images.image, np.concatenate([test, test]))
    np.testing.assert_array_equal(images.angle, np.repeat([0, 90], m))
    assert images.angle.dtype == np.int16
    assert images.probe.dtype == bool and images.probe.shape == (2 * m,)
    # The probe: per digit the first half of the probe images upright, the next half rotated.
    probe_images = _first_n_by_loop(labels, 4)
    up = images.image[images.probe & (images.angle == 0)]
    turned = images.image[images.probe & (images.angle == 90)]
    assert images.probe.sum() == 40
    assert np.bincount(labels[up], minlength=10).tolist() == [2] * 10
    assert np.bincount(labels[turned], minlength=10).tolist() == [2] * 10
    assert np.intersect1d(up, turned).size == 0
    np.testing.assert_array_equal(np.sort(np.concatenate([up, turned])), probe_images)
    for digit in range(10):
        of_digit = probe_images[labels[probe_images] == digit]
        np.testing.assert_array_equal(up[labels[up] == digit], of_digit[:2])
        np.testing.assert_array_equal(turned[labels[turned] == digit], of_digit[2:])


def test_rotated_and_class_split_share_the_upright_rows() -> None:
    labels = _labels(seed=4)
    subset = {"train_per_digit": None, "test_per_digit": 15}
    split = evaluation_images("class_split", labels, 4, subset)
    rotated = evaluation_images("rotated", labels, 4, subset)
    m = len(split.image)
    np.testing.assert_array_equal(rotated.image[:m], split.image)
    # Same probe images overall, half of them moved to the rotated copy.
    assert rotated.probe.sum() == split.probe.sum()
    np.testing.assert_array_equal(
        np.sort(rotated.image[rotated.probe]), np.sort(split.image[split.probe])
    )


# --------------------------------------------------------------------------- derive_seed


def _golden(text: bytes) -> int:
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") & ((1 << 63) - 1)


def test_derive_seed_golden_value() -> None:
    assert derive_seed(101, "ABC", "phase1") == _golden(b"101/ABC/phase1")
    assert derive_seed(7) == _golden(b"7")
    assert derive_seed(5, "BAC", 3) == _golden(b"5/BAC/3")


def test_derive_seed_is_deterministic_and_in_range() -> None:
    for seed, order, phase in itertools.product([0, 101, 2020], ["ABC", "BAC"], ["phase1"]):
        value = derive_seed(seed, order, phase)
        assert value == derive_seed(seed, order, phase)
        assert isinstance(value, int)
        assert 0 <= value < 2**63


def test_derive_seed_distinct_across_identity() -> None:
    keys = list(
        itertools.product([101, 202, 303, 1010], ["ABC", "BAC"], ["phase1", "phase2", "common"])
    )
    values = {derive_seed(*key) for key in keys}
    assert len(values) == len(keys)
    # Usable as a torch generator seed.
    torch = pytest.importorskip("torch")
    torch.Generator().manual_seed(derive_seed(101, "ABC", "phase1"))


# --------------------------------------------------------------------------- stream_seed


def test_stream_seed_rule() -> None:
    for phase in ("phase1", "phase2", "common"):
        assert stream_seed(101, "ABC", phase, 0) == derive_seed(101, "ABC", phase)
        assert stream_seed(101, "ABC", phase, 1) == derive_seed(101, "ABC", phase, 1)
        assert stream_seed(101, "ABC", phase, 2) == _golden(f"101/ABC/{phase}/2".encode())
    values = {stream_seed(101, "BAC", "common", s) for s in range(4)}
    assert len(values) == 4
