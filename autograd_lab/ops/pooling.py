"""2-D max and average pooling in NCHW layout, with PyTorch's options: padding, dilation, ceil mode.

Both loop over the kH·kW offsets of the window (never over pixels): offset (i, j) of every window of the batch is
one strided slice of the (padded) input, ``xp[:, :, i·dH::sH, j·dW::sW]`` cut to the output size. Overlapping windows
(stride below the kernel size) are allowed; their gradients add up where the windows share inputs.

Window geometry, per axis (PyTorch's ``pooling_output_shape``): with padding p on both sides, dilation d (the gap
between the window's taps) and stride s, a window spans d·(k - 1) + 1 inputs and

    out = ⌊(size + 2p - d·(k - 1) - 1) / s⌋ + 1,

or with ``ceil_mode`` the ceiling instead of the floor, less one if the last window would start in the right-hand
padding. Rows and columns that no window reaches are left out (and get a zero gradient), as in PyTorch; with
``ceil_mode`` a last, partial window covers them instead. Padding is at most half the kernel, so every window holds
at least one input.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from autograd_lab.operator import Operator
from autograd_lab.ops.conv import pair


def _output_length(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """How many windows fit along one axis (the formula of the module docstring)."""
    span = dilation * (kernel - 1) + 1
    room = size + 2 * padding - span
    if not ceil_mode:
        return room // stride + 1
    out = -(-room // stride) + 1
    if (out - 1) * stride >= size + padding:  # the last window would start in the right-hand padding
        out -= 1
    return out


class _Pool2D(Operator):
    """Shared configuration, checks and window geometry of the pooling ops.

    Attributes (plain values, as given or normalised to pairs, for drawings and exporters): ``kernel_size``,
    ``stride``, ``padding``, ``dilation`` (each (rows, columns)) and ``ceil_mode``.
    """

    saved: ClassVar[tuple[str, ...]] = ("_slices", "_crop", "_padded_hw", "_real")

    _slices: list[tuple[slice, slice]]
    _real: list[np.ndarray] | None
    _crop: tuple[slice, slice]
    _padded_hw: tuple[int, int]

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1,
                 ceil_mode: bool = False) -> None:
        name = type(self).__name__
        self.kernel_size = pair(kernel_size, f"{name} kernel_size")
        self.stride = self.kernel_size if stride is None else pair(stride, f"{name} stride")
        self.padding = pair(padding, f"{name} padding")
        self.dilation = pair(dilation, f"{name} dilation")
        self.ceil_mode = bool(ceil_mode)

    def _prepare(self, x: np.ndarray, fill: float) -> np.ndarray:
        """Check x and the options, find the window slices, and return x padded with ``fill`` (x itself if no
        padding is needed). Raises ValueError, which the operator reports as a ShapeError."""
        name = type(self).__name__
        if x.ndim != 4:
            raise ValueError(f"{name}: x must be 4-D (N, C, H, W), got {x.ndim}-D")
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = self.kernel_size, self.stride, self.padding, self.dilation
        for what, (a, b), low in (("kernel_size", self.kernel_size, 1), ("stride", self.stride, 1),
                                  ("dilation", self.dilation, 1), ("padding", self.padding, 0)):
            if min(a, b) < low:
                raise ValueError(f"{name}: {what} must be at least {low}, got {(a, b)}")
        if ph > kh // 2 or pw > kw // 2:
            raise ValueError(f"{name}: padding {self.padding} must be at most half the kernel {self.kernel_size}")
        h, w = x.shape[2:]
        ho = _output_length(h, kh, sh, ph, dh, self.ceil_mode)
        wo = _output_length(w, kw, sw, pw, dw, self.ceil_mode)
        if ho < 1 or wo < 1:
            raise ValueError(f"{name}: a {kh}x{kw} window with dilation {self.dilation} does not fit the input "
                             f"{h}x{w} with padding {self.padding}")
        self._slices = [(slice(i * dh, i * dh + sh * (ho - 1) + 1, sh), slice(j * dw, j * dw + sw * (wo - 1) + 1, sw))
                        for i in range(kh) for j in range(kw)]
        # Pad to the last tap of the last window: p on the left, p plus whatever ceil mode reaches on the right.
        bottom = max((ho - 1) * sh + dh * (kh - 1) + 1 - h - ph, 0)
        right = max((wo - 1) * sw + dw * (kw - 1) + 1 - w - pw, 0)
        self._crop = (slice(ph, ph + h), slice(pw, pw + w))
        self._padded_hw = (ph + h + bottom, pw + w + right)
        self._real = None
        if ph or pw or bottom or right:
            # For each offset, which windows it puts on a real input (not padding): (H_out, W_out) boolean arrays.
            rows = [(0 <= r) & (r < h) for r in (np.arange(ho) * sh + i * dh - ph for i in range(kh))]
            cols = [(0 <= c) & (c < w) for c in (np.arange(wo) * sw + j * dw - pw for j in range(kw))]
            self._real = [np.outer(r, c) for r in rows for c in cols]
        return self._pad(x, fill)

    def _pad(self, x: np.ndarray, fill: float) -> np.ndarray:
        """x padded with ``fill`` as :meth:`_prepare` found (x itself when no padding is needed)."""
        if self._real is None:
            return x
        xp = np.full((*x.shape[:2], *self._padded_hw), fill, dtype=x.dtype)
        xp[:, :, self._crop[0], self._crop[1]] = x
        return xp

    def _unpad(self, gxp: np.ndarray) -> np.ndarray:
        """The gradient of the padded input cropped back to the input (no copy when nothing was padded)."""
        if self._real is None:
            return gxp
        return np.ascontiguousarray(gxp[:, :, self._crop[0], self._crop[1]])


class MaxPool2DOp(_Pool2D):
    """The largest value of each window: ``MaxPool2DOp(kernel_size, stride=None, padding=0, dilation=1,
    ceil_mode=False, return_indices=False)(x)`` (PyTorch's ``max_pool2d``).

    Shapes: x (N, C, H, W) -> (N, C, H_out, W_out), H_out as in the module docstring (stride defaults to the kernel
    size: non-overlapping windows). dtype kept. Padding counts as -inf: it never wins.

    Gradient: each output's gradient goes to the input that was the window's maximum (Goodfellow, Bengio &
    Courville, *Deep Learning*, §9.3). Which one, when several qualify, is PyTorch's CPU rule: the window is scanned
    in row-major order, and an input takes over if it is greater than the maximum so far, or if it is NaN. So

    * **ties**: the first of the tied inputs gets the whole gradient (the maximum is not differentiable at a tie;
      any convex combination is a subgradient; :class:`~autograd_lab.ops.MaxOp` splits ties evenly instead);
    * **NaN**: a window holding a NaN outputs NaN, and its last NaN gets the gradient. A NaN is the maximum of any
      max-like op here and receives the gradient (``docs/conventions.md``);
    * a window of -inf only gives its gradient to its first real input.

    ``return_indices``: the op also records, for each output, the position of its maximum in its (H, W) plane,
    ``row·W + column`` (PyTorch's indices, int64), readable as ``op.indices`` after the forward call (until
    backward releases the node). :class:`~autograd_lab.nn.MaxPool2d` returns them beside the output.

    Args:
        kernel_size: window size, an int or (kH, kW), each ≥ 1.
        stride: step between windows, an int or (sH, sW), each ≥ 1; default ``kernel_size``.
        padding: implicit -inf on each side, an int or (pH, pW), each at most half the kernel.
        dilation: the spacing between a window's taps, an int or (dH, dW), each ≥ 1.
        ceil_mode: round the output size up, adding a last partial window (see the module docstring).
        return_indices: record the argmax positions (``op.indices``).

    Raises:
        TypeError: for a kernel size, stride, padding or dilation that is not an integer or a pair of integers.
        ShapeError: naming the op, the shape and the calling line, for x not 4-D, a stride, kernel or dilation
            below 1, padding above half the kernel, or a window that does not fit the padded input.
    """

    saved = (*_Pool2D.saved, "_arg")

    _arg: np.ndarray

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, dilation: int | tuple[int, int] = 1,
                 ceil_mode: bool = False, return_indices: bool = False) -> None:
        super().__init__(kernel_size, stride, padding, dilation, ceil_mode)
        self.return_indices = bool(return_indices)

    def forward(self, x: np.ndarray) -> np.ndarray:
        xp = self._prepare(x, -np.inf)
        rows, cols = self._slices[0]
        best = xp[:, :, rows, cols].copy()
        for rows, cols in self._slices[1:]:
            np.maximum(best, xp[:, :, rows, cols], out=best)  # a NaN propagates: it is the maximum
        if self.return_indices:
            self._arg = np.zeros(best.shape, dtype=np.intp)
            for k, won in enumerate(self._winners(xp, best)):
                self._arg[won] = k
        return best

    def _winners(self, xp: np.ndarray, best: np.ndarray) -> list[np.ndarray]:
        """For each tap k of the window (row-major), the windows it won, by PyTorch's scan found again from the
        maximum (cheaper than tracking the winner while scanning): the first real input equal to the maximum or,
        in a window whose maximum is NaN (NaN equals nothing), its last NaN."""
        free = ~np.isnan(best)  # windows whose winner is still to be found among equal inputs
        nan_windows = ~free
        won = []
        for k, (rows, cols) in enumerate(self._slices):
            wins = xp[:, :, rows, cols] == best
            if self._real is not None:
                wins &= self._real[k]
            wins &= free
            free &= ~wins
            won.append(wins)
        if nan_windows.any():
            for k in reversed(range(len(self._slices))):
                rows, cols = self._slices[k]
                wins = np.isnan(xp[:, :, rows, cols]) & nan_windows
                nan_windows &= ~wins
                won[k] |= wins
        return won

    @property
    def indices(self) -> np.ndarray:
        """Position of each output's maximum in its input plane, ``row·W + column`` (int64, the output's shape).

        Raises:
            AttributeError: unless the op was built with ``return_indices=True`` and has run forward.
        """
        if not self.return_indices or not hasattr(self, "_arg"):
            raise AttributeError("MaxPool2DOp.indices: build the op with return_indices=True and call it first")
        kw = self.kernel_size[1]
        (sh, sw), (ph, pw), (dh, dw) = self.stride, self.padding, self.dilation
        ho, wo = self._arg.shape[2:]
        i, j = np.divmod(self._arg, kw)
        rows = np.arange(ho)[:, None] * sh + i * dh - ph
        cols = np.arange(wo)[None, :] * sw + j * dw - pw
        width = self._crop[1].stop - self._crop[1].start
        return (rows * width + cols).astype(np.int64)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        (x,) = self.inputs
        won = self._winners(self._pad(x, -np.inf), self.output)
        # Windows that tile the input without overlap or padding cover every input exactly once: plain assignment.
        h, w = x.shape[2:]
        (kh, kw), stride = self.kernel_size, self.stride
        exact = (self._real is None and stride == (kh, kw) and self.dilation == (1, 1) and h % kh == 0
                 and w % kw == 0)
        gxp = np.empty_like(x) if exact else np.zeros((*x.shape[:2], *self._padded_hw), dtype=x.dtype)
        for (rows, cols), wins in zip(self._slices, won):
            if exact:
                np.multiply(gy, wins, out=gxp[:, :, rows, cols])
            else:
                gxp[:, :, rows, cols] += gy * wins
        return [self._unpad(gxp)]


class AvgPool2DOp(_Pool2D):
    """The mean of each window: ``AvgPool2DOp(kernel_size, stride=None, padding=0, ceil_mode=False,
    count_include_pad=True)(x)`` (PyTorch's ``avg_pool2d``, which has no dilation).

    Shapes: as :class:`MaxPool2DOp`. Padding counts as 0. y[n, c, p, q] = (1/K_pq) Σ x over the window, where the
    divisor K_pq is, as in PyTorch:

    * ``count_include_pad=True`` (default): the window's taps inside the padded input, kH·kW except for a partial
      window of ``ceil_mode`` that reaches past the padding;
    * ``count_include_pad=False``: the window's taps on real inputs only.

    The gradient spreads each output's gradient evenly, 1/K_pq to every input of its window (no ties to break).

    Raises:
        TypeError, ShapeError: as :class:`MaxPool2DOp`.
    """

    saved = (*_Pool2D.saved, "_divisor")

    _divisor: np.ndarray

    def __init__(self, kernel_size: int | tuple[int, int], stride: int | tuple[int, int] | None = None,
                 padding: int | tuple[int, int] = 0, ceil_mode: bool = False, count_include_pad: bool = True) -> None:
        super().__init__(kernel_size, stride, padding, 1, ceil_mode)
        self.count_include_pad = bool(count_include_pad)

    def forward(self, x: np.ndarray) -> np.ndarray:
        xp = self._prepare(x, 0.0)
        rows, cols = self._slices[0]
        total = xp[:, :, rows, cols].copy()
        for rows, cols in self._slices[1:]:
            np.add(total, xp[:, :, rows, cols], out=total)
        self._divisor = self._counts(x.shape[2:], total.shape[2:]).astype(x.dtype)
        total /= self._divisor
        return total

    def _counts(self, size: tuple[int, int], out: tuple[int, int]) -> np.ndarray:
        """K_pq, the divisor of each output position (H_out, W_out), by PyTorch's rule (class docstring)."""
        per_axis = []
        for axis in (0, 1):
            k, s, p, n = self.kernel_size[axis], self.stride[axis], self.padding[axis], size[axis]
            start = np.arange(out[axis]) * s - p
            end = np.minimum(start + k, n + p)
            if not self.count_include_pad:
                start, end = np.maximum(start, 0), np.minimum(end, n)
            per_axis.append(end - start)
        return np.outer(per_axis[0], per_axis[1])

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        (x,) = self.inputs
        share = gy / self._divisor
        gxp = np.zeros((*x.shape[:2], *self._padded_hw), dtype=x.dtype)
        for rows, cols in self._slices:
            gxp[:, :, rows, cols] += share
        return [self._unpad(gxp)]
