"""workflow.resume and workflow.segment without Snakemake: the resumable state on disk, the
spare store of a training job, and a job killed mid-C that continues to the same bits."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch

from tests.support.training import DATA, RUN, SETTINGS, Killed, job, tensors_equal, train
from workflow.artifacts import load_checkpoint, read_json
from workflow.model import ModelSpec, build_model
from workflow.resume import BetweenCheckpoints, ResumeState, ResumeStore
from workflow.segment import SegmentJob
from workflow.train import train_history

OWNER = {"run": RUN.as_dict(), "segment": "base"}


# Single-threaded deterministic torch for this module's training (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("deterministic_torch")


def digests(job: SegmentJob) -> dict[int, str]:
    return {u: load_checkpoint(p)[1]["params_digest"] for u, p in job.checkpoints.items()}


def record_without_timings(path: Path) -> dict:
    record = read_json(path)
    for phase in record["phases"]:
        phase.pop("seconds")
    return record


def rerun_as_snakemake_does(job: SegmentJob) -> None:
    """Snakemake removes an incomplete job's outputs before it reruns the job."""
    for path in [*job.checkpoints.values(), job.record, job.final_state]:
        if path is not None:
            path.unlink(missing_ok=True)


# --------------------------------------------------------------------------- the state on disk


def _snapshot() -> ResumeState:
    states: list[dict] = []
    settings = dataclasses.replace(SETTINGS, checkpoints=(0, 10))
    model = build_model(1, ModelSpec())
    train_history(
        model,
        DATA,
        "ABC",
        1,
        settings,
        lambda *_: None,
        log=lambda _: None,
        on_state=states.append,
        state_every=4,
    )
    return ResumeState.from_dict(states[-1])  # update 8: after checkpoint 0, 8 losses pending


def test_a_state_saved_between_checkpoints_keeps_its_keys_and_order(tmp_path):
    state = dataclasses.replace(_snapshot(), identity="job")
    path = tmp_path / "state.pt"
    state.save(path, OWNER)
    on_disk = torch.load(path, weights_only=True)
    assert list(on_disk) == [
        "update",
        "model",
        "optimizer",
        "stream",
        "pending_losses",
        "interval_loss",
        "first_c",
        "record",
        "identity",
        "owner",
        "sha256",
    ]
    assert on_disk["update"] == 8 and len(on_disk["pending_losses"]) == 8
    assert on_disk["record"]["checkpoints"].keys() == {0}
    loaded = ResumeState.load(path, OWNER)
    assert isinstance(loaded.between, BetweenCheckpoints)
    assert tensors_equal(loaded.to_dict(), state.to_dict())


def test_a_state_at_a_checkpoint_has_only_what_c_needs(tmp_path):
    _, final = train_history(
        build_model(1, ModelSpec()), DATA, "ABC", 1, SETTINGS, lambda *_: None, log=lambda _: None
    )
    path = tmp_path / "state.pt"
    ResumeState.from_dict(final).save(path, OWNER)
    assert list(torch.load(path, weights_only=True)) == [
        "update",
        "model",
        "optimizer",
        "stream",
        "owner",
        "sha256",
    ]
    loaded = ResumeState.load(path, OWNER)
    assert loaded.between is None and loaded.identity is None and loaded.update == 10
    assert tensors_equal(loaded.to_dict(), final)


def test_a_diverged_segment_leaves_a_state_that_loads_as_none(tmp_path):
    ResumeState.save_diverged(tmp_path / "state.pt", OWNER)
    assert torch.load(tmp_path / "state.pt", weights_only=True)["update"] is None
    assert ResumeState.load(tmp_path / "state.pt", OWNER) is None


# --------------------------------------------------------------------------- the store


def _store(tmp_path, identity="job", every=4, lines=None):
    checkpoints = {u: tmp_path / f"out/update~{u}.npz" for u in (0, 10)}
    log = (lines if lines is not None else []).append
    return ResumeStore(tmp_path / ".resume/base", identity, checkpoints, every, log)


def test_without_a_spare_state_the_job_starts_where_it_was_given(tmp_path):
    given = _snapshot()
    assert _store(tmp_path).start(given) is given
    assert _store(tmp_path).start(None) is None


