"""2-D max and average pooling in NCHW layout.

Both loop over the kH·kW offsets of the window (never over pixels): offset (i, j) of every window of the batch is
one strided slice of the input, ``x[:, :, i::sh, j::sw]`` cut to the output size. Overlapping windows (stride below
the kernel size) are allowed; their gradients add up where the windows share inputs.

Windows must tile the input exactly: (H - kH) must be a multiple of the stride (and likewise for W). Frameworks
silently drop the leftover rows and columns instead, which leaves those pixels without a gradient; here that is a
``ShapeError`` telling you to crop or pad first. There is no padding option.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops.conv import check_window, pair


def _window_slices(kernel: tuple[int, int], stride: tuple[int, int], out: tuple[int, int]
                   ) -> list[tuple[slice, slice]]:
    """For each kernel offset (i, j) in C order, the (row, column) slices that pick that offset of every window."""
    (kh, kw), (sh, sw), (ho, wo) = kernel, stride, out
    return [(slice(i, i + sh * (ho - 1) + 1, sh), slice(j, j + sw * (wo - 1) + 1, sw))
            for i in range(kh) for j in range(kw)]


class _Pool2D(Operator):
    """Shared configuration and checks of the pooling ops."""

    saved = ("_slices",)

    _slices: list[tuple[slice, slice]]

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None) -> None:
        name = type(self).__name__
        self.kernel_size = pair(kernel_size, f"{name} kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, f"{name} stride")

    def _prepare(self, x: np.ndarray) -> tuple[int, int]:
        name = type(self).__name__
        if x.ndim != 4:
            raise ValueError(f"{name}: x must be 4-D (N, C, H, W), got {x.ndim}-D")
        out = check_window(name, x.shape, self.kernel_size, self.stride, exact=True)
        self._slices = _window_slices(self.kernel_size, self.stride, out)
        return out


class MaxPool2DOp(_Pool2D):
    """The largest value of each kH x kW window: ``MaxPool2DOp(kernel_size, stride=None)(x)``.

    Shapes: x (N, C, H, W) -> (N, C, H_out, W_out), H_out = (H - kH) / stride + 1 (stride defaults to the kernel
    size: non-overlapping windows). dtype kept.

    Gradient: each output's gradient goes to the input that was the window's maximum (Goodfellow, Bengio &
    Courville, *Deep Learning*, §9.3). **Ties:** when several inputs of a window share the maximum, exactly one gets
    the whole gradient: the first in row-major order within the window (smallest row, then smallest column). That is
    the rule of PyTorch's CPU ``max_pool2d``, so the two agree even at ties. (The maximum is not differentiable at a
    tie; any convex combination is a subgradient. Note this differs from :class:`~autograd_lab.ops.MaxOp`, which
    splits ties evenly.)

    Args:
        kernel_size: window size, an int or (kH, kW), each ≥ 1.
        stride: step between windows, an int or (sh, sw), each ≥ 1; default ``kernel_size``.

    Raises:
        TypeError: for a kernel size or stride that is not an integer or a pair of integers.
        ShapeError: naming the op, the shape and the calling line, for x not 4-D, a window larger than the input, a
            stride below 1, or windows that do not tile the input exactly (see the module docstring).
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        self._prepare(x)
        rows, cols = self._slices[0]
        best = x[:, :, rows, cols].copy()
        for rows, cols in self._slices[1:]:
            np.maximum(best, x[:, :, rows, cols], out=best)
        return best

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        # The winner of each window is found again here rather than recorded in forward (a masked write per offset
        # costs more than these boolean passes): scanning the offsets in row-major order, an input wins if it equals
        # the window's maximum and no earlier input of its window did.
        (x,) = self.inputs
        best = self.output
        kh, kw = self.kernel_size
        # Windows that tile the input without overlap cover every input exactly once: plain assignment, no zeroing.
        exact = self.stride == self.kernel_size and x.shape[2] % kh == 0 and x.shape[3] % kw == 0
        gx = np.empty_like(x) if exact else np.zeros_like(x)
        free = np.ones(best.shape, dtype=bool)  # windows whose winner is not found yet
        wins = np.empty(best.shape, dtype=bool)
        for rows, cols in self._slices:
            np.equal(x[:, :, rows, cols], best, out=wins)
            wins &= free
            free &= ~wins
            if exact:
                np.multiply(gy, wins, out=gx[:, :, rows, cols])
            else:
                gx[:, :, rows, cols] += gy * wins
        return [gx]


class AvgPool2DOp(_Pool2D):
    """The mean of each kH x kW window: ``AvgPool2DOp(kernel_size, stride=None)(x)``.

    Shapes: as :class:`MaxPool2DOp`. y[n, c, p, q] = (1 / (kH·kW)) Σ_{i, j} x[n, c, sh·p + i, sw·q + j]; the gradient
    spreads each output's gradient evenly, 1/(kH·kW) to every input of its window (there are no ties to break).

    Raises:
        TypeError, ShapeError: as :class:`MaxPool2DOp`.
    """

    def forward(self, x: np.ndarray) -> np.ndarray:
        self._prepare(x)
        rows, cols = self._slices[0]
        total = x[:, :, rows, cols].copy()
        for rows, cols in self._slices[1:]:
            np.add(total, x[:, :, rows, cols], out=total)
        total *= x.dtype.type(1 / len(self._slices))
        return total

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        (x,) = self.inputs
        gx = np.zeros_like(x)
        share = gy * gy.dtype.type(1 / len(self._slices))
        for rows, cols in self._slices:
            gx[:, :, rows, cols] += share
        return [gx]
