"""Matching sensitivity: does the matched endpoint, and H_repr there, hinge on the matching rule?

The protocol matches a seed at its earliest checkpoint whose accuracy gap is within a tolerance
with both accuracies high enough (``workflow.matching``). That rule has three arbitrary parts:
the tolerance, the checkpoint schedule it searches and that one checkpoint suffices. Each is a
parameter of a ``workflow.matching.MatchRule``, so a study can rerun matching post hoc, from
the comparison tables alone, under other rules and see whether its conclusion moves:

    rules = one_at_a_time(MatchRule.protocol(0.2, 97.0), [0.1, 0.3], [1000, 2500], [2])
    values = matched_values(comparisons, rules, METRICS)
    arms = {name: rule_endpoint_table(values[values["rule"] == name]) for name in rules}
    summary, per_seed = sensitivity_summary({"matching": arms}, default_name, bootstrap)

``comparisons`` is a seed-by-update comparison frame of the base segment (what
``workflow.matching.select_matches`` receives). Torch-free.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from workflow.matching import (
    MATCH_COLUMNS,
    MatchRule,
    check_comparisons,
    select_matches_by_rule,
)
from workflow.stats import Bootstrap
from workflow.summary import STATISTICS, stat_row, status_counts


def rule_name(rule: MatchRule) -> str:
    """A label that names every parameter losslessly, so distinct rules never share a name
    (e.g. ``gap0.2_acc97.0_every1000_persist2``)."""
    grid = "all" if rule.grid_every is None else f"every{rule.grid_every}"
    return (
        f"gap{float(rule.max_gap_pp)!r}_acc{float(rule.min_accuracy_pct)!r}_{grid}"
        f"_persist{rule.persistence}"
    )


def one_at_a_time(
    base: MatchRule,
    max_gaps_pp: Sequence[float],
    grids: Sequence[int | None],
    persistences: Sequence[int],
) -> dict[str, MatchRule]:
    """``base`` first, then the variants that change one of its parameters each, so that any
    difference from ``base`` is attributable to a single choice; duplicates are dropped."""
    variants = [base]
    variants += [replace(base, max_gap_pp=gap) for gap in max_gaps_pp]
    variants += [replace(base, grid_every=every) for every in grids]
    variants += [replace(base, persistence=n) for n in persistences]
    return {rule_name(rule): rule for rule in dict.fromkeys(variants)}


def matched_values(
    comparisons: pd.DataFrame, rules: Mapping[str, MatchRule], metrics: Sequence[str]
) -> pd.DataFrame:
    """One row per (rule, seed): status, matched update and each metric there (NaN unless
    matched). Long and tidy so that downstream statistics can pair a rule's values with another
    rule's by seed."""
    check_comparisons(comparisons, metrics)
    at = comparisons.set_index(["seed", "update"])
    frames = []
    for name, rule in rules.items():
        matches = select_matches_by_rule(comparisons, rule)
        for metric in metrics:
            matches[metric] = [
                float(at.at[(seed, int(update)), metric]) if status == "matched" else np.nan
                for seed, status, update in matches[MATCH_COLUMNS].itertuples(index=False)
            ]
        frames.append(matches.assign(rule=name))
    if not frames:
        return pd.DataFrame(columns=["rule", *MATCH_COLUMNS, *metrics])
    return pd.concat(frames, ignore_index=True)[["rule", *MATCH_COLUMNS, *metrics]]


# --- the sensitivity study's table: every reading next to the default, seed by seed ---------

# What a reading of the protocol could move: the residue, and the behaviour it is matched on.
METRICS = (
    "h_repr",
    "disagreement_pct",
    "disagreement_probe_pct",
    "either_wrong_pct",
    "both_wrong_pct",
    "both_wrong_differently_pct",
    "acc_ABC_pct",
    "acc_BAC_pct",
    "acc_gap_pp",
)
# Described only where a table carries them: the default runs' same-order SGD noise (the noise
# floor study's H between twins that differ only in data order), the yardstick for a variant's
# change of h_repr.
NOISE_FLOOR = ("h_floor",)
# The pair studies' summary columns (workflow.summary), after the labels of an arm.
COLUMNS = [
    *("analysis", "arm", "contrast", "endpoint", "metric", "n_seeds", "n_unmatched"),
    *("n_diverged", *STATISTICS),
]


