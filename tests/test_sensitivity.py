"""Tests for workflow.sensitivity (matching under other rules)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from workflow.matching import (
    MatchRule,
    first_persistent_match,
    kept_checkpoints,
    select_matches,
    select_matches_by_rule,
)
from workflow.sensitivity import (
    matched_values,
    one_at_a_time,
    rule_endpoint_table,
    rule_name,
    sensitivity_summary,
    with_noise_floor,
)
from workflow.stats import Bootstrap

N = 10_000
MAX_GAP, MIN_ACC = 0.2, 97.0
PROTOCOL = MatchRule.protocol(MAX_GAP, MIN_ACC)
CHECKPOINTS = [0, 250, 500, 750, 1000, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 7000, 8000]
CHECKPOINTS += [9000, 10000]
REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "reference" / "smoke"
FULL = REPO / "reference" / "full"
MAIN_GROUP = "protocol~class_split/variant~default/act~relu/lr~0.05/optim~reset/stream~0"


def _row(seed: int, update: int, gap_images: int, status: str = "ok", correct: int = 9800):
    """A comparison row as compare_checkpoint builds it: ABC ``gap_images`` ahead of BAC."""
    diff = 100.0 * gap_images / N
    return {
        "seed": seed,
        "update": update,
        "pair_status": status,
        "acc_ABC_pct": 100.0 * (correct + gap_images) / N,
        "acc_BAC_pct": 100.0 * correct / N,
        "acc_diff_pp": diff,
        "acc_gap_pp": abs(diff),
        "h_repr": seed / 1000 + update / 1e6,  # tells seed and update apart
    }


def _seed(seed: int, gaps: dict[int, int], status: str = "ok") -> list[dict]:
    """Every checkpoint of a seed; the gap is 100 images (1 pp) unless ``gaps`` says."""
    return [_row(seed, u, gaps.get(u, 100), status) for u in CHECKPOINTS]


def _frame(*seeds: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([row for seed in seeds for row in seed])


# Seed 1: a lone dip at 250, then settled from 1000 on (1500 off, 2000 on: only a 1000 grid
# sees it settled at 1000). Seed 2: matches only at 10000. Seed 3: never. Seed 4: diverged
# (every other row matches). Seed 5: exactly 0.2 pp (20 images) from 500 on.
FRAME = _frame(
    _seed(1, {250: 10, 1000: 0, 1500: 100, 2000: 5, **{u: 0 for u in CHECKPOINTS[7:]}}),
    _seed(2, {10000: 10}),
    _seed(3, {}),
    [
        {**r, "pair_status": "diverged" if r["update"] == 10000 else "ok"}
        for r in _seed(4, dict.fromkeys(CHECKPOINTS, 0))
    ],
    _seed(5, dict.fromkeys(CHECKPOINTS[2:], 20)),
)


def _updates(frame: pd.DataFrame, rule: MatchRule) -> dict[int, object]:
    matches = select_matches_by_rule(frame, rule).set_index("seed")
    return {
        seed: m.status if m.status != "matched" else int(m.matched_update)
        for seed, m in matches.iterrows()
    }


# --------------------------------------------------------------------------- rules


def test_the_protocol_rule_matches_where_expected() -> None:
    assert _updates(FRAME, PROTOCOL) == {1: 250, 2: 10000, 3: "unmatched", 4: "diverged", 5: 500}


def test_the_protocol_rule_gives_the_published_matches_of_the_main_study() -> None:
    """The matched updates of reference/full's main study, which the matching of the time
    wrote, from its comparisons under config.yaml's thresholds."""
    per_seed = pd.read_csv(FULL / "tables" / "main_per_seed.csv")
    published = per_seed[per_seed["endpoint"] == "matched"].set_index("seed")
    group = FULL / "comparisons" / MAIN_GROUP
    frame = pd.concat(
        pd.read_csv(group / f"seed~{seed}" / "ABC_vs_BAC" / "base.csv") for seed in published.index
    )
    matching = yaml.safe_load((REPO / "config.yaml").read_text())["matching"]
    rule = MatchRule.protocol(matching["max_accuracy_gap_pp"], matching["min_accuracy_pct"])
    matches = select_matches(frame, rule.max_gap_pp, rule.min_accuracy_pct).set_index("seed")
    assert (matches["status"] == "matched").all()
    assert matches["matched_update"].tolist() == published["update"].astype(int).tolist()


