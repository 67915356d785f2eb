"""Artifacts are checked when they are read: a corrupt dump, a mislabelled checkpoint or a
truncated comparison table stops the reader with a message naming the file."""

from __future__ import annotations

import random

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from workflow.artifacts import (
    ArtifactError,
    check_pyarrow,
    load_checkpoint,
    read_parquet,
    save_checkpoint,
    write_parquet,
)
from workflow.comparisons import COLUMNS, comparison_frame, read_comparison, read_comparisons
from workflow.dumps import read_dump
from workflow.tables import sidecar_of, write_table

META = {"seed": 101, "order": "ABC", "update": 50, "summary": {"accuracy_pct": 97.5}}


def _dump(path) -> pa.Table:
    rng = np.random.default_rng(0)
    values = rng.standard_normal((200, 16)).astype(np.float32)
    probe = np.arange(200) % 3 == 0  # representations exist for probe images only (nulls)
    table = pa.table(
        {
            "image": pa.array(np.arange(200, dtype=np.int32)),
            "fc1": pa.FixedSizeListArray.from_arrays(
                pa.array(values.reshape(-1)), 16, mask=pa.array(~probe)
            ),
        }
    )
    write_parquet(path, table, META)
    return table


def test_every_single_byte_flip_in_a_dump_is_caught_or_harmless(tmp_path) -> None:
    """A flip either stops the reader or leaves values and metadata exactly as written."""
    path = tmp_path / "update~50.parquet"
    original = _dump(path)
    data = path.read_bytes()
    rng = random.Random(1)
    caught = 0
    for offset in rng.sample(range(len(data)), 200):
        flipped = bytearray(data)
        flipped[offset] ^= 1 << rng.randrange(8)
        path.write_bytes(bytes(flipped))
        try:
            table, meta = read_parquet(path)
        except ArtifactError as error:
            assert str(path) in str(error)
            caught += 1
            continue
        assert table.replace_schema_metadata(None).equals(original) and meta == META, offset
    assert caught > 150


def test_a_changed_value_with_its_old_metadata_names_the_digest_and_the_rule(tmp_path) -> None:
    path = tmp_path / "update~50.parquet"
    table = _dump(path)
    stored = pq.read_schema(path).metadata
    images = table.column("image").to_numpy().copy()
    images[3] += 1
    changed = table.set_column(0, "image", pa.array(images)).replace_schema_metadata(stored)
    pq.write_table(changed, path)
    with pytest.raises(ArtifactError, match="does not match the SHA-256") as raised:
        read_parquet(path, rule="dump_representations")
    assert "rule dump_representations rebuilds it" in str(raised.value)


def test_a_dump_without_a_digest_is_refused(tmp_path) -> None:
    path = tmp_path / "old.parquet"
    table = pa.table({"x": [1]}).replace_schema_metadata({b"histres": b'{"seed": 1}'})
    pq.write_table(table, path)
    with pytest.raises(ArtifactError, match="carries no content digest"):
        read_parquet(path)


def test_a_dump_reads_as_a_frame_float_matrices_and_its_metadata(tmp_path) -> None:
    path = tmp_path / "update~50.parquet"
    _dump(path)
    dump = read_dump(path, expect={"seed": 101, "update": 50})
    assert list(dump.frame.columns) == ["image"]  # vector columns are matrices, not objects
    fc1 = dump.matrix("fc1")
    probe = np.arange(200) % 3 == 0
    values = np.random.default_rng(0).standard_normal((200, 16)).astype(np.float32)  # as _dump
    assert fc1.dtype == np.float64 and fc1.shape == (probe.sum(), 16)
    np.testing.assert_array_equal(fc1, values[probe])
    assert dump.metadata["summary"] == META["summary"]
    with pytest.raises(ArtifactError, match="seed"):
        read_dump(path, expect={"seed": 202})


def test_a_pyarrow_too_old_for_dumps_is_named_instead_of_the_file(tmp_path) -> None:
    # pyarrow 25 fails on the dumps' null rows with "Expected all lists to be of size=N"
    # (seen on a GPU machine's image); that must not read as a corrupt dump to delete.
    with pytest.raises(ArtifactError, match="pyarrow 25.0.1 cannot read.*not at fault"):
        check_pyarrow("25.0.1")
    check_pyarrow("26.0.1")
    check_pyarrow(pa.__version__)


def test_a_valid_checkpoint_copied_over_another_update_is_refused(tmp_path) -> None:
    state = {"w": np.arange(4, dtype=np.float32)}
    early, late = tmp_path / "update~50.npz", tmp_path / "update~100.npz"
    save_checkpoint(early, state, {"seed": 101, "order": "ABC", "update": 50})
    late.write_bytes(early.read_bytes())  # its own digest is still valid
    load_checkpoint(early, expect={"seed": 101, "update": 50})
    with pytest.raises(ArtifactError, match=r"update~100.npz: provenance update=50"):
        load_checkpoint(late, expect={"seed": 101, "update": 100})


def _sealed(frame: pd.DataFrame, path) -> None:
    """A table with the provenance sidecar and digest its job writes (workflow.tables)."""
    write_table(path, sidecar_of(path), frame, {})


def _comparison(seed: int, updates: list[int]) -> pd.DataFrame:
    rows = [{"seed": seed, "update": u, "pair_status": "ok", "h_repr": 0.1} for u in updates]
    return comparison_frame(rows)


@pytest.mark.parametrize(
    ("mangle", "message"),
    [
        (lambda t: t.iloc[:0], "a header but no rows"),
        (lambda t: t.iloc[:-1], r"missing \[50\]"),
        (lambda t: pd.concat([t, t.iloc[[1]]]), r"repeated \[25\]"),
        (lambda t: t.assign(update=[0, 25, 75]), r"unexpected \[75\]"),
        (lambda t: t.assign(seed=202), r"holds seeds \[202\], this rule expects only 101"),
        (lambda t: t.drop(columns=["h_repr"]), r"columns \['h_repr'\] are missing"),
        (lambda t: t.rename(columns={"seed": "Seed"}), r"columns \['seed'\] are missing"),
    ],
)
def test_a_damaged_comparison_table_stops_its_reader(tmp_path, mangle, message) -> None:
    path = tmp_path / "seed~101" / "ABC_vs_BAC" / "base.csv"
    path.parent.mkdir(parents=True)
    _sealed(mangle(_comparison(101, [0, 25, 50])), path)  # as written, digest and all
    with pytest.raises(ArtifactError, match=message) as raised:
        read_comparisons([path], {"base": [0, 25, 50]})
    assert str(path) in str(raised.value) and "rebuilds it" in str(raised.value)


def test_intact_comparison_tables_read_back_in_the_documented_columns(tmp_path) -> None:
    paths = []
    for seed in (101, 202):
        path = tmp_path / f"seed~{seed}" / "ABC_vs_BAC" / "base.csv"
        path.parent.mkdir(parents=True)
        _sealed(_comparison(seed, [0, 25]), path)
        paths.append(path)
    table = read_comparisons(paths, {"base": [0, 25]})
    assert list(table.columns) == list(COLUMNS)
    assert sorted(set(table["seed"])) == [101, 202]
    assert len(read_comparison(paths[0], 101, [0, 25])) == 2


def test_a_comparison_writer_refuses_undocumented_columns() -> None:
    with pytest.raises(ValueError, match="not in workflow.comparisons.COLUMNS"):
        comparison_frame([{"seed": 1, "update": 0, "pair_status": "ok", "new_metric": 1.0}])
