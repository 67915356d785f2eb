"""Behavioural matching: the earliest C checkpoint at which a pair behaves alike.

A checkpoint matches when the accuracy gap is at most ``max_gap_pp`` percentage points and both
accuracies are at least ``min_accuracy_pct``. Gaps are compared with a 1e-9 pp tolerance so that
a gap of exactly the threshold (e.g. 20 of 10,000 images = 0.2 pp) is not lost to float rounding.
"""

from __future__ import annotations

import pandas as pd

TOLERANCE_PP = 1e-9


def is_matched(row: pd.Series | dict, max_gap_pp: float, min_accuracy_pct: float) -> bool:
    return bool(
        row["acc_gap_pp"] <= max_gap_pp + TOLERANCE_PP
        and row["acc_ABC_pct"] >= min_accuracy_pct - TOLERANCE_PP
        and row["acc_BAC_pct"] >= min_accuracy_pct - TOLERANCE_PP
    )


def select_matches(
    comparisons: pd.DataFrame, max_gap_pp: float, min_accuracy_pct: float
) -> pd.DataFrame:
    """One row per seed: ``status`` in {matched, unmatched, diverged} and ``matched_update``.

    ``comparisons`` has one row per (seed, update) with a ``pair_status`` column; a seed with a
    diverged run is reported as diverged, never matched on its surviving checkpoints.
    """
    rows = []
    for seed, group in comparisons.groupby("seed", sort=True):
        group = group.sort_values("update")
        if (group["pair_status"] != "ok").any():
            rows.append({"seed": seed, "status": "diverged", "matched_update": pd.NA})
            continue
        hits = group[[is_matched(r, max_gap_pp, min_accuracy_pct) for _, r in group.iterrows()]]
        if hits.empty:
            rows.append({"seed": seed, "status": "unmatched", "matched_update": pd.NA})
        else:
            rows.append(
                {"seed": seed, "status": "matched", "matched_update": int(hits["update"].iloc[0])}
            )
    return pd.DataFrame(rows, columns=["seed", "status", "matched_update"]).astype(
        {"matched_update": "Int64"}
    )
