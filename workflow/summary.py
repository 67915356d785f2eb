"""Per-seed endpoint tables and the study summary (paired statistics over seeds).

Every seed appears in the per-seed table; a seed that is unmatched, diverged, or whose metric is
undefined (e.g. CKA of a dead layer) is excluded from that row's statistics and counted.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from workflow.stats import Bootstrap, describe, paired_tests

# Signed ABC-minus-BAC differences: a test against zero answers "does order shift this?".
SIGNED = ("acc_diff_pp", "loss_diff")
# Non-negative by construction (or similarities): a test against zero would be meaningless;
# the noise floor is the right reference for them.
DESCRIBED = (
    "h_repr",
    "h_repr_debiased",
    "cka_conv1",
    "cka_conv2",
    "cka_fc1",
    "cka_logits",
    "dcka_conv1",
    "dcka_conv2",
    "dcka_fc1",
    "dcka_logits",
    "disagreement_pct",
    "js_divergence",
    "acc_ABC_pct",
    "acc_BAC_pct",
    "acc_gap_pp",
    "loss_ABC",
    "loss_BAC",
    "loss_gap",
    "param_distance",
)
TEST_COLUMNS = ("t", "p_t", "p_wilcoxon", "wilcoxon_method", "n_pos", "n_neg", "n_zero", "d_z")
# The order of every study's summary: labels, seed counts, then these statistics.
STATISTICS = ("n_undefined", "n", "mean", "sd", "ci_low", "ci_high", *TEST_COLUMNS)


def endpoints(match, common_endpoint: int) -> tuple[tuple[str, int | None], ...]:
    """A seed's endpoints as (name, update): its matched checkpoint (None when unmatched or
    diverged) and the common one. Every study that reads matches names them this way."""
    matched = match.matched_update if match.status == "matched" else None
    return (("matched", matched), (f"common_{common_endpoint}", common_endpoint))


def endpoint_label(endpoint: str) -> str:
    """An endpoint's name as a reader reads it: "matched checkpoint", or for ``common_<N>``
    "common endpoint, N updates" (with thousands separators)."""
    if endpoint == "matched":
        return "matched checkpoint"
    return f"common endpoint, {int(str(endpoint).split('_')[-1]):,} updates"


def endpoint_table(
    comparisons: pd.DataFrame, matches: pd.DataFrame, common_endpoint: int
) -> pd.DataFrame:
    """One row per (seed, endpoint) with the endpoint's update, status and all pair metrics."""
    rows = []
    by_seed = comparisons.set_index(["seed", "update"]).sort_index()
    for match in matches.itertuples(index=False):
        seed = match.seed
        for endpoint, update in endpoints(match, common_endpoint):
            row = {"seed": seed, "endpoint": endpoint, "update": update}
            if match.status == "diverged":
                row["status"] = "diverged"
            elif update is None:
                row["status"] = "unmatched"
            else:
                row["status"] = "ok"
                row.update(by_seed.loc[(seed, int(update))].drop("pair_status").to_dict())
            rows.append(row)
    table = pd.DataFrame(rows)
    return table.astype({"update": "Int64"})


def stat_row(values, bootstrap: Bootstrap, signed: bool, **labels) -> dict:
    """n, mean, ``bootstrap``'s CI, sd (and paired tests if ``signed``) of the finite
    ``values``; ``n_undefined`` counts the non-finite ones (e.g. CKA of a dead layer)."""
    values = np.asarray(list(values), dtype=float)
    finite = values[np.isfinite(values)]
    summary = describe(finite, bootstrap)
    row = {**labels, "n_undefined": len(values) - len(finite), **summary.as_dict()}
    if signed:
        tests = paired_tests(finite).as_dict()
        row.update({key: tests[key] for key in TEST_COLUMNS})
    return row


def status_counts(group: pd.DataFrame) -> dict[str, int]:
    """How many seeds an endpoint has, and how many of them are unmatched or diverged."""
    return {
        "n_seeds": len(group),
        "n_unmatched": int((group["status"] == "unmatched").sum()),
        "n_diverged": int((group["status"] == "diverged").sum()),
    }


def summarize(per_seed: pd.DataFrame, bootstrap: Bootstrap) -> pd.DataFrame:
    """One row per (endpoint, metric): n, mean, ``bootstrap``'s CI, sd, and tests where
    meaningful."""
    rows = []
    for endpoint, group in per_seed.groupby("endpoint", sort=False):
        ok, counts = group[group["status"] == "ok"], status_counts(group)
        metrics = (*SIGNED, *DESCRIBED) + (("update",) if endpoint == "matched" else ())
        for metric in metrics:
            values = ok[metric] if metric in ok else []
            rows.append(
                stat_row(
                    values, bootstrap, metric in SIGNED, endpoint=endpoint, metric=metric, **counts
                )
            )
    columns = ["endpoint", "metric", "n_seeds", "n_unmatched", "n_diverged", *STATISTICS]
    return pd.DataFrame(rows).reindex(columns=columns)
