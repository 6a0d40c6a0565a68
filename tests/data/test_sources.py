"""Source order of load_dataset: data_dir, cache, system, download, bundled; and pooch's checks on downloads.

Downloads never touch the network: a pooch downloader that copies files from a local "mirror" directory stands in
for HTTP, so pooch's own md5 check and temporary-file handling run for real.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.data import SPECS, DataError, load_dataset
from autograd_lab.data.catalog import FILE_NAMES
from autograd_lab.data.idx import write_idx

pytest.importorskip("pooch", reason="downloading is done by pooch, a dependency of the [train] extra")


def make_idx_set(directory: Path, marker: int, gz: bool = True, n_train: int = 3, n_test: int = 2) -> Path:
    """Write the four standard files; every pixel equals ``marker`` so a test can tell which set was read."""
    directory.mkdir(parents=True, exist_ok=True)
    suffix = ".gz" if gz else ""
    arrays = {
        "train_images": np.full((n_train, 28, 28), marker, dtype=np.uint8),
        "train_labels": np.arange(n_train, dtype=np.uint8) % 10,
        "test_images": np.full((n_test, 28, 28), marker, dtype=np.uint8),
        "test_labels": np.arange(n_test, dtype=np.uint8) % 10,
    }
    for role, array in arrays.items():
        write_idx(directory / (FILE_NAMES[role] + suffix), array)
    return directory


def marker_of(data) -> int:
    return round(float(data.x_train[0, 0]) * 255)


def md5s(directory: Path) -> dict[str, str]:
    return {role: hashlib.md5((directory / (name + ".gz")).read_bytes()).hexdigest()
            for role, name in FILE_NAMES.items()}


def local_downloader(mirror_dir: Path, calls: list[str] | None = None):
    """A pooch downloader that copies ``mirror_dir/<file name>`` for any URL ending in that name."""
    def download(url, output_file, pooch_instance):
        if calls is not None:
            calls.append(url)
        shutil.copyfile(mirror_dir / url.rsplit("/", 1)[-1], output_file)
    return download


@pytest.fixture
def mirror(tmp_path, monkeypatch):
    """A local mirror with a tiny MNIST-shaped set (marker 40) and the MNIST spec's md5s pointed at its files."""
    directory = make_idx_set(tmp_path / "mirror", marker=40)
    spec = dataclasses.replace(SPECS["mnist"], md5=md5s(directory), mirrors=("https://mirror.invalid/mnist/",))
    monkeypatch.setitem(SPECS, "mnist", spec)
    return directory


def cache_dir(name: str = "mnist") -> Path:
    """This data set's directory in the per-test cache that conftest sets up."""
    return Path(os.environ["AUTOGRAD_LAB_DATA"]) / name


@pytest.mark.parametrize("gz", [True, False], ids=["gz", "raw"])
def test_explicit_directory_is_read(tmp_path, gz):
    data = load_dataset("mnist", make_idx_set(tmp_path / "mine", marker=10, gz=gz))
    assert (data.source, marker_of(data)) == ("data_dir", 10)
    assert data.x_train.shape == (3, 784) and data.x_train.dtype == np.float32
    assert data.y_train.dtype == np.int64
    np.testing.assert_array_equal(data.y_test, [0, 1])
    assert data.x_train.max() == pytest.approx(10 / 255)


def test_explicit_directory_beats_cache_and_download(tmp_path, mirror):
    make_idx_set(cache_dir(), marker=20)
    calls = []
    data = load_dataset("mnist", make_idx_set(tmp_path / "mine", marker=10), download=True,
                        downloader=local_downloader(mirror, calls))
    assert (data.source, marker_of(data), calls) == ("data_dir", 10, [])


def test_explicit_directory_without_files_is_an_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"empty: data directory lacks the four IDX files of mnist"):
        load_dataset("mnist", tmp_path / "empty")


def test_corrupt_file_in_explicit_directory_is_named(tmp_path):
    directory = make_idx_set(tmp_path / "mine", marker=10, gz=False)
    path = directory / "t10k-labels-idx1-ubyte"
    path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(DataError, match=r"t10k-labels-idx1-ubyte: truncated"):
        load_dataset("mnist", directory)


def test_label_count_must_match_image_count(tmp_path):
    directory = make_idx_set(tmp_path / "mine", marker=10)
    write_idx(directory / "train-labels-idx1-ubyte.gz", np.zeros(2, dtype=np.uint8))
    with pytest.raises(DataError, match=r"train-labels-idx1-ubyte.gz: expected 3 uint8 labels"):
        load_dataset("mnist", directory)


def test_cache_beats_download(mirror):
    make_idx_set(cache_dir(), marker=20)
    calls = []
    data = load_dataset("mnist", download=True, downloader=local_downloader(mirror, calls))
    assert (data.source, marker_of(data), calls) == ("cache", 20, [])


def test_cache_location_follows_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_LAB_DATA", str(tmp_path / "elsewhere"))
    make_idx_set(tmp_path / "elsewhere" / "mnist", marker=30)
    data = load_dataset("mnist")
    assert (data.source, data.location) == ("cache", str(tmp_path / "elsewhere" / "mnist"))


