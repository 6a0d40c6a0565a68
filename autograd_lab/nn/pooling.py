"""Pooling layers and Flatten: Modules around MaxPool2DOp, AvgPool2DOp and ReshapeOp."""

from __future__ import annotations

import numpy as np

from autograd_lab.nn.module import Module
from autograd_lab.ops import AvgPool2DOp, MaxPool2DOp, ReshapeOp
from autograd_lab.ops.conv import pair
from autograd_lab.variable import Variable


class MaxPool2d(Module):
    """Largest value of each window, (N, C, H, W) -> (N, C, H_out, W_out) (:class:`~autograd_lab.ops.MaxPool2DOp`:
    options, ties, NaN, shapes and errors are documented there). ``stride`` defaults to ``kernel_size``.

    With ``return_indices=True`` a call returns ``(output, indices)``, the indices a plain int64 array (PyTorch's:
    the position ``row·W + column`` of each maximum in its input plane).
    """

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1, ceil_mode: bool = False,
                 return_indices: bool = False) -> None:
        super().__init__()
        self.kernel_size = pair(kernel_size, "MaxPool2d kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, "MaxPool2d stride")
        self.padding = pair(padding, "MaxPool2d padding")
        self.dilation = pair(dilation, "MaxPool2d dilation")
        self.ceil_mode = bool(ceil_mode)
        self.return_indices = bool(return_indices)

    def forward(self, x: Variable) -> Variable | tuple[Variable, np.ndarray]:  # type: ignore[override]
        op = MaxPool2DOp(self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                         self.return_indices)
        y = op(x)
        return (y, op.indices) if self.return_indices else y

    def __repr__(self) -> str:
        return f"MaxPool2d(kernel_size={self.kernel_size}, stride={self.stride}{_options(self)})"


class AvgPool2d(Module):
    """Mean of each window, (N, C, H, W) -> (N, C, H_out, W_out) (:class:`~autograd_lab.ops.AvgPool2DOp`: options
    and divisors are documented there). ``stride`` defaults to ``kernel_size``."""

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = pair(kernel_size, "AvgPool2d kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, "AvgPool2d stride")
        self.padding = pair(padding, "AvgPool2d padding")
        self.ceil_mode = bool(ceil_mode)
        self.count_include_pad = bool(count_include_pad)

    def forward(self, x: Variable) -> Variable:
        return AvgPool2DOp(self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)(x)

    def __repr__(self) -> str:
        return f"AvgPool2d(kernel_size={self.kernel_size}, stride={self.stride}{_options(self)})"


def _options(layer: Module) -> str:
    """The options that differ from their defaults, as ``, name=value`` for a repr."""
    defaults = {"padding": (0, 0), "dilation": (1, 1), "ceil_mode": False, "return_indices": False,
                "count_include_pad": True}
    return "".join(f", {k}={getattr(layer, k)!r}" for k, v in defaults.items()
                   if hasattr(layer, k) and getattr(layer, k) != v)


class Flatten(Module):
    """(N, d1, d2, ...) -> (N, d1·d2·...): keep the batch axis, join the rest in C order (``ReshapeOp``)."""

    def forward(self, x: Variable) -> Variable:
        return ReshapeOp((x.shape[0], -1))(x)

    def __repr__(self) -> str:
        return "Flatten()"
