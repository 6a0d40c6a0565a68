"""Reductions over one or more axes: Sum, Mean, Max.

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