def rule_endpoint_table(values: pd.DataFrame) -> pd.DataFrame:
    """``matched_values``' long frame in the per-seed endpoint layout of the pair studies
    (``workflow.summary.endpoint_table``): arm = rule, endpoint "matched", status ok when
    matched."""
    table = values.rename(columns={"rule": "arm", "matched_update": "update"}).copy()
    table["status"] = table["status"].replace({"matched": "ok"})
    table.insert(2, "endpoint", "matched")
    return table


def _arm_rows(analysis: str, arm: str, table: pd.DataFrame, bootstrap: Bootstrap) -> list[dict]:
    rows = []
    floor = [metric for metric in NOISE_FLOOR if metric in table]
    for endpoint, group in table.groupby("endpoint", sort=False):
        ok, counts = group[group["status"] == "ok"], status_counts(group)
        for metric in (*METRICS, *floor, "update"):
            values = ok[metric] if metric in ok else []
            labels = {"analysis": analysis, "arm": arm, "contrast": "", "endpoint": endpoint}
            rows.append(stat_row(values, bootstrap, False, **labels, metric=metric, **counts))
    return rows


def _contrast_rows(
    analysis: str, arm: str, table: pd.DataFrame, default: pd.DataFrame, bootstrap: Bootstrap
) -> list[dict]:
    """Per seed, the arm minus the default at each endpoint both reach (seeds ok in both)."""
    rows = []
    for endpoint, group in table.groupby("endpoint", sort=False):
        mine = group[group["status"] == "ok"].set_index("seed")
        base = default[(default["endpoint"] == endpoint) & (default["status"] == "ok")]
        base = base.set_index("seed")
        both = mine.index.intersection(base.index)
        for metric in (*METRICS, "update"):
            if metric not in mine or metric not in base:
                continue
            diff = mine.loc[both, metric].astype(float) - base.loc[both, metric].astype(float)
            labels = {"analysis": analysis, "arm": arm, "contrast": "minus_default"}
            rows.append(
                stat_row(diff, bootstrap, True, **labels, endpoint=endpoint, metric=metric)
                | {"n_seeds": len(group)}
            )
    return rows


def sensitivity_summary(
    arms: Mapping[str, Mapping[str, pd.DataFrame]], default: str, bootstrap: Bootstrap
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, per_seed). ``arms``: analysis -> arm -> per-seed endpoint table (seed,
    endpoint, update, status, metrics), each analysis holding its ``default`` arm. Every arm is
    described; every other arm is also compared with the default seed by seed."""
    rows, tables = [], []
    for analysis, by_arm in arms.items():
        for arm, table in by_arm.items():
            rows += _arm_rows(analysis, arm, table, bootstrap)
            if arm != default:
                rows += _contrast_rows(analysis, arm, table, by_arm[default], bootstrap)
            tables.append(table.assign(analysis=analysis, arm=arm))
    summary = pd.DataFrame(rows).reindex(columns=COLUMNS)
    per_seed = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
    keep = ["analysis", "arm", "seed", "endpoint", "update", "status"]
    metrics = [m for m in (*METRICS, *NOISE_FLOOR) if m in per_seed]
    return summary, per_seed.reindex(columns=[*keep, *metrics])


def with_noise_floor(default: pd.DataFrame, noise_floor: pd.DataFrame) -> pd.DataFrame:
    """The default arm's per-seed table with each seed's noise floor at the same endpoint
    label (NaN where the noise floor study lacks the seed or the endpoint). The floor's matched
    endpoint is its own study's, matched over all four runs, so it may lie at another update."""
    floor = noise_floor.loc[noise_floor["status"] == "ok", ["seed", "endpoint", *NOISE_FLOOR]]
    if floor.duplicated(["seed", "endpoint"]).any():
        raise ValueError("the noise floor table gives a (seed, endpoint) more than once")
    return default.merge(floor, on=["seed", "endpoint"], how="left", validate="many_to_one")
