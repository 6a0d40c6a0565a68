"""LSTMGatesOp: the four gate activations of an LSTM step, σ σ tanh σ, in one elementwise op.

An LSTM step squashes its (N, 4H) pre-activation block by block: σ for the input, forget and output gates, tanh for
the candidate (PyTorch's ``nn.LSTM`` documentation; Hochreiter & Schmidhuber, 1997). Written with one SigmoidOp or
TanhOp per block, that is four small ops (on strided (N, H) views in a batch-first layout); this op is one node
for all four. It fuses nothing but the activations: the slices, products and sums of the cell stay separate ops, so the
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

    def _blocks(self, shape: tuple[int, ...], first: int, last: int) -> tuple[slice, ...]:
        """The index of gate blocks ``first`` to ``last`` (0 = i ... 3 = o) along the gate axis."""
        axis = self.axis % len(shape)
        n = shape[axis] // 4
        return (slice(None),) * axis + (slice(first * n, (last + 1) * n),)

    def forward(self, gates: np.ndarray) -> np.ndarray:
        if not -gates.ndim <= self.axis < gates.ndim or gates.shape[self.axis] % 4:
            raise ShapeError(f"LSTMGatesOp: axis {self.axis} must hold four gate blocks (i, f, g, o) of equal "
                             f"length, got input shape {gates.shape}")
        y = np.empty(gates.shape, np.result_type(gates.dtype, np.float32))
        with np.errstate(over="ignore", under="ignore"):
            # σ in four in-place passes over blocks i and f (adjacent, so one run) and block o, then tanh of g.
            for index in (self._blocks(gates.shape, 0, 1), self._blocks(gates.shape, 3, 3)):
                part = y[index]
                # Not np.negative: NumPy 2.4.6 gives wrong float32 values for a strided input written to a strided
                # out= when the block is one column wide (it reads the input as if contiguous).
                np.multiply(gates[index], -1, out=part)
                np.exp(part, out=part)
                part += 1
                np.reciprocal(part, out=part)
            candidate = self._blocks(gates.shape, 2, 2)
            np.tanh(gates[candidate], out=y[candidate])
        return y

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        y = self.output
        candidate = self._blocks(y.shape, 2, 2)
        with np.errstate(under="ignore"):
            slope = 1 - y
            slope *= y                                   # σ' = y(1 - y)
            g = y[candidate]
            np.multiply(g, g, out=slope[candidate])
            np.subtract(1, slope[candidate], out=slope[candidate])  # tanh' = 1 - y²
            slope *= gy
        return [slope]
