"""Figures against common-relaxation updates: per-seed lines, the mean and its CI band."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workflow.figures.plotting import (
    finish,
    new_figure,
    outside_legend,
    paper_style,
    trajectory,
    update_axis,
)
from workflow.figures.settings import (
    ACC_GAP_LABEL,
    ACTIVATION_COLORS,
    ACTIVATION_NAMES,
    DISAGREEMENT_LABEL,
    EXCESS_LABEL,
    EXCESS_NAME,
    FIG_HEIGHT_IN,
    FLOOR_COLOR,
    FLOOR_PAIRS_NAME,
    H_REPR_LABEL,
    LONG_HORIZON_MARKS,
    MEAN_COLOR,
    ORDER_PAIRS_NAME,
    REFERENCE_COLOR,
    seeds_label,
)
from workflow.stats import Bootstrap


@paper_style
def h_repr_trajectories(
    comparisons: pd.DataFrame, bootstrap: Bootstrap, *, title: str | None = None
) -> Figure:
    """H_repr against common-relaxation updates: per-seed lines, mean and bootstrap CI band.

    ``comparisons`` has columns ``seed, update, h_repr`` (one row per seed and update).
    """
    fig, (ax,) = new_figure()
    updates, _ = trajectory(ax, comparisons, "h_repr", bootstrap)
    has_data = update_axis(ax, updates, H_REPR_LABEL)
    return finish(fig, ax, title, legend_cols=3 if has_data else None)


@paper_style
def long_horizon(
    comparisons: pd.DataFrame,
    bootstrap: Bootstrap,
    *,
    marks: Sequence[int] = LONG_HORIZON_MARKS,
    title: str | None = None,
) -> Figure:
    """H_repr up to the long horizon on a symlog x axis, with the reported updates marked.

    ``comparisons`` has columns ``seed, update, h_repr``. Marks beyond the last plotted update
    are skipped, so shortened test configurations do not stretch the axis.
    """
    fig, (ax,) = new_figure()
    updates, _ = trajectory(ax, comparisons, "h_repr", bootstrap)
    has_data = update_axis(ax, updates, H_REPR_LABEL, force_log=True)
    if has_data:
        _mark_updates(ax, [m for m in marks if m <= float(np.max(updates))])
    return finish(fig, ax, title, legend_cols=3 if has_data else None)


def _mark_updates(ax: Axes, marks: Sequence[int]) -> None:
    for mark in marks:
        ax.axvline(mark, color=REFERENCE_COLOR, ls=":", lw=0.8, zorder=0)
        # Label in axes-fraction y just above the frame, so it never sits on the data.
        text = f"{mark // 1000}k" if mark % 1000 == 0 else f"{mark}"
        ax.text(mark, 1.01, text, transform=ax.get_xaxis_transform(), ha="center", va="bottom")


@paper_style
def behaviour_trajectories(
    comparisons: pd.DataFrame, bootstrap: Bootstrap, *, title: str | None = None
) -> Figure:
    """Accuracy gap and prediction disagreement against updates, side by side.

    ``comparisons`` has columns ``seed, update, acc_gap_pp, disagreement_pct``.
    """
    fig, axes = new_figure(ncols=2)
    columns = {"acc_gap_pp": ACC_GAP_LABEL, "disagreement_pct": DISAGREEMENT_LABEL}
    populated = []
    for ax, (column, ylabel) in zip(axes, columns.items(), strict=True):
        updates, _ = trajectory(ax, comparisons, column, bootstrap)
        if update_axis(ax, updates, ylabel):
            # Gaps and disagreement are non-negative; anchoring at 0 shows how close to 0 they get.
            ax.set_ylim(bottom=0)
            populated.append(ax)
    if populated:
        outside_legend(fig, populated[0])
    if title:
        fig.suptitle(title)
    return fig


@paper_style
def activation_trajectories(
    relu: pd.DataFrame,
    leaky: pd.DataFrame,
    lr: float,
    bootstrap: Bootstrap,
    *,
    title: str | None = None,
) -> Figure:
    """H_repr against updates for ReLU and LeakyReLU networks trained at the same rate.

    Both inputs have columns ``seed, update, h_repr``.
    """
    fig, (ax,) = new_figure()
    plotted, counts = [], []
    groups = zip((relu, leaky), ACTIVATION_NAMES, ACTIVATION_COLORS, strict=True)
    for frame, name, color in groups:
        updates, n_seeds = trajectory(
            ax, frame, "h_repr", bootstrap, color=color, seed_color=color, name=name
        )
        plotted.append(updates)
        counts.append(n_seeds)
    # Per-seed lines in each group's colour are faint; lighten them further than grey ones.
    for line in ax.get_lines():
        if line.get_gid() == "seed":
            line.set_alpha(0.35)
    has_data = update_axis(ax, np.concatenate(plotted), H_REPR_LABEL)
    n_text = (
        seeds_label(counts[0]) if counts[0] == counts[1] else f"n = {counts[0]}/{counts[1]} seeds"
    )
    heading = f"{title or ' vs '.join(ACTIVATION_NAMES)}, lr = {lr:g} ({n_text})"
    # Two legend columns filled column-first: one column per activation function.
    return finish(fig, ax, heading, legend_cols=2 if has_data else None)


@paper_style
def order_vs_noise(
    per_seed: pd.DataFrame,
    matched: pd.Series,
    bootstrap: Bootstrap,
    *,
    title: str | None = None,
) -> Figure:
    """H_repr of the order pairs and of the same-order pairs against updates (mean, CI band,
    faint per-seed lines), and below it their excess with its CI and the zero line; the match
    window (``matched``: the matched seeds' matched updates) shaded, its median dashed.

    ``per_seed`` has columns ``seed, update, h_order, h_floor, excess``.
    """
    fig, (top, bottom) = new_figure(nrows=2, height=2 * FIG_HEIGHT_IN, height_ratios=[3, 2])
    groups = (("h_order", ORDER_PAIRS_NAME, MEAN_COLOR), ("h_floor", FLOOR_PAIRS_NAME, FLOOR_COLOR))
    plotted, counts = [], []
    for column, name, color in groups:
        updates, n_seeds = trajectory(
            top, per_seed, column, bootstrap, color=color, seed_color=color, name=name
        )
        plotted.append(updates)
        counts.append(n_seeds)
    for line in top.get_lines():
        if line.get_gid() == "seed":
            line.set_alpha(0.25)
    updates, _ = trajectory(bottom, per_seed, "excess", bootstrap, name=EXCESS_NAME)
    # Log-spaced updates past the first checkpoint: the order effect decays in the first few
    # hundred updates, which a linear axis to 10,000 squeezes into its first tenth.
    has_data = update_axis(top, np.concatenate(plotted), H_REPR_LABEL, force_log=True)
    if update_axis(bottom, updates, EXCESS_LABEL, force_log=True):
        bottom.axhline(0.0, color=REFERENCE_COLOR, lw=0.8, zorder=0)
    if len(matched):
        for ax in (top, bottom):
            ax.axvspan(matched.min(), matched.max(), color=REFERENCE_COLOR, alpha=0.12, lw=0)
            ax.axvline(float(np.median(matched)), color=REFERENCE_COLOR, ls="--", lw=0.8)
    heading = f"{title or 'order effect vs noise floor'} ({seeds_label(max(counts))})"
    return finish(fig, top, heading, legend_cols=2 if has_data else None)
