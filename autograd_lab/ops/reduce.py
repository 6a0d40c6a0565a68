"""Reductions over one or more axes: Sum, Mean, Max, Var, Std.

``axis`` is an int, a tuple of ints (negative values count from the end) or None (all axes); ``keepdims`` keeps the
reduced axes with length 1, as in NumPy. Backward puts the reduced axes back (length 1) and broadcasts the gradient
over them; the result is a read-only broadcast view, which the engine never writes into.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator


def _normalize_axes(axis: int | tuple[int, ...] | None, ndim: int) -> tuple[int, ...]:
    """Axes as sorted non-negative ints. Raises ValueError for an out-of-range or repeated axis."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = sorted(int(a) + ndim if a < 0 else int(a) for a in axes)
    if any(not 0 <= a < ndim for a in out) or len(set(out)) != len(out):
        raise ValueError(f"axis {axis} is out of range or repeated for an input with {ndim} dimension(s)")
    return tuple(out)


def _expand(gy: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """Give ``gy`` back the reduced axes with length 1, so that it broadcasts against the input."""
    return gy if keepdims else np.expand_dims(gy, axes)


class SumOp(Operator):
    """``y = Σ x`` over ``axis``.  dy/dx_i = 1: every input element gets the gradient of the sum it went into."""

    def __init__(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.sum(x, axis=_normalize_axes(self.axis, x.ndim), keepdims=self.keepdims)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        axes = _normalize_axes(self.axis, x.ndim)
        return [np.broadcast_to(_expand(gy, axes, self.keepdims), x.shape)]


class MeanOp(Operator):
    """``y = (1/K) Σ x`` over ``axis``, K = the number of elements reduced.  dy/dx_i = 1/K.

    A reduction over zero elements gives NaN, as in NumPy.
    """

    def __init__(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.mean(x, axis=_normalize_axes(self.axis, x.ndim), keepdims=self.keepdims)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        axes = _normalize_axes(self.axis, x.ndim)
        count = int(np.prod([x.shape[a] for a in axes]))
        return [np.broadcast_to(_expand(gy, axes, self.keepdims) / count, x.shape)]


class MaxOp(Operator):
    """``y = max x`` over ``axis``.

    dy/dx_i = 1 where x_i is the maximum and 0 elsewhere. Ties: when k elements share the maximum, each gets 1/k of
    the gradient. That is the average of the k one-hot subgradients, so it is a valid subgradient, it is symmetric
    (the result does not depend on the element order), and it matches the directional derivative of raising all
    tied elements together. (PyTorch's ``amax`` makes the same choice; ``max`` with indices picks one element.)
    An empty reduction raises ShapeError. A NaN in a slice is that slice's maximum (as in ``np.max``) and receives
    its gradient.
    """

    def __init__(self, axis: int | tuple[int, ...] | None = None, keepdims: bool = False) -> None:
        self.axis = axis
        self.keepdims = keepdims

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.max(x, axis=_normalize_axes(self.axis, x.ndim), keepdims=self.keepdims)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        axes = _normalize_axes(self.axis, x.ndim)
        y = _expand(self.output, axes, self.keepdims)
        winners = x == y
        if np.isnan(y).any():
            winners |= np.isnan(x) & np.isnan(y)
        ties = winners.sum(axis=axes, keepdims=True)
        return [winners * (_expand(gy, axes, self.keepdims) / ties).astype(x.dtype, copy=False)]


class VarOp(Operator):
    """Variance over ``axis``: ``y = Σ (x - μ)² / (K - correction)``, μ the mean of the K elements reduced.

    ``correction`` (PyTorch's name; NumPy's ``ddof``) is 1 by default, the unbiased estimate (Bessel's correction),
    as in ``torch.var``; 0 gives the population variance, as ``np.var``. The sum is taken of the centred values (two
    passes), never as E[x²] - E[x]², which cancels catastrophically when |μ| ≫ σ.

    dy/dx_i = 2 (x_i - μ) / (K - correction) (the terms through μ sum to zero, since Σ (x - μ) = 0).
    With K - correction ≤ 0 (too few elements), as in PyTorch and with no warning: the value divides by 0 instead,
    so it is NaN (or inf); the gradient keeps the formula, so it is NaN where K = correction, and finite (2·0/(K -
    correction) = -0 for a single element) where K < correction.

    Args:
        axis, keepdims: as :class:`SumOp`.
        correction: subtracted from K in the divisor, an integer ≥ 0.

    Raises:
        ValueError: for a negative or non-integer correction. ShapeError: for an axis out of range or repeated.
    """

    def __init__(self, axis: int | tuple[int, ...] | None = None, correction: int = 1, keepdims: bool = False
                 ) -> None:
        if isinstance(correction, bool) or not isinstance(correction, (int, np.integer)) or correction < 0:
            raise ValueError(f"{type(self).__name__}: correction must be an integer ≥ 0, got {correction!r}")
        self.axis = axis
        self.correction = int(correction)
        self.keepdims = keepdims

    def _divisor(self, x: np.ndarray, axes: tuple[int, ...]) -> int:
        return int(np.prod([x.shape[a] for a in axes])) - self.correction

    def forward(self, x: np.ndarray) -> np.ndarray:
        axes = _normalize_axes(self.axis, x.ndim)
        xc = x - np.mean(x, axis=axes, keepdims=True) if x.size else x
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.sum(xc * xc, axis=axes, keepdims=self.keepdims) / x.dtype.type(max(self._divisor(x, axes), 0))

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        axes = _normalize_axes(self.axis, x.ndim)
        xc = x - np.mean(x, axis=axes, keepdims=True) if x.size else x
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = _expand(gy, axes, self.keepdims) * (2 / x.dtype.type(self._divisor(x, axes)))
            return [(scale * xc).astype(x.dtype, copy=False)]


class StdOp(VarOp):
    """Standard deviation over ``axis``: ``y = √var(x)``, var as :class:`VarOp` (same arguments and errors).

    dy/dx_i = (x_i - μ) / ((K - correction)·y), the chain rule through √ applied to :class:`VarOp`'s gradient.
    Where y = 0 (a constant slice) the gradient is 0, not 0/0: PyTorch's ``std_backward`` rule (the one-sided
    derivative is infinite in every direction but one; 0 is the choice PyTorch makes). With K - correction ≤ 0 it is
    NaN, as the value.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.sqrt(super().forward(x))

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        y = self.output
        with np.errstate(divide="ignore", invalid="ignore"):
            g_var = np.where(y == 0, 0, gy / (2 * y))  # dy/dvar = 1/(2√var), taken as 0 where y = 0
        return super().backward(g_var)
