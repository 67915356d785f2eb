"""The noise floor study: the order effect against same-order SGD noise, per seed and endpoint,
at every C checkpoint (the trajectory), and the pre-registered verdict (``workflow.decision``).

A seed's four runs (S_ABC, S_BAC on stream 0 and on the replicate stream, marked r) give six
pairs: four order pairs and two same-order pairs. Per seed, ``h_order`` is the mean H_repr of
the order pairs, ``h_floor`` of the same-order pairs, ``excess`` their difference. A seed any of
whose pairs diverged is counted, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from workflow.decision import decide
from workflow.stats import Bootstrap
from workflow.studies import at_update
from workflow.summary import endpoints, stat_row, status_counts

TRAJECTORY_METRICS = ("h_order", "h_floor", "excess")


def is_order_pair(pair: str) -> bool:
    """Whether a pair name of the noise floor's square ("ABC_BACr": S_ABC on stream 0 and
    S_BAC on the replicate stream) joins the two orders, rather than one order's replicates."""
    first, second = pair.split("_")
    return first.rstrip("r") != second.rstrip("r")


def noise_floor_table(
    pairs: dict[str, pd.DataFrame], matches: pd.DataFrame, common_endpoint: int
) -> pd.DataFrame:
    """Per seed and endpoint: H_repr of every pair of the seed's square (``h_<pair>``), the
    order effect ``h_order`` (mean over the order pairs), the noise floor ``h_floor`` (mean
    over the same-order pairs) and ``excess`` = h_order - h_floor. The endpoints are the
    stream-0 pair's matched checkpoint and the common one, the same update for every pair."""
    order_pairs = [pair for pair in pairs if is_order_pair(pair)]
    floor_pairs = [pair for pair in pairs if not is_order_pair(pair)]
    if not order_pairs or not floor_pairs:
        raise ValueError(f"the square needs order and same-order pairs, got {list(pairs)}")
    rows = []
    for match in matches.itertuples(index=False):
        for endpoint, update in endpoints(match, common_endpoint):
            row = {"seed": match.seed, "endpoint": endpoint, "update": update}
            diverged = match.status == "diverged" or any(
                (t.loc[t["seed"] == match.seed, "pair_status"] != "ok").any()
                for t in pairs.values()
            )
            if diverged:
                row["status"] = "diverged"
            elif update is None or pd.isna(update):
                row["status"] = "unmatched"
            else:
                row["status"] = "ok"
                for pair, table in pairs.items():
                    row[f"h_{pair}"] = at_update(table, int(update), "h_repr")[match.seed]
                row["h_order"] = np.mean([row[f"h_{pair}"] for pair in order_pairs])
                row["h_floor"] = np.mean([row[f"h_{pair}"] for pair in floor_pairs])
                row["excess"] = row["h_order"] - row["h_floor"]
            rows.append(row)
    columns = ["seed", "endpoint", "update", "status", "excess", "h_order", "h_floor"]
    columns += [f"h_{pair}" for pair in pairs]
    return pd.DataFrame(rows).reindex(columns=columns).astype({"update": "Int64"})


def noise_floor_summary(per_seed: pd.DataFrame, bootstrap: Bootstrap) -> pd.DataFrame:
    """Statistics of the excess (paired tests against zero), the order effect, the floor and
    each pair of the square, per endpoint."""
    metrics = [column for column in per_seed.columns if column in ("excess", "h_order")]
    metrics += [
        column for column in per_seed.columns if column.startswith("h_") and column not in metrics
    ]
    rows = []
    for endpoint, group in per_seed.groupby("endpoint", sort=False):
        ok, counts = group[group["status"] == "ok"], status_counts(group)
        for metric in metrics:
            rows.append(
                stat_row(
                    ok[metric],
                    bootstrap,
                    signed=metric == "excess",
                    endpoint=endpoint,
                    metric=metric,
                    **counts,
                )
            )
    return pd.DataFrame(rows)


def noise_floor_decision(per_seed: pd.DataFrame, rule: dict, primary: str) -> pd.DataFrame:
    """The pre-registered verdict (``workflow.decision``) at each endpoint of the noise floor's
    per-seed table, with its power line; ``primary`` names the endpoint the verdict is read at,
    ``rule`` is ``studies.noise_floor.decision``."""
    rows = []
    for endpoint, group in per_seed.groupby("endpoint", sort=False):
        ok = group[group["status"] == "ok"]
        found = decide(
            ok["excess"], ok["h_floor"], rule["margin_rel"], rule["alpha"], rule["power"]
        )
        rows.append({"endpoint": endpoint, "primary": endpoint == primary, **found.as_dict()})
    return pd.DataFrame(rows)


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
        for metric in TRAJECTORY_METRICS:
            labels = {"update": int(update), "metric": metric, "n_diverged": n_diverged}
            rows.append(stat_row(group[metric], bootstrap, metric == "excess", **labels))
    frame = pd.DataFrame(rows)
    first = ["update", "metric", "n", "n_diverged", "n_undefined", "mean", "ci_low", "ci_high"]
    return frame[first + [c for c in frame.columns if c not in first]].replace({np.inf: np.nan})


def matched_updates(matches: pd.DataFrame) -> pd.Series:
    """The matched checkpoints of a match table's matched seeds (the match window's extent)."""
    return matches.loc[matches["status"] == "matched", "matched_update"].astype(int)
