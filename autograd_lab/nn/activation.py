"""Activation layers: thin Modules around the elementwise ops, so a model can list them as layers."""

from __future__ import annotations

from autograd_lab.nn.module import Module
from autograd_lab.ops import LeakyReLUOp, ReLUOp, SigmoidOp, TanhOp
from autograd_lab.variable import Variable


class ReLU(Module):
    """max(x, 0), elementwise (:class:`~autograd_lab.ops.ReLUOp`)."""

    def forward(self, x: Variable) -> Variable:
        return ReLUOp()(x)

    def __repr__(self) -> str:
        return "ReLU()"


class Sigmoid(Module):
    """1 / (1 + exp(-x)), elementwise (:class:`~autograd_lab.ops.SigmoidOp`)."""

    def forward(self, x: Variable) -> Variable:
        return SigmoidOp()(x)

    def __repr__(self) -> str:
        return "Sigmoid()"


class Tanh(Module):
    """tanh(x), elementwise (:class:`~autograd_lab.ops.TanhOp`)."""

    def forward(self, x: Variable) -> Variable:
        return TanhOp()(x)

    def __repr__(self) -> str:
        return "Tanh()"


class LeakyReLU(Module):
    """x for x > 0, ``slope``·x otherwise (:class:`~autograd_lab.ops.LeakyReLUOp`)."""

    def __init__(self, slope: float = 0.01) -> None:
        super().__init__()
        self.slope = float(slope)

    def forward(self, x: Variable) -> Variable:
        return LeakyReLUOp(self.slope)(x)

    def __repr__(self) -> str:
        return f"LeakyReLU(slope={self.slope})"


ACTIVATIONS: dict[str, type[Module]] = {"relu": ReLU, "sigmoid": Sigmoid, "tanh": Tanh, "leaky_relu": LeakyReLU}