def test_download_beats_bundled_and_fills_cache(mirror):
    messages = []
    data = load_dataset("mnist", download=True, downloader=local_downloader(mirror), progressbar=False,
                        log=messages.append)
    assert (data.source, marker_of(data)) == ("download", 40)
    assert sorted(p.name for p in cache_dir().iterdir()) == sorted(n + ".gz" for n in FILE_NAMES.values())
    assert any("downloading mnist" in m for m in messages)
    assert load_dataset("mnist").source == "cache"  # the next call finds the files


def test_download_tries_next_mirror(mirror, monkeypatch):
    spec = dataclasses.replace(SPECS["mnist"], mirrors=("https://dead.invalid/", "https://alive.invalid/"))
    monkeypatch.setitem(SPECS, "mnist", spec)
    copy = local_downloader(mirror)

    def flaky(url, output_file, pooch_instance):
        if "dead" in url:
            raise ConnectionError(f"cannot reach {url}")
        copy(url, output_file, pooch_instance)

    assert load_dataset("mnist", download=True, downloader=flaky, progressbar=False).source == "download"


def test_md5_mismatch_is_rejected_and_leaves_no_file(mirror, monkeypatch):
    wrong = dict(SPECS["mnist"].md5, train_labels="0" * 32)
    monkeypatch.setitem(SPECS, "mnist", dataclasses.replace(SPECS["mnist"], md5=wrong))
    messages = []
    data = load_dataset("mnist", download=True, downloader=local_downloader(mirror), progressbar=False,
                        log=messages.append)
    assert data.source == "bundled"
    assert not (cache_dir() / "train-labels-idx1-ubyte.gz").exists()
    assert any("download failed" in m and "train-labels" in m for m in messages)


def test_md5_mismatch_error_text_for_fashion(mirror, monkeypatch):
    # Fashion-MNIST has no bundled fallback, so the checksum failure reaches the caller.
    spec = dataclasses.replace(SPECS["mnist"], name="fashion-mnist", system_dir=None,
                               md5=dict(SPECS["mnist"].md5, train_images="0" * 32))
    monkeypatch.setitem(SPECS, "fashion-mnist", spec)
    with pytest.raises(DataError, match=r"(?s)no source has fashion-mnist.*train-images-idx3-ubyte.gz.*"
                                        r"MD5 hash of downloaded file .* does not match"):
        load_dataset("fashion-mnist", download=True, downloader=local_downloader(mirror), progressbar=False)


def test_interrupted_download_leaves_no_partial_file(mirror):
    def dies_halfway(url, output_file, pooch_instance):
        Path(output_file).write_bytes(b"\x1f\x8b partial")
        raise ConnectionError("connection reset")

    data = load_dataset("mnist", download=True, downloader=dies_halfway, progressbar=False)
    assert data.source == "bundled"
    assert list(cache_dir().iterdir()) == []


def test_no_network_falls_back_to_bundled_with_message(mirror):
    def offline(url, output_file, pooch_instance):
        raise ConnectionError("Name or service not known")

    messages = []
    data = load_dataset("mnist", download=True, downloader=offline, log=messages.append)
    assert data.source == "bundled"
    assert messages[-1] == "using the bundled MNIST subset (first 10,000 training images)"


def test_download_off_goes_straight_to_bundled(mirror):
    calls = []
    data = load_dataset("mnist", download=False, downloader=local_downloader(mirror, calls))
    assert (data.source, calls) == ("bundled", [])


def test_offline_environment_variable_turns_download_off(mirror):
    # conftest sets AUTOGRAD_LAB_OFFLINE=1; download=None defers to it.
    calls = []
    assert load_dataset("mnist", downloader=local_downloader(mirror, calls)).source == "bundled"
    assert calls == []


def test_cache_beats_system_package_for_fashion(tmp_path, monkeypatch):
    system = make_idx_set(tmp_path / "usr-share", marker=50)
    monkeypatch.setitem(SPECS, "fashion-mnist", dataclasses.replace(SPECS["fashion-mnist"], system_dir=system))
    assert load_dataset("fashion-mnist").source == "system"
    make_idx_set(cache_dir("fashion-mnist"), marker=60)
    data = load_dataset("fashion-mnist")
    assert (data.source, marker_of(data)) == ("cache", 60)


def test_fashion_without_any_source_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setitem(SPECS, "fashion-mnist",
                        dataclasses.replace(SPECS["fashion-mnist"], system_dir=tmp_path / "absent"))
    with pytest.raises(DataError, match=r"(?s)no source has fashion-mnist.*absent.*download: turned off"):
        load_dataset("fashion-mnist")


def test_unknown_name():
    with pytest.raises(DataError, match=r"unknown data set 'cifar'"):
        load_dataset("cifar")


def test_arrays_are_read_only(tmp_path):
    data = load_dataset("mnist", make_idx_set(tmp_path / "mine", marker=10))
    with pytest.raises(ValueError, match="read-only"):
        data.x_train[0, 0] = 1.0


def test_describe_names_source_and_sizes(tmp_path):
    directory = make_idx_set(tmp_path / "mine", marker=10)
    assert load_dataset("mnist", directory).describe() == (
        f"mnist: 3 train / 2 test images from data_dir ({directory})")


def test_bundled_name_refuses_a_directory(tmp_path):
    with pytest.raises(DataError, match=r"mnist-bundled reads only the bundled files"):
        load_dataset("mnist-bundled", tmp_path)
