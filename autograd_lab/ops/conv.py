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


def conv_output_size(size: int, kernel: int, stride: int, padding: int) -> int:
    """Output length along one axis: ⌊(size + 2·padding - kernel) / stride⌋ + 1 (as in PyTorch's ``Conv2d``)."""
    return (size + 2 * padding - kernel) // stride + 1


def check_window(op: str, shape: tuple[int, ...], kernel: tuple[int, int], stride: tuple[int, int],
                 padding: tuple[int, int] = (0, 0), exact: bool = False) -> tuple[int, int]:
    """Check that a kH x kW window with this stride fits the input's (H, W); return the output (H_out, W_out).

    Raises:
        ValueError: (the operator turns it into a ShapeError naming the shapes and the calling line) for a stride
            or kernel below 1, a negative padding, a kernel larger than the padded input, or, with ``exact``, a
            window that does not tile the input evenly ((H - kH) not a multiple of the stride).
    """
    if min(stride) < 1:
        raise ValueError(f"{op}: stride must be at least 1, got {stride}")
    if min(kernel) < 1:
        raise ValueError(f"{op}: kernel_size must be at least 1, got {kernel}")
    if min(padding) < 0:
        raise ValueError(f"{op}: padding must be at least 0, got {padding}")
    h, w = shape[-2:]
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    if kernel[0] > hp or kernel[1] > wp:
        raise ValueError(f"{op}: kernel {kernel[0]}x{kernel[1]} is larger than the padded input {hp}x{wp} "
                         f"(input {h}x{w}, padding {padding})")
    if exact and ((hp - kernel[0]) % stride[0] or (wp - kernel[1]) % stride[1]):
        raise ValueError(f"{op}: a {kernel[0]}x{kernel[1]} window with stride {stride} does not tile the "
                         f"{hp}x{wp} input evenly ((size - kernel) must be a multiple of the stride); crop or pad "
                         f"the input, or choose another kernel size or stride")
    return conv_output_size(h, kernel[0], stride[0], padding[0]), conv_output_size(w, kernel[1], stride[1], padding[1])


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


def im2col(xp: np.ndarray, kernel: tuple[int, int], stride: tuple[int, int], out: tuple[int, int]) -> np.ndarray:
    """Patches of a padded batch as columns: (N, C, Hp, Wp) -> (N, C·kH·kW, H_out·W_out), a new array.

    Row ``(c, i, j)`` (C order) of sample n holds ``xp[n, c, i + sh·p, j + sw·q]`` for every output pixel (p, q), so
    ``w.reshape(C_out, -1) @ cols[n]`` is the cross-correlation at every output pixel at once.
    """
    n, c = xp.shape[:2]
    (kh, kw), (sh, sw), (ho, wo) = kernel, stride, out
    cols = np.empty((n, c, kh, kw, ho, wo), dtype=xp.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw]
    return cols.reshape(n, c * kh * kw, ho * wo)


def col2im(cols: np.ndarray, padded_shape: tuple[int, ...], kernel: tuple[int, int], stride: tuple[int, int],
           out: tuple[int, int]) -> np.ndarray:
    """The adjoint of :func:`im2col`: add each column entry back onto the input position it was copied from.

    (N, C·kH·kW, H_out·W_out) -> (N, C, Hp, Wp). Positions covered by several patches receive the sum.
    """
    n, c = padded_shape[:2]
    (kh, kw), (sh, sw), (ho, wo) = kernel, stride, out
    cols6 = cols.reshape(n, c, kh, kw, ho, wo)
    dxp = np.zeros(padded_shape, dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i:i + sh * (ho - 1) + 1:sh, j:j + sw * (wo - 1) + 1:sw] += cols6[:, :, i, j]
    return dxp


def pad_images(x: np.ndarray, padding: tuple[int, int]) -> np.ndarray:
    """Zero-pad the last two axes by ``padding`` = (ph, pw) on each side (x itself when there is nothing to pad)."""
    ph, pw = padding
    if not ph and not pw:
        return x
    n, c, h, w = x.shape
    xp = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=x.dtype)
    xp[:, :, ph:ph + h, pw:pw + w] = x
    return xp


