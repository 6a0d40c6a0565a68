"""SequenceClassifier: read an image row by row with an RNN or LSTM and classify it from the last hidden state."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.errors import ShapeError
from autograd_lab.nn.init import as_generator
from autograd_lab.nn.linear import Linear
from autograd_lab.nn.module import Module
from autograd_lab.nn.recurrent import LSTM, RNN
from autograd_lab.ops import ReshapeOp
from autograd_lab.variable import Variable

CELLS: dict[str, type[RNN] | type[LSTM]] = {"rnn": RNN, "lstm": LSTM}


class SequenceClassifier(Module):
    """Sequential MNIST: flat images (N, steps·input_size) -> (N, steps, input_size) -> RNN/LSTM -> h_T -> logits.

    ``SequenceClassifier("lstm", 28, 64, 10)`` reads a 28x28 image as 28 time steps of one 28-pixel row each and
    maps the last hidden state h_T (N, 64) to 10 logits with a Linear layer (Xavier init, zero bias). The recurrent
    layer is ``self.recurrent`` (parameters ``recurrent.weight_ih`` ...), the output layer ``self.head``.

    Args:
        cell: ``"rnn"`` (tanh) or ``"lstm"``.
        input_size: features per step D (28: one image row). steps: time steps T (28 rows).
        hidden_size: H. n_classes: outputs.
        rng: generator or int seed for the initial weights. dtype: parameter dtype (float32).

    Raises:
        ValueError: for an unknown cell or a non-positive size. ShapeError: for an input that is not
            (N, steps·input_size).
    """

    def __init__(self, cell: str = "lstm", input_size: int = 28, hidden_size: int = 64, n_classes: int = 10,
                 steps: int = 28, rng: np.random.Generator | int | None = None, dtype: Any = np.float32) -> None:
        super().__init__()
        if cell not in CELLS:
            raise ValueError(f"SequenceClassifier: unknown cell {cell!r}; choose one of {sorted(CELLS)}")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"SequenceClassifier: steps must be a positive integer, got {steps!r}")
        gen = as_generator(rng)
        self.cell = cell
        self.steps = int(steps)
        self.recurrent = CELLS[cell](input_size, hidden_size, rng=gen, dtype=dtype)
        self.head = Linear(hidden_size, n_classes, init="xavier", rng=gen, dtype=dtype)

    @property
    def sizes(self) -> list[int]:
        """[input width, hidden size, classes], read like :attr:`MLP.sizes` (``evaluate`` checks data against it)."""
        return [self.steps * self.recurrent.input_size, self.recurrent.hidden_size, self.head.out_features]

    def forward(self, x: Variable) -> Variable:
        """(N, steps·input_size) -> logits (N, n_classes)."""
        width = self.steps * self.recurrent.input_size
        if x.ndim != 2 or x.shape[1] != width:
            raise ShapeError(f"{self!r}: expected flat inputs (N, {width}) = (N, steps {self.steps} x input_size "
                             f"{self.recurrent.input_size}), got shape {x.shape} "
                             f"(called at {user_callsite() or 'unknown'})")
        rows = ReshapeOp((x.shape[0], self.steps, self.recurrent.input_size))(x)
        state = self.recurrent.final_state(rows)  # h_T only: the (N, T, H) stack of all states is not needed
        h_last = state[0] if isinstance(state, tuple) else state
        return self.head(h_last)

    def config(self) -> dict[str, Any]:
        return {"cell": self.cell, "input_size": self.recurrent.input_size, "hidden_size": self.recurrent.hidden_size,
                "n_classes": self.head.out_features, "steps": self.steps, "dtype": self.recurrent.dtype.name}

    def __repr__(self) -> str:
        return (f"SequenceClassifier({self.cell!r}, {self.recurrent.input_size}, {self.recurrent.hidden_size}, "
                f"{self.head.out_features}, steps={self.steps})")
