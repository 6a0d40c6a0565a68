"""Learning-rate schedules, applied between steps through the trainer's per-step callback.

``cosine``: lr_t = lr_0 · ½ (1 + cos(π t / T)) for step t of T (I. Loshchilov, F. Hutter, "SGDR: Stochastic Gradient
Descent with Warm Restarts", ICLR 2017, eq. 5, one cycle without restarts and with η_min = 0). Large steps early, small
ones at the end: the last epochs settle instead of jumping between minima, which is what a batch-normalised CNN on
MNIST needs to keep its best held-out accuracy (measured in ``benchmarks/bench_cnn.py``).

``onecycle``: a warm-up from lr_max/25 to lr_max over the first 30% of the steps, then a decay to lr_max/(25·10⁴)
over the rest, both halves of a cosine (L. N. Smith, N. Topin, "Super-Convergence: Very Fast Training of Neural
Networks Using Large Learning Rates", 2017, §3; the form and defaults of PyTorch's ``OneCycleLR`` with
``anneal_strategy="cos"``). A transformer needs the warm-up: at the start Adam's second moments are poor estimates
and the attention logits grow fast, and a full-size first step can push the softmax into saturation it does not
leave (Xiong et al., ICML 2020, §3).
"""

from __future__ import annotations

import math

from autograd_lab.optim.optimizer import Optimizer
from autograd_lab.variable import Variable

SCHEDULES = ("constant", "cosine", "onecycle")
#: One-cycle's shape, as PyTorch's OneCycleLR defaults: the share of steps warming up, start = lr_max / DIV,
#: end = start / FINAL_DIV.
ONECYCLE_WARMUP, ONECYCLE_DIV, ONECYCLE_FINAL_DIV = 0.3, 25.0, 1e4


def cosine_lr(base_lr: float, step: int, total_steps: int) -> float:
    """The cosine schedule's rate after ``step`` of ``total_steps`` steps (``base_lr`` at 0, 0 at the end)."""
    return base_lr * 0.5 * (1.0 + math.cos(math.pi * min(step, total_steps) / total_steps))


def _cosine_between(start: float, end: float, fraction: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * fraction) + 1.0)


def onecycle_lr(max_lr: float, step: int, total_steps: int, warmup: float = ONECYCLE_WARMUP) -> float:
    """The one-cycle rate for step ``step`` (0-based) of ``total_steps``: ``max_lr/25`` at step 0, ``max_lr`` at
    step ⌊warmup·T⌋ - 1, ``max_lr/2.5e5`` at step T - 1 and after; equal to ``torch.optim.lr_scheduler.OneCycleLR``'s
    rate (``pct_start=warmup``, cosine annealing) at every step.

    Raises:
        ValueError: if total_steps < 2 or warmup is not in (0, 1) (no room for both halves).
    """
    if total_steps < 2 or not 0 < warmup < 1:
        raise ValueError(f"onecycle_lr: needs total_steps ≥ 2 and warmup in (0, 1), got {total_steps}, {warmup}")
    start, end = max_lr / ONECYCLE_DIV, max_lr / ONECYCLE_DIV / ONECYCLE_FINAL_DIV
    peak_step, last_step = float(warmup * total_steps) - 1, total_steps - 1
    step = min(step, last_step)
    if step <= peak_step:
        return _cosine_between(start, max_lr, step / peak_step if peak_step > 0 else 1.0)
    return _cosine_between(max_lr, end, (step - peak_step) / (last_step - peak_step))


class StepSchedule:
    """A ``fit`` callback that sets ``optimizer.lr`` to ``self.rate(t)`` after every step, t the steps done so far;
    subclasses give ``rate``.

    Args:
        optimizer: whose ``lr`` is set; its current rate is the base rate.
        steps_per_epoch, epochs: the run's length (T = steps_per_epoch · epochs), positive.

    Raises:
        ValueError: for a non-positive length.
    """

    def __init__(self, optimizer: Optimizer, steps_per_epoch: int, epochs: int) -> None:
        if steps_per_epoch < 1 or epochs < 1:
            raise ValueError(f"{type(self).__name__}: steps_per_epoch and epochs must be ≥ 1, got {steps_per_epoch}, "
                             f"{epochs}")
        self.optimizer = optimizer
        self.base_lr = optimizer.lr
        self.steps_per_epoch = steps_per_epoch
        self.total = steps_per_epoch * epochs

    def rate(self, step: int) -> float:
        raise NotImplementedError(f"{type(self).__name__}.rate is not implemented")

    def __call__(self, epoch: int, step: int, loss: Variable) -> None:
        self.optimizer.lr = self.rate((epoch - 1) * self.steps_per_epoch + step)


class CosineSchedule(StepSchedule):
    """:func:`cosine_lr` from the optimizer's rate down to 0 over the run (Args, Raises: :class:`StepSchedule`)."""

    def rate(self, step: int) -> float:
        return cosine_lr(self.base_lr, step, self.total)


class OneCycleSchedule(StepSchedule):
    """:func:`onecycle_lr` with the optimizer's current rate as the peak. The constructor sets the first step's rate
    (peak / 25) at once; each call, the next step's.

    Args: as :class:`StepSchedule`.

    Raises:
        ValueError: for a non-positive length, or a run of fewer than 2 steps (no room to warm up and decay).
    """

    def __init__(self, optimizer: Optimizer, steps_per_epoch: int, epochs: int) -> None:
        super().__init__(optimizer, steps_per_epoch, epochs)
        if self.total < 2:
            raise ValueError(f"OneCycleSchedule: a run of {self.total} step has no room to warm up and decay")
        optimizer.lr = self.rate(0)

    def rate(self, step: int) -> float:
        return onecycle_lr(self.base_lr, step, self.total)
