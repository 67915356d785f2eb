"""Study-specific tables built from pair comparisons: pilot, long, noise floor, activation,
stability search and probes. Torch-free; statistics come from ``workflow.stats``.

Every table keeps its counts: a seed excluded for divergence, a missing match or an undefined
value is counted in the row it is missing from, never dropped silently.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workflow.stats import tost
from workflow.summary import stat_row, status_counts


def ok_rows(comparisons: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Rows of seeds whose runs never diverged, and how many seeds were excluded."""
    diverged = set(comparisons.loc[comparisons["pair_status"] != "ok", "seed"])
    return comparisons[~comparisons["seed"].isin(diverged)], len(diverged)


def at_update(comparisons: pd.DataFrame, update: int, metric: str) -> pd.Series:
    return comparisons[comparisons["update"] == update].set_index("seed")[metric]


def pilot_summary(per_seed: dict[str, pd.DataFrame], stats: dict) -> pd.DataFrame:
    """H_repr and matched counts per optimizer policy, and the paired preserve - reset change."""
    rows = []
    for policy, table in per_seed.items():
        for endpoint, group in table.groupby("endpoint", sort=False):
            ok = group[group["status"] == "ok"]
            rows.append(
                stat_row(
                    ok["h_repr"],
                    stats,
                    signed=False,
                    policy=policy,
                    endpoint=endpoint,
                    metric="h_repr",
                    **status_counts(group),
                    n_matched=len(ok) if endpoint == "matched" else None,
                )
            )
    if {"preserve", "reset"} <= per_seed.keys():
        common = [e for e in per_seed["reset"]["endpoint"].unique() if e != "matched"]
        for endpoint in common:
            a = _endpoint_metric(per_seed["preserve"], endpoint, "h_repr")
            b = _endpoint_metric(per_seed["reset"], endpoint, "h_repr")
            diff = (a - b).dropna()
            rows.append(
                stat_row(
                    diff,
                    stats,
                    signed=True,
                    policy="preserve_minus_reset",
                    endpoint=endpoint,
                    metric="h_repr",
                    n_seeds=len(a),
                )
            )
    return pd.DataFrame(rows)


def _endpoint_metric(table: pd.DataFrame, endpoint: str, metric: str) -> pd.Series:
    ok = table[(table["endpoint"] == endpoint) & (table["status"] == "ok")]
    return ok.set_index("seed")[metric].astype(float).reindex(table["seed"].unique())


LONG_METRICS = ("h_repr", "acc_ABC_pct", "acc_BAC_pct", "acc_gap_pp", "disagreement_pct")


def long_summary(
    comparisons: pd.DataFrame, updates: list[int], start: int, end: int, stats: dict
) -> pd.DataFrame:
    """Metrics at each reported update, and the paired H_repr change from ``start`` to ``end``."""
    ok, n_diverged = ok_rows(comparisons)
    n_seeds = comparisons["seed"].nunique()
    rows = []
    for update in updates:
        for metric in LONG_METRICS:
            rows.append(
                stat_row(
                    at_update(ok, update, metric),
                    stats,
                    signed=False,
                    update=update,
                    metric=metric,
                    n_seeds=n_seeds,
                    n_diverged=n_diverged,
                )
            )
    change = at_update(ok, end, "h_repr") - at_update(ok, start, "h_repr")
    rows.append(
        stat_row(
            change,
            stats,
            signed=True,
            update=f"{end}-{start}",
            metric="h_repr_change",
            n_seeds=n_seeds,
            n_diverged=n_diverged,
        )
    )
    return pd.DataFrame(rows)


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
        endpoints = (
            ("matched", match.matched_update if match.status == "matched" else None),
            (f"common_{common_endpoint}", common_endpoint),
        )
        for endpoint, update in endpoints:
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


def noise_floor_summary(per_seed: pd.DataFrame, stats: dict) -> pd.DataFrame:
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
                    stats,
                    signed=metric == "excess",
                    endpoint=endpoint,
                    metric=metric,
                    **counts,
                )
            )
    return pd.DataFrame(rows)


ACTIVATION_METRICS = ("h_repr", "disagreement_pct", "acc_gap_pp")