def test_the_store_resumes_its_own_state_and_puts_its_checkpoints_back(tmp_path):
    lines: list[str] = []
    store = _store(tmp_path, lines=lines)
    out = store.checkpoints[0]
    out.parent.mkdir()
    out.write_bytes(b"checkpoint 0")
    store.keep_checkpoint(0)
    store.save(_snapshot())
    out.unlink()  # Snakemake's cleanup before the rerun
    resumed = store.start(None)
    assert resumed.update == 8 and resumed.identity == "job"
    assert out.read_bytes() == b"checkpoint 0"
    assert lines == [
        "resumable state saved at C update 8",
        "resuming from the state saved at C update 8",
    ]


def test_a_spare_state_of_another_job_is_ignored(tmp_path):
    lines: list[str] = []
    _store(tmp_path, identity="old code").save(_snapshot())
    assert _store(tmp_path, identity="new code", lines=lines).start(None) is None
    assert lines == [
        f"ignoring {tmp_path / '.resume/base/state.pt'}: it was saved by another config or "
        "code version"
    ]


def test_checkpoints_are_kept_only_where_states_are_saved(tmp_path):
    store = _store(tmp_path, every=0)
    store.checkpoints[0].parent.mkdir()
    store.checkpoints[0].write_bytes(b"x")
    store.keep_checkpoint(0)
    assert not store.folder.exists()


def test_clearing_leaves_another_segments_states(tmp_path):
    base = _store(tmp_path)
    other = tmp_path / ".resume/extended"
    other.mkdir(parents=True)
    base.save(_snapshot())
    base.clear()
    assert not base.folder.exists() and other.exists()
    other.rmdir()
    base.clear()
    assert not (tmp_path / ".resume").exists()


# --------------------------------------------------------------------------- kill and resume


def test_a_killed_job_resumes_to_the_bits_of_an_uninterrupted_one(tmp_path):
    plain = job(tmp_path / "plain")
    train(plain)
    killed = job(tmp_path / "killed")
    # C batch 15: after the state saved at update 12 and checkpoint 10, before checkpoint 20.
    with pytest.raises(Killed):
        train(killed, kill_at=15)
    assert killed.checkpoints[10].exists() and not killed.checkpoints[20].exists()
    assert (killed.record.parent / ".resume/base/state.pt").exists()
    rerun_as_snakemake_does(killed)
    lines = train(killed)
    assert "resuming from the state saved at C update 12" in lines
    assert digests(killed) == digests(plain)
    assert record_without_timings(killed.record) == record_without_timings(plain.record)
    assert tensors_equal(
        torch.load(killed.final_state, weights_only=True),
        torch.load(plain.final_state, weights_only=True),
    )
    assert not (killed.record.parent / ".resume").exists()


def test_a_killed_extension_resumes_to_the_same_bits(tmp_path):
    plain, killed = job(tmp_path / "plain"), job(tmp_path / "killed")
    train(plain)
    train(killed)
    plain_ext, killed_ext = (
        job(tmp_path / "plain", "extended"),
        job(tmp_path / "killed", "extended"),
    )
    train(plain_ext)
    with pytest.raises(Killed):
        train(killed_ext, kill_at=7)  # after the state at update 24
    rerun_as_snakemake_does(killed_ext)
    lines = train(killed_ext)
    assert "resuming from the state saved at C update 24" in lines
    assert digests(killed_ext) == digests(plain_ext)
    assert record_without_timings(killed_ext.record) == record_without_timings(plain_ext.record)


def test_a_job_of_another_code_version_starts_over(tmp_path):
    old, new = job(tmp_path, code="code-1"), job(tmp_path, code="code-2")
    with pytest.raises(Killed):
        train(old, kill_at=15)
    rerun_as_snakemake_does(old)
    lines = train(new)
    assert any(line.startswith("ignoring ") for line in lines)
    assert not any(line.startswith("resuming") for line in lines)
    plain = job(tmp_path / "plain")
    train(plain)
    assert digests(new) == digests(plain)


def test_an_extension_of_a_diverged_run_writes_every_output_as_diverged(tmp_path):
    extension = job(tmp_path, "extended")
    ResumeState.save_diverged(extension.given_state, extension.state_owner("base"))
    lines = train(extension)
    assert "the base segment diverged: there is nothing to continue" in lines
    for path in extension.checkpoints.values():
        state, meta = load_checkpoint(path)
        assert state == {} and meta["status"] == "diverged"
    record = json.loads(extension.record.read_text())
    assert (record["status"], record["diverged_at"]) == ("diverged", "base segment")