def test_tolerance_is_the_matching_modules() -> None:
    row = _row(1, 0, 0)
    for gap, matched in ((0.2 + 5e-10, True), (0.2 + 1e-8, False)):
        frame = pd.DataFrame([{**row, "acc_gap_pp": gap}])
        expected = "matched" if matched else "unmatched"
        assert select_matches_by_rule(frame, PROTOCOL)["status"].iloc[0] == expected


@pytest.mark.parametrize(
    "gap, expected", [(0.1, {5: "unmatched"}), (0.2, {5: 500}), (0.3, {5: 500})]
)
def test_tighter_and_looser_tolerance(gap, expected) -> None:
    updates = _updates(FRAME, MatchRule(gap, MIN_ACC, None, 1))
    assert {seed: updates[seed] for seed in expected} == expected
    assert updates[1] == 250  # 10 images: 0.1 pp, within every tolerance here


def test_grid_keeps_only_existing_multiples() -> None:
    group = FRAME[FRAME["seed"] == 1].sample(frac=1.0, random_state=3)
    assert kept_checkpoints(group, None)["update"].tolist() == CHECKPOINTS
    every_1000 = [0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 9000, 10000]
    assert kept_checkpoints(group, 1000)["update"].tolist() == every_1000
    # 7500 was never saved: a grid never invents a checkpoint.
    assert kept_checkpoints(group, 2500)["update"].tolist() == [0, 2500, 5000, 10000]


def test_grid_moves_the_match_to_a_kept_checkpoint() -> None:
    assert _updates(FRAME, MatchRule(MAX_GAP, MIN_ACC, 1000, 1)) == {
        1: 1000,
        2: 10000,
        3: "unmatched",
        4: "diverged",
        5: 1000,
    }
    assert _updates(FRAME, MatchRule(MAX_GAP, MIN_ACC, 2500, 1))[1] == 2500


def test_persistence_needs_the_next_kept_checkpoint_too() -> None:
    rule = MatchRule(MAX_GAP, MIN_ACC, None, 2)
    # Seed 1: 250 is a lone dip, 1000 is followed by a miss at 1500; settled from 2000 (2000 and
    # 2500). Seed 2 matches only at the last checkpoint: no next one, so never persistent.
    assert _updates(FRAME, rule) == {1: 2000, 2: "unmatched", 3: "unmatched", 4: "diverged", 5: 500}
    # On the 1000 grid 1500 is not kept: 1000 and 2000 are consecutive, both matched.
    assert _updates(FRAME, MatchRule(MAX_GAP, MIN_ACC, 1000, 2))[1] == 1000


def test_persistence_counts_consecutive_kept_checkpoints() -> None:
    group = pd.DataFrame([_row(1, u, g) for u, g in ((0, 0), (10, 100), (20, 0), (30, 0))])
    assert first_persistent_match(group, MatchRule(MAX_GAP, MIN_ACC, None, 1)) == 0
    assert first_persistent_match(group, MatchRule(MAX_GAP, MIN_ACC, None, 2)) == 20
    assert first_persistent_match(group, MatchRule(MAX_GAP, MIN_ACC, None, 3)) is None
    assert first_persistent_match(group, MatchRule(MAX_GAP, MIN_ACC, 20, 2)) == 0


