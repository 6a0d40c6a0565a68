"""Stochastic gradient descent with optional momentum, Nesterov momentum, weight decay and per-parameter clipping."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from autograd_lab.optim.clip import clip_norm_
from autograd_lab.optim.optimizer import Optimizer, check_hyper
from autograd_lab.variable import Parameter


class SGD(Optimizer):
    """Gradient descent on each parameter p with gradient g:

    1. optionally clip g per parameter: if ‖g‖ > c, g ← g·c/‖g‖ (in place; the seed article's SimpleSGD with c = 5.0);
    2. d = g + λ·p (weight decay λ: L2 regularisation, the gradient of (λ/2)‖p‖²);
    3. with momentum μ > 0: b ← d on the first step, then b ← μ·b + d; the step direction is b, or d + μ·b with
       Nesterov momentum (Sutskever, Martens, Dahl & Hinton, "On the importance of initialization and momentum in
       deep learning", ICML 2013, in the reformulation PyTorch's ``torch.optim.SGD`` uses, without dampening);
    4. p ← p - lr·direction.

    Args:
        params: the Parameters to train (e.g. ``model.parameters()``); anything else raises TypeError.
        lr: learning rate ≥ 0.
        momentum: μ in [0, 1).
        nesterov: use Nesterov momentum (needs momentum > 0).
        weight_decay: λ ≥ 0.
        clip_per_param: c > 0 to clip each parameter's gradient norm separately (note: this rescales ``p.grad``);
            None (default) to leave gradients alone. For one threshold over all gradients use ``clip_grad_norm``.

    Raises:
        TypeError: for non-Parameters. ValueError: for out-of-range hyper-parameters.
    """

    def __init__(self, params: Iterable[Parameter], lr: float, momentum: float = 0.0, nesterov: bool = False,
                 weight_decay: float = 0.0, clip_per_param: float | None = None) -> None:
        super().__init__(params, lr)
        self.momentum = check_hyper("momentum", momentum, 0.0, 1.0, "SGD")
        self.weight_decay = check_hyper("weight_decay", weight_decay, where="SGD")
        if nesterov and self.momentum == 0:
            raise ValueError("SGD: nesterov=True needs momentum > 0")
        self.nesterov = bool(nesterov)
        if clip_per_param is not None and not clip_per_param > 0:
            raise ValueError(f"SGD: clip_per_param must be positive or None, got {clip_per_param!r}")
        self.clip_per_param = clip_per_param
        # Work arrays, allocated once: the step, the momentum buffers (filled on the first step), and for Nesterov
        # with weight decay a second array, since both d and μ·b must then be held at once.
        self._work = [np.empty_like(p.data) for p in self.params]
        self._velocity = [np.empty_like(p.data) for p in self.params] if self.momentum else []
        self._started = [False] * len(self.params)
        both = self.nesterov and self.weight_decay
        self._extra = [np.empty_like(p.data) for p in self.params] if both else []

    def _update(self, i: int, p: Parameter, grad: np.ndarray) -> None:
        work = self._work[i]
        if self.clip_per_param is not None:
            clip_norm_(grad, self.clip_per_param)
        d = grad
        if self.weight_decay:
            np.multiply(p.data, self.weight_decay, out=work)
            work += grad
            d = work
        if self.momentum:
            b = self._velocity[i]
            if self._started[i]:
                b *= self.momentum
                b += d
            else:
                np.copyto(b, d)
                self._started[i] = True
            if self.nesterov:
                scaled = self._extra[i] if d is work else work
                np.multiply(b, self.momentum, out=scaled)
                scaled += d
                d = scaled
            else:
                d = b
        np.multiply(d, -self.lr, out=work)
        p.add_(work)
