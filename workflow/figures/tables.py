"""Preparing the per-seed tables for drawing: column checks, finite rows, mean and CI per x.

Non-finite values are dropped per x value and counted rather than raising, because small
configurations can legitimately leave seeds unmatched; a seed counted twice raises, because it
would shrink a CI dishonestly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from workflow.stats import Bootstrap

SUMMARY_COLUMNS = ("mean", "ci_low", "ci_high", "n", "n_dropped")


def require(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"missing column(s) {missing}; have {list(frame.columns)}")


def finite_rows(frame: pd.DataFrame, columns: Sequence[str], y: str) -> pd.DataFrame:
    """Rows with a finite ``y``; an empty frame (even one without columns) gives an empty one."""
    if frame.empty:
        return pd.DataFrame(columns=list(columns))
    require(frame, columns)
    values = pd.to_numeric(frame[y], errors="coerce")
    return frame.loc[np.isfinite(values.to_numpy(dtype=np.float64)), list(columns)]


def check_one_row_per_seed(frame: pd.DataFrame, keys: Sequence[str]) -> None:
    # Duplicated (seed, x) rows would count a seed twice and shrink the CI dishonestly.
    if not frame.empty and frame.duplicated(subset=list(keys)).any():
        raise ValueError(f"expected one row per {tuple(keys)}; found duplicates")


def filter_endpoint(frame: pd.DataFrame, endpoint: str, columns: Sequence[str]) -> pd.DataFrame:
    """Rows of ``endpoint`` with ``status == 'ok'``; endpoints compare as strings."""
    if frame.empty:
        return pd.DataFrame(columns=list(columns))
    require(frame, ["endpoint", "status", *columns])
    keep = (frame["endpoint"].astype(str) == str(endpoint)) & (frame["status"] == "ok")
    return frame.loc[keep, list(columns)]


def seed_offsets(seeds: Sequence[Any], width: float = 0.25) -> dict[Any, float]:
    """Deterministic horizontal jitter: each seed keeps the same offset in every group."""
    ordered = sorted(seeds)
    if len(ordered) <= 1:
        return {s: 0.0 for s in ordered}
    return dict(zip(ordered, np.linspace(-width / 2, width / 2, len(ordered)), strict=True))


def mean_ci_by(frame: pd.DataFrame, x: str, y: str, bootstrap: Bootstrap) -> pd.DataFrame:
    """Mean and bootstrap CI of ``y`` over rows (seeds) for each value of ``x``.

    Returns columns ``x, mean, ci_low, ci_high, n, n_dropped`` sorted by ``x``: ``n`` counts the
    finite values used and ``n_dropped`` the NaN/inf rows excluded. An ``x`` value whose values
    are all non-finite keeps a row with ``n == 0`` and NaN statistics so the gap stays visible.
    """
    columns = [x, *SUMMARY_COLUMNS]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    require(frame, [x, y])
    rows = []
    for key, group in frame.groupby(x, sort=True):
        values = pd.to_numeric(group[y], errors="coerce").to_numpy(dtype=np.float64)
        finite = values[np.isfinite(values)]
        low, high = bootstrap.ci(finite)
        mean = float(finite.mean()) if finite.size else float("nan")
        dropped = int(values.size - finite.size)
        stats = (key, mean, low, high, int(finite.size), dropped)
        rows.append(dict(zip(columns, stats, strict=True)))
    return pd.DataFrame(rows, columns=columns)
