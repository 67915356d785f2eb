"""The conda environment and the pip requirements the README installs must agree."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ENVS = Path(__file__).resolve().parent.parent / "envs"


def pins() -> dict[str, str]:
    lines = (ENVS / "requirements.txt").read_text().splitlines()
    found = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", "\n".join(lines), flags=re.MULTILINE))
    assert len(found) == sum(1 for line in lines if line and not line.startswith("#"))
    return found


def test_every_requirement_is_pinned_exactly():
    requirements = pins()
    assert requirements["torch"] == "2.14.1"
    assert requirements["torchvision"] == "0.29.1"


def test_conda_environment_installs_the_same_pins():
    env = yaml.safe_load((ENVS / "histres.yaml").read_text())
    assert "python=3.11" in env["dependencies"]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    # The environment reads the pinned file itself, so the two cannot drift apart; nothing is
    # pinned a second time (a second pin could disagree).
    assert pip == ["-r requirements.txt"]
    assert not [d for d in env["dependencies"] if isinstance(d, str) and d.split("=")[0] in pins()]
