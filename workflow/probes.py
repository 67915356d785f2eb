"""Frozen linear probes on the fc1 features of a pair of networks (protocol, "Linear probes").

Usage::

    settings = ProbeSettings.from_config(config["probes"])      # or ProbeSettings()
    rows = probe_pair(
        {"ABC": net_abc, "BAC": net_bac},   # the pair's 10,000-update backbones
        train_images, train_labels,         # all training images, indexed canonically
        candidates,                         # canonical indices the examples may be drawn from
        test_images, test_labels,           # the 2,000-image probe set
        settings,
    )                                       # one row per (budget, probe_seed)
    rows.insert(0, "seed", model_seed)
    per_seed = per_seed_differences(all_rows, settings.probe_seed)
    # per (seed, budget): the primary probe seed's row and, where there are extra probe seeds,
    # the row pooled over all of them

Both networks of a pair get the same drawn examples, the same head initialisation and the same
minibatch order, so the accuracy difference reflects the backbones alone. The backbones are hashed
before and after probing; any change raises :class:`BackboneChanged`.

Accuracies are kept as integer correct counts (``correct_ABC``, ``correct_BAC`` of ``n_test``);
the percentages and the difference ``diff_pp`` are derived from them, so a reader can recompute
every number and equal results compare equal.

Features are computed once per image with the frozen backbone and the head then trains on them.
This equals training the head through the frozen backbone: in eval mode with frozen weights the
backbone is a fixed function, so each image's features are the same at every step
(tests/test_probes.py checks the two agree).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from fractions import Fraction

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from workflow.artifacts import params_digest
from workflow.model import HistoryNet, model_state
from workflow.probe_columns import PROBE_COLUMNS
from workflow.sgd import MomentumSGD

ORDERS = ("ABC", "BAC")
N_CLASSES = 10


class BackboneChanged(RuntimeError):
    """A backbone's weights differ after probe training from before it: the probe was not frozen."""


def _default_extra_seeds() -> dict[int, tuple[int, ...]]:
    return {50: (1777, 2777, 3777, 4777)}


