"""Sequential: layers applied one after another."""

from __future__ import annotations

from autograd_lab.nn.module import Module
from autograd_lab.variable import Variable


class Sequential(Module):
    """``Sequential(Conv2d(1, 8, 3), ReLU(), ...)``: feeds each layer's output to the next, in order.

    ``self.layers`` lists the layers (parameters are named ``layers.<i>.weight`` ...). A Sequential of arbitrary
    layers has no ``config()``, so it is not saved directly; wrap it in a model class (see :class:`CNN`).

    Raises:
        TypeError: if a layer is not a Module.
    """

    def __init__(self, *layers: Module) -> None:
        super().__init__()
        for i, layer in enumerate(layers):
            if not isinstance(layer, Module):
                raise TypeError(f"Sequential: layer {i} must be a Module, got {type(layer).__name__}")
        self.layers = list(layers)

    def forward(self, x: Variable) -> Variable:
        for layer in self.layers:
            x = layer(x)
        return x

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, i: int) -> Module:
        return self.layers[i]

    def __repr__(self) -> str:
        return "Sequential(\n" + "".join(f"  ({i}) {layer!r}\n" for i, layer in enumerate(self.layers)) + ")"
