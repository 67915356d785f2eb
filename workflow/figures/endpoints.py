"""Figures at one endpoint per seed: CKA per layer, class-split vs rotated, the noise floor."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

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
    CKA_LABEL,
    CKA_LAYERS,
    COMPARISON_LABEL,
    FLOOR_COLOR,
    FONT_SIZE,
    H_REPR_LABEL,
    LAYER_LABEL,
    MEAN_COLOR,
    NOISE_FLOOR_NAMES,
    NOISE_FLOOR_TICKS,
    NOISE_FLOOR_TITLE,
    PER_SEED_LABEL,
    PROTOCOL_LABEL,
    PROTOCOL_NAMES,
    SEED_COLOR,
    seeds_label,
)
from workflow.figures.tables import (
    check_one_row_per_seed,
    filter_endpoint,
    finite_rows,
    mean_ci_by,
    require,
    seed_offsets,
)
from workflow.stats import Bootstrap
from workflow.summary import endpoint_label

# Noise floor: each endpoint's group (order effect, floor) starts this far right of the last.
_GROUP_STEP = 3.0


@paper_style
def layer_cka(
    per_seed: pd.DataFrame, endpoint: str, bootstrap: Bootstrap, *, title: str | None = None
) -> Figure:
    """Linear CKA per layer at one endpoint: jittered per-seed points and mean with CI bars.

    ``per_seed`` has columns ``seed, endpoint, status, cka_conv1, cka_conv2, cka_fc1,
    cka_logits``; only rows of ``endpoint`` with ``status == 'ok'`` are used.
    """
    fig, (ax,) = new_figure()
    long, n_excluded = _cka_by_layer(per_seed, endpoint)
    heading = title or endpoint_label(endpoint)
    if long.empty:
        no_data(ax, LAYER_LABEL, CKA_LABEL)
        return finish(fig, ax, f"{heading} ({seeds_label(0)})")
    jitter = long["seed"].map(seed_offsets(long["seed"].unique())).to_numpy(dtype=np.float64)
    positions = long["pos"].to_numpy(dtype=np.float64)
    draw_seed_points(ax, positions + jitter, long["cka"].to_numpy(dtype=np.float64))
    summary = mean_ci_by(long, "pos", "cka", bootstrap)
    # Mean bars sit beside the seed cloud so they do not hide individual points.
    bars_x = summary["pos"].to_numpy(dtype=np.float64) + 0.25
    draw_mean_bars(ax, bars_x, summary, MEAN_COLOR, f"mean ± {bootstrap.label}")
    ax.set_xticks(range(len(CKA_LAYERS)), labels=list(CKA_LAYERS))
    ax.set_xlim(-0.5, len(CKA_LAYERS) - 0.5)
    label_axes(ax, LAYER_LABEL, CKA_LABEL)
    excluded = f", {n_excluded} excluded" if n_excluded else ""
    counts = f"{seeds_label(long['seed'].nunique())}{excluded}"
    return finish(fig, ax, f"{heading} ({counts})", legend_cols=2)


def _cka_by_layer(per_seed: pd.DataFrame, endpoint: str) -> tuple[pd.DataFrame, int]:
    """Finite CKA values at ``endpoint`` as rows ``seed, layer, cka, pos``, and the number of
    the endpoint's rows excluded for a status other than ``ok``."""
    value_cols = [f"cka_{layer}" for layer in CKA_LAYERS]
    n_excluded = 0
    if not per_seed.empty and {"endpoint", "status"} <= set(per_seed.columns):
        at_endpoint = per_seed["endpoint"].astype(str) == str(endpoint)
        n_excluded = int((at_endpoint & (per_seed["status"] != "ok")).sum())
    rows = filter_endpoint(per_seed, endpoint, ["seed", *value_cols])
    long = rows.melt(id_vars="seed", value_vars=value_cols, var_name="layer", value_name="cka")
    long["pos"] = long["layer"].map({c: i for i, c in enumerate(value_cols)})
    long = long[np.isfinite(pd.to_numeric(long["cka"], errors="coerce").to_numpy(dtype=float))]
    check_one_row_per_seed(long, ["seed", "pos"])
    return long, n_excluded


@paper_style
def rotated_vs_split(
    split: pd.DataFrame,
    rotated: pd.DataFrame,
    endpoint: str,
    bootstrap: Bootstrap,
    *,
    title: str | None = None,
) -> Figure:
    """H_repr of the class-split and rotated protocols at one endpoint, seeds joined across.

    Both inputs have columns ``seed, endpoint, status, h_repr``; rows of ``endpoint`` with
    ``status == 'ok'`` are used. The same seed is joined by a line across protocols.
    """
    fig, (ax,) = new_figure()
    frames = [_h_repr_by_seed(frame, endpoint) for frame in (split, rotated)]
    names = zip(PROTOCOL_NAMES, frames, strict=True)
    counts = ", ".join(f"{name}: {seeds_label(s.size)}" for name, s in names)
    # Two lines: on one, the counts run past the column over the y label.
    heading = f"{title or endpoint_label(endpoint)}\n({counts})"
    if all(s.empty for s in frames):
        no_data(ax, PROTOCOL_LABEL, H_REPR_LABEL)
        return finish(fig, ax, heading)
    for s in sorted(frames[0].index.intersection(frames[1].index)):
        ax.plot([0, 1], [frames[0][s], frames[1][s]], color=SEED_COLOR, lw=0.5, zorder=1)
    for pos, values in enumerate(frames):
        if values.empty:
            continue
        # Legend entries from the first protocol that has values.
        labelled = pos == 0 or frames[0].empty
        draw_seed_points(
            ax,
            np.full(values.size, float(pos)),
            values.to_numpy(),
            PER_SEED_LABEL if labelled else None,
        )
        long = pd.DataFrame({"pos": pos, "h_repr": values.to_numpy()})
        summary = mean_ci_by(long, "pos", "h_repr", bootstrap)
        # Offset outward so the mean bar does not sit on the seed points and pairing lines.
        bar_x = np.array([pos + (-0.15 if pos == 0 else 0.15)])
        label = f"mean ± {bootstrap.label}" if labelled else None
        draw_mean_bars(ax, bar_x, summary, MEAN_COLOR, label)
    ax.set_xticks([0, 1], labels=list(PROTOCOL_NAMES))
    ax.set_xlim(-0.5, 1.5)
    label_axes(ax, PROTOCOL_LABEL, H_REPR_LABEL)
    return finish(fig, ax, heading, legend_cols=2)


