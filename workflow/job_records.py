"""Snakemake's records of a tree's jobs, moved with the files they describe (``make
migrate-results``).

Snakemake keeps, for each output file, what made it (rule, code, params, input files) in
``.snakemake/metadata/``, and marks the outputs of a job in progress in
``.snakemake/incomplete/``, both keyed by the file's path. A file moved without its record is
still current by its time, but a later change of its params or code would no longer rerun it;
one moved without its mark would pass for finished. So a move takes both along, with the paths
a record names (its input, log and input checksums) moved too, and the moved tree plans exactly
what the old one did.

The key of a record is its path in URL-safe base64, cut into pieces the file system can name:
every piece but the last is a folder whose name starts with "@" (Snakemake's FilePersistence).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

RECORD_FOLDERS = ("metadata", "incomplete")
# The fields of a metadata record that name files.
PATH_LISTS = ("input", "log")
PATH_KEYS = ("input_checksums",)


class SnakemakeRunning(RuntimeError):
    """The tree's Snakemake lock is held: a run is going on (or was killed)."""


def moved_path(path: str, moves: Sequence[tuple[str, str]]) -> str:
    """``path`` after the moves (source, target): itself or anything under a source moves."""
    for source, target in moves:
        if path == source or path.startswith(source + "/"):
            return target + path[len(source) :]
    return path


def _decode(folder: Path, relative: Path) -> str:
    encoded = "".join(part.removeprefix("@") for part in relative.parts)
    try:
        return base64.urlsafe_b64decode(encoded.encode()).decode()
    except ValueError as error:  # binascii.Error and UnicodeDecodeError are ValueErrors
        raise ValueError(
            f"{folder / relative}: not a Snakemake record (a path in base64): {error}; "
            "move it out of .snakemake/ and migrate again"
        ) from error


def _encode(folder: Path, key: str) -> Path:
    """Where Snakemake keeps the record of ``key`` in ``folder``."""
    longest = os.pathconf(folder, "PC_NAME_MAX") or 255
    encoded = base64.urlsafe_b64encode(key.encode()).decode()
    pieces = [encoded[i : i + longest - 1] for i in range(0, len(encoded), longest - 1)]
    return folder.joinpath(*(f"@{piece}" for piece in pieces[:-1]), pieces[-1])


def _records(folder: Path) -> Iterator[tuple[Path, str]]:
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        relative = path.relative_to(folder)
        if relative.parts[0] == "migration_underway":  # Snakemake's own marker, not a record
            continue
        yield path, _decode(folder, relative)


def _moved_record(record: Mapping[str, Any], moves: Sequence[tuple[str, str]]) -> dict:
    out = dict(record)
    for field in PATH_LISTS:
        if isinstance(out.get(field), list):
            out[field] = [moved_path(path, moves) for path in out[field]]
    for field in PATH_KEYS:
        if isinstance(out.get(field), dict):
            out[field] = {moved_path(path, moves): value for path, value in out[field].items()}
    return out


def check_not_running(tree: Path) -> None:
    locks = tree / ".snakemake" / "locks"
    if locks.is_dir() and any(locks.iterdir()):
        raise SnakemakeRunning(
            f"{locks} holds locks: a Snakemake run is going on in {tree}; wait for it to end "
            "(if none runs, a killed one left them: `snakemake --unlock` removes them)"
        )


def move_records(tree: Path, moves: Sequence[tuple[str, str]]) -> int:
    """Rekey the records of ``tree`` whose file moved (paths relative to ``tree``, as Snakemake
    names them); returns how many moved."""
    count = 0
    for name in RECORD_FOLDERS:
        folder = tree / ".snakemake" / name
        if not folder.is_dir():
            continue
        for path, key in list(_records(folder)):
            new_key = moved_path(key, moves)
            if new_key == key:
                continue
            record = json.loads(path.read_text())
            target = _encode(folder, new_key)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(_moved_record(record, moves)))
            os.chmod(target, path.stat().st_mode)
            path.unlink()
            _remove_empty_parents(path.parent, folder)
            count += 1
    return count


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
