"""A depthwise-separable CNN for the bundled MNIST, trained briefly with this library, for ``bench_export.py``.

    conv 3x3 1->16 (padding 1), batch norm, ReLU, 2x2 max pool             28x28 -> 14x14x16
    depthwise conv 3x3 (groups 16, padding 1), batch norm, ReLU             14x14x16
    pointwise conv 1x1 16->32, batch norm, ReLU, 2x2 max pool              -> 7x7x32
    flatten (1,568), dense 1,568->10

The depthwise + pointwise pair is the block of MobileNet (Howard et al. 2017) and of the keyword-spotting DS-CNN
(Zhang et al. 2017, "Hello Edge"): a 3x3 conv 16->32 would take 9·16·32 = 4,608 weights per pixel, the pair
9·16 + 16·32 = 656. Trained with SGD (momentum 0.9, lr 0.02 on a cosine schedule), batch 64, random shifts of up to
1 pixel, on the 8,000 bundled training images; scored on the 2,000 held-out ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab import Variable
from autograd_lab.nn import BatchNorm2d, Conv2d, Flatten, Linear, MaxPool2d, ReLU
from autograd_lab.nn.module import Module
from autograd_lab.ops import ReshapeOp


class DSCNN(Module):
    """The model above; ``(N, 784)`` or ``(N, 1, 28, 28)`` -> logits (N, 10)."""

    def __init__(self, rng: int = 0) -> None:
        super().__init__()
        gen = np.random.default_rng(rng)
        self.layers = [
            Conv2d(1, 16, 3, padding=1, bias=False, rng=gen), BatchNorm2d(16), ReLU(), MaxPool2d(2),
            Conv2d(16, 16, 3, padding=1, groups=16, bias=False, rng=gen), BatchNorm2d(16), ReLU(),
            Conv2d(16, 32, 1, bias=False, rng=gen), BatchNorm2d(32), ReLU(), MaxPool2d(2),
            Flatten(), Linear(32 * 7 * 7, 10, rng=gen)]
        for name, p in self.named_parameters():
            p.name = name

    def forward(self, x: Variable) -> Variable:
        if x.ndim == 2:
            x = ReshapeOp((x.shape[0], 1, 28, 28))(x)
        for layer in self.layers:
            x = layer(x)
        return x

    def config(self) -> dict[str, Any]:
        return {}


def train(data: Any, epochs: int = 3, seed: int = 0) -> tuple[DSCNN, float]:
    """Train on ``data`` (the bundled MNIST) and return the model and its held-out accuracy (float, NumPy)."""
    from autograd_lab.modes import eval_mode
    from autograd_lab.optim import SGD
    from autograd_lab.training.loop import fit

    model = DSCNN(rng=seed)
    opt = SGD(model.parameters(), lr=0.02, momentum=0.9)
    steps = epochs * -(-len(data.x_train) // 64)
    done = [0]

    def cosine(*_: Any) -> None:  # the learning rate of the next step
        done[0] += 1
        opt.lr = 0.01 * (1 + np.cos(np.pi * min(done[0], steps) / steps))

    fit(model, opt, data.x_train, data.y_train, epochs=epochs, batch_size=64, rng=seed, augment_shift=1,
        callback=cosine)
    with eval_mode():
        logits = np.concatenate([model(Variable.from_numpy(data.x_test[i:i + 500])).data
                                 for i in range(0, len(data.x_test), 500)])
    return model, float(np.mean(logits.argmax(axis=1) == data.y_test))
