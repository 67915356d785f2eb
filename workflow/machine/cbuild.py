"""histres's small C files, compiled in the job that first needs them, checked at every use.

    cc = partial(compiler, "training.kernels: fused", "set training.kernels: torch")
    path = build(cc, SOURCE, cache_folder() / "name-<key>.so", [FLAGS])  # cc() only to compile

The fused training kernels (workflow.kernels) and MKL's vendor shim (workflow.machine.mkl) are
built with ``$CC`` (default ``cc``) into ``HISTRES_KERNELS`` (default
``~/.cache/histres/kernels``), under a name keyed by what their build depends on. Beside each
library, ``<name>.json`` records what it was built from: the source's digest, the compiler
and its version, the flags, and the library's digest. A library is used only while it matches
that record and both files are this user's and writable by no one else; otherwise it is built
anew, so a half-written, changed or foreign file is never loaded blindly. Each build holds a
lock on ``<name>.lock``: a concurrent job waits, then uses the finished file, and the file
appears whole (os.replace). A machine without a compiler fails with a message that names the
config value to change; nothing falls back silently. Torch-free.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any


class BuildError(RuntimeError):
    """No C compiler, or the source did not compile."""


def cache_folder() -> Path:
    return Path(os.environ.get("HISTRES_KERNELS", Path.home() / ".cache/histres/kernels"))


def compiler(needed_by: str, instead: str) -> str:
    """The C compiler's path; without one, an error that says who needs it and what to set
    instead."""
    name = os.environ.get("CC") or "cc"
    cc = shutil.which(name)
    if not cc:
        raise BuildError(
            f"{needed_by} needs a C compiler and {name!r} was not found (set $CC to one); "
            f"or {instead}"
        )
    return cc


def record_path(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def build(
    cc: Callable[[], str], source: Path, target: Path, flag_sets: Sequence[Sequence[str]]
) -> Path:
    """``target`` compiled from ``source`` with the first of ``flag_sets`` the compiler takes,
    unless it is already there and matches its record. ``cc`` finds the compiler; it is called
    only to compile, so a machine with the library built needs none."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with _locked(target):
        problem = stale(source, target, flag_sets)
        if problem is None:
            return target
        if target.exists() or record_path(target).exists():
            print(f"histres: {target} {problem}: building it anew", file=sys.stderr, flush=True)
        try:
            cc_path = cc()
        except BuildError as error:
            raise BuildError(f"{error} (building {target}: it {problem})") from None
        _compile(cc_path, source, target, flag_sets)
    return target


def stale(source: Path, target: Path, flag_sets: Sequence[Sequence[str]]) -> str | None:
    """Why ``target`` must not be used as the build of ``source`` (None: it may)."""
    record = record_path(target)
    for path in (target, record):
        problem = _foreign(path)
        if problem:
            return problem
    try:
        built = json.loads(record.read_text())
    except (OSError, ValueError) as error:
        return f"has an unreadable build record ({error})"
    if not isinstance(built, dict):
        return "has an unreadable build record"
    if built.get("source_sha256") != _sha256(source):
        return f"was built from another {source.name}"
    if list(built.get("flags", ())) not in [list(flags) for flags in flag_sets]:
        return f"was built with other flags ({built.get('flags')})"
    if built.get("library_sha256") != _sha256(target):
        return "differs from the library its build record names (changed or half-written)"
    return None


def _foreign(path: Path) -> str | None:
    """Why a cached file cannot be trusted as this user's (None: it can)."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return f"is missing {path.name}"
    if not stat.S_ISREG(info.st_mode):
        return f"has {path.name} that is not a regular file"
    if info.st_uid != os.geteuid():
        return f"has {path.name} owned by user id {info.st_uid}, not this user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"has {path.name} writable by others (mode {stat.filemode(info.st_mode)})"
    return None


@contextlib.contextmanager
def _locked(target: Path) -> Iterator[None]:
    lock = target.with_name(target.name + ".lock")
    descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)  # releases the lock


def _compile(cc_path: str, source: Path, target: Path, flag_sets: Sequence[Sequence[str]]) -> None:
    errors = []
    for flags in flag_sets:
        with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
            out = Path(scratch) / target.name
            done = subprocess.run(
                [cc_path, *flags, str(source), "-o", str(out)], capture_output=True, text=True
            )
            if done.returncode == 0 and out.is_file():
                out.chmod(0o755)
                built = _record(cc_path, source, out, flags)
                os.replace(out, target)
                _write_json(record_path(target), built)
                return
            errors.append(done.stderr.strip())
    raise BuildError(f"compiling {source} with {cc_path} failed:\n" + "\n".join(errors))


def _record(cc_path: str, source: Path, library: Path, flags: Sequence[str]) -> dict[str, Any]:
    version = subprocess.run([cc_path, "--version"], capture_output=True, text=True)
    return {
        "source": source.name,
        "source_sha256": _sha256(source),
        "compiler": cc_path,
        "compiler_version": (version.stdout.strip().splitlines() or [""])[0],
        "flags": list(flags),
        "library_sha256": _sha256(library),
    }


def _write_json(path: Path, value: dict[str, Any]) -> None:
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as handle:
        json.dump(value, handle, indent=1, sort_keys=True)
    os.chmod(handle.name, 0o644)
    os.replace(handle.name, path)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
