"""The sensitivity figure: how far each reading of the protocol moves a metric from the default."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workflow.choices import reading_label
from workflow.figures.plotting import finish, label_axes, new_figure, no_data, paper_style
from workflow.figures.settings import (
    DOUBLE_WIDTH_IN,
    MEAN_COLOR,
    REFERENCE_COLOR,
    SENSITIVITY_PANELS,
    SENSITIVITY_ROW_IN,
    SENSITIVITY_ROWS_LABEL,
)
from workflow.stats import Bootstrap
from workflow.summary import endpoint_label


@paper_style
def sensitivity_contrasts(
    summary: pd.DataFrame,
    metric: str,
    label: str,
    bootstrap: Bootstrap,
    matching: Mapping[str, Any],
) -> Figure:
    """One panel per analysis (variants, matching rules), stacked: each arm's paired difference
    from the default in ``metric`` (``label`` names it), mean and CI over seeds, per endpoint.

    ``summary`` is ``summary/sensitivity.csv``; its CIs were drawn with ``bootstrap``'s
    settings, which name the interval here. ``matching`` is the config's default rule, against
    which the matching arms are named.
    """
    xlabel = f"{label}: arm − default (mean ± {bootstrap.label})"
    contrasts = summary[(summary["contrast"] == "minus_default") & (summary["metric"] == metric)]
    panels = {
        analysis: contrasts[(contrasts["analysis"] == analysis) & (contrasts["n"] > 0)]
        for analysis in SENSITIVITY_PANELS
    }
    # Stacked, each panel as tall as its rows, so the arms' labels have the width they need.
    rows = [max(len(frame), 1) for frame in panels.values()]
    height = SENSITIVITY_ROW_IN * (sum(rows) + 3 * len(rows))
    fig, axes = new_figure(
        nrows=len(rows), width=DOUBLE_WIDTH_IN, height=height, height_ratios=rows
    )
    for ax, (analysis, frame) in zip(axes, panels.items(), strict=True):
        if frame.empty:
            no_data(ax, xlabel, SENSITIVITY_ROWS_LABEL)
        else:
            _forest(ax, frame.reset_index(drop=True), xlabel, matching)
        finish(fig, ax, SENSITIVITY_PANELS[analysis])
    return fig


def _forest(ax: Axes, rows: pd.DataFrame, xlabel: str, matching: Mapping[str, Any]) -> None:
    """A row per (arm, endpoint), the mean as a point and its CI as a bar, zero marked."""
    y = -np.arange(len(rows), dtype=np.float64)
    mean = rows["mean"].to_numpy(dtype=np.float64)
    low, high = (rows[c].to_numpy(dtype=np.float64) for c in ("ci_low", "ci_high"))
    has_ci = np.isfinite(low) & np.isfinite(high)
    ax.axvline(0.0, color=REFERENCE_COLOR, lw=0.6, zorder=1)
    ax.hlines(y[has_ci], low[has_ci], high[has_ci], color=MEAN_COLOR, lw=1.0, zorder=2)
    ax.plot(mean, y, "o", color=MEAN_COLOR, ms=3, zorder=3, gid="mean")
    labels = [
        f"{reading_label(row.analysis, row.arm, matching)} · "
        f"{endpoint_label(row.endpoint).replace('common endpoint', 'common')} "
        f"(n = {int(row.n)} of {int(row.n_seeds)})"
        for row in rows.itertuples(index=False)
    ]
    ax.set_yticks(y, labels=labels)
    ax.set_ylim(y[-1] - 0.6, 0.6)
    label_axes(ax, xlabel, SENSITIVITY_ROWS_LABEL)
