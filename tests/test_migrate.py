"""Moving a tree of an earlier layout into the current one: the oldest (results/runs/...,
benchmarks/) and the one where the default config wrote to results/full/ and logs/full/."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tests.support.trees import REPO, copy_repo, snakemake
from workflow import job_records
from workflow.migrate import migrate
from workflow.status import job_counts as planned_jobs

GROUP = "protocol~class_split/act~relu/lr~0.05/optim~reset/stream~0"
RUN = f"{GROUP}/seed~101/order~ABC"
NEW_RUN = "protocol~class_split/variant~default/" + RUN.removeprefix("protocol~class_split/")


def _write(tree: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text)


def _old_tree(tree: Path) -> None:
    _write(
        tree,
        {
            f"results/runs/{RUN}/run.json": "{}",
            f"results/runs/{RUN}/checkpoints/update~0.npz": "npz",
            f"results/runs/{GROUP}/seed~101/ABC_vs_BAC/base.csv": "csv",
            f"logs/runs/{RUN}/train_history.log": "log",
            f"benchmarks/runs/{RUN}/train_history.tsv": "s\n1.0\n",
            "results/activation/lr_search/lr~0.05/seed~101/order~ABC.json": "{}",
            "results/summary/main.csv": "old summary",
        },
    )


@pytest.mark.parametrize(
    ("name", "results", "logs"),
    [("smoke", "results/smoke", "logs/smoke"), ("full", "results", "logs")],
)
def test_runs_logs_benchmarks_and_traces_move_to_the_config_folders(
    tmp_path: Path, name: str, results: str, logs: str
) -> None:
    _old_tree(tmp_path)
    migrate(tmp_path, name)
    new = tmp_path / results / "runs" / NEW_RUN
    assert (new / "run.json").read_text() == "{}"
    assert (new / "checkpoints/update~0.npz").read_text() == "npz"
    log_folder = tmp_path / logs / "runs" / NEW_RUN
    assert (log_folder / "train_history.log").read_text() == "log"
    assert (log_folder / "train_history.benchmark.tsv").read_text() == "s\n1.0\n"
    traces = tmp_path / results / "activation/lr_search/lr~0.05/seed~101/order~ABC.json"
    assert traces.is_file()
    # Nothing is left in the old places.
    assert not list((tmp_path / "results/runs").glob("protocol~*/act~*"))
    assert not (tmp_path / "benchmarks/runs").exists()
    assert not list((tmp_path / "logs/runs").glob("protocol~*/act~*"))
    # What the workflow rebuilds stays where it was.
    assert (tmp_path / "results/summary/main.csv").is_file()


def test_nothing_moves_when_a_target_exists(tmp_path: Path) -> None:
    _old_tree(tmp_path)
    taken = tmp_path / "results/smoke/runs/protocol~class_split/variant~default/act~relu"
    taken.mkdir(parents=True)
    with pytest.raises(FileExistsError, match="not moving anything"):
        migrate(tmp_path, "smoke")
    assert (tmp_path / f"results/runs/{RUN}/run.json").is_file()
    assert (tmp_path / f"benchmarks/runs/{RUN}/train_history.tsv").is_file()


# The default config's tree before it wrote to results/ and logs/ (a finished one, and one
# job in progress), with Snakemake's records of it.
FULL_RUN = f"runs/{NEW_RUN}"
# A path whose key is longer than a file name: Snakemake cuts it into folders.
LONG = f"{FULL_RUN}/{'x' * 200}.csv"
FULL_TREE = {
    f"results/full/{FULL_RUN}/run.json": "{}",
    f"results/full/{FULL_RUN}/checkpoints/update~0.npz": "npz",
    f"results/full/{LONG}": "long",
    "results/full/summary/main.csv": "summary",
    "results/full/report.html": "<html>",
    f"logs/full/{FULL_RUN}/train_history.log": "log",
    "logs/full/make.log": "== main",
    "results/smoke/summary/main.csv": "the small config's",
}
RECORD = {
    "rule": "summarize_pairs",
    "code": "c0de",
    "params": ["x"],
    "input": [f"results/full/{FULL_RUN}/run.json", "resources/mnist.npz"],
    "log": ["logs/full/main/summarize_pairs.log"],
    "input_checksums": {f"results/full/{FULL_RUN}/run.json": "abc"},
}


def _record_path(tree: Path, folder: str, key: str, longest: int = 255) -> Path:
    """Where Snakemake itself keeps the record of ``key`` (FilePersistence._record_path)."""
    from snakemake.persistence.file import FilePersistence

    persistence = SimpleNamespace(_fetch_max_len=lambda subject: longest)
    subject = tree / ".snakemake" / folder
    return Path(FilePersistence._record_path(persistence, str(subject), key))


def _full_tree(tree: Path) -> None:
    _write(tree, FULL_TREE)
    summary = _record_path(tree, "metadata", "results/full/summary/main.csv")
    summary.parent.mkdir(parents=True, exist_ok=True)
    summary.write_text(json.dumps(RECORD))
    run = _record_path(tree, "metadata", f"results/full/{LONG}")
    assert run.parent != tree / ".snakemake/metadata"
    run.parent.mkdir(parents=True, exist_ok=True)
    run.write_text(json.dumps({"rule": "train_history", "input": ["resources/mnist.npz"]}))
    running = _record_path(tree, "incomplete", "results/full/report.html")
    running.parent.mkdir(parents=True, exist_ok=True)
    running.write_text(json.dumps({"external_jobid": None}))
    other = _record_path(tree, "metadata", "results/smoke/summary/main.csv")
    other.write_text(json.dumps({"rule": "summarize_pairs", "input": []}))


def test_the_default_configs_tree_moves_up_with_its_records(tmp_path: Path) -> None:
    _full_tree(tmp_path)
    migrate(tmp_path, "full")
    for path, text in FULL_TREE.items():
        moved = path.replace("results/full/", "results/").replace("logs/full/", "logs/")
        assert (tmp_path / moved).read_text() == text
    assert not (tmp_path / "results/full").exists() and not (tmp_path / "logs/full").exists()
    record = json.loads(_record_path(tmp_path, "metadata", "results/summary/main.csv").read_text())
    assert record == {
        **RECORD,
        "input": [f"results/{FULL_RUN}/run.json", "resources/mnist.npz"],
        "log": ["logs/main/summarize_pairs.log"],
        "input_checksums": {f"results/{FULL_RUN}/run.json": "abc"},
    }
    run = _record_path(tmp_path, "metadata", f"results/{LONG}")
    assert json.loads(run.read_text())["rule"] == "train_history"
    assert _record_path(tmp_path, "incomplete", "results/report.html").is_file()
    assert _record_path(tmp_path, "metadata", "results/smoke/summary/main.csv").is_file()
    # Only the moved records are left: none under an old key, no empty folder of one.
    metadata = tmp_path / ".snakemake/metadata"
    assert sorted(p.name for p in metadata.iterdir() if p.is_dir()) == [run.parent.name]
    assert len([p for p in metadata.rglob("*") if p.is_file()]) == 3


def test_the_default_configs_tree_moves_nothing_into_a_taken_place(tmp_path: Path) -> None:
    _full_tree(tmp_path)
    _write(tmp_path, {"results/summary/main.csv": "already here"})
    with pytest.raises(FileExistsError, match="results/summary"):
        migrate(tmp_path, "full")
    assert (tmp_path / "results/full/summary/main.csv").read_text() == "summary"
    assert _record_path(tmp_path, "metadata", "results/full/summary/main.csv").is_file()


def test_nothing_moves_while_snakemake_holds_the_tree(tmp_path: Path) -> None:
    _full_tree(tmp_path)
    _write(tmp_path, {".snakemake/locks/0.input.lock": "results/full/summary/main.csv"})
    with pytest.raises(job_records.SnakemakeRunning, match="snakemake --unlock"):
        migrate(tmp_path, "full")
    assert (tmp_path / "results/full/summary/main.csv").is_file()


def test_record_keys_are_snakemakes_for_any_name_length(tmp_path: Path) -> None:
    folder = tmp_path / ".snakemake" / "metadata"
    folder.mkdir(parents=True)
    longest = job_records.os.pathconf(folder, "PC_NAME_MAX")
    for key in ("results/a.csv", "results/" + "x" * 700 + ".csv"):
        ours = job_records._encode(folder, key)
        assert ours == _record_path(tmp_path, "metadata", key, longest)
        assert job_records._decode(folder, ours.relative_to(folder)) == key


# The end-to-end test trains seed 101's pair of the small config (a few minutes on 2 cores).
PAIR = f"{FULL_RUN.removesuffix('/seed~101/order~ABC')}/seed~101/ABC_vs_BAC/base.csv"
OLD_ROOTS = "RESULTS = f\"results/{config['name']}\"\nLOGS = f\"logs/{config['name']}\"\n"
NEW_ROOTS = "RESULTS = results_root(config)\nLOGS = logs_root(config)\n"


def _checkpoint_digests(runs: Path) -> dict[str, str]:
    return {
        path.relative_to(runs).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(runs.rglob("checkpoints/*.npz"))
    }


@pytest.mark.workflow
def test_a_finished_tree_in_results_full_moves_up_and_retrains_nothing(tmp_path, mnist_copy):
    """The default config's tree as the code before this layout wrote it (results/full/,
    logs/full/): after `make migrate-results` it plans nothing, its checkpoints are the same
    bits, and Snakemake still knows what made them (a training change retrains)."""
    workdir = copy_repo(tmp_path, mnist=mnist_copy)
    shutil.copy2(REPO / "Makefile", workdir / "Makefile")
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    (workdir / "tiny.yaml").write_text(yaml.safe_dump({**config, "name": "full"}))
    tiny = ("--configfile", "tiny.yaml")
    common = workdir / "rules/common.smk"
    current = common.read_text()
    assert NEW_ROOTS in current
    common.write_text(current.replace(NEW_ROOTS, OLD_ROOTS))
    snakemake(workdir, f"results/full/{PAIR}", *tiny)
    before = _checkpoint_digests(workdir / "results/full/runs")
    assert len(before) == 2 * len(config["training"]["checkpoints"])
    common.write_text(current)

    venv = Path(sys.executable).parent.parent
    make = ["make", "-o", f"{venv}/installed", f"VENV={venv}", "migrate-results"]
    subprocess.run([*make, "CONFIG=tiny.yaml"], cwd=workdir, check=True, capture_output=True)
    assert not (workdir / "results/full").exists() and not (workdir / "logs/full").exists()
    assert _checkpoint_digests(workdir / "results/runs") == before
    plan = snakemake(workdir, "-n", f"results/{PAIR}", *tiny)
    assert not planned_jobs(plan), plan
    # The records moved with the files: a training setting retrains the pair, as before.
    (workdir / "momentum.yaml").write_text(
        yaml.safe_dump(
            {**config, "name": "full", "training": {**config["training"], "momentum": 0.8}}
        )
    )
    jobs = planned_jobs(
        snakemake(workdir, "-n", f"results/{PAIR}", "--configfile", "momentum.yaml")
    )
    assert jobs.get("train_history") == 2, jobs
