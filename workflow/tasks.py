"""Which images each task, the common distribution C and the probe use, and the seed rule.

Everything is an array of canonical indices into the MNIST arrays, in canonical order, so a
task is fully described by the data file and the config.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

PHASES = ("phase1", "phase2", "common")


def stream_seed(seed: int, order: str, phase: str, stream: int) -> int:
    """Data-order seed of a phase. Stream 0 is every study's; stream s > 0 (the noise-floor
    replicates) appends ``s``: same initial weights, independent shuffles."""
    return (
        derive_seed(seed, order, phase) if stream == 0 else derive_seed(seed, order, phase, stream)
    )


def first_per_digit(labels: np.ndarray, per_digit: int | None, within: np.ndarray | None = None):
    """Canonical indices of the first ``per_digit`` images of each digit (all when None)."""
    candidates = np.arange(len(labels)) if within is None else np.asarray(within)
    if per_digit is None:
        return candidates.copy()
    keep = []
    for digit in range(10):
        of_digit = candidates[labels[candidates] == digit]
        if len(of_digit) < per_digit:
            raise ValueError(
                f"digit {digit} has {len(of_digit)} images, fewer than the {per_digit} asked for"
            )
        keep.append(of_digit[:per_digit])
    return np.sort(np.concatenate(keep))


def with_digits(labels: np.ndarray, digits: list[int], within: np.ndarray) -> np.ndarray:
    return within[np.isin(labels[within], digits)]


PROTOCOLS = ("class_split", "rotated")


@dataclass(frozen=True)
class TrainingTasks:
    """Indices of tasks A and B and of the common distribution C into the protocol's images.

    Image ``i < n`` is canonical training image ``i`` upright; in the rotated protocol image
    ``n + i`` is the same image rotated by 90 degrees (``workflow.images.rotated``).
    """

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray


@dataclass(frozen=True)
class EvaluationImages:
    """Evaluated test images (canonical index and angle) and which of them form the probe."""

    image: np.ndarray
    angle: np.ndarray
    probe: np.ndarray


def training_tasks(
    protocol: str, train_labels: np.ndarray, tasks: dict, subset: dict
) -> TrainingTasks:
    """A, B and C of the class-split or rotated protocol."""
    train = first_per_digit(train_labels, subset["train_per_digit"])
    common = first_per_digit(train_labels, tasks["common_per_digit"], within=train)
    if protocol == "class_split":
        return TrainingTasks(
            A=with_digits(train_labels, tasks["class_split"]["A"], train),
            B=with_digits(train_labels, tasks["class_split"]["B"], train),
            C=common,
        )
    if protocol == "rotated":
        n = len(train_labels)
        upright, turned = _halves_per_digit(train_labels, common)
        return TrainingTasks(A=train, B=n + train, C=np.sort(np.concatenate([upright, n + turned])))
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")


def evaluation_images(
    protocol: str, test_labels: np.ndarray, probe_per_digit: int, subset: dict
) -> EvaluationImages:
    """The test images evaluated at every checkpoint, and the balanced probe among them.

    Rotated protocol: every test image at both angles; the probe takes, per digit, the first
    half of the probe images upright and the next half rotated.
    """
    test = first_per_digit(test_labels, subset["test_per_digit"])
    probe = first_per_digit(test_labels, probe_per_digit, within=test)
    if protocol == "class_split":
        return EvaluationImages(test, np.zeros(len(test), np.int16), np.isin(test, probe))
    if protocol == "rotated":
        upright, turned = _halves_per_digit(test_labels, probe)
        return EvaluationImages(
            image=np.concatenate([test, test]),
            angle=np.repeat(np.array([0, 90], np.int16), len(test)),
            probe=np.concatenate([np.isin(test, upright), np.isin(test, turned)]),
        )
    raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")


def _halves_per_digit(labels: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per digit, the first half of ``indices`` (canonical order) and the second half."""
    first, second = [], []
    for digit in range(10):
        of_digit = indices[labels[indices] == digit]
        half = len(of_digit) - len(of_digit) // 2
        first.append(of_digit[:half])
        second.append(of_digit[half:])
    return np.sort(np.concatenate(first)), np.sort(np.concatenate(second))


def derive_seed(seed: int, *parts: str | int) -> int:
    """The documented rule for run-identity seeds: SHA-256 of "seed/part/part...", first 8 bytes.

    Data-order generators use ``derive_seed(seed, order, phase)``, so the two orders of a
    seed share initial weights (drawn from ``seed`` itself) but shuffle independently.
    """
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") & (2**63 - 1)
