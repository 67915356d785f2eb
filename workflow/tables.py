"""Derived tables with their content digest: written with it, read back only if it holds.

    write_table(path, sidecar, frame, provenance)   # the CSV, then its provenance + digest
    frame = read_table(path, rebuild="rule train_probes rebuilds it")

A comparison table, a probe table or a match table has a provenance sidecar beside it
(``base.csv`` -> ``base.provenance.json``) that records the SHA-256 of the CSV's bytes as they
were written. A reader recomputes it, so a hand-edited value stops the reader instead of
changing a summary. The CSV's bytes are those ``write_csv`` always wrote: only the sidecar
gains a field.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from workflow.artifacts import ArtifactError, read_json, write_csv, write_json

DIGEST_KEY = "table_sha256"


def sidecar_of(table: str | Path) -> Path:
    return Path(table).with_suffix(".provenance.json")


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_table(
    path: str | Path, sidecar: str | Path, frame: pd.DataFrame, provenance: Mapping[str, Any]
) -> None:
    """The CSV, then its sidecar with the digest of the bytes just written (a job killed in
    between leaves no sidecar, and its reader refuses the table)."""
    if Path(sidecar) != sidecar_of(path):
        raise ValueError(f"{sidecar}: a table's sidecar is {sidecar_of(path)}")
    write_csv(path, frame)
    write_json(sidecar, {**provenance, DIGEST_KEY: file_sha256(path)})


def record_digest(table: str | Path) -> None:
    """Add the digest to the sidecar of a table whose bytes were checked otherwise (a
    restored table, against its reference's manifest), where the sidecar has none."""
    sidecar = sidecar_of(table)
    provenance = read_json(sidecar)
    if DIGEST_KEY not in provenance:
        write_json(sidecar, {**provenance, DIGEST_KEY: file_sha256(table)})


def checked_bytes(path: str | Path, rebuild: str) -> tuple[bytes, dict[str, Any]]:
    """(the table's bytes, its provenance), once the bytes match the digest the provenance
    records; ArtifactError naming the file otherwise."""
    path, sidecar = Path(path), sidecar_of(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ArtifactError(f"{path}: cannot read the table ({error}); {rebuild}") from error
    if not sidecar.is_file():
        raise ArtifactError(f"{path}: its provenance {sidecar.name} is missing; {rebuild}")
    provenance = read_json(sidecar)
    stored = provenance.get(DIGEST_KEY) if isinstance(provenance, dict) else None
    if not stored:
        raise ArtifactError(
            f"{path}: {sidecar.name} records no content digest (written by older code); {rebuild}"
        )
    found = hashlib.sha256(data).hexdigest()
    if found != stored:
        raise ArtifactError(
            f"{path}: content does not match the SHA-256 recorded in {sidecar.name} "
            f"({stored[:12]}... recorded, {found[:12]}... computed): the table was changed "
            f"after it was written; {rebuild}"
        )
    return data, provenance


def read_table(path: str | Path, rebuild: str) -> pd.DataFrame:
    """A derived table, read only once its digest holds."""
    data, _ = checked_bytes(path, rebuild)
    try:
        return pd.read_csv(io.BytesIO(data))
    except ValueError as error:
        raise ArtifactError(f"{path}: cannot read CSV ({error}); {rebuild}") from error
