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

Options, as PyTorch's: ``bias=False`` leaves both biases out (the attributes are None); ``nonlinearity="relu"``
(RNN and RNNCell) uses ReLU instead of tanh; ``num_layers=L`` (RNN and LSTM) stacks L layers, layer k reading the
outputs of layer k - 1. Layer 0's parameters keep the names above, layer k ≥ 1 adds the suffix ``_l{k}``
(``weight_ih_l1``: PyTorch's names, less the ``_l0`` of the first layer). With L > 1 the initial and final states
are (L, N, H), one (N, H) state per layer, as PyTorch's; with L = 1 they stay (N, H).

Sequences are batch-first: x (N, T, D) -> outputs (N, T, H). Equations (PyTorch's ``nn.LSTM`` documentation; S.
Hochreiter & J. Schmidhuber, "Long Short-Term Memory", Neural Computation 9(8), 1997, with the forget gate of F. Gers,
J. Schmidhuber & F. Cummins, 2000)::

    RNN:   h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh)           (ReLU instead of tanh on request)
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
    ReLUOp,
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


def affine(x: Variable, weight: Variable, bias: Variable | None) -> Variable:
    """``x Wᵀ + b``: (N, D), (K, D), (K,) -> (N, K), as two explicit ops (one, ``x Wᵀ``, when bias is None)."""
    y = MatMulOp(transpose_b=True)(x, weight)
    return y if bias is None else AddOp()(y, bias)


def rnn_cell(x: Variable, h: Variable, weight_ih: Variable, weight_hh: Variable, bias_ih: Variable | None,
             bias_hh: Variable | None, nonlinearity: str = "tanh") -> Variable:
    """One step of the RNN: ``h_t = tanh(x_t W_ihᵀ + b_ih + h_(t-1) W_hhᵀ + b_hh)`` (ReLU for ``"relu"``).

    Shapes: x (N, D), h (N, H), weight_ih (H, D), weight_hh (H, H), biases (H,) or None -> h_t (N, H).
    """
    activation = ReLUOp() if nonlinearity == "relu" else TanhOp()
    return activation(AddOp()(affine(x, weight_ih, bias_ih), affine(h, weight_hh, bias_hh)))


def lstm_cell(x: Variable, h: Variable, c: Variable, weight_ih: Variable, weight_hh: Variable,
              bias_ih: Variable | None, bias_hh: Variable | None) -> LSTMState:
    """One step of the LSTM (equations in the module docstring). Returns the new state ``(h_t, c_t)``.

    Shapes: x (N, D), h and c (N, H), weight_ih (4H, D), weight_hh (4H, H), biases (4H,) or None -> two (N, H).
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
              bias: Variable | None) -> LSTMState:
    """One LSTM step as the ``LSTM`` module unrolls it: :func:`lstm_cell`'s equations in PyTorch's documented column
    form, ``W_ih x_t + b_ih + W_hh h_(t-1) + b_hh``, where each sequence of the batch is a column. Returns
    ``(h_t, c_t)``, each (H, N).

    Shapes: x (N, D), one time step of the batch-first input (used transposed); h and c (H, N), or both None for
    the zero state h_0 = c_0 = 0; weight_ih (4H, D), weight_hh (4H, H); bias (4H, N) or (4H, 1), the sum
    ``b_ih + b_hh`` as a column (repeated over the batch), or None for none -> h_t, c_t (H, N).

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
    if bias is not None:
        pre = AddOp()(pre, bias)
    gates = LSTMGatesOp(axis=0)(pre)  # (4H, N): rows σ(ĩ), σ(f̃), tanh(g̃), σ(õ)
    # c_t = f ⊙ c_(t-1) + i ⊙ g, then h_t = o ⊙ tanh(c_t): one node per equation, reading the gate blocks in place.
    c_next = LSTMCellStateOp(axis=0)(gates) if c is None else LSTMCellStateOp(axis=0)(gates, c)
    h_next = LSTMHiddenOp(axis=0)(gates, c_next)
    return h_next, c_next


