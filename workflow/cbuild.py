"""histres's small C files, compiled once per machine into a cache folder.

    cc = partial(compiler, "training.kernels: fused", "set training.kernels: torch")
    path = build(cc, SOURCE, cache_folder() / "name-<key>.so", [FLAGS])  # cc() only if absent

The fused training kernels (workflow.kernels) and MKL's vendor shim (workflow.mkl) are built
with ``$CC`` (default ``cc``) into ``HISTRES_KERNELS`` (default ``~/.cache/histres/kernels``),
under a name keyed by what their build depends on. A machine without a compiler fails with a
message that names the config value to change; nothing falls back silently. Torch-free.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path


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


def build(
    cc: Callable[[], str], source: Path, target: Path, flag_sets: Sequence[Sequence[str]]
) -> Path:
    """``target`` compiled from ``source`` with the first of ``flag_sets`` the compiler takes,
    unless it exists already. ``cc`` finds the compiler; it is called only to compile, so a
    machine with the library built needs none."""
    if target.exists():
        return target
    cc_path = cc()
    target.parent.mkdir(parents=True, exist_ok=True)
    errors = []
    for flags in flag_sets:
        with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
            out = Path(scratch) / target.name
            done = subprocess.run(
                [cc_path, *flags, str(source), "-o", str(out)], capture_output=True, text=True
            )
            if done.returncode == 0:
                os.replace(out, target)  # atomic: concurrent jobs may build the same file
                return target
            errors.append(done.stderr.strip())
    raise BuildError(f"compiling {source} with {cc_path} failed:\n" + "\n".join(errors))
