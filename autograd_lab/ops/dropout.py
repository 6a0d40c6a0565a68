"""Inverted dropout (Srivastava, Hinton, Krizhevsky, Sutskever & Salakhutdinov, JMLR 15, 2014)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from autograd_lab.config import Config
from autograd_lab.operator import Operator

_DEFAULT_RNG = np.random.default_rng()


class DropoutOp(Operator):
    """Zero each element with probability ``p`` and scale the survivors by 1/(1 - p), in training mode only.

    In training (``Config.is_training``): y = x ⊙ m / (1 - p), with m_i ~ Bernoulli(1 - p) drawn afresh on every
    forward (including each :meth:`Engine.forward` re-run); dy/dx = m / (1 - p). The scaling ("inverted" dropout)
    keeps E[y] = x, so nothing needs rescaling at evaluation time.
    In evaluation (``eval_mode()``): y = x exactly (the same values, no arithmetic), dy/dx = 1.

    Args:
        p: probability of dropping an element, 0 ≤ p < 1.
        rng: a ``np.random.Generator`` for the mask (seed it for reproducible runs); default: a module-wide generator.
        mask: a fixed 0/1 mask broadcastable to x's shape, used instead of random draws (for tests and demos).

    Raises:
        ValueError: for p outside [0, 1), or a mask with values other than 0 and 1.
        ShapeError: if ``mask`` does not broadcast to the input's shape.
    """

    saved = ("_scale_mask",)

    training_dependent: ClassVar[bool] = True
    _scale_mask: np.ndarray | None

    def __init__(self, p: float, rng: np.random.Generator | None = None, mask: np.ndarray | None = None) -> None:
        if not 0 <= p < 1:
            raise ValueError(f"DropoutOp: p is the probability of dropping and must be in [0, 1), got {p}")
        self.p = float(p)
        self._rng = rng if rng is not None else _DEFAULT_RNG
        self._mask = None
        if mask is not None:
            mask = np.asarray(mask)
            if not np.isin(mask, (0, 1)).all():
                raise ValueError("DropoutOp: mask values must be 0 (drop) or 1 (keep)")
            self._mask = mask

    def forward(self, x: np.ndarray) -> np.ndarray:
        if not Config.is_training:
            self._scale_mask = None
            return x
        keep = self._mask if self._mask is not None else self._rng.random(x.shape) >= self.p
        if not _broadcasts_to(keep.shape, x.shape):
            raise ValueError(f"DropoutOp: mask shape {keep.shape} does not broadcast to the input shape {x.shape}")
        self._scale_mask = keep.astype(x.dtype) * x.dtype.type(1 / (1 - self.p))
        return x * self._scale_mask

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        if self._scale_mask is None:
            return [gy]
        return [gy * self._scale_mask]


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """True if an array of ``shape`` broadcasts to exactly ``target``."""
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False
