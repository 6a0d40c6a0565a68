"""Adam (Kingma & Ba, "Adam: A Method for Stochastic Optimization", ICLR 2015), with bias correction."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from autograd_lab.optim.optimizer import Optimizer, check_hyper
from autograd_lab.variable import Parameter


class Adam(Optimizer):
    """Adam, Algorithm 1 of Kingma & Ba (2015). For each parameter p with gradient g, at step t = 1, 2, ...:

        g ← g + λ·p                       (weight decay λ as L2 regularisation, as torch.optim.Adam; not AdamW)
        m ← β1·m + (1 - β1)·g             (first moment: a running mean of the gradient)
        v ← β2·v + (1 - β2)·g²            (second moment: a running mean of its square)
        m̂ = m / (1 - β1ᵗ),  v̂ = v / (1 - β2ᵗ)   (bias correction: m and v start at 0)
        p ← p - lr · m̂ / (√v̂ + ε)

    Example: lr 0.1, betas (0.9, 0.999), p = 1, gradients 0.5 then -0.5 give p = 0.9, then 0.90526316.

    Args:
        params: the Parameters to train; anything else raises TypeError.
        lr: learning rate ≥ 0. betas: (β1, β2), each in [0, 1). eps: ε > 0. weight_decay: λ ≥ 0.

    Raises:
        TypeError: for non-Parameters. ValueError: for out-of-range hyper-parameters.
    """

    def __init__(self, params: Iterable[Parameter], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        super().__init__(params, lr)
        beta1 = check_hyper("beta1", betas[0], 0.0, 1.0, "Adam")
        self.betas = (beta1, check_hyper("beta2", betas[1], 0.0, 1.0, "Adam"))
        self.eps = check_hyper("eps", eps, where="Adam")
        if self.eps <= 0:
            raise ValueError(f"Adam: eps must be positive, got {eps!r}")
        self.weight_decay = check_hyper("weight_decay", weight_decay, where="Adam")
        # Moments and work arrays, allocated once; steps are counted per parameter (a parameter may miss a step).
        self._m = [np.zeros_like(p.data) for p in self.params]
        self._v = [np.zeros_like(p.data) for p in self.params]
        self._work = [np.empty_like(p.data) for p in self.params]
        self._decayed = [np.empty_like(p.data) for p in self.params] if self.weight_decay else []
        self._t = [0] * len(self.params)

    def _update(self, i: int, p: Parameter, grad: np.ndarray) -> None:
        beta1, beta2 = self.betas
        m, v, work = self._m[i], self._v[i], self._work[i]
        g = grad
        if self.weight_decay:
            g = self._decayed[i]
            np.multiply(p.data, self.weight_decay, out=g)
            g += grad
        self._t[i] += 1
        t = self._t[i]
        m *= beta1
        np.multiply(g, 1 - beta1, out=work)
        m += work
        v *= beta2
        np.multiply(g, g, out=work)
        work *= 1 - beta2
        v += work
        # lr·m̂/(√v̂ + ε) = (lr/(1-β1ᵗ)) · m / (√v/√(1-β2ᵗ) + ε), computed in `work`.
        np.sqrt(v, out=work)
        work /= math.sqrt(1 - beta2**t)
        work += self.eps
        np.divide(m, work, out=work)
        work *= -self.lr / (1 - beta1**t)
        p.add_(work)
