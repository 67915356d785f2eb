"""Tests for workflow.compare, workflow.dump and workflow.artifacts."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pytest
import torch

from workflow.artifacts import (
    META_KEY,
    ArtifactError,
    load_checkpoint,
    params_digest,
    read_parquet,
    save_checkpoint,
    write_parquet,
)
from workflow.compare import (
    H_REPR_LAYERS,
    LAYERS,
    behaviour_overlap,
    column_matrix,
    compare_checkpoint,
    js_divergence,
    parameter_distance,
    percent,
)
from workflow.comparisons import COLUMNS
from workflow.dump import empty_table, evaluate, layer_widths
from workflow.model import ModelSpec, build_model, model_state

torch.set_num_threads(1)

N_TEST, N_PROBE = 50, 20
METRIC_LAYERS = ("conv1", "conv2", "fc1")


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    images = torch.from_numpy(rng.normal(size=(N_TEST, 1, 28, 28)).astype(np.float32))
    labels = torch.from_numpy(rng.integers(0, 10, N_TEST)).long()
    image_ids = np.sort(rng.choice(1000, N_TEST, replace=False))
    probe = np.zeros(N_TEST, dtype=bool)
    probe[rng.choice(N_TEST, N_PROBE, replace=False)] = True
    return images, labels, image_ids, probe


INPUTS = _inputs()


def _dump(model, batch_size: int = 16):
    images, labels, image_ids, probe = INPUTS
    table, summary = evaluate(model, images, labels, image_ids, probe, batch_size)
    return table, summary, {k: v.copy() for k, v in model_state(model).items()}


def _roundtrip(tmp_path, name: str, table: pa.Table) -> pa.Table:
    path = tmp_path / f"{name}.parquet"
    write_parquet(path, table, {"name": name})
    return read_parquet(path, expect={"name": name})[0]


@pytest.fixture(scope="module")
def dumps():
    torch.manual_seed(0)
    return {
        "a": _dump(build_model(11, ModelSpec())),
        "a_again": _dump(build_model(11, ModelSpec())),
        "b": _dump(build_model(12, ModelSpec())),
    }


def _compare(first, second) -> dict[str, float]:
    (ta, sa, wa), (tb, sb, wb) = first, second
    return compare_checkpoint(ta, tb, sa, sb, wa, wb)


# --------------------------------------------------------------------------- dump


def test_dump_schema_and_probe_nulls(dumps) -> None:
    table, summary, _ = dumps["a"]
    _, _, _, probe = INPUTS
    assert table.num_rows == N_TEST
    assert table.column_names == [
        "image",
        "angle",
        "label",
        "probe",
        "pred",
        "loss",
        "logits",
        "prob",
        "conv1",
        "conv2",
        "fc1",
    ]
    assert table.schema.field("conv1").type == pa.list_(pa.float32(), 32)
    assert table.schema.field("conv2").type == pa.list_(pa.float32(), 64)
    assert table.schema.field("fc1").type == pa.list_(pa.float32(), 128)
    assert table.schema.field("prob").type == pa.list_(pa.float32(), 10)
    assert table.schema.field("angle").type == pa.int16()
    # Without angles (class split) every row is upright.
    assert table.column("angle").to_pylist() == [0] * N_TEST
    assert table.schema == empty_table(layer_widths(build_model(0, ModelSpec()))).schema
    np.testing.assert_array_equal(table.column("probe").to_numpy(), probe)
    for name in METRIC_LAYERS:
        nulls = table.column(name).is_null().to_numpy(zero_copy_only=False)
        np.testing.assert_array_equal(nulls, ~probe, err_msg=name)
    for name in ("logits", "prob", "pred", "loss"):
        assert table.column(name).null_count == 0
    assert summary["n_test"] == N_TEST
    assert summary["n_probe"] == N_PROBE


def test_dump_schema_survives_parquet(dumps, tmp_path) -> None:
    table = dumps["a"][0]
    back = _roundtrip(tmp_path, "a", table)
    assert back.schema.remove_metadata() == table.schema.remove_metadata()
    assert back.column("conv2").null_count == N_TEST - N_PROBE
    np.testing.assert_array_equal(
        column_matrix(back, "fc1", INPUTS[3]), column_matrix(table, "fc1", INPUTS[3])
    )


def test_dump_values_match_model(dumps) -> None:
    table, summary, _ = dumps["a"]
    images, labels, image_ids, probe = INPUTS
    model = build_model(11, ModelSpec()).eval()
    with torch.no_grad():
        reps = model.representations(images)
    np.testing.assert_array_equal(table.column("image").to_numpy(), image_ids)
    np.testing.assert_array_equal(table.column("label").to_numpy(), labels.numpy())
    logits = column_matrix(table, "logits")
    np.testing.assert_allclose(logits, reps["logits"].numpy(), atol=1e-5)
    prob = column_matrix(table, "prob")
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(table.column("pred").to_numpy(), logits.argmax(1))
    expected_conv1 = reps["conv1"].mean(dim=(2, 3)).numpy()[probe]
    np.testing.assert_allclose(column_matrix(table, "conv1", probe), expected_conv1, atol=1e-5)
    np.testing.assert_allclose(
        column_matrix(table, "fc1", probe), reps["fc1"].numpy()[probe], atol=1e-5
    )
    loss = torch.nn.functional.cross_entropy(reps["logits"], labels, reduction="none")
    np.testing.assert_allclose(table.column("loss").to_numpy(), loss.numpy(), atol=1e-5)
    np.testing.assert_allclose(summary["loss"], float(loss.double().mean()), atol=1e-5)


def test_summary_accuracy(dumps) -> None:
    for table, summary, _ in dumps.values():
        pred = table.column("pred").to_numpy()
        label = table.column("label").to_numpy()
        assert summary["correct"] == int((pred == label).sum())
        assert summary["accuracy_pct"] == np.mean(pred == label) * 100


def test_dump_independent_of_batch_size(dumps) -> None:
    table, summary, _ = dumps["a"]
    other, other_summary, _ = _dump(build_model(11, ModelSpec()), batch_size=N_TEST)
    np.testing.assert_array_equal(table.column("pred").to_numpy(), other.column("pred").to_numpy())
    for name in ("logits", *METRIC_LAYERS):
        rows = INPUTS[3] if name in METRIC_LAYERS else None
        np.testing.assert_allclose(
            column_matrix(table, name, rows), column_matrix(other, name, rows), atol=1e-5
        )
    assert summary["health"] == other_summary["health"]


def test_health_dead_conv1() -> None:
    model = build_model(11, ModelSpec())
    with torch.no_grad():
        model.conv1.bias.fill_(-1e6)
    table, summary, _ = _dump(model)
    assert summary["health"]["conv1"]["dead_fraction"] == 1.0
    assert summary["health"]["conv1"]["mean_active_fraction"] == 0.0
    assert not np.any(column_matrix(table, "conv1", INPUTS[3]))


def test_health_matches_protocol_definition(dumps) -> None:
    """Dead: pre-activation <= 0 on every probe image and position; active: > 0 somewhere."""
    images, _, _, probe = INPUTS
    model = build_model(11, ModelSpec()).eval()
    with torch.no_grad():
        reps = model.representations(images[torch.from_numpy(probe)])
    health = dumps["a"][1]["health"]
    for layer in METRIC_LAYERS:
        pre = reps[f"{layer}_pre"].numpy()
        active = (pre > 0).reshape(pre.shape[0], pre.shape[1], -1).any(axis=2)
        assert health[layer]["dead_fraction"] == float((~active.any(axis=0)).mean()), layer
        assert health[layer]["mean_active_fraction"] == float(active.mean()), layer


def test_health_half_dead_conv1() -> None:
    model = build_model(11, ModelSpec())
    with torch.no_grad():
        model.conv1.bias[::2] = -1e6
    _, summary, _ = _dump(model)
    assert summary["health"]["conv1"]["dead_fraction"] == 0.5


def test_health_alive_model(dumps) -> None:
    health = dumps["a"][1]["health"]
    assert set(health) == set(METRIC_LAYERS)
    for layer, values in health.items():
        assert 0.0 <= values["dead_fraction"] < 1.0, layer
        assert 0.0 < values["mean_active_fraction"] <= 1.0, layer


# --------------------------------------------------------------------------- compare


def test_identical_models_compare_as_identical(dumps) -> None:
    row = _compare(dumps["a"], dumps["a_again"])
    for layer in LAYERS:
        assert row[f"cka_{layer}"] == pytest.approx(1.0, abs=1e-9), layer
    assert row["h_repr"] == pytest.approx(0.0, abs=1e-9)
    assert row["disagreement_pct"] == 0.0
    assert row["js_divergence"] == 0.0
    assert row["param_distance"] == 0.0
    assert row["acc_gap_pp"] == 0.0
    assert row["acc_diff_pp"] == 0.0
    assert row["loss_gap"] == 0.0
    assert all(isinstance(v, float) for v in row.values())


def test_different_models_compare_as_different(dumps) -> None:
    row = _compare(dumps["a"], dumps["b"])
    assert 0.0 < row["h_repr"] <= 1.0
    assert row["js_divergence"] > 0.0
    assert row["param_distance"] > 0.0
    assert row["disagreement_pct"] > 0.0
    for layer in LAYERS:
        assert 0.0 <= row[f"cka_{layer}"] < 1.0 - 1e-6, layer
    sa, sb = dumps["a"][1], dumps["b"][1]
    assert row["acc_ABC_pct"] == sa["accuracy_pct"]
    assert row["acc_BAC_pct"] == sb["accuracy_pct"]
    assert row["acc_diff_pp"] == 100.0 * (sa["correct"] - sb["correct"]) / N_TEST
    assert row["acc_gap_pp"] == abs(row["acc_diff_pp"])
    assert row["loss_diff"] == sa["loss"] - sb["loss"]
    assert row["dead_conv1_ABC"] == sa["health"]["conv1"]["dead_fraction"]
    assert row["dead_fc1_BAC"] == sb["health"]["fc1"]["dead_fraction"]


def test_compare_is_symmetric_in_its_scores(dumps) -> None:
    ab = _compare(dumps["a"], dumps["b"])
    ba = _compare(dumps["b"], dumps["a"])
    for key in ("h_repr", "js_divergence", "param_distance", "disagreement_pct", "acc_gap_pp"):
        assert ab[key] == pytest.approx(ba[key], rel=1e-12), key
    assert ab["acc_diff_pp"] == -ba["acc_diff_pp"]


def test_h_repr_is_exactly_its_formula(dumps) -> None:
    assert H_REPR_LAYERS == ("conv2", "fc1")
    row = _compare(dumps["a"], dumps["b"])
    assert row["h_repr"] == 1 - (row["cka_conv2"] + row["cka_fc1"]) / 2
    assert row["h_repr_debiased"] == 1 - (row["dcka_conv2"] + row["dcka_fc1"]) / 2


def test_compare_after_parquet_roundtrip(dumps, tmp_path) -> None:
    (ta, sa, wa), (tb, sb, wb) = dumps["a"], dumps["b"]
    direct = compare_checkpoint(ta, tb, sa, sb, wa, wb)
    stored = compare_checkpoint(
        _roundtrip(tmp_path, "a", ta), _roundtrip(tmp_path, "b", tb), sa, sb, wa, wb
    )
    assert stored == direct


def test_compare_rejects_different_images(dumps) -> None:
    (ta, sa, wa), (tb, sb, wb) = dumps["a"], dumps["b"]
    shifted = ta.set_column(0, "image", pa.array(ta.column("image").to_numpy() + 1))
    with pytest.raises(ValueError, match="image"):
        compare_checkpoint(shifted, tb, sa, sb, wa, wb)


def test_dump_records_given_angles(dumps) -> None:
    images, labels, image_ids, probe = INPUTS
    angles = np.where(np.arange(N_TEST) % 2 == 0, 0, 90)  # int64 in, int16 stored
    table, summary = evaluate(
        build_model(11, ModelSpec()), images, labels, image_ids, probe, 16, angles=angles
    )
    assert table.schema.field("angle").type == pa.int16()
    np.testing.assert_array_equal(table.column("angle").to_numpy(), angles)
    # The angle is a label only: everything else equals the dump without angles.
    reference = dumps["a"][0]
    for name in table.column_names:
        if name != "angle":
            assert table.column(name).equals(reference.column(name)), name
    assert summary == dumps["a"][1]


def test_compare_rejects_different_angles(dumps) -> None:
    (ta, sa, wa), (tb, sb, wb) = dumps["a"], dumps["b"]
    turned = ta.set_column(1, "angle", pa.array(np.full(N_TEST, 90, np.int16)))
    with pytest.raises(ValueError, match="angle"):
        compare_checkpoint(turned, tb, sa, sb, wa, wb)
    # Same angles on both sides compare fine.
    both = tb.set_column(1, "angle", pa.array(np.full(N_TEST, 90, np.int16)))
    assert compare_checkpoint(turned, both, sa, sb, wa, wb) == compare_checkpoint(
        ta, tb, sa, sb, wa, wb
    )


@pytest.mark.parametrize("column", ["label", "probe"])
def test_compare_rejects_different_labels_or_probe(dumps, column) -> None:
    (ta, sa, wa), (tb, sb, wb) = dumps["a"], dumps["b"]
    index = ta.column_names.index(column)
    values = ta.column(column).to_numpy(zero_copy_only=False).copy()
    values[0] = not values[0] if column == "probe" else (values[0] + 1) % 10
    changed = ta.set_column(index, column, pa.array(values, ta.schema.field(column).type))
    with pytest.raises(ValueError, match=column):
        compare_checkpoint(changed, tb, sa, sb, wa, wb)


def test_js_divergence_golden_values() -> None:
    p = np.array([[1.0, 0.0], [0.5, 0.5], [1.0, 0.0], [0.25, 0.75]])
    q = np.array([[0.5, 0.5], [0.5, 0.5], [0.0, 1.0], [0.75, 0.25]])
    # Row 0: m = (0.75, 0.25).  KL(p||m) = 1*log(1/0.75) + 0 log 0 = log(4/3).
    #        KL(q||m) = 0.5*log(0.5/0.75) + 0.5*log(0.5/0.25) = 0.5*log(2/3) + 0.5*log(2).
    row0 = 0.5 * (math.log(4 / 3) + 0.5 * math.log(2 / 3) + 0.5 * math.log(2))
    # Row 2: disjoint supports, m = (0.5, 0.5): JS = log 2.
    row2 = math.log(2)
    # Row 3: m = (0.5, 0.5): KL(p||m) = 0.25 log(0.5) + 0.75 log(1.5) = KL(q||m).
    row3 = 0.25 * math.log(0.5) + 0.75 * math.log(1.5)
    expected = np.array([row0, 0.0, row2, row3])
    np.testing.assert_allclose(js_divergence(p, q), expected, rtol=1e-12, atol=0)
    assert row0 == pytest.approx(0.2157615543388357, rel=1e-12)
    assert not np.isnan(js_divergence(p, q)).any()
    np.testing.assert_allclose(js_divergence(q, p), expected, rtol=1e-12, atol=0)
    assert js_divergence(p, p).tolist() == [0.0, 0.0, 0.0, 0.0]


def test_parameter_distance_golden_values() -> None:
    a = {"w": np.array([3.0, 0.0], dtype=np.float32), "b": np.zeros(1, dtype=np.float32)}
    b = {"w": np.array([0.0, 4.0], dtype=np.float32), "b": np.zeros(1, dtype=np.float32)}
    # ||a - b|| = 5, ||a|| = 3, ||b|| = 4 -> 5 / 3.5.
    assert parameter_distance(a, b) == pytest.approx(10 / 7, rel=1e-15)
    c = {"w": np.array([[1.0, 2.0]]), "b": np.array([2.0])}
    d = {"w": np.array([[1.0, 2.0]]), "b": np.array([0.0])}
    # ||c - d|| = 2, ||c|| = 3, ||d|| = sqrt(5).
    assert parameter_distance(c, d) == pytest.approx(2 / (0.5 * (3 + math.sqrt(5))), rel=1e-15)
    assert parameter_distance(c, c) == 0.0
    with pytest.raises(ValueError):
        parameter_distance(a, {"w": a["w"]})


# --------------------------------------------------------------------------- behaviour overlap

# Eight images, four in the probe set (0, 1, 2, 4), hand-checked:
#   image      0  1  2  3  4  5  6  7
#   label      0  1  2  3  4  5  6  7
#   pred ABC   0  1  2  9  4  9  6  8   wrong on 3, 5, 7
#   pred BAC   0  1  3  8  4  9  7  7   wrong on 2, 3, 5, 6
# differ on 2, 3, 6, 7 (4/8 = 50%); on the probe only on 2 (1/4 = 25%); either wrong on
# 2, 3, 5, 6, 7 (5/8); both wrong on 3, 5 (2/8); both wrong differently on 3 only (9 vs 8: 1/8;
# on 5 both say 9).
TINY_LABEL = [0, 1, 2, 3, 4, 5, 6, 7]
TINY_PROBE = [True, True, True, False, True, False, False, False]
TINY_PRED_ABC = [0, 1, 2, 9, 4, 9, 6, 8]
TINY_PRED_BAC = [0, 1, 3, 8, 4, 9, 7, 7]
TINY_EXPECTED = {
    "disagreement_probe_pct": 25.0,
    "either_wrong_pct": 62.5,
    "both_wrong_pct": 25.0,
    "both_wrong_differently_pct": 12.5,
}
NEW_BEHAVIOUR = tuple(TINY_EXPECTED)


def _vectors(values: np.ndarray) -> pa.Array:
    return pa.FixedSizeListArray.from_arrays(
        pa.array(values.astype(np.float32).ravel()), values.shape[1]
    )


def _tiny_run(pred: list[int], seed: int):
    """A hand-made dump (every column compare_checkpoint reads), its summary and weights."""
    rng = np.random.default_rng(seed)
    n = len(TINY_LABEL)
    prob = rng.dirichlet(np.ones(10), size=n)
    columns = {
        "image": pa.array(np.arange(n, dtype=np.int32)),
        "angle": pa.array(np.zeros(n, dtype=np.int16)),
        "label": pa.array(np.array(TINY_LABEL, dtype=np.int8)),
        "probe": pa.array(TINY_PROBE),
        "pred": pa.array(np.array(pred, dtype=np.int8)),
        "prob": _vectors(prob),
        **{layer: _vectors(rng.normal(size=(n, 3))) for layer in LAYERS},
    }
    correct = int(np.sum(np.array(pred) == np.array(TINY_LABEL)))
    summary = {
        "n_test": n,
        "correct": correct,
        "accuracy_pct": 100.0 * correct / n,
        "loss": float(rng.random()),
        "health": {layer: {"dead_fraction": 0.0} for layer in LAYERS[:-1]},
    }
    return pa.table(columns), summary, {"w": rng.normal(size=4).astype(np.float32)}


def test_behaviour_overlap_on_hand_made_tables() -> None:
    row = _compare(_tiny_run(TINY_PRED_ABC, 1), _tiny_run(TINY_PRED_BAC, 2))
    assert {key: row[key] for key in NEW_BEHAVIOUR} == TINY_EXPECTED
    # The existing behaviour columns on the same tables: all images, not the probe set.
    assert row["disagreement_pct"] == 50.0
    assert row["acc_ABC_pct"] == 62.5 and row["acc_BAC_pct"] == 50.0
    assert row["acc_diff_pp"] == 12.5


def test_behaviour_overlap_directly_and_symmetric() -> None:
    arrays = [np.array(v, dtype=np.int8) for v in (TINY_PRED_ABC, TINY_PRED_BAC, TINY_LABEL)]
    probe = np.array(TINY_PROBE)
    a, b, label = arrays
    assert behaviour_overlap(a, b, label, probe) == TINY_EXPECTED
    assert behaviour_overlap(b, a, label, probe) == TINY_EXPECTED
    assert all(isinstance(v, float) for v in behaviour_overlap(a, b, label, probe).values())


def test_behaviour_overlap_of_one_run_with_itself() -> None:
    pred, label = np.array(TINY_PRED_ABC), np.array(TINY_LABEL)
    row = behaviour_overlap(pred, pred, label, np.array(TINY_PROBE))
    # Three errors of eight, all shared and all with the same label.
    assert row == {
        "disagreement_probe_pct": 0.0,
        "either_wrong_pct": 37.5,
        "both_wrong_pct": 37.5,
        "both_wrong_differently_pct": 0.0,
    }


def test_behaviour_overlap_with_no_errors_and_all_errors() -> None:
    label = np.arange(10) % 10
    probe = np.ones(10, dtype=bool)
    assert set(behaviour_overlap(label, label, label, probe).values()) == {0.0}
    a, b = (label + 1) % 10, (label + 2) % 10
    row = behaviour_overlap(a, b, label, probe)
    assert row == {
        "disagreement_probe_pct": 100.0,
        "either_wrong_pct": 100.0,
        "both_wrong_pct": 100.0,
        "both_wrong_differently_pct": 100.0,
    }


def test_percent_of_an_empty_set_is_nan() -> None:
    assert math.isnan(percent(np.array([], dtype=bool)))
    assert percent(np.array([True, False, False, False])) == 25.0


def test_behaviour_overlap_bounds_on_real_dumps(dumps) -> None:
    row = _compare(dumps["a"], dumps["b"])
    assert row["both_wrong_differently_pct"] <= min(row["both_wrong_pct"], row["disagreement_pct"])
    assert row["both_wrong_pct"] <= row["either_wrong_pct"] <= 100.0
    # Inclusion-exclusion: |A or B| = |A| + |B| - |A and B| (errors of each run, % of images).
    err_a, err_b = 100.0 - row["acc_ABC_pct"], 100.0 - row["acc_BAC_pct"]
    assert row["either_wrong_pct"] == pytest.approx(err_a + err_b - row["both_wrong_pct"])
    table_a, table_b = dumps["a"][0], dumps["b"][0]
    probe = INPUTS[3]
    differ = table_a.column("pred").to_numpy() != table_b.column("pred").to_numpy()
    assert row["disagreement_probe_pct"] == 100.0 * differ[probe].sum() / N_PROBE
    same = _compare(dumps["a"], dumps["a_again"])
    assert same["disagreement_probe_pct"] == 0.0
    assert same["both_wrong_differently_pct"] == 0.0
    assert same["both_wrong_pct"] == same["either_wrong_pct"] == 100.0 - same["acc_ABC_pct"]


def test_compare_writes_exactly_the_documented_metric_columns(dumps) -> None:
    row = _compare(dumps["a"], dumps["b"])
    assert set(row) == set(COLUMNS) - {"seed", "update", "pair_status"}
    # The new columns come after every column that existed before them, so none moved.
    assert COLUMNS[-len(NEW_BEHAVIOUR) :] == NEW_BEHAVIOUR


# --------------------------------------------------------------------------- artifacts


def _state(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "conv1.weight": rng.normal(size=(4, 1, 3, 3)).astype(np.float32),
        "conv1.bias": rng.normal(size=4).astype(np.float32),
        "fc.weight": rng.normal(size=(3, 5)).astype(np.float32),
    }


def test_checkpoint_roundtrip_is_bit_exact(tmp_path) -> None:
    state = _state()
    path = tmp_path / "sub" / "ckpt.npz"
    save_checkpoint(path, state, {"update": 5, "seed": 101})
    loaded, meta = load_checkpoint(path)
    assert list(loaded) == list(state)
    for name in state:
        assert loaded[name].dtype == state[name].dtype
        assert loaded[name].tobytes() == state[name].tobytes()
    assert meta["update"] == 5 and meta["seed"] == 101
    assert meta["params_digest"] == params_digest(state)
    assert [p.name for p in path.parent.iterdir()] == ["ckpt.npz"]  # no temporary left over


def test_checkpoint_of_diverged_run_is_empty(tmp_path) -> None:
    path = tmp_path / "empty.npz"
    save_checkpoint(path, {}, {"status": "diverged"})
    state, meta = load_checkpoint(path)
    assert state == {}
    assert meta == {"status": "diverged", "params_digest": None}


def test_checkpoint_reserved_name(tmp_path) -> None:
    with pytest.raises(ValueError):
        save_checkpoint(tmp_path / "x.npz", {META_KEY: np.zeros(1)}, {})


def test_tampered_checkpoint_is_rejected(tmp_path) -> None:
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, _state(), {"update": 0})
    with np.load(path) as archive:
        contents = {name: archive[name] for name in archive.files}
    contents["fc.weight"] = contents["fc.weight"].copy()
    contents["fc.weight"][1, 2] += np.float32(1e-3)
    with open(path, "wb") as handle:
        np.savez(handle, **contents)
    with pytest.raises(ArtifactError, match="digest"):
        load_checkpoint(path)


def test_truncated_checkpoint_is_rejected(tmp_path) -> None:
    path = tmp_path / "ckpt.npz"
    save_checkpoint(path, _state(), {"update": 0})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ArtifactError):
        load_checkpoint(path)


def test_missing_checkpoint_is_rejected(tmp_path) -> None:
    with pytest.raises(ArtifactError):
        load_checkpoint(tmp_path / "nope.npz")


def test_parquet_roundtrip_and_expect(tmp_path) -> None:
    table = pa.table({"x": pa.array([1, 2, 3], pa.int32()), "y": pa.array([0.5, None, 2.0])})
    path = tmp_path / "t.parquet"
    meta = {"seed": 101, "order": "ABC", "update": 250}
    write_parquet(path, table, meta)
    back, back_meta = read_parquet(path, expect={"seed": 101, "order": "ABC"})
    assert back.equals(table.replace_schema_metadata(back.schema.metadata))
    assert back.to_pydict() == table.to_pydict()
    assert back_meta == meta
    with pytest.raises(ArtifactError, match="order"):
        read_parquet(path, expect={"seed": 101, "order": "BAC"})
    with pytest.raises(ArtifactError, match="code_version"):
        read_parquet(path, expect={"code_version": "abc"})


def test_read_parquet_rejects_foreign_files(tmp_path) -> None:
    import pyarrow.parquet as pq

    plain = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"x": [1]}), plain)
    with pytest.raises(ArtifactError):
        read_parquet(plain)
    junk = tmp_path / "junk.parquet"
    junk.write_text(json.dumps({"not": "parquet"}))
    with pytest.raises(ArtifactError):
        read_parquet(junk)


def test_read_parquet_names_the_config_keys_that_differ(tmp_path) -> None:
    import pyarrow as pa

    from workflow.artifacts import ArtifactError, read_parquet, write_parquet

    path = tmp_path / "dump.parquet"
    config = {"evaluation": {"batch_size": 1000}, "model": {"hidden": 128}}
    write_parquet(path, pa.table({"x": [1]}), {"seed": 1, "config": config})
    read_parquet(path, expect={"seed": 1, "config": config})
    expected = {"evaluation": {"batch_size": 500}, "model": {"hidden": 128}}
    with pytest.raises(ArtifactError, match=r"evaluation\.batch_size"):
        read_parquet(path, expect={"config": expected})
