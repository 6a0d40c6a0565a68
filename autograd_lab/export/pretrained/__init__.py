"""A small CNN and a tiny vision transformer trained on the bundled MNIST images, shipped so that chapter 12, the
exporter tests and the export benchmark need not train them.

``cnn_mnist.npz`` is an :class:`autograd_lab.nn.CNN` (channels (8, 16), batch norm, 9,122 parameters) in the
library's model format (:meth:`Module.save`), trained by this library (``autograd-lab train --dataset mnist-bundled
--model cnn --seed 0``, run by ``examples/mcu/train_cnn.py``): 98.55% on the 2,000 bundled held-out images. The
file's ``meta`` records the command, recipe, seed and accuracy (see :func:`provenance`).

``vit_mnist.npz`` is the :class:`autograd_lab.nn.transformer.VisionTransformer` of ``autograd-lab train --dataset
mnist-bundled --model transformer --seed 0`` (16 patches of 7x7, width 64, 2 pre-norm layers of 4 heads, GELU tanh,
71,946 parameters), made by ``examples/mcu/train_cnn.py --model transformer``.
"""

from __future__ import annotations

from importlib import resources

from autograd_lab.nn.cnn import CNN
from autograd_lab.nn.module import read_header
from autograd_lab.nn.transformer import VisionTransformer

FILE = "cnn_mnist.npz"
VIT_FILE = "vit_mnist.npz"


def path(file: str = FILE) -> str:
    """The path of a shipped model file (the CNN's by default)."""
    return str(resources.files("autograd_lab.export.pretrained").joinpath(file))


def load_cnn() -> CNN:
    """The shipped CNN, in evaluation mode: x (N, 784) or (N, 1, 28, 28) float32 in [0, 1] -> logits (N, 10)."""
    model = CNN.load(path())
    model.eval()
    return model


def load_vit() -> VisionTransformer:
    """The shipped vision transformer, in evaluation mode: x (N, 784) float32 in [0, 1] -> logits (N, 10)."""
    model = VisionTransformer.load(path(VIT_FILE))
    model.eval()
    return model


def provenance(file: str = FILE) -> dict:
    """How a shipped model was made: the ``meta`` the training script saved (command, data, accuracy)."""
    return dict(read_header(path(file))["meta"])
