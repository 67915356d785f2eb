"""Tests for workflow.figures: every figure builds, saves, and survives empty or NaN input.

Synthetic per-seed tables (3 seeds, a few updates) stand in for workflow outputs; resamples are
kept small so the whole module runs in a few seconds.
"""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from workflow import figures
from workflow.layers import LAYERS
from workflow.provenance import library_files
from workflow.stats import Bootstrap, bootstrap_ci

FAST = Bootstrap(resamples=200, seed=12345, level=0.95)
SEEDS = (101, 202, 303)
UPDATES = (0, 250, 500, 1000, 2000)
LONG_UPDATES = (0, 1000, 10_000, 25_000, 50_000)
ENDPOINTS = ("matched", "10000")


def _comparisons(updates: tuple[int, ...] = UPDATES, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for s in SEEDS:
        for u in updates:
            decay = np.exp(-u / 1000)
            rows.append(
                {
                    "seed": s,
                    "update": u,
                    "h_repr": 0.05 + 0.3 * decay + 0.02 * rng.random(),
                    "acc_gap_pp": 10 * decay + 0.1 * rng.random(),
                    "disagreement_pct": 20 * decay + 0.5 * rng.random(),
                }
            )
    return pd.DataFrame(rows)


def _per_seed_cka() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for endpoint in ENDPOINTS:
        for s in SEEDS:
            row = {"seed": s, "endpoint": endpoint, "status": "ok", "h_repr": 0.1 * rng.random()}
            for layer in LAYERS:
                row[f"cka_{layer}"] = 0.8 + 0.2 * rng.random()
            rows.append(row)
    # An unmatched seed must be excluded (its values would otherwise pull the mean).
    rows.append({"seed": 404, "endpoint": "matched", "status": "unmatched", "h_repr": np.nan})
    return pd.DataFrame(rows)


def _probes() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    return pd.DataFrame(
        [
            {"seed": s, "budget": b, "diff_pp": rng.normal(0, 1)}
            for s in SEEDS
            for b in (25, 50, 100, 500)
        ]
    )


def _search() -> pd.DataFrame:
    rows = []
    for lr in (0.05, 0.045, 0.04):
        for s in SEEDS:
            for order in ("ABC", "BAC"):
                diverged = lr == 0.05 and s == 101
                rows.append(
                    {
                        "lr": lr,
                        "seed": s,
                        "order": order,
                        "finite": not diverged,
                        "final_loss": np.nan if diverged else 0.1 + lr,
                    }
                )
    return pd.DataFrame(rows)


def _noise_table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        [
            {
                "seed": s,
                "endpoint": e,
                "h_order": 0.1 + 0.05 * rng.random(),
                "h_floor": 0.03 + 0.01 * rng.random(),
            }
            for e in ENDPOINTS
            for s in SEEDS
        ]
    )


# Each builder gets the same kind of table in two states: populated, and emptied/NaN-ed.
BUILDERS: dict[str, Callable[[bool], Figure]] = {}


def _builder(name: str) -> Callable[[Callable[[bool], Figure]], Callable[[bool], Figure]]:
    def register(func: Callable[[bool], Figure]) -> Callable[[bool], Figure]:
        BUILDERS[name] = func
        return func

    return register


def _blank(frame: pd.DataFrame, columns: list[str], empty: bool) -> pd.DataFrame:
    """The frame with ``columns`` set to NaN when ``empty``; else unchanged."""
    return frame.assign(**{c: np.nan for c in columns}) if empty else frame


@_builder("h_repr_trajectories")
def _h(empty: bool) -> Figure:
    return figures.h_repr_trajectories(
        _blank(_comparisons(), ["h_repr"], empty), FAST, title="main"
    )


def _order_vs_noise_table() -> pd.DataFrame:
    frame = _comparisons().rename(columns={"h_repr": "h_order"})
    frame["h_floor"] = frame["h_order"] * 0.8
    frame["excess"] = frame["h_order"] - frame["h_floor"]
    return frame[["seed", "update", "h_order", "h_floor", "excess"]]


@_builder("order_vs_noise")
def _o(empty: bool) -> Figure:
    frame = _blank(_order_vs_noise_table(), ["h_order", "h_floor", "excess"], empty)
    return figures.order_vs_noise(frame, pd.Series([250, 500, 1000]), FAST)


