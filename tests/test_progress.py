"""A partial reference's progress per study, counted from the pair results it holds."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workflow import headlines, progress
from workflow.artifacts import read_json, write_json
from workflow.identity import RunId
from workflow.progress import Progress

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "reference" / "smoke"
GROUP = "protocol~class_split/variant~default/act~relu/lr~0.05/optim~reset"


def _config(folder: Path) -> dict:
    return read_json(folder / "provenance.json")["config"]


@pytest.fixture
def smoke(tmp_path: Path) -> Path:
    """A copy of the small config's reference, every study of it complete."""
    return Path(shutil.copytree(SMOKE, tmp_path / "smoke"))


def _remove(folder: Path, relative: str) -> None:
    table = folder / relative
    table.unlink()
    table.with_suffix(".provenance.json").unlink(missing_ok=True)


def test_both_path_forms_name_the_runs_compared() -> None:
    run = dict(protocol="class_split", act="relu", lr=0.05, optim="reset", seed=7)
    pair = progress.compared(
        Path(f"{GROUP}/stream~1/seed~7/order~ABC/vs_stream~0/order~BAC/base.csv")
    )
    assert pair == (
        frozenset({RunId(**run, stream=1, order="ABC"), RunId(**run, stream=0, order="BAC")}),
        "base",
    )
    pair = progress.compared(Path(f"{GROUP}/stream~0/seed~7/ABC_vs_BAC/extended.csv"))
    assert pair == (
        frozenset({RunId(**run, stream=0, order="ABC"), RunId(**run, stream=0, order="BAC")}),
        "extended",
    )


def test_a_complete_reference_has_every_seed_of_every_study(smoke: Path) -> None:
    # The workflow's own layout: a change of it that this module misses fails here.
    config = _config(smoke)
    found = progress.study_progress(smoke, config)
    assert found.pop("lr_search") is None
    for study, counted in found.items():
        assert counted == Progress(2, 2), study


def test_a_seed_counts_only_with_every_pair_its_study_reads(smoke: Path) -> None:
    _remove(
        smoke, f"comparisons/{GROUP}/stream~1/seed~202/order~BAC/vs_stream~0/order~ABC/base.csv"
    )
    _remove(smoke, f"comparisons/{GROUP}/stream~0/seed~101/ABC_vs_BAC/extended.csv")
    (smoke / "probes" / "seed~101.csv").unlink()
    found = progress.study_progress(smoke, _config(smoke))
    assert found["main"] == Progress(2, 2)
    assert found["noise_floor"] == Progress(1, 2)
    assert found["long"] == Progress(1, 2)
    assert found["activation"] == Progress(1, 2)  # its ReLU arm is the long runs
    assert found["probes"] == Progress(1, 2)
    assert found["sensitivity"] == Progress(2, 2)


def test_the_activation_study_is_counted_once_its_rate_is_known(smoke: Path) -> None:
    shutil.rmtree(smoke / "comparisons" / "protocol~class_split/variant~default/act~leaky_relu")
    config = _config(smoke)
    assert config["studies"]["activation"]["lr"] is None
    # The search has selected a rate: the study counts its seeds before any LeakyReLU pair.
    assert progress.study_progress(smoke, config)["activation"] == Progress(0, 2)
    (smoke / "summary" / "lr_search.csv").unlink()
    assert progress.study_progress(smoke, config)["activation"] is None
    config["studies"]["activation"]["lr"] = 0.05
    assert progress.study_progress(smoke, config)["activation"] == Progress(0, 2)


def test_the_readme_names_each_pending_study_with_its_seeds(smoke: Path) -> None:
    prov = read_json(smoke / "provenance.json")
    prov["studies_pending"] = ["main", "noise_floor", "lr_search"]
    write_json(smoke / "provenance.json", prov)
    _remove(smoke, f"comparisons/{GROUP}/stream~1/seed~202/ABC_vs_BAC/base.csv")
    line = headlines.pending_line(smoke, prov)
    assert line.endswith(": `main` all 2, statistics to come, `noise_floor` 1 of 2, `lr_search`.")