def activation_summary(
    relu: pd.DataFrame, leaky: pd.DataFrame, updates: list[int], stats: dict
) -> pd.DataFrame:
    """Delta H_repr = LeakyReLU - ReLU paired by seed, and both arms' metrics, per update."""
    relu_ok, relu_diverged = ok_rows(relu)
    leaky_ok, leaky_diverged = ok_rows(leaky)
    counts = {
        "n_seeds": relu["seed"].nunique(),
        "n_diverged_relu": relu_diverged,
        "n_diverged_leaky": leaky_diverged,
    }
    rows = []
    for update in updates:
        delta = at_update(leaky_ok, update, "h_repr") - at_update(relu_ok, update, "h_repr")
        rows.append(
            stat_row(
                delta.dropna(), stats, signed=True, update=update, metric="delta_h_repr", **counts
            )
        )
        for arm, table in (("relu", relu_ok), ("leaky_relu", leaky_ok)):
            for metric in ACTIVATION_METRICS:
                rows.append(
                    stat_row(
                        at_update(table, update, metric),
                        stats,
                        signed=False,
                        update=update,
                        metric=f"{metric}_{arm}",
                        **counts,
                    )
                )
    return pd.DataFrame(rows)


def select_rate(candidates: list[float], traces: pd.DataFrame) -> float | None:
    """The highest candidate whose traces are all finite, trying candidates in descending
    order and stopping at the first stable one; None if none is stable."""
    for lr in sorted(candidates, reverse=True):
        group = traces[np.isclose(traces["lr"], lr)]
        if group.empty:
            return None
        if group["finite"].all():
            return lr
    return None


def lr_search_table(candidates: list[float], traces: pd.DataFrame, selected: float | None):
    rows = []
    for lr in sorted(candidates, reverse=True):
        group = traces[np.isclose(traces["lr"], lr)]
        rows.append(
            {
                "lr": lr,
                "tried": not group.empty,
                "n_traces": len(group),
                "n_finite": int(group["finite"].sum()) if len(group) else 0,
                "all_finite": bool(len(group)) and bool(group["finite"].all()),
                "selected": selected is not None and np.isclose(lr, selected),
            }
        )
    return pd.DataFrame(rows)


def probes_summary(per_seed: pd.DataFrame, probes: dict, stats: dict) -> pd.DataFrame:
    """Per budget: the SABC - SBAC probe-accuracy difference over model seeds; TOST at the
    configured budget."""
    rows = []
    for budget, group in per_seed.groupby("budget", sort=True):
        row = stat_row(
            group["diff_pp"],
            stats,
            signed=True,
            budget=int(budget),
            metric="probe_acc_diff_pp",
            n_seeds=len(group),
            n_probe_seeds=int(group["n_probe_seeds"].max()),
            acc_ABC_mean=group["acc_ABC"].mean(),
            acc_BAC_mean=group["acc_BAC"].mean(),
        )
        if budget == probes["tost_budget"]:
            result = tost(
                group["diff_pp"].to_numpy(float),
                probes["tost_margin_pp"],
                alpha=probes["tost_alpha"],
            )
            row.update(
                {
                    "tost_margin_pp": result.margin,
                    "tost_p": result.p,
                    "tost_ci_low": result.ci_low,
                    "tost_ci_high": result.ci_high,
                    "tost_equivalent": result.equivalent,
                }
            )
        rows.append(row)
    return pd.DataFrame(rows)


def per_seed_differences(rows: pd.DataFrame) -> pd.DataFrame:
    """Mean over probe seeds per (seed, budget), so the model seeds stay the statistical units.

    Input columns: ``seed, budget, probe_seed, acc_ABC, acc_BAC, diff_pp``. Output columns:
    ``seed, budget, n_probe_seeds, acc_ABC, acc_BAC, diff_pp``, sorted by seed then budget.
    """
    keys = ["seed", "budget", "probe_seed"]
    missing = sorted(set(keys + ["acc_ABC", "acc_BAC", "diff_pp"]) - set(rows.columns))
    if missing:
        raise ValueError(f"missing columns: {missing}")
    if rows.duplicated(keys).any():
        # A repeated probe seed would count one draw twice in the mean.
        raise ValueError("duplicate (seed, budget, probe_seed) rows")
    grouped = rows.groupby(["seed", "budget"], sort=True)
    out = grouped[["acc_ABC", "acc_BAC", "diff_pp"]].mean()
    out.insert(0, "n_probe_seeds", grouped["probe_seed"].size())
    return out.reset_index()[["seed", "budget", "n_probe_seeds", "acc_ABC", "acc_BAC", "diff_pp"]]