def test_order_vs_noise_marks_the_match_window_and_both_groups() -> None:
    fig = figures.order_vs_noise(_order_vs_noise_table(), pd.Series([250, 1000]), FAST)
    top, bottom = fig.axes
    assert [line.get_gid() for line in top.get_lines()].count("mean") == 2
    assert [line.get_gid() for line in bottom.get_lines()].count("mean") == 1
    spans = [patch for patch in top.patches if patch.get_x() == 250]
    assert spans and spans[0].get_width() == 750
    assert "n = 3 seeds" in top.get_title()


@_builder("behaviour_trajectories")
def _b(empty: bool) -> Figure:
    frame = _blank(_comparisons(), ["acc_gap_pp", "disagreement_pct"], empty)
    return figures.behaviour_trajectories(frame, FAST)


@_builder("layer_cka")
def _l(empty: bool) -> Figure:
    cols = [f"cka_{layer}" for layer in LAYERS]
    return figures.layer_cka(_blank(_per_seed_cka(), cols, empty), "matched", FAST)


@_builder("long_horizon")
def _lh(empty: bool) -> Figure:
    frame = _blank(_comparisons(LONG_UPDATES), ["h_repr"], empty)
    return figures.long_horizon(frame, FAST)


@_builder("probe_differences")
def _p(empty: bool) -> Figure:
    return figures.probe_differences(_blank(_probes(), ["diff_pp"], empty), 0.5, FAST)


@_builder("activation_trajectories")
def _a(empty: bool) -> Figure:
    relu = _blank(_comparisons(LONG_UPDATES, seed=4), ["h_repr"], empty)
    leaky = _blank(_comparisons(LONG_UPDATES, seed=5), ["h_repr"], empty)
    return figures.activation_trajectories(relu, leaky, 0.045, FAST)


@_builder("lr_search")
def _s(empty: bool) -> Figure:
    frame = _search().iloc[:0] if empty else _search()
    return figures.lr_search(frame, selected=0.045)


@_builder("rotated_vs_split")
def _r(empty: bool) -> Figure:
    split = _blank(_per_seed_cka(), ["h_repr"], empty)
    rotated = _blank(_per_seed_cka().assign(h_repr=lambda f: f["h_repr"] + 0.05), ["h_repr"], empty)
    return figures.rotated_vs_split(split, rotated, "10000", FAST)


@_builder("noise_floor")
def _n(empty: bool) -> Figure:
    return figures.noise_floor(_blank(_noise_table(), ["h_order", "h_floor"], empty), FAST)


def _sensitivity_summary() -> pd.DataFrame:
    rows = [
        {"analysis": "variant", "arm": "raw_input", "endpoint": e, "mean": 0.01, "n": 3}
        for e in ("matched", "common_10000")
    ]
    rows += [
        {"analysis": "matching", "arm": arm, "endpoint": "matched", "mean": -0.01, "n": 3}
        for arm in ("gap0.1_acc97.0_all_persist1", "gap0.2_acc97.0_every2500_persist2")
    ]
    frame = pd.DataFrame(rows).assign(contrast="minus_default", metric="h_repr", n_seeds=3)
    return frame.assign(ci_low=frame["mean"] - 0.01, ci_high=frame["mean"] + 0.01)


@_builder("sensitivity")
def _se(empty: bool) -> Figure:
    summary = _sensitivity_summary()
    if empty:
        summary = summary.assign(n=0)
    matching = {"max_accuracy_gap_pp": 0.2, "min_accuracy_pct": 97.0}
    return figures.sensitivity_contrasts(summary, "h_repr", "H_repr", FAST, matching)


def test_sensitivity_names_each_arm_in_words() -> None:
    fig = BUILDERS["sensitivity"](False)
    fig.draw_without_rendering()
    labels = [t.get_text() for ax in fig.axes for t in ax.get_yticklabels()]
    assert labels == [
        "raw pixels in [0, 1] · matched checkpoint (n = 3 of 3)",
        "raw pixels in [0, 1] · common, 10,000 updates (n = 3 of 3)",
        "gap ≤ 0.1 pp · matched checkpoint (n = 3 of 3)",
        "every 2,500 updates, 2 checkpoints in a row · matched checkpoint (n = 3 of 3)",
    ]


