"""The conda environment and the pip requirements the README installs must agree."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

ENVS = Path(__file__).resolve().parent.parent / "envs"
DEV_TOOLS = {"pytest", "pytest-xdist", "ruff", "snakefmt"}


def pins(name: str = "requirements.txt") -> dict[str, str]:
    lines = [line for line in (ENVS / name).read_text().splitlines() if line.strip()]
    found = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", "\n".join(lines), flags=re.MULTILINE))
    other = [line for line in lines if not line.startswith(("#", "-r ", "-c "))]
    assert len(found) == len(other), f"{name}: every requirement must be pinned exactly"
    return found


def _renderer():
    spec = importlib.util.spec_from_file_location("render_conda", ENVS / "render_conda.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_requirement_is_pinned_exactly():
    requirements = pins()
    assert requirements["torch"] == "2.14.1"
    assert requirements["torchvision"] == "0.29.1"


def test_development_tools_are_apart_from_the_runtime():
    assert not DEV_TOOLS & set(pins())
    assert set(pins("requirements-dev.txt")) == DEV_TOOLS
    assert "-r requirements.txt" in (ENVS / "requirements-dev.txt").read_text().splitlines()


def test_conda_environment_lists_the_same_pins_itself():
    # Snakemake copies only the YAML into .snakemake/conda/: a "-r requirements.txt" line
    # would not be found there, so the pins are listed in the file.
    env = yaml.safe_load((ENVS / "histres.yaml").read_text())
    assert "python=3.11" in env["dependencies"]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert dict(pin.split("==") for pin in pip) == pins()


def test_conda_environment_is_what_the_renderer_writes():
    expected = _renderer().render((ENVS / "requirements.txt").read_text())
    assert (ENVS / "histres.yaml").read_text() == expected, "run: python envs/render_conda.py"
