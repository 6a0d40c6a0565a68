"""Lowering of the convolutional layers: Conv2D with its fused epilogue, pooling, and batch norm folded away.

**Layout.** Activations produced by a conv or pooling step are stored *channels last* (HWC: element (c, y, x) of a
(1, C, H, W) tensor at ``(y * W + x) * C + c``), as CMSIS-NN and TensorFlow Lite Micro do on microcontrollers, so
that the C_in * kH * kW values of one receptive field (the *patch*) are kH contiguous runs and one output pixel is a
dense layer applied to its patch: a conv layer is im2col a few pixels at a time plus a dense kernel, with no column
buffer larger than a few patches. The float kernel (``conv_f32.c``) computes four conv pixels at once (the four
positions of a 2x2 pool window, or four neighbours), reading each window where it lies in the input when it does
not overlap the padding, and gathering it into a patch buffer when it does; the usual first layer (3x3, one input
channel, 2x2 pool) has a direct kernel that keeps its 4x4 input tile in registers. The int8 kernel
(``conv_q8.c``) quantizes each patch and sums int8 products. The network's input arrives in the
caller's NCHW order; a conv or pool reads any layout through element strides. A flatten (``ReshapeOp``) of an HWC
tensor costs nothing: the following dense layer's weight columns are permuted to HWC order at export. Anything
else that reads an HWC tensor gets it converted back to NCHW first (``to_chw`` step).

**Groups.** A conv of G groups is G convs side by side: group q reads input channels q*C_in/G... and writes output
channels q*C_out/G...; its patch is kh*kw*C_in/G values and its weight rows are stored group after group. A
depthwise conv (G = C_in = C_out) on channels-last input without a fused pool has its own kernel (weights tap-major).

**Fusion.** A conv absorbs what follows it when nothing else reads the intermediate values: a per-channel bias
``AddOp``, a ``BatchNormOp`` (folded into the weights, see :func:`fold_batch_norm`), a ReLU or leaky ReLU, and a
max pool (kernel == stride, no padding), so the full-resolution conv output never needs RAM. Max pooling commutes
with the bias, the activation and int8 rounding, because all three are monotonic: taking the window's maximum of
the raw sums and then applying them (the float kernels) gives the same bits as applying them per conv pixel (the
unfused graph).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from autograd_lab.export.errors import ExportError
from autograd_lab.export.floats import check_finite
from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Node, Tensor
from autograd_lab.ops.pooling import _output_length

if TYPE_CHECKING:
    from autograd_lab.export.lower import Lowering

#: Field order of the C struct ``al_conv_geom`` (templates/conv_geom.c); pooling steps use the same struct.
GEOM_FIELDS = ("cin", "h", "w", "sc", "sh", "sw", "kh", "kw", "sy", "sx", "py", "px", "oh", "ow", "cout",
               "pkh", "pkw", "psy", "psx", "ph", "pw", "direct", "groups", "dy", "dx", "pad_in")


def pair(value: Any, what: str, where: str) -> tuple[int, int]:
    """An int or a 2-sequence of ints as (along H, along W).

    Raises:
        ExportError: naming the layer, for anything else (a string padding mode such as "same", floats...).
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value), int(value)
    if isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, (int, np.integer)) for v in value):
        return int(value[0]), int(value[1])
    raise ExportError(f"{where}: {what}={value!r} is not supported by the C kernels (an int or a pair of ints)")


def input_strides(lowering: Lowering, t: Tensor, where: str) -> tuple[int, int, int, int, int, int]:
    """(C, H, W, stride of c, of y, of x) in elements of a (1, C, H, W) activation, in the layout it is stored in.

    Raises:
        ExportError: naming the layer, for a batch of more than one image or a tensor that is not 4-D.
    """
    if len(t.shape) != 4 or t.shape[0] != 1:
        raise ExportError(f"{where}: input {t.name!r} has shape {t.shape}; the C kernels take one image (1, C, H, W)"
                          " per call: export with input_shape=(1, C, H, W)")
    _, c, h, w = t.shape
    if lowering.is_hwc(t):
        return c, h, w, 1, w * c, c
    return c, h, w, h * w, w, 1


