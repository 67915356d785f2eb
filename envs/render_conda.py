"""Write envs/histres.yaml, the conda environment of the rules, from envs/requirements.txt.

    python envs/render_conda.py

Snakemake copies only an environment's YAML file into .snakemake/conda/, so the YAML must list
the pins itself (a `-r requirements.txt` line would not be found there, and an edit to the
requirements would not change the environment's hash). tests/test_envs.py checks that the file
is what this script writes.
"""

from __future__ import annotations

from pathlib import Path

ENVS = Path(__file__).resolve().parent
HEADER = """\
# Conda environment of the rules (`snakemake --software-deployment-method conda`).
# Written by envs/render_conda.py from envs/requirements.txt: edit that file, then rerun it.
name: histres
channels:
  - conda-forge
  - nodefaults
dependencies:
  - python=3.11
  - pip
  - pip:
"""


def pins(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and line[0] != "#"]


def render(requirements: str) -> str:
    return HEADER + "".join(f"      - {pin}\n" for pin in pins(requirements))


if __name__ == "__main__":
    (ENVS / "histres.yaml").write_text(render((ENVS / "requirements.txt").read_text()))