def _text_boxes(fig: Figure) -> list[tuple[str, Bbox]]:
    """Every visible, non-empty text the figure draws (ticks, labels, titles, legends)."""
    canvas = FigureCanvasAgg(fig)
    canvas.draw()  # lays the figure out as saving does
    renderer = canvas.get_renderer()
    texts = [*fig.texts, *(t for legend in fig.legends for t in legend.get_texts())]
    for ax in fig.axes:
        texts += [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            texts += [*axis.get_ticklabels(), *axis.get_ticklabels(minor=True)]
    return [
        (t.get_text(), t.get_window_extent(renderer))
        for t in texts
        if t.get_visible() and t.get_text().strip()
    ]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_no_two_texts_overlap(name: str) -> None:
    """Tick labels, axis labels and titles of a figure never run into each other."""
    boxes = _text_boxes(BUILDERS[name](False))
    for i, (text, box) in enumerate(boxes):
        for other, other_box in boxes[i + 1 :]:
            # A pixel of slack: neighbouring texts may touch.
            apart = (
                box.x1 - 1 <= other_box.x0
                or other_box.x1 - 1 <= box.x0
                or box.y1 - 1 <= other_box.y0
                or other_box.y1 - 1 <= box.y0
            )
            assert apart, f"{name}: {text!r} overlaps {other!r}"


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_figure_has_labelled_axes(name: str) -> None:
    fig = BUILDERS[name](False)
    assert isinstance(fig, Figure)
    assert fig.axes
    for ax in fig.axes:
        assert ax.get_xlabel().strip()
        assert ax.get_ylabel().strip()
    assert figures.NO_DATA not in _texts(fig)
    # Column width for single panels, text width for the two-panel figure.
    width = fig.get_size_inches()[0]
    assert width in (figures.COLUMN_WIDTH_IN, figures.DOUBLE_WIDTH_IN)
    fig.draw_without_rendering()  # layout and lazy tick creation must not raise
    # Legends sit outside the axes; they must still fit inside the figure's width.
    for legend in fig.legends:
        box = legend.get_window_extent()
        assert box.x0 >= fig.bbox.x0 - 1 and box.x1 <= fig.bbox.x1 + 1, name


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_all_nan_input_draws_no_data(name: str) -> None:
    fig = BUILDERS[name](True)
    assert figures.NO_DATA in _texts(fig)
    for ax in fig.axes:
        assert ax.get_xlabel().strip() and ax.get_ylabel().strip()
    fig.draw_without_rendering()


@pytest.mark.parametrize(
    "call",
    [
        lambda f: figures.h_repr_trajectories(f, FAST),
        lambda f: figures.behaviour_trajectories(f, FAST),
        lambda f: figures.layer_cka(f, "matched", FAST),
        lambda f: figures.long_horizon(f, FAST),
        lambda f: figures.probe_differences(f, 0.5, FAST),
        lambda f: figures.activation_trajectories(f, f, 0.05, FAST),
        lambda f: figures.lr_search(f, None),
        lambda f: figures.rotated_vs_split(f, f, "matched", FAST),
        lambda f: figures.noise_floor(f, FAST),
    ],
)
def test_columnless_empty_frame_draws_no_data(call: Callable[[pd.DataFrame], Figure]) -> None:
    fig = call(pd.DataFrame())
    assert figures.NO_DATA in _texts(fig)


def test_missing_columns_raise_when_data_present() -> None:
    with pytest.raises(ValueError, match="missing column"):
        figures.h_repr_trajectories(_comparisons().drop(columns="h_repr"), FAST)


def test_duplicate_seed_rows_raise() -> None:
    frame = _comparisons()
    with pytest.raises(ValueError, match="one row per"):
        figures.h_repr_trajectories(pd.concat([frame, frame.iloc[:1]]), FAST)


def test_save_figure_writes_png_and_pdf_atomically(tmp_path: Path) -> None:
    fig = BUILDERS["h_repr_trajectories"](False)
    stem = tmp_path / "sub" / "h_repr"
    paths = figures.save_figure(fig, stem)
    assert paths == [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:4] == b"%PDF"
    # Only the two targets remain: no hidden temporaries left behind.
    assert sorted(p.name for p in stem.parent.iterdir()) == ["h_repr.pdf", "h_repr.png"]


def test_save_figure_cleans_up_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fig = BUILDERS["h_repr_trajectories"](False)

    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(fig, "savefig", boom)
    with pytest.raises(RuntimeError, match="disk full"):
        figures.save_figure(fig, tmp_path / "fig")
    assert list(tmp_path.iterdir()) == []


def test_mean_ci_by_matches_bootstrap_ci_golden() -> None:
    frame = _comparisons()
    frame.loc[(frame["seed"] == 202) & (frame["update"] == 500), "h_repr"] = np.nan
    frame.loc[frame["update"] == 2000, "h_repr"] = np.nan
    out = figures.mean_ci_by(frame, "update", "h_repr", FAST)
    assert list(out.columns[:5]) == ["update", "mean", "ci_low", "ci_high", "n"]
    assert out["update"].tolist() == list(UPDATES)
    for _, row in out.iterrows():
        values = frame.loc[frame["update"] == row["update"], "h_repr"].to_numpy()
        finite = values[np.isfinite(values)]
        assert row["n"] == finite.size
        assert row["n_dropped"] == values.size - finite.size
        if finite.size == 0:
            assert np.isnan(row["mean"]) and np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
            continue
        low, high = bootstrap_ci(finite, FAST)
        assert row["mean"] == pytest.approx(finite.mean(), abs=1e-15)
        assert (row["ci_low"], row["ci_high"]) == (low, high)
    assert out.loc[out["update"] == 500, "n"].item() == 2
    assert out.loc[out["update"] == 2000, "n"].item() == 0


def test_mean_ci_by_passes_resampling_settings_through() -> None:
    frame = _comparisons()
    wide = figures.mean_ci_by(frame, "update", "h_repr", Bootstrap(200, 1, 0.99))
    narrow = figures.mean_ci_by(frame, "update", "h_repr", Bootstrap(200, 1, 0.5))
    assert ((wide["ci_high"] - wide["ci_low"]) >= (narrow["ci_high"] - narrow["ci_low"])).all()
    assert ((wide["ci_high"] - wide["ci_low"]) > (narrow["ci_high"] - narrow["ci_low"])).any()


def test_mean_ci_by_empty() -> None:
    out = figures.mean_ci_by(pd.DataFrame(), "update", "h_repr", FAST)
    assert out.empty
    assert list(out.columns[:5]) == ["update", "mean", "ci_low", "ci_high", "n"]


def _band_and_mean(fig: Figure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ax = fig.axes[0]
    (band,) = [c for c in ax.collections if c.get_gid() == "ci"]
    (mean,) = [line for line in ax.lines if line.get_gid() == "mean"]
    verts = band.get_paths()[0].vertices
    return verts, np.asarray(mean.get_xdata(), float), np.asarray(mean.get_ydata(), float)


def test_h_repr_band_contains_mean_and_matches_helper() -> None:
    frame = _comparisons()
    fig = figures.h_repr_trajectories(frame, FAST)
    verts, xs, ys = _band_and_mean(fig)
    expected = figures.mean_ci_by(frame, "update", "h_repr", FAST)
    np.testing.assert_array_equal(xs, expected["update"].to_numpy(float))
    np.testing.assert_allclose(ys, expected["mean"].to_numpy(float))
    for x, y, lo, hi in zip(xs, ys, expected["ci_low"], expected["ci_high"], strict=True):
        at_x = verts[np.isclose(verts[:, 0], x), 1]
        assert at_x.size >= 2
        # The band's edges at this update are exactly the CI, and the mean lies inside.
        assert at_x.min() == pytest.approx(lo) and at_x.max() == pytest.approx(hi)
        assert at_x.min() <= y <= at_x.max()
        assert hi > lo  # three distinct seeds give a non-degenerate band
    seed_lines = [line for line in fig.axes[0].lines if line.get_gid() == "seed"]
    assert len(seed_lines) == len(SEEDS)


def test_long_horizon_uses_symlog_and_marks() -> None:
    fig = figures.long_horizon(_comparisons(LONG_UPDATES), FAST)
    ax = fig.axes[0]
    assert ax.get_xscale() == "symlog"
    assert {"10k", "25k", "50k"} <= set(_texts(fig))
    short = figures.h_repr_trajectories(_comparisons(), FAST)
    assert short.axes[0].get_xscale() == "linear"
    long = figures.h_repr_trajectories(_comparisons(LONG_UPDATES), FAST)
    assert long.axes[0].get_xscale() == "symlog"


def test_layer_cka_excludes_non_ok_rows_and_reports_n() -> None:
    fig = figures.layer_cka(_per_seed_cka(), "matched", FAST)
    ax = fig.axes[0]
    assert "n = 3 seeds" in ax.get_title()
    assert "1 excluded" in ax.get_title()
    (points,) = [c for c in ax.collections if c.get_gid() == "seed"]
    assert len(points.get_offsets()) == len(SEEDS) * len(LAYERS)


def test_lr_search_marks_diverged_and_selected() -> None:
    fig = figures.lr_search(_search(), selected=0.045)
    ax = fig.axes[0]
    (diverged,) = [c for c in ax.collections if c.get_gid() == "diverged"]
    assert len(diverged.get_offsets()) == 2  # seed 101, both orders, at lr 0.05
    labels = ax.get_legend_handles_labels()[1]
    assert "diverged" in labels
    assert "selected lr = 0.045" in labels


def test_activation_title_mentions_lr() -> None:
    fig = BUILDERS["activation_trajectories"](False)
    assert "0.045" in fig.axes[0].get_title()


def test_module_does_not_import_torch_snakemake_or_pyplot() -> None:
    # A fresh interpreter, because this test session may already have loaded them elsewhere.
    code = (
        "import sys, workflow.figures; "
        "bad = [m for m in ('torch', 'snakemake', 'matplotlib.pyplot') if m in sys.modules]; "
        "sys.exit(str(bad) if bad else 0)"
    )
    root = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


FIGURE_FUNCTIONS = [
    figures.h_repr_trajectories,
    figures.behaviour_trajectories,
    figures.layer_cka,
    figures.long_horizon,
    figures.probe_differences,
    figures.activation_trajectories,
    figures.rotated_vs_split,
    figures.noise_floor,
]
PACKAGE_FILES = sorted((Path(__file__).resolve().parents[1] / "workflow" / "figures").glob("*.py"))


@pytest.mark.parametrize("bad", [{"resamples": 0}, {"level": 1.0}, {"level": 0.0}])
def test_bootstrap_rejects_impossible_settings(bad: dict) -> None:
    with pytest.raises(ValueError):
        Bootstrap(**{"resamples": 10, "seed": 1, "level": 0.9, **bad})


@pytest.mark.parametrize("func", [*FIGURE_FUNCTIONS, figures.mean_ci_by], ids=lambda f: f.__name__)
def test_statistics_come_only_from_the_bootstrap_argument(func: Callable) -> None:
    """No figure carries its own resamples, seed or level: a Bootstrap is required."""
    params = inspect.signature(func).parameters
    assert not {"resamples", "seed", "level"} & set(params)
    assert params["bootstrap"].default is inspect.Parameter.empty


def test_lr_search_draws_no_ci_and_takes_no_statistics() -> None:
    assert "bootstrap" not in inspect.signature(figures.lr_search).parameters


@pytest.mark.parametrize("path", PACKAGE_FILES, ids=lambda p: p.name)
def test_package_imports_no_snakemake_torch_or_pyplot(path: Path) -> None:
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    # Relative imports would hide a module from the adapter's code hash (workflow.provenance).
    assert all(n.level == 0 for n in ast.walk(tree) if isinstance(n, ast.ImportFrom))
    assert not {n for n in names if n.split(".")[0] in ("snakemake", "torch")}
    assert "matplotlib.pyplot" not in names


def test_adapter_code_hash_covers_every_figure_module() -> None:
    root = Path(__file__).resolve().parents[1]
    hashed = set(library_files(root / "workflow" / "scripts" / "plot_figure.py"))
    assert set(PACKAGE_FILES) <= hashed