class _Recurrent(Module):
    """The parameters every recurrent layer shares: ``weight_ih``, ``weight_hh``, ``bias_ih``, ``bias_hh`` (and the
    same with the suffix ``_l{k}`` for layer k ≥ 1), and the options (see the module docstring).

    Raises:
        ValueError: for a non-positive size or number of layers, an unknown nonlinearity, or an option the layer
            does not have (``nonlinearity`` other than tanh for an LSTM, ``num_layers`` > 1 for a cell).
    """

    n_gates = 1
    #: The options a subclass accepts beyond their defaults.
    _options: frozenset[str] = frozenset()

    def __init__(self, input_size: int, hidden_size: int, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32, *, bias: bool = True, nonlinearity: str = "tanh", num_layers: int = 1
                 ) -> None:
        super().__init__()
        name = type(self).__name__
        for what, n in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"{name}: {what} must be a positive integer, got {n!r}")
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"{name}: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        for option, value, default in (("nonlinearity", nonlinearity, "tanh"), ("num_layers", num_layers, 1)):
            if value != default and option not in self._options:
                raise ValueError(f"{name} has no option {option}={value!r}")
        self.input_size = int(input_size)
        self.hidden_size = int(hidden_size)
        self.bias = bool(bias)
        self.nonlinearity = nonlinearity
        self.num_layers = int(num_layers)
        gen = as_generator(rng)
        dtype = np.dtype(dtype)
        rows = self.n_gates * self.hidden_size
        bound = 1.0 / np.sqrt(self.hidden_size)

        def uniform(*shape: int) -> np.ndarray:
            return gen.uniform(-bound, bound, size=shape).astype(dtype)

        for k in range(self.num_layers):
            suffix = f"_l{k}" if k else ""
            inputs = self.input_size if k == 0 else self.hidden_size
            setattr(self, "weight_ih" + suffix, Parameter(uniform(rows, inputs), name="weight_ih" + suffix))
            setattr(self, "weight_hh" + suffix, Parameter(uniform(rows, self.hidden_size), name="weight_hh" + suffix))
            for b in ("bias_ih", "bias_hh"):
                setattr(self, b + suffix, Parameter(uniform(rows), name=b + suffix) if self.bias else None)

    def layer(self, k: int) -> tuple[Parameter, Parameter, Parameter | None, Parameter | None]:
        """Layer k's ``(weight_ih, weight_hh, bias_ih, bias_hh)`` (the biases None with ``bias=False``)."""
        suffix = f"_l{k}" if k else ""
        names = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
        w_ih, w_hh, b_ih, b_hh = (getattr(self, n + suffix) for n in names)
        return w_ih, w_hh, b_ih, b_hh

    @property
    def dtype(self) -> np.dtype[Any]:
        """The parameters' dtype (float32 unless built or loaded otherwise); zero initial states take it too."""
        return self.layer(0)[0].dtype

    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = {"input_size": self.input_size, "hidden_size": self.hidden_size,
                                  "dtype": self.dtype.name}
        if not self.bias:
            config["bias"] = False
        if self.nonlinearity != "tanh":
            config["nonlinearity"] = self.nonlinearity
        if self.num_layers != 1:
            config["num_layers"] = self.num_layers
        return config

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
        options = "".join(f", {k}={v!r}" for k, v in self.config().items()
                          if k in ("bias", "nonlinearity", "num_layers"))
        return f"{type(self).__name__}({self.input_size}, {self.hidden_size}{options})"

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

    def _initial(self, x: Variable, given: Any, what: str, layers: int = 1) -> Variable:
        """The given (N, H) state ((L, N, H) for ``layers`` = L > 1), checked against the batch, or zeros in the
        parameters' dtype."""
        shape = (x.shape[0], self.hidden_size) if layers == 1 else (layers, x.shape[0], self.hidden_size)
        if given is None:
            return Variable.from_numpy(np.zeros(shape, dtype=self.dtype), name=what)
        if not isinstance(given, Variable):
            raise TypeError(f"{self!r}: the initial {what} must be a Variable of shape {shape}, "
                            f"got {type(given).__name__}")
        if given.shape != shape:
            layered = f"num_layers {layers}, " if layers > 1 else ""
            raise self._fail(f"the initial {what} has shape {given.shape}, expected {shape} "
                             f"({layered}batch {x.shape[0]}, hidden_size {self.hidden_size}; input shape {x.shape})")
        return given

    def _lstm_state(self, x: Variable, state: Any, layers: int = 1) -> LSTMState:
        if state is None:
            return self._initial(x, None, "h", layers), self._initial(x, None, "c", layers)
        if not isinstance(state, tuple) or len(state) != 2:
            raise TypeError(f"{self!r}: the initial state must be a tuple (h, c), got {type(state).__name__}")
        return self._initial(x, state[0], "h", layers), self._initial(x, state[1], "c", layers)

    def _per_layer(self, state: Variable | None) -> list[Variable | None]:
        """An (L, N, H) state as L states (N, H); a single-layer state as itself; None as L Nones."""
        if state is None:
            return [None] * self.num_layers
        if self.num_layers == 1:
            return [state]
        return [SelectOp(k, axis=0)(state) for k in range(self.num_layers)]

    def _joined(self, states: list[Variable]) -> Variable:
        """The inverse of :meth:`_per_layer`: L final states (N, H) as one (L, N, H) (the state itself for L = 1)."""
        return states[0] if len(states) == 1 else StackOp(axis=0)(*states)


