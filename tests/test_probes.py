"""Tests for workflow.probes: example draws, head seeding, pairing, the frozen check, averaging."""

from __future__ import annotations

import copy
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import workflow.probes as probes
from workflow.model import ModelSpec, build_model
from workflow.probes import (
    PROBE_COLUMNS,
    BackboneChanged,
    ProbeSettings,
    accuracy,
    correct_count,
    draw_examples,
    frozen_features,
    percent,
    probe_pair,
    train_head,
)
from workflow.studies import per_seed_differences

torch.set_num_threads(1)

SMALL = ProbeSettings(budgets=(2, 5), extra_seeds={2: (9,)}, epochs=2, batch_size=8)


def _labels(n: int = 200, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 10, size=n)


def _data(n_train: int = 200, n_test: int = 50):
    g = torch.Generator().manual_seed(5)
    train_images = torch.randn(n_train, 1, 28, 28, generator=g)
    test_images = torch.randn(n_test, 1, 28, 28, generator=g)
    train_labels = _labels(n_train, seed=1)
    test_labels = torch.from_numpy(_labels(n_test, seed=2))
    return train_images, train_labels, test_images, test_labels


def _pair(same: bool = False) -> dict:
    abc = build_model(0, ModelSpec())
    bac = copy.deepcopy(abc) if same else build_model(1, ModelSpec())
    return {"ABC": abc, "BAC": bac}


# --- settings ---------------------------------------------------------------------------------


def test_settings_defaults_and_seeds() -> None:
    s = ProbeSettings()
    assert s.budgets == (25, 50, 100, 500)
    assert s.seeds_for(50) == (777, 1777, 2777, 3777, 4777)
    assert s.seeds_for(500) == (777,)
    with pytest.raises(ValueError):
        s.seeds_for(7)


def test_settings_from_config() -> None:
    s = ProbeSettings.from_config(
        {"budgets": [2, 5], "extra_seeds": {"budget": 2, "seeds": [9]}, "epochs": 3}
    )
    assert s.budgets == (2, 5) and s.extra_seeds == {2: (9,)} and s.epochs == 3
    assert s.lr == 0.01
    with pytest.raises(ValueError):
        ProbeSettings.from_config({"epoch": 3})
    with pytest.raises(ValueError):
        ProbeSettings(budgets=(5,), extra_seeds={2: (9,)})


# --- draw_examples ----------------------------------------------------------------------------


def test_draw_is_deterministic_balanced_sorted_unique() -> None:
    labels = _labels(300)
    candidates = np.arange(0, 300, 2)
    first = draw_examples(labels, candidates, 3, 777)
    assert np.array_equal(first, draw_examples(labels, candidates[::-1].copy(), 3, 777))
    assert np.all(np.diff(first) > 0)  # sorted and no duplicates
    assert np.isin(first, candidates).all()
    assert np.array_equal(np.bincount(labels[first], minlength=10), np.full(10, 3))
    assert not np.array_equal(first, draw_examples(labels, candidates, 3, 778))


def test_draw_matches_the_protocol_rule() -> None:
    labels = _labels(300)
    candidates = np.arange(300)
    rng = np.random.default_rng(11)
    expected = np.sort(
        np.concatenate(
            [rng.choice(np.flatnonzero(labels == d), 4, replace=False) for d in range(10)]
        )
    )
    assert np.array_equal(draw_examples(labels, candidates, 4, 11), expected)


def test_draw_too_few_raises() -> None:
    labels = np.repeat(np.arange(10), 3)
    with pytest.raises(ValueError, match="digit"):
        draw_examples(labels, np.arange(30), 4, 0)


# --- heads ------------------------------------------------------------------------------------


def _features(n: int = 40, seed: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 128, generator=g).relu(), torch.randint(0, 10, (n,), generator=g)


def test_head_init_depends_only_on_probe_seed() -> None:
    untrained = replace(SMALL, epochs=0)
    a = train_head(*_features(seed=3), 777, untrained)
    b = train_head(*_features(seed=4), 777, untrained)
    c = train_head(*_features(seed=3), 778, untrained)
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    assert not torch.equal(a.weight, c.weight)


def test_head_training_is_bitwise_reproducible_and_seed_dependent() -> None:
    feats, labels = _features()
    a = train_head(feats, labels, 777, SMALL)
    b = train_head(feats, labels, 777, SMALL)
    c = train_head(feats, labels, 9, SMALL)
    assert torch.equal(a.weight, b.weight) and torch.equal(a.bias, b.bias)
    assert not torch.equal(a.weight, c.weight)
    # Training moved the head away from its initialisation.
    assert not torch.equal(
        a.weight, train_head(feats, labels, 777, replace(SMALL, epochs=0)).weight
    )


