"""Linear (fully connected) layer: y = x Wᵀ + b, built from the explicit ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.nn.init import as_generator, get_init, init_bias
from autograd_lab.nn.module import Module
from autograd_lab.ops import AddOp, MatMulOp
from autograd_lab.variable import Parameter, Variable


class Linear(Module):
    """``y = x Wᵀ + b``: ``AddOp()(MatMulOp(transpose_b=True)(x, W), b)``, so the graph shows both steps.

    Shapes: x (N, in_features) -> y (N, out_features). ``weight`` is (out_features, in_features), the layout of
    PyTorch's ``nn.Linear`` and of the C exporter (one contiguous row per output); ``bias`` is (out_features,) and
    starts at zero (drawn like the weights with ``init="fan_in_uniform"``).

    Args:
        in_features, out_features: sizes, positive integers.
        init: weight initialisation, ``"he"``, ``"xavier"``, ``"normal"`` or ``"fan_in_uniform"`` (PyTorch's; see
            :mod:`autograd_lab.nn.init`).
        rng: generator or int seed for the initial weights; None draws fresh (unreproducible) weights.
        dtype: parameter dtype, float32 by default (the course's and the exporter's).

    Raises:
        ValueError: for non-positive sizes or an unknown init.
    """

    def __init__(self, in_features: int, out_features: int, init: str = "he",
                 rng: np.random.Generator | int | None = None, dtype: Any = np.float32) -> None:
        super().__init__()
        for name, n in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"Linear: {name} must be a positive integer, got {n!r}")
        self.in_features = int(in_features)
        self.out_features = int(out_features)
        self.init = init
        dtype = np.dtype(dtype)
        gen = as_generator(rng)
        w = get_init(init)(self.in_features, self.out_features, gen, dtype)
        self.weight = Parameter(w, name="weight")
        self.bias = Parameter(init_bias(init, self.in_features, self.out_features, gen, dtype), name="bias")

    def forward(self, x: Variable) -> Variable:
        """(N, in_features) -> (N, out_features). A wrong width raises ShapeError naming MatMulOp and the shapes."""
        return AddOp()(MatMulOp(transpose_b=True)(x, self.weight), self.bias)

    def config(self) -> dict[str, Any]:
        return {"in_features": self.in_features, "out_features": self.out_features, "init": self.init,
                "dtype": self.weight.dtype.name}

    def __repr__(self) -> str:
        return f"Linear({self.in_features}, {self.out_features})"
