"""Layer normalization (Ba, Kiros & Hinton, "Layer Normalization", arXiv:1607.06450, 2016)."""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator


class LayerNormOp(Operator):
    """Normalise each row over the last axis, then scale and shift: ``LayerNormOp()(x[, gamma[, beta]])``.

    Shapes: x (..., D); gamma (D,) and beta (D,), both optional (without them the scale is 1 and the shift 0).
    Output: x's shape and dtype.

        μ = mean(x),  σ² = mean((x - μ)²),  r = 1/√(σ² + eps),  x̂ = (x - μ)·r,  y = γ ⊙ x̂ + β

    The variance is taken of the centred values (two passes), never as E[x²] - E[x]², which cancels catastrophically
    when |μ| ≫ σ (rows like 1e8 + [1, 2, 3] would get variance 0 or negative).

    Backward, with ĝ = gy ⊙ γ and means taken over the last axis (derived from the chain rule through μ and σ²):
        dx = r ⊙ (ĝ - mean(ĝ) - x̂ ⊙ mean(ĝ ⊙ x̂)),  dγ = Σ gy ⊙ x̂,  dβ = Σ gy  (sums over all but the last axis).

    Args:
        eps: added to the variance before the square root, so a constant row maps to 0 instead of NaN.

    Raises:
        ShapeError: if gamma or beta is not of shape (D,) (names the op, the shapes and the calling line).
    """

    _xhat: np.ndarray
    _rstd: np.ndarray

    def __init__(self, eps: float = 1e-5) -> None:
        self.eps = eps

    def forward(self, x: np.ndarray, gamma: np.ndarray | None = None, beta: np.ndarray | None = None) -> np.ndarray:
        if x.ndim == 0:
            raise ValueError("x must have at least one axis (the one normalised)")
        d = x.shape[-1:]
        for name, v in (("gamma", gamma), ("beta", beta)):
            if v is not None and v.shape != d:
                raise ValueError(f"{name} must have shape {d} (the last axis of x, shape {x.shape}), got {v.shape}")
        xc = x - x.mean(axis=-1, keepdims=True)
        var = (xc * xc).mean(axis=-1, keepdims=True)
        self._rstd = 1 / np.sqrt(var + x.dtype.type(self.eps))
        self._xhat = xc * self._rstd
        y = self._xhat
        if gamma is not None:
            y = y * gamma
        if beta is not None:
            y = y + beta
        return y

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x, *params = self.inputs
        xhat = self._xhat
        lead = tuple(range(x.ndim - 1))
        grads: list[np.ndarray | None] = [None] * len(self.inputs)
        if self.needs_grad(0):
            g = gy * params[0] if params else gy
            grads[0] = self._rstd * (
                g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)
            )
        if len(params) >= 1 and self.needs_grad(1):
            grads[1] = (gy * xhat).sum(axis=lead)
        if len(params) == 2 and self.needs_grad(2):
            grads[2] = gy.sum(axis=lead)
        return grads
