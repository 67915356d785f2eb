"""Moving a tree of the old layout (results/runs/..., benchmarks/) into the current one."""

from __future__ import annotations

from pathlib import Path

import pytest

from workflow.migrate import migrate

GROUP = "protocol~class_split/act~relu/lr~0.05/optim~reset/stream~0"
RUN = f"{GROUP}/seed~101/order~ABC"
NEW_RUN = "protocol~class_split/variant~default/" + RUN.removeprefix("protocol~class_split/")


def _old_tree(tree: Path) -> None:
    for path, text in {
        f"results/runs/{RUN}/run.json": "{}",
        f"results/runs/{RUN}/checkpoints/update~0.npz": "npz",
        f"results/runs/{GROUP}/seed~101/ABC_vs_BAC/base.csv": "csv",
        f"logs/runs/{RUN}/train_history.log": "log",
        f"benchmarks/runs/{RUN}/train_history.tsv": "s\n1.0\n",
        "results/activation/lr_search/lr~0.05/seed~101/order~ABC.json": "{}",
        "results/summary/main.csv": "old summary",
    }.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)


def test_runs_logs_benchmarks_and_traces_move_to_the_config_folders(tmp_path: Path) -> None:
    _old_tree(tmp_path)
    migrate(tmp_path, "full")
    new = tmp_path / "results/full/runs" / NEW_RUN
    assert (new / "run.json").read_text() == "{}"
    assert (new / "checkpoints/update~0.npz").read_text() == "npz"
    logs = tmp_path / "logs/full/runs" / NEW_RUN
    assert (logs / "train_history.log").read_text() == "log"
    assert (logs / "train_history.benchmark.tsv").read_text() == "s\n1.0\n"
    traces = tmp_path / "results/full/activation/lr_search/lr~0.05/seed~101/order~ABC.json"
    assert traces.is_file()
    # The run files are gone from the old tree; what is left there is the old comparisons.
    assert not list((tmp_path / "results/runs").rglob("*.json"))
    assert not (tmp_path / "benchmarks/runs").exists() and not (tmp_path / "logs/runs").exists()
    # What the workflow rebuilds stays where it was.
    assert (tmp_path / "results/summary/main.csv").is_file()


def test_nothing_moves_when_a_target_exists(tmp_path: Path) -> None:
    _old_tree(tmp_path)
    taken = tmp_path / "results/full/runs/protocol~class_split/variant~default/act~relu"
    taken.mkdir(parents=True)
    with pytest.raises(FileExistsError, match="not moving anything"):
        migrate(tmp_path, "full")
    assert (tmp_path / f"results/runs/{RUN}/run.json").is_file()
    assert (tmp_path / f"benchmarks/runs/{RUN}/train_history.tsv").is_file()
