"""2-D convolution (cross-correlation) in NCHW layout, computed as im2col plus one matrix product.

im2col ("image to columns", K. Chellapilla, S. Puri, P. Simard, "High Performance Convolutional Neural Networks for
Document Processing", IWFHR 2006) copies every kH x kW patch of the (padded) input into one column, so that the
convolution becomes a single matrix product of the (C_out, C_in·kH·kW) weight matrix with the columns. The patch
copy loops over the kH·kW kernel offsets only: each offset (i, j) moves one strided slice of the whole batch at once,
never one pixel at a time. col2im, the adjoint of im2col, adds the columns back onto the input positions they came
from; it is the input gradient's second half.
"""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator


def conv_output_size(size: int, kernel: int, stride: int, padding: int, dilation: int = 1) -> int:
    """Output length along one axis: ⌊(size + padding - dilation·(kernel - 1) - 1) / stride⌋ + 1, with ``padding``
    the total added on both sides (as in PyTorch's ``Conv2d``)."""
    return (size + padding - dilation * (kernel - 1) - 1) // stride + 1


def check_window(op: str, shape: tuple[int, ...], kernel: tuple[int, int], stride: tuple[int, int],
                 pads: tuple[int, int, int, int] = (0, 0, 0, 0), dilation: tuple[int, int] = (1, 1)
                 ) -> tuple[int, int]:
    """Check that a kH x kW window (taps ``dilation`` apart) with this stride fits the input's (H, W) padded by
    ``pads`` = (top, bottom, left, right); return the output (H_out, W_out).

    Raises:
        ValueError: (the operator turns it into a ShapeError naming the shapes and the calling line) for a stride,
            kernel or dilation below 1, a negative padding, or a window larger than the padded input.
    """
    if min(stride) < 1:
        raise ValueError(f"{op}: stride must be at least 1, got {stride}")
    if min(kernel) < 1:
        raise ValueError(f"{op}: kernel_size must be at least 1, got {kernel}")
    if min(dilation) < 1:
        raise ValueError(f"{op}: dilation must be at least 1, got {dilation}")
    if min(pads) < 0:
        raise ValueError(f"{op}: padding must be at least 0, got {pads}")
    h, w = shape[-2:]
    hp, wp = h + pads[0] + pads[1], w + pads[2] + pads[3]
    span_h, span_w = dilation[0] * (kernel[0] - 1) + 1, dilation[1] * (kernel[1] - 1) + 1
    if span_h > hp or span_w > wp:
        dilated = f" (dilation {dilation}: it spans {span_h}x{span_w})" if dilation != (1, 1) else ""
        raise ValueError(f"{op}: kernel {kernel[0]}x{kernel[1]}{dilated} is larger than the padded input "
                         f"{hp}x{wp} (input {h}x{w}, padding {pads})")
    return (conv_output_size(h, kernel[0], stride[0], pads[0] + pads[1], dilation[0]),
            conv_output_size(w, kernel[1], stride[1], pads[2] + pads[3], dilation[1]))


