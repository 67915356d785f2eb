"""Reading and writing the workflow's artifacts, atomically and with their provenance.

Checkpoints are ``.npz`` files of float32 arrays (readable without torch, so the stages after
the dumps stay torch-free) plus a JSON ``__meta__`` entry. Dumps are Parquet with a JSON
``histres`` key in the file metadata. Every writer goes to a temporary name in the same folder
and renames, so a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

META_KEY = "__meta__"
PARQUET_KEY = b"histres"
DIGEST_KEY = b"histres_sha256"
# The dumps' representation columns are fixed-size lists with null rows (images outside the
# probe set); pyarrow 25 and older cannot read those back ("Expected all lists to be of size=N").
MIN_PYARROW = 26


class ArtifactError(RuntimeError):
    """An artifact is missing, corrupt, or is not the one the reader expected."""


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary sibling of ``path``; rename it to ``path`` only if the block succeeds.
    The file gets the mode a plain ``open()`` would give it (0666 less the umask), not
    mkstemp's 0600, so that a group sharing a results folder can read what a job wrote."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _new_sibling(path)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _new_sibling(path: Path) -> str:
    """Create an empty, uniquely named file beside ``path``, as mkstemp does (O_EXCL), but
    with the umask's mode."""
    for _ in range(100):
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return str(tmp)
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name}")


def write_json(path: str | Path, value: Any) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def read_json(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError) as error:
        raise ArtifactError(f"{path}: cannot read JSON ({error})") from error