def conv_pad_sides(padding: Any, kernel: tuple[int, int], where: str) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) of a conv's ``padding`` attribute: a pair, four sides, or ``"same"`` (dilation 1:
    k - 1 split in two, the odd one at the bottom / right, as Conv2DOp does).

    Raises:
        ExportError: naming the layer, for anything else.
    """
    if padding == "same":
        (kh, kw) = kernel
        return (kh - 1) // 2, kh - 1 - (kh - 1) // 2, (kw - 1) // 2, kw - 1 - (kw - 1) // 2
    if isinstance(padding, (tuple, list)) and len(padding) == 4 and all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in padding):
        return tuple(int(v) for v in padding)  # type: ignore[return-value]
    py, px = pair(padding, "padding", where)
    return py, py, px, px


def check_unsupported(node: Node, where: str, allowed: set[str]) -> None:
    """Refuse configuration the kernels do not implement (dilation, groups, ceil mode...): every attribute the op
    reports beyond ``allowed`` must hold its neutral value."""
    neutral = {"dilation": (1, (1, 1), [1, 1]), "groups": (1,), "ceil_mode": (False,), "padding_mode": ("zeros",),
               "count_include_pad": (True,), "return_indices": (False,)}
    for key, value in node.attrs.items():
        if key in allowed or key in ("stats", "momentum", "eps", "name"):
            continue
        ok = neutral.get(key)
        if ok is None or not any(_same(value, v) for v in ok):
            raise ExportError(f"{where}: {key}={value!r} is not supported by the C kernels")


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(np.all(np.asarray(a) == np.asarray(b))) and np.shape(a) == np.shape(b)
    except (TypeError, ValueError):
        return False


def fold_batch_norm(weight: np.ndarray, bias: np.ndarray | None, bn: Node, where: str) -> tuple[np.ndarray,
                                                                                               np.ndarray]:
    """Fold evaluation-mode batch norm into the layer before it.

    With z = W x + b, batch norm gives gamma (z - mean) / sqrt(var + eps) + beta = (a W) x + (a (b - mean) + beta)
    for a = gamma / sqrt(var + eps) per output channel (Ioffe & Szegedy 2015, section 3.1, at inference; the
    folding is standard, e.g. Jacob et al. 2018, section 3.2). Computed in float64, returned as float32.

    Args:
        weight: (C_out, ...) float weights, any trailing layout.
        bias: (C_out,) or None.
        bn: the BatchNormOp node (inputs x, gamma, beta; ``attrs["stats"]`` holds ``mean`` and ``var``).

    Raises:
        ExportError: naming the layer, if gamma or beta are not constants, the statistics hold NaN or inf, the
            variance plus eps is not positive, or the channel counts do not match.
    """
    cout = weight.shape[0]
    stats = bn.attrs.get("stats")
    mean = np.asarray(getattr(stats, "mean", None), dtype=np.float64).ravel()
    var = np.asarray(getattr(stats, "var", None), dtype=np.float64).ravel()
    eps = float(bn.attrs.get("eps", 1e-5))
    if len(bn.inputs) != 3 or any(t.kind != "const" for t in bn.inputs[1:]):
        raise ExportError(f"{where}: batch norm's gamma and beta must be constants (Parameters) to fold them")
    gamma = np.asarray(bn.inputs[1].value, dtype=np.float64).ravel()
    beta = np.asarray(bn.inputs[2].value, dtype=np.float64).ravel()
    for name, arr in (("running mean", mean), ("running variance", var), ("gamma", gamma), ("beta", beta)):
        if arr.size != cout:
            raise ExportError(f"{where}: batch norm's {name} has {arr.size} values for {cout} channels")
        check_finite(f"{where}: batch norm {name}", arr)
    if not np.all(var + eps > 0):
        raise ExportError(f"{where}: batch norm's running variance plus eps is not positive")
    a = gamma / np.sqrt(var + eps)
    b = np.zeros(cout) if bias is None else np.asarray(bias, dtype=np.float64)
    w = np.asarray(weight, dtype=np.float64) * a.reshape((cout,) + (1,) * (weight.ndim - 1))
    return w.astype(np.float32), (a * (b - mean) + beta).astype(np.float32)


def lower_conv(lowering: Lowering, node: Node, where: str) -> Step:
    """One ``conv`` step for a Conv2DOp and the bias / batch norm / activation / max pool that follow it.

    Raises:
        ExportError: naming the layer, for non-constant or non-finite weights, a batch axis, dilation or another
            unsupported setting, groups that do not divide the channels, or a shape mismatch.
    """
    x, wt = node.inputs
    if wt.kind != "const":
        raise ExportError(f"{where}: the conv weights {wt.name!r} must be a constant (a Parameter), not computed "
                          "from the input")
    check_unsupported(node, where, {"stride", "padding", "groups"})
    cin, h, w, sc, sh, sw = input_strides(lowering, x, where)
    weight = np.asarray(wt.value, dtype=np.float32)
    groups = node.attrs.get("groups", 1)
    if not isinstance(groups, (int, np.integer)) or isinstance(groups, bool) or groups < 1 or cin % groups:
        raise ExportError(f"{where}: groups={groups!r} must be a positive integer dividing the {cin} input channels")
    groups = int(groups)
    if weight.ndim != 4 or weight.shape[1] != cin // groups or weight.shape[0] % groups:
        raise ExportError(f"{where}: weights of shape {weight.shape} do not fit an input of {cin} channels in "
                          f"{groups} group(s) (expected (C_out, C_in / groups, kH, kW), C_out a multiple of groups)")
    cout, cin_g, kh, kw = weight.shape
    sy, sx = pair(node.attrs.get("stride", 1), "stride", where)
    top, bottom, left, right = conv_pad_sides(node.attrs.get("padding", 0), (kh, kw), where)
    py, px = top, left  # the kernels need the top and left padding; the bottom and right follow from oh and ow
    if min(sy, sx) < 1 or min(top, bottom, left, right) < 0:
        raise ExportError(f"{where}: stride ({sy}, {sx}) and padding {(top, bottom, left, right)} must be positive / "
                          "non-negative")
    oh, ow = (h + top + bottom - kh) // sy + 1, (w + left + right - kw) // sx + 1
    if oh < 1 or ow < 1 or node.output.shape != (1, cout, oh, ow):
        raise ExportError(f"{where}: a {kh}x{kw} kernel on an input of {h}x{w} with padding ({py}, {px}) and stride"
                          f" ({sy}, {sx}) gives {oh}x{ow}, but the op's output has shape {node.output.shape}")
    bias: np.ndarray | None = None
    out, nxt = node.output, lowering.sole_consumer(node.output)
    absorbed: list[Node] = []
    if nxt is not None and nxt.kind == "add" and _per_channel_bias(nxt, out, cout) is not None:
        bias = _per_channel_bias(nxt, out, cout)
        absorbed.append(nxt)
        out, nxt = nxt.output, lowering.sole_consumer(nxt.output)
    if nxt is not None and nxt.kind == "batch_norm" and nxt.inputs[0] is out:
        weight, bias = fold_batch_norm(weight, bias, nxt, f"{nxt.op_class} at node {nxt.index} after {where}")
        absorbed.append(nxt)
        out, nxt = nxt.output, lowering.sole_consumer(nxt.output)
    act, slope = 0, 0.0
    pool = (0, 0, 0, 0)
    ph, pw = oh, ow
    for _ in range(2):  # activation then pool, or pool then activation (they commute when monotonic)
        nxt_slope = float(nxt.attrs.get("slope", 0.0)) if nxt is not None and nxt.kind == "leaky_relu" else 0.0
        if nxt is not None and act == 0 and nxt.kind in ("relu", "leaky_relu") and (pool[0] == 0 or nxt_slope >= 0):
            act = 1 if nxt.kind == "relu" else 2
            slope = nxt_slope
        elif (nxt is not None and pool[0] == 0 and nxt.kind == "max_pool2d" and _fusable_pool(nxt)
              and slope >= 0):  # a leaky ReLU of negative slope is not monotonic: it does not commute with max
            (pkh, pkw), (psy, psx) = pool_window(nxt, f"{nxt.op_class} at node {nxt.index}")
            pool = (pkh, pkw, psy, psx)
            ph, pw = (oh - pkh) // psy + 1, (ow - pkw) // psx + 1
        else:
            break
        absorbed.append(nxt)
        out, nxt = nxt.output, lowering.sole_consumer(nxt.output)
    check_finite(f"{where}: weights", weight)
    patch = kh * kw * cin_g  # one group's receptive field
    # Patch order (kh, kw, c_in of the group): the same order in which al_patch_* gathers the receptive field. Row j
    # belongs to group j // (cout / groups).
    matrix = np.ascontiguousarray(weight.transpose(0, 2, 3, 1).reshape(cout, patch))
    direct = 1 if groups == 1 and is_direct(cin, sw, (kh, kw), (sy, sx), pool) else 0
    if groups == cin == cout > 1 and sc == 1 and sw == cin and pool[0] == 0:
        direct = 2  # al_dwconv_f32: depthwise on channels-last input, weights tap-major
    geom = dict(cin=cin, h=h, w=w, sc=sc, sh=sh, sw=sw, kh=kh, kw=kw, sy=sy, sx=sx, py=py, px=px, oh=oh, ow=ow,
                cout=cout, pkh=pool[0], pkw=pool[1], psy=pool[2], psx=pool[3], ph=ph, pw=pw, direct=int(direct),
                groups=groups, dy=1, dx=1, pad_in=0)
    params: dict[str, Any] = {"geom": geom, "k": patch, "m": cout, "weight": matrix, "weight_name": wt.name,
                              "bias": bias, "bias_name": f"{wt.name}_bias", "act": act, "slope": slope}
    for n in absorbed:
        lowering.fused.add(id(n))
        where += f" + {n.op_class} at node {n.index}"
    # al_conv_f32 computes four conv pixels at a time: their patches (for windows that overlap the padding) and their
    # sums; the direct kernel keeps everything in registers
    scratch = [] if direct else [Tensor(f"{wt.name}_patch", (4 * patch,), "act"),
                                 Tensor(f"{wt.name}_sums", (4 * (cout // groups),), "act")]
    step = Step("conv", [x], out, params, where, oh * ow * cout * patch, scratch=scratch)
    return lowering.emit_hwc(step, (cout, ph, pw))


#: Rows per interleaved block of the float conv weights (al_dense4_f32 in templates/conv_f32.c).
CONV_BLOCK = 4


def is_direct(cin: int, sw: int, kernel: tuple[int, int], stride: tuple[int, int],
              pool: tuple[int, int, int, int]) -> bool:
    """Whether ``al_conv3x3_pool2_f32`` (templates/conv_f32.c) computes the layer: a 3x3 kernel of stride 1 on one
    input channel whose pixels are adjacent (element stride ``sw`` 1), with a fused 2x2 max pool of stride 2 (the
    usual first layer of a small CNN). Its weights are then written as plain rows instead of the dense blocks."""
    return cin == 1 and sw == 1 and kernel == (3, 3) and stride == (1, 1) and pool == (2, 2, 2, 2)


def _per_channel_bias(add: Node, conv_out: Tensor, cout: int) -> np.ndarray | None:
    other = add.inputs[1] if add.inputs[0] is conv_out else add.inputs[0]
    if other.kind != "const" or add.output.shape != conv_out.shape or other is conv_out:
        return None
    v = np.asarray(other.value, dtype=np.float32)
    shape = (1,) * (4 - v.ndim) + v.shape
    if v.ndim > 4 or shape[0] != 1 or shape[2:] != (1, 1) or shape[1] not in (1, cout):
        return None
    return np.ascontiguousarray(np.broadcast_to(v.reshape(-1), (cout,)), dtype=np.float32)


def pool_window(node: Node, where: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """Kernel and stride of a pooling node that a conv may absorb: no padding, dilation or ceil mode (stride
    defaults to the kernel size).

    Raises:
        ExportError: naming the layer, for padding, dilation, ceil mode or a non-positive size.
    """
    check_unsupported(node, where, {"kernel_size", "stride", "padding"})
    if pair(node.attrs.get("padding", 0), "padding", where) != (0, 0):
        raise ExportError(f"{where}: padded pooling cannot be fused into the conv before it")
    return _window(node, where)


def _window(node: Node, where: str) -> tuple[tuple[int, int], tuple[int, int]]:
    k = pair(node.attrs.get("kernel_size"), "kernel_size", where)
    stride = node.attrs.get("stride")
    s = k if stride is None else pair(stride, "stride", where)
    if min(*k, *s) < 1:
        raise ExportError(f"{where}: kernel {k} and stride {s} must be positive")
    return k, s


def _fusable_pool(node: Node) -> bool:
    try:
        pool_window(node, "")
    except ExportError:
        return False
    return True


def lower_pool(lowering: Lowering, node: Node, where: str) -> Step:
    """A ``max_pool`` or ``avg_pool`` step (not fused into a conv), reading any layout, writing HWC, with padding,
    ceil mode, dilation (max) and ``count_include_pad`` (average) as the ops define them: the taps of a window that
    fall in the padding or past the input are left out of the maximum and the sum; the average divides by the
    number of taps inside the padded input (``count_include_pad``, the default) or inside the input.

    Raises:
        ExportError: naming the layer, for a setting the kernel lacks, or a window with no tap on the input.
    """
    kind = "max_pool" if node.kind == "max_pool2d" else "avg_pool"
    check_unsupported(node, where, {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                                    *({"dilation"} if kind == "max_pool" else set())})
    (kh, kw), (sy, sx) = _window(node, where)
    py, px = pair(node.attrs.get("padding", 0), "padding", where)
    dy, dx = pair(node.attrs.get("dilation", 1), "dilation", where)
    ceil = bool(node.attrs.get("ceil_mode", False))
    if min(py, px) < 0 or min(dy, dx) < 1:
        raise ExportError(f"{where}: padding ({py}, {px}) and dilation ({dy}, {dx}) must be >= 0 and >= 1")
    x = node.inputs[0]
    c, h, w, sc, sh, sw = input_strides(lowering, x, where)
    oh, ow = _output_length(h, kh, sy, py, dy, ceil), _output_length(w, kw, sx, px, dx, ceil)
    if oh < 1 or ow < 1 or node.output.shape != (1, c, oh, ow):
        raise ExportError(f"{where}: a {kh}x{kw} window on {h}x{w} gives {oh}x{ow}, the op says {node.output.shape}")
    for n, out, k, st, pad, dil in ((h, oh, kh, sy, py, dy), (w, ow, kw, sx, px, dx)):
        taps = np.arange(out)[:, None] * st - pad + np.arange(k)[None, :] * dil
        if not np.all(((taps >= 0) & (taps < n)).any(axis=1)):
            raise ExportError(f"{where}: a window lies wholly in the padding (padding {(py, px)}, kernel "
                              f"{(kh, kw)}); the C kernels need a tap on the input in every window")
    geom = dict(cin=c, h=h, w=w, sc=sc, sh=sh, sw=sw, kh=kh, kw=kw, sy=sy, sx=sx, py=py, px=px, oh=oh, ow=ow, cout=c,
                pkh=0, pkw=0, psy=0, psx=0, ph=oh, pw=ow, direct=0, groups=1, dy=dy, dx=dx,
                pad_in=int(bool(node.attrs.get("count_include_pad", True))))
    step = Step(kind, [x], node.output, {"geom": geom}, where)
    return lowering.emit_hwc(step, (c, oh, ow))


def hwc_permutation(c: int, h: int, w: int) -> np.ndarray:
    """``perm`` with ``flat_hwc = flat_chw[perm]``: the CHW index of each HWC position."""
    return np.arange(c * h * w).reshape(c, h, w).transpose(1, 2, 0).ravel()
