"""Parsing the workflow (a dry run, lint, a report) sets up no machine: it compiles nothing,
writes no cache file and leaves the process's environment as it found it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.trees import copy_repo

# A compiler that only records that it was called.
RECORDING_CC = '#!/bin/sh\necho "$@" >> "{log}"\nexit 1\n'
# Parses the workflow as the real Snakefile does, then reports what the parse changed.
ENVIRONMENT_CHECK = """import json, os
BEFORE = dict(os.environ)
include: "Snakefile"
changed = sorted(k for k in set(BEFORE) | set(os.environ) if BEFORE.get(k) != os.environ.get(k))
print("environment changed by parsing:", json.dumps(changed))
"""


def _tree(root: Path) -> dict[str, int]:
    """Every file under ``root`` and its size, but Snakemake's own folder and bytecode."""
    return {
        str(path.relative_to(root)): path.stat().st_size
        for path in root.rglob("*")
        if path.is_file() and ".snakemake" not in path.parts and "__pycache__" not in path.parts
    }


def test_a_dry_run_compiles_nothing_writes_nothing_and_changes_no_variable(tmp_path) -> None:
    workdir = tmp_path / "repo"
    workdir.mkdir()
    copy_repo(workdir)
    (workdir / "check.smk").write_text(ENVIRONMENT_CHECK)
    log, cc = tmp_path / "cc.log", tmp_path / "cc"
    cc.write_text(RECORDING_CC.format(log=log))
    cc.chmod(0o755)
    cache = tmp_path / "cache"
    before = _tree(workdir)
    done = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", "check.smk", "all"]
        + ["--configfile", "config/smoke.yaml"],
        cwd=workdir,
        env={**os.environ, "CC": str(cc), "HISTRES_KERNELS": str(cache)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert "Job stats:" in output
    assert "environment changed by parsing: []" in output, output[:3000]
    assert not log.exists(), log.read_text()
    assert not cache.exists()
    assert _tree(workdir) == before
