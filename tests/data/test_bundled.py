"""The bundled MNIST subset checked against published MNIST facts, and its integrity check."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from autograd_lab.data import TRAIN_COUNT, DataError, load_bundled_mnist, load_dataset
from autograd_lab.data.bundled import BUNDLED_DIR, IMAGES_FILE, load_bundled_arrays, read_manifest

# Label counts of the first 10,000 entries of MNIST's train-labels-idx1-ubyte, digits 0..9.
FIRST_10K_CLASS_COUNTS = [1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978]
# Row 5 of MNIST training image 0 (a 5), as printed in countless tutorials.
TRAIN_IMAGE_0_ROW_5 = [0] * 12 + [3, 18, 18, 18, 126, 136, 175, 26, 166, 255, 247, 127] + [0] * 4
# The first ten labels of MNIST's training file (issue 3).
MNIST_FIRST_LABELS = [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
# Mean pixel / 255 of all 60,000 MNIST training images (the constant of torchvision's usual Normalize).
MNIST_TRAIN_MEAN = 0.1307


@pytest.fixture(scope="module")
def arrays():
    return load_bundled_arrays()


def test_shapes_and_dtypes(arrays):
    images, labels = arrays
    assert (images.shape, images.dtype) == ((10000, 28, 28), np.uint8)
    assert (labels.shape, labels.dtype) == ((10000,), np.uint8)


def test_class_counts_match_first_10k_of_mnist(arrays):
    assert np.bincount(arrays[1], minlength=10).tolist() == FIRST_10K_CLASS_COUNTS


def test_image_0_is_mnist_training_image_0(arrays):
    images, labels = arrays
    assert labels[0] == 5
    assert images[0, 5].tolist() == TRAIN_IMAGE_0_ROW_5


def test_mean_pixel_close_to_mnist_mean(arrays):
    # 0.1307 is the mean over all 60,000 images; the first 10,000 are a sample of them, so allow 0.002.
    assert arrays[0].mean() / 255 == pytest.approx(MNIST_TRAIN_MEAN, abs=0.002)


def test_manifest_declares_order(arrays):
    manifest = read_manifest()
    assert manifest["class_counts"] == FIRST_10K_CLASS_COUNTS
    exact = manifest["exact_prefix"]
    assert 10 <= exact <= len(arrays[1])
    assert manifest["order"].startswith("original" if exact == len(arrays[1]) else "known prefix")


def test_first_labels_are_mnists(arrays):
    assert arrays[1][:10].tolist() == MNIST_FIRST_LABELS


def test_after_exact_prefix_digits_are_spread_by_proportion(arrays):
    # Every prefix of the merged part holds each digit within one of its share of that part.
    rest = arrays[1][read_manifest()["exact_prefix"]:]
    counts = np.bincount(rest, minlength=10)
    seen = np.cumsum(rest[:, None] == np.arange(10), axis=0)
    share = np.arange(1, len(rest) + 1)[:, None] * counts / max(len(rest), 1)
    assert np.abs(seen - share).max(initial=0.0) <= 1.0


def test_split_is_first_8000_then_last_2000(arrays):
    images, labels = arrays
    data = load_bundled_mnist()
    assert TRAIN_COUNT == 8000
    assert (data.x_train.shape, data.x_test.shape) == ((8000, 784), (2000, 784))
    assert (data.y_train.dtype, data.x_train.dtype) == (np.int64, np.float32)
    np.testing.assert_array_equal(data.y_train, labels[:8000])
    np.testing.assert_array_equal(data.y_test, labels[8000:])
    np.testing.assert_array_equal(data.x_test[0], images[8000].reshape(784) / np.float32(255))
    assert 0.0 <= data.x_train.min() and data.x_train.max() <= 1.0


def test_held_out_part_spreads_digits_proportionally(arrays):
    labels = arrays[1]
    exact = read_manifest()["exact_prefix"]
    held_out = np.bincount(labels[TRAIN_COUNT:], minlength=10)
    if exact >= TRAIN_COUNT:  # original order: the held-out part is whatever MNIST has there
        assert held_out.min() > 0
        return
    # The images after the exact prefix are merged by proportion, so the last 2,000 of them hold each digit's share.
    remaining = np.asarray(FIRST_10K_CLASS_COUNTS) - np.bincount(labels[:exact], minlength=10)
    expected = remaining * 2000 / remaining.sum()
    assert held_out.sum() == 2000
    assert np.abs(held_out - expected).max() <= 1.0


def test_mnist_bundled_name_and_describe():
    data = load_dataset("mnist-bundled")
    assert data.source == "bundled"
    assert data.describe() == f"mnist: 8000 train / 2000 held-out images from bundled ({BUNDLED_DIR})"


@pytest.fixture
def bundled_copy(tmp_path):
    return shutil.copytree(BUNDLED_DIR, tmp_path / "bundled")


def test_corrupt_bundled_file_is_refused(bundled_copy):
    path = bundled_copy / IMAGES_FILE
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0x01
    path.write_bytes(bytes(content))
    with pytest.raises(DataError, match=rf"{IMAGES_FILE}: checksum mismatch: sha256 .* bundled file is corrupt"):
        load_bundled_mnist(bundled_copy)


def test_missing_bundled_file_is_named(bundled_copy):
    (bundled_copy / IMAGES_FILE).unlink()
    with pytest.raises(DataError, match=rf"{IMAGES_FILE}: bundled images file cannot be read"):
        load_bundled_mnist(bundled_copy)


def test_unreadable_manifest(bundled_copy):
    (bundled_copy / "manifest.json").write_text("{not json")
    with pytest.raises(DataError, match=r"manifest.json: cannot read the bundled data manifest"):
        load_bundled_mnist(bundled_copy)


def test_manifest_sha256_is_what_is_checked(bundled_copy):
    manifest = json.loads((bundled_copy / "manifest.json").read_text())
    manifest["files"]["labels"]["sha256"] = "0" * 64
    (bundled_copy / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DataError, match=r"labels-idx1-ubyte.gz: checksum mismatch"):
        load_bundled_mnist(bundled_copy)