@dataclass(frozen=True)
class ProbeSettings:
    """Probe hyperparameters; the defaults are the protocol's."""

    budgets: tuple[int, ...] = (25, 50, 100, 500)
    probe_seed: int = 777
    # budget -> probe seeds run in addition to ``probe_seed`` (averaged per model seed later).
    extra_seeds: dict[int, tuple[int, ...]] = field(default_factory=_default_extra_seeds)
    lr: float = 0.01
    momentum: float = 0.0
    weight_decay: float = 0.0
    epochs: int = 20
    batch_size: int = 128
    # Images per forward pass when extracting features; affects memory only.
    feature_batch: int = 1000

    def __post_init__(self) -> None:
        unknown = sorted(set(self.extra_seeds) - set(self.budgets))
        if unknown:
            # Extra seeds for a budget that is never probed are almost surely a config slip.
            raise ValueError(f"extra_seeds for budgets not in budgets: {unknown}")
        for budget in self.budgets:
            seeds = self.seeds_for(budget)
            if len(set(seeds)) != len(seeds):
                # A repeated seed would silently double-weight one draw in the per-seed mean.
                raise ValueError(f"repeated probe seed at budget {budget}: {seeds}")
        if self.epochs < 0 or self.batch_size < 1 or self.feature_batch < 1:
            raise ValueError("epochs must be >= 0 and batch sizes >= 1")

    @classmethod
    def from_config(cls, d: Mapping) -> ProbeSettings:
        """Settings from the config's ``studies.probes`` keys (``endpoint`` is the rule's, not a
        probe setting); missing keys keep the defaults, unknown keys fail."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown probe settings: {unknown}")
        kwargs = dict(d)
        if "budgets" in kwargs:
            kwargs["budgets"] = tuple(int(b) for b in kwargs["budgets"])
        if "extra_seeds" in kwargs:
            # The config's shape (studies.probes.extra_seeds): one budget and its seeds.
            extra = kwargs["extra_seeds"]
            kwargs["extra_seeds"] = {int(extra["budget"]): tuple(int(s) for s in extra["seeds"])}
        return cls(**kwargs)

    def seeds_for(self, budget: int) -> tuple[int, ...]:
        """Probe seeds for ``budget``: the default probe seed first, then the extras."""
        if budget not in self.budgets:
            raise ValueError(f"budget {budget} not in {self.budgets}")
        return (self.probe_seed, *self.extra_seeds.get(budget, ()))


def draw_examples(
    train_labels: np.ndarray, candidates: np.ndarray, per_class: int, probe_seed: int
) -> np.ndarray:
    """``per_class`` canonical training indices per digit, drawn with ``probe_seed``; sorted.

    One generator serves digits 0..9 in order, each drawn without replacement from that digit's
    candidates in canonical order, so the draw depends only on the labels, the candidate set and
    the seed, never on how the caller ordered ``candidates``.
    """
    candidates = np.sort(np.asarray(candidates, dtype=np.int64))
    if candidates.size and np.any(candidates[1:] == candidates[:-1]):
        raise ValueError("candidates contain duplicate indices")
    labels = np.asarray(train_labels)[candidates]
    rng = np.random.default_rng(probe_seed)
    chosen = []
    for digit in range(N_CLASSES):
        pool = candidates[labels == digit]
        if pool.size < per_class:
            raise ValueError(f"digit {digit}: {pool.size} candidates, need {per_class}")
        chosen.append(rng.choice(pool, size=per_class, replace=False))
    return np.sort(np.concatenate(chosen))


def frozen_features(model: HistoryNet, images: torch.Tensor, batch: int) -> torch.Tensor:
    """fc1 post-activation features (N, hidden) of ``images``, in eval mode without gradients.

    Computed once per image; the head trains on these fixed features (see module docstring).
    """
    model.eval()
    if model.training:
        # Defensive: a submodule left in training mode could make features depend on the call.
        raise RuntimeError("backbone is not in eval mode during feature extraction")
    parts = []
    with torch.no_grad():
        for start in range(0, images.shape[0], batch):
            parts.append(model.representations(images[start : start + batch])["fc1"])
    return torch.cat(parts)


def train_head(
    features: torch.Tensor, labels: torch.Tensor, probe_seed: int, settings: ProbeSettings
) -> nn.Linear:
    """A fresh ``Linear(hidden, 10)`` trained on fixed features with SGD and cross-entropy.

    The head's initialisation and every epoch's permutation come from ``probe_seed`` alone, so two
    calls with the same seed and sizes (the two networks of a pair) start from the same head and
    see the same minibatches. The last, partial batch of each epoch is kept.
    """
    # Seed the global generator (PyTorch's default init draws from it) without leaving it
    # changed for the caller.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(probe_seed)
        head = nn.Linear(features.shape[1], N_CLASSES)
    labels = labels.long()
    optimizer = MomentumSGD(
        head.parameters(),
        lr=settings.lr,
        momentum=settings.momentum,
        weight_decay=settings.weight_decay,
    )
    # One generator for all epochs: the epoch-k permutation is the same for both networks.
    generator = torch.Generator().manual_seed(probe_seed)
    n = features.shape[0]
    for _ in range(settings.epochs):
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, settings.batch_size):
            batch = order[start : start + settings.batch_size]
            optimizer.zero_grad()
            F.cross_entropy(head(features[batch]), labels[batch]).backward()
            optimizer.step()
    return head


def correct_count(head: nn.Module, features: torch.Tensor, labels: torch.Tensor) -> int:
    """How many of ``features`` ``head`` classifies correctly (top-1)."""
    with torch.no_grad():
        predicted = head(features).argmax(dim=1)
    return int((predicted == labels.long()).sum())


def percent(count: int, total: int) -> float:
    """``100 * count / total``, correctly rounded from the exact ratio: the same difference in
    images always gives the same float, whatever the accuracy level."""
    return float(Fraction(100 * count, total))


def accuracy(head: nn.Module, features: torch.Tensor, labels: torch.Tensor) -> float:
    """Top-1 accuracy of ``head`` on ``features`` in percent."""
    return percent(correct_count(head, features, labels), labels.shape[0])


def _digests(backbones: Mapping[str, HistoryNet]) -> dict[str, str]:
    return {order: params_digest(model_state(backbones[order])) for order in ORDERS}


def _features(
    backbones: Mapping[str, HistoryNet], train: torch.Tensor, test: torch.Tensor, batch: int
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Each order's frozen features of the training images used and of the test images."""
    train_feats, test_feats = {}, {}
    for order in ORDERS:
        train_feats[order] = frozen_features(backbones[order], train, batch)
        test_feats[order] = frozen_features(backbones[order], test, batch)
    return train_feats, test_feats


