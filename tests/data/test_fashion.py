"""Full Fashion-MNIST from Debian's dataset-fashion-mnist package, checked against published facts."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab.data import SPECS, load_dataset
from autograd_lab.data.catalog import find_files

SYSTEM_DIR = SPECS["fashion-mnist"].system_dir
# Published facts: 60,000 training and 10,000 test images, 6,000 / 1,000 per class; mean pixel / 255 of the
# training set 0.2860 (the usual normalisation constant).
FASHION_TRAIN_MEAN = 0.2860

pytestmark = pytest.mark.skipif(
    find_files(SYSTEM_DIR) is None,
    reason=f"Debian package dataset-fashion-mnist is not installed (no IDX files in {SYSTEM_DIR})",
)


@pytest.fixture(scope="module")
def fashion():
    return load_dataset("fashion-mnist", download=False)


def test_found_in_system_directory(fashion):
    assert (fashion.source, fashion.location) == ("system", str(SYSTEM_DIR))


def test_shapes_and_dtypes(fashion):
    assert (fashion.x_train.shape, fashion.x_train.dtype) == ((60000, 784), np.float32)
    assert (fashion.x_test.shape, fashion.y_test.shape) == ((10000, 784), (10000,))
    assert fashion.y_train.dtype == np.int64


def test_classes_are_balanced(fashion):
    assert np.bincount(fashion.y_train).tolist() == [6000] * 10
    assert np.bincount(fashion.y_test).tolist() == [1000] * 10


def test_mean_pixel(fashion):
    assert float(fashion.x_train.mean(dtype=np.float64)) == pytest.approx(FASHION_TRAIN_MEAN, abs=5e-5)


def test_pixels_in_unit_interval(fashion):
    assert fashion.x_train.min() == 0.0 and fashion.x_train.max() == 1.0


def test_class_names(fashion):
    assert fashion.class_names[0] == "T-shirt/top" and fashion.class_names[9] == "Ankle boot"
