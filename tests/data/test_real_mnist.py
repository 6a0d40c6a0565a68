"""Full MNIST, where a copy exists: published facts, and the bundled subset against the real first 10,000 images.

MNIST cannot be downloaded on the machines the project is built on, so these tests run only when
``AUTOGRAD_LAB_TEST_MNIST_DIR`` names a directory holding the four official ``.gz`` files.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from autograd_lab.data import SPECS, load_dataset
from autograd_lab.data.bundled import load_bundled_arrays
from autograd_lab.data.catalog import FILE_NAMES

MNIST_DIR = os.environ.get("AUTOGRAD_LAB_TEST_MNIST_DIR")
pytestmark = pytest.mark.skipif(
    not MNIST_DIR, reason="no MNIST copy here: set AUTOGRAD_LAB_TEST_MNIST_DIR to a directory with the four .gz files")


@pytest.fixture(scope="module")
def mnist():
    return load_dataset("mnist", MNIST_DIR, download=False)


def test_files_have_published_md5():
    for role, name in FILE_NAMES.items():
        digest = hashlib.md5((Path(MNIST_DIR) / f"{name}.gz").read_bytes()).hexdigest()
        assert digest == SPECS["mnist"].md5[role], name


def test_published_facts(mnist):
    assert mnist.x_train.shape == (60000, 784) and mnist.x_test.shape == (10000, 784)
    assert mnist.y_train[:10].tolist() == [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]
    assert mnist.y_test[:10].tolist() == [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]
    assert float(mnist.x_train.mean(dtype=np.float64)) == pytest.approx(0.1307, abs=5e-5)


def test_bundled_subset_is_the_first_10000_images_digit_by_digit(mnist):
    images, labels = load_bundled_arrays()
    real_x = np.rint(mnist.x_train[:10000] * 255).astype(np.uint8)
    real_y = mnist.y_train[:10000]
    for digit in range(10):
        np.testing.assert_array_equal(images[labels == digit].reshape(-1, 784), real_x[real_y == digit])
