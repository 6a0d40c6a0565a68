"""A small CNN trained on the bundled MNIST images, shipped so that chapter 12, the exporter tests and the export
benchmark need not train one.

``cnn_mnist.npz`` is an :class:`autograd_lab.nn.CNN` (channels (8, 16), batch norm, 9,122 parameters) in the
library's model format (:meth:`Module.save`), trained by this library (``autograd-lab train --dataset mnist-bundled
--model cnn --seed 0``, run by ``examples/mcu/train_cnn.py``): 98.55% on the 2,000 bundled held-out images. The
file's ``meta`` records the command, recipe, seed and accuracy (see :func:`provenance`).
"""

from __future__ import annotations

from importlib import resources

from autograd_lab.nn.cnn import CNN
from autograd_lab.nn.module import read_header

FILE = "cnn_mnist.npz"


def path() -> str:
    """The path of the shipped model file."""
    return str(resources.files("autograd_lab.export.pretrained").joinpath(FILE))


def load_cnn() -> CNN:
    """The shipped CNN, in evaluation mode: x (N, 784) or (N, 1, 28, 28) float32 in [0, 1] -> logits (N, 10)."""
    model = CNN.load(path())
    model.eval()
    return model


def provenance() -> dict:
    """How the shipped model was made: the ``meta`` the training script saved (command, data, accuracy)."""
    return dict(read_header(path())["meta"])
