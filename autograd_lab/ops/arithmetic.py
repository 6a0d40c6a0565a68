"""Elementwise arithmetic: Add, Sub, Mul, Div, Neg, Pow. Every binary op broadcasts like NumPy."""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops._broadcast import sum_to_shape


class AddOp(Operator):
    """``a + b`` with broadcasting.  d/da = 1, d/db = 1 (summed over broadcast axes)."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]


class SubOp(Operator):
    """``a - b`` with broadcasting.  d/da = 1, d/db = -1. Input order matters."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a - b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        gb = sum_to_shape(-gy, b.shape) if self.needs_grad(1) else None
        return [sum_to_shape(gy, a.shape), gb]


class MulOp(Operator):
    """``a * b`` elementwise with broadcasting.  d/da = b, d/db = a."""

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a * b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        ga = sum_to_shape(gy * b, a.shape) if self.needs_grad(0) else None
        gb = sum_to_shape(gy * a, b.shape) if self.needs_grad(1) else None
        return [ga, gb]


class DivOp(Operator):
    """``a / b`` elementwise with broadcasting.  d/da = 1/b, d/db = -a/b² = -y/b. Input order matters.

    Division by 0 gives ±inf (NaN for 0/0) in the value and the gradients, as in PyTorch, without a warning.
    """

    def forward(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return a / b

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        a, b = self.inputs
        with np.errstate(divide="ignore", invalid="ignore"):
            ga = gy / b
            gb = sum_to_shape(-ga * self.output, b.shape) if self.needs_grad(1) else None
        return [sum_to_shape(ga, a.shape), gb]


class NegOp(Operator):
    """``-a``.  d/da = -1."""

    def forward(self, a: np.ndarray) -> np.ndarray:
        return -a

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [-gy]


class PowOp(Operator):
    """``a ** p``, where the exponent p is a constant (``PowOp(2.0)(a)``) or a Variable (``PowOp()(a, p)``).

    Derivatives (the rules and edge values of PyTorch's ``pow_backward``, ``tools/autograd/derivatives.yaml``):

        d/da = p·a^(p-1), and exactly 0 where p == 0 (the derivative of the constant a^0 = 1, for every a);
        d/dp = a^p·ln(a), and exactly 0 where a == 0 and p ≥ 0 (the one-sided limit, 0^p being 0 or 1 there).

    Everywhere else the formulas are evaluated as they stand, so an undefined derivative is NaN and an infinite one
    is ±inf, never a silent 0: d/dp of (-2)^3 and of (-inf)^0 is NaN (ln of a negative number), d/dp of 0^-1 is
    -inf (= inf·ln 0), d/da of 0^0.5 is inf. ``docs/conventions.md`` lists every op's values at such points.
    A negative base with a non-integer exponent gives NaN, as in NumPy. The Variable form broadcasts.

    Raises:
        TypeError: if the exponent is given both ways, or neither, or is not a real number.
        ValueError: if a constant exponent is not a single number (use the Variable form for an array of exponents).
    """

    def __init__(self, exponent: float | None = None) -> None:
        numeric = not isinstance(exponent, (bool, np.bool_)) and np.asarray(exponent).dtype.kind in "iuf"
        if exponent is not None and not numeric:
            raise TypeError(f"PowOp(exponent): the exponent must be a real number, got {exponent!r}")
        if exponent is not None and np.ndim(exponent) != 0:
            raise ValueError(
                f"PowOp(exponent): a constant exponent must be a single number, got shape {np.shape(exponent)}; "
                "pass an array of exponents as a Variable: PowOp()(a, p)"
            )
        self.exponent = None if exponent is None else float(exponent)

    def forward(self, a: np.ndarray, p: np.ndarray | None = None) -> np.ndarray:
        # 0 to a negative power is inf and a negative base to a fractional power NaN: values, not warnings.
        with np.errstate(divide="ignore", invalid="ignore"):
            if p is None and self.exponent is not None:
                return np.power(a, self.exponent, dtype=np.result_type(a, np.float32))
            if p is not None and self.exponent is None:
                return np.power(a, p, dtype=np.result_type(a, np.float32))
        raise TypeError("PowOp takes the exponent either as PowOp(exponent)(a) or as PowOp()(a, p), not both")

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        if self.exponent is not None:
            (a,) = self.inputs
            if self.exponent == 0:
                return [np.zeros_like(a)]
            with np.errstate(divide="ignore", invalid="ignore"):
                return [gy * self.exponent * np.power(a, self.exponent - 1)]
        a, p = self.inputs
        ga = gp = None
        if self.needs_grad(0):
            with np.errstate(divide="ignore", invalid="ignore"):
                slope = np.where(p == 0, 0, p * np.power(a, p - 1))
            ga = sum_to_shape(gy * slope, a.shape)
        if self.needs_grad(1):
            with np.errstate(divide="ignore", invalid="ignore"):
                slope = self.output * np.log(a)  # NaN for a < 0, ±inf or NaN at a = 0: the formula's own value
            slope = np.where((a == 0) & (p >= 0), 0, slope)
            gp = sum_to_shape(gy * slope, p.shape)
        return [ga, gp]
