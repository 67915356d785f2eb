"""Tests for workflow.registry: the one list of studies (their views, trajectories and
renderers), and make full's steps read from it."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from workflow import headlines, registry
from workflow.config import load_config

REPO = Path(__file__).resolve().parent.parent
CONFIG = load_config([REPO / "config.yaml"])


def test_every_study_is_built_in_exactly_one_step() -> None:
    built = [name for step in registry.full_steps() for name in step]
    assert sorted(built) == sorted(registry.NAMES)
    assert len(built) == len(set(built))


def test_a_step_lists_its_studies_in_the_registrys_order() -> None:
    for step in registry.full_steps():
        assert step == [name for name in registry.NAMES if name in step]


def test_make_full_builds_the_registrys_steps_in_order() -> None:
    """The Makefile names no study: `make full` takes its steps from the registry."""
    dry = subprocess.run(
        ["make", "-n", "full"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    announced = re.findall(r'echo "== \$\(date -u \+%FT%TZ\) ([\w ]+)"', dry)
    expected = [" ".join(f"build_{name}" for name in step) for step in registry.full_steps()]
    assert announced == expected
    makefile = (REPO / "Makefile").read_text()
    assert not [name for name in registry.NAMES if f"build_{name}" in makefile]


def test_every_study_text_is_a_renderer_of_the_results_page() -> None:
    for study in registry.STUDIES:
        assert callable(headlines.renderer(study.name)), study.name


def test_a_renderer_the_registry_misnames_is_refused_by_name(monkeypatch) -> None:
    study = registry.BY_NAME["main"]
    monkeypatch.setitem(registry.BY_NAME, "main", replace(study, text="no_such_text"))
    with pytest.raises(LookupError, match="no_such_text"):
        headlines.renderer("main")


def test_the_matched_views_are_the_studies_own() -> None:
    """The views the rules match (rules/common.smk's MATCH_VIEWS), study by study."""
    views = registry.views(CONFIG)
    pilot = [f"pilot_{policy}" for policy in CONFIG["studies"]["pilot"]["policies"]]
    variants = [f"variant_{variant}" for variant in CONFIG["studies"]["sensitivity"]["variants"]]
    assert list(views) == ["main", "noise_floor", *pilot, "rotated", *variants]
    assert [name for name, view in views.items() if not view.summarized] == ["noise_floor"]
    assert views["rotated"].fixed == {"protocol": "rotated"}
    assert views["noise_floor"].seeds == tuple(CONFIG["studies"]["noise_floor"]["seeds"])


def test_two_studies_may_not_claim_one_view(monkeypatch) -> None:
    twice = (*registry.STUDIES, replace(registry.BY_NAME["rotated"], name="rotated_again"))
    monkeypatch.setattr(registry, "STUDIES", twice)
    with pytest.raises(ValueError, match="rotated"):
        registry.views(CONFIG)


def test_each_trajectory_is_a_table_of_the_study_whose_view_it_reads() -> None:
    for table, view in registry.trajectories().items():
        assert f"{table}.csv" in registry.BY_NAME[view].named_tables()
        assert view in registry.BY_NAME[view].views(CONFIG)