class RNNCell(_Recurrent):
    """One step of the RNN (:func:`rnn_cell`): ``cell(x, h)`` with x (N, D), h (N, H) or None (zeros) -> (N, H).

    Args:
        input_size, hidden_size: D and H, positive integers.
        rng: generator or int seed for the initial weights. dtype: parameter dtype (float32).
        bias: False leaves out ``bias_ih`` and ``bias_hh`` (both None). nonlinearity: "tanh" (default) or "relu".

    Raises:
        ValueError: for a non-positive size or an unknown nonlinearity. ShapeError: for an input or state of the
            wrong shape (names the module, the shapes and the calling line).
    """

    _options = frozenset({"nonlinearity"})

    def forward(self, x: Variable, h: Variable | None = None) -> Variable:  # type: ignore[override]
        self._check_input(x, sequence=False)
        return rnn_cell(x, self._initial(x, h, "h"), *self.layer(0), nonlinearity=self.nonlinearity)


class LSTMCell(_Recurrent):
    """One step of the LSTM (:func:`lstm_cell`): ``cell(x, (h, c))`` -> ``(h_t, c_t)``, each (N, H).

    x is (N, D); the state is a tuple of two (N, H) Variables, or None for zeros. Arguments (``bias`` but no
    ``nonlinearity``) and errors as :class:`RNNCell`; the parameters have 4H rows, the gate blocks i, f, g, o.
    """

    n_gates = 4

    def forward(self, x: Variable, state: LSTMState | None = None) -> LSTMState:  # type: ignore[override]
        self._check_input(x, sequence=False)
        h, c = self._lstm_state(x, state)
        return lstm_cell(x, h, c, *self.layer(0))


class RNN(_Recurrent):
    """An RNN unrolled over a batch-first sequence: ``rnn(x, h0)`` -> ``(outputs, h_T)``.

    Shapes: x (N, T, D) with T ≥ 1; h0 (N, H), or (L, N, H) with ``num_layers`` L > 1, or None (zeros); outputs
    (N, T, H) stacks the last layer's h_1 ... h_T; h_T has h0's shape (each layer's final state).
    Arguments as :class:`RNNCell`, plus ``num_layers``; errors too, and a sequence of length 0 raises ShapeError.
    """

    _options = frozenset({"nonlinearity", "num_layers"})

    def forward(self, x: Variable, h: Variable | None = None) -> tuple[Variable, Variable]:  # type: ignore[override]
        outputs, h_last = self._unroll(x, h)
        return StackOp(axis=1)(*outputs), h_last

    def _unroll(self, x: Variable, state: Any) -> tuple[list[Variable], Variable]:
        self._check_input(x, sequence=True)
        initial = self._per_layer(self._initial(x, state, "h", self.num_layers) if state is not None else None)
        finals: list[Variable] = []
        layer_input = x
        for k in range(self.num_layers):
            given = initial[k]
            h = given if given is not None else self._initial(x, None, "h")
            outputs = []
            for t in range(x.shape[1]):
                h = rnn_cell(SelectOp(t, axis=1)(layer_input), h, *self.layer(k), nonlinearity=self.nonlinearity)
                outputs.append(h)
            finals.append(h)
            if k + 1 < self.num_layers:
                layer_input = StackOp(axis=1)(*outputs)
        return outputs, self._joined(finals)


