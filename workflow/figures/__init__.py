"""Paper figures for the history-residue study, drawn with matplotlib's object API.

Every figure function takes the per-seed tables the workflow already writes and returns a
``matplotlib.figure.Figure``; :func:`save_figure` writes it as PNG and PDF, atomically. Every
figure that draws a CI takes a :class:`workflow.stats.Bootstrap` (``Bootstrap.from_config(config
["statistics"])``), the same settings object the summaries use, so the resamples, seed and level
always come from the config.

The seed is the statistical unit throughout: per-seed values are drawn as thin lines or points,
and the mean carries a percentile bootstrap CI. Non-finite values are dropped per x value and
counted rather than raising, and empty or all-NaN inputs give an axis reading "no data",
because small configurations can legitimately leave seeds unmatched.

Layout: ``settings`` (sizes, colours, labels, style), ``tables`` (preparing the tables, mean
and CI per x), ``plotting`` (shared drawing and saving), and the figures by kind:
``trajectories``, ``endpoints``, ``probes``, ``stability``, ``sensitivity``.
"""

from __future__ import annotations

from workflow.figures.endpoints import layer_cka, noise_floor, rotated_vs_split
from workflow.figures.plotting import save_figure
from workflow.figures.probes import probe_differences
from workflow.figures.sensitivity import sensitivity_contrasts
from workflow.figures.settings import (
    COLUMN_WIDTH_IN,
    DOUBLE_WIDTH_IN,
    NO_DATA,
)
from workflow.figures.stability import lr_search
from workflow.figures.tables import mean_ci_by
from workflow.figures.trajectories import (
    activation_trajectories,
    behaviour_trajectories,
    h_repr_trajectories,
    long_horizon,
    order_vs_noise,
)

__all__ = [
    "COLUMN_WIDTH_IN",
    "DOUBLE_WIDTH_IN",
    "NO_DATA",
    "activation_trajectories",
    "behaviour_trajectories",
    "h_repr_trajectories",
    "layer_cka",
    "long_horizon",
    "lr_search",
    "mean_ci_by",
    "noise_floor",
    "order_vs_noise",
    "probe_differences",
    "rotated_vs_split",
    "save_figure",
    "sensitivity_contrasts",
]
