"""Softmax and log-softmax along one axis, and log-sum-exp over axes, stable for inputs of any magnitude.

Both subtract the maximum along the axis first: softmax(x) = softmax(x - c) for any constant c, and with c = max(x)
every exponent is ≤ 0, so ``exp`` cannot overflow and at least one term of the sum is exactly 1, so the log of the sum
is finite. ``exp`` of a very negative number underflows to 0, which is the right answer; that flag is ignored so that
the ops stay silent even under ``np.errstate(all='raise')``. (The "log-sum-exp trick"; see e.g. Blanchard, Higham &
Higham, "Accurately computing the log-sum-exp and softmax functions", IMA J. Numer. Anal. 41(4), 2021.)
"""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops.reduce import _expand, _normalize_axes


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """``x - max - log(sum(exp(x - max)))`` along ``axis``: finite for every finite x. Same shape and dtype as x."""
    z = x - x.max(axis=axis, keepdims=True)
    with np.errstate(under="ignore"):
        return z - np.log(np.exp(z).sum(axis=axis, keepdims=True))


class SoftmaxOp(Operator):
    """``y_i = exp(x_i) / Σ_j exp(x_j)`` along ``axis`` (default: the last). Output has x's shape; rows sum to 1.

    Backward (Jacobian dy_i/dx_j = y_i(δ_ij - y_j), applied to gy without building it):
    dx = y ⊙ (gy - Σ_j gy_j y_j), the sum taken along ``axis``.
    """

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def forward(self, x: np.ndarray) -> np.ndarray:
        z = x - x.max(axis=self.axis, keepdims=True)
        with np.errstate(under="ignore"):
            e = np.exp(z)
        return e / e.sum(axis=self.axis, keepdims=True)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        y = self.output
        with np.errstate(under="ignore"):
            return [y * (gy - (gy * y).sum(axis=self.axis, keepdims=True))]


class LogSoftmaxOp(Operator):
    """``y_i = x_i - log Σ_j exp(x_j)`` along ``axis`` (default: the last), computed stably. Output has x's shape.

    Backward (dy_i/dx_j = δ_ij - softmax_j): dx = gy - softmax(x) ⊙ Σ_j gy_j, where softmax(x) = exp(y).
    """

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def forward(self, x: np.ndarray) -> np.ndarray:
        return log_softmax(x, self.axis)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        with np.errstate(under="ignore"):
            return [gy - np.exp(self.output) * gy.sum(axis=self.axis, keepdims=True)]


class LogSumExpOp(Operator):
    """``y = log Σ exp(x)`` over ``axis`` (``torch.logsumexp``, ``scipy.special.logsumexp``), computed stably.

    Shapes: as :class:`~autograd_lab.ops.SumOp` (``axis`` an int, a tuple or None for all axes; ``keepdims``).
    Forward: y = m + log Σ exp(x - m) with m the maximum over the axes (the trick of the module docstring). Where m
    is ±inf, m is taken as 0 instead (PyTorch's rule), so a slice of all -inf gives -inf rather than NaN, and a +inf
    gives +inf.

    Backward: dy/dx_i = exp(x_i - y) = softmax(x)_i along the axes. At an all -inf slice this is exp(NaN) = NaN, and
    next to a +inf it is NaN for the inf and 0 for the finite entries, PyTorch's values (``docs/conventions.md``).

    Raises:
        ShapeError: for an axis out of range or repeated.
    """

    def __init__(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x: np.ndarray) -> np.ndarray:
        axes = _normalize_axes(self.axis, x.ndim)
        m = np.max(x, axis=axes, keepdims=True)
        m = np.where(np.isinf(m), 0, m)
        with np.errstate(under="ignore", divide="ignore"):
            y = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
        return y if self.keepdims else np.squeeze(y, axis=axes)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        axes = _normalize_axes(self.axis, x.ndim)
        y = _expand(self.output, axes, self.keepdims)
        with np.errstate(under="ignore", invalid="ignore"):
            return [_expand(gy, axes, self.keepdims) * np.exp(x - y)]
