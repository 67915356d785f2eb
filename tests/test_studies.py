"""Tests for workflow.studies (torch-free study tables) and workflow.summary.stat_row.

Every frame is small and hand-made so the expected numbers can be checked by hand.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from workflow import studies
from workflow.noise_floor import is_order_pair, noise_floor_summary, noise_floor_table
from workflow.stats import Bootstrap, describe, paired_tests, tost
from workflow.studies import (
    activation_summary,
    at_update,
    long_summary,
    lr_search_table,
    ok_rows,
    per_seed_differences,
    pilot_summary,
    probes_summary,
    select_rate,
)
from workflow.summary import TEST_COLUMNS, stat_row

BOOTSTRAP = Bootstrap(resamples=500, seed=7, level=0.95)


def _row(table: pd.DataFrame, **where) -> pd.Series:
    mask = np.ones(len(table), dtype=bool)
    for key, value in where.items():
        mask &= (table[key] == value).to_numpy()
    assert mask.sum() == 1, (where, int(mask.sum()))
    return table[mask].iloc[0]


def _comparisons(values: dict[tuple[int, int], float | None], **extra) -> pd.DataFrame:
    """(seed, update) -> h_repr; None marks a diverged pair. Other metrics derive from h."""
    rows = []
    for (seed, update), h in values.items():
        row = {"seed": seed, "update": update, "pair_status": "ok" if h is not None else "diverged"}
        if h is not None:
            row |= {
                "h_repr": h,
                "acc_ABC_pct": 90.0 + h,
                "acc_BAC_pct": 90.0 - h,
                "acc_gap_pp": 2 * h,
                "disagreement_pct": 10 * h,
            }
        rows.append(row | extra)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- stat_row


def test_stat_row_counts_undefined_and_adds_tests_when_signed() -> None:
    values = [0.1, float("nan"), 0.3, float("inf"), 0.2]
    row = stat_row(values, BOOTSTRAP, signed=False, metric="m", n_seeds=5)
    assert row["metric"] == "m" and row["n_seeds"] == 5
    assert row["n"] == 3 and row["n_undefined"] == 2
    assert row["mean"] == pytest.approx(0.2)
    expected = describe([0.1, 0.3, 0.2], Bootstrap(resamples=500, seed=7, level=0.95)).as_dict()
    assert {k: row[k] for k in expected} == expected
    assert not set(TEST_COLUMNS) & set(row)
    signed = stat_row(values, BOOTSTRAP, signed=True)
    tests = paired_tests([0.1, 0.3, 0.2]).as_dict()
    assert {k: signed[k] for k in TEST_COLUMNS} == {k: tests[k] for k in TEST_COLUMNS}
    assert signed["n_pos"] == 3


def test_stat_row_of_nothing() -> None:
    row = stat_row([], BOOTSTRAP, signed=True, metric="m")
    assert row["n"] == 0 and row["n_undefined"] == 0
    assert math.isnan(row["mean"])


# --------------------------------------------------------------------------- ok_rows, at_update


def test_ok_rows_drops_every_row_of_a_diverged_seed_and_counts_it() -> None:
    table = _comparisons({(1, 10): 0.1, (1, 20): 0.2, (2, 10): 0.3, (2, 20): None, (3, 10): 0.5})
    ok, n_diverged = ok_rows(table)
    assert n_diverged == 1
    assert sorted(set(ok["seed"])) == [1, 3]  # seed 2's update-10 row goes too
    assert len(ok) == 3


def test_at_update_is_indexed_by_seed() -> None:
    table = _comparisons({(1, 10): 0.1, (1, 20): 0.2, (2, 10): 0.3, (2, 20): 0.4})
    got = at_update(table, 20, "h_repr")
    assert got.to_dict() == {1: 0.2, 2: 0.4}


# --------------------------------------------------------------------------- pilot


def _endpoints(rows: list[tuple]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["seed", "endpoint", "update", "status", "h_repr"])


NAN = float("nan")
PILOT = {
    "reset": _endpoints(
        [
            (1, "matched", 25, "ok", 0.2),
            (2, "matched", None, "unmatched", NAN),
            (3, "matched", 50, "ok", 0.4),
            (1, "common_100", 100, "ok", 0.3),
            (2, "common_100", 100, "ok", 0.5),
            (3, "common_100", 100, "ok", 0.7),
        ]
    ),
    "preserve": _endpoints(
        [
            (1, "matched", 25, "ok", 0.1),
            (2, "matched", 50, "ok", 0.3),
            (3, "matched", None, "diverged", NAN),
            (1, "common_100", 100, "ok", 0.4),
            (2, "common_100", 100, "ok", 0.9),
            (3, "common_100", 100, "diverged", NAN),
        ]
    ),
}


def test_pilot_summary_per_policy_counts_and_means() -> None:
    table = pilot_summary(PILOT, BOOTSTRAP)
    row = _row(table, policy="reset", endpoint="matched")
    assert (row["n"], row["n_seeds"], row["n_matched"]) == (2, 3, 2)
    assert (row["n_unmatched"], row["n_diverged"]) == (1, 0)
    assert row["mean"] == pytest.approx(0.3)
    row = _row(table, policy="preserve", endpoint="common_100")
    assert (row["n"], row["n_seeds"], row["n_diverged"]) == (2, 3, 1)
    assert row["mean"] == pytest.approx(0.65)
    assert row["n_matched"] is None or pd.isna(row["n_matched"])
    assert set(table["metric"]) == {"h_repr"}


def test_pilot_summary_paired_difference_preserve_minus_reset() -> None:
    table = pilot_summary(PILOT, BOOTSTRAP)
    diff = table[table["policy"] == "preserve_minus_reset"]
    # Only common endpoints are paired: matched updates differ between the policies.
    assert diff["endpoint"].tolist() == ["common_100"]
    row = diff.iloc[0]
    # Seed 1: 0.4 - 0.3; seed 2: 0.9 - 0.5; seed 3 diverged under preserve (n < n_seeds).
    assert (row["n"], row["n_seeds"]) == (2, 3)
    assert row["mean"] == pytest.approx(0.25)
    assert (row["n_pos"], row["n_neg"]) == (2, 0)
    assert row["sd"] == pytest.approx(np.std([0.1, 0.4], ddof=1))


def test_pilot_summary_single_policy_has_no_difference() -> None:
    table = pilot_summary({"reset": PILOT["reset"]}, BOOTSTRAP)
    assert set(table["policy"]) == {"reset"}
    assert len(table) == 2


# --------------------------------------------------------------------------- long horizon


LONG = _comparisons(
    {
        (1, 10): 0.30,
        (1, 25): 0.28,
        (1, 50): 0.25,
        (2, 10): 0.20,
        (2, 25): 0.15,
        (2, 50): 0.10,
        (3, 10): 0.40,
        (3, 25): 0.42,
        (3, 50): 0.45,
        (4, 10): 0.90,
        (4, 25): 0.80,
        (4, 50): None,  # diverged in the extended segment: the whole seed is excluded
    }
)


def test_long_summary_change_is_paired_end_minus_start() -> None:
    table = long_summary(LONG, [10, 25, 50], 10, 50, BOOTSTRAP)
    change = _row(table, metric="h_repr_change")
    assert change["update"] == "50-10"
    # Per seed 0.25 - 0.30, 0.10 - 0.20, 0.45 - 0.40: paired, so the sd is of these.
    d = [-0.05, -0.10, 0.05]
    assert change["n"] == 3
    assert change["mean"] == pytest.approx(np.mean(d))
    assert change["sd"] == pytest.approx(np.std(d, ddof=1))
    assert (change["n_pos"], change["n_neg"]) == (1, 2)
    assert change["t"] == pytest.approx(paired_tests(np.array(d)).t)
    assert (change["n_seeds"], change["n_diverged"]) == (4, 1)


def test_long_summary_metric_rows() -> None:
    table = long_summary(LONG, [10, 25, 50], 10, 50, BOOTSTRAP)
    assert len(table) == 3 * len(studies.LONG_METRICS) + 1
    row = _row(table, metric="h_repr", update=10)
    assert row["n"] == 3  # seed 4 excluded, but counted
    assert row["mean"] == pytest.approx(0.3)
    assert (row["n_seeds"], row["n_diverged"]) == (4, 1)
    assert "t" not in row or pd.isna(row["t"])  # unsigned
    assert _row(table, metric="acc_gap_pp", update=50)["mean"] == pytest.approx(2 * 0.8 / 3)


# --------------------------------------------------------------------------- noise floor


def _noise_floor_inputs():
    """Seed 1: matched at 25; seed 2: unmatched; seed 3: the stream-0 order pair diverged;
    seed 4: a same-order replicate pair diverged."""
    order_main = _comparisons({(1, 25): 0.5, (1, 100): 0.4, (2, 100): 0.6, (3, 100): None})
    order_main = pd.concat([order_main, _comparisons({(4, 100): 0.7})], ignore_index=True)

    def square(h1: float, h2: float, h3: float, h4: float, floor: float | None) -> dict:
        return {(1, 25): h1, (1, 100): h2, (2, 100): h3, (3, 100): h4, (4, 100): floor}

    pairs = {
        "ABC_BAC": order_main,
        "ABCr_BACr": _comparisons(square(0.7, 0.6, 0.6, 0.5, 0.5)),
        "ABC_BACr": _comparisons(square(0.5, 0.4, 0.6, 0.5, 0.5)),
        "ABCr_BAC": _comparisons(square(0.3, 0.2, 0.6, 0.5, 0.5)),
        "ABC_ABCr": _comparisons(square(0.1, 0.2, 0.3, 0.1, None)),
        "BAC_BACr": _comparisons(square(0.3, 0.1, 0.1, 0.1, 0.2)),
    }
    matches = pd.DataFrame(
        {
            "seed": [1, 2, 3, 4],
            "status": ["matched", "unmatched", "diverged", "matched"],
            "matched_update": pd.array([25, pd.NA, pd.NA, 100], dtype="Int64"),
        }
    )
    return pairs, matches


def test_order_pairs_join_the_two_orders_on_any_streams() -> None:
    assert [is_order_pair(p) for p in ("ABC_BAC", "ABCr_BACr", "ABC_BACr", "ABCr_BAC")] == [
        True
    ] * 4
    assert not is_order_pair("ABC_ABCr") and not is_order_pair("BAC_BACr")


def test_noise_floor_excess_is_mean_order_pair_minus_mean_same_order_pair() -> None:
    table = noise_floor_table(*_noise_floor_inputs(), common_endpoint=100)
    assert len(table) == 8  # every seed at both endpoints
    row = _row(table, seed=1, endpoint="matched")
    assert (row["status"], row["update"]) == ("ok", 25)
    assert (row["h_ABC_BAC"], row["h_ABCr_BAC"], row["h_ABC_ABCr"]) == (0.5, 0.3, 0.1)
    assert row["h_order"] == pytest.approx((0.5 + 0.7 + 0.5 + 0.3) / 4)
    assert row["h_floor"] == pytest.approx((0.1 + 0.3) / 2)
    assert row["excess"] == pytest.approx(0.5 - 0.2)
    row = _row(table, seed=1, endpoint="common_100")
    assert row["excess"] == pytest.approx((0.4 + 0.6 + 0.4 + 0.2) / 4 - 0.15)
    row = _row(table, seed=2, endpoint="common_100")
    assert row["status"] == "ok" and row["excess"] == pytest.approx(0.6 - 0.2)
    assert _row(table, seed=2, endpoint="matched")["status"] == "unmatched"
    for seed in (3, 4):
        for endpoint in ("matched", "common_100"):
            row = _row(table, seed=seed, endpoint=endpoint)
            assert row["status"] == "diverged"
            assert pd.isna(row["excess"])
    assert str(table["update"].dtype) == "Int64"


def test_noise_floor_needs_both_kinds_of_pair() -> None:
    pairs, matches = _noise_floor_inputs()
    with pytest.raises(ValueError, match="same-order"):
        noise_floor_table({"ABC_BAC": pairs["ABC_BAC"]}, matches, common_endpoint=100)


def test_noise_floor_summary_counts_and_means() -> None:
    per_seed = noise_floor_table(*_noise_floor_inputs(), common_endpoint=100)
    table = noise_floor_summary(per_seed, BOOTSTRAP)
    pairs = {"h_ABC_BAC", "h_ABCr_BACr", "h_ABC_BACr", "h_ABCr_BAC", "h_ABC_ABCr", "h_BAC_BACr"}
    assert set(table["metric"]) == {"excess", "h_order", "h_floor"} | pairs
    assert list(table["metric"])[:3] == ["excess", "h_order", "h_floor"]
    row = _row(table, endpoint="common_100", metric="excess")
    assert row["n"] == 2 and row["mean"] == pytest.approx((0.25 + 0.4) / 2)
    assert (row["n_seeds"], row["n_unmatched"], row["n_diverged"]) == (4, 0, 2)
    assert not pd.isna(row["p_t"])  # the excess is signed: tested against zero
    row = _row(table, endpoint="matched", metric="excess")
    assert row["n"] == 1 and row["mean"] == pytest.approx(0.3)
    assert (row["n_seeds"], row["n_unmatched"], row["n_diverged"]) == (4, 1, 2)
    assert pd.isna(_row(table, endpoint="matched", metric="h_order")["p_t"])


# --------------------------------------------------------------------------- activation


def test_activation_delta_is_leaky_minus_relu_paired_by_seed() -> None:
    relu = _comparisons({(1, 100): 0.2, (2, 100): 0.3, (3, 100): 0.4})
    leaky = _comparisons({(1, 100): 0.5, (2, 100): 0.1, (3, 100): None})
    table = activation_summary(relu, leaky, [100], BOOTSTRAP)
    delta = _row(table, metric="delta_h_repr", update=100)
    assert delta["n"] == 2
    assert delta["mean"] == pytest.approx((0.3 - 0.2) / 2)
    assert (delta["n_pos"], delta["n_neg"]) == (1, 1)
    assert (delta["n_seeds"], delta["n_diverged_relu"], delta["n_diverged_leaky"]) == (3, 0, 1)
    assert _row(table, metric="h_repr_relu")["n"] == 3
    assert _row(table, metric="h_repr_relu")["mean"] == pytest.approx(0.3)
    assert _row(table, metric="h_repr_leaky_relu")["n"] == 2
    assert _row(table, metric="disagreement_pct_leaky_relu")["mean"] == pytest.approx(3.0)
    assert len(table) == 1 + 2 * len(studies.ACTIVATION_METRICS)


def test_activation_summary_one_block_per_update() -> None:
    relu = _comparisons({(1, 10): 0.2, (1, 20): 0.1, (2, 10): 0.4, (2, 20): 0.3})
    leaky = _comparisons({(1, 10): 0.3, (1, 20): 0.3, (2, 10): 0.4, (2, 20): 0.1})
    table = activation_summary(relu, leaky, [10, 20], BOOTSTRAP)
    assert _row(table, metric="delta_h_repr", update=10)["mean"] == pytest.approx(0.05)
    assert _row(table, metric="delta_h_repr", update=20)["mean"] == pytest.approx(0.0)


# --------------------------------------------------------------------------- learning rate


def _traces(verdicts: dict[float, list[bool]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"lr": lr, "finite": f} for lr, finite in verdicts.items() for f in finite],
        columns=["lr", "finite"],
    )


CANDIDATES = [0.05, 0.045, 0.04]


def test_select_rate_picks_highest_all_finite_candidate() -> None:
    traces = _traces({0.05: [True, False], 0.045: [True, True], 0.04: [True, True]})
    assert select_rate(CANDIDATES, traces) == 0.045
    # Candidate order in the config does not matter; the search goes from the top.
    assert select_rate(list(reversed(CANDIDATES)), traces) == 0.045
    assert select_rate(CANDIDATES, _traces({0.05: [True, True]})) == 0.05


def test_select_rate_stops_at_the_first_stable_or_untried_candidate() -> None:
    # A lower candidate is never chosen over a stable higher one...
    assert select_rate(CANDIDATES, _traces({0.05: [True], 0.045: [False], 0.04: [True]})) == 0.05
    # ...and the search stops at a candidate that was not traced.
    assert select_rate(CANDIDATES, _traces({0.05: [False], 0.04: [True]})) is None


def test_select_rate_none_when_nothing_is_stable() -> None:
    traces = _traces({0.05: [False], 0.045: [True, False], 0.04: [False, False]})
    assert select_rate(CANDIDATES, traces) is None
    assert select_rate(CANDIDATES, _traces({})) is None


def test_select_rate_matches_rates_read_back_from_text() -> None:
    traces = _traces({0.05: [False], 0.045 + 1e-12: [True]})
    assert select_rate(CANDIDATES, traces) == 0.045


def test_lr_search_table() -> None:
    traces = _traces({0.05: [True, False], 0.045: [True, True]})
    table = lr_search_table(CANDIDATES, traces, 0.045)
    assert table["lr"].tolist() == CANDIDATES
    assert table["tried"].tolist() == [True, True, False]
    assert table["n_traces"].tolist() == [2, 2, 0]
    assert table["n_finite"].tolist() == [1, 2, 0]
    assert table["all_finite"].tolist() == [False, True, False]
    assert table["selected"].tolist() == [False, True, False]
    none = lr_search_table(CANDIDATES, traces, None)
    assert not none["selected"].any()


# --------------------------------------------------------------------------- probes


TOST = {"tost_budget": 500, "tost_margin_pp": 0.5, "tost_alpha": 0.05}
EXTRA = (1777, 2777, 3777, 4777)
POOLED = "777+1777+2777+3777+4777"


def _probe_rows() -> pd.DataFrame:
    """Raw probe rows (as probe_pair writes them, with the model seed) of 4 model seeds: budgets
    25 and 500 with the primary probe seed, 50 with the extra probe seeds too; 2,000 test images.
    Differences in images: 25 -> +20, -20, +40, 0 (1, -1, 2, 0 pp); 500 -> +2, -2, +4, 0
    (0.1, -0.1, 0.2, 0 pp); 50 -> primary +1, +1, -1, 0; extras +1 each for seeds 1 and 2."""
    per_budget = {25: (20, -20, 40, 0), 500: (2, -2, 4, 0), 50: (1, 1, -1, 0)}
    base = {25: 1600, 50: 1700, 500: 1900}  # correct_BAC: 80, 85 and 95%
    rows = []
    for index, seed in enumerate((1, 2, 3, 4)):
        for budget in (25, 50, 500):
            for probe_seed in (777, *EXTRA) if budget == 50 else (777,):
                diff = per_budget[budget][index] if probe_seed == 777 else int(seed <= 2)
                bac = base[budget] + seed  # a different accuracy level for every seed
                rows.append(
                    {
                        "seed": seed,
                        "budget": budget,
                        "probe_seed": probe_seed,
                        "correct_ABC": bac + diff,
                        "correct_BAC": bac,
                        "n_test": 2000,
                    }
                )
    return pd.DataFrame(rows)


def _probe_per_seed() -> pd.DataFrame:
    return per_seed_differences(_probe_rows(), 777)


def test_probes_summary_per_budget() -> None:
    table = probes_summary(_probe_per_seed(), TOST, BOOTSTRAP)
    assert table["budget"].tolist() == [25, 50, 50, 500]
    row = _row(table, budget=25)
    assert row["metric"] == "probe_acc_diff_pp"
    assert row["probe_seeds"] == "777"
    assert (row["n"], row["n_seeds"], row["n_probe_seeds"]) == (4, 4, 1)
    assert row["mean"] == 0.5
    assert row["acc_ABC_mean"] == pytest.approx(80.5 + 2.5 / 20)
    assert row["acc_BAC_mean"] == pytest.approx(80.0 + 2.5 / 20)
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (2, 1, 1)


def test_probes_summary_columns_are_fixed() -> None:
    expected = [
        "budget",
        "probe_seeds",
        "metric",
        "n_seeds",
        "n_probe_seeds",
        "acc_ABC_mean",
        "acc_BAC_mean",
        "n_undefined",
        "n",
        "mean",
        "sd",
        "ci_low",
        "ci_high",
        "t",
        "p_t",
        "p_wilcoxon",
        "wilcoxon_method",
        "n_pos",
        "n_neg",
        "n_zero",
        "d_z",
        "tost_margin_pp",
        "tost_p",
        "tost_ci_low",
        "tost_ci_high",
        "tost_equivalent",
    ]
    assert list(probes_summary(_probe_per_seed(), TOST, BOOTSTRAP).columns) == expected
    assert studies.PROBE_SUMMARY_COLUMNS == expected
    # Without the TOST budget the TOST columns are still there, empty.
    other = probes_summary(_probe_per_seed(), {**TOST, "tost_budget": 100}, BOOTSTRAP)
    assert list(other.columns) == expected
    assert other[[c for c in expected if c.startswith("tost_")]].isna().all(axis=None)


def test_probes_summary_reports_the_primary_and_the_pooled_probe_seeds_at_50() -> None:
    table = probes_summary(_probe_per_seed(), TOST, BOOTSTRAP)
    assert table[["budget", "probe_seeds", "n_probe_seeds"]].values.tolist() == [
        [25, "777", 1],
        [50, "777", 1],
        [50, POOLED, 5],
        [500, "777", 1],
    ]
    primary = _row(table, budget=50, probe_seeds="777")
    # Primary probe seed: +1, +1, -1, 0 images of 2,000.
    expected = paired_tests([Fraction(100 * d, 2000) for d in (1, 1, -1, 0)])
    assert primary["mean"] == expected.mean == 0.0125
    assert (primary["n_pos"], primary["n_neg"], primary["n_zero"]) == (2, 1, 1)
    assert primary["p_wilcoxon"] == expected.p_wilcoxon
    pooled = _row(table, budget=50, probe_seeds=POOLED)
    # Pooled over 5 probe seeds: (1 + 4) / 10,000, twice; -1 / 10,000; 0.
    expected = paired_tests([Fraction(100 * d, 10_000) for d in (5, 5, -1, 0)])
    assert pooled["mean"] == expected.mean
    assert pooled["t"] == expected.t
    assert pooled["p_wilcoxon"] == expected.p_wilcoxon
    assert pooled["wilcoxon_method"] == "exact"
    assert (pooled["n_pos"], pooled["n_neg"], pooled["n_zero"]) == (2, 1, 1)


def test_probes_summary_works_from_exact_counts() -> None:
    # One image of 2,000 either way at four accuracy levels: as float accuracy differences the
    # four |d| are not all equal and the mean is not zero; from the counts they tie exactly.
    per_seed = per_seed_differences(
        pd.DataFrame(
            {
                "seed": [1, 2, 3, 4],
                "budget": [100] * 4,
                "probe_seed": [777] * 4,
                "correct_ABC": [1503, 1501, 1700, 1900],
                "correct_BAC": [1502, 1500, 1701, 1901],
                "n_test": [2000] * 4,
            }
        ),
        777,
    )
    floats = [100 * a / 2000 - 100 * b / 2000 for a, b in ((1503, 1502), (1501, 1500))]
    assert floats[0] != floats[1]
    assert per_seed["diff_pp"].tolist() == [0.05, 0.05, -0.05, -0.05]
    row = probes_summary(per_seed, TOST, BOOTSTRAP).iloc[0]
    assert row["mean"] == 0.0 and row["t"] == 0.0 and row["d_z"] == 0.0
    assert (row["n_pos"], row["n_neg"], row["n_zero"]) == (2, 2, 0)
    # All four |d| tie: W+ = 5 is the centre of the exact null, so p = 1.
    assert row["p_wilcoxon"] == 1.0 and row["wilcoxon_method"] == "exact"


def test_probes_summary_tost_only_at_the_tost_budget() -> None:
    table = probes_summary(_probe_per_seed(), TOST, BOOTSTRAP)
    tost_columns = ["tost_margin_pp", "tost_p", "tost_ci_low", "tost_ci_high", "tost_equivalent"]
    assert set(tost_columns) <= set(table.columns)
    assert table.loc[table["budget"] != 500, tost_columns].isna().all(axis=None)
    row = _row(table, budget=500)
    expected = tost(np.array([0.1, -0.1, 0.2, 0.0]), 0.5, alpha=0.05)
    assert row["tost_margin_pp"] == 0.5
    assert row["tost_p"] == pytest.approx(expected.p)
    assert (row["tost_ci_low"], row["tost_ci_high"]) == pytest.approx(
        (expected.ci_low, expected.ci_high)
    )
    assert bool(row["tost_equivalent"]) == expected.equivalent


def test_per_seed_differences_primary_and_pooled_rows() -> None:
    out = _probe_per_seed()
    assert out.columns.tolist() == [
        "seed",
        "budget",
        "probe_seeds",
        "n_probe_seeds",
        "correct_ABC",
        "correct_BAC",
        "n_test",
        "acc_ABC",
        "acc_BAC",
        "diff_pp",
    ]
    assert out[out["seed"] == 1][["budget", "probe_seeds"]].values.tolist() == [
        [25, "777"],
        [50, "777"],
        [50, POOLED],
        [500, "777"],
    ]
    pooled = out[(out["seed"] == 1) & (out["probe_seeds"] == POOLED)].iloc[0]
    # Sums over the 5 probe seeds, out of 5 x 2,000 predictions.
    assert (pooled["correct_ABC"], pooled["correct_BAC"], pooled["n_test"]) == (
        5 * 1701 + 5,
        5 * 1701,
        10_000,
    )
    assert pooled["diff_pp"] == 0.05
    assert pooled["acc_BAC"] == 85.05
    for column in ("correct_ABC", "correct_BAC", "n_test", "n_probe_seeds"):
        assert pd.api.types.is_integer_dtype(out[column])


def test_per_seed_differences_pooled_results_tie_exactly() -> None:
    # Seed 1: +1, +2, 0, 0, +2 images over the probe seeds; seed 2: +5, 0, 0, 0, 0, at other
    # accuracy levels. The same pooled difference (5 of 10,000) must be the same number.
    rows = pd.DataFrame(
        {
            "seed": [1] * 5 + [2] * 5,
            "budget": [50] * 10,
            "probe_seed": [777, *EXTRA] * 2,
            "correct_ABC": [1801, 1702, 1600, 1900, 1552, 1405, 1300, 1200, 1100, 1000],
            "correct_BAC": [1800, 1700, 1600, 1900, 1550, 1400, 1300, 1200, 1100, 1000],
            "n_test": [2000] * 10,
        }
    )
    pooled = per_seed_differences(rows, 777).query("n_probe_seeds == 5")
    assert pooled["diff_pp"].tolist() == [0.05, 0.05]
    row = _row(probes_summary(per_seed_differences(rows, 777), TOST, BOOTSTRAP), probe_seeds=POOLED)
    assert row["sd"] == 0.0 and row["p_wilcoxon"] == 0.5


def test_per_seed_differences_checks_its_input() -> None:
    rows = _probe_rows()
    with pytest.raises(ValueError, match="duplicate"):
        per_seed_differences(pd.concat([rows, rows.iloc[:1]]), 777)
    with pytest.raises(ValueError, match="correct_BAC"):
        per_seed_differences(rows.drop(columns="correct_BAC"), 777)
    with pytest.raises(ValueError, match="probe seed 778"):
        per_seed_differences(rows, 778)
    with pytest.raises(ValueError, match="integer"):
        per_seed_differences(rows.assign(correct_ABC=rows["correct_ABC"] + 0.5), 777)
    with pytest.raises(ValueError, match="between 0 and n_test"):
        per_seed_differences(rows.assign(n_test=1000), 777)
    uneven = rows.copy()
    uneven.loc[uneven["probe_seed"] == 1777, "n_test"] = 1999
    with pytest.raises(ValueError, match="n_test differs"):
        per_seed_differences(uneven, 777)


def test_probe_figure_plots_one_row_per_seed_and_budget() -> None:
    # The per-seed table has two rows at 50 per model seed; the figure plots the pooled one.
    from workflow import figures

    per_seed = _probe_per_seed()
    fig = figures.probe_differences(per_seed, 0.5, Bootstrap(200, 1, 0.95))
    (points,) = [c for c in fig.axes[0].collections if c.get_gid() == "seed"]
    offsets = points.get_offsets()
    assert len(offsets) == 4 * 3
    pooled = per_seed[per_seed["n_probe_seeds"] == 5]["diff_pp"]
    plotted_at_50 = sorted(y for x, y in offsets if 30 < x < 80)
    assert plotted_at_50 == sorted(pooled)
