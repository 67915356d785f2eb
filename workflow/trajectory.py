"""The order effect and the noise floor at every C checkpoint, not only at the two endpoints.

Per seed and update, from the noise floor's square of pairs (``workflow.studies``): the order
effect ``h_order`` (mean H_repr of the order pairs), the floor ``h_floor`` (mean of the
same-order pairs) and ``excess`` = h_order - h_floor. Over seeds, at each update: n, mean,
bootstrap CI and, for the excess, the paired tests against zero. A seed any of whose pairs
diverged is left out of every update and counted in ``n_diverged``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from workflow.stats import Bootstrap
from workflow.studies import is_order_pair
from workflow.summary import stat_row

METRICS = ("h_order", "h_floor", "excess")


def per_seed_trajectory(pairs: Mapping[str, pd.DataFrame]) -> tuple[pd.DataFrame, int]:
    """(seed, update, h_order, h_floor, excess) for every seed whose pairs are all finite, and
    how many seeds were left out for divergence."""
    order = [pair for pair in pairs if is_order_pair(pair)]
    floor = [pair for pair in pairs if not is_order_pair(pair)]
    if not order or not floor:
        raise ValueError(f"the square needs order and same-order pairs, got {list(pairs)}")
    diverged = set().union(*(set(t.loc[t["pair_status"] != "ok", "seed"]) for t in pairs.values()))
    h = {
        pair: table[~table["seed"].isin(diverged)].set_index(["seed", "update"])["h_repr"]
        for pair, table in pairs.items()
    }
    frame = pd.DataFrame(h)
    if frame.isna().any().any():
        missing = frame[frame.isna().any(axis=1)].index[:3].tolist()
        raise ValueError(f"the square's pairs do not cover the same checkpoints: {missing}")
    table = pd.DataFrame(
        {
            "h_order": frame[order].mean(axis=1),
            "h_floor": frame[floor].mean(axis=1),
        }
    )
    table["excess"] = table["h_order"] - table["h_floor"]
    return table.reset_index().sort_values(["seed", "update"], ignore_index=True), len(diverged)


def trajectory_summary(
    per_seed: pd.DataFrame, n_diverged: int, bootstrap: Bootstrap
) -> pd.DataFrame:
    """One row per (update, metric): n, mean, CI, sd, and paired tests for the excess."""
    rows = []
    for update, group in per_seed.groupby("update", sort=True):
        for metric in METRICS:
            labels = {"update": int(update), "metric": metric, "n_diverged": n_diverged}
            rows.append(stat_row(group[metric], bootstrap, metric == "excess", **labels))
    frame = pd.DataFrame(rows)
    first = ["update", "metric", "n", "n_diverged", "n_undefined", "mean", "ci_low", "ci_high"]
    return frame[first + [c for c in frame.columns if c not in first]].replace({np.inf: np.nan})


def matched_updates(matches: pd.DataFrame) -> pd.Series:
    """The matched checkpoints of a match table's matched seeds (the match window's extent)."""
    return matches.loc[matches["status"] == "matched", "matched_update"].astype(int)