def test_persistence_also_needs_the_accuracy_floor() -> None:
    low = {**_row(1, 10, 0), "acc_ABC_pct": 96.0, "acc_BAC_pct": 96.0}
    group = pd.DataFrame([_row(1, 0, 0), low, _row(1, 20, 0), _row(1, 30, 0)])
    assert first_persistent_match(group, MatchRule(MAX_GAP, MIN_ACC, None, 2)) == 20


def test_a_diverged_seed_is_diverged_on_any_grid() -> None:
    # Every row matches, but the row at 750, which neither grid keeps, is marked diverged.
    frame = _frame(_seed(4, dict.fromkeys(CHECKPOINTS, 0)))
    frame.loc[frame["update"] == 750, "pair_status"] = "diverged"
    for grid in (None, 1000, 2500):
        assert _updates(frame, MatchRule(MAX_GAP, MIN_ACC, grid, 1)) == {4: "diverged"}


def test_rule_validation() -> None:
    good = {"max_gap_pp": 0.2, "min_accuracy_pct": 97.0, "grid_every": None, "persistence": 1}
    for bad in ({"persistence": 0}, {"grid_every": 0}, {"grid_every": 2.5}, {"persistence": 1.0}):
        with pytest.raises(ValueError):
            MatchRule(**{**good, **bad})
    assert MatchRule(0.2, 97.0, np.int64(1000), np.int64(2)).grid_every == 1000


def test_rule_names_and_one_at_a_time() -> None:
    assert rule_name(PROTOCOL) == "gap0.2_acc97.0_all_persist1"
    assert rule_name(MatchRule(0.1, 97, 2500, 2)) == "gap0.1_acc97.0_every2500_persist2"
    rules = one_at_a_time(PROTOCOL, [0.1, 0.2, 0.3], [1000, 2500], [2])
    assert list(rules) == [
        "gap0.2_acc97.0_all_persist1",  # the base; the 0.2 variant equals it and is dropped
        "gap0.1_acc97.0_all_persist1",
        "gap0.3_acc97.0_all_persist1",
        "gap0.2_acc97.0_every1000_persist1",
        "gap0.2_acc97.0_every2500_persist1",
        "gap0.2_acc97.0_all_persist2",
    ]
    assert rules["gap0.2_acc97.0_every2500_persist1"] == MatchRule(0.2, 97.0, 2500, 1)


def test_bad_frames_are_refused() -> None:
    with pytest.raises(ValueError, match="lacks columns"):
        select_matches_by_rule(FRAME.drop(columns=["acc_gap_pp"]), PROTOCOL)
    with pytest.raises(ValueError, match="lacks columns"):
        matched_values(FRAME, {"p": PROTOCOL}, ["no_such_metric"])
    with pytest.raises(ValueError, match="more than once"):
        select_matches_by_rule(pd.concat([FRAME, FRAME.iloc[[3]]]), PROTOCOL)


# --------------------------------------------------------------------------- summary


RULES = {
    "protocol": PROTOCOL,
    "every_1000": MatchRule(MAX_GAP, MIN_ACC, 1000, 1),
    "persist_2": MatchRule(MAX_GAP, MIN_ACC, None, 2),
    "strict": MatchRule(0.05, MIN_ACC, None, 1),
}


def test_per_seed_values_are_taken_at_the_matched_update() -> None:
    per_seed = matched_values(FRAME, RULES, ["h_repr"])
    assert list(per_seed.columns) == ["rule", "seed", "status", "matched_update", "h_repr"]
    assert len(per_seed) == len(RULES) * 5
    by = per_seed.set_index(["rule", "seed"])
    assert by.loc[("protocol", 1), "h_repr"] == 1 / 1000 + 250 / 1e6
    assert by.loc[("persist_2", 1), "h_repr"] == 1 / 1000 + 2000 / 1e6
    assert by.loc[("every_1000", 5), "h_repr"] == 5 / 1000 + 1000 / 1e6
    for rule, seed in (("protocol", 3), ("protocol", 4), ("strict", 5)):
        assert math.isnan(by.loc[(rule, seed), "h_repr"])
        assert pd.isna(by.loc[(rule, seed), "matched_update"])