def test_head_leaves_global_rng_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    train_head(*_features(), 777, SMALL)
    assert torch.equal(torch.rand(3), expected)


def test_accuracy_in_percent() -> None:
    head = nn.Linear(2, 10, bias=False)
    with torch.no_grad():
        head.weight.zero_()
        head.weight[3, 0] = 1.0
        head.weight[7, 1] = 1.0
    feats = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0], [0.0, 1.0]])
    assert accuracy(head, feats, torch.tensor([3, 7, 7, 7])) == 75.0
    count = correct_count(head, feats, torch.tensor([3, 7, 7, 7]))
    assert count == 3 and type(count) is int


def test_percent_is_exact_so_one_image_differences_are_one_float() -> None:
    # As float accuracy differences, one image of 2,000 comes out as several distinct numbers.
    assert len({100 * (a + 1) / 2000 - 100 * a / 2000 for a in range(1500, 1600)}) > 1
    assert {percent(1, 2000)} == {percent((a + 1) - a, 2000) for a in range(1500, 1600)}
    assert percent(1, 2000) == 0.05 and percent(0, 2000) == 0.0 and percent(-3, 2000) == -0.15


def test_precomputed_features_equal_training_through_frozen_backbone() -> None:
    """The design's justification: fixed features == running the frozen backbone in the loop."""
    backbone = build_model(0, ModelSpec()).eval()
    g = torch.Generator().manual_seed(8)
    images = torch.randn(20, 1, 28, 28, generator=g)
    labels = torch.randint(0, 10, (20,), generator=g)
    settings = replace(SMALL, epochs=1, batch_size=6, momentum=0.9, lr=0.1)

    fast = train_head(frozen_features(backbone, images, batch=7), labels, 42, settings)

    # Reference: the backbone runs on each minibatch of images inside the loop.
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(42)
        slow = nn.Linear(128, 10)
    opt = torch.optim.SGD(slow.parameters(), lr=0.1, momentum=0.9)
    order = torch.randperm(20, generator=torch.Generator().manual_seed(42))
    for start in range(0, 20, 6):
        batch = order[start : start + 6]
        with torch.no_grad():
            feats = backbone.representations(images[batch])["fc1"]
        opt.zero_grad()
        F.cross_entropy(slow(feats), labels[batch]).backward()
        opt.step()

    torch.testing.assert_close(fast.weight, slow.weight, rtol=0, atol=1e-6)
    torch.testing.assert_close(fast.bias, slow.bias, rtol=0, atol=1e-6)


def test_frozen_features_shape_and_eval_mode() -> None:
    model = build_model(0, ModelSpec()).train()
    images = torch.randn(9, 1, 28, 28, generator=torch.Generator().manual_seed(0))
    feats = frozen_features(model, images, batch=4)
    assert feats.shape == (9, 128) and not feats.requires_grad
    assert model.training is False
    assert (feats >= 0).all()  # post-activation ReLU


# --- probe_pair -------------------------------------------------------------------------------


def test_probe_pair_rows_and_differences() -> None:
    train_images, train_labels, test_images, test_labels = _data()
    candidates = np.arange(0, 200)
    rows = probe_pair(
        _pair(), train_images, train_labels, candidates, test_images, test_labels, SMALL
    )
    assert (
        list(rows.columns)
        == PROBE_COLUMNS
        == [
            "budget",
            "probe_seed",
            "correct_ABC",
            "correct_BAC",
            "n_test",
            "acc_ABC",
            "acc_BAC",
            "diff_pp",
        ]
    )
    assert list(zip(rows.budget, rows.probe_seed, strict=True)) == [(2, 777), (2, 9), (5, 777)]
    # The integer counts are the data; the percentages are derived from them exactly.
    for column in ("correct_ABC", "correct_BAC", "n_test"):
        assert pd.api.types.is_integer_dtype(rows[column])
    assert (rows.n_test == len(test_labels)).all()
    for row in rows.itertuples():
        assert row.acc_ABC == percent(row.correct_ABC, row.n_test)
        assert row.acc_BAC == percent(row.correct_BAC, row.n_test)
        assert row.diff_pp == percent(row.correct_ABC - row.correct_BAC, row.n_test)
    assert rows[["correct_ABC", "correct_BAC"]].stack().between(0, len(test_labels)).all()


