"""Fake results trees and reference exports for the tests of the reference machinery: run
records, comparisons and search traces as the workflow writes them, without training.

    tree = trained_tree(tmp_path / "tree", [101])   # both runs of seed 101, their comparison
    export_tree(tree, tmp_path / "reference", "first", config=FULL)
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.artifacts import write_csv, write_json
from workflow.provenance import REPO_ROOT, code_version
from workflow.reference import pair_results
from workflow.reference.export import export
from workflow.slices import dump_config, training_config

REPO = Path(__file__).resolve().parents[2]
RUN = (
    "runs/protocol~class_split/variant~default/act~relu/lr~0.05/optim~reset/stream~0"
    "/seed~{seed}/order~{order}"
)


def run_identity(seed: int, order: str) -> dict:
    """A main-protocol run's identity as its records store it (the default variant left out)."""
    return {
        "protocol": "class_split",
        "act": "relu",
        "lr": 0.05,
        "optim": "reset",
        "stream": 0,
        "seed": seed,
        "order": order,
    }


def run_record(seed: int, order: str, reached: dict[int, str], checkpoints: list[int]) -> dict:
    return {
        "status": "ok" if len(reached) == len(checkpoints) else "diverged",
        "diverged_at": None if len(reached) == len(checkpoints) else {"phase": "common"},
        "checkpoints": {str(u): d for u, d in reached.items()},
        "phases": [
            {"phase": "phase1", "updates": 10, "seconds": 1.0},
            {"phase": "common", "updates": 30, "seconds": 3.0},
        ],
        "provenance": {
            **run_identity(seed, order),
            "torch_threads": 1,
            "kernels": "fused",
            "device": "cpu",
            "memory_format": "channels_last",
            "packages": {"torch": "2.14.1"},
            "code_version": "abc123",
            "config": {"training": {"checkpoints": checkpoints, "extended_checkpoints": []}},
        },
    }


CONFIG = {
    "name": "tiny",
    "training": {
        "torch_threads": 1,
        "kernels": "fused",
        "device": "cpu",
        "checkpoints": [0, 25],
        "extended_checkpoints": [],
    },
}


def fake_tree(root: Path, runs: dict[tuple[int, str], dict[int, str]]) -> tuple[Path, Path]:
    """A tree whose results hold ``runs``: (seed, order) -> the digests it reached."""
    results, logs = root / "results" / "tiny", root / "logs" / "tiny"
    (results / "runs").mkdir(parents=True)
    for (seed, order), reached in runs.items():
        write_json(
            results / RUN.format(seed=seed, order=order) / "run.json",
            run_record(seed, order, reached, [0, 25]),
        )
    return results, logs


def export_tree(tree: tuple[Path, Path], out: Path, commit: str, config=CONFIG, **kwargs) -> dict:
    return export(*tree, out, config, REPO, commit=commit, **kwargs)


GROUP = RUN.rsplit("/", 2)[0]
COMPARISON = f"{GROUP}/seed~{{seed}}/ABC_vs_BAC/base.csv"
DIGESTS = {"ABC": {0: "a0", 25: "a25"}, "BAC": {0: "b0", 25: "b25"}}
# Enough of a config for the slices a comparison records.
FULL = {
    **CONFIG,
    "data": {"digests": {"x": "1"}, "normalize": {"mean": 0.1}, "subset": {"n": 1}},
    "tasks": {"probe_per_digit": 2, "class_split": {"A": [0]}, "common_per_digit": 3},
    "model": {"activation": "relu", "width": 8},
    "evaluation": {"batch_size": 10},
    "training": {**CONFIG["training"], "checkpoints": [0, 25], "optimizer_at_common": "reset"},
    "studies": {"activation": {"trace_updates": 5}},
}
TRACE = "activation/lr_search/lr~0.05/seed~{seed}/order~ABC.json"


def fake_comparison(results: Path, seed: int, digests=DIGESTS, config=FULL) -> Path:
    """A tree's comparison of seed's pair, with the provenance compare_runs writes."""
    table = results / COMPARISON.format(seed=seed)
    write_csv(table, pd.DataFrame({"seed": [seed, seed], "update": [0, 25], "h_repr": [0.5, 0.1]}))
    adapter = REPO_ROOT / "workflow/scripts/compare_runs.py"
    write_json(
        pair_results.provenance_of(table),
        {
            "config": dump_config(config, "default"),
            "code_version": code_version(adapter),
            "first": run_identity(seed, "ABC"),
            "second": run_identity(seed, "BAC"),
            "segment": "base",
            "params_digests": {"first": digests["ABC"], "second": digests["BAC"]},
        },
    )
    return table


def fake_trace(results: Path, seed: int, config=FULL) -> Path:
    """A tree's stability-search trace, as trace_stability writes it (provenance inside)."""
    trace = results / TRACE.format(seed=seed)
    adapter = REPO_ROOT / "workflow/scripts/trace_stability.py"
    write_json(
        trace,
        {
            "seed": seed,
            "order": "ABC",
            "finite": True,
            "provenance": {
                "config": training_config(config, "default"),
                "code_version": code_version(adapter),
            },
        },
    )
    return trace


def trained_tree(root: Path, seeds: list[int]) -> tuple[Path, Path]:
    """A tree holding both runs of ``seeds`` and their comparisons."""
    tree = fake_tree(root, {(seed, order): DIGESTS[order] for seed in seeds for order in DIGESTS})
    for seed in seeds:
        fake_comparison(tree[0], seed)
    return tree
