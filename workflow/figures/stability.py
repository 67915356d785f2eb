"""The learning-rate stability search: each short trace's final loss against its rate."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from workflow.figures.plotting import finish, label_axes, new_figure, no_data, paper_style
from workflow.figures.settings import (
    DIVERGED_COLOR,
    DIVERGED_LABEL,
    FINAL_LOSS_LABEL,
    LR_LABEL,
)
from workflow.figures.tables import require

SEARCH_COLUMNS = ("lr", "seed", "order", "finite", "final_loss")
# Diverged traces have no loss to place: markers and counts sit at these axes-fraction heights.
_DIVERGED_Y, _COUNT_Y = 0.95, 0.88


@paper_style
def lr_search(
    search: pd.DataFrame, selected: float | None = None, *, title: str | None = None
) -> Figure:
    """Stability search: final loss of each short trace against its learning rate.

    ``search`` has columns ``lr, seed, order, finite, final_loss``. Traces that are not finite
    (or whose loss is NaN) are drawn as red crosses along the top of the axis, with their count.
    The figure draws no CI, so it takes no bootstrap settings.
    """
    fig, (ax,) = new_figure()
    arrays = _search_arrays(search)
    if arrays is None:
        no_data(ax, LR_LABEL, FINAL_LOSS_LABEL)
        return finish(fig, ax, title)
    lr, loss, ok = arrays
    lrs = np.unique(lr[np.isfinite(lr)])
    spacing = float(np.min(np.diff(lrs))) if lrs.size > 1 else max(abs(float(lrs[0])), 1e-12)
    _draw_orders(ax, search["order"], lr, loss, ok & np.isfinite(lr), spacing)
    bad = ~ok & np.isfinite(lr)
    if bad.any():
        _draw_diverged(ax, lr[bad])
        if ok.any():
            # Leave headroom so finite markers stay below the diverged row.
            low, high = np.nanmin(loss[ok]), np.nanmax(loss[ok])
            span = high - low if high > low else max(abs(high), 1.0)
            ax.set_ylim(low - 0.1 * span, high + 0.45 * span)
    if selected is not None:
        label = f"selected lr = {selected:g}"
        ax.axvline(selected, color="k", ls="--", lw=0.8, label=label, zorder=1)
    ax.set_xticks(lrs, labels=[f"{v:g}" for v in lrs])
    ax.set_xlim(lrs.min() - 0.5 * spacing, lrs.max() + 0.5 * spacing)
    label_axes(ax, LR_LABEL, FINAL_LOSS_LABEL)
    return finish(fig, ax, title, legend_cols=2)


def _search_arrays(search: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Rates, final losses and which traces are placeable; None when no rate is finite."""
    if search.empty:
        return None
    require(search, SEARCH_COLUMNS)
    lr = pd.to_numeric(search["lr"], errors="coerce").to_numpy(dtype=np.float64)
    loss = pd.to_numeric(search["final_loss"], errors="coerce").to_numpy(dtype=np.float64)
    # The finite flag is authoritative; a NaN loss on a "finite" trace cannot be placed either.
    ok = search["finite"].astype(bool).to_numpy() & np.isfinite(loss)
    return (lr, loss, ok) if np.isfinite(lr).any() else None


def _draw_orders(
    ax: Axes, order: pd.Series, lr: np.ndarray, loss: np.ndarray, ok: np.ndarray, spacing: float
) -> None:
    """The placeable traces, one marker and colour per order."""
    orders = [str(o) for o in pd.unique(order)]
    for i, name in enumerate(orders):
        keep = ok & (order.astype(str) == name).to_numpy()
        # Orders side by side around each candidate rate, so equal losses stay distinguishable.
        shift = (i - (len(orders) - 1) / 2) * 0.12 * spacing
        if keep.any():
            ax.scatter(
                lr[keep] + shift,
                loss[keep],
                s=12,
                marker="os^v"[i % 4],
                facecolor="none",
                edgecolor=f"C{i}",
                lw=0.8,
                label=f"order {name}",
                zorder=2,
            )


def _draw_diverged(ax: Axes, bad_lr: np.ndarray) -> None:
    """Crosses along the top edge at each diverged trace's rate, with the count per rate."""
    trans = ax.get_xaxis_transform()
    ax.scatter(
        bad_lr,
        np.full(bad_lr.size, _DIVERGED_Y),
        transform=trans,
        marker="x",
        color=DIVERGED_COLOR,
        s=20,
        lw=1.0,
        label=DIVERGED_LABEL,
        zorder=3,
        clip_on=False,
        gid="diverged",
    )
    values, counts = np.unique(bad_lr, return_counts=True)
    for value, count in zip(values, counts, strict=True):
        ax.text(
            value,
            _COUNT_Y,
            f"{count}",
            transform=trans,
            ha="center",
            va="top",
            color=DIVERGED_COLOR,
        )
