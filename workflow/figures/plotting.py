"""Drawing helpers every figure shares: the paper style, a new figure, the "no data" axis, the
per-seed lines and the mean with its CI (band or bars), the legend, and atomic saving.

Figures are built on ``Figure`` directly (never ``pyplot``) so no global figure registry or
interactive backend is involved, which keeps them safe inside Snakemake jobs and parallel tests.
Artists carry gids (``seed``, ``mean``, ``ci``) so tests and callers can find them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from workflow.artifacts import atomic_path
from workflow.figures.settings import (
    COLUMN_WIDTH_IN,
    DOUBLE_WIDTH_IN,
    FIG_HEIGHT_IN,
    FONT_SIZE,
    LOG_X_THRESHOLD,
    MEAN_COLOR,
    NO_DATA,
    NOTE_COLOR,
    PER_SEED_LABEL,
    PNG_DPI,
    RC,
    SAVE_METADATA,
    SEED_COLOR,
    UPDATE_LABEL,
    seeds_label,
)
from workflow.figures.tables import check_one_row_per_seed, finite_rows, mean_ci_by
from workflow.stats import Bootstrap

_P = ParamSpec("_P")
_R = TypeVar("_R")


def paper_style(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Build the figure under the paper rc settings, restoring the caller's afterwards."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with mpl.rc_context(RC):
            return func(*args, **kwargs)

    return wrapper


def save_figure(fig: Figure, stem: Path) -> list[Path]:
    """Write ``stem.png`` (200 dpi) and ``stem.pdf``, each atomically; return both paths.

    Each file is rendered to a temporary sibling and renamed into place
    (:func:`workflow.artifacts.atomic_path`), so an interrupted job never leaves a truncated
    figure that looks done.
    """
    written = []
    for fmt, metadata in SAVE_METADATA.items():
        target = Path(stem).with_suffix(f".{fmt}")
        with atomic_path(target) as tmp, mpl.rc_context(RC):
            fig.savefig(tmp, format=fmt, dpi=PNG_DPI, metadata=metadata)
        written.append(target)
    return written


def new_figure(
    ncols: int = 1,
    *,
    nrows: int = 1,
    width: float | None = None,
    height: float = FIG_HEIGHT_IN,
    height_ratios: list[int] | None = None,
) -> tuple[Figure, list[Axes]]:
    """A grid of axes, row by row: column width for one column, text width for more, unless
    ``width`` says otherwise."""
    width = width or (COLUMN_WIDTH_IN if ncols == 1 else DOUBLE_WIDTH_IN)
    # Constrained layout also makes room for legends placed outside the axes.
    fig = Figure(figsize=(width, height), layout="constrained")
    grid = fig.add_gridspec(nrows, ncols, height_ratios=height_ratios)
    axes = [fig.add_subplot(grid[row, col]) for row in range(nrows) for col in range(ncols)]
    for ax in axes:
        # Stored in the axis' tick keywords, so ticks created later at draw time keep the size.
        ax.tick_params(labelsize=FONT_SIZE)
    return fig, axes


def label_axes(ax: Axes, xlabel: str, ylabel: str) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)


def no_data(ax: Axes, xlabel: str, ylabel: str) -> None:
    """An axis that keeps its labels and says there is nothing to draw."""
    label_axes(ax, xlabel, ylabel)
    ax.text(0.5, 0.5, NO_DATA, transform=ax.transAxes, ha="center", va="center", color=NOTE_COLOR)
    ax.set_xticks([])
    ax.set_yticks([])


def outside_legend(fig: Figure, ax: Axes, ncols: int = 3) -> None:
    # Above the axes rather than inside them, so the legend never hides a trajectory.
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))  # first handle per label wins
    if unique:
        fig.legend(list(unique.values()), list(unique), loc="outside upper center", ncols=ncols)


def finish(fig: Figure, ax: Axes, title: str | None, legend_cols: int | None = None) -> Figure:
    """The common ending: the legend above the axes (when ``legend_cols``), then the title."""
    if legend_cols:
        outside_legend(fig, ax, ncols=legend_cols)
    if title:
        ax.set_title(title)
    return fig


def set_update_xscale(ax: Axes, updates: np.ndarray, force_log: bool = False) -> None:
    """Linear x for short horizons; symlog (linear near 0, log beyond) for long ones."""
    if updates.size == 0:
        return
    if force_log or float(np.max(updates)) > LOG_X_THRESHOLD:
        positive = updates[updates > 0]
        # The first checkpoint after 0 sets the linear region, so update 0 is still drawn.
        linthresh = float(np.min(positive)) if positive.size else 1.0
        ax.set_xscale("symlog", linthresh=linthresh, linscale=0.5)
        # Explicit ticks: 0 plus the decades past the linear region; the default locator also
        # ticks decades inside it, whose labels collide with the 0 label.
        top = float(np.max(updates))
        first = int(np.ceil(np.log10(max(linthresh, 1.0))))
        decades = [10.0**k for k in range(first, int(np.floor(np.log10(top))) + 1)]
        ax.xaxis.set_major_locator(FixedLocator([0.0, *decades]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(left=min(0.0, float(np.min(updates))))


def draw_seed_lines(
    ax: Axes, frame: pd.DataFrame, x: str, y: str, color: str, label: str | None
) -> int:
    """One thin line per seed; returns the number of seeds drawn."""
    n_seeds = 0
    for _, group in frame.groupby("seed", sort=True):
        group = group.sort_values(x)
        xs, ys = group[x].to_numpy(dtype=np.float64), group[y].to_numpy(dtype=np.float64)
        first_label = label if n_seeds == 0 else None
        ax.plot(xs, ys, color=color, lw=0.5, alpha=0.7, label=first_label, zorder=1, gid="seed")
        n_seeds += 1
    return n_seeds


def draw_seed_points(
    ax: Axes, xs: np.ndarray, ys: np.ndarray, label: str | None = PER_SEED_LABEL
) -> None:
    """One small grey point per seed."""
    ax.scatter(xs, ys, s=8, color=SEED_COLOR, label=label, zorder=2, gid="seed")


def draw_mean_band(
    ax: Axes, summary: pd.DataFrame, x: str, color: str, label: str, band_label: str
) -> None:
    """Mean line over a shaded CI band."""
    xs = summary[x].to_numpy(dtype=np.float64)
    low = summary["ci_low"].to_numpy(dtype=np.float64)
    high = summary["ci_high"].to_numpy(dtype=np.float64)
    ax.fill_between(
        xs, low, high, color=color, alpha=0.25, lw=0, label=band_label, zorder=2, gid="ci"
    )
    mean = summary["mean"].to_numpy(dtype=np.float64)
    ax.plot(xs, mean, color=color, lw=1.5, label=label, zorder=3, gid="mean")


def draw_mean_bars(
    ax: Axes, xs: np.ndarray, summary: pd.DataFrame, color: str, label: str | None
) -> None:
    """Mean points with CI error bars at ``xs``."""
    mean = summary["mean"].to_numpy(dtype=np.float64)
    low = mean - summary["ci_low"].to_numpy(dtype=np.float64)
    high = summary["ci_high"].to_numpy(dtype=np.float64) - mean
    ax.errorbar(
        xs,
        mean,
        yerr=np.vstack([low, high]),
        fmt="o",
        color=color,
        ms=4,
        capsize=2.5,
        lw=1.2,
        label=label,
        zorder=3,
        gid="mean",
    )


def trajectory(
    ax: Axes,
    frame: pd.DataFrame,
    y: str,
    bootstrap: Bootstrap,
    *,
    color: str = MEAN_COLOR,
    seed_color: str = SEED_COLOR,
    name: str = "",
) -> tuple[np.ndarray, int]:
    """Per-seed lines plus mean and CI band of ``y`` against ``update``.

    Returns the plotted update values (empty when nothing was plotted) and the number of seeds.
    A named group (several groups share an axis) leaves n out of its legend label to keep the
    legend within the column; the caller reports it instead.
    """
    data = finite_rows(frame, ["seed", "update", y], y)
    check_one_row_per_seed(data, ["seed", "update"])
    if data.empty:
        return np.empty(0), 0
    prefix = f"{name} " if name else ""
    n_seeds = draw_seed_lines(ax, data, "update", y, seed_color, f"{prefix}{PER_SEED_LABEL}")
    summary = mean_ci_by(data, "update", y, bootstrap)
    mean_label = f"{name} mean" if name else f"mean ({seeds_label(n_seeds)})"
    draw_mean_band(ax, summary, "update", color, mean_label, f"{prefix}{bootstrap.label}")
    return data["update"].to_numpy(dtype=np.float64), n_seeds


def update_axis(ax: Axes, updates: np.ndarray, ylabel: str, *, force_log: bool = False) -> bool:
    """Label a trajectory axis against updates, or mark it "no data"; True when it has data."""
    if updates.size == 0:
        no_data(ax, UPDATE_LABEL, ylabel)
        return False
    label_axes(ax, UPDATE_LABEL, ylabel)
    set_update_xscale(ax, updates, force_log=force_log)
    return True