def test_probe_pair_uses_the_same_draws_heads_and_order_for_both() -> None:
    """Identical backbones must give exactly zero difference at every budget and seed."""
    train_images, train_labels, test_images, test_labels = _data()
    rows = probe_pair(
        _pair(same=True),
        train_images,
        train_labels,
        np.arange(200),
        test_images,
        test_labels,
        SMALL,
    )
    assert (rows.diff_pp == 0.0).all()
    assert (rows.correct_ABC == rows.correct_BAC).all()
    assert (rows.acc_ABC == rows.acc_BAC).all()


def test_probe_pair_matches_a_direct_computation() -> None:
    train_images, train_labels, test_images, test_labels = _data()
    pair = _pair()
    candidates = np.arange(50, 200)
    rows = probe_pair(pair, train_images, train_labels, candidates, test_images, test_labels, SMALL)
    idx = draw_examples(train_labels, candidates, 5, 777)
    net = pair["BAC"]
    head = train_head(
        frozen_features(net, train_images[torch.from_numpy(idx)], 1000),
        torch.from_numpy(train_labels[idx]),
        777,
        SMALL,
    )
    test_feats = frozen_features(net, test_images, 1000)
    row = rows.set_index(["budget", "probe_seed"]).loc[(5, 777)]
    assert row["correct_BAC"] == correct_count(head, test_feats, test_labels)
    assert row["acc_BAC"] == accuracy(head, test_feats, test_labels)


def test_probe_pair_rejects_wrong_keys() -> None:
    train_images, train_labels, test_images, test_labels = _data()
    pair = _pair()
    with pytest.raises(ValueError):
        probe_pair(
            {"ABC": pair["ABC"], "CBA": pair["BAC"]},
            train_images,
            train_labels,
            np.arange(200),
            test_images,
            test_labels,
            SMALL,
        )


@pytest.mark.parametrize("order", ["ABC", "BAC"])
def test_backbone_change_is_detected(monkeypatch: pytest.MonkeyPatch, order: str) -> None:
    train_images, train_labels, test_images, test_labels = _data()
    pair = _pair()
    original = probes.frozen_features

    def tampering(model, images, batch):
        out = original(model, images, batch)
        if model is pair[order]:
            with torch.no_grad():
                model.fc1.weight[0, 0] += 1e-3
        return out

    monkeypatch.setattr(probes, "frozen_features", tampering)
    with pytest.raises(BackboneChanged, match=order):
        probe_pair(
            pair, train_images, train_labels, np.arange(200), test_images, test_labels, SMALL
        )


def test_untouched_backbones_pass_the_check() -> None:
    train_images, train_labels, test_images, test_labels = _data()
    pair = _pair()
    before = {k: copy.deepcopy(v.state_dict()) for k, v in pair.items()}
    probe_pair(pair, train_images, train_labels, np.arange(200), test_images, test_labels, SMALL)
    for order, state in before.items():
        for name, value in pair[order].state_dict().items():
            assert torch.equal(value, state[name])


# --- per_seed_differences ---------------------------------------------------------------------


def test_per_seed_differences_pools_counts_over_probe_seeds() -> None:
    rows = pd.DataFrame(
        {
            "seed": [1, 1, 1, 1, 0],
            "budget": [50, 50, 50, 25, 50],
            "probe_seed": [777, 1777, 2777, 777, 777],
            "correct_ABC": [90, 92, 94, 80, 70],
            "correct_BAC": [89, 90, 95, 81, 70],
            "n_test": [100, 100, 100, 100, 100],
        }
    )
    out = per_seed_differences(rows, 777)
    assert list(zip(out.seed, out.budget, out.probe_seeds, strict=True)) == [
        (0, 50, "777"),
        (1, 25, "777"),
        (1, 50, "777"),
        (1, 50, "777+1777+2777"),
    ]
    assert out.n_probe_seeds.tolist() == [1, 1, 1, 3]
    pooled = out.iloc[3]
    assert (pooled.correct_ABC, pooled.correct_BAC, pooled.n_test) == (276, 274, 300)
    assert pooled.acc_ABC == 92.0
    assert pooled.acc_BAC == float(Fraction(274, 3))
    assert pooled.diff_pp == float(Fraction(2, 3))
    primary = out.iloc[2]
    assert (primary.correct_ABC, primary.correct_BAC, primary.n_test) == (90, 89, 100)
    assert primary.diff_pp == 1.0


def test_per_seed_differences_rejects_duplicates() -> None:
    rows = pd.DataFrame(
        {
            "seed": [1, 1],
            "budget": [50, 50],
            "probe_seed": [777, 777],
            "correct_ABC": [90, 91],
            "correct_BAC": [89, 90],
            "n_test": [100, 100],
        }
    )
    with pytest.raises(ValueError):
        per_seed_differences(rows, 777)
