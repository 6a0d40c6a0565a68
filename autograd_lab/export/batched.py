"""Lowering of batched matrix products (attention's Q·Kᵀ and P·V): one ``bmm`` step reading its operands through
views and writing its output through strides.

``y[b] = alpha · (A[b] @ B[b])`` for b over one batch axis, every operand addressed by (batch, row, column) element
strides, so that the heads of a fused projection are read where they lie (see :mod:`~autograd_lab.export.views`)
and no transposed copy of K is made. Two neighbours are fused into the step when nothing else reads the product:
a ``MulOp`` by a constant scalar (the 1/√d of scaled dot-product attention, as ``alpha``; y = sum · alpha, the same
bits as the separate product) and a ``TransposeOp`` (the step then writes the transposed layout directly, so that
the heads put side by side again are one contiguous (T, E) matrix for the output projection).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from autograd_lab.export.errors import ExportError
from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Node, Tensor
from autograd_lab.export.views import View, merge_axes, row_major

if TYPE_CHECKING:
    from autograd_lab.export.lower import Lowering

#: Per-operand fields of the step's geometry, in the order of al_bmm_f32's arguments.
BMM_FIELDS = ("batch", "n", "k", "m", "sab", "sa0", "sa1", "sbb", "sb0", "sb1", "syb", "sy0", "sy1")


def lower_bmm(lowering: Lowering, node: Node, where: str) -> Step:
    """The ``bmm`` step of a MatMulOp with batch axes (and a scalar MulOp and a TransposeOp that follow it).

    Raises:
        ExportError: naming the node, for a 1-D operand next to batch axes, batch shapes that do not broadcast, or
            batch axes that do not merge into one loop axis for each operand.
    """
    va, vb = (lowering.view(t) for t in node.inputs)
    if len(va.shape) < 2 or len(vb.shape) < 2:
        raise ExportError(f"{where}: a vector operand with batch axes is not supported by the C kernels")
    if node.attrs.get("transpose_a"):
        va = va.transpose((*range(len(va.shape) - 2), len(va.shape) - 1, len(va.shape) - 2))
    if node.attrs.get("transpose_b"):
        vb = vb.transpose((*range(len(vb.shape) - 2), len(vb.shape) - 1, len(vb.shape) - 2))
    (n, k), (k2, m) = va.shape[-2:], vb.shape[-2:]
    if k != k2:
        raise ExportError(f"{where}: inner dimensions differ ({k} vs {k2})")
    try:
        batch = np.broadcast_shapes(va.shape[:-2], vb.shape[:-2])
    except ValueError as exc:
        raise ExportError(f"{where}: batch shapes {va.shape[:-2]} and {vb.shape[:-2]} do not broadcast") from exc
    out, alpha = node.output, 1.0
    fused: list[Node] = []
    nxt = lowering.sole_consumer(out)
    factor = _scalar_factor(nxt, out) if nxt is not None and nxt.kind == "mul" else None
    if nxt is not None and factor is not None:
        alpha = factor
        fused.append(nxt)
        out, nxt = nxt.output, lowering.sole_consumer(nxt.output)
    y_strides = row_major(out.shape)
    if nxt is not None and nxt.kind == "transpose":
        axes = nxt.attrs.get("axes")
        order = list(range(len(out.shape)))[::-1] if axes is None else [a % len(out.shape) for a in axes]
        written = row_major(nxt.output.shape)  # y[idx] lands at element idx[order] of the transposed output
        y_strides = tuple(written[order.index(a)] for a in range(len(out.shape)))
        fused.append(nxt)
        out = nxt.output
    batch_dims = list(batch)
    dims, (sa, sb, sy) = merge_axes(batch_dims, _batch_strides(va, batch), _batch_strides(vb, batch),
                                    list(y_strides[:-2]))
    if len(dims) > 1:
        raise ExportError(f"{where}: the batch axes {tuple(batch)} of operands with strides {va.strides}, "
                          f"{vb.strides} need {len(dims)} loop axes; the C kernel handles one")
    geom = {"batch": dims[0] if dims else 1, "n": n, "k": k, "m": m,
            "sab": sa[0] if dims else 0, "sa0": va.strides[-2], "sa1": va.strides[-1],
            "sbb": sb[0] if dims else 0, "sb0": vb.strides[-2], "sb1": vb.strides[-1],
            "syb": sy[0] if dims else 0, "sy0": y_strides[-2], "sy1": y_strides[-1]}
    for f in fused:
        lowering.fused.add(id(f))
        where += f" + {f.op_class} at node {f.index}"
    params = {"geom": geom, "offsets": [va.offset, vb.offset], "alpha": float(np.float32(alpha))}
    macs = int(np.prod(batch, dtype=np.int64)) * n * k * m
    return Step("bmm", [va.base, vb.base], out, params, where, macs)


def _batch_strides(v: View, batch: tuple[int, ...]) -> list[int]:
    """The view's strides along the broadcast batch axes (0 where it is broadcast or absent)."""
    own = v.shape[:-2]
    pad = len(batch) - len(own)
    return [0 if i < pad or own[i - pad] == 1 else v.strides[i - pad] for i in range(len(batch))]


def _scalar_factor(mul: Node, x: Tensor) -> float | None:
    """The constant of ``x * c`` (or ``c * x``) when c is a constant holding one value and the product has x's
    shape, else None."""
    a, c = mul.inputs
    if c is x:
        a, c = c, a
    if a is not x or c.kind != "const" or c.size != 1 or mul.output.shape != x.shape:
        return None
    return float(np.asarray(c.value, dtype=np.float32).ravel()[0])
