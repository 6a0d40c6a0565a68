"""MLP: a multilayer perceptron, the model the course trains on MNIST."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from autograd_lab.nn.activation import ACTIVATIONS
from autograd_lab.nn.init import as_generator, get_init
from autograd_lab.nn.linear import Linear
from autograd_lab.nn.module import Module
from autograd_lab.nn.regularization import Dropout, LayerNorm
from autograd_lab.variable import Variable

#: The initialisation suited to each activation when none is given (see :mod:`autograd_lab.nn.init`).
DEFAULT_INIT = {"relu": "he", "leaky_relu": "he", "sigmoid": "xavier", "tanh": "xavier"}


class MLP(Module):
    """Fully connected layers with an activation between them: ``MLP([784, 128, 10])`` is 784 -> 128 -> ReLU -> 10.

    Each hidden block is ``Linear -> [LayerNorm] -> activation -> [Dropout]``; the last Linear outputs logits (no
    activation: the loss applies softmax). ``self.layers`` lists the blocks' modules in order, so a model can be
    walked layer by layer (the C exporter does). Parameters are named ``layers.<i>.weight`` / ``layers.<i>.bias``.

    Args:
        sizes: widths from input to output, at least two, e.g. ``[784, 128, 10]``.
        activation: ``"relu"``, ``"leaky_relu"``, ``"sigmoid"`` or ``"tanh"``.
        dropout: drop probability after each hidden activation (0 = no Dropout layers).
        layer_norm: put a LayerNorm after each hidden Linear.
        init: weight initialisation (``"he"``, ``"xavier"``, ``"normal"``); default: He for the ReLU family,
            Xavier for sigmoid and tanh.
        rng: generator or int seed for the initial weights and the dropout masks; None is not reproducible.
        dtype: parameter dtype (float32).

    Shapes: x (N, sizes[0]) -> logits (N, sizes[-1]).

    Raises:
        ValueError: for fewer than two sizes, a non-positive size, an unknown activation or init, or a dropout
            probability outside [0, 1).
    """

    def __init__(self, sizes: list[int] | tuple[int, ...], activation: str = "relu", dropout: float = 0.0,
                 layer_norm: bool = False, init: str | None = None, rng: np.random.Generator | int | None = None,
                 dtype: Any = np.float32) -> None:
        super().__init__()
        sizes = [int(n) for n in sizes]
        if len(sizes) < 2 or min(sizes) < 1:
            raise ValueError(f"MLP: sizes must list at least two positive widths (input ... output), got {sizes}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"MLP: unknown activation {activation!r}; choose one of {sorted(ACTIVATIONS)}")
        init = init if init is not None else DEFAULT_INIT[activation]
        get_init(init)
        if not 0 <= dropout < 1:
            raise ValueError(f"MLP: dropout is a drop probability in [0, 1), got {dropout}")
        self.sizes = sizes
        self.activation = activation
        self.dropout = float(dropout)
        self.layer_norm = bool(layer_norm)
        self.init = init
        self.dtype = np.dtype(dtype)
        gen = as_generator(rng)
        layers: list[Module] = []
        for i, (n_in, n_out) in enumerate(itertools.pairwise(sizes)):
            layers.append(Linear(n_in, n_out, init=init, rng=gen, dtype=self.dtype))
            if i == len(sizes) - 2:
                break
            if self.layer_norm:
                layers.append(LayerNorm(n_out, dtype=self.dtype))
            layers.append(ACTIVATIONS[activation]())
            if self.dropout > 0:
                layers.append(Dropout(self.dropout, rng=gen))
        self.layers = layers
        for name, p in self.named_parameters():
            p.name = name

    def forward(self, x: Variable) -> Variable:
        """(N, sizes[0]) -> logits (N, sizes[-1])."""
        for layer in self.layers:
            x = layer(x)
        return x

    def config(self) -> dict[str, Any]:
        return {"sizes": self.sizes, "activation": self.activation, "dropout": self.dropout,
                "layer_norm": self.layer_norm, "init": self.init, "dtype": self.dtype.name}

    def __repr__(self) -> str:
        return "MLP(\n" + "".join(f"  ({i}) {layer!r}\n" for i, layer in enumerate(self.layers)) + ")"
