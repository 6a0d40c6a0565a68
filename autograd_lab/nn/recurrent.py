"""Recurrent layers: RNNCell and LSTMCell (one time step), RNN and LSTM (a whole sequence), built from the explicit ops.

A cell is a plain function of explicit operators, so its graph reads as the equations. A sequence module is a Python
``for`` loop over time that calls the cell once per step: every step adds new nodes to the graph, and
backpropagation through time is nothing but ``Engine.backward`` on the unrolled graph (iterative, so a 1,000-step
sequence is no deeper for Python than a 1-step one).

Parameters are named and laid out as in PyTorch's ``nn.RNNCell`` / ``nn.LSTMCell`` (and the single-layer ``nn.RNN`` /
``nn.LSTM`` without the ``_l0`` suffix): ``weight_ih`` (G·H, D), ``weight_hh`` (G·H, H), ``bias_ih`` (G·H,),
``bias_hh`` (G·H,), where G = 1 for the tanh RNN and G = 4 for the LSTM, whose gate blocks are stacked in the order
i, f, g, o. So a ``state_dict`` moves between the two libraries in both directions. All four start as
U(-1/√H, 1/√H), PyTorch's default.

Sequences are batch-first: x (N, T, D) -> outputs (N, T, H). Equations (PyTorch's ``nn.LSTM`` documentation; S.
Hochreiter & J. Schmidhuber, "Long Short-Term Memory", Neural Computation 9(8), 1997, with the forget gate of F. Gers,
J. Schmidhuber & F. Cummins, 2000)::

    RNN:   h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh)
    LSTM:  [i f g o] = x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh        (N, 4H), split into four (N, H) blocks
           i, f, o = σ(i), σ(f), σ(o);   g = tanh(g)
           c_t = f ⊙ c_(t-1) + i ⊙ g;    h_t = o ⊙ tanh(c_t)

The cells (:func:`rnn_cell`, :func:`lstm_cell`) spell these out operator by operator, as the course writes them.
The ``LSTM`` module unrolls :func:`lstm_step`, the same equations in PyTorch's column form ``W x_t + b`` (each
sequence a column, so every gate block is contiguous) with fewer and larger operations (the two biases added once
per sequence, the four gate activations in one op, no products with the zero initial state):
``benchmarks/bench_rnn.py`` measures the difference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.errors import ShapeError
from autograd_lab.modes import eval_mode
from autograd_lab.nn.init import as_generator
from autograd_lab.nn.module import Module
from autograd_lab.ops import (
    AddOp,
    BroadcastToOp,
    LSTMCellStateOp,
    LSTMGatesOp,
    LSTMHiddenOp,
    MatMulOp,
    MulOp,
    ReshapeOp,
    SelectOp,
    SigmoidOp,
    SliceOp,
    StackOp,
    TanhOp,
    TransposeOp,
)
from autograd_lab.variable import Parameter, Variable

#: (h, c): the state of an LSTM, two (N, H) Variables.
LSTMState = tuple[Variable, Variable]


def affine(x: Variable, weight: Variable, bias: Variable) -> Variable:
    """``x Wᵀ + b``: (N, D), (K, D), (K,) -> (N, K), as two explicit ops."""
    return AddOp()(MatMulOp(transpose_b=True)(x, weight), bias)


def rnn_cell(x: Variable, h: Variable, weight_ih: Variable, weight_hh: Variable, bias_ih: Variable,
             bias_hh: Variable) -> Variable:
    """One step of the tanh RNN: ``h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh)``.

    Shapes: x (N, D), h (N, H), weight_ih (H, D), weight_hh (H, H), biases (H,) -> h_t (N, H).
    """
    return TanhOp()(AddOp()(affine(x, weight_ih, bias_ih), affine(h, weight_hh, bias_hh)))


def lstm_cell(x: Variable, h: Variable, c: Variable, weight_ih: Variable, weight_hh: Variable, bias_ih: Variable,
              bias_hh: Variable) -> LSTMState:
    """One step of the LSTM (equations in the module docstring). Returns the new state ``(h_t, c_t)``.

    Shapes: x (N, D), h and c (N, H), weight_ih (4H, D), weight_hh (4H, H), biases (4H,) -> two (N, H).
    """
    n_hidden = h.shape[1]
    gates = AddOp()(affine(x, weight_ih, bias_ih), affine(h, weight_hh, bias_hh))  # (N, 4H): i, f, g, o

    def block(k: int) -> Variable:
        return SliceOp(k * n_hidden, (k + 1) * n_hidden, axis=1)(gates)

    i = SigmoidOp()(block(0))  # input gate: how much of the candidate to write
    f = SigmoidOp()(block(1))  # forget gate: how much of the old cell to keep
    g = TanhOp()(block(2))     # candidate cell values
    o = SigmoidOp()(block(3))  # output gate: how much of the cell to show
    c_next = AddOp()(MulOp()(f, c), MulOp()(i, g))
    h_next = MulOp()(o, TanhOp()(c_next))
    return h_next, c_next


def lstm_step(x: Variable, h: Variable | None, c: Variable | None, weight_ih: Variable, weight_hh: Variable,
              bias: Variable) -> LSTMState:
    """One LSTM step as the ``LSTM`` module unrolls it: :func:`lstm_cell`'s equations in PyTorch's documented column
    form, ``W_ih x_t + b_ih + W_hh h_(t-1) + b_hh``, where each sequence of the batch is a column. Returns
    ``(h_t, c_t)``, each (H, N).

    Shapes: x (N, D), one time step of the batch-first input (used transposed); h and c (H, N), or both None for
    the zero state h_0 = c_0 = 0; weight_ih (4H, D), weight_hh (4H, H); bias (4H, N) or (4H, 1), the sum
    ``b_ih + b_hh`` as a column (repeated over the batch) -> h_t, c_t (H, N).

    Where it differs from :func:`lstm_cell` (each measured on the LSTM(64) epoch of ``benchmarks/bench_rnn.py``):

    * the columns layout: the pre-activation is (4H, N), so the gate blocks i, f, g, o are contiguous runs of rows,
      and every op after the slicing works on contiguous (H, N) arrays; in the rows layout of :func:`lstm_cell` the
      blocks are strided (N, H) views of the (N, 4H) array, on which NumPy's elementwise loops run several times
      slower;
    * ``b_ih`` and ``b_hh`` only ever appear as their sum, so the caller adds them once per sequence, and each step
      adds one bias to its pre-activation instead of two;
    * the four gate activations are one :class:`~autograd_lab.ops.LSTMGatesOp` over the whole pre-activation
      instead of three SigmoidOp and a TanhOp on its blocks;
    * the two state equations are one node each, :class:`~autograd_lab.ops.LSTMCellStateOp` and
      :class:`~autograd_lab.ops.LSTMHiddenOp`, which read the gate blocks in place, instead of four SliceOp (each
      handing back a full (4H, N) zero array in backward), three MulOp, an AddOp and a TanhOp;
    * from the zero state the terms ``W_hh h_0`` and ``f ⊙ c_0`` are zero, so they are left out (no product of
      zeros, forward or backward).
    """
    pre = MatMulOp(transpose_b=True)(weight_ih, x)  # W_ih x_tᵀ: (4H, N)
    if h is not None:
        pre = AddOp()(pre, MatMulOp()(weight_hh, h))
    gates = LSTMGatesOp(axis=0)(AddOp()(pre, bias))  # (4H, N): rows σ(ĩ), σ(f̃), tanh(g̃), σ(õ)
    # c_t = f ⊙ c_(t-1) + i ⊙ g, then h_t = o ⊙ tanh(c_t): one node per equation, reading the gate blocks in place.
    c_next = LSTMCellStateOp(axis=0)(gates) if c is None else LSTMCellStateOp(axis=0)(gates, c)
    h_next = LSTMHiddenOp(axis=0)(gates, c_next)
    return h_next, c_next


class _Recurrent(Module):
    """The parameters every recurrent layer shares: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh``."""

    n_gates = 1

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        for what, n in (("input_size", input_size), ("hidden_size", hidden_size)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"{type(self).__name__}: {what} must be a positive integer, got {n!r}")
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        gen = as_generator(rng)
        dtype = np.dtype(dtype)
        rows = self.n_gates * self.hidden_size
        bound = 1.0 / np.sqrt(self.hidden_size)

        def uniform(*shape: int) -> np.ndarray:
            return gen.uniform(-bound, bound, size=shape).astype(dtype)

        self.weight_ih = Parameter(uniform(rows, self.input_size), name="weight_ih")
        self.weight_hh = Parameter(uniform(rows, self.hidden_size), name="weight_hh")
        self.bias_ih = Parameter(uniform(rows), name="bias_ih")
        self.bias_hh = Parameter(uniform(rows), name="bias_hh")

    @property
    def dtype(self) -> np.dtype[Any]:
        """The parameters' dtype (float32 unless built or loaded otherwise); zero initial states take it too."""
        return self.weight_ih.dtype

    def config(self) -> dict[str, Any]:
        return {"input_size": self.input_size, "hidden_size": self.hidden_size, "dtype": self.dtype.name}

    def forward(self, x: Variable, state: Any = None) -> Any:  # type: ignore[override]
        """One step (cells) or the whole sequence (RNN, LSTM) from ``x`` and an optional initial state."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def __call__(self, x: Variable, state: Any = None) -> Any:  # type: ignore[override]
        """Run :meth:`forward` with an optional initial state; in evaluation mode, inside ``eval_mode()``."""
        if self.training:
            return self.forward(x, state)
        with eval_mode():
            return self.forward(x, state)

    def final_state(self, x: Variable, state: Any = None) -> Any:
        """The state after the last step of the sequence x (N, T, D): ``h_T`` (RNN) or ``(h_T, c_T)`` (LSTM).

        The same graph as calling the module, less the final ``StackOp`` of all T states into the (N, T, H) outputs:
        a classifier that reads only the last state skips that copy. Errors as calling the module.
        """
        if self.training:
            return self._unroll(x, state)[1]
        with eval_mode():
            return self._unroll(x, state)[1]

    def _unroll(self, x: Variable, state: Any) -> tuple[list[Variable], Any]:
        """Check x and the state, run the steps; return the T hidden states h_1 ... h_T and the final state."""
        raise NotImplementedError(f"{type(self).__name__} is not a sequence module")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.input_size}, {self.hidden_size})"

    # -- input checks: each names the module, the shapes and the user's line ---------------------------------------
    def _fail(self, problem: str) -> ShapeError:
        return ShapeError(f"{self!r}: {problem} (called at {user_callsite() or 'unknown'})")

    def _check_input(self, x: Variable, sequence: bool) -> None:
        expected = "(N, T, input_size)" if sequence else "(N, input_size)"
        if not isinstance(x, Variable):
            raise TypeError(f"{self!r}: the input must be a Variable {expected}, got {type(x).__name__}")
        if x.ndim != (3 if sequence else 2):
            raise self._fail(f"expected an input of shape {expected}, got shape {x.shape}")
        if sequence and x.shape[1] == 0:
            raise self._fail(f"the sequence has length 0 (input shape {x.shape}); it needs at least one time step")
        if x.shape[-1] != self.input_size:
            raise self._fail(f"expected {self.input_size} input features (the last axis), got {x.shape[-1]} "
                             f"(input shape {x.shape})")

    def _initial(self, x: Variable, given: Any, what: str) -> Variable:
        """The given (N, H) state, checked against the batch, or zeros in the parameters' dtype."""
        shape = (x.shape[0], self.hidden_size)
        if given is None:
            return Variable.from_numpy(np.zeros(shape, dtype=self.dtype), name=what)
        if not isinstance(given, Variable):
            raise TypeError(f"{self!r}: the initial {what} must be a Variable of shape {shape}, "
                            f"got {type(given).__name__}")
        if given.shape != shape:
            raise self._fail(f"the initial {what} has shape {given.shape}, expected {shape} "
                             f"(batch {x.shape[0]}, hidden_size {self.hidden_size}; input shape {x.shape})")
        return given

    def _lstm_state(self, x: Variable, state: Any) -> LSTMState:
        if state is None:
            return self._initial(x, None, "h"), self._initial(x, None, "c")
        if not isinstance(state, tuple) or len(state) != 2:
            raise TypeError(f"{self!r}: the initial state must be a tuple (h, c), got {type(state).__name__}")
        return self._initial(x, state[0], "h"), self._initial(x, state[1], "c")


