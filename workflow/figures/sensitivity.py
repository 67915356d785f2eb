"""The sensitivity figure: how far each reading of the protocol moves a metric from the default."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workflow.figures.plotting import finish, new_figure, no_data, paper_style
from workflow.figures.settings import (
    MEAN_COLOR,
    REFERENCE_COLOR,
    SENSITIVITY_PANELS,
    seeds_label,
)
from workflow.stats import Bootstrap
from workflow.summary import endpoint_label


@paper_style
def sensitivity_contrasts(
    summary: pd.DataFrame, metric: str, label: str, bootstrap: Bootstrap
) -> Figure:
    """One panel per analysis (variants, matching rules): each arm's paired difference from the
    default in ``metric`` (``label`` names it), mean and CI over seeds, per endpoint.

    ``summary`` is ``summary/sensitivity.csv``; its CIs were drawn with ``bootstrap``'s
    settings, which name the interval here.
    """
    fig, axes = new_figure(ncols=len(SENSITIVITY_PANELS))
    xlabel = f"{label}: arm − default (mean ± {bootstrap.label})"
    contrasts = summary[(summary["contrast"] == "minus_default") & (summary["metric"] == metric)]
    for ax, (analysis, title) in zip(axes, SENSITIVITY_PANELS.items(), strict=True):
        rows = contrasts[(contrasts["analysis"] == analysis) & (contrasts["n"] > 0)]
        if rows.empty:
            no_data(ax, xlabel, "")
        else:
            _forest(ax, rows.reset_index(drop=True), xlabel)
        finish(fig, ax, title)
    return fig


def _forest(ax: Axes, rows: pd.DataFrame, xlabel: str) -> None:
    """A row per (arm, endpoint), the mean as a point and its CI as a bar, zero marked."""
    y = -np.arange(len(rows), dtype=np.float64)
    mean = rows["mean"].to_numpy(dtype=np.float64)
    low, high = (rows[c].to_numpy(dtype=np.float64) for c in ("ci_low", "ci_high"))
    has_ci = np.isfinite(low) & np.isfinite(high)
    ax.axvline(0.0, color=REFERENCE_COLOR, lw=0.6, zorder=1)
    ax.hlines(y[has_ci], low[has_ci], high[has_ci], color=MEAN_COLOR, lw=1.0, zorder=2)
    ax.plot(mean, y, "o", color=MEAN_COLOR, ms=3, zorder=3)
    labels = [
        f"{row.arm}, {endpoint_label(row.endpoint)} ({seeds_label(int(row.n))})"
        for row in rows.itertuples(index=False)
    ]
    ax.set_yticks(y, labels=labels)
    ax.set_xlabel(xlabel)
