"""The front door: the commands a user types first work, in a fresh copy, on the default config.

    snakemake --cores 4 results/summary/main.csv
    snakemake --cores 2 results/figures/main_h_repr.pdf
    make report                                     -> results/report.html

The default config (config.yaml, name `full`) writes to results/ and logs/; every other config
to results/<name>/ and logs/<name>/, never into the default's folders. The Makefile takes those
folders from Python that validated the config, so no config value reaches its shell.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.trees import HANG_S, REPO, SNAKEMAKE, copy_repo, snakemake
from workflow.config import DEFAULT_LAYOUT_FOLDERS, DEFAULT_LAYOUT_PREFIXES
from workflow.status import job_counts as planned_jobs

pytestmark = pytest.mark.workflow

# The commands as the project's users type them, and a job each must plan.
LITERAL = {
    "snakemake --cores 4 results/summary/main.csv": "summarize_pairs",
    "snakemake --cores 2 results/figures/main_h_repr.pdf": "plot_main_h_repr",
}


def _planned_paths(plan: str) -> set[str]:
    """Every output and log path of a dry run's jobs."""
    paths = set()
    for line in re.findall(r"^    (?:output|log): (.*)$", plan, flags=re.MULTILINE):
        paths.update(path.strip() for path in line.split(","))
    return paths


@pytest.mark.parametrize("command", LITERAL)
def test_the_literal_commands_plan_on_the_default_config(tmp_path, command):
    """Once `results/summary/main.csv` gave MissingRuleException: the default config wrote
    to results/full/."""
    workdir = copy_repo(tmp_path)
    args = command.split()[1:]  # the helper's own --cores comes first; the command's wins
    plan = snakemake(workdir, "-n", *args)
    jobs = planned_jobs(plan)
    assert jobs.get(LITERAL[command]) == 1, jobs
    assert jobs.get("train_history") == 40, jobs  # the main study's 20 pairs
    # Everything it writes lies in the default layout's folders of results/ and logs/.
    for path in _planned_paths(plan):
        top, first, *_ = path.split("/") + [""]
        if top == "resources" or path == "logs/prepare_mnist.log":
            continue
        assert top in ("results", "logs"), path
        assert first in DEFAULT_LAYOUT_FOLDERS or first.startswith(DEFAULT_LAYOUT_PREFIXES), path


def test_another_config_keeps_its_own_folders(tmp_path):
    workdir = copy_repo(tmp_path)
    smoke = ("--configfile", "config/smoke.yaml")
    plan = snakemake(workdir, "-n", "results/smoke/summary/main.csv", *smoke)
    assert all(
        path.startswith(("results/smoke/", "logs/smoke/", "resources/", "logs/prepare_mnist"))
        for path in _planned_paths(plan)
    ), sorted(_planned_paths(plan))
    # The default's paths are not the small config's: nothing of it goes there.
    result = subprocess.run(
        [*SNAKEMAKE, "--cores", "1", "-n", "results/summary/main.csv", *smoke],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=HANG_S,
    )
    assert result.returncode != 0
    assert "MissingRuleException" in result.stdout + result.stderr


def make(workdir: Path, *args: str, dry: bool = True) -> subprocess.CompletedProcess:
    """make in ``workdir`` with this test run's venv (never installing one)."""
    venv = Path(sys.executable).parent.parent
    command = ["make", *(["-n"] if dry else []), "-o", f"{venv}/installed", f"VENV={venv}"]
    return subprocess.run(
        [*command, *args], cwd=workdir, capture_output=True, text=True, timeout=HANG_S
    )


def test_make_report_writes_the_default_report_where_users_look():
    default = make(REPO, "report")
    assert default.returncode == 0, default.stderr
    assert "--report 'results/report.html'" in default.stdout
    smoke = make(REPO, "report", "CONFIG=config/smoke.yaml")
    assert "--report 'results/smoke/report.html' --configfile 'config/smoke.yaml'" in smoke.stdout


def _copy_with_makefile(tmp_path: Path) -> Path:
    (tmp_path / "repo").mkdir()
    workdir = copy_repo(tmp_path / "repo")
    (workdir / "Makefile").write_bytes((REPO / "Makefile").read_bytes())
    return workdir


@pytest.mark.parametrize("dry", [True, False], ids=["make -n", "make"])
def test_a_config_name_never_reaches_the_shell(tmp_path, dry):
    """A name the Makefile once read with awk, before the schema saw it, ran its command."""
    marker = tmp_path / "pwned"
    workdir = _copy_with_makefile(tmp_path)
    config = yaml.safe_load((workdir / "config/smoke.yaml").read_text())
    config["name"] = f"a;touch${{IFS}}{marker};#"
    (workdir / "evil.yaml").write_text(yaml.safe_dump(config))
    result = make(workdir, "verify", "SEEDS=101", "CONFIG=evil.yaml", dry=dry)
    assert not marker.exists()
    assert result.returncode != 0
    assert "config key name:" in result.stderr
    assert "make: config evil.yaml is not valid" in result.stderr
    assert not (workdir / "results").exists()


def test_a_config_named_after_a_default_folder_stops_make(tmp_path):
    workdir = _copy_with_makefile(tmp_path)
    (workdir / "runs.yaml").write_text("name: runs\n")
    result = make(workdir, "report", "CONFIG=runs.yaml")
    assert result.returncode != 0
    assert "'runs' is a folder the default config (full) writes" in result.stderr
