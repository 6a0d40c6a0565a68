"""Elementwise functions of one input: Exp, Log, Sqrt, Sigmoid, Tanh, ReLU, LeakyReLU, Abs, Clip.

Each output element depends on the matching input element only, so each backward is ``gy * f'(x)``, elementwise, and
every output and gradient keeps the input's shape and dtype (float32 stays float32).

Points where f' is undefined or infinite follow PyTorch, and ``docs/conventions.md`` tables them: an infinite
derivative is inf (√ and ln at 0), an undefined one NaN (√ below 0), and at a kink the one-sided value PyTorch uses
(ReLU'(0) = 0, LeakyReLU'(0) = slope, |x|'(0) = 0, clip' = 1 on the bounds), each a valid subgradient. A NaN input
gives a NaN output; its gradient is what PyTorch's rule gives (ReLU passes it on, see :class:`ReLUOp`). See
:mod:`autograd_lab.gradcheck` for how gradient checking treats kinks.
"""

from __future__ import annotations

import math

import numpy as np

from autograd_lab.operator import Operator


class ExpOp(Operator):
    """``y = exp(x)``.  dy/dx = exp(x) = y, so backward reuses the saved output. Overflows to inf (value and gradient)
    for x > ~709 (~88 in float32), without a warning."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(x)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [gy * self.output]


class LogOp(Operator):
    """``y = ln(x)`` (natural log).  dy/dx = 1/x.

    Defined for x > 0; x = 0 gives -inf and x < 0 NaN, as in NumPy. The gradient is 1/x wherever it is evaluated, as
    in PyTorch: inf at 0, and the formula's finite value below 0 (where y itself is NaN). No warning is raised.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(x)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        with np.errstate(divide="ignore", invalid="ignore"):
            return [gy / self.inputs[0]]


class SqrtOp(Operator):
    """``y = √x``.  dy/dx = 1/(2√x) = 1/(2y).

    Defined for x ≥ 0: the gradient at 0 is inf and below 0 NaN (y is NaN there), as in PyTorch; no warning is raised.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.sqrt(x)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        with np.errstate(divide="ignore", invalid="ignore"):
            return [gy / (2 * self.output)]


class SigmoidOp(Operator):
    """Logistic sigmoid ``y = 1 / (1 + exp(-x))``.  dy/dx = y·(1 - y).

    Stable for every finite x: with ``z = exp(-|x|)``, which lies in (0, 1] and never overflows,
    y = 1/(1+z) for x ≥ 0 and y = z/(1+z) for x < 0 (the two forms are equal; each avoids exp of a large positive
    number). For x far below 0 this keeps full relative precision (y ≈ exp(x)), unlike ``0.5·(1 + tanh(x/2))``.
    ``exp`` underflowing to 0 (x < ~-745) is harmless here, so that floating-point flag is ignored: the op raises
    nothing and warns about nothing even under ``np.errstate(all='raise')``.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            z = np.exp(-np.abs(x))
            # The numerator, 1 for x ≥ 0 and z for x < 0, is max(z, [x ≥ 0]) because 0 ≤ z ≤ 1: the same values bit
            # for bit as np.where(x >= 0, 1, z) (NaN stays NaN), in about half the time (an LSTM step takes three).
            y = np.maximum(z, x >= 0)
            z += 1  # z is ours: adding in place saves the temporary of 1 + z
            y /= z
            return y

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        y = self.output
        with np.errstate(under="ignore"):
            slope = 1 - y
            slope *= y  # y·(1 - y), one temporary fewer
            return [gy * slope]