class RNNCell(_Recurrent):
    """One step of the tanh RNN (:func:`rnn_cell`): ``cell(x, h)`` with x (N, D), h (N, H) or None (zeros) -> (N, H).

    Args:
        input_size, hidden_size: D and H, positive integers.
        rng: generator or int seed for the initial weights. dtype: parameter dtype (float32).

    Raises:
        ValueError: for a non-positive size. ShapeError: for an input or state of the wrong shape (names the
            module, the shapes and the calling line).
    """

    def forward(self, x: Variable, h: Variable | None = None) -> Variable:  # type: ignore[override]
        self._check_input(x, sequence=False)
        return rnn_cell(x, self._initial(x, h, "h"), self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class LSTMCell(_Recurrent):
    """One step of the LSTM (:func:`lstm_cell`): ``cell(x, (h, c))`` -> ``(h_t, c_t)``, each (N, H).

    x is (N, D); the state is a tuple of two (N, H) Variables, or None for zeros. Arguments and errors as
    :class:`RNNCell`; the parameters have 4H rows, the gate blocks i, f, g, o.
    """

    n_gates = 4

    def forward(self, x: Variable, state: LSTMState | None = None) -> LSTMState:  # type: ignore[override]
        self._check_input(x, sequence=False)
        h, c = self._lstm_state(x, state)
        return lstm_cell(x, h, c, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)


class RNN(_Recurrent):
    """A tanh RNN unrolled over a batch-first sequence: ``rnn(x, h0)`` -> ``(outputs, h_T)``.

    Shapes: x (N, T, D) with T ≥ 1; h0 (N, H) or None (zeros); outputs (N, T, H) stacks h_1 ... h_T; h_T (N, H).
    Arguments and errors as :class:`RNNCell`; a sequence of length 0 raises ShapeError too.
    """

    def forward(self, x: Variable, h: Variable | None = None) -> tuple[Variable, Variable]:  # type: ignore[override]
        outputs, h_last = self._unroll(x, h)
        return StackOp(axis=1)(*outputs), h_last

    def _unroll(self, x: Variable, state: Any) -> tuple[list[Variable], Variable]:
        self._check_input(x, sequence=True)
        h = self._initial(x, state, "h")
        outputs = []
        for t in range(x.shape[1]):
            h = rnn_cell(SelectOp(t, axis=1)(x), h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
            outputs.append(h)
        return outputs, h


class LSTM(_Recurrent):
    """An LSTM unrolled over a batch-first sequence: ``lstm(x, (h0, c0))`` -> ``(outputs, (h_T, c_T))``.

    Shapes: x (N, T, D) with T ≥ 1; h0, c0 (N, H) or the state None (zeros); outputs (N, T, H) stacks h_1 ... h_T.
    The parameters are PyTorch's single-layer ``nn.LSTM`` ones without the ``_l0`` suffix. Each step is
    :func:`lstm_step` (the equations of :func:`lstm_cell` with each sequence a column, in fewer and larger
    operations). Errors as :class:`RNN`.
    """

    n_gates = 4

    def forward(self, x: Variable, state: LSTMState | None = None  # type: ignore[override]
                ) -> tuple[Variable, LSTMState]:
        columns, (h, c) = self._unroll(x, state)
        # (H, T, N) -> (N, T, H): the stacked columns h_t, read batch-first
        outputs = TransposeOp((2, 1, 0))(StackOp(axis=1)(*columns))
        return outputs, (TransposeOp()(h), TransposeOp()(c))

    def final_state(self, x: Variable, state: Any = None) -> LSTMState:
        """``(h_T, c_T)``, each (N, H), after the sequence x (N, T, D): the module's graph without the stack of all
        the states (see :meth:`_Recurrent.final_state`)."""
        if self.training:
            _, (h, c) = self._unroll(x, state)
        else:
            with eval_mode():
                _, (h, c) = self._unroll(x, state)
        return TransposeOp()(h), TransposeOp()(c)

    def _unroll(self, x: Variable, state: Any) -> tuple[list[Variable], LSTMState]:
        """Run :func:`lstm_step` over x's T steps; return h_1 ... h_T and the final (h_T, c_T), each (H, N)."""
        self._check_input(x, sequence=True)
        # None: the zero state, which lstm_step handles by leaving out the terms that would multiply zeros.
        h: Variable | None = None
        c: Variable | None = None
        if state is not None:
            h, c = (TransposeOp()(v) for v in self._lstm_state(x, state))  # (N, H) -> columns (H, N)
        # Once per sequence: every step uses the sum only, as a column repeated over the batch. Broadcasting it here,
        # once (a view), makes each step's add a plain (4H, N) + (4H, N) and sends each step's gradient back
        # unreduced: NumPy adds a (4H, 1) column to a (4H, N) array, and sums one back, about twice as slowly.
        rows = self.n_gates * self.hidden_size
        bias = BroadcastToOp((rows, x.shape[0]))(ReshapeOp((rows, 1))(AddOp()(self.bias_ih, self.bias_hh)))
        columns = []
        for t in range(x.shape[1]):
            h_t, c_t = lstm_step(SelectOp(t, axis=1)(x), h, c, self.weight_ih, self.weight_hh, bias)
            columns.append(h_t)
            h, c = h_t, c_t
        return columns, (h_t, c_t)  # T ≥ 1 (checked), so the loop ran
