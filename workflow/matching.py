"""Behavioural matching: the earliest C checkpoint at which a pair behaves alike.

A checkpoint matches when the accuracy gap is at most ``max_gap_pp`` percentage points and both
accuracies are at least ``min_accuracy_pct``. Gaps are compared with a 1e-9 pp tolerance so that
a gap of exactly the threshold (e.g. 20 of 10,000 images = 0.2 pp) is not lost to float rounding.

The protocol's rule is one ``MatchRule`` (``MatchRule.protocol``): every checkpoint counts and
one matched checkpoint suffices. The sensitivity study (``workflow.sensitivity``) varies the
rule's parts; both read matches through ``select_matches_by_rule``, so the rule exists once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

TOLERANCE_PP = 1e-9
MATCH_COLUMNS = ["seed", "status", "matched_update"]
REQUIRED = ("seed", "update", "pair_status", "acc_gap_pp", "acc_ABC_pct", "acc_BAC_pct")


@dataclass(frozen=True)
class MatchRule:
    """When a pair counts as behaviourally matched.

    ``max_gap_pp`` and ``min_accuracy_pct`` are the thresholds of ``is_matched``.
    ``grid_every`` keeps only the existing checkpoints whose update is a multiple of it (None
    keeps all): would a study that saved fewer checkpoints match later? ``persistence`` is how
    many consecutive kept checkpoints must match, the matched update being the first: is a
    match a momentary dip of the gap or a settled state?
    """

    max_gap_pp: float
    min_accuracy_pct: float
    grid_every: int | None
    persistence: int

    @classmethod
    def protocol(cls, max_gap_pp: float, min_accuracy_pct: float) -> MatchRule:
        """The protocol's rule: every checkpoint, the first match."""
        return cls(max_gap_pp, min_accuracy_pct, None, 1)

    def __post_init__(self) -> None:
        if self.grid_every is not None and (
            not isinstance(self.grid_every, int | np.integer) or self.grid_every < 1
        ):
            raise ValueError(
                f"grid_every must be None or a positive integer, not {self.grid_every}"
            )
        if not isinstance(self.persistence, int | np.integer) or self.persistence < 1:
            raise ValueError(f"persistence must be a positive integer, not {self.persistence}")


def is_matched(row: pd.Series | dict, max_gap_pp: float, min_accuracy_pct: float) -> bool:
    return bool(
        row["acc_gap_pp"] <= max_gap_pp + TOLERANCE_PP
        and row["acc_ABC_pct"] >= min_accuracy_pct - TOLERANCE_PP
        and row["acc_BAC_pct"] >= min_accuracy_pct - TOLERANCE_PP
    )


def check_comparisons(comparisons: pd.DataFrame, metrics: Sequence[str] = ()) -> None:
    """Refuse a frame that cannot be matched unambiguously: a missing column, or a checkpoint
    of a seed given twice (which row would count?)."""
    missing = [c for c in (*REQUIRED, *metrics) if c not in comparisons.columns]
    if missing:
        raise ValueError(f"the comparison frame lacks columns {missing}")
    repeated = comparisons.duplicated(["seed", "update"])
    if repeated.any():
        pairs = comparisons.loc[repeated, ["seed", "update"]].values.tolist()
        raise ValueError(f"(seed, update) pairs given more than once: {pairs}")


def kept_checkpoints(group: pd.DataFrame, grid_every: int | None) -> pd.DataFrame:
    """One seed's rows on the rule's grid, in update order; a grid only ever drops checkpoints,
    it never invents one that was not saved."""
    group = group.sort_values("update")
    if grid_every is None:
        return group
    return group[group["update"] % grid_every == 0]


def first_persistent_match(group: pd.DataFrame, rule: MatchRule) -> int | None:
    """The earliest kept update that starts ``rule.persistence`` consecutive matched kept
    checkpoints. Matches cut short by the last checkpoint do not count: their persistence is
    never observed."""
    kept = kept_checkpoints(group, rule.grid_every)
    hits = [is_matched(row, rule.max_gap_pp, rule.min_accuracy_pct) for _, row in kept.iterrows()]
    updates = kept["update"].tolist()
    for start in range(len(hits) - rule.persistence + 1):
        if all(hits[start : start + rule.persistence]):
            return int(updates[start])
    return None


def select_matches_by_rule(comparisons: pd.DataFrame, rule: MatchRule) -> pd.DataFrame:
    """One row per seed: ``status`` in {matched, unmatched, diverged} and ``matched_update``.

    ``comparisons`` has one row per (seed, update) with a ``pair_status`` column. A seed with a
    diverged run is ``diverged`` whatever the grid, judged on all its checkpoints, so neither
    its surviving checkpoints nor a coarse grid can make it matched.
    """
    check_comparisons(comparisons)
    rows = []
    for seed, group in comparisons.groupby("seed", sort=True):
        if (group["pair_status"] != "ok").any():
            status, update = "diverged", pd.NA
        else:
            found = first_persistent_match(group, rule)
            status, update = ("unmatched", pd.NA) if found is None else ("matched", found)
        rows.append({"seed": seed, "status": status, "matched_update": update})
    return pd.DataFrame(rows, columns=MATCH_COLUMNS).astype({"matched_update": "Int64"})


def select_matches(
    comparisons: pd.DataFrame, max_gap_pp: float, min_accuracy_pct: float
) -> pd.DataFrame:
    """The matches under the protocol's rule (``select_matches_by_rule``'s format)."""
    return select_matches_by_rule(comparisons, MatchRule.protocol(max_gap_pp, min_accuracy_pct))
