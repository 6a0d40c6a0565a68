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
    """``y = conv(x, W) + b``: ``AddOp()(Conv2DOp(stride, padding, dilation, groups)(x, W), ReshapeOp((C_out, 1,
    1))(b))`` (the convolution and its options are :class:`~autograd_lab.ops.Conv2DOp`'s).

    Shapes (NCHW): x (N, in_channels, H, W) -> y (N, out_channels, H_out, W_out), H_out = ⌊(H + 2·padding -
    dilation·(kH - 1) - 1) / stride⌋ + 1. ``weight`` is (out_channels, in_channels/groups, kH, kW) (PyTorch's
    layout), ``bias`` (out_channels,)
    starting at zero (drawn like the weights with ``init="fan_in_uniform"``); the bias is reshaped to (C_out, 1, 1) so
    that it broadcasts over the pixels.

    Initialisation: ``init`` with fan_in = (in_channels/groups)·kH·kW, the number of inputs each output sums (He by
    default, see :mod:`autograd_lab.nn.init`).

    Args:
        in_channels, out_channels: positive integers.
        kernel_size: an int or (kH, kW).
        stride, padding, dilation, groups: as :class:`~autograd_lab.ops.Conv2DOp` (``groups=in_channels`` with
            ``out_channels`` a multiple of it is a depthwise convolution).
        bias: add a learned per-channel bias (False when a batch norm follows, whose shift does the same job).
        init, rng, dtype: as :class:`~autograd_lab.nn.Linear`.

    Raises:
        ValueError: for non-positive sizes, channel counts that ``groups`` does not divide, an unknown init, or
        padding="same" with a stride other than 1. TypeError: for a malformed kernel size, stride, padding or
        dilation. ShapeError (at call time): a wrong channel count, a kernel larger than the padded input, stride 0.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int | tuple[int, int],
                 stride: int | tuple[int, int] = 1, padding: int | str | tuple[int, ...] = 0, bias: bool = True,
                 init: str = "he", rng: np.random.Generator | int | None = None, dtype: Any = np.float32,
                 dilation: int | tuple[int, int] = 1, groups: int = 1) -> None:
        super().__init__()
        for name, n in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
                raise ValueError(f"Conv2d: {name} must be a positive integer, got {n!r}")
        self.in_channels, self.out_channels = int(in_channels), int(out_channels)
        self.kernel_size = pair(kernel_size, "Conv2d kernel_size")
        if min(self.kernel_size) < 1:
            raise ValueError(f"Conv2d: kernel_size must be at least 1, got {self.kernel_size}")
        op = Conv2DOp(stride, padding, dilation, groups)  # checks the options now rather than at the first call
        self.stride, self.padding, self.dilation, self.groups = op.stride, op.padding, op.dilation, op.groups
        if self.in_channels % self.groups or self.out_channels % self.groups:
            raise ValueError(f"Conv2d: groups={self.groups} must divide in_channels ({self.in_channels}) and "
                             f"out_channels ({self.out_channels})")
        self.init = init
        dtype = np.dtype(dtype)
        kh, kw = self.kernel_size
        fan_in = self.in_channels // self.groups * kh * kw
        gen = as_generator(rng)
        w = get_init(init)(fan_in, self.out_channels, gen, dtype)
        self.weight = Parameter(w.reshape(self.out_channels, self.in_channels // self.groups, kh, kw), name="weight")
        self.bias = (Parameter(init_bias(init, fan_in, self.out_channels, gen, dtype), name="bias") if bias
                     else None)

    def forward(self, x: Variable) -> Variable:
        """(N, in_channels, H, W) -> (N, out_channels, H_out, W_out)."""
        y = Conv2DOp(self.stride, self.padding, self.dilation, self.groups)(x, self.weight)
        if self.bias is None:
            return y
        return AddOp()(y, ReshapeOp((self.out_channels, 1, 1))(self.bias))

    def config(self) -> dict[str, Any]:
        return {"in_channels": self.in_channels, "out_channels": self.out_channels,
                "kernel_size": list(self.kernel_size), "stride": list(self.stride),
                "padding": self.padding if isinstance(self.padding, str) else list(self.padding),
                "bias": self.bias is not None, "init": self.init, "dtype": self.weight.dtype.name,
                "dilation": list(self.dilation), "groups": self.groups}

    def __repr__(self) -> str:
        return (f"Conv2d({self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, bias={self.bias is not None}"
                + (f", dilation={self.dilation}" if self.dilation != (1, 1) else "")
                + (f", groups={self.groups}" if self.groups != 1 else "") + ")")
