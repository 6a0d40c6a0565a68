"""Pooling layers and Flatten: Modules around MaxPool2DOp, AvgPool2DOp and ReshapeOp."""

from __future__ import annotations

from autograd_lab.nn.module import Module
from autograd_lab.ops import AvgPool2DOp, MaxPool2DOp, ReshapeOp
from autograd_lab.ops.conv import pair
from autograd_lab.variable import Variable


class MaxPool2d(Module):
    """Largest value of each window, (N, C, H, W) -> (N, C, H_out, W_out) (:class:`~autograd_lab.ops.MaxPool2DOp`:
    ties, shapes and errors are documented there). ``stride`` defaults to ``kernel_size``."""

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> None:
        super().__init__()
        self.kernel_size = pair(kernel_size, "MaxPool2d kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, "MaxPool2d stride")

    def forward(self, x: Variable) -> Variable:
        return MaxPool2DOp(self.kernel_size, self.stride)(x)

    def __repr__(self) -> str:
        return f"MaxPool2d(kernel_size={self.kernel_size}, stride={self.stride})"


class AvgPool2d(Module):
    """Mean of each window, (N, C, H, W) -> (N, C, H_out, W_out) (:class:`~autograd_lab.ops.AvgPool2DOp`).
    ``stride`` defaults to ``kernel_size``."""

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> None:
        super().__init__()
        self.kernel_size = pair(kernel_size, "AvgPool2d kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, "AvgPool2d stride")

    def forward(self, x: Variable) -> Variable:
        return AvgPool2DOp(self.kernel_size, self.stride)(x)

    def __repr__(self) -> str:
        return f"AvgPool2d(kernel_size={self.kernel_size}, stride={self.stride})"


class Flatten(Module):
    """(N, d1, d2, ...) -> (N, d1·d2·...): keep the batch axis, join the rest in C order (``ReshapeOp``)."""

    def forward(self, x: Variable) -> Variable:
        return ReshapeOp((x.shape[0], -1))(x)

    def __repr__(self) -> str:
        return "Flatten()"