def write_csv(path: str | Path, frame: pd.DataFrame) -> None:
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def read_csv(path: str | Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (OSError, ValueError) as error:
        raise ArtifactError(f"{path}: cannot read CSV ({error})") from error


def params_digest(state: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over parameter names and their C-order float bytes, in state order."""
    digest = hashlib.sha256()
    for name, array in state.items():
        digest.update(name.encode() + b"\0")
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def save_checkpoint(path: str | Path, state: Mapping[str, np.ndarray], meta: dict) -> None:
    """``state`` may be empty for a run that diverged before this checkpoint."""
    arrays = {name: np.ascontiguousarray(value) for name, value in state.items()}
    if META_KEY in arrays:
        raise ValueError(f"parameter name {META_KEY!r} is reserved")
    meta = {**meta, "params_digest": params_digest(arrays) if arrays else None}
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays, **{META_KEY: np.array(json.dumps(meta))})


def load_checkpoint(
    path: str | Path, expect: Mapping[str, Any] | None = None
) -> tuple[dict[str, np.ndarray], dict]:
    """Load a checkpoint, verify it against the digest it stores, and check that the identity
    it stores (run fields, update) is what the reader expects: a valid checkpoint copied over
    another one is still the wrong checkpoint."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            meta = json.loads(str(archive[META_KEY]))
            state = {name: archive[name] for name in archive.files if name != META_KEY}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as error:
        raise ArtifactError(f"{path}: not a readable checkpoint ({error})") from error
    if state and params_digest(state) != meta.get("params_digest"):
        raise ArtifactError(f"{path}: parameters do not match the digest stored with them")
    _check_expected(path, meta, expect)
    return state, meta


def table_digest(table: pa.Table) -> str:
    """SHA-256 of a table's schema and values, independent of how Parquet chunked them."""
    digest = hashlib.sha256()
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        digest.update(f"{name}: {_type_text(column.type)}".encode() + b"\0")
        digest.update(np.packbits(column.is_valid().to_numpy(zero_copy_only=False)).tobytes())
        # Only valid entries: what a null slot holds underneath differs between the table as
        # built and as Parquet gives it back.
        valid = column.filter(column.is_valid())
        nested = pa.types.is_list(column.type) or pa.types.is_fixed_size_list(column.type)
        values = valid.flatten() if nested else valid
        digest.update(np.ascontiguousarray(values.to_numpy(zero_copy_only=False)).tobytes())
    return digest.hexdigest()


def _type_text(kind: pa.DataType) -> str:
    """A type as text without the list's child name, which Parquet renames on the way back."""
    if pa.types.is_fixed_size_list(kind):
        return f"fixed_size_list<{_type_text(kind.value_type)}>[{kind.list_size}]"
    if pa.types.is_list(kind):
        return f"list<{_type_text(kind.value_type)}>"
    return str(kind)


def _content_digest(table: pa.Table, meta: dict) -> str:
    """The digest a dump stores: its values and its histres metadata together."""
    return hashlib.sha256(
        (table_digest(table) + json.dumps(meta, sort_keys=True)).encode()
    ).hexdigest()


def write_parquet(path: str | Path, table: pa.Table, meta: dict) -> None:
    plain = table.replace_schema_metadata(None)
    schema_meta = {
        PARQUET_KEY: json.dumps(meta).encode(),
        DIGEST_KEY: _content_digest(plain, meta).encode(),
    }
    with atomic_path(path) as tmp:
        # Page checksums let the reader refuse a damaged page before decoding it.
        pq.write_table(
            plain.replace_schema_metadata(schema_meta),
            tmp,
            compression="zstd",
            write_page_checksum=True,
        )


def check_pyarrow(version: str) -> None:
    """Refuse a pyarrow that cannot read dumps, before a read error blames a good file."""
    if int(version.split(".")[0]) < MIN_PYARROW:
        raise ArtifactError(
            f"pyarrow {version} cannot read histres dumps (nullable fixed-size lists; fixed in "
            f"pyarrow {MIN_PYARROW}): install the pinned versions, pip install -r "
            "envs/requirements.txt; the dumps themselves are not at fault"
        )


def read_parquet(path: str | Path, expect: Mapping[str, Any] | None = None, rule: str = ""):
    """Read a dump, verify it against the SHA-256 it stores (values and metadata), and check
    that ``expect`` entries equal the identity stored in its metadata. ``rule`` names the rule
    that rebuilds the file, for the message."""
    rebuild = f"; delete it and rerun: rule {rule} rebuilds it" if rule else "; delete it and rerun"
    check_pyarrow(pa.__version__)
    try:
        table = pq.read_table(path, page_checksum_verification=True)
        meta = json.loads(table.schema.metadata[PARQUET_KEY])
        stored = table.schema.metadata.get(DIGEST_KEY, b"").decode()
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as error:
        raise ArtifactError(f"{path}: not a readable histres dump ({error}){rebuild}") from error
    if not stored:
        raise ArtifactError(f"{path}: carries no content digest (written by older code){rebuild}")
    found = _content_digest(table.replace_schema_metadata(None), meta)
    if found != stored:
        raise ArtifactError(
            f"{path}: content does not match the SHA-256 stored with it "
            f"({stored[:12]}... stored, {found[:12]}... computed): the file is corrupt{rebuild}"
        )
    _check_expected(path, meta, expect)
    return table, meta


def _check_expected(path: str | Path, meta: dict, expect: Mapping[str, Any] | None) -> None:
    for key, value in (expect or {}).items():
        if meta.get(key) != value:
            # A config mismatch prints as two large dicts: name the keys that differ.
            found = meta.get(key)
            if isinstance(value, dict) and isinstance(found, dict):
                found, value = _differences(found, value)
            raise ArtifactError(
                f"{path}: provenance {key}={found!r} but this rule expects {value!r}"
            )


def _differences(found: dict, expected: dict, prefix: str = "") -> tuple[dict, dict]:
    """The dotted keys where two nested dicts differ, with each side's value."""
    left, right = {}, {}
    for key in sorted(set(found) | set(expected), key=str):
        a, b = found.get(key), expected.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            sub_left, sub_right = _differences(a, b, f"{prefix}{key}.")
            left.update(sub_left)
            right.update(sub_right)
        elif a != b:
            left[f"{prefix}{key}"], right[f"{prefix}{key}"] = a, b
    return left, right
