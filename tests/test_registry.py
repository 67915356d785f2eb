"""Tests for workflow.registry: the one list of studies, and make full's steps read from it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from workflow import registry

REPO = Path(__file__).resolve().parent.parent


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
