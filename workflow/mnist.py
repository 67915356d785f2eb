"""MNIST in memory: the four canonical uint8 arrays, their identity, and their stored copy.

The dataset's identity is the SHA-256 of the raw C-order bytes of each of four arrays:

* ``train_images`` (60000, 28, 28) uint8 and ``train_labels`` (60000,) uint8
* ``test_images`` (10000, 28, 28) uint8 and ``test_labels`` (10000,) uint8

in the canonical file order. For the real data those digests are::

    train_images 741c988805d008ac6e4c904b69001ba184c24b2c540a4ef403f4c71b676cf757
    train_labels 1feba77c54802fa5339a11837ea4b2866434b83314ec45192930f1df69120c13
    test_images  6d87418db22cc8025d05968bec9bd5c3932904b23485740db143a061a2c9d161
    test_labels  ddeff807876a9661a1110d45c266c86239a3a1b7d37da0c3716a7a683c852ff5

This module never hard-codes them: callers pass the expected digests (from the config), so the
same code can check any copy. Training and evaluation import only this module; how a copy is
obtained is ``workflow.fetch``'s business, so editing the download code retrains nothing.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from workflow.artifacts import atomic_path

__all__ = [
    "ARRAY_NAMES",
    "DataError",
    "DigestMismatch",
    "MnistArrays",
    "load_npz",
    "read_provenance",
    "save_npz",
    "sha256_array",
    "verify",
]

ARRAY_NAMES: tuple[str, ...] = ("train_images", "train_labels", "test_images", "test_labels")
IMAGE_SIDE = 28


class DataError(RuntimeError):
    """A source could not produce MNIST arrays (missing, unreachable, malformed)."""


class DigestMismatch(DataError):
    """Data was obtained but is not the expected bytes; never recover by switching source."""


def sha256_array(array: np.ndarray) -> str:
    """Hex SHA-256 of the array's raw C-order bytes (dtype and shape are not hashed)."""
    # Hash the buffer directly so a 47 MB image array is not copied a second time.
    return hashlib.sha256(np.ascontiguousarray(array).data).hexdigest()


@dataclass(frozen=True)
class MnistArrays:
    """The four canonical MNIST arrays; structure is checked on construction."""

    train_images: np.ndarray
    train_labels: np.ndarray
    test_images: np.ndarray
    test_labels: np.ndarray

    def __post_init__(self) -> None:
        # Checked here so every loader gets the same structural guarantees; sizes are not pinned
        # to 60000/10000 because identity is the digests' job and tests need tiny instances.
        for split in ("train", "test"):
            images: np.ndarray = getattr(self, f"{split}_images")
            labels: np.ndarray = getattr(self, f"{split}_labels")
            for name, arr in ((f"{split}_images", images), (f"{split}_labels", labels)):
                if not isinstance(arr, np.ndarray) or arr.dtype != np.uint8:
                    raise DataError(f"{name} must be a uint8 numpy array, got {describe(arr)}")
            if images.ndim != 3 or images.shape[1:] != (IMAGE_SIDE, IMAGE_SIDE):
                raise DataError(f"{split}_images must have shape (n, 28, 28), got {images.shape}")
            if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
                raise DataError(
                    f"{split}_labels must have shape ({images.shape[0]},), got {labels.shape}"
                )

    def as_dict(self) -> dict[str, np.ndarray]:
        """The arrays keyed by their canonical names."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def digests(self) -> dict[str, str]:
        """SHA-256 of each array's raw C-order bytes, keyed by array name."""
        return {name: sha256_array(arr) for name, arr in self.as_dict().items()}


def describe(obj: object) -> str:
    if isinstance(obj, np.ndarray):
        return f"ndarray dtype={obj.dtype} shape={obj.shape}"
    return type(obj).__name__


def check_expected(expected: dict[str, str]) -> None:
    # A config without all four digests is a programming/config error, not an unavailable
    # source, so it is a ValueError that acquire() does not swallow.
    missing = [name for name in ARRAY_NAMES if not expected.get(name)]
    if missing:
        raise ValueError(f"expected digests missing for: {', '.join(missing)}")


def verify(arrays: MnistArrays, expected: dict[str, str], source: str) -> None:
    """Raise DigestMismatch listing every array whose SHA-256 differs from ``expected``."""
    check_expected(expected)
    actual = arrays.digests()
    bad = [
        f"{name}: expected {expected[name]}, actual {actual[name]}"
        for name in ARRAY_NAMES
        if actual[name] != expected[name].strip().lower()
    ]
    if bad:
        raise DigestMismatch(f"MNIST from {source} failed verification: " + "; ".join(bad))


def save_npz(arrays: MnistArrays, path: Path, provenance: dict[str, Any]) -> None:
    """Atomically write an uncompressed .npz with the four arrays and JSON provenance.

    Provenance is a 0-d unicode array so the file loads with ``allow_pickle=False``.
    """
    path = Path(path)
    # Serialise first so an unserialisable provenance fails before any file is created.
    prov = np.array(json.dumps(provenance, sort_keys=True))
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.savez(fh, provenance=prov, **arrays.as_dict())


def _open_npz_fields(path: Path, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {name: npz[name] for name in names}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise DataError(f"cannot load MNIST npz {path}: {exc!r}") from exc


def load_npz(path: Path, expected: dict[str, str] | None = None) -> MnistArrays:
    """Load arrays written by ``save_npz``; verify digests against ``expected`` if given."""
    path = Path(path)
    arrays = MnistArrays(**_open_npz_fields(path, ARRAY_NAMES))
    if expected is not None:
        verify(arrays, expected, source=str(path))
    return arrays


def read_provenance(path: Path) -> dict[str, Any]:
    """Return the provenance dict stored by ``save_npz``."""
    path = Path(path)
    raw = _open_npz_fields(path, ("provenance",))["provenance"]
    try:
        return json.loads(str(raw[()]))
    except (ValueError, IndexError) as exc:
        raise DataError(f"provenance in {path} is not valid JSON: {exc}") from exc
