"""Dropout and layer normalisation as layers (Modules around :class:`DropoutOp` and :class:`LayerNormOp`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.nn.init import as_generator
from autograd_lab.nn.module import Module
from autograd_lab.ops import DropoutOp, LayerNormOp
from autograd_lab.variable import Parameter, Variable


class Dropout(Module):
    """Inverted dropout with drop probability ``p`` in training mode; the identity in evaluation mode.

    Args:
        p: probability of zeroing an element, 0 ≤ p < 1.
        rng: generator or seed for the masks (seed it for reproducible training).

    Raises:
        ValueError: for p outside [0, 1).
    """

    def __init__(self, p: float, rng: np.random.Generator | int | None = None) -> None:
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p is the probability of dropping and must be in [0, 1), got {p}")
        self.p = float(p)
        self.rng = as_generator(rng)

    def forward(self, x: Variable) -> Variable:
        return DropoutOp(self.p, rng=self.rng)(x)

    def __repr__(self) -> str:
        return f"Dropout(p={self.p})"


class LayerNorm(Module):
    """Normalise each row over its ``features`` values, then scale by ``gamma`` and shift by ``beta`` (Ba et al. 2016).

    Shapes: x (N, features) -> (N, features); gamma starts at ones, beta at zeros, both (features,).
    """

    def __init__(self, features: int, eps: float = 1e-5, dtype: Any = np.float32) -> None:
        super().__init__()
        self.features = int(features)
        self.eps = float(eps)
        self.gamma = Parameter(np.ones(self.features, dtype=dtype), name="gamma")
        self.beta = Parameter(np.zeros(self.features, dtype=dtype), name="beta")

    def forward(self, x: Variable) -> Variable:
        return LayerNormOp(self.eps)(x, self.gamma, self.beta)

    def __repr__(self) -> str:
        return f"LayerNorm({self.features}, eps={self.eps})"
