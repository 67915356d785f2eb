"""Paper figures for the history-residue study, drawn with matplotlib's object API.

Every function takes the per-seed tables the workflow already writes and returns a
``matplotlib.figure.Figure``; :func:`save_figure` writes it as PNG and PDF. Figures are built on
``Figure`` directly (never ``pyplot``) so no global figure registry or interactive backend is
involved, which keeps the module safe inside Snakemake jobs and tests running in parallel.

The seed is the statistical unit throughout: per-seed values are drawn as thin lines or points,
and the mean carries a percentile bootstrap CI from :func:`workflow.stats.bootstrap_ci`, with
``resamples``/``seed``/``level`` passed through so callers use the configured values. Non-finite
values are dropped per x value and counted rather than raising, and empty or all-NaN inputs give
an axis reading "no data", because small configurations can legitimately leave seeds unmatched.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from workflow.layers import LAYERS
from workflow.stats import bootstrap_ci

__all__ = [
    "activation_trajectories",
    "behaviour_trajectories",
    "h_repr_trajectories",
    "layer_cka",
    "long_horizon",
    "lr_search",
    "mean_ci_by",
    "noise_floor",
    "probe_differences",
    "rotated_vs_split",
    "save_figure",
]

# Column width of a two-column paper, and the full text width for two-panel figures.
COLUMN_WIDTH_IN = 3.5
DOUBLE_WIDTH_IN = 7.0
FIG_HEIGHT_IN = 2.6
FONT_SIZE = 8
PNG_DPI = 200

UPDATE_LABEL = "common-relaxation updates"
H_REPR_LABEL = r"$H_{\mathrm{repr}}$ = 1 − mean CKA(conv2, fc1)"
ACC_GAP_LABEL = "accuracy gap (pp)"
DISAGREEMENT_LABEL = "disagreement (% of test images)"
CKA_LABEL = r"linear CKA ($S_{ABC}$ vs $S_{BAC}$)"
NO_DATA = "no data"

# Beyond this horizon a linear x axis squeezes the early checkpoints, where most change happens.
LOG_X_THRESHOLD = 20_000
CKA_LAYERS = LAYERS
LONG_HORIZON_MARKS = (10_000, 25_000, 50_000)

SEED_COLOR = "0.6"
MEAN_COLOR = "C0"
DIVERGED_COLOR = "red"

# Applied while a figure is built and while it is saved: tick labels are created lazily at draw
# time, so the same settings must be active both times. Type 42 keeps PDF text editable.
_RC: dict[str, Any] = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE,
    "ytick.labelsize": FONT_SIZE,
    "legend.fontsize": FONT_SIZE,
    "figure.titlesize": FONT_SIZE,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,
    "lines.linewidth": 1.0,
    # Compact legend entries: the legend sits above a 3.5 in axis and must not overflow it.
    "legend.handlelength": 1.5,
    "legend.handletextpad": 0.5,
    "legend.columnspacing": 1.0,
}

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _paper_style(func: Callable[_P, _R]) -> Callable[_P, _R]:
    """Build the figure under the paper rc settings, restoring the caller's afterwards."""

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with mpl.rc_context(_RC):
            return func(*args, **kwargs)

    return wrapper


# ---------------------------------------------------------------------------------------------
# Saving
# ---------------------------------------------------------------------------------------------