class LSTM(_Recurrent):
    """An LSTM unrolled over a batch-first sequence: ``lstm(x, (h0, c0))`` -> ``(outputs, (h_T, c_T))``.

    Shapes: x (N, T, D) with T ≥ 1; h0, c0 (N, H), or (L, N, H) with ``num_layers`` L > 1, or the state None
    (zeros); outputs (N, T, H) stacks the last layer's h_1 ... h_T; h_T and c_T have h0's shape. The parameters are
    PyTorch's ``nn.LSTM`` ones without the ``_l0`` suffix of the first layer. Each step is :func:`lstm_step` (the
    equations of :func:`lstm_cell` with each sequence a column, in fewer and larger operations). Arguments as
    :class:`LSTMCell`, plus ``num_layers``; errors as :class:`RNN`.
    """

    n_gates = 4
    _options = frozenset({"num_layers"})

    def forward(self, x: Variable, state: LSTMState | None = None  # type: ignore[override]
                ) -> tuple[Variable, LSTMState]:
        columns, final = self._unroll(x, state)
        return _batch_first(columns), final

    def _unroll(self, x: Variable, state: Any) -> tuple[list[Variable], LSTMState]:
        """Run :func:`lstm_step` over x's T steps, layer by layer; return the last layer's h_1 ... h_T, each (H, N),
        and the final ``(h_T, c_T)`` in the layout of the initial state."""
        self._check_input(x, sequence=True)
        given = self._lstm_state(x, state, self.num_layers) if state is not None else (None, None)
        initial_h, initial_c = self._per_layer(given[0]), self._per_layer(given[1])
        final_h, final_c = [], []
        layer_input = x
        for k in range(self.num_layers):
            columns, (h, c) = self._unroll_layer(k, layer_input, initial_h[k], initial_c[k])
            final_h.append(TransposeOp()(h))
            final_c.append(TransposeOp()(c))
            if k + 1 < self.num_layers:
                layer_input = _batch_first(columns)
        return columns, (self._joined(final_h), self._joined(final_c))

    def _unroll_layer(self, k: int, x: Variable, h0: Variable | None, c0: Variable | None
                      ) -> tuple[list[Variable], LSTMState]:
        """Layer k over the sequence x (N, T, D_k) from (h0, c0), each (N, H) or both None for zeros; return
        h_1 ... h_T and the final (h_T, c_T), each (H, N)."""
        # None: the zero state, which lstm_step handles by leaving out the terms that would multiply zeros.
        h: Variable | None = None if h0 is None else TransposeOp()(h0)  # (N, H) -> columns (H, N)
        c: Variable | None = None if c0 is None else TransposeOp()(c0)
        weight_ih, weight_hh, bias_ih, bias_hh = self.layer(k)
        bias = None
        if bias_ih is not None and bias_hh is not None:
            # Once per sequence: every step uses the sum only, as a column repeated over the batch. Broadcasting it
            # here, once (a view), makes each step's add a plain (4H, N) + (4H, N) and sends each step's gradient
            # back unreduced: NumPy adds a (4H, 1) column to a (4H, N) array, and sums one back, about twice as
            # slowly.
            rows = self.n_gates * self.hidden_size
            bias = BroadcastToOp((rows, x.shape[0]))(ReshapeOp((rows, 1))(AddOp()(bias_ih, bias_hh)))
        columns = []
        for t in range(x.shape[1]):
            h_t, c_t = lstm_step(SelectOp(t, axis=1)(x), h, c, weight_ih, weight_hh, bias)
            columns.append(h_t)
            h, c = h_t, c_t
        return columns, (h_t, c_t)  # T ≥ 1 (checked), so the loop ran


def _batch_first(columns: list[Variable]) -> Variable:
    """The hidden states h_1 ... h_T, each a column block (H, N), as one batch-first (N, T, H) sequence."""
    return TransposeOp((2, 1, 0))(StackOp(axis=1)(*columns))
