"""What we know about each data set: its four IDX files, their checksums, where to download them, class names.

The md5 checksums are those the data sets' publishers list for the gzip files (also used by torchvision's
``MNIST`` and ``FashionMNIST`` classes); a download that does not match is rejected.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# The four files of the standard split, by role.
ROLES = ("train_images", "train_labels", "test_images", "test_labels")
FILE_NAMES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}

CACHE_ENV = "AUTOGRAD_LAB_DATA"
OFFLINE_ENV = "AUTOGRAD_LAB_OFFLINE"


@dataclass(frozen=True)
class DatasetSpec:
    """Facts about one IDX data set.

    Attributes:
        name: the name ``load_dataset`` accepts.
        md5: md5 hex digest of each ``<file name>.gz`` as published, by role.
        mirrors: base URLs tried in order; a file's URL is ``mirror + file name + ".gz"``.
        class_names: label ``i`` means ``class_names[i]``.
        system_dir: where an operating-system package installs the files, or None.
    """

    name: str
    md5: dict[str, str]
    mirrors: tuple[str, ...]
    class_names: tuple[str, ...]
    system_dir: Path | None = None


MNIST = DatasetSpec(
    name="mnist",
    md5={
        "train_images": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
        "train_labels": "d53e105ee54ea40749a09fcbcd1e9432",
        "test_images": "9fb629c4189551a2d022fa330f9573f3",
        "test_labels": "ec29112dd5afa0611ce80d1b7f02629c",
    },
    mirrors=(
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "https://storage.googleapis.com/cvdf-datasets/mnist/",
    ),
    class_names=tuple(str(d) for d in range(10)),
)

FASHION_MNIST = DatasetSpec(
    name="fashion-mnist",
    md5={
        "train_images": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
        "train_labels": "25c81989df183df01b3e8a0aad5dffbe",
        "test_images": "bef4ecab320f06d8554ea6380940ec79",
        "test_labels": "bb300cfdad3c16e7a12a480ee83cd310",
    },
    mirrors=(
        "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
        "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
    ),
    class_names=("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
                 "Ankle boot"),
    # Debian's dataset-fashion-mnist package (recompressed gzip files, so their md5 differs from upstream's).
    system_dir=Path("/usr/share/datasets/fashion-mnist"),
)

SPECS = {spec.name: spec for spec in (MNIST, FASHION_MNIST)}


def cache_root() -> Path:
    """The download cache: ``$AUTOGRAD_LAB_DATA`` if set, else ``$XDG_CACHE_HOME/autograd-lab``, else
    ``~/.cache/autograd-lab``. Each data set lives in a subdirectory named after it."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "autograd-lab"


def downloads_allowed(download: bool | None) -> bool:
    """Resolve the ``download`` argument: an explicit bool wins; None means "yes unless $AUTOGRAD_LAB_OFFLINE is
    set to something other than empty, 0, false or no"."""
    if download is not None:
        return download
    return os.environ.get(OFFLINE_ENV, "").strip().lower() in ("", "0", "false", "no")


def find_files(directory: Path) -> dict[str, Path] | None:
    """The four standard IDX files in ``directory`` (each as ``name`` or ``name.gz``, gzip preferred), or None if
    any is missing. Which of the two is gzip-compressed is decided later from the bytes, not from the name."""
    found = {}
    for role, stem in FILE_NAMES.items():
        for candidate in (directory / f"{stem}.gz", directory / stem):
            if candidate.is_file():
                found[role] = candidate
                break
        else:
            return None
    return found
