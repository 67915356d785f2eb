"""Snakemake adapter: draw one figure (``params.figure``) from its tables, as PNG and PDF."""

from pathlib import Path

import pandas as pd

from workflow import figures
from workflow.artifacts import read_csv, read_json
from workflow.comparisons import read_comparisons
from workflow.joblog import job_log
from workflow.match_table import read_matches
from workflow.noise_floor import matched_updates
from workflow.stats import Bootstrap

smk = snakemake  # noqa: F821 (injected by Snakemake)
# A figure's params hold only the settings it draws from (rules/figures.smk): none for lr_search.
stats = smk.params.config.get("statistics")
bootstrap = Bootstrap.from_config(stats) if stats else None
endpoint = f"common_{stats['common_endpoint']}" if stats else None


def table(name):
    paths = smk.input[name]
    paths = [paths] if isinstance(paths, str) else list(paths)
    return pd.concat([read_csv(path) for path in paths], ignore_index=True)


def comparisons(*names):
    """Pair comparisons, checked as they are read (seed, updates, columns)."""
    paths = [path for name in names for path in smk.input[name]]
    return read_comparisons(paths, smk.params.segments)


def ok(comparisons):
    return comparisons[comparisons["pair_status"] == "ok"]


def lr_search():
    search = table("table")
    return figures.lr_search(
        search[search["seed"].notna()], selected=search.loc[search["selected"], "lr"].max()
    )


def activation():
    lr = read_json(smk.input.selection)["lr"]
    if lr is None:
        empty = pd.DataFrame(columns=["seed", "update", "h_repr"])
        return figures.activation_trajectories(empty, empty, float("nan"), bootstrap)
    relu = ok(comparisons("relu_base", "relu_extended"))
    leaky = ok(comparisons("leaky_relu_base", "leaky_relu_extended"))
    return figures.activation_trajectories(relu, leaky, lr, bootstrap)


def trajectory():
    matched = matched_updates(read_matches(smk.input.matches, None, smk.config["matching"]))
    return figures.order_vs_noise(table("per_seed"), matched, bootstrap)


DRAW = {
    "main_h_repr": lambda: figures.h_repr_trajectories(ok(comparisons("comparisons")), bootstrap),
    "main_behaviour": lambda: figures.behaviour_trajectories(
        ok(comparisons("comparisons")), bootstrap
    ),
    "main_layer_cka": lambda: figures.layer_cka(table("per_seed"), "matched", bootstrap),
    "long_horizon": lambda: figures.long_horizon(ok(comparisons("comparisons")), bootstrap),
    "probe_differences": lambda: figures.probe_differences(
        table("per_seed"), smk.params.config["margin_pp"], bootstrap
    ),
    "lr_search": lr_search,
    "rotated_vs_split": lambda: figures.rotated_vs_split(
        table("split"), table("rotated"), endpoint, bootstrap
    ),
    "noise_floor": lambda: figures.noise_floor(table("per_seed"), bootstrap),
    "sensitivity": lambda: figures.sensitivity_contrasts(
        table("summary"), "h_repr", "H_repr", bootstrap, smk.params.config["matching"]
    ),
    "activation": activation,
    "order_vs_noise": trajectory,
    "noise_floor_trajectory": trajectory,
}

with job_log(smk.log[0]) as log:
    paths = figures.save_figure(DRAW[smk.params.figure](), Path(smk.output[0]).with_suffix(""))
    log(f"wrote {', '.join(map(str, paths))}")