class TanhOp(Operator):
    """Hyperbolic tangent ``y = tanh(x)``.  dy/dx = 1 - y².

    ``np.tanh`` saturates to ±1 without overflow; the tiny-number underflow in ``y²`` or ``tanh`` of a subnormal is
    harmless and ignored, so no warning is raised for any finite input.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(under="ignore"):
            return np.tanh(x)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        y = self.output
        with np.errstate(under="ignore"):
            return [gy * (1 - y * y)]


class ReLUOp(Operator):
    """Rectified linear unit ``y = max(x, 0)`` (Nair & Hinton, ICML 2010).

    dy/dx = 1 for x > 0, 0 for x < 0, and 0 at x = 0 (PyTorch's convention, a valid subgradient).

    NaN: max(NaN, 0) is NaN, and the gradient passes to the NaN input unchanged (dy/dx = 1), because PyTorch zeroes
    the gradient only where x ≤ 0, which NaN is not. This is the library's rule for every max-like op: a NaN is the
    maximum, so it is the output and it receives the gradient (see ``docs/conventions.md``).
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.maximum(x, 0)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [np.where(self.inputs[0] <= 0, 0, gy)]


class LeakyReLUOp(Operator):
    """``y = x`` for x > 0, ``slope·x`` otherwise (Maas, Hannun & Ng, 2013).  dy/dx = 1 for x > 0, else slope.

    At 0 the gradient is ``slope`` and at NaN (y is NaN) it is ``slope`` too: PyTorch's rule ``x > 0 ? 1 : slope``.

    Args:
        slope: the gradient for x ≤ 0, usually small and positive (default 0.01).
    """

    def __init__(self, slope: float = 0.01) -> None:
        self.slope = float(slope)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.where(x > 0, x, x * self.slope)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        return [np.where(self.inputs[0] > 0, gy, gy * self.slope)]


class AbsOp(Operator):
    """``y = |x|``.  dy/dx = sign(x): -1 for x < 0, 1 for x > 0, and 0 at x = 0 (PyTorch's ``sgn``; a subgradient).

    At NaN the gradient is 0, as PyTorch's ``sgn(NaN) = 0`` gives (``np.sign`` would give NaN). Shape and dtype kept.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.abs(x)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        return [gy * ((x > 0).astype(x.dtype) - (x < 0))]


class ClipOp(Operator):
    """``y = min(max(x, low), high)``, elementwise: ``ClipOp(low, high)(x)`` (``torch.clamp``, ``np.clip``).

    Either bound may be None (no bound on that side), not both. With ``low > high`` every element becomes ``high``,
    as in PyTorch and NumPy.

    dy/dx = 1 where low ≤ x ≤ high, 0 elsewhere: PyTorch's ``clamp_backward``, which counts the bounds themselves as
    inside (a valid subgradient at the kinks). NaN stays NaN and gets gradient 0 (it is not inside the range).

    Raises:
        TypeError: if both bounds are None, or a bound is not a real number.
    """

    def __init__(self, low: float | None = None, high: float | None = None) -> None:
        if low is None and high is None:
            raise TypeError("ClipOp(low, high): give at least one bound")
        for name, bound in (("low", low), ("high", high)):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float, np.number))):
                raise TypeError(f"ClipOp(low, high): {name} must be a real number or None, got {bound!r}")
        self.low = None if low is None else float(low)
        self.high = None if high is None else float(high)

    def forward(self, x: np.ndarray) -> np.ndarray:
        y = x if self.low is None else np.maximum(x, x.dtype.type(self.low))
        return y if self.high is None else np.minimum(y, x.dtype.type(self.high))

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        inside = np.ones(x.shape, dtype=bool) if self.low is None else x >= self.low
        if self.high is not None:
            inside &= x <= self.high
        return [gy * inside]


class GELUOp(Operator):
    """Gaussian error linear unit, ``y = x·Φ(x)`` with Φ the standard normal CDF (Hendrycks & Gimpel, "Gaussian Error
    Linear Units (GELUs)", arXiv:1606.08415, 2016). Output has x's shape and dtype.

    Two forms, as PyTorch's ``nn.GELU(approximate=...)``:

    - ``approximate="none"`` (exact): Φ(x) = ½(1 + erf(x/√2)).  dy/dx = Φ(x) + x·φ(x), φ(x) = exp(-x²/2)/√(2π).
      NumPy has no vectorised erf, so this form calls ``math.erf`` per element: exact, but about 50 ns an element.
    - ``approximate="tanh"``: Φ(x) ≈ ½(1 + t), t = tanh(u), u = √(2/π)(x + 0.044715x³) (the paper's eq. 2).
      dy/dx = ½(1 + t) + ½x(1 - t²)·√(2/π)(1 + 3·0.044715x²). Differs from the exact form by < 5e-4 everywhere;
      the transformer of :mod:`autograd_lab.nn.transformer` uses it for speed.

    Raises:
        ValueError: for another ``approximate``.
    """

    saved = ("_cdf", "_tanh")

    _cdf: np.ndarray  # Φ(x), or its approximation
    _tanh: np.ndarray  # t = tanh(u) of the tanh form (1 - t² from Φ would lose digits where Φ is tiny)

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELUOp: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: np.ndarray) -> np.ndarray:
        if self.approximate == "tanh":
            k = x.dtype.type(np.sqrt(2 / np.pi))
            self._tanh = np.tanh(k * (x + x.dtype.type(0.044715) * x * x * x))
            self._cdf = 0.5 * (1 + self._tanh)
        else:
            erf = np.frompyfunc(math.erf, 1, 1)
            # frompyfunc returns a Python float, not an array, for a 0-d input: np.asarray takes both
            erf_values = np.asarray(erf(x.astype(np.float64) / math.sqrt(2)), dtype=np.float64)
            self._cdf = (0.5 * (1 + erf_values)).astype(x.dtype)
        return x * self._cdf

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        (x,) = self.inputs
        cdf = self._cdf
        if self.approximate == "tanh":
            k = x.dtype.type(np.sqrt(2 / np.pi))
            c = x.dtype.type(0.044715)
            t = self._tanh
            return [gy * (cdf + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x))]
        pdf = np.exp(-0.5 * x * x) * x.dtype.type(1 / math.sqrt(2 * math.pi))
        return [gy * (cdf + x * pdf)]
