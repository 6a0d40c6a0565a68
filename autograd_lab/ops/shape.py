"""Ops that move elements without changing them: Reshape, Transpose, BroadcastTo.

Each backward applies the inverse movement to the gradient (for BroadcastTo, the inverse is a sum over the copies).
Forward values are read-only views of the input where NumPy allows it, so no data is copied.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops._broadcast import sum_to_shape


class ReshapeOp(Operator):
    """``x.reshape(shape)`` (one entry may be -1, as in NumPy; C order).  Backward: ``gy.reshape(x.shape)``.

    Raises:
        ShapeError: if the element counts differ.
    """

    def __init__(self, shape: tuple[int, ...] | int) -> None:
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x.reshape(self.shape)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy.reshape(self.inputs[0].shape)]


class TransposeOp(Operator):
    """``np.transpose(x, axes)``: permute the axes (default: reverse them).

    Output axis i is input axis ``axes[i]``, so backward permutes back with the inverse permutation ``argsort(axes)``.

    Raises:
        ShapeError: if ``axes`` is not a permutation of the input's axes.
    """

    def __init__(self, axes: tuple[int, ...] | None = None) -> None:
        self.axes = None if axes is None else tuple(axes)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.transpose(x, self.axes)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        if self.axes is None:
            return [np.transpose(gy)]
        ndim = gy.ndim
        return [np.transpose(gy, np.argsort([a % ndim for a in self.axes]))]


class BroadcastToOp(Operator):
    """``np.broadcast_to(x, shape)`` (NumPy broadcasting rules).  Backward sums the gradient over the copies.

    Raises:
        ShapeError: if x does not broadcast to ``shape``.
    """

    def __init__(self, shape: tuple[int, ...] | int) -> None:
        self.shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, self.shape)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [sum_to_shape(gy, self.inputs[0].shape)]
