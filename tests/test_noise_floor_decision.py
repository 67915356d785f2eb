"""The noise floor's pre-registered decision rule and the trajectory of the excess."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from workflow.decision import (
    INCONCLUSIVE,
    INDISTINGUISHABLE,
    LARGER,
    SMALLER,
    decide,
    detectable_excess,
)
from workflow.noise_floor import noise_floor_decision, per_seed_trajectory, trajectory_summary
from workflow.stats import Bootstrap

FLOOR = np.full(50, 0.15)  # margin 0.015 at margin_rel 0.1


def _excess(mean: float, sd: float, n: int = 50) -> np.ndarray:
    """Values with exactly this mean and sample SD."""
    z = np.random.default_rng(7).normal(size=n)
    z = (z - z.mean()) / z.std(ddof=1)
    return mean + sd * z


@pytest.mark.parametrize(
    ("mean", "sd", "verdict"),
    [
        (0.03, 0.01, LARGER),
        (-0.03, 0.01, SMALLER),
        (0.004, 0.012, INDISTINGUISHABLE),
        (0.012, 0.03, INCONCLUSIVE),
    ],
)
def test_each_verdict_is_reached_by_the_data_it_describes(mean, sd, verdict):
    found = decide(_excess(mean, sd), FLOOR, 0.1, 0.05, 0.8)
    assert found.margin == pytest.approx(0.015)
    assert found.verdict == verdict
    inside = -found.margin < found.ci_low and found.ci_high < found.margin
    assert (verdict == INDISTINGUISHABLE) == inside


def test_a_significant_excess_inside_the_margin_is_indistinguishable_not_larger():
    """Detectably above zero, yet smaller than a tenth of the floor: noise, by the rule."""
    d = _excess(0.004, 0.006)
    assert sps.ttest_1samp(d, 0).pvalue < 0.05
    assert decide(d, FLOOR, 0.1, 0.05, 0.8).verdict == INDISTINGUISHABLE


def test_the_detectable_excess_has_the_stated_power():
    sd, n = 0.0117, 20
    delta = detectable_excess(sd, n, 0.05, 0.8)
    critical = sps.t.ppf(0.975, n - 1)
    shift = delta / (sd / math.sqrt(n))
    power = sps.nct.sf(critical, n - 1, shift) + sps.nct.cdf(-critical, n - 1, shift)
    assert power == pytest.approx(0.8, abs=1e-9)
    assert detectable_excess(sd, 50, 0.05, 0.8) < delta  # more seeds, smaller excess
    assert math.isnan(detectable_excess(sd, 1, 0.05, 0.8))
    # Two or three seeds (the small config): scipy's lower-tail cdf is nan out there.
    assert 0 < detectable_excess(sd, 3, 0.05, 0.8) < detectable_excess(sd, 2, 0.05, 0.8)
    assert math.isnan(detectable_excess(0.0, 20, 0.05, 0.8))


def test_the_decision_table_marks_the_primary_endpoint():
    rows = []
    for endpoint in ("matched", "common_10000"):
        for seed, value in enumerate(_excess(0.003, 0.01, 20)):
            rows.append(
                {
                    "seed": seed,
                    "endpoint": endpoint,
                    "status": "ok",
                    "excess": value,
                    "h_floor": 0.15,
                }
            )
    rows.append({"seed": 99, "endpoint": "matched", "status": "unmatched"})
    rule = {"margin_rel": 0.1, "alpha": 0.05, "power": 0.8}
    table = noise_floor_decision(pd.DataFrame(rows), rule, "common_10000")
    assert table.set_index("endpoint")["primary"].to_dict() == {
        "matched": False,
        "common_10000": True,
    }
    assert (table["n"] == 20).all()


def _square(updates=(0, 250, 500), diverged_seed=None) -> dict[str, pd.DataFrame]:
    """Each seed's six pairs: order pairs at 0.2 + seed offset, same-order pairs at 0.15."""
    pairs = {}
    for pair in ("ABC_BAC", "ABCr_BACr", "ABC_BACr", "ABCr_BAC", "ABC_ABCr", "BAC_BACr"):
        order = pair.split("_")[0].rstrip("r") != pair.split("_")[1].rstrip("r")
        rows = [
            {
                "seed": seed,
                "update": update,
                "h_repr": (0.2 + seed / 1e4) if order else 0.15,
                "pair_status": "nan" if seed == diverged_seed and pair == "ABC_ABCr" else "ok",
            }
            for seed in (101, 202, 303)
            for update in updates
        ]
        pairs[pair] = pd.DataFrame(rows)
    return pairs


def test_the_trajectory_takes_order_and_same_order_means_per_seed_and_update():
    per_seed, n_diverged = per_seed_trajectory(_square())
    assert n_diverged == 0 and len(per_seed) == 9
    row = per_seed[(per_seed["seed"] == 202) & (per_seed["update"] == 250)].iloc[0]
    assert row["h_order"] == pytest.approx(0.2202)
    assert row["h_floor"] == pytest.approx(0.15)
    assert row["excess"] == pytest.approx(0.0702)
    summary = trajectory_summary(per_seed, n_diverged, Bootstrap(200, 1, 0.95))
    assert len(summary) == 3 * 3
    excess = summary[summary["metric"] == "excess"]
    assert (excess["n"] == 3).all() and excess["p_t"].notna().all()


def test_a_diverged_seed_is_left_out_of_every_update_and_counted():
    per_seed, n_diverged = per_seed_trajectory(_square(diverged_seed=303))
    assert n_diverged == 1 and set(per_seed["seed"]) == {101, 202}


def test_pairs_that_cover_other_checkpoints_are_refused():
    pairs = _square()
    pairs["BAC_BACr"] = pairs["BAC_BACr"][pairs["BAC_BACr"]["update"] != 500]
    with pytest.raises(ValueError, match="same checkpoints"):
        per_seed_trajectory(pairs)
