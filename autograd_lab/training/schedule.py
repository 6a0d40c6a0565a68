"""Learning-rate schedules, applied between steps through the trainer's per-step callback.

``cosine``: lr_t = lr_0 · ½ (1 + cos(π t / T)) for step t of T (I. Loshchilov, F. Hutter, "SGDR: Stochastic Gradient
Descent with Warm Restarts", ICLR 2017, eq. 5, one cycle without restarts and with η_min = 0). Large steps early, small
ones at the end: the last epochs settle instead of jumping between minima, which is what a batch-normalised CNN on
MNIST needs to keep its best held-out accuracy (measured in ``benchmarks/bench_cnn.py``).
"""

from __future__ import annotations

import math

from autograd_lab.optim.optimizer import Optimizer
from autograd_lab.variable import Variable

SCHEDULES = ("constant", "cosine")


def cosine_lr(base_lr: float, step: int, total_steps: int) -> float:
    """The cosine schedule's rate after ``step`` of ``total_steps`` steps (``base_lr`` at 0, 0 at the end)."""
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))


class CosineSchedule:
    """A ``fit`` callback that sets ``optimizer.lr`` by :func:`cosine_lr` after every step.

    Args:
        optimizer: whose ``lr`` is set; its current rate is the base rate.
        steps_per_epoch, epochs: the run's length (T = steps_per_epoch · epochs), positive.

    Raises:
        ValueError: for a non-positive length.
    """

    def __init__(self, optimizer: Optimizer, steps_per_epoch: int, epochs: int) -> None:
        if steps_per_epoch < 1 or epochs < 1:
            raise ValueError(f"CosineSchedule: steps_per_epoch and epochs must be ≥ 1, got {steps_per_epoch}, {epochs}")
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.steps_per_epoch = steps_per_epoch
        self.total = steps_per_epoch * epochs

    def __call__(self, epoch: int, step: int, loss: Variable) -> None:
        done = (epoch - 1) * self.steps_per_epoch + step
        self.optimizer.lr = cosine_lr(self.base_lr, done, self.total)