BOOTSTRAP = Bootstrap(resamples=200, seed=1, level=0.9)


def _summary(frame: pd.DataFrame, rules: dict[str, MatchRule], default: str):
    values = matched_values(frame, rules, ["h_repr"])
    arms = {name: rule_endpoint_table(values[values["rule"] == name]) for name in rules}
    return sensitivity_summary({"matching": arms}, default, BOOTSTRAP)


def test_summary_counts_updates_and_means() -> None:
    summary, per_seed = _summary(FRAME, RULES, "protocol")
    described = summary[summary["contrast"] == ""].set_index(["arm", "metric"])
    row = described.loc[("protocol", "h_repr")]
    assert (row.n_seeds, row.n, row.n_unmatched, row.n_diverged) == (5, 3, 1, 1)
    expected = np.mean([0.001 + 250e-6, 0.002 + 10000e-6, 0.005 + 500e-6])
    assert row["mean"] == pytest.approx(expected, rel=1e-15)
    assert described.loc[("protocol", "update"), "mean"] == pytest.approx((250 + 10000 + 500) / 3)
    mine = per_seed[per_seed["arm"] == "every_1000"].set_index("seed")
    assert mine.loc[[1, 2, 5], "update"].tolist() == [1000, 10000, 1000]
    # Strict (0.05 pp): seed 1's dip at 250 (0.1 pp) is too wide, its gap is 0 at 1000; seed
    # 5's 0.2 pp never qualifies.
    strict = described.loc[("strict", "h_repr")]
    assert (strict.n, strict.n_unmatched, strict.n_diverged) == (1, 3, 1)
    # Contrasts pair each rule with the protocol's over the seeds both match.
    contrast = summary[summary["contrast"] == "minus_default"].set_index(["arm", "metric"])
    assert "protocol" not in contrast.index.get_level_values("arm")
    grid = contrast.loc[("every_1000", "update")]
    assert grid.n == 3 and grid["mean"] == pytest.approx((750 + 0 + 500) / 3)
    assert contrast.loc[("strict", "update"), "n"] == 1


def test_summary_of_a_rule_that_matches_nobody() -> None:
    rules = {"protocol": PROTOCOL, "none": MatchRule(0.0, 99.99, None, 1)}
    summary, _ = _summary(FRAME, rules, "protocol")
    row = summary[(summary["arm"] == "none") & (summary["contrast"] == "")]
    row = row.set_index("metric").loc["h_repr"]
    assert row.n == 0 and math.isnan(row["mean"])
    assert (row.n_unmatched, row.n_diverged) == (4, 1)


def test_undefined_metric_is_left_out_of_the_mean_and_counted() -> None:
    frame = FRAME.copy()
    frame.loc[(frame["seed"] == 2) & (frame["update"] == 10000), "h_repr"] = np.nan
    summary, _ = _summary(frame, {"protocol": PROTOCOL}, "protocol")
    row = summary.set_index("metric").loc["h_repr"]
    assert row.n == 2 and row.n_undefined == 1
    assert row["mean"] == pytest.approx(np.mean([0.001 + 250e-6, 0.005 + 500e-6]))