class Conv2DOp(Operator):
    """Cross-correlation of a batch of images with a bank of filters: ``Conv2DOp(stride=1, padding=0)(x, w)``.

    Shapes (NCHW): x (N, C_in, H, W), w (C_out, C_in, kH, kW) -> y (N, C_out, H_out, W_out) with
    H_out = ⌊(H + 2·padding - kH) / stride⌋ + 1 (likewise W_out; leftover rows/columns are ignored, as in PyTorch).
    dtype: the inputs' (float32 stays float32).

        y[n, o, p, q] = Σ_{c, i, j} w[o, c, i, j] · xp[n, c, sh·p + i, sw·q + j]      (xp: x zero-padded)

    No kernel flip: this is what every framework calls convolution (Goodfellow, Bengio & Courville, *Deep Learning*,
    §9.1, eq. 9.6). A bias is a separate ``AddOp``: :class:`autograd_lab.nn.Conv2d` reshapes its (C_out,) bias
    to (C_out, 1, 1) so that it broadcasts over the pixels.

    Forward: X = im2col(xp) (N, C_in·kH·kW, L), L = H_out·W_out; Y = W X with W = w.reshape(C_out, -1), one GEMM
    batched over N. Backward (the chain rule through that product, as for MatMulOp):
        dw = Σ_n gY_n X_nᵀ  (a batched GEMM),    dx = col2im(Wᵀ gY), with the padding cropped off.

    Args:
        stride: step between windows, an int or (sh, sw), each ≥ 1.
        padding: zeros added on each side, an int or (ph, pw), each ≥ 0.

    Raises:
        TypeError: for a stride or padding that is not an integer or a pair of integers.
        ShapeError: naming the op, the shapes and the calling line, for x not 4-D, w not 4-D, a channel count that
            does not match (x's C_in against w's), a kernel larger than the padded input, or a stride below 1.
    """

    saved = ("_cols", "_out_hw")

    _cols: np.ndarray
    _out_hw: tuple[int, int]

    def __init__(self, stride: int | tuple[int, int] = 1, padding: int | tuple[int, int] = 0) -> None:
        self.stride = pair(stride, "Conv2DOp stride")
        self.padding = pair(padding, "Conv2DOp padding")

    def forward(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        if x.ndim != 4:
            raise ValueError(f"Conv2DOp: x must be 4-D (N, C_in, H, W), got {x.ndim}-D")
        if w.ndim != 4:
            raise ValueError(f"Conv2DOp: w must be 4-D (C_out, C_in, kH, kW), got {w.ndim}-D")
        if x.shape[1] != w.shape[1]:
            raise ValueError(f"Conv2DOp: x has {x.shape[1]} channels but the filters expect {w.shape[1]} "
                             "(x is (N, C_in, H, W), w is (C_out, C_in, kH, kW))")
        kernel = (w.shape[2], w.shape[3])
        out_hw = check_window("Conv2DOp", x.shape, kernel, self.stride, self.padding)
        cols = im2col(pad_images(x, self.padding), kernel, self.stride, out_hw)
        self._cols = cols
        self._out_hw = out_hw
        y = np.matmul(w.reshape(w.shape[0], -1), cols)  # (C_out, K) @ (N, K, L) -> (N, C_out, L)
        return y.reshape(x.shape[0], w.shape[0], *out_hw)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x, w = self.inputs
        n, c_out = gy.shape[:2]
        g = gy.reshape(n, c_out, -1)  # (N, C_out, L)
        gx = gw = None
        if self.needs_grad(1):
            # Per-sample products summed over the batch; the transposed view goes to BLAS as a flag, where
            # tensordot would first copy the whole column matrix into a (K, N·L) layout.
            gw = np.add.reduce(np.matmul(g, self._cols.swapaxes(1, 2)), axis=0).reshape(w.shape)
        if self.needs_grad(0):
            dcols = np.matmul(w.reshape(c_out, -1).T, g)  # (K, C_out) @ (N, C_out, L) -> (N, K, L)
            ph, pw = self.padding
            padded = (n, x.shape[1], x.shape[2] + 2 * ph, x.shape[3] + 2 * pw)
            dxp = col2im(dcols, padded, (w.shape[2], w.shape[3]), self.stride, self._out_hw)
            gx = dxp[:, :, ph:ph + x.shape[2], pw:pw + x.shape[3]] if ph or pw else dxp
            if ph or pw:
                gx = np.ascontiguousarray(gx)
        return [gx, gw]
