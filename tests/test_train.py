"""Tests for workflow.train: the input transform, determinism, batching, divergence, optimizer."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from PIL import Image
from torchvision import transforms

import workflow.history as history_module
from tests.support.training import (
    CHECKPOINTS,
    DATA,
    MEAN,
    SETTINGS,
    STD,
    fresh_model,
    states_equal,
    tensors_equal,
)
from workflow.artifacts import params_digest
from workflow.images import normalize
from workflow.model import ModelSpec, build_model, model_state
from workflow.tasks import derive_seed
from workflow.train import (
    BatchStream,
    RunRecord,
    TrainingData,
    TrainSettings,
    train_history,
)

# Single-threaded deterministic torch for this module's training (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("deterministic_torch")


# --------------------------------------------------------------------------- normalize


def _reference_transform() -> transforms.Compose:
    return transforms.Compose([transforms.ToTensor(), transforms.Normalize((MEAN,), (STD,))])


def _uint8_images(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
    # Make sure every pixel value 0..255 occurs at least once.
    images[0].reshape(-1)[:256] = np.arange(256, dtype=np.uint8)
    return images


def test_normalize_matches_torchvision_bitwise() -> None:
    images = _uint8_images(5, seed=0)
    reference = _reference_transform()
    expected = torch.stack([reference(Image.fromarray(img)) for img in images])
    got = normalize(images, MEAN, STD)
    assert got.dtype == torch.float32
    assert got.shape == (5, 1, 28, 28)
    assert torch.equal(got, expected)


def test_normalize_matches_torchvision_mode_l_and_strided_input() -> None:
    images = _uint8_images(8, seed=1)
    reference = _reference_transform()
    pil = [Image.fromarray(img).convert("L") for img in images]
    assert all(p.mode == "L" for p in pil)
    expected = torch.stack([reference(p) for p in pil])
    # A non-contiguous view of the same images (every other image) must give the same bits.
    assert torch.equal(normalize(images[::2], MEAN, STD), expected[::2])
    assert torch.equal(normalize(images, MEAN, STD), expected)


def test_normalize_formula_values() -> None:
    images = np.array([[[0, 255] + [0] * 26] + [[0] * 28] * 27], dtype=np.uint8)
    x = normalize(images, MEAN, STD)
    np.testing.assert_allclose(float(x[0, 0, 0, 0]), -MEAN / STD, rtol=1e-6)
    np.testing.assert_allclose(float(x[0, 0, 0, 1]), (1 - MEAN) / STD, rtol=1e-6)


# --------------------------------------------------------------------------- training helpers


@dataclasses.dataclass
class Run:
    record: RunRecord
    states: dict[int, dict[str, np.ndarray]]
    calls: list[int]
    modes: list[bool]
    state: dict | None = None


def _train(
    order: str = "ABC",
    seed: int = 1,
    data: TrainingData = DATA,
    model: torch.nn.Module | None = None,
    stream: int = 0,
    resume: dict | None = None,
    **overrides,
) -> Run:
    settings = dataclasses.replace(SETTINGS, **overrides)
    if model is None:
        model = build_model(seed, ModelSpec())
    run = Run(None, {}, [], [])

    def on_checkpoint(checkpoint: int, net: torch.nn.Module) -> None:
        run.calls.append(checkpoint)
        run.modes.append(net.training)
        # model_state() may alias the live parameters: copy to keep a snapshot.
        run.states[checkpoint] = {k: v.copy() for k, v in model_state(net).items()}

    run.record, run.state = train_history(
        model,
        data,
        order,
        seed,
        settings,
        on_checkpoint,
        log=lambda _: None,
        stream=stream,
        resume=resume,
    )
    return run


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    return {
        "ABC1": _train("ABC", 1),
        "ABC1_again": _train("ABC", 1),
        "BAC1": _train("BAC", 1),
        "ABC2": _train("ABC", 2),
        "ABC1_preserve": _train("ABC", 1, optimizer_at_common="preserve"),
    }


# --------------------------------------------------------------------------- training tests


def test_run_completes_and_records(runs: dict[str, Run]) -> None:
    record = runs["ABC1"].record
    assert record.status == "ok"
    assert record.diverged_at is None
    assert list(record.checkpoints) == list(CHECKPOINTS)
    assert [p["phase"] for p in record.phases] == ["phase1", "phase2", "common"]
    assert [p["task"] for p in record.phases] == ["A", "B", "C"]
    assert record.phases[2]["updates"] == max(CHECKPOINTS)
    assert set(record.phases[2]["interval_loss"]) == {5, 10}
    assert all(np.isfinite(v) for v in record.phases[2]["interval_loss"].values())


def test_same_process_reruns_are_bit_identical(runs: dict[str, Run]) -> None:
    first, second = runs["ABC1"], runs["ABC1_again"]
    assert first.record.init_digest == second.record.init_digest
    assert first.record.checkpoints == second.record.checkpoints
    for checkpoint in CHECKPOINTS:
        a, b = first.states[checkpoint], second.states[checkpoint]
        assert states_equal(a, b), checkpoint
        assert params_digest(a) == params_digest(b)
    assert first.record.phases[0]["epoch_loss"] == second.record.phases[0]["epoch_loss"]


def test_checkpoint_digests_match_states_handed_out(runs: dict[str, Run]) -> None:
    run = runs["ABC1"]
    for checkpoint in CHECKPOINTS:
        assert run.record.checkpoints[checkpoint] == params_digest(run.states[checkpoint])
    # Training actually changes the weights between checkpoints.
    assert len(set(run.record.checkpoints.values())) == len(CHECKPOINTS)


def test_checkpoint_states_are_c_order_float32(runs: dict[str, Run]) -> None:
    state = runs["ABC1"].states[0]
    assert list(state) == [
        "conv1.weight",
        "conv1.bias",
        "conv2.weight",
        "conv2.bias",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]
    for name, value in state.items():
        assert value.dtype == np.float32, name
        assert value.flags["C_CONTIGUOUS"], name
    assert state["conv1.weight"].shape == (32, 1, 3, 3)


def test_orders_share_init_but_end_different(runs: dict[str, Run]) -> None:
    abc, bac = runs["ABC1"], runs["BAC1"]
    assert abc.record.init_digest == bac.record.init_digest
    assert abc.record.init_digest == params_digest(model_state(build_model(1, ModelSpec())))
    assert [p["task"] for p in bac.record.phases] == ["B", "A", "C"]
    for checkpoint in CHECKPOINTS:
        assert not states_equal(abc.states[checkpoint], bac.states[checkpoint])
        assert abc.record.checkpoints[checkpoint] != bac.record.checkpoints[checkpoint]


def test_different_seeds_have_different_init(runs: dict[str, Run]) -> None:
    assert runs["ABC1"].record.init_digest != runs["ABC2"].record.init_digest
    assert runs["ABC1"].record.checkpoints[10] != runs["ABC2"].record.checkpoints[10]


def test_on_checkpoint_called_once_per_checkpoint_in_order(runs: dict[str, Run]) -> None:
    for run in runs.values():
        assert run.calls == list(CHECKPOINTS)
        # Checkpoints are handed over in eval mode (dumps must not see train-mode behaviour).
        assert run.modes == [False] * len(CHECKPOINTS)


def test_optimizer_preserve_vs_reset(runs: dict[str, Run]) -> None:
    reset, preserve = runs["ABC1"], runs["ABC1_preserve"]
    assert preserve.record.status == "ok"
    # Identical up to the start of C: the optimizer choice only matters once C updates run.
    assert states_equal(reset.states[0], preserve.states[0])
    assert reset.record.checkpoints[0] == preserve.record.checkpoints[0]
    for checkpoint in (5, 10):
        assert not states_equal(reset.states[checkpoint], preserve.states[checkpoint])


def test_progress_is_logged_by_time_in_every_phase_without_changing_bits(
    runs: dict[str, Run], monkeypatch
) -> None:
    # With a zero interval every update logs: lines come from both task phases and from C
    # between checkpoints, and no placeholder is printed as a number.
    monkeypatch.setattr(history_module, "PROGRESS_SECONDS", 0.0)
    lines: list[str] = []
    model = build_model(1, ModelSpec())
    record, _ = train_history(model, DATA, "ABC", 1, SETTINGS, lambda *_: None, log=lines.append)
    assert any(line.startswith("phase1 task A epoch 1: update 1/") for line in lines)
    assert any(line.startswith("phase2 task B") for line in lines)
    assert any(line.startswith("common C 3/10:") for line in lines)  # between checkpoints 0, 5
    assert all("updates/s" in line and "ETA" in line for line in lines)
    assert not any("nan" in line for line in lines)
    assert any("common C 0/10" in line and "no loss yet" in line for line in lines)
    assert record.checkpoints == runs["ABC1"].record.checkpoints


def test_unknown_task_order_fails_loudly() -> None:
    with pytest.raises(KeyError):
        _train("XYC", 1)


def test_last_partial_batch_is_kept() -> None:
    base = DATA
    a = base.tasks["A"][:70]
    b = base.tasks["B"][:40]
    data = TrainingData(base.images, base.labels, {"A": a, "B": b, "C": base.tasks["C"]})
    model = build_model(3, ModelSpec())
    sizes: list[int] = []
    model.register_forward_pre_hook(lambda _m, args: sizes.append(args[0].shape[0]))
    # PyTorch's kernels: the fused forward does not pass through the module's hooks.
    run = _train(
        "ABC", 3, data=data, model=model, epochs_per_task=2, checkpoints=(0, 3), kernels="torch"
    )
    record = run.record
    assert record.status == "ok"
    # 70 images at batch 32 -> 3 updates per epoch (32, 32, 6); 40 -> 2 updates (32, 8).
    phase1 = record.phases[0]["updates"]
    assert phase1 == 2 * 3
    assert record.phases[1]["updates"] == 2 * 2
    assert len(record.phases[0]["epoch_loss"]) == 2
    assert sizes[:10] == [32, 32, 6, 32, 32, 6, 32, 8, 32, 8]
    # C: 50 images -> 32, 18, then the reshuffled stream starts again.
    assert sizes[10:] == [32, 18, 32]


def test_each_task_epoch_sees_every_task_image_once() -> None:
    model = build_model(4, ModelSpec())
    seen: list[torch.Tensor] = []

    def hook(_module, args):
        seen.append(args[0].detach().clone())

    model.register_forward_pre_hook(hook)
    _train("ABC", 4, model=model, checkpoints=(0,), kernels="torch")
    n_a, n_b = len(DATA.tasks["A"]), len(DATA.tasks["B"])
    batches_a = -(-n_a // 32)
    phase1 = torch.cat(seen[:batches_a])
    phase2 = torch.cat(seen[batches_a:])
    assert phase1.shape[0] == n_a and phase2.shape[0] == n_b

    def rows(x: torch.Tensor) -> set[bytes]:
        return {r.numpy().tobytes() for r in x.reshape(x.shape[0], -1)}

    assert rows(phase1) == rows(DATA.images[DATA.tasks["A"]])
    assert rows(phase2) == rows(DATA.images[DATA.tasks["B"]])


def test_data_order_follows_documented_seed_rule() -> None:
    """Phase shuffles come from derive_seed(seed, order, phase); C from (seed, order, common)."""
    model = build_model(4, ModelSpec())
    seen: list[torch.Tensor] = []
    model.register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach().clone()))
    _train("BAC", 4, model=model, checkpoints=(0, 3), kernels="torch")
    expected = []
    for phase, task in (("phase1", "B"), ("phase2", "A")):
        generator = torch.Generator().manual_seed(derive_seed(4, "BAC", phase))
        indices = DATA.tasks[task]
        expected += list(indices[torch.randperm(len(indices), generator=generator)].split(32))
    generator = torch.Generator().manual_seed(derive_seed(4, "BAC", "common"))
    c = DATA.tasks["C"]
    c_batches = list(c[torch.randperm(len(c), generator=generator)].split(32))
    perm2 = torch.randperm(len(c), generator=generator)  # reshuffled when exhausted
    expected += c_batches + [c[perm2][:32]]
    assert len(seen) == len(expected)
    for got, batch in zip(seen, expected, strict=True):
        assert torch.equal(got, DATA.images[batch])


def test_huge_learning_rate_is_recorded_as_diverged() -> None:
    run = _train("ABC", 5, lr=1e6)
    record = run.record
    assert record.status == "diverged"
    assert set(record.diverged_at) == {"phase", "update"}
    assert record.diverged_at["phase"] in ("phase1", "phase2", "common")
    assert isinstance(record.diverged_at["update"], int)
    assert record.diverged_at["update"] >= 1
    if record.diverged_at["phase"] != "common":
        assert run.calls == []
        assert record.checkpoints == {}
    assert run.state is None


def test_nan_weights_diverge_at_first_update() -> None:
    model = build_model(6, ModelSpec())
    with torch.no_grad():
        model.conv1.weight[0, 0, 0, 0] = float("nan")
    run = _train("ABC", 6, model=model)
    assert run.record.status == "diverged"
    assert run.record.diverged_at == {"phase": "phase1", "update": 1}
    assert run.calls == []
    assert run.state is None


def test_train_settings_from_config() -> None:
    settings = TrainSettings.from_config(
        {
            "epochs_per_task": 1,
            "batch_size": 32,
            "lr": 0.05,
            "momentum": 0.9,
            "weight_decay": 0.0,
            "optimizer_at_common": "reset",
            "checkpoints": [0, 5, 10],
            "torch_threads": 1,
            "device": "cpu",
            "kernels": "fused",
        }
    )
    assert settings == SETTINGS
    assert isinstance(settings.checkpoints, tuple)


def test_train_settings_ignore_unknown_keys_and_take_overrides() -> None:
    training = {
        **dataclasses.asdict(SETTINGS),
        "checkpoints": [0, 5, 10],
        "extended_checkpoints": [25, 50],
    }
    settings = TrainSettings.from_config(
        training, lr=0.01, optimizer_at_common="preserve", checkpoints=[25, 50]
    )
    assert settings == dataclasses.replace(
        SETTINGS, lr=0.01, optimizer_at_common="preserve", checkpoints=(25, 50)
    )
    assert isinstance(settings.checkpoints, tuple)
    assert not hasattr(settings, "extended_checkpoints")
    with pytest.raises((TypeError, KeyError)):
        TrainSettings.from_config({"lr": 0.1})  # required settings missing


# --------------------------------------------------------------------------- resumable state


def test_state_is_returned_and_complete(runs: dict[str, Run]) -> None:
    run = runs["ABC1"]
    state = run.state
    assert set(state) == {"update", "model", "optimizer", "stream"}
    assert state["update"] == max(CHECKPOINTS)
    weights = {k: v.numpy() for k, v in state["model"].items()}
    assert states_equal(weights, run.states[10])
    assert params_digest(weights) == run.record.checkpoints[10]
    assert set(state["stream"]) == {"generator", "order", "position"}


@pytest.mark.parametrize("policy", ["reset", "preserve"])
@pytest.mark.parametrize("split", [5, 4], ids=["mid_epoch", "at_exhaustion"])
def test_resume_is_bit_identical_to_uninterrupted(runs: dict[str, Run], policy, split) -> None:
    """Train to ``split``, continue in a fresh model to 8 and 10: same bits as one run.

    C has 50 images at batch 32 (2 batches per pass): update 4 leaves the stream exactly
    exhausted, update 5 in the middle of a pass.
    """
    full = runs["ABC1"] if policy == "reset" else runs["ABC1_preserve"]
    first = _train("ABC", 1, optimizer_at_common=policy, checkpoints=(0, split))
    assert first.record.status == "ok" and first.state["update"] == split
    resumed = _train(
        "ABC",
        1,
        model=fresh_model(1, first.state),
        resume=first.state,
        optimizer_at_common=policy,
        checkpoints=(8, 10),
    )
    record = resumed.record
    assert record.status == "ok"
    assert resumed.calls == [8, 10]
    assert resumed.modes == [False, False]
    assert states_equal(resumed.states[10], full.states[10])
    assert record.checkpoints[10] == full.record.checkpoints[10]
    assert params_digest(resumed.states[10]) == full.record.checkpoints[10]
    # Only C runs when resuming, from the saved update on.
    assert [p["phase"] for p in record.phases] == ["common"]
    assert record.phases[0]["updates"] == 10 - split
    assert set(record.phases[0]["interval_loss"]) == {8, 10}
    # The state handed back continues as the uninterrupted one would.
    assert resumed.state["update"] == 10
    assert tensors_equal(resumed.state["model"], full.state["model"])
    assert tensors_equal(resumed.state["optimizer"], full.state["optimizer"])
    assert tensors_equal(resumed.state["stream"], full.state["stream"])


def test_resume_matches_intermediate_checkpoints_too(runs: dict[str, Run]) -> None:
    full = _train("ABC", 1, checkpoints=(0, 5, 8, 10))
    assert full.record.checkpoints[10] == runs["ABC1"].record.checkpoints[10]
    first = _train("ABC", 1, checkpoints=(0, 5))
    second = _train(
        "ABC", 1, model=fresh_model(1, first.state), resume=first.state, checkpoints=(8,)
    )
    third = _train(
        "ABC", 1, model=fresh_model(1, second.state), resume=second.state, checkpoints=(10,)
    )
    assert states_equal(second.states[8], full.states[8])
    assert states_equal(third.states[10], full.states[10])
    assert third.record.checkpoints[10] == full.record.checkpoints[10]


def test_resume_through_torch_save(runs: dict[str, Run], tmp_path) -> None:
    """The adapter saves the state with torch.save and loads it with weights_only=True."""
    first = _train("ABC", 1, checkpoints=(0, 5))
    path = tmp_path / "state.pt"
    torch.save(first.state, path)
    loaded = torch.load(path, weights_only=True)
    resumed = _train("ABC", 1, model=fresh_model(1, loaded), resume=loaded, checkpoints=(8, 10))
    assert states_equal(resumed.states[10], runs["ABC1"].states[10])


def test_resume_of_a_stream_replicate() -> None:
    full = _train("BAC", 2, stream=1, checkpoints=(0, 5, 10))
    first = _train("BAC", 2, stream=1, checkpoints=(0, 5))
    resumed = _train(
        "BAC",
        2,
        stream=1,
        model=fresh_model(2, first.state),
        resume=first.state,
        checkpoints=(10,),
    )
    assert resumed.record.checkpoints[10] == full.record.checkpoints[10]


def test_resume_does_not_change_the_state_it_was_given() -> None:
    first = _train("ABC", 1, optimizer_at_common="preserve", checkpoints=(0, 5))
    saved = {
        "optimizer": {
            k: {p: {n: t.clone() for n, t in s.items()} for p, s in v.items()}
            if k == "state"
            else v
            for k, v in first.state["optimizer"].items()
        },
        "stream": {
            k: v.clone() if isinstance(v, torch.Tensor) else v
            for k, v in first.state["stream"].items()
        },
    }
    twice = [
        _train(
            "ABC",
            1,
            model=fresh_model(1, first.state),
            resume=first.state,
            optimizer_at_common="preserve",
            checkpoints=(10,),
        ).record.checkpoints[10]
        for _ in range(2)
    ]
    assert tensors_equal(first.state["stream"], saved["stream"])
    # Resuming twice from one in-memory state must give the same run.
    assert twice[0] == twice[1]
    assert tensors_equal(first.state["optimizer"], saved["optimizer"])


def test_resume_checkpoint_at_the_saved_update_is_the_saved_weights(runs: dict[str, Run]) -> None:
    first = _train("ABC", 1, checkpoints=(0, 5))
    resumed = _train(
        "ABC", 1, model=fresh_model(1, first.state), resume=first.state, checkpoints=(5, 10)
    )
    assert resumed.calls == [5, 10]
    assert states_equal(resumed.states[5], first.states[5])
    assert states_equal(resumed.states[10], runs["ABC1"].states[10])


def test_resume_refuses_checkpoints_before_the_resumed_update() -> None:
    first = _train("ABC", 1, checkpoints=(0, 5))
    # A checkpoint before the resumed update would label later weights with an earlier count.
    with pytest.raises(ValueError, match="resumed update 5"):
        _train("ABC", 1, model=fresh_model(1, first.state), resume=first.state, checkpoints=(3, 10))


# --------------------------------------------------------------------------- data streams


def test_stream_changes_data_order_not_initial_weights(runs: dict[str, Run]) -> None:
    base = runs["ABC1"]
    replicate = _train("ABC", 1, stream=1)
    assert replicate.record.status == "ok"
    assert replicate.record.init_digest == base.record.init_digest
    for checkpoint in CHECKPOINTS:
        assert not states_equal(replicate.states[checkpoint], base.states[checkpoint])
    assert replicate.record.checkpoints[10] != base.record.checkpoints[10]
    # Stream 0 is the default: passing it explicitly changes nothing.
    assert _train("ABC", 1, stream=0).record.checkpoints == base.record.checkpoints


def test_stream_data_order_follows_seed_rule() -> None:
    model = build_model(4, ModelSpec())
    seen: list[torch.Tensor] = []
    model.register_forward_pre_hook(lambda _m, args: seen.append(args[0].detach().clone()))
    _train("ABC", 4, model=model, stream=2, checkpoints=(0, 1), kernels="torch")
    generator = torch.Generator().manual_seed(derive_seed(4, "ABC", "phase1", 2))
    a = DATA.tasks["A"]
    first_batch = a[torch.randperm(len(a), generator=generator)][:32]
    assert torch.equal(seen[0], DATA.images[first_batch])
    generator = torch.Generator().manual_seed(derive_seed(4, "ABC", "common", 2))
    c = DATA.tasks["C"]
    assert torch.equal(seen[-1], DATA.images[c[torch.randperm(len(c), generator=generator)][:32]])


# --------------------------------------------------------------------------- BatchStream


def _draw(stream: BatchStream, k: int) -> list[torch.Tensor]:
    return [next(stream) for _ in range(k)]


def test_batch_stream_passes_cover_every_index_once() -> None:
    indices = torch.arange(100, 150)
    stream = BatchStream(indices, 16, seed=3)
    batches = _draw(stream, 8)  # 50 images at 16: 16, 16, 16, 2 per pass
    assert [len(b) for b in batches] == [16, 16, 16, 2] * 2
    for one_pass in (batches[:4], batches[4:]):
        assert sorted(torch.cat(one_pass).tolist()) == list(range(100, 150))
    assert not torch.equal(torch.cat(batches[:4]), torch.cat(batches[4:]))  # reshuffled
    generator = torch.Generator().manual_seed(3)
    expected = indices[torch.randperm(50, generator=generator)]
    assert torch.equal(torch.cat(batches[:4]), expected)


@pytest.mark.parametrize("drawn", [0, 1, 3, 4, 5, 9])
def test_batch_stream_state_roundtrip(drawn: int) -> None:
    """A stream loaded from a state draws what the original draws next, across reshuffles.

    ``drawn`` = 0 (nothing drawn yet), 4 (a pass exactly exhausted), others mid-pass.
    """
    indices = torch.arange(50)
    original = BatchStream(indices, 16, seed=11)
    _draw(original, drawn)
    state = original.state_dict()
    copy = BatchStream(indices, 16, seed=999)  # the seed is overwritten by the state
    copy.load_state_dict(state)
    expected = _draw(original, 10)  # more than two passes: crosses reshuffle boundaries
    got = _draw(copy, 10)
    assert all(torch.equal(a, b) for a, b in zip(expected, got, strict=True))
    # Taking the state and drawing on must not have changed the state taken.
    again = BatchStream(indices, 16, seed=0)
    again.load_state_dict(state)
    assert all(torch.equal(a, b) for a, b in zip(_draw(again, 10), expected, strict=True))


def test_batch_stream_state_survives_torch_save(tmp_path) -> None:
    stream = BatchStream(torch.arange(40), 16, seed=5)
    _draw(stream, 2)
    torch.save(stream.state_dict(), tmp_path / "stream.pt")
    copy = BatchStream(torch.arange(40), 16, seed=0)
    copy.load_state_dict(torch.load(tmp_path / "stream.pt", weights_only=True))
    assert all(torch.equal(a, b) for a, b in zip(_draw(stream, 5), _draw(copy, 5), strict=True))


def test_a_fixed_c_order_repeats_the_first_permutation_and_resumes_exactly() -> None:
    indices = torch.arange(10)
    passes = 3
    fixed = BatchStream(indices, 4, seed=5, reshuffle=False)
    drawn = [torch.cat([next(fixed) for _ in range(3)]) for _ in range(passes)]
    assert all(torch.equal(drawn[0], later) for later in drawn[1:])
    assert sorted(drawn[0].tolist()) == list(range(10))
    # The first pass is the reshuffling stream's first pass: only later passes differ.
    reshuffled = BatchStream(indices, 4, seed=5)
    first = [torch.cat([next(reshuffled) for _ in range(3)]) for _ in range(passes)]
    assert torch.equal(first[0], drawn[0]) and not torch.equal(first[1], drawn[1])
    # A resumed fixed stream draws what the uninterrupted one draws.
    stream = BatchStream(indices, 4, seed=5, reshuffle=False)
    for _ in range(5):
        next(stream)
    resumed = BatchStream(indices, 4, seed=5, reshuffle=False)
    resumed.load_state_dict(stream.state_dict())
    assert all(torch.equal(next(stream), next(resumed)) for _ in range(7))


def test_train_settings_refuse_an_unknown_c_order() -> None:
    with pytest.raises(ValueError, match="c_order"):
        TrainSettings(1, 32, 0.05, 0.9, 0.0, "reset", (0, 1), 1, "cpu", "torch", "sorted")
