"""Conv2d: a bank of learned filters, ``Conv2DOp`` plus a per-channel bias."""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.nn.init import as_generator, get_init, init_bias
from autograd_lab.nn.module import Module
from autograd_lab.ops import AddOp, Conv2DOp, ReshapeOp
from autograd_lab.ops.conv import pair
from autograd_lab.variable import Parameter, Variable


class Conv2d(Module):
    """``y = conv(x, W) + b``: ``AddOp()(Conv2DOp(stride, padding)(x, W), ReshapeOp((C_out, 1, 1))(b))``.

    Shapes (NCHW): x (N, in_channels, H, W) -> y (N, out_channels, H_out, W_out), H_out = ⌊(H + 2·padding - kH) /
    stride⌋ + 1. ``weight`` is (out_channels, in_channels, kH, kW) (PyTorch's layout), ``bias`` (out_channels,)
    starting at zero (drawn like the weights with ``init="fan_in_uniform"``); the bias is reshaped to (C_out, 1, 1) so
    that it broadcasts over the pixels.

    Initialisation: ``init`` with fan_in = in_channels·kH·kW, the number of inputs each output sums (He by default,
    see :mod:`autograd_lab.nn.init`).

    Args:
        in_channels, out_channels: positive integers.
        kernel_size: an int or (kH, kW).
        stride, padding: as :class:`~autograd_lab.ops.Conv2DOp`.
        bias: add a learned per-channel bias (False when a batch norm follows, whose shift does the same job).
        init, rng, dtype: as :class:`~autograd_lab.nn.Linear`.

    Raises:
        ValueError: for non-positive sizes or an unknown init. TypeError: for a malformed kernel size, stride or
        padding. ShapeError (at call time): a wrong channel count, a kernel larger than the padded input, stride 0.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0, bias: bool = True,
                 init: str = "he", rng: np.random.Generator | int | None = None, dtype: Any = np.float32) -> None:
        super().__init__()
        for name, n in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"Conv2d: {name} must be a positive integer, got {n!r}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = pair(kernel_size, "Conv2d kernel_size")
        if min(self.kernel_size) < 1:
            raise ValueError(f"Conv2d: kernel_size must be at least 1, got {self.kernel_size}")
        self.stride = pair(stride, "Conv2d stride")
        self.padding = pair(padding, "Conv2d padding")
        self.init = init
        dtype = np.dtype(dtype)
        kh, kw = self.kernel_size
        fan_in = self.in_channels * kh * kw
        gen = as_generator(rng)
        w = get_init(init)(fan_in, self.out_channels, gen, dtype)
        self.weight = Parameter(w.reshape(self.out_channels, self.in_channels, kh, kw), name="weight")
        self.bias = (Parameter(init_bias(init, fan_in, self.out_channels, gen, dtype), name="bias") if bias
                     else None)

    def forward(self, x: Variable) -> Variable:
        """(N, in_channels, H, W) -> (N, out_channels, H_out, W_out)."""
        y = Conv2DOp(self.stride, self.padding)(x, self.weight)
        if self.bias is None:
            return y
        return AddOp()(y, ReshapeOp((self.out_channels, 1, 1))(self.bias))

    def config(self) -> dict[str, Any]:
        return {"in_channels": self.in_channels, "out_channels": self.out_channels,
                "kernel_size": list(self.kernel_size), "stride": list(self.stride), "padding": list(self.padding),
                "bias": self.bias is not None, "init": self.init, "dtype": self.weight.dtype.name}

    def __repr__(self) -> str:
        return (f"Conv2d({self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, bias={self.bias is not None})")
