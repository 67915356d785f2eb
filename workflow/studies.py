"""Study-specific tables built from pair comparisons: pilot, long, activation, stability
search and probes (the noise floor's are in ``workflow.noise_floor``). Torch-free; statistics
come from ``workflow.stats``.

Every table keeps its counts: a seed excluded for divergence, a missing match or an undefined
value is counted in the row it is missing from, never dropped silently.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from workflow.probe_columns import PROBE_COLUMNS, PROBE_PER_SEED_COLUMNS  # noqa: F401
from workflow.stats import Bootstrap, paired_tests, tost
from workflow.summary import STATISTICS, TEST_COLUMNS, stat_row, status_counts


def ok_rows(comparisons: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """Rows of seeds whose runs never diverged, and how many seeds were excluded."""
    diverged = set(comparisons.loc[comparisons["pair_status"] != "ok", "seed"])
    return comparisons[~comparisons["seed"].isin(diverged)], len(diverged)


def at_update(comparisons: pd.DataFrame, update: int, metric: str) -> pd.Series:
    return comparisons[comparisons["update"] == update].set_index("seed")[metric]


def pilot_summary(per_seed: dict[str, pd.DataFrame], bootstrap: Bootstrap) -> pd.DataFrame:
    """H_repr and matched counts per optimizer policy, and the paired preserve - reset change."""
    rows = []
    for policy, table in per_seed.items():
        for endpoint, group in table.groupby("endpoint", sort=False):
            ok = group[group["status"] == "ok"]
            rows.append(
                stat_row(
                    ok["h_repr"],
                    bootstrap,
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
                    bootstrap,
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
    comparisons: pd.DataFrame, updates: list[int], start: int, end: int, bootstrap: Bootstrap
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
                    bootstrap,
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
            bootstrap,
            signed=True,
            update=f"{end}-{start}",
            metric="h_repr_change",
            n_seeds=n_seeds,
            n_diverged=n_diverged,
        )
    )
    return pd.DataFrame(rows)


ACTIVATION_METRICS = ("h_repr", "disagreement_pct", "acc_gap_pp")


def activation_summary(
    relu: pd.DataFrame, leaky: pd.DataFrame, updates: list[int], bootstrap: Bootstrap
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
                delta.dropna(),
                bootstrap,
                signed=True,
                update=update,
                metric="delta_h_repr",
                **counts,
            )
        )
        for arm, table in (("relu", relu_ok), ("leaky_relu", leaky_ok)):
            for metric in ACTIVATION_METRICS:
                rows.append(
                    stat_row(
                        at_update(table, update, metric),
                        bootstrap,
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


PROBE_SUMMARY_COLUMNS = [
    "budget",
    "probe_seeds",
    "metric",
    "n_seeds",
    "n_probe_seeds",
    "acc_ABC_mean",
    "acc_BAC_mean",
    *STATISTICS,
    "tost_margin_pp",
    "tost_p",
    "tost_ci_low",
    "tost_ci_high",
    "tost_equivalent",
]


def _probe_pp(counts: pd.Series, n_test: pd.Series) -> list[Fraction]:
    """``100 * count / n_test`` per row, as exact rationals."""
    return [Fraction(100 * int(c), int(n)) for c, n in zip(counts, n_test, strict=True)]


def probes_summary(per_seed: pd.DataFrame, probes: dict, bootstrap: Bootstrap) -> pd.DataFrame:
    """Per budget and set of probe seeds (``probe_seeds``): the S_ABC - S_BAC probe-accuracy
    difference over model seeds, with paired t, Wilcoxon and d_z; TOST at the configured budget.

    ``per_seed`` is :func:`per_seed_differences`' table. The differences are taken exactly from
    the correct counts (``100 * (correct_ABC - correct_BAC) / n_test`` as a rational), so the signs
    (``n_pos``, ``n_neg``, ``n_zero``), the Wilcoxon ranks and ties, the mean and the sd come from
    exact values; percentage points are only the unit they are shown in. At a budget with extra
    probe seeds there are two rows, the primary probe seed's first, then the pooled one. The
    columns are always ``PROBE_SUMMARY_COLUMNS``; the TOST ones are empty off the TOST budget.
    ``probes`` holds the TOST settings under the config's names (``tost_budget``,
    ``tost_margin_pp``, ``tost_alpha``); ``bootstrap`` gives the CI of the mean.
    """
    missing = sorted({"seed", "budget", "probe_seeds", "n_probe_seeds"} - set(per_seed.columns))
    missing += sorted({"correct_ABC", "correct_BAC", "n_test"} - set(per_seed.columns))
    if missing:
        raise ValueError(f"missing columns: {missing}")
    table = per_seed.assign(probe_seeds=per_seed["probe_seeds"].astype(str))
    table = table.sort_values(["budget", "n_probe_seeds"], kind="stable")
    rows = []
    for (budget, label), group in table.groupby(["budget", "probe_seeds"], sort=False):
        if group["seed"].duplicated().any():
            raise ValueError(f"budget {budget}, probe seeds {label}: a model seed appears twice")
        diffs = _probe_pp(group["correct_ABC"] - group["correct_BAC"], group["n_test"])
        n_seeds = len(group)
        row = stat_row(
            [float(d) for d in diffs],
            bootstrap,
            signed=False,
            budget=int(budget),
            probe_seeds=label,
            metric="probe_acc_diff_pp",
            n_seeds=n_seeds,
            n_probe_seeds=int(group["n_probe_seeds"].max()),
            acc_ABC_mean=float(sum(_probe_pp(group["correct_ABC"], group["n_test"])) / n_seeds),
            acc_BAC_mean=float(sum(_probe_pp(group["correct_BAC"], group["n_test"])) / n_seeds),
        )
        tests = paired_tests(diffs)
        # The exact mean and sd replace the float ones (a zero mean stays exactly zero).
        row.update(mean=tests.mean, sd=tests.sd)
        row.update({key: getattr(tests, key) for key in TEST_COLUMNS})
        if budget == probes["tost_budget"]:
            result = tost(
                np.array([float(d) for d in diffs]),
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
    return pd.DataFrame(rows).reindex(columns=PROBE_SUMMARY_COLUMNS)


def per_seed_differences(rows: pd.DataFrame, primary_seed: int) -> pd.DataFrame:
    """Probe results per model seed and budget, pooled exactly over probe seeds, so the model
    seeds stay the statistical units.

    Input: :func:`workflow.probes.probe_pair`'s rows with a ``seed`` column (columns ``seed,
    budget, probe_seed, correct_ABC, correct_BAC, n_test``; integer counts). Output columns:
    ``PROBE_PER_SEED_COLUMNS``. For every (seed, budget) there is a row for ``primary_seed``
    alone (``probe_seeds`` "777", ``n_probe_seeds`` 1) and, where the budget has extra probe
    seeds, a row pooled over all of them ("777+1777+2777+3777+4777"), primary first; rows are
    sorted by seed, budget, then that order. A row's ``correct_ABC`` and ``correct_BAC`` are the
    correct counts summed over its probe seeds and ``n_test`` the test predictions they are out
    of (the probe-set size times ``n_probe_seeds``), so ``acc = 100 * correct / n_test`` is
    exactly the mean accuracy over the probe seeds and ``diff_pp = 100 * (correct_ABC -
    correct_BAC) / n_test`` the mean difference: equal results tie exactly. ``acc_*`` and
    ``diff_pp`` are those ratios rounded once to float.
    """
    _check_probe_rows(rows)
    out = []
    for (seed, budget), group in rows.groupby(["seed", "budget"], sort=True):
        for pool in _probe_seed_pools(group, primary_seed, f"seed {seed}, budget {budget}"):
            chosen = group[group["probe_seed"].isin(pool)]
            out.append({"seed": seed, "budget": budget, **_pooled_counts(chosen, pool)})
    return pd.DataFrame(out, columns=PROBE_PER_SEED_COLUMNS)


_PROBE_KEYS = ["seed", "budget", "probe_seed"]
_PROBE_COUNTS = ["correct_ABC", "correct_BAC", "n_test"]


def _check_probe_rows(rows: pd.DataFrame) -> None:
    missing = sorted(set(_PROBE_KEYS + _PROBE_COUNTS) - set(rows.columns))
    if missing:
        raise ValueError(f"missing columns: {missing}")
    if rows.duplicated(_PROBE_KEYS).any():
        # A repeated probe seed would count one draw twice in the mean.
        raise ValueError("duplicate (seed, budget, probe_seed) rows")
    for column in _PROBE_COUNTS:
        values = pd.to_numeric(rows[column], errors="coerce").to_numpy(dtype=float)
        if not (np.isfinite(values) & (values == np.round(values))).all():
            raise ValueError(f"{column} must hold integer counts")
    if ((rows["correct_ABC"] < 0) | (rows["correct_BAC"] < 0)).any() or (
        rows[["correct_ABC", "correct_BAC"]].max(axis=1) > rows["n_test"]
    ).any():
        raise ValueError("correct counts must lie between 0 and n_test")


def _probe_seed_pools(group: pd.DataFrame, primary_seed: int, where: str) -> list[list[int]]:
    """The primary probe seed alone, then (where there are others) every probe seed."""
    if group["n_test"].nunique() != 1:
        # Pooled counts are the mean only when every probe seed has the same test set.
        raise ValueError(f"{where}: n_test differs between probe seeds")
    seeds = [int(s) for s in group["probe_seed"]]
    if primary_seed not in seeds:
        raise ValueError(f"{where}: no row for probe seed {primary_seed}")
    extra = sorted(s for s in seeds if s != primary_seed)
    return [[primary_seed]] + ([[primary_seed, *extra]] if extra else [])


def _pooled_counts(chosen: pd.DataFrame, pool: list[int]) -> dict:
    correct_abc, correct_bac = int(chosen["correct_ABC"].sum()), int(chosen["correct_BAC"].sum())
    n_test = int(chosen["n_test"].sum())
    return {
        "probe_seeds": "+".join(str(s) for s in pool),
        "n_probe_seeds": len(pool),
        "correct_ABC": correct_abc,
        "correct_BAC": correct_bac,
        "n_test": n_test,
        "acc_ABC": float(Fraction(100 * correct_abc, n_test)),
        "acc_BAC": float(Fraction(100 * correct_bac, n_test)),
        "diff_pp": float(Fraction(100 * (correct_abc - correct_bac), n_test)),
    }
