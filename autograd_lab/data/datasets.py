"""Load MNIST or Fashion-MNIST from the first source that has it, and say which source that was.

Sources, tried in this order:

1. ``data_dir``: a directory you name, holding the four standard IDX files (``train-images-idx3-ubyte``,
   ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, each raw or ``.gz``).
   Naming a directory that lacks them is an error, not a reason to look elsewhere.
2. ``cache``: ``$AUTOGRAD_LAB_DATA/<name>``, default ``~/.cache/autograd-lab/<name>`` (see ``catalog.cache_root``).
3. ``system`` (Fashion-MNIST only): the files of Debian's ``dataset-fashion-mnist`` package in
   ``/usr/share/datasets/fashion-mnist``.
4. ``download``: the public mirrors, into the cache, md5-checked, with a progress bar. Skipped when
   ``download=False`` or ``$AUTOGRAD_LAB_OFFLINE=1``; a failure (no network) is reported and the search goes on.
5. ``bundled`` (MNIST only): the first 10,000 MNIST training images shipped with autograd-lab, 8,000 for training
   and 2,000 held out as the test part.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from autograd_lab.data.bundled import BUNDLED_DIR, TRAIN_COUNT, load_bundled_arrays
from autograd_lab.data.catalog import SPECS, DatasetSpec, cache_root, downloads_allowed, find_files
from autograd_lab.data.download import Downloader, fetch
from autograd_lab.data.errors import DataError
from autograd_lab.data.idx import read_idx

Log = Callable[[str], None]
SOURCES = ("data_dir", "cache", "system", "download", "bundled")


@dataclass(frozen=True)
class Dataset:
    """A loaded data set; all arrays are read-only.

    Attributes:
        name: ``"mnist"`` or ``"fashion-mnist"``.
        x_train: float32, shape (N, 784), pixel / 255 in [0, 1], each row a 28x28 image in row-major order.
        y_train: int64, shape (N,), class labels 0..9.
        x_test: float32, shape (M, 784); for the bundled subset, the held-out part.
        y_test: int64, shape (M,).
        source: which source provided the data, one of ``SOURCES``.
        location: the directory the files were read from.
        class_names: ``class_names[label]`` names a class.
    """

    name: str
    x_train: np.ndarray = field(repr=False)
    y_train: np.ndarray = field(repr=False)
    x_test: np.ndarray = field(repr=False)
    y_test: np.ndarray = field(repr=False)
    source: str
    location: str
    class_names: tuple[str, ...] = field(repr=False)

    def describe(self) -> str:
        """One line for a log or the command line: the name, the sizes and the source."""
        test = "held-out" if self.source == "bundled" else "test"
        return (f"{self.name}: {len(self.y_train)} train / {len(self.y_test)} {test} images "
                f"from {self.source} ({self.location})")


def _images(path: Path) -> np.ndarray:
    raw = read_idx(path, ndim=3)
    if raw.dtype != np.uint8 or raw.shape[1:] != (28, 28):
        raise DataError(f"{path}: expected uint8 images of 28x28 pixels, found {raw.dtype} {raw.shape[1:]}")
    return _readonly(_scale(raw))


def _labels(path: Path, count: int) -> np.ndarray:
    raw = read_idx(path, ndim=1)
    if raw.dtype != np.uint8 or len(raw) != count or (raw.size and raw.max() > 9):
        raise DataError(f"{path}: expected {count} uint8 labels in 0..9, found {len(raw)} {raw.dtype} values "
                        f"up to {raw.max() if raw.size else None}")
    return _readonly(raw.astype(np.int64))


def _scale(images: np.ndarray) -> np.ndarray:
    """uint8 (N, 28, 28) -> float32 (N, 784) in [0, 1]; divided in place to avoid a second large array."""
    x = images.reshape(len(images), 784).astype(np.float32)
    x /= np.float32(255.0)
    return x


def _readonly(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def read_idx_dataset(spec: DatasetSpec, files: dict[str, Path], source: str) -> Dataset:
    """Build a ``Dataset`` from the four IDX files found for ``spec``.

    Raises:
        DataError: naming the file, when one is corrupt, is not 28x28 uint8 images / uint8 labels 0..9, or an
            image file and its label file disagree on the count.
    """
    x_train = _images(files["train_images"])
    x_test = _images(files["test_images"])
    return Dataset(
        name=spec.name, x_train=x_train, y_train=_labels(files["train_labels"], len(x_train)),
        x_test=x_test, y_test=_labels(files["test_labels"], len(x_test)),
        source=source, location=str(files["train_images"].parent), class_names=spec.class_names,
    )


def load_bundled_mnist(directory: Path = BUNDLED_DIR) -> Dataset:
    """The bundled MNIST subset: x_train (8000, 784), y_train (8000,), x_test (2000, 784), y_test (2000,).

    Raises:
        DataError: when a bundled file is missing or fails its sha256 check.
    """
    images, labels = load_bundled_arrays(directory)
    x = _scale(images)
    y = labels.astype(np.int64)
    return Dataset(
        name="mnist", x_train=_readonly(x[:TRAIN_COUNT]), y_train=_readonly(y[:TRAIN_COUNT]),
        x_test=_readonly(x[TRAIN_COUNT:]), y_test=_readonly(y[TRAIN_COUNT:]),
        source="bundled", location=str(directory), class_names=SPECS["mnist"].class_names,
    )


def load_dataset(name: str = "mnist", data_dir: str | os.PathLike[str] | None = None, *,
                 download: bool | None = None, progressbar: bool = True, log: Log | None = None,
                 downloader: Downloader | None = None) -> Dataset:
    """Load ``name`` from the first source that has it (see the module docstring for the order).

    Args:
        name: ``"mnist"``, ``"fashion-mnist"``, or ``"mnist-bundled"`` to skip straight to the bundled subset.
        data_dir: a directory holding the four IDX files; when given, it must have them.
        download: allow downloading; None means "yes unless ``$AUTOGRAD_LAB_OFFLINE`` is set" (1, true, yes).
        progressbar: show a tqdm progress bar while downloading.
        log: called with one line per step (``print`` in the command line), e.g. "no cache at ...".
        downloader: a pooch downloader replacing HTTP (for tests).

    Returns:
        A ``Dataset``; its ``source`` and ``describe()`` say where the data came from.

    Raises:
        DataError: for an unknown name, a ``data_dir`` without the four files, a corrupt file (naming it and the
            fault), or when no source has the data (Fashion-MNIST has no bundled fallback).
    """
    say = log if log is not None else (lambda message: None)
    if name == "mnist-bundled":
        if data_dir is not None:
            raise DataError("mnist-bundled reads only the bundled files; drop data_dir or ask for 'mnist'")
        return load_bundled_mnist()
    if name not in SPECS:
        raise DataError(f"unknown data set {name!r}; choose one of {[*SPECS, 'mnist-bundled']}")
    spec = SPECS[name]

    if data_dir is not None:
        named = Path(data_dir).expanduser()
        files = find_files(named)
        if files is None:
            raise DataError(f"{named}: data directory lacks the four IDX files of {name} "
                            "(train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
                            "t10k-labels-idx1-ubyte, each raw or .gz)")
        return read_idx_dataset(spec, files, "data_dir")

    cache = cache_root() / spec.name
    tried = []
    local = [("cache", cache)] + ([("system", spec.system_dir)] if spec.system_dir is not None else [])
    for source, directory in local:
        files = find_files(directory)
        if files is not None:
            return read_idx_dataset(spec, files, source)
        tried.append(f"{source}: no complete set of files in {directory}")
        say(tried[-1])

    if downloads_allowed(download):
        say(f"downloading {name} into {cache}")
        try:
            files = fetch(spec, cache, progressbar=progressbar, downloader=downloader, log=say)
        except DataError as exc:
            tried.append(f"download: {exc}")
            say(f"no download of {name}, trying the next source")
        else:
            return read_idx_dataset(spec, files, "download")
    else:
        tried.append("download: turned off")
        say(tried[-1])

    if name == "mnist":
        say("using the bundled MNIST subset (first 10,000 training images)")
        return load_bundled_mnist()
    raise DataError(f"no source has {name}:\n  " + "\n  ".join(tried))
