"""Periodic resumable states: a job killed between checkpoints continues bit-identically."""

from __future__ import annotations

import dataclasses

import torch

from tests.support.training import DATA, SETTINGS, fresh_model, states_equal
from workflow.machine.determinism import configure_torch
from workflow.model import ModelSpec, build_model, model_state
from workflow.train import train_history

CHECKPOINTS = (0, 10, 20)


def run(model, resume=None, checkpoints=CHECKPOINTS, state_every=0):
    configure_torch(1)
    settings = dataclasses.replace(SETTINGS, checkpoints=checkpoints)
    saved, states = [], {}

    def on_checkpoint(update, model):
        states[update] = model_state(model)

    record, final = train_history(
        model,
        DATA,
        "ABC",
        1,
        settings,
        on_checkpoint,
        log=lambda _: None,
        resume=resume,
        on_state=saved.append if state_every else None,
        state_every=state_every,
    )
    return record, states, saved, final


def test_saving_states_changes_nothing():
    plain, plain_states, _, _ = run(build_model(1, ModelSpec()))
    saving, saving_states, saved, _ = run(build_model(1, ModelSpec()), state_every=4)
    assert [s["update"] for s in saved] == [4, 8, 12, 16]
    assert saving.checkpoints == plain.checkpoints
    assert states_equal(saving_states[20], plain_states[20])


def test_a_run_resumed_between_checkpoints_matches_the_uninterrupted_run(tmp_path):
    plain, plain_states, _, _ = run(build_model(1, ModelSpec()))
    _, _, saved, _ = run(build_model(1, ModelSpec()), state_every=4)
    path = tmp_path / "state.pt"
    torch.save(saved[2], path)  # update 12: after checkpoint 10, with 2 losses pending
    state = torch.load(path, weights_only=True)
    assert state["update"] == 12
    resumed, resumed_states, _, _ = run(fresh_model(1, state), resume=state, checkpoints=(20,))
    assert states_equal(resumed_states[20], plain_states[20])
    assert resumed.checkpoints == plain.checkpoints  # 0 and 10 come from the saved record
    assert resumed.init_digest == plain.init_digest
    common = {p["phase"]: p for p in plain.phases}["common"]
    resumed_common = {p["phase"]: p for p in resumed.phases}["common"]
    assert resumed_common["interval_loss"] == common["interval_loss"]
