"""LSTMGatesOp: the four gate activations of an LSTM step, σ σ tanh σ, in one elementwise op.

An LSTM step squashes its (N, 4H) pre-activation block by block: σ for the input, forget and output gates, tanh for
the candidate (PyTorch's ``nn.LSTM`` documentation; Hochreiter & Schmidhuber, 1997). Written with one SigmoidOp or
TanhOp per block, that is four small ops on strided (N, H) views; this op does it in one pass over the contiguous
block. It fuses nothing but the activations: the slices, products and sums of the cell stay separate ops, so the
graph still reads as the equations. ``benchmarks/bench_rnn.py`` measures what it saves on an LSTM epoch.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.errors import ShapeError
from autograd_lab.operator import Operator


class LSTMGatesOp(Operator):
    """``[ĩ f̃ g̃ õ] -> [σ(ĩ) σ(f̃) tanh(g̃) σ(õ)]``: the gate activations of an LSTM step, blocks in PyTorch's order.

    Shapes: (..., 4H) -> (..., 4H) for ``axis=-1``, same dtype (float32 stays float32; integers become float). Along
    ``axis`` lie the four blocks of H entries each, in the order i, f, g, o of ``weight_ih``'s rows: the columns of
    a batch-first (N, 4H) pre-activation, or (``axis=0``) the rows of a (4H, N) one whose columns are the sequences.
    Elementwise, so backward is ``gy ⊙ y'`` with σ' = y(1 - y) on blocks i, f, o and tanh' = 1 - y² on block g.

    σ(x) is computed as ``1 / (1 + exp(-x))``: exact to rounding wherever σ(x) is a normal float. For x below about
    -88 (float32; -709 in float64) ``exp(-x)`` overflows to inf and σ(x) is 0 instead of a subnormal number; that
    overflow is expected and raises no warning, even under ``np.errstate(all='raise')``.

    Args:
        axis: the axis that holds the four blocks (default -1, the last).

    Raises:
        ShapeError: if the input has no such axis, or its length is not a multiple of 4 (four gate blocks).
    """

    def __init__(self, axis: int = -1) -> None:
        self.axis = int(axis)

    def _candidate(self, shape: tuple[int, ...]) -> tuple[slice, ...]:
        """The index of the g block (the third) along the gate axis."""
        axis = self.axis % len(shape)
        n = shape[axis] // 4
        return (slice(None),) * axis + (slice(2 * n, 3 * n),)

    def forward(self, gates: np.ndarray) -> np.ndarray:
        if not -gates.ndim <= self.axis < gates.ndim or gates.shape[self.axis] % 4:
            raise ShapeError(f"LSTMGatesOp: axis {self.axis} must hold four gate blocks (i, f, g, o) of equal "
                             f"length, got input shape {gates.shape}")
        candidate = self._candidate(gates.shape)
        # σ of the whole block in four in-place passes, then the g block overwritten with tanh: one pass over
        # contiguous memory costs less than three over strided views, even with a quarter of it thrown away.
        y = np.negative(gates, dtype=np.result_type(gates.dtype, np.float32))
        with np.errstate(over="ignore", under="ignore"):
            np.exp(y, out=y)
            y += 1
            np.reciprocal(y, out=y)
            np.tanh(gates[candidate], out=y[candidate])
        return y

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        y = self.output
        candidate = self._candidate(y.shape)
        with np.errstate(under="ignore"):
            slope = 1 - y
            slope *= y                                   # σ' = y(1 - y)
            g = y[candidate]
            np.multiply(g, g, out=slope[candidate])
            np.subtract(1, slope[candidate], out=slope[candidate])  # tanh' = 1 - y²
            slope *= gy
        return [slope]