def save_figure(fig: Figure, stem: Path) -> list[Path]:
    """Write ``stem.png`` (200 dpi) and ``stem.pdf`` atomically; return both paths.

    Each file is rendered to a hidden temporary name in the target folder and moved into place
    with ``os.replace``, so an interrupted job never leaves a truncated figure that looks done.
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for fmt in ("png", "pdf"):
        target = stem.with_suffix(f".{fmt}")
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            # No timestamps or software tags, so reruns give byte-identical files.
            metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None}
            with mpl.rc_context(_RC):
                fig.savefig(tmp, format=fmt, dpi=PNG_DPI, metadata=metadata)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        written.append(target)
    return written


# ---------------------------------------------------------------------------------------------
# Statistics helper
# ---------------------------------------------------------------------------------------------


def mean_ci_by(
    frame: pd.DataFrame,
    x: str,
    y: str,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
) -> pd.DataFrame:
    """Mean and bootstrap CI of ``y`` over rows (seeds) for each value of ``x``.

    Returns columns ``x, mean, ci_low, ci_high, n, n_dropped`` sorted by ``x``: ``n`` counts the
    finite values used and ``n_dropped`` the NaN/inf rows excluded. An ``x`` value whose values
    are all non-finite keeps a row with ``n == 0`` and NaN statistics so the gap stays visible.
    """
    columns = [x, "mean", "ci_low", "ci_high", "n", "n_dropped"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    _require(frame, [x, y])
    rows = []
    for key, group in frame.groupby(x, sort=True):
        values = pd.to_numeric(group[y], errors="coerce").to_numpy(dtype=np.float64)
        finite = values[np.isfinite(values)]
        low, high = bootstrap_ci(finite, resamples=resamples, seed=seed, level=level)
        rows.append(
            {
                x: key,
                "mean": float(finite.mean()) if finite.size else float("nan"),
                "ci_low": low,
                "ci_high": high,
                "n": int(finite.size),
                "n_dropped": int(values.size - finite.size),
            }
        )
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------------------------------------
# Internal drawing helpers
# ---------------------------------------------------------------------------------------------


def _require(frame: pd.DataFrame, columns: Sequence[str]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"missing column(s) {missing}; have {list(frame.columns)}")


def _finite_rows(frame: pd.DataFrame, columns: Sequence[str], y: str) -> pd.DataFrame:
    """Rows with a finite ``y``; an empty frame (even one without columns) gives an empty one."""
    if frame.empty:
        return pd.DataFrame(columns=list(columns))
    _require(frame, columns)
    values = pd.to_numeric(frame[y], errors="coerce")
    return frame.loc[np.isfinite(values.to_numpy(dtype=np.float64)), list(columns)]


def _check_one_row_per_seed(frame: pd.DataFrame, keys: Sequence[str]) -> None:
    # Duplicated (seed, x) rows would count a seed twice and shrink the CI dishonestly.
    if not frame.empty and frame.duplicated(subset=list(keys)).any():
        raise ValueError(f"expected one row per {tuple(keys)}; found duplicates")


def _new_figure(ncols: int = 1, width: float | None = None) -> tuple[Figure, list[Axes]]:
    width = width if width is not None else (COLUMN_WIDTH_IN if ncols == 1 else DOUBLE_WIDTH_IN)
    # Constrained layout also makes room for legends placed outside the axes.
    fig = Figure(figsize=(width, FIG_HEIGHT_IN), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    for ax in axes:
        # Stored in the axis' tick keywords, so ticks created later at draw time keep the size.
        ax.tick_params(labelsize=FONT_SIZE)
    return fig, axes


def _no_data(ax: Axes, xlabel: str, ylabel: str, note: str = NO_DATA) -> None:
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.text(0.5, 0.5, note, transform=ax.transAxes, ha="center", va="center", color="0.4")
    ax.set_xticks([])
    ax.set_yticks([])


def _set_update_xscale(ax: Axes, updates: np.ndarray, force_log: bool = False) -> None:
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


def _draw_seed_lines(
    ax: Axes, frame: pd.DataFrame, x: str, y: str, color: str, label: str | None
) -> int:
    """One thin line per seed; returns the number of seeds drawn."""
    n_seeds = 0
    for _, group in frame.groupby("seed", sort=True):
        group = group.sort_values(x)
        ax.plot(
            group[x].to_numpy(dtype=np.float64),
            group[y].to_numpy(dtype=np.float64),
            color=color,
            lw=0.5,
            alpha=0.7,
            label=label if n_seeds == 0 else None,
            zorder=1,
            gid="seed",
        )
        n_seeds += 1
    return n_seeds


def _draw_mean_ci(
    ax: Axes,
    summary: pd.DataFrame,
    x: str,
    color: str,
    label: str,
    level: float,
    label_prefix: str = "",
) -> None:
    """Mean line over a shaded CI band; gids let tests and callers find the artists."""
    xs = summary[x].to_numpy(dtype=np.float64)
    ax.fill_between(
        xs,
        summary["ci_low"].to_numpy(dtype=np.float64),
        summary["ci_high"].to_numpy(dtype=np.float64),
        color=color,
        alpha=0.25,
        lw=0,
        label=f"{label_prefix}{level:.0%} CI",
        zorder=2,
        gid="ci",
    )
    ax.plot(
        xs,
        summary["mean"].to_numpy(dtype=np.float64),
        color=color,
        lw=1.5,
        label=label,
        zorder=3,
        gid="mean",
    )


def _trajectory(
    ax: Axes,
    frame: pd.DataFrame,
    y: str,
    *,
    resamples: int,
    seed: int,
    level: float,
    color: str = MEAN_COLOR,
    seed_color: str = SEED_COLOR,
    name: str = "",
) -> tuple[np.ndarray, int]:
    """Per-seed lines plus mean and CI band of ``y`` against ``update``.

    Returns the plotted update values (empty when nothing was plotted) and the number of seeds.
    A named group (several groups share an axis) leaves n out of its legend label to keep the
    legend within the column; the caller reports it instead.
    """
    data = _finite_rows(frame, ["seed", "update", y], y)
    _check_one_row_per_seed(data, ["seed", "update"])
    if data.empty:
        return np.empty(0), 0
    prefix = f"{name} " if name else ""
    n_seeds = _draw_seed_lines(ax, data, "update", y, seed_color, f"{prefix}per seed")
    summary = mean_ci_by(data, "update", y, resamples=resamples, seed=seed, level=level)
    mean_label = f"{name} mean" if name else f"mean (n = {n_seeds} seeds)"
    _draw_mean_ci(ax, summary, "update", color, mean_label, level, prefix)
    return data["update"].to_numpy(dtype=np.float64), n_seeds


def _outside_legend(fig: Figure, ax: Axes, ncols: int = 3) -> None:
    # Above the axes rather than inside them, so the legend never hides a trajectory.
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles, strict=True))  # first handle per label wins
    if unique:
        fig.legend(list(unique.values()), list(unique), loc="outside upper center", ncols=ncols)


def _mean_ci_errorbar(
    ax: Axes, xs: np.ndarray, summary: pd.DataFrame, color: str, label: str | None
) -> None:
    mean = summary["mean"].to_numpy(dtype=np.float64)
    yerr = np.vstack(
        [
            mean - summary["ci_low"].to_numpy(dtype=np.float64),
            summary["ci_high"].to_numpy(dtype=np.float64) - mean,
        ]
    )
    ax.errorbar(
        xs,
        mean,
        yerr=yerr,
        fmt="o",
        color=color,
        ms=4,
        capsize=2.5,
        lw=1.2,
        label=label,
        zorder=3,
        gid="mean",
    )


def _seed_offsets(seeds: Sequence[Any], width: float = 0.25) -> dict[Any, float]:
    """Deterministic horizontal jitter: each seed keeps the same offset in every group."""
    ordered = sorted(seeds)
    if len(ordered) <= 1:
        return {s: 0.0 for s in ordered}
    return dict(zip(ordered, np.linspace(-width / 2, width / 2, len(ordered)), strict=True))


def _filter_endpoint(frame: pd.DataFrame, endpoint: str, columns: Sequence[str]) -> pd.DataFrame:
    """Rows of ``endpoint`` with ``status == 'ok'``; endpoints compare as strings."""
    if frame.empty:
        return pd.DataFrame(columns=list(columns))
    _require(frame, ["endpoint", "status", *columns])
    keep = (frame["endpoint"].astype(str) == str(endpoint)) & (frame["status"] == "ok")
    return frame.loc[keep, list(columns)]


# ---------------------------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------------------------


@_paper_style
def h_repr_trajectories(
    comparisons: pd.DataFrame,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """H_repr against common-relaxation updates: per-seed lines, mean and bootstrap CI band.

    ``comparisons`` has columns ``seed, update, h_repr`` (one row per seed and update).
    """
    fig, (ax,) = _new_figure()
    updates, _ = _trajectory(ax, comparisons, "h_repr", resamples=resamples, seed=seed, level=level)
    if updates.size == 0:
        _no_data(ax, UPDATE_LABEL, H_REPR_LABEL)
    else:
        ax.set_xlabel(UPDATE_LABEL)
        ax.set_ylabel(H_REPR_LABEL)
        _set_update_xscale(ax, updates)
        _outside_legend(fig, ax)
    if title:
        ax.set_title(title)
    return fig


@_paper_style
def behaviour_trajectories(
    comparisons: pd.DataFrame,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Accuracy gap and prediction disagreement against updates, side by side.

    ``comparisons`` has columns ``seed, update, acc_gap_pp, disagreement_pct``.
    """
    fig, axes = _new_figure(ncols=2)
    any_data = False
    for ax, column, ylabel in zip(
        axes,
        ("acc_gap_pp", "disagreement_pct"),
        (ACC_GAP_LABEL, DISAGREEMENT_LABEL),
        strict=True,
    ):
        updates, _ = _trajectory(
            ax, comparisons, column, resamples=resamples, seed=seed, level=level
        )
        if updates.size == 0:
            _no_data(ax, UPDATE_LABEL, ylabel)
            continue
        any_data = True
        ax.set_xlabel(UPDATE_LABEL)
        ax.set_ylabel(ylabel)
        _set_update_xscale(ax, updates)
        # Gaps and disagreement are non-negative; anchoring at 0 shows how close to zero they get.
        ax.set_ylim(bottom=0)
    if any_data:
        populated = next(ax for ax in axes if ax.get_legend_handles_labels()[0])
        _outside_legend(fig, populated)
    if title:
        fig.suptitle(title)
    return fig


