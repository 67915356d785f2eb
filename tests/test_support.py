"""Tests for the shared test helpers where a slip would quietly cost every run of the suite."""

from __future__ import annotations

from base64 import urlsafe_b64encode
from pathlib import Path

from tests.support.trees import OWN_SMOKE_RUN, copy_records


def record(root: Path, output: str, kind: str = "metadata") -> Path:
    path = root / ".snakemake" / kind / urlsafe_b64encode(output.encode()).decode()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


def test_a_scratch_tree_gets_the_records_of_the_small_configs_outputs_only(tmp_path) -> None:
    source, target = tmp_path / "checkout", tmp_path / "copy"
    kept = [
        record(source, "results/smoke/summary/main.csv"),
        record(source, "resources/mnist.npz"),
        record(source, "results/smoke/runs/x/run.json", kind="incomplete"),
    ]
    record(source, "results/summary/main.csv")  # the full config's
    record(source, "results/smokey/summary/main.csv")
    copy_records(source, target, OWN_SMOKE_RUN)
    copied = sorted(p.relative_to(target) for p in target.rglob("*") if p.is_file())
    assert copied == sorted(p.relative_to(source) for p in kept)
