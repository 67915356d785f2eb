"""Which images each task, the common distribution C and the probe use, and the seed rule.

Everything is an array of canonical indices into the MNIST arrays, in canonical order, so a
task is fully described by the data file and the config.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

PHASES = ("phase1", "phase2", "common")


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


@dataclass(frozen=True)
class TrainingTasks:
    """Canonical training indices of tasks A and B and of the common distribution C."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray


@dataclass(frozen=True)
class EvaluationImages:
    """Canonical test indices of the evaluation set and of the representation probe."""

    test: np.ndarray
    probe: np.ndarray


def class_split(train_labels: np.ndarray, tasks: dict, subset: dict) -> TrainingTasks:
    """The class-split protocol: A and B by digit, C balanced over digits."""
    train = first_per_digit(train_labels, subset["train_per_digit"])
    return TrainingTasks(
        A=with_digits(train_labels, tasks["class_split"]["A"], train),
        B=with_digits(train_labels, tasks["class_split"]["B"], train),
        C=first_per_digit(train_labels, tasks["common_per_digit"], within=train),
    )


def evaluation_images(test_labels: np.ndarray, probe_per_digit: int, subset: dict):
    """The test images evaluated at every checkpoint and the balanced probe among them."""
    test = first_per_digit(test_labels, subset["test_per_digit"])
    return EvaluationImages(test, first_per_digit(test_labels, probe_per_digit, within=test))


def derive_seed(seed: int, *parts: str | int) -> int:
    """The documented rule for run-identity seeds: SHA-256 of "seed/part/part...", first 8 bytes.

    Data-order generators use ``derive_seed(seed, order, phase)``, so the two orders of a
    seed share initial weights (drawn from ``seed`` itself) but shuffle independently.
    """
    text = "/".join(str(p) for p in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") & (2**63 - 1)