def test_a_variant_is_compared_with_the_default_seed_by_seed() -> None:
    def table(values: dict[int, float], status: dict[int, str]) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "seed": list(values),
                "endpoint": "matched",
                "update": 100,
                "status": [status.get(seed, "ok") for seed in values],
                "h_repr": list(values.values()),
            }
        )

    default = table({1: 0.10, 2: 0.20, 3: 0.30}, {})
    variant = table({1: 0.15, 2: 0.20, 3: 0.90}, {3: "unmatched"})
    summary, per_seed = sensitivity_summary(
        {"variant": {"default": default, "raw": variant}}, "default", BOOTSTRAP
    )
    diff = summary[(summary["arm"] == "raw") & (summary["contrast"] == "minus_default")]
    diff = diff.set_index("metric").loc["h_repr"]
    assert diff.n == 2 and diff["mean"] == pytest.approx(0.025)
    assert {"t", "p_wilcoxon", "d_z"} <= set(summary.columns)
    assert list(summary.columns[:5]) == ["analysis", "arm", "contrast", "endpoint", "metric"]
    assert sorted(per_seed["arm"].unique()) == ["default", "raw"]


def test_the_default_arm_carries_the_noise_floor_and_variants_do_not() -> None:
    default = pd.DataFrame(
        {
            "seed": [1, 1, 2, 2],
            "endpoint": ["matched", "common_10000"] * 2,
            "update": [500, 10000, 750, 10000],
            "status": "ok",
            "h_repr": [0.10, 0.12, 0.20, 0.22],
        }
    )
    floor = pd.DataFrame(
        {
            "seed": [1, 1, 2, 2, 3],
            "endpoint": ["matched", "common_10000"] * 2 + ["matched"],
            "status": ["ok", "ok", "unmatched", "ok", "ok"],
            "h_floor": [0.05, 0.06, np.nan, 0.07, 0.50],
        }
    )
    armed = with_noise_floor(default, floor)
    # Seed 2 has no matched floor (its noise-floor quartet never matched); seed 3 is no
    # default seed, so it adds no row.
    assert armed["h_floor"].tolist()[:2] == [0.05, 0.06]
    assert np.isnan(armed["h_floor"].iloc[2]) and armed["h_floor"].iloc[3] == 0.07
    variant = default.assign(h_repr=default["h_repr"] + 0.01)
    summary, per_seed = sensitivity_summary(
        {"variant": {"default": armed, "raw": variant}}, "default", BOOTSTRAP
    )
    floor_rows = summary[summary["metric"] == "h_floor"]
    assert set(floor_rows["arm"]) == {"default"} and set(floor_rows["contrast"]) == {""}
    matched = floor_rows.set_index("endpoint").loc["matched"]
    assert matched.n == 1 and matched["mean"] == pytest.approx(0.05)
    assert "h_floor" in per_seed.columns


def test_a_noise_floor_given_twice_for_a_seed_is_refused() -> None:
    floor = pd.DataFrame({"seed": [1, 1], "endpoint": "matched", "status": "ok", "h_floor": 0.1})
    default = pd.DataFrame({"seed": [1], "endpoint": ["matched"], "status": "ok"})
    with pytest.raises(ValueError, match="more than once"):
        with_noise_floor(default, floor)


def test_protocol_rule_reproduces_the_reference_per_seed_table() -> None:
    """On the small config's reference, the protocol rule's matched H_repr is the per-seed
    table's ``matched`` row (config/smoke.yaml: 3.0 pp, 75%)."""
    per_seed_path = SMOKE / "tables" / "main_per_seed.csv"
    group = SMOKE / "comparisons" / "protocol~class_split" / "variant~default" / "act~relu"
    paths = sorted((group / "lr~0.05" / "optim~reset" / "stream~0").rglob("base.csv"))
    assert paths and per_seed_path.is_file(), "the committed small reference is incomplete"
    frame = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    mine = matched_values(frame, {"protocol": MatchRule(3.0, 75.0, None, 1)}, ["h_repr"])
    table = pd.read_csv(per_seed_path)
    reference = table[table["endpoint"] == "matched"].reset_index(drop=True)
    assert mine["seed"].tolist() == reference["seed"].tolist()
    assert mine["matched_update"].tolist() == reference["update"].astype("Int64").tolist()
    np.testing.assert_array_equal(mine["h_repr"].to_numpy(), reference["h_repr"].to_numpy())