def _row(budget: int, seed: int, correct: Mapping[str, int], n_test: int) -> dict:
    return {
        "budget": budget,
        "probe_seed": seed,
        "correct_ABC": correct["ABC"],
        "correct_BAC": correct["BAC"],
        "n_test": n_test,
        "acc_ABC": percent(correct["ABC"], n_test),
        "acc_BAC": percent(correct["BAC"], n_test),
        "diff_pp": percent(correct["ABC"] - correct["BAC"], n_test),
    }


def probe_pair(
    backbones: Mapping[str, HistoryNet],
    train_images: torch.Tensor,
    train_labels: np.ndarray,
    candidates: np.ndarray,
    test_images: torch.Tensor,
    test_labels: torch.Tensor,
    settings: ProbeSettings,
) -> pd.DataFrame:
    """Probe results of both orders per (budget, probe_seed).

    Columns: ``budget, probe_seed, correct_ABC, correct_BAC, n_test, acc_ABC, acc_BAC, diff_pp``.
    The correct counts (integers, out of ``n_test`` test images) are the data; ``acc_*`` and
    ``diff_pp`` (ABC minus BAC, percentage points) are derived from them exactly, ``diff_pp``
    from the difference of the counts.

    ``train_images[i]`` must be canonical training image ``i`` (normalized). The backbones are put
    in eval mode and must come out bit-identical, else :class:`BackboneChanged`.
    """
    if set(backbones) != set(ORDERS):
        raise ValueError(f"backbones must have keys {ORDERS}, got {sorted(backbones)}")
    before = _digests(backbones)

    draws = {
        (budget, seed): draw_examples(train_labels, candidates, budget, seed)
        for budget in settings.budgets
        for seed in settings.seeds_for(budget)
    }
    # Features only for the images some draw uses, each computed once per network.
    used = np.unique(np.concatenate(list(draws.values())))
    train_feats, test_feats = _features(
        backbones, train_images[torch.from_numpy(used)], test_images, settings.feature_batch
    )
    n_test = int(test_labels.shape[0])
    rows = []
    for (budget, seed), indices in draws.items():
        # Positions of the drawn canonical indices within ``used`` (both sorted).
        positions = torch.from_numpy(np.searchsorted(used, indices))
        labels = torch.from_numpy(np.asarray(train_labels)[indices]).long()
        correct = {}
        for order in ORDERS:
            head = train_head(train_feats[order][positions], labels, seed, settings)
            correct[order] = correct_count(head, test_feats[order], test_labels)
        rows.append(_row(budget, seed, correct, n_test))

    after = _digests(backbones)
    changed = [order for order in ORDERS if before[order] != after[order]]
    if changed:
        raise BackboneChanged(f"backbone weights changed during probing: {', '.join(changed)}")
    return pd.DataFrame(rows, columns=PROBE_COLUMNS)
