"""A hostile user's edits (issue 39): each one stops the reader with a message naming the file,
instead of changing a number silently or removing good outputs."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from tests.support.exports import COMPARISON, FULL, export_tree, trained_tree
from tests.support.training import RUN, job, train
from tests.support.trees import MAIN_RUN, SNAKEMAKE, copy_repo, smoke_with, snakemake
from workflow import manifest
from workflow.artifacts import ArtifactError, write_csv, write_json
from workflow.comparisons import comparison_frame, read_comparisons
from workflow.match_table import read_matches, write_matches
from workflow.matching import select_matches
from workflow.mnist import MnistArrays, save_npz
from workflow.preflight import PreflightError, check_mnist_copy
from workflow.reference import pair_results
from workflow.resume import NotItsState, ResumeState, ResumeStore, StateError
from workflow.tables import read_table, sidecar_of, write_table

REPO = Path(__file__).resolve().parent.parent
MATCHING = {"max_accuracy_gap_pp": 0.5, "min_accuracy_pct": 90.0}


# --------------------------------------------------------------------- 1: resumable states


@pytest.fixture
def base_state(tmp_path, deterministic_torch) -> Path:
    """The state.pt a base segment of RUN (seed 1) leaves."""
    base = job(tmp_path / "seed1")
    train(base)
    return base.final_state


def test_a_state_of_another_run_is_refused_by_the_extension(tmp_path, base_state) -> None:
    other = dataclasses.replace(
        job(tmp_path / "seed2", "extended"), run=dataclasses.replace(RUN, seed=2)
    )
    other.given_state.parent.mkdir(parents=True)
    shutil.copy2(base_state, other.given_state)  # cp seed~1/.../state.pt seed~2/.../state.pt
    with pytest.raises(NotItsState, match=r"state\.pt: saved by .*'seed': 1") as raised:
        train(other)
    assert str(other.given_state) in str(raised.value)
    assert "'seed': 2" in str(raised.value) and "rule train_history" in str(raised.value)
    assert not other.record.exists()


def test_a_damaged_state_is_refused(base_state) -> None:
    owner = job(base_state.parent.parent).state_owner("base")
    assert ResumeState.load(base_state, owner).update == 20  # intact: it loads
    saved = torch.load(base_state, weights_only=True)
    next(iter(saved["model"].values())).view(-1)[0] += 1.0  # one weight, digest kept
    torch.save(saved, base_state)
    with pytest.raises(StateError, match="does not match the SHA-256 stored with it"):
        ResumeState.load(base_state, owner)


def test_a_state_without_owner_or_digest_is_refused(base_state) -> None:
    owner = job(base_state.parent.parent).state_owner("base")
    saved = torch.load(base_state, weights_only=True)
    torch.save({k: v for k, v in saved.items() if k not in ("owner", "sha256")}, base_state)
    with pytest.raises(StateError, match="carries no owner or digest"):
        ResumeState.load(base_state, owner)


def test_a_damaged_spare_state_is_discarded_and_the_job_starts_over(tmp_path, base_state):
    lines: list[str] = []
    store = ResumeStore(tmp_path / ".resume/base", "job", {}, 4, lines.append)
    state = ResumeState.load(base_state, job(base_state.parent.parent).state_owner("base"))
    store.save(state)
    data = bytearray(store.state_path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    store.state_path.write_bytes(bytes(data))
    assert store.start(None) is None  # the policy for unusable spare states: start over
    assert lines[-1].startswith(f"ignoring {store.state_path}")


# --------------------------------------------------------------------- 3: tables in the tree


def _comparison_table(folder: Path, seed: int, rows: list[dict]) -> Path:
    path = folder / f"seed~{seed}" / "ABC_vs_BAC" / "base.csv"
    write_table(path, sidecar_of(path), comparison_frame(rows), {"segment": "base"})
    return path


def _rows(seed: int, gaps: list[float], accuracy: float = 95.0) -> list[dict]:
    return [
        {
            "seed": seed,
            "update": 25 * i,
            "pair_status": "ok",
            "h_repr": 0.1,
            "acc_ABC_pct": accuracy,
            "acc_BAC_pct": accuracy,
            "acc_gap_pp": gap,
        }
        for i, gap in enumerate(gaps)
    ]


def _edit_line(path: Path, number: int, old: str, new: str) -> None:
    lines = path.read_text().splitlines(keepends=True)
    assert old in lines[number]
    lines[number] = lines[number].replace(old, new, 1)
    path.write_text("".join(lines))


def test_an_edited_value_in_a_comparison_table_stops_its_reader(tmp_path) -> None:
    path = _comparison_table(tmp_path, 101, _rows(101, [2.0, 0.1]))
    assert len(read_comparisons([path], {"base": [0, 25]})) == 2
    _edit_line(path, 1, ",0.1,", ",0.5,")  # H_repr 0.1 -> 0.5 at update 0
    with pytest.raises(ArtifactError, match="does not match the SHA-256 recorded") as raised:
        read_comparisons([path], {"base": [0, 25]})
    assert str(path) in str(raised.value) and "rebuilds it" in str(raised.value)


def test_a_table_whose_provenance_records_no_digest_is_refused(tmp_path) -> None:
    path = tmp_path / "seed~101" / "ABC_vs_BAC" / "base.csv"
    write_csv(path, comparison_frame(_rows(101, [2.0, 0.1])))
    write_json(sidecar_of(path), {"segment": "base"})  # as compare_runs wrote it before
    with pytest.raises(ArtifactError, match="records no content digest"):
        read_comparisons([path], {"base": [0, 25]})
    sidecar_of(path).unlink()
    with pytest.raises(ArtifactError, match="base.provenance.json is missing"):
        read_comparisons([path], {"base": [0, 25]})


def test_an_edited_probe_table_stops_its_reader(tmp_path) -> None:
    path = tmp_path / "probes" / "seed~101.csv"
    write_table(path, sidecar_of(path), pd.DataFrame({"seed": [101], "acc_pct": [91.5]}), {})
    assert read_table(path, "rebuild").iloc[0]["acc_pct"] == 91.5
    path.write_text(path.read_text().replace("91.5", "99.5"))
    with pytest.raises(ArtifactError, match=r"seed~101.csv: content does not match"):
        read_table(path, "rebuild")


def _matches(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """Seed 101 matches at 25 (not at 0); seed 202 never matches."""
    comparisons = pd.concat(
        [
            comparison_frame(_rows(101, [2.0, 0.1, 0.1])),
            comparison_frame(_rows(202, [2.0, 1.0, 0.9])),
        ],
        ignore_index=True,
    )
    path = tmp_path / "main" / "matches.csv"
    table = select_matches(comparisons, MATCHING["max_accuracy_gap_pp"], 90.0)
    write_matches(path, sidecar_of(path), table, {"config": {"matching": MATCHING}})
    return path, comparisons


def test_an_edited_match_table_stops_its_reader(tmp_path) -> None:
    path, comparisons = _matches(tmp_path)
    intact = read_matches(path, comparisons, MATCHING)
    assert intact["status"].tolist() == ["matched", "unmatched"]
    _edit_line(path, 2, "202,unmatched,", "202,matched,50")
    with pytest.raises(ArtifactError, match="does not match the SHA-256 recorded"):
        read_matches(path, comparisons, MATCHING)


@pytest.mark.parametrize(
    ("forged", "message"),
    [
        (
            {"seed": [101, 202], "status": ["matched", "matched"], "matched_update": [25, 50]},
            r"row 2 \(seed 202\) says matched at update 50, but .* give unmatched",
        ),
        (
            {"seed": [101, 202], "status": ["matched", "unmatched"], "matched_update": [50, None]},
            r"row 1 \(seed 101\) says matched at update 50, but .* give matched at update 25",
        ),
        (
            {
                "seed": [101, 202],
                "status": ["unmatched", "unmatched"],
                "matched_update": [None] * 2,
            },
            r"row 1 \(seed 101\) says unmatched, but .* give matched at update 25",
        ),
        ({"seed": [101], "status": ["matched"], "matched_update": [25]}, r"seeds \[202\]"),
    ],
)
def test_a_match_table_is_checked_against_the_rule_it_claims(tmp_path, forged, message) -> None:
    """Even with a digest that fits (written through the writer), a row the matching rule
    does not give on the comparisons stops the reader, naming the seed and the row."""
    path, comparisons = _matches(tmp_path)
    frame = pd.DataFrame(forged).astype({"matched_update": "Int64"})
    write_matches(path, sidecar_of(path), frame, {"config": {"matching": MATCHING}})
    with pytest.raises(ArtifactError, match=message) as raised:
        read_matches(path, comparisons, MATCHING)
    assert str(path) in str(raised.value)


def test_a_match_table_of_another_rule_is_refused(tmp_path) -> None:
    path, comparisons = _matches(tmp_path)
    looser = {**MATCHING, "max_accuracy_gap_pp": 1.0}
    with pytest.raises(ArtifactError, match="made under matching"):
        read_matches(path, None, looser)


# --------------------------------------------------------------------- 2: the reference


def _reference(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "reference"
    export_tree(trained_tree(tmp_path / "lost", [101, 202]), out, "first", config=FULL)
    table = out / "comparisons" / COMPARISON.format(seed=101).removeprefix("runs/")
    return out, table


def test_restore_refuses_a_table_changed_after_the_export(tmp_path) -> None:
    out, table = _reference(tmp_path)
    table.write_text(table.read_text().replace("0.1", "0.5"))
    results = tmp_path / "fresh" / "results" / "tiny"
    with pytest.raises(manifest.ManifestError, match="changed after the export") as raised:
        pair_results.restore(out, results, FULL)
    assert str(table) in str(raised.value)
    assert not results.exists()


def test_restore_refuses_a_table_added_after_the_export(tmp_path) -> None:
    out, table = _reference(tmp_path)
    extra = table.parent.parent.parent / "seed~303" / "ABC_vs_BAC" / "base.csv"
    extra.parent.mkdir(parents=True)
    shutil.copy2(table, extra)
    with pytest.raises(manifest.ManifestError, match="not listed"):
        pair_results.restore(out, tmp_path / "fresh", FULL)


def test_a_folder_without_a_manifest_is_sealed_or_exported_again(tmp_path) -> None:
    out, _ = _reference(tmp_path)
    (out / manifest.NAME).unlink()  # a folder exported before manifests
    results = tmp_path / "fresh" / "results" / "tiny"
    with pytest.raises(manifest.ManifestError, match="seal it.*export it again"):
        pair_results.restore(out, results, FULL)
    manifest.main(["seal", str(out)])
    assert pair_results.restore(out, results, FULL).restored == 2
    # The restored tables carry the digest their readers check.
    restored = results / COMPARISON.format(seed=101)
    assert read_table(restored, "rebuild")["seed"].tolist() == [101, 101]


def test_an_export_never_carries_an_edited_table_into_the_folder(tmp_path) -> None:
    out, table = _reference(tmp_path)
    table.write_text(table.read_text().replace("0.1", "0.5"))
    edited = table.read_bytes()
    with pytest.raises(manifest.ManifestError, match="changed after the export"):
        export_tree(trained_tree(tmp_path / "new", []), out, "second", config=FULL)
    assert table.read_bytes() == edited  # the folder is left as it was


def test_the_pages_written_after_the_export_do_not_break_the_manifest(tmp_path) -> None:
    out, _ = _reference(tmp_path)
    for page in manifest.AFTER_EXPORT:  # make reference writes them after the export
        (out / page).write_text("a page of the folder's own tables\n")
    assert pair_results.restore(out, tmp_path / "fresh" / "results" / "tiny", FULL).restored == 2


@pytest.mark.parametrize("name", ["full", "smoke", "cuda"])
def test_every_reference_folder_is_as_its_manifest_lists(name) -> None:
    manifest.check(REPO / "reference" / name)


# --------------------------------------------------------------------- 5: the MNIST copy


def _tiny_mnist(path: Path) -> dict[str, str]:
    rng = np.random.default_rng(0)
    arrays = MnistArrays(
        train_images=rng.integers(0, 256, (20, 28, 28), dtype=np.uint8),
        train_labels=np.arange(20, dtype=np.uint8) % 10,
        test_images=rng.integers(0, 256, (10, 28, 28), dtype=np.uint8),
        test_labels=np.arange(10, dtype=np.uint8),
    )
    save_npz(arrays, path, provenance={})
    return arrays.digests()


def test_a_changed_pixel_is_named_with_the_file_and_the_digest(tmp_path) -> None:
    path = tmp_path / "mnist.npz"
    check_mnist_copy(path, {})  # no copy yet: prepare_mnist makes and verifies one
    digests = _tiny_mnist(path)
    check_mnist_copy(path, digests)
    with np.load(path) as npz:
        arrays = {name: npz[name] for name in npz.files}
    arrays["train_images"][3, 14, 14] ^= 1
    np.savez(path, **arrays)
    with pytest.raises(PreflightError) as raised:
        check_mnist_copy(path, digests)
    text = str(raised.value)
    assert str(path) in text and f"expected {digests['train_images']}" in text
    assert "no output was removed" in text


@pytest.mark.workflow
def test_a_bad_mnist_copy_stops_the_workflow_before_any_job(tmp_path) -> None:
    workdir = copy_repo(tmp_path)
    _tiny_mnist(workdir / "resources/mnist.npz")  # not the config's digests
    earlier = workdir / MAIN_RUN / "seed~101/order~ABC/run.json"
    earlier.parent.mkdir(parents=True)
    earlier.write_text("an earlier run's record\n")
    for args in (["-n"], ["--keep-going"]):
        result = subprocess.run(
            [*SNAKEMAKE, "--cores", "2", *args, "--configfile", "config/smoke.yaml"],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = result.stdout + result.stderr
        assert result.returncode != 0, output[-3000:]
        assert "resources/mnist.npz failed verification: train_images: expected 741c9888" in output
        assert not re.findall(r"^(?:local)?rule \w+:", output, flags=re.MULTILINE)
        assert earlier.read_text() == "an earlier run's record\n"


# --------------------------------------------------------------------- 7: the device at -n


@pytest.mark.workflow
@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA device")
def test_a_dry_run_of_local_execution_checks_the_device(tmp_path) -> None:
    workdir = copy_repo(tmp_path)
    override = smoke_with(workdir, "gpu", device="cuda", kernels="torch")
    result = subprocess.run(
        [*SNAKEMAKE, "-n", "--cores", "2", "--configfile", override],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert "config key training.device: cuda requested, but CUDA is not available" in output
    assert "local execution" in output
    # Planned for a cluster, the dry run cannot see the nodes, and says so.
    output = snakemake(
        workdir, "-n", "--executor", "slurm", "--jobs", "2", "--configfile", override
    )
    assert "Under cluster execution the jobs run on other machines" in output


# --------------------------------------------------------------------- output modes


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_outputs_get_the_mode_of_the_umask(tmp_path, umask) -> None:
    old = os.umask(umask)
    try:
        path = tmp_path / "out.json"
        write_json(path, {"a": 1})
        write_csv(tmp_path / "out.csv", pd.DataFrame({"a": [1]}))
    finally:
        os.umask(old)
    for written in (path, tmp_path / "out.csv"):
        assert written.stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "out.json"]


# --------------------------------------------------------------------- hashed requirements


def test_every_package_installed_is_pinned_with_its_hash() -> None:
    """requirements-dev.txt (what make installs) constrains every package to the lock, whose
    hashes put pip in hash-checking mode (envs/lock.py)."""
    envs = REPO / "envs"
    assert "-c requirements.lock" in (envs / "requirements-dev.txt").read_text().splitlines()
    lock = {}
    for line in (envs / "requirements.lock").read_text().splitlines():
        if line and not line.startswith("#"):
            found = re.fullmatch(r"([A-Za-z0-9_.-]+)==(\S+) --hash=sha256:[0-9a-f]{64}", line)
            assert found, line
            lock[found.group(1).lower().replace("_", "-")] = found.group(2)
    for name in ("requirements.txt", "requirements-dev.txt"):
        text = (envs / name).read_text()
        for package, version in re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)$", text, re.MULTILINE):
            assert lock.get(package.lower().replace("_", "-")) == version, (name, package)
