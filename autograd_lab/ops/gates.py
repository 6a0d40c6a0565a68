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


class _GateBlocks(Operator):
    """Shared by the two state updates below: the gate blocks of an activated (4H, N) or (N, 4H) gate array."""

    cached = ("_shape", "_indices")

    def __init__(self, axis: int = 0) -> None:
        self.axis = int(axis)

    def _split(self, gates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The views i, f, g, o of ``gates`` (no copies)."""
        if not -gates.ndim <= self.axis < gates.ndim or gates.shape[self.axis] % 4:
            raise ShapeError(f"{type(self).__name__}: axis {self.axis} must hold four gate blocks (i, f, g, o) of "
                             f"equal length, got gates of shape {gates.shape}")
        if getattr(self, "_shape", None) != gates.shape:  # the four indices, made once per shape
            axis = self.axis % gates.ndim
            n = gates.shape[axis] // 4
            lead = (slice(None),) * axis  # basic slicing: np.split does the same in Python at several times the cost
            self._shape = gates.shape
            self._indices = tuple((*lead, slice(k * n, (k + 1) * n)) for k in range(4))
        i, f, g, o = (gates[index] for index in self._indices)
        return i, f, g, o

    def _check_state(self, block: np.ndarray, gates: np.ndarray, state: np.ndarray, what: str) -> None:
        expected = block.shape
        if state.shape != expected:
            raise ShapeError(f"{type(self).__name__}: {what} has shape {state.shape}; gates of shape {gates.shape} "
                             f"need {expected} (one gate block)")

    def _gates_grad(self, gates: np.ndarray, blocks: dict[int, np.ndarray]) -> np.ndarray:
        """A gradient shaped like ``gates``: ``blocks[k]`` in gate block k (0 = i ... 3 = o), zeros elsewhere."""
        grad = np.zeros(gates.shape, gates.dtype)
        parts = self._split(grad)  # views into grad
        for k, block in blocks.items():
            parts[k][...] = block
        return grad


class LSTMCellStateOp(_GateBlocks):
    """``c_t = f ⊙ c_(t-1) + i ⊙ g``: the LSTM's cell-state update from the activated gates (one equation, one node).

    Shapes: gates (4H, N) for ``axis=0`` (the columns layout of the LSTM module; (N, 4H) for ``axis=-1``), blocks
    i, f, g, o as :class:`LSTMGatesOp` returns them; c_prev (H, N) (one block's shape), or left out for the zero
    state c_0 = 0, when the update is ``i ⊙ g`` -> c_t (H, N), the gates' dtype. Backward (product rule, block by
    block): dgates = [gy ⊙ g, gy ⊙ c_prev, gy ⊙ i, 0], dc_prev = gy ⊙ f.

    Why one op: written with four SliceOp, two MulOp and an AddOp, each step has seven nodes whose slices each hand
    back a full (4H, N) zero array; ``benchmarks/bench_rnn.py`` measures the difference. The teaching version,
    :func:`autograd_lab.nn.recurrent.lstm_cell`, keeps the separate ops.

    Raises:
        ShapeError: if the gate axis does not hold four equal blocks, or c_prev is not one block's shape.
    """

    def forward(self, gates: np.ndarray, c_prev: np.ndarray | None = None) -> np.ndarray:
        i, f, g, _ = self._split(gates)
        written = i * g
        if c_prev is None:
            return written
        self._check_state(f, gates, c_prev, "c_prev")
        return f * c_prev + written

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        gates = self.inputs[0]
        i, f, g, _ = self._split(gates)
        if len(self.inputs) == 1:
            return [self._gates_grad(gates, {0: gy * g, 2: gy * i})]
        c_prev = self.inputs[1]
        ggates = self._gates_grad(gates, {0: gy * g, 1: gy * c_prev, 2: gy * i}) if self.needs_grad(0) else None
        return [ggates, gy * f if self.needs_grad(1) else None]


class LSTMHiddenOp(_GateBlocks):
    """``h_t = o ⊙ tanh(c_t)``: the LSTM's output from the activated gates and the new cell state (one node).

    Shapes: gates (4H, N) for ``axis=0`` ((N, 4H) for ``axis=-1``), blocks i, f, g, o; c (H, N), one block's shape
    -> h_t (H, N). Backward: dgates = [0, 0, 0, gy ⊙ tanh(c)], dc = gy ⊙ o ⊙ (1 - tanh²(c)); tanh(c) is computed
    again in backward rather than saved (it is cheap, and nothing outlives the graph).

    Raises:
        ShapeError: if the gate axis does not hold four equal blocks, or c is not one block's shape.
    """

    def forward(self, gates: np.ndarray, c: np.ndarray) -> np.ndarray:
        o = self._split(gates)[3]
        self._check_state(o, gates, c, "c")
        return o * np.tanh(c)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        gates, c = self.inputs
        o = self._split(gates)[3]
        t = np.tanh(c)
        ggates = self._gates_grad(gates, {3: gy * t}) if self.needs_grad(0) else None
        gc = None
        if self.needs_grad(1):
            gc = 1 - t * t
            gc *= o
            gc *= gy
        return [ggates, gc]