def pair(value: int | tuple[int, int], name: str) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair of integers is returned as a tuple. Raises TypeError for anything else."""
    if isinstance(value, (int, np.integer)):
        values: tuple[object, ...] = (value, value)
    elif isinstance(value, (tuple, list)):
        values = tuple(value)
    else:
        raise TypeError(f"{name} must be an integer or a pair of integers, got {value!r}")
    if len(values) != 2 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values):
        raise TypeError(f"{name} must be an integer or a pair of integers, got {value!r}")
    return int(values[0]), int(values[1])  # type: ignore[call-overload]


def im2col(xp: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], out: tuple[int, int],
           dilation: tuple[int, int] = (1, 1)) -> np.ndarray:
    """Patches of a padded batch as columns: (N, C, Hp, Wp) -> (N, C·kH·kW, H_out·W_out), a new array.

    Row ``(c, i, j)`` (C order) of sample n holds ``xp[n, c, dH·i + sH·p, dW·j + sW·q]`` for every output pixel
    (p, q), so ``w.reshape(C_out, -1) @ cols[n]`` is the cross-correlation at every output pixel at once. The
    dilation (dH, dW) spaces the kernel's taps (1: adjacent).
    """
    n, c = xp.shape[:2]
    cols = np.empty((n, c, kernel[0], kernel[1], out[0], out[1]), dtype=xp.dtype)
    for i, j, rows, columns in _taps(kernel, stride, out, dilation):
        cols[:, :, i, j] = xp[:, :, rows, columns]
    return cols.reshape(n, c * kernel[0] * kernel[1], out[0] * out[1])


def col2im(cols: np.ndarray, padded_shape: tuple[int, ...], kernel: tuple[int, int], stride: tuple[int, int],
           out: tuple[int, int], dilation: tuple[int, int] = (1, 1)) -> np.ndarray:
    """The adjoint of :func:`im2col`: add each column entry back onto the input position it was copied from.

    (N, C·kH·kW, H_out·W_out) -> (N, C, Hp, Wp). Positions covered by several patches receive the sum.
    """
    n, c = padded_shape[:2]
    cols6 = cols.reshape(n, c, kernel[0], kernel[1], out[0], out[1])
    dxp = np.zeros(padded_shape, dtype=cols.dtype)
    for i, j, rows, columns in _taps(kernel, stride, out, dilation):
        dxp[:, :, rows, columns] += cols6[:, :, i, j]
    return dxp


def _taps(kernel: tuple[int, int], stride: tuple[int, int], out: tuple[int, int], dilation: tuple[int, int]
          ) -> list[tuple[int, int, slice, slice]]:
    """For each kernel tap (i, j), the row and column slices of the padded input that it reads in every window."""
    (kh, kw), (sh, sw), (ho, wo), (dh, dw) = kernel, stride, out, dilation
    return [(i, j, slice(dh * i, dh * i + sh * (ho - 1) + 1, sh), slice(dw * j, dw * j + sw * (wo - 1) + 1, sw))
            for i in range(kh) for j in range(kw)]


def pad_images(x: np.ndarray, padding: tuple[int, int] | tuple[int, int, int, int]) -> np.ndarray:
    """Zero-pad the last two axes: ``(ph, pw)`` on each side, or ``(top, bottom, left, right)``; x itself when there
    is nothing to pad."""
    top, bottom, left, right = _four(padding)
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    xp = np.zeros((n, c, top + h + bottom, left + w + right), dtype=x.dtype)
    xp[:, :, top:top + h, left:left + w] = x
    return xp


def _four(padding: tuple[int, ...]) -> tuple[int, int, int, int]:
    """(ph, pw) -> (ph, ph, pw, pw); (top, bottom, left, right) as it is."""
    if len(padding) == 2:
        return padding[0], padding[0], padding[1], padding[1]
    top, bottom, left, right = padding
    return top, bottom, left, right


def conv_padding(value: int | str | tuple[int, ...], name: str) -> str | tuple[int, ...]:
    """A convolution's padding, normalised: ``"same"``; ``(ph, pw)`` (``"valid"`` is (0, 0)); or ``(top, bottom,
    left, right)`` when asymmetric. Raises TypeError or ValueError naming ``name`` for anything else."""
    if isinstance(value, str):
        if value not in ("same", "valid"):
            raise ValueError(f"{name} must be an int, a pair, (top, bottom, left, right), 'same' or 'valid', "
                             f"got {value!r}")
        return "same" if value == "same" else (0, 0)
    if isinstance(value, (tuple, list)) and len(value) == 4:
        if not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
            raise TypeError(f"{name} must hold integers, got {value!r}")
        four = tuple(int(v) for v in value)
        return (four[0], four[2]) if four[0] == four[1] and four[2] == four[3] else four
    return pair(value, name)  # type: ignore[arg-type]


class Conv2DOp(Operator):
    """Cross-correlation of a batch of images with a bank of filters:
    ``Conv2DOp(stride=1, padding=0, dilation=1, groups=1)(x, w)`` (PyTorch's ``conv2d``).

    Shapes (NCHW): x (N, C_in, H, W), w (C_out, C_in/G, kH, kW) -> y (N, C_out, H_out, W_out), G = ``groups``, with
    H_out = ⌊(H + top + bottom - dH·(kH - 1) - 1) / sH⌋ + 1 (likewise W_out; leftover rows/columns are ignored, as in
    PyTorch). dtype: the inputs' (float32 stays float32).

        y[n, o, p, q] = Σ_{c, i, j} w[o, c, i, j] · xp[n, g·C_in/G + c, sH·p + dH·i, sW·q + dW·j]

    with xp the zero-padded x and g = o // (C_out/G) the group of output channel o: the channels split into G
    groups, and each output channel sees only its group's C_in/G input channels (G = C_in = C_out is the depthwise
    convolution of MobileNets, Howard et al., arXiv:1704.04861, 2017). No kernel flip: this is what every framework
    calls convolution (Goodfellow, Bengio & Courville, *Deep Learning*, §9.1, eq. 9.6). A bias is a separate
    ``AddOp``: :class:`autograd_lab.nn.Conv2d` reshapes its (C_out,) bias to (C_out, 1, 1) so that it broadcasts.

    Forward: X = im2col(xp) (N, C_in·kH·kW, L), L = H_out·W_out, split by rows into G blocks X_g; Y_g = W_g X_g
    with W_g group g's (C_out/G, C_in/G·kH·kW) filters: one GEMM batched over N and G. Backward (the chain rule
    through that product, as for MatMulOp):
        dW_g = Σ_n gY_ng X_ngᵀ,    dx = col2im([W_gᵀ gY_ng]_g), with the padding cropped off.

    Args:
        stride: step between windows, an int or (sH, sW), each ≥ 1.
        padding: zeros added, an int or (pH, pW) for each side; (top, bottom, left, right) for unequal sides;
            ``"valid"`` for none; ``"same"`` for the output size of the input (stride 1 only; the total
            dH·(kH - 1) is split with the odd one at the bottom/right, as PyTorch). Kept as given, normalised:
            ``op.padding`` is ``"same"``, a pair, or a 4-tuple when the sides differ.
        dilation: the spacing of the kernel's taps, an int or (dH, dW), each ≥ 1.
        groups: G ≥ 1, dividing both C_in and C_out.

    Raises:
        TypeError: for a stride, padding or dilation that is not an integer or a pair (or four) of integers.
        ValueError: for ``groups`` below 1, an unknown padding string, or ``"same"`` with a stride other than 1.
        ShapeError: naming the op, the shapes and the calling line, for x not 4-D, w not 4-D, a channel count that
            does not match (x's C_in against G times w's), C_out not divisible by G, a kernel larger than the padded
            input, or a stride or dilation below 1.
    """

    saved = ("_cols", "_out_hw", "_pads")

    _cols: np.ndarray
    _out_hw: tuple[int, int]
    _pads: tuple[int, int, int, int]

    def __init__(self, stride: int | tuple[int, int] = 1, padding: int | str | tuple[int, ...] = 0,
                 dilation: int | tuple[int, int] = 1, groups: int = 1) -> None:
        self.stride = pair(stride, "Conv2DOp stride")
        self.padding = conv_padding(padding, "Conv2DOp padding")
        self.dilation = pair(dilation, "Conv2DOp dilation")
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
            raise ValueError(f"Conv2DOp: groups must be a positive integer, got {groups!r}")
        self.groups = int(groups)
        if self.padding == "same" and self.stride != (1, 1):
            raise ValueError(f"Conv2DOp: padding='same' needs stride 1, got stride {self.stride}")

    def _pad_sides(self, kernel: tuple[int, int]) -> tuple[int, int, int, int]:
        """(top, bottom, left, right) for this kernel: "same" splits d·(k - 1), the odd one at the bottom/right."""
        if self.padding != "same":
            return _four(self.padding)  # type: ignore[arg-type]
        total_h, total_w = (d * (k - 1) for d, k in zip(self.dilation, kernel))
        return total_h // 2, total_h - total_h // 2, total_w // 2, total_w - total_w // 2

    def forward(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        if x.ndim != 4:
            raise ValueError(f"Conv2DOp: x must be 4-D (N, C_in, H, W), got {x.ndim}-D")
        if w.ndim != 4:
            raise ValueError(f"Conv2DOp: w must be 4-D (C_out, C_in/groups, kH, kW), got {w.ndim}-D")
        g = self.groups
        if x.shape[1] != g * w.shape[1]:
            expected = f"{w.shape[1]}" if g == 1 else f"{g * w.shape[1]} ({g} groups of {w.shape[1]})"
            raise ValueError(f"Conv2DOp: x has {x.shape[1]} channels but the filters expect {expected} "
                             "(x is (N, C_in, H, W), w is (C_out, C_in/groups, kH, kW))")
        if w.shape[0] % g:
            raise ValueError(f"Conv2DOp: {w.shape[0]} output channels do not split into {g} groups")
        kernel = (w.shape[2], w.shape[3])
        self._pads = self._pad_sides(kernel)
        out_hw = check_window("Conv2DOp", x.shape, kernel, self.stride, self._pads, self.dilation)
        cols = im2col(pad_images(x, self._pads), kernel, self.stride, out_hw, self.dilation)
        self._cols = cols
        self._out_hw = out_hw
        n, c_out = x.shape[0], w.shape[0]
        # (G, C_out/G, K_g) @ (N, G, K_g, L) -> (N, G, C_out/G, L): one GEMM per sample and group
        y = np.matmul(w.reshape(g, c_out // g, -1), cols.reshape(n, g, -1, cols.shape[-1]))
        return y.reshape(n, c_out, *out_hw)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x, w = self.inputs
        g = self.groups
        n, c_out = gy.shape[:2]
        gy_g = gy.reshape(n, g, c_out // g, -1)  # (N, G, C_out/G, L)
        gx = gw = None
        if self.needs_grad(1):
            cols_g = self._cols.reshape(n, g, -1, self._cols.shape[-1])  # (N, G, K_g, L)
            # Per-sample products summed over the batch; the transposed view goes to BLAS as a flag, where
            # tensordot would first copy the whole column matrix into a (K, N·L) layout.
            gw = np.add.reduce(np.matmul(gy_g, cols_g.swapaxes(-1, -2)), axis=0).reshape(w.shape)
        if self.needs_grad(0):
            w_g = w.reshape(g, c_out // g, -1)  # (G, C_out/G, K_g)
            dcols = np.matmul(w_g.swapaxes(-1, -2), gy_g)  # (G, K_g, C_out/G) @ (N, G, C_out/G, L) -> (N, G, K_g, L)
            top, bottom, left, right = self._pads
            padded = (n, x.shape[1], x.shape[2] + top + bottom, x.shape[3] + left + right)
            dxp = col2im(dcols.reshape(n, -1, dcols.shape[-1]), padded, (w.shape[2], w.shape[3]), self.stride,
                         self._out_hw, self.dilation)
            gx = dxp
            if top or bottom or left or right:
                gx = np.ascontiguousarray(dxp[:, :, top:top + x.shape[2], left:left + x.shape[3]])
        return [gx, gw]
