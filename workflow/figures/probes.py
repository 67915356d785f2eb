"""The probe figure: accuracy difference between the orders' probes against probe budget."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from workflow.figures.plotting import (
    draw_mean_bars,
    draw_seed_points,
    finish,
    label_axes,
    new_figure,
    no_data,
    paper_style,
)
from workflow.figures.settings import (
    BUDGET_LABEL,
    MARGIN_COLOR,
    MEAN_COLOR,
    PROBE_DIFF_LABEL,
    REFERENCE_COLOR,
    seeds_label,
)
from workflow.figures.tables import check_one_row_per_seed, finite_rows, mean_ci_by, seed_offsets
from workflow.stats import Bootstrap


@paper_style
def probe_differences(
    probes: pd.DataFrame, margin_pp: float, bootstrap: Bootstrap, *, title: str | None = None
) -> Figure:
    """Probe accuracy difference (S_ABC − S_BAC) against probe budget, with the TOST margin.

    ``probes`` has columns ``seed, budget, diff_pp`` (one row per model seed and budget,
    already averaged over probe seeds). The probe study's per-seed table also has, at a budget
    with extra probe seeds, the primary probe seed's row; with an ``n_probe_seeds`` column only
    the row over the most probe seeds of each (seed, budget) is plotted.
    """
    fig, (ax,) = new_figure()
    data = _probe_rows(probes)
    if data.empty:
        no_data(ax, BUDGET_LABEL, PROBE_DIFF_LABEL)
        return finish(fig, ax, title)
    _reference_lines(ax, margin_pp)
    # Multiplicative jitter keeps points evenly spread on the log axis.
    offsets = seed_offsets(data["seed"].unique(), width=0.12)
    jitter = 10.0 ** data["seed"].map(offsets).to_numpy(dtype=np.float64)
    budgets = data["budget"].to_numpy(dtype=np.float64)
    draw_seed_points(ax, budgets * jitter, data["diff_pp"].to_numpy(dtype=np.float64))
    summary = mean_ci_by(data, "budget", "diff_pp", bootstrap)
    xs = summary["budget"].to_numpy(dtype=np.float64)
    ax.plot(xs, summary["mean"].to_numpy(dtype=np.float64), color=MEAN_COLOR, lw=0.8, zorder=3)
    label = f"mean ± {bootstrap.label} ({seeds_label(data['seed'].nunique())})"
    draw_mean_bars(ax, xs, summary, MEAN_COLOR, label)
    ax.set_xscale("log")
    ax.set_xticks(xs, labels=[f"{b:g}" for b in xs])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(xs.min() / 1.6, xs.max() * 1.6)
    label_axes(ax, BUDGET_LABEL, PROBE_DIFF_LABEL)
    return finish(fig, ax, title, legend_cols=2)


def _probe_rows(probes: pd.DataFrame) -> pd.DataFrame:
    """Finite differences at positive budgets, the row over the most probe seeds of each
    (seed, budget) when the table says how many probe seeds a row averages."""
    if not probes.empty and "n_probe_seeds" in probes.columns:
        most = probes.groupby(["seed", "budget"])["n_probe_seeds"].transform("max")
        probes = probes[probes["n_probe_seeds"] == most]
    data = finite_rows(probes, ["seed", "budget", "diff_pp"], "diff_pp")
    data = data[pd.to_numeric(data["budget"], errors="coerce") > 0]
    check_one_row_per_seed(data, ["seed", "budget"])
    return data


def _reference_lines(ax: Axes, margin_pp: float) -> None:
    """Underneath everything: zero difference and the equivalence margin on either side."""
    ax.axhline(0.0, color=REFERENCE_COLOR, ls="--", lw=0.8, zorder=0)
    for sign in (-1.0, 1.0):
        label = f"±{margin_pp:g} pp margin" if sign > 0 else None
        ax.axhline(sign * margin_pp, color=MARGIN_COLOR, ls="--", lw=0.8, zorder=0, label=label)