@_paper_style
def layer_cka(
    per_seed: pd.DataFrame,
    endpoint: str,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Linear CKA per layer at one endpoint: jittered per-seed points and mean with CI bars.

    ``per_seed`` has columns ``seed, endpoint, status, cka_conv1, cka_conv2, cka_fc1,
    cka_logits``; only rows of ``endpoint`` with ``status == 'ok'`` are used.
    """
    fig, (ax,) = _new_figure()
    value_cols = [f"cka_{layer}" for layer in CKA_LAYERS]
    n_excluded = 0
    if not per_seed.empty and {"endpoint", "status"} <= set(per_seed.columns):
        at_endpoint = per_seed["endpoint"].astype(str) == str(endpoint)
        n_excluded = int((at_endpoint & (per_seed["status"] != "ok")).sum())
    rows = _filter_endpoint(per_seed, endpoint, ["seed", *value_cols])
    long = rows.melt(id_vars="seed", value_vars=value_cols, var_name="layer", value_name="cka")
    long["pos"] = long["layer"].map({c: i for i, c in enumerate(value_cols)})
    long = long[np.isfinite(pd.to_numeric(long["cka"], errors="coerce").to_numpy(dtype=float))]
    _check_one_row_per_seed(long, ["seed", "pos"])
    heading = title or f"{endpoint}"
    if long.empty:
        _no_data(ax, "layer", CKA_LABEL)
        ax.set_title(f"{heading} (n = 0 seeds)")
        return fig
    offsets = _seed_offsets(long["seed"].unique())
    jitter = long["seed"].map(offsets).to_numpy(dtype=np.float64)
    ax.scatter(
        long["pos"].to_numpy(dtype=np.float64) + jitter,
        long["cka"].to_numpy(dtype=np.float64),
        s=8,
        color=SEED_COLOR,
        label="per seed",
        zorder=2,
        gid="seed",
    )
    summary = mean_ci_by(long, "pos", "cka", resamples=resamples, seed=seed, level=level)
    # Mean bars sit beside the seed cloud so they do not hide individual points.
    _mean_ci_errorbar(
        ax,
        summary["pos"].to_numpy(dtype=np.float64) + 0.25,
        summary,
        MEAN_COLOR,
        f"mean ± {level:.0%} CI",
    )
    ax.set_xticks(range(len(CKA_LAYERS)), labels=list(CKA_LAYERS))
    ax.set_xlim(-0.5, len(CKA_LAYERS) - 0.5)
    ax.set_xlabel("layer")
    ax.set_ylabel(CKA_LABEL)
    n_seeds = long["seed"].nunique()
    excluded = f", {n_excluded} excluded" if n_excluded else ""
    ax.set_title(f"{heading} (n = {n_seeds} seeds{excluded})")
    _outside_legend(fig, ax, ncols=2)
    return fig


@_paper_style
def long_horizon(
    comparisons: pd.DataFrame,
    *,
    marks: Sequence[int] = LONG_HORIZON_MARKS,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """H_repr up to the long horizon on a symlog x axis, with the reported updates marked.

    ``comparisons`` has columns ``seed, update, h_repr``. Marks beyond the last plotted update
    are skipped, so shortened test configurations do not stretch the axis.
    """
    fig, (ax,) = _new_figure()
    updates, _ = _trajectory(ax, comparisons, "h_repr", resamples=resamples, seed=seed, level=level)
    if updates.size == 0:
        _no_data(ax, UPDATE_LABEL, H_REPR_LABEL)
    else:
        ax.set_xlabel(UPDATE_LABEL)
        ax.set_ylabel(H_REPR_LABEL)
        _set_update_xscale(ax, updates, force_log=True)
        top = float(np.max(updates))
        for mark in marks:
            if mark > top:
                continue
            ax.axvline(mark, color="0.3", ls=":", lw=0.8, zorder=0)
            # Label in axes-fraction y just above the frame, so it never sits on the data.
            ax.text(
                mark,
                1.01,
                f"{mark // 1000}k" if mark % 1000 == 0 else f"{mark}",
                transform=ax.get_xaxis_transform(),
                ha="center",
                va="bottom",
            )
        _outside_legend(fig, ax)
    if title:
        ax.set_title(title)
    return fig


@_paper_style
def probe_differences(
    probes: pd.DataFrame,
    margin_pp: float,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Probe accuracy difference (S_ABC − S_BAC) against probe budget, with the TOST margin.

    ``probes`` has columns ``seed, budget, diff_pp`` (one row per model seed and budget,
    already averaged over probe seeds). The probe study's per-seed table also has, at a budget
    with extra probe seeds, the primary probe seed's row; with an ``n_probe_seeds`` column only
    the row over the most probe seeds of each (seed, budget) is plotted.
    """
    fig, (ax,) = _new_figure()
    xlabel = "probe training examples per class"
    ylabel = r"probe accuracy $S_{ABC}$ − $S_{BAC}$ (pp)"
    if not probes.empty and "n_probe_seeds" in probes.columns:
        most = probes.groupby(["seed", "budget"])["n_probe_seeds"].transform("max")
        probes = probes[probes["n_probe_seeds"] == most]
    data = _finite_rows(probes, ["seed", "budget", "diff_pp"], "diff_pp")
    data = data[pd.to_numeric(data["budget"], errors="coerce") > 0]
    _check_one_row_per_seed(data, ["seed", "budget"])
    if data.empty:
        _no_data(ax, xlabel, ylabel)
        if title:
            ax.set_title(title)
        return fig
    # Reference lines first and underneath: zero difference and the equivalence margin.
    ax.axhline(0.0, color="0.3", ls="--", lw=0.8, zorder=0)
    for sign in (-1.0, 1.0):
        ax.axhline(
            sign * margin_pp,
            color="C3",
            ls="--",
            lw=0.8,
            zorder=0,
            label=f"±{margin_pp:g} pp margin" if sign > 0 else None,
        )
    budgets = data["budget"].to_numpy(dtype=np.float64)
    # Multiplicative jitter keeps points evenly spread on the log axis.
    offsets = _seed_offsets(data["seed"].unique(), width=0.12)
    jitter = 10.0 ** data["seed"].map(offsets).to_numpy(dtype=np.float64)
    ax.scatter(
        budgets * jitter,
        data["diff_pp"].to_numpy(dtype=np.float64),
        s=8,
        color=SEED_COLOR,
        label="per seed",
        zorder=2,
        gid="seed",
    )
    summary = mean_ci_by(data, "budget", "diff_pp", resamples=resamples, seed=seed, level=level)
    xs = summary["budget"].to_numpy(dtype=np.float64)
    ax.plot(xs, summary["mean"].to_numpy(dtype=np.float64), color=MEAN_COLOR, lw=0.8, zorder=3)
    n_seeds = data["seed"].nunique()
    _mean_ci_errorbar(ax, xs, summary, MEAN_COLOR, f"mean ± {level:.0%} CI (n = {n_seeds})")
    ax.set_xscale("log")
    ax.set_xticks(xs, labels=[f"{b:g}" for b in xs])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(xs.min() / 1.6, xs.max() * 1.6)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _outside_legend(fig, ax, ncols=2)
    if title:
        ax.set_title(title)
    return fig


@_paper_style
def activation_trajectories(
    relu: pd.DataFrame,
    leaky: pd.DataFrame,
    lr: float,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """H_repr against updates for ReLU and LeakyReLU networks trained at the same rate.

    Both inputs have columns ``seed, update, h_repr``.
    """
    fig, (ax,) = _new_figure()
    plotted = []
    counts = []
    for frame, name, color in ((relu, "ReLU", "C0"), (leaky, "LeakyReLU", "C1")):
        updates, n_seeds = _trajectory(
            ax,
            frame,
            "h_repr",
            resamples=resamples,
            seed=seed,
            level=level,
            color=color,
            seed_color=color,
            name=name,
        )
        plotted.append(updates)
        counts.append(n_seeds)
    updates = np.concatenate(plotted)
    n_text = f"n = {counts[0]}" if counts[0] == counts[1] else f"n = {counts[0]}/{counts[1]}"
    heading = f"{title or 'ReLU vs LeakyReLU'}, lr = {lr:g} ({n_text} seeds)"
    if updates.size == 0:
        _no_data(ax, UPDATE_LABEL, H_REPR_LABEL)
    else:
        # Per-seed lines in each group's colour are faint; lighten them further than grey ones.
        for line in ax.get_lines():
            if line.get_gid() == "seed":
                line.set_alpha(0.35)
        ax.set_xlabel(UPDATE_LABEL)
        ax.set_ylabel(H_REPR_LABEL)
        _set_update_xscale(ax, updates)
        # Two columns filled column-first: one column per activation function.
        _outside_legend(fig, ax, ncols=2)
    ax.set_title(heading)
    return fig


@_paper_style
def lr_search(
    search: pd.DataFrame, selected: float | None = None, *, title: str | None = None
) -> Figure:
    """Stability search: final loss of each short trace against its learning rate.

    ``search`` has columns ``lr, seed, order, finite, final_loss``. Traces that are not finite
    (or whose loss is NaN) are drawn as red crosses along the top of the axis, with their count.
    """
    fig, (ax,) = _new_figure()
    xlabel = "learning rate"
    ylabel = "final loss (cross-entropy)"
    columns = ["lr", "seed", "order", "finite", "final_loss"]
    if search.empty:
        _no_data(ax, xlabel, ylabel)
        if title:
            ax.set_title(title)
        return fig
    _require(search, columns)
    lr = pd.to_numeric(search["lr"], errors="coerce").to_numpy(dtype=np.float64)
    loss = pd.to_numeric(search["final_loss"], errors="coerce").to_numpy(dtype=np.float64)
    # The finite flag is authoritative; a NaN loss on a "finite" trace cannot be placed either.
    ok = search["finite"].astype(bool).to_numpy() & np.isfinite(loss)
    valid_lr = np.isfinite(lr)
    if not valid_lr.any():
        _no_data(ax, xlabel, ylabel)
        if title:
            ax.set_title(title)
        return fig
    lrs = np.unique(lr[valid_lr])
    spacing = float(np.min(np.diff(lrs))) if lrs.size > 1 else max(abs(float(lrs[0])), 1e-12)
    orders = [str(o) for o in pd.unique(search["order"])]
    for i, order in enumerate(orders):
        keep = ok & valid_lr & (search["order"].astype(str) == order).to_numpy()
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
                label=f"order {order}",
                zorder=2,
            )
    bad = ~ok & valid_lr
    if bad.any():
        # Diverged traces have no loss to place; pin them to the top edge (axes fraction y).
        trans = ax.get_xaxis_transform()
        bad_lr = lr[bad]
        ax.scatter(
            bad_lr,
            np.full(bad_lr.size, 0.95),
            transform=trans,
            marker="x",
            color=DIVERGED_COLOR,
            s=20,
            lw=1.0,
            label="diverged",
            zorder=3,
            clip_on=False,
            gid="diverged",
        )
        values, counts = np.unique(bad_lr, return_counts=True)
        for value, count in zip(values, counts, strict=True):
            ax.text(
                value,
                0.88,
                f"{count}",
                transform=trans,
                ha="center",
                va="top",
                color=DIVERGED_COLOR,
            )
        if ok.any():
            # Leave headroom so finite markers stay below the diverged row.
            low, high = np.nanmin(loss[ok]), np.nanmax(loss[ok])
            span = high - low if high > low else max(abs(high), 1.0)
            ax.set_ylim(low - 0.1 * span, high + 0.45 * span)
    if selected is not None:
        ax.axvline(
            selected, color="k", ls="--", lw=0.8, label=f"selected lr = {selected:g}", zorder=1
        )
    ax.set_xticks(lrs, labels=[f"{v:g}" for v in lrs])
    ax.set_xlim(lrs.min() - 0.5 * spacing, lrs.max() + 0.5 * spacing)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _outside_legend(fig, ax, ncols=2)
    if title:
        ax.set_title(title)
    return fig


@_paper_style
def rotated_vs_split(
    split: pd.DataFrame,
    rotated: pd.DataFrame,
    endpoint: str,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """H_repr of the class-split and rotated protocols at one endpoint, seeds joined across.

    Both inputs have columns ``seed, endpoint, status, h_repr``; rows of ``endpoint`` with
    ``status == 'ok'`` are used. The same seed is joined by a line across protocols.
    """
    fig, (ax,) = _new_figure()
    names = ("class split", "rotated")
    frames = []
    for frame in (split, rotated):
        rows = _filter_endpoint(frame, endpoint, ["seed", "h_repr"])
        rows = _finite_rows(rows, ["seed", "h_repr"], "h_repr")
        _check_one_row_per_seed(rows, ["seed"])
        frames.append(rows.set_index("seed")["h_repr"].astype(float))
    heading = title or f"{endpoint}"
    counts = ", ".join(f"{name} n = {s.size}" for name, s in zip(names, frames, strict=True))
    if all(s.empty for s in frames):
        _no_data(ax, "protocol", H_REPR_LABEL)
        ax.set_title(f"{heading} ({counts})")
        return fig
    both = frames[0].index.intersection(frames[1].index)
    for s in sorted(both):
        ax.plot([0, 1], [frames[0][s], frames[1][s]], color=SEED_COLOR, lw=0.5, zorder=1)
    for pos, values in enumerate(frames):
        if values.empty:
            continue
        ax.scatter(
            np.full(values.size, float(pos)),
            values.to_numpy(),
            s=8,
            color=SEED_COLOR,
            label="per seed" if pos == 0 or frames[0].empty else None,
            zorder=2,
            gid="seed",
        )
        long = pd.DataFrame({"pos": pos, "h_repr": values.to_numpy()})
        summary = mean_ci_by(long, "pos", "h_repr", resamples=resamples, seed=seed, level=level)
        # Offset outward so the mean bar does not sit on the seed points and pairing lines.
        side = -0.15 if pos == 0 else 0.15
        _mean_ci_errorbar(
            ax,
            np.array([pos + side]),
            summary,
            MEAN_COLOR,
            f"mean ± {level:.0%} CI" if pos == 0 or frames[0].empty else None,
        )
    ax.set_xticks([0, 1], labels=list(names))
    ax.set_xlim(-0.5, 1.5)
    ax.set_xlabel("protocol")
    ax.set_ylabel(H_REPR_LABEL)
    ax.set_title(f"{heading} ({counts})")
    _outside_legend(fig, ax, ncols=2)
    return fig


@_paper_style
def noise_floor(
    table: pd.DataFrame,
    *,
    resamples: int = 10_000,
    seed: int = 12345,
    level: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Order effect against SGD noise floor per endpoint, each seed's pair joined by a line.

    ``table`` has columns ``seed, endpoint, h_order, h_floor`` where ``h_floor`` is the mean of
    the two same-order replicate H_repr values.
    """
    fig, (ax,) = _new_figure()
    xlabel = "comparison, by endpoint"
    columns = ["seed", "endpoint", "h_order", "h_floor"]
    if table.empty:
        data = pd.DataFrame(columns=columns)
    else:
        _require(table, columns)
        data = table[columns].copy()
        for col in ("h_order", "h_floor"):
            data[col] = pd.to_numeric(data[col], errors="coerce").astype(float)
        data = data[np.isfinite(data["h_order"]) | np.isfinite(data["h_floor"])]
    _check_one_row_per_seed(data, ["seed", "endpoint"])
    if data.empty:
        _no_data(ax, xlabel, H_REPR_LABEL)
        if title:
            ax.set_title(title)
        return fig
    endpoints = list(pd.unique(data["endpoint"]))
    ticks: list[float] = []
    tick_labels: list[str] = []
    first = True
    for i, endpoint in enumerate(endpoints):
        rows = data[data["endpoint"] == endpoint]
        base = 3.0 * i
        order_x, floor_x = base, base + 1.0
        for _, row in rows.iterrows():
            pair = np.array([row["h_order"], row["h_floor"]], dtype=np.float64)
            xs = np.array([order_x, floor_x])
            shown = np.isfinite(pair)
            ax.plot(
                xs[shown],
                pair[shown],
                color=SEED_COLOR,
                lw=0.5,
                marker="o",
                ms=2.5,
                zorder=1,
                label="per seed" if first else None,
                gid="seed",
            )
            first = False
        for col, x in (("h_order", order_x), ("h_floor", floor_x)):
            summary = mean_ci_by(
                rows.assign(_x=x), "_x", col, resamples=resamples, seed=seed, level=level
            )
            color = MEAN_COLOR if col == "h_order" else "C2"
            # Mean bars sit outside the pair so they do not cover the joining lines.
            side = -0.25 if col == "h_order" else 0.25
            label = None
            if i == 0:
                label = "order effect" if col == "h_order" else "noise floor"
                label = f"{label}, mean ± CI"
            _mean_ci_errorbar(ax, np.array([x + side]), summary, color, label)
        ticks += [order_x, floor_x]
        tick_labels += ["order", "floor"]
    ax.set_xticks(ticks, labels=tick_labels)
    # Endpoint names as a second row of (tick-less) minor labels centred under each group.
    centres = [3.0 * i + 0.5 for i in range(len(endpoints))]
    ax.set_xticks(centres, labels=[str(e) for e in endpoints], minor=True)
    ax.tick_params(axis="x", which="minor", length=0, pad=4 + 2.5 * FONT_SIZE)
    ax.set_xlim(-0.7, 3.0 * (len(endpoints) - 1) + 1.7)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(H_REPR_LABEL)
    ax.set_ylim(bottom=0)
    n_seeds = data["seed"].nunique()
    ax.set_title(title or f"order effect vs same-order noise floor (n = {n_seeds} seeds)")
    _outside_legend(fig, ax, ncols=2)
    return fig