def _h_repr_by_seed(frame: pd.DataFrame, endpoint: str) -> pd.Series:
    rows = filter_endpoint(frame, endpoint, ["seed", "h_repr"])
    rows = finite_rows(rows, ["seed", "h_repr"], "h_repr")
    check_one_row_per_seed(rows, ["seed"])
    return rows.set_index("seed")["h_repr"].astype(float)


@paper_style
def noise_floor(table: pd.DataFrame, bootstrap: Bootstrap, *, title: str | None = None) -> Figure:
    """Order effect against SGD noise floor per endpoint, each seed's pair joined by a line.

    ``table`` has columns ``seed, endpoint, h_order, h_floor`` where ``h_floor`` is the mean of
    the two same-order replicate H_repr values.
    """
    fig, (ax,) = new_figure()
    data = _noise_floor_rows(table)
    if data.empty:
        no_data(ax, COMPARISON_LABEL, H_REPR_LABEL)
        return finish(fig, ax, title)
    endpoints = list(pd.unique(data["endpoint"]))
    for i, endpoint in enumerate(endpoints):
        rows = data[data["endpoint"] == endpoint]
        xs = (_GROUP_STEP * i, _GROUP_STEP * i + 1.0)
        _draw_seed_pairs(ax, rows, xs, PER_SEED_LABEL if i == 0 else None)
        _draw_pair_means(ax, rows, xs, bootstrap, labelled=i == 0)
    _endpoint_ticks(ax, endpoints)
    label_axes(ax, COMPARISON_LABEL, H_REPR_LABEL)
    ax.set_ylim(bottom=0)
    heading = title or f"{NOISE_FLOOR_TITLE} ({seeds_label(data['seed'].nunique())})"
    return finish(fig, ax, heading, legend_cols=2)


def _noise_floor_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Rows with a finite order effect or floor, one per (seed, endpoint)."""
    columns = ["seed", "endpoint", "h_order", "h_floor"]
    if table.empty:
        return pd.DataFrame(columns=columns)
    require(table, columns)
    data = table[columns].copy()
    for col in ("h_order", "h_floor"):
        data[col] = pd.to_numeric(data[col], errors="coerce").astype(float)
    data = data[np.isfinite(data["h_order"]) | np.isfinite(data["h_floor"])]
    check_one_row_per_seed(data, ["seed", "endpoint"])
    return data


def _draw_seed_pairs(
    ax: Axes, rows: pd.DataFrame, xs: tuple[float, float], label: str | None
) -> None:
    """Each seed's order effect and floor as two points joined by a line (finite ones only)."""
    positions = np.array(xs)
    for _, row in rows.iterrows():
        pair = np.array([row["h_order"], row["h_floor"]], dtype=np.float64)
        shown = np.isfinite(pair)
        ax.plot(
            positions[shown],
            pair[shown],
            color=SEED_COLOR,
            lw=0.5,
            marker="o",
            ms=2.5,
            zorder=1,
            label=label,
            gid="seed",
        )
        label = None


def _draw_pair_means(
    ax: Axes, rows: pd.DataFrame, xs: tuple[float, float], bootstrap: Bootstrap, labelled: bool
) -> None:
    # Mean bars sit outside the pair so they do not cover the joining lines.
    means = (("h_order", MEAN_COLOR, -0.25), ("h_floor", FLOOR_COLOR, 0.25))
    for (col, color, side), x, name in zip(means, xs, NOISE_FLOOR_NAMES, strict=True):
        summary = mean_ci_by(rows.assign(_x=x), "_x", col, bootstrap)
        label = f"{name}, mean ± CI" if labelled else None
        draw_mean_bars(ax, np.array([x + side]), summary, color, label)


def _endpoint_ticks(ax: Axes, endpoints: list) -> None:
    """Order/floor ticks under each pair, and the endpoint's name centred under its group."""
    starts = [_GROUP_STEP * i for i in range(len(endpoints))]
    ax.set_xticks(
        [x + dx for x in starts for dx in (0.0, 1.0)], labels=list(NOISE_FLOOR_TICKS) * len(starts)
    )
    # Endpoint names as a second row of (tick-less) minor labels centred under each group.
    ax.set_xticks(
        [x + 0.5 for x in starts],
        # A line per clause, so that neighbouring groups' names never run into each other.
        labels=[endpoint_label(e).replace(", ", ",\n") for e in endpoints],
        minor=True,
    )
    ax.tick_params(axis="x", which="minor", length=0, pad=4 + 2.5 * FONT_SIZE)
    ax.set_xlim(-0.7, starts[-1] + 1.7)
