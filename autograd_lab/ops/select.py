"""Ops that choose, element by element, between two inputs: Maximum, Minimum, Where. Each broadcasts like NumPy.

Each output element is a copy of one input's element, so each backward routes ``gy`` to the input chosen (summed over
broadcast axes, :func:`~autograd_lab.ops.sum_to_shape`). Where both inputs are equal, or one is NaN, the rule is
PyTorch's (``tools/autograd/derivatives.yaml``), tabled in ``docs/conventions.md``.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops._broadcast import sum_to_shape


class MaximumOp(Operator):
    """``y = max(a, b)`` elementwise (``np.maximum``, ``torch.maximum``), with broadcasting.

    dy/da = 1 where a > b, 0 where a < b; dy/db the other way round. Ties (a == b): each gets 1/2, the average of the
    two one-sided derivatives (a valid subgradient, and PyTorch's choice). NaN: ``np.maximum`` returns the NaN, and
    *both* inputs receive the whole gradient (every comparison with NaN is false, so neither is masked, as in
    PyTorch); the library's rule that a NaN is the maximum and receives the gradient holds.
    """

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.maximum(a, b)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        return _route(gy, a, b, a_loses=a < b, b_loses=a > b, needs=(self.needs_grad(0), self.needs_grad(1)))


class MinimumOp(Operator):
    """``y = min(a, b)`` elementwise (``np.minimum``, ``torch.minimum``), with broadcasting.

    dy/da = 1 where a < b, 0 where a > b; ties and NaN as :class:`MaximumOp` (1/2 each; the whole gradient to both).
    """

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.minimum(a, b)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        return _route(gy, a, b, a_loses=a > b, b_loses=a < b, needs=(self.needs_grad(0), self.needs_grad(1)))


def _route(gy: np.ndarray, a: np.ndarray, b: np.ndarray, a_loses: np.ndarray, b_loses: np.ndarray,
           needs: tuple[bool, bool]) -> list[np.ndarray | None]:
    """The gradients of a two-way choice: ``gy`` halved at ties, zeroed where an input lost, summed to each shape."""
    shared = np.where(a == b, gy / 2, gy)
    ga = sum_to_shape(np.where(a_loses, 0, shared), a.shape) if needs[0] else None
    gb = sum_to_shape(np.where(b_loses, 0, shared), b.shape) if needs[1] else None
    return [ga, gb]


class WhereOp(Operator):
    """``y = a where condition else b`` (``np.where``, ``torch.where``): ``WhereOp()(condition, a, b)``.

    Shapes: the three inputs broadcast together. ``condition`` is read as booleans (nonzero is true; a Variable
    holding 0.0/1.0 works). dtype: the promoted dtype of a and b.

    dy/da = 1 where the condition holds, else 0; dy/db the complement; the condition gets a zero gradient (it is
    discrete). A NaN or inf in the branch not taken does not reach the gradient: the mask selects, it never
    multiplies (``gy · 0`` would be fine, but ``inf · 0`` is NaN).
    """

    def forward(self, condition: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.where(condition.astype(bool, copy=False), a, b)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        condition, a, b = self.inputs
        keep = condition.astype(bool, copy=False)
        gc = np.zeros_like(condition) if self.needs_grad(0) else None
        ga = sum_to_shape(np.where(keep, gy, 0), a.shape) if self.needs_grad(1) else None
        gb = sum_to_shape(np.where(keep, 0, gy), b.shape) if self.needs_grad(2) else None
        return [gc, ga, gb]
