"""AdamW: Adam with decoupled weight decay (Loshchilov & Hutter, "Decoupled Weight Decay Regularization", ICLR 2019)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from autograd_lab.optim.adam import Adam
from autograd_lab.variable import Parameter


class AdamW(Adam):
    """AdamW, Algorithm 2 of Loshchilov & Hutter (2019) as ``torch.optim.AdamW``. For each parameter p with gradient
    g, at step t = 1, 2, ...:

        p ← p - lr·λ·p                    (decoupled weight decay: shrink p, outside the moments)
        m, v, m̂, v̂ from g as Adam's       (the gradient alone: λ never enters m or v)
        p ← p - lr · m̂ / (√v̂ + ε)

    Why decoupled: Adam's L2 term λ·p is divided by √v̂ like any gradient, so parameters with large gradients are
    hardly decayed at all; here every weight shrinks by the same factor (1 - lr·λ) per step, and λ and lr can be
    tuned apart. ``lr`` is the current rate, so a schedule scales the decay too (as PyTorch's).

    Example: lr 0.1, λ 0.5, p = 1, gradient 0.5: p = 1·(1 - 0.05) - 0.1 = 0.85.

    Args:
        params: the Parameters to train; anything else raises TypeError.
        lr: learning rate ≥ 0. betas: (β1, β2), each in [0, 1). eps: ε > 0. weight_decay: λ ≥ 0 (PyTorch's default
            0.01).

    Raises:
        TypeError: for non-Parameters. ValueError: for out-of-range hyper-parameters.
    """

    coupled_decay = False

    def __init__(self, params: Iterable[Parameter], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)

    def _update(self, i: int, p: Parameter, grad: np.ndarray) -> None:
        if self.weight_decay:
            work = self._work[i]
            np.multiply(p.data, -self.lr * self.weight_decay, out=work)
            p.add_(work)
        self._moment_step(i, p, grad)
