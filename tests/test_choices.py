"""The sensitivity table in words: a sentence per reading, whatever the numbers show."""

from __future__ import annotations

import pandas as pd
import pytest

from workflow.choices import choices_text, reading
from workflow.matching import MatchRule
from workflow.sensitivity import rule_name, sensitivity_summary
from workflow.stats import Bootstrap

BOOTSTRAP = Bootstrap(resamples=2000, seed=0, level=0.95)
MATCHING = {"max_accuracy_gap_pp": 0.2, "min_accuracy_pct": 97.0}
ALPHA = 0.05


def _arm(h_repr: list[float], updates: list[int], h_floor: float | None = None) -> pd.DataFrame:
    seeds = range(1, len(h_repr) + 1)
    table = pd.DataFrame(
        {"seed": seeds, "endpoint": "matched", "update": updates, "status": "ok", "h_repr": h_repr}
    )
    for seed, update in zip(seeds, updates, strict=True):
        if update < 0:
            table.loc[table["seed"] == seed, ["status", "update", "h_repr"]] = [
                "unmatched",
                pd.NA,
                float("nan"),
            ]
    return table if h_floor is None else table.assign(h_floor=h_floor)


def _summary(arms: dict[str, dict[str, pd.DataFrame]]) -> pd.DataFrame:
    return sensitivity_summary(arms, "default", BOOTSTRAP)[0]


def test_each_reading_says_whether_it_moves_h_repr() -> None:
    default = _arm([0.10, 0.12, 0.14, 0.16], [500, 500, 750, 750], h_floor=0.05)
    summary = _summary(
        {
            "variant": {
                "default": default,
                "raw_input": _arm([0.20, 0.23, 0.24, 0.27], [1000, 1000, 1250, 1250]),
                "fixed_c_order": _arm([0.11, 0.11, 0.15, 0.15], [500, 500, 750, -1]),
            }
        }
    )
    text = choices_text(summary, MATCHING, ALPHA)
    assert text.startswith("Of 2 readings, 1 moves H_repr at some endpoint")
    assert ": raw pixels in [0, 1] instead of the MNIST mean/std normalisation." in text
    assert "noise floor at the matched checkpoint is 0.0500" in text
    raw, fixed = text.split("\n")[2:]
    assert "(4 of 4 seeds) H_repr rises (0.1050 [" in raw
    # Four seeds all the same way: the Wilcoxon test's smallest p is 0.125 > 0.05.
    assert "the Wilcoxon test (p = 0.12) does not reject at the 5% level)" in raw
    assert "It matches 4 of 4 seeds (default: 4), 500 updates later than the default" in raw
    assert "(3 of 4 seeds) H_repr does not move detectably" in fixed
    assert "It matches 3 of 4 seeds (default: 4), at the default's update" in fixed


def test_one_seed_or_none_is_not_judged() -> None:
    default = _arm([0.10, 0.12], [500, -1])
    summary = _summary(
        {"matching": {"default": default, "strict": _arm([0.2, 0.3], [-1, -1])}}
        | {"variant": {"default": default, "raw_input": _arm([0.4, 0.5], [500, 500])}}
    )
    text = choices_text(summary, MATCHING, ALPHA)
    assert "Of 2 readings, 0 move H_repr" in text
    assert "H_repr cannot be compared (no seed has a value under both)" in text
    assert "is known for one seed only (0.3000), too few to judge" in text


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        (MatchRule(0.1, 97.0, None, 1), "an accuracy gap of at most 0.1 pp (default 0.2)"),
        (MatchRule(0.2, 97.0, 2500, 1), "only the checkpoints at multiples of 2,500 updates"),
        (MatchRule(0.2, 97.0, None, 2), "a match that holds at 2 consecutive checkpoints"),
        (MatchRule(0.2, 90.0, None, 1), "both accuracies at least 90% (default 97%)"),
    ],
)
def test_a_matching_rule_is_named_by_what_it_changes(rule: MatchRule, words: str) -> None:
    assert reading("matching", rule_name(rule), MATCHING) == f"Matching with {words}"


def test_a_variant_added_by_config_is_named_by_its_key() -> None:
    assert reading("variant", "c_subset", MATCHING) == (
        "The variant `c_subset` (config `variants.c_subset`)"
    )
