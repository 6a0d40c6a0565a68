"""Lower a traced :class:`Graph` to kernel steps: pick a kernel per node, fuse layers, lay weights out for the loops.

A ``MatMulOp`` of an activation vector by a constant matrix becomes a *dense* step (the fast kernel), which absorbs a
following bias ``AddOp`` and a ReLU or leaky ReLU when nothing else reads the intermediate values. Every other node
keeps its own step. Steps name their tensors; buffers are assigned later by :mod:`autograd_lab.export.memory`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.export.batched import lower_bmm
from autograd_lab.export.conv import hwc_permutation, lower_conv, lower_pool
from autograd_lab.export.errors import ExportError
from autograd_lab.export.steps import Step as Step
from autograd_lab.export.trace import Graph, Node, Tensor
from autograd_lab.export.views import View, copy_step, merge_axes, row_major

DENSE_BLOCK = 8  # rows per interleaved block of the float dense kernel (dense_f32.c)

def lower(graph: Graph) -> list[Step]:
    """Turn the graph's nodes into kernel steps, in execution order.

    Raises:
        ExportError: naming the op and node, for shapes the kernels do not handle (matmul with batch axes, broadcast
            needing more than 3 axes, a conv on a batch of images), an unsupported conv or pool configuration, or a
            batch norm that does not follow a conv or dense layer.
    """
    return Lowering(graph).run()


class Lowering:
    """The state of one lowering pass: steps so far, fused nodes, and which tensors are stored channels last."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.steps: list[Step] = []
        self.fused: set[int] = set()
        self.views: dict[int, View] = {}  # id of a reshape, transpose or slice output -> where its data lies
        self.hwc: dict[int, tuple[int, int, int]] = {}  # tensor id -> (C, H, W) of data stored channels last
        self._chw: dict[tuple[int, tuple[int, ...]], Tensor] = {}
        self._copies: dict[int, Tensor] = {}

    def run(self) -> list[Step]:
        for node in self.graph.nodes:
            if id(node) in self.fused:
                continue
            where = f"{node.op_class} at node {node.index} ({node.output.name!r})"
            if node.kind in ("reshape", "transpose", "slice"):
                self._view_node(node, where)
                continue
            if node.kind in ("conv2d", "max_pool2d", "avg_pool2d"):
                node = self._whole_inputs(self._resolved(node, keep_hwc=True))
                self.steps.append(lower_conv(self, node, where) if node.kind == "conv2d"
                                  else lower_pool(self, node, where))
                continue
            if node.kind == "batch_norm":
                raise ExportError(f"{where}: the exporter folds batch norm into the conv or dense layer right before "
                                  "it, and this one follows something else")
            if node.kind == "matmul" and _batched(node):
                self.steps.append(lower_bmm(self, self._resolved(node, keep_hwc=False), where))
                continue
            if node.kind in _ELEMENTWISE:
                node = self._resolved(node, keep_hwc=True)
                if node.inputs[0].shape == node.output.shape and self.is_hwc(node.inputs[0]):
                    self.hwc[id(node.output)] = self.hwc[id(node.inputs[0])]
            elif node.kind == "matmul":
                node = self._resolved(node, keep_hwc=True)
            else:
                node = self._resolved(node, keep_hwc=False)
            step = self._plain(self._whole_inputs(node), where)
            if step.output is self.graph.output and self.is_hwc(step.output):
                # an elementwise op on channels-last data is the model's output: compute, then reorder
                del self.hwc[id(step.output)]
                tmp = Tensor(f"{step.output.name}_hwc", step.output.shape, "act")
                self.hwc[id(tmp)] = self.hwc_of(step.inputs[0])
                step.output = tmp
                self.steps.append(step)
                self.steps.append(self._to_chw_step(tmp, self.graph.output))
                continue
            self.steps.append(step)
        for step in self.steps:
            step.inputs = [self.storage(t) for t in step.inputs]
        return self.steps

    # -- layouts -------------------------------------------------------------------------------------------------
    def is_hwc(self, t: Tensor) -> bool:
        """Whether ``t``'s data is stored channels last."""
        return id(t) in self.hwc

    def hwc_of(self, t: Tensor) -> tuple[int, int, int]:
        return self.hwc[id(t)]

    def emit_hwc(self, step: Step, chw: tuple[int, int, int]) -> Step:
        """Mark a conv/pool step's output as channels last; if it is the model's output, write it to a temporary
        and return the step, queueing a reorder into the caller's NCHW output after it."""
        out = step.output
        if out is self.graph.output and chw[0] > 1:
            tmp = Tensor(f"{out.name}_hwc", out.shape, "act")
            self.hwc[id(tmp)] = chw
            step.output = tmp
            self.steps.append(step)
            return self._to_chw_step(tmp, out)
        if chw[0] > 1:
            self.hwc[id(out)] = chw
        return step

    def _to_chw_step(self, src: Tensor, dst: Tensor) -> Step:
        c, h, w = self.hwc[id(src)]
        return Step("to_chw", [src], dst, {"c": c, "h": h, "w": w}, f"NCHW order of {src.name!r}")

    def _chw_copy(self, t: Tensor, shape: tuple[int, ...]) -> Tensor:
        key = (id(self.storage(t)), shape)
        if key not in self._chw:
            new = Tensor(f"{t.name}_chw", shape, "act")
            self.steps.append(self._to_chw_step(t, new))
            self._chw[key] = new
        return self._chw[key]

    def _view_node(self, node: Node, where: str) -> None:
        """A reshape, transpose or slice: a view of its input's data (no step), or a copy when it is the output."""
        src = node.inputs[0]
        if self.is_hwc(src):
            if node.kind == "reshape" and node.output is self.graph.output:
                self.steps.append(self._to_chw_step(src, node.output))
                return
            if node.kind == "reshape" and len(node.output.shape) == 2:
                # A flatten of channels-last data stays channels last (the next dense layer permutes its weights).
                self.hwc[id(node.output)] = self.hwc_of(src)
                self.views[id(node.output)] = View(self.storage(src), 0, node.output.shape,
                                                   row_major(node.output.shape))
                return
            src = self._chw_copy(src, src.shape)  # any other view of it reads the NCHW order
        view = self.view(src)
        new: View | None
        if node.kind == "transpose":
            new = view.transpose(node.attrs.get("axes"))
        elif node.kind == "slice":
            a = node.attrs
            new = view.slice(int(a["start"]), int(a["stop"]), int(a.get("axis", -1)), int(a.get("step", 1)))
        else:
            new = view.reshape(node.output.shape)
            if new is None:  # the source's elements are not evenly spaced for this shape: gather them first
                new = View.whole(self._whole(src)).reshape(node.output.shape)
        assert new is not None and new.shape == node.output.shape, (new, node.output.shape)
        if node.output is self.graph.output:
            self.steps.append(copy_step(new, node.output, f"{where}: copy of {src.name!r}"))
            return
        # The output tensor stands for the same data under its new shape: the shape guides the lowering of its
        # readers, and the steps read the source's buffer (see storage() and view()).
        self.views[id(node.output)] = new

    def view(self, t: Tensor) -> View:
        """Where ``t``'s elements lie: a view into another tensor's buffer, or ``t`` itself."""
        return self.views.get(id(t)) or View.whole(t)

    def storage(self, t: Tensor) -> Tensor:
        """The tensor whose buffer holds ``t``'s data (``t`` itself unless it is a view)."""
        return self.view(t).base

    def _whole(self, t: Tensor) -> Tensor:
        """``t`` if its view is its buffer in row-major order, else a contiguous copy of it (made once)."""
        view = self.view(t)
        if view.is_whole:
            return t
        if id(t) not in self._copies:
            copy = Tensor(f"{t.name}_contiguous", t.shape, "act")
            self.steps.append(copy_step(view, copy, f"contiguous copy of {t.name!r}"))
            self._copies[id(t)] = copy
        return self._copies[id(t)]

    def _whole_inputs(self, node: Node) -> Node:
        """The node with every input that is a strided or partial view replaced by a contiguous copy (the plain
        kernels read contiguous arrays)."""
        inputs = [self._whole(t) for t in node.inputs]
        if all(a is b for a, b in zip(inputs, node.inputs)):
            return node
        return Node(node.index, node.kind, node.op_class, inputs, node.output, node.attrs)

    def _resolved(self, node: Node, keep_hwc: bool) -> Node:
        """The node with channels-last inputs replaced by NCHW copies unless ``keep_hwc``."""
        if keep_hwc or not any(self.is_hwc(t) for t in node.inputs):
            return node
        inputs = [self._chw_copy(t, t.shape) if self.is_hwc(t) else t for t in node.inputs]
        return Node(node.index, node.kind, node.op_class, inputs, node.output, node.attrs)

    def sole_consumer(self, t: Tensor) -> Node | None:
        """The only node that reads ``t`` when ``t`` is not the model's output, else None."""
        return _sole_consumer(self.graph, t)

    # -- everything but conv and pooling ---------------------------------------------------------------------------
    def _plain(self, node: Node, where: str) -> Step:
        if node.kind == "matmul":
            a = node.inputs[0]
            if self.is_hwc(a):
                if not (node.inputs[1].kind == "const" and len(a.shape) == 2 and not node.attrs.get("transpose_a")):
                    node = Node(node.index, node.kind, node.op_class,
                                [self._chw_copy(a, a.shape), node.inputs[1]], node.output, node.attrs)
            step = _matmul(node, where)
            if step.kind == "dense":
                if self.is_hwc(step.inputs[0]):
                    perm = hwc_permutation(*self.hwc_of(step.inputs[0]))
                    step.params["weight"] = np.ascontiguousarray(step.params["weight"][:, perm])
                _fuse_epilogue(self.graph, step, self.fused)
            return step
        if node.kind in ("add", "mul"):
            return _broadcast(node, where)
        if node.kind == "mean":
            return _mean(node, where)
        if node.kind == "gelu":
            if node.attrs.get("approximate") != "tanh":
                raise ExportError(f"{where}: GELUOp(approximate={node.attrs.get('approximate')!r}) is not supported "
                                  "by the C kernels; they compute the tanh form (approximate='tanh')")
            return Step("gelu", node.inputs, node.output, {"n": node.output.size}, where)
        if node.kind in ("softmax", "log_softmax"):
            return _softmax(node, where)
        if node.kind == "layer_norm":
            x = node.inputs[0]
            n = x.shape[-1]
            return Step("layer_norm", node.inputs, node.output,
                        {"rows": x.size // n, "n": n, "eps": float(node.attrs.get("eps", 1e-5))}, where)
        if node.kind == "leaky_relu":
            return Step("leaky_relu", node.inputs, node.output,
                        {"n": node.output.size, "slope": float(node.attrs["slope"])}, where)
        return Step(node.kind, node.inputs, node.output, {"n": node.output.size}, where)


_ELEMENTWISE = frozenset({"relu", "leaky_relu", "sigmoid", "tanh"})


def _batched(node: Node) -> bool:
    """Whether a MatMulOp has batch axes (an operand of more than 2 dimensions) and is not a dense layer applied
    to every row of its input (a constant matrix on the right)."""
    a, b = node.inputs
    if len(a.shape) <= 2 and len(b.shape) <= 2:
        return False
    return not (b.kind == "const" and len(b.shape) == 2 and a.kind != "const" and not node.attrs.get("transpose_a"))


def _as_matrix(t: Tensor, transpose: bool, left: bool, where: str) -> tuple[int, int, int, int]:
    """Rows, columns and the two element strides of op(t), as np.matmul sees it (a vector is a row on the left and a
    column on the right; the transpose flag applies to matrices only)."""
    if len(t.shape) == 1:
        (k,) = t.shape
        return (1, k, 0, 1) if left else (k, 1, 1, 0)
    if len(t.shape) > 2 and left and not transpose:  # the rows of every leading index, one after another
        return (t.size // t.shape[-1], t.shape[-1], t.shape[-1], 1)
    if len(t.shape) != 2:
        raise ExportError(f"{where}: operand {t.name!r} has shape {t.shape}; the C kernels handle matrices and "
                          "vectors, not batch axes")
    r, c = t.shape
    return (c, r, 1, c) if transpose else (r, c, c, 1)


def _matmul(node: Node, where: str) -> Step:
    a, b = node.inputs
    n, k, sa0, sa1 = _as_matrix(a, bool(node.attrs.get("transpose_a")), True, where)
    k2, m, sb0, sb1 = _as_matrix(b, bool(node.attrs.get("transpose_b")), False, where)
    if k != k2:
        raise ExportError(f"{where}: inner dimensions differ ({k} vs {k2})")
    macs = n * k * m
    if a.kind != "const" and b.kind == "const" and n == 1 and sa1 == 1:
        w = _strided(b.value, k, m, sb0, sb1).T  # W[j][p] = B[p][j]
        return _dense_step(node, a, w, b.name, where, macs)
    if a.kind != "const" and b.kind == "const" and sa1 == 1 and sa0 == k:  # each row of A through the layer
        w = _strided(b.value, k, m, sb0, sb1).T
        return _dense_step(node, a, w, b.name, where, macs, rows=n)
    if a.kind == "const" and b.kind != "const" and m == 1 and sb0 == 1:
        w = _strided(a.value, n, k, sa0, sa1)  # W[i][p] = A[i][p]
        return _dense_step(node, b, w, a.name, where, macs)
    params = {"n": n, "k": k, "m": m, "sa0": sa0, "sa1": sa1, "sb0": sb0, "sb1": sb1}
    return Step("matmul", [a, b], node.output, params, where, macs)


def _strided(value: np.ndarray | None, rows: int, cols: int, s0: int, s1: int) -> np.ndarray:
    flat = np.asarray(value, dtype=np.float32).ravel()
    idx = np.arange(rows)[:, None] * s0 + np.arange(cols)[None, :] * s1
    return flat[idx]


def _dense_step(node: Node, x: Tensor, w: np.ndarray, w_name: str, where: str, macs: int, rows: int = 1) -> Step:
    m, k = w.shape
    params: dict[str, Any] = {"rows": rows, "k": k, "m": m, "weight": np.ascontiguousarray(w), "weight_name": w_name,
                                 "bias": None, "bias_name": None, "act": 0, "slope": 0.0}
    return Step("dense", [x], node.output, params, where, macs)


def _fuse_epilogue(graph: Graph, step: Step, fused: set[int]) -> None:
    """Fold a bias AddOp and then a ReLU / leaky ReLU that follow the dense step into it, when nothing else reads
    the intermediate tensor (and it is not the model's output)."""
    m = int(step.params["m"])
    nxt = _sole_consumer(graph, step.output)
    if nxt is not None and nxt.kind == "add" and nxt.output.shape == step.output.shape:
        other = nxt.inputs[1] if nxt.inputs[0] is step.output else nxt.inputs[0]
        value = None if other.kind != "const" or other is step.output else np.asarray(other.value)
        if value is not None and value.size in (1, m) and value.shape[-1:] in ((1,), (m,)) and value.ndim <= len(
                step.output.shape):  # one value per output column, the same for every row
            bias = np.broadcast_to(value.reshape(-1), (m,))
            step.params["bias"] = np.ascontiguousarray(bias, dtype=np.float32)
            step.params["bias_name"] = other.name
            step.where += f" + {nxt.op_class} at node {nxt.index}"
            step.output = nxt.output
            fused.add(id(nxt))
            nxt = _sole_consumer(graph, step.output)
    if nxt is not None and nxt.kind in ("relu", "leaky_relu"):
        step.params["act"] = 1 if nxt.kind == "relu" else 2
        step.params["slope"] = float(nxt.attrs.get("slope", 0.0)) if nxt.kind == "leaky_relu" else 0.0
        step.where += f" + {nxt.op_class} at node {nxt.index}"
        step.output = nxt.output
        fused.add(id(nxt))


def _sole_consumer(graph: Graph, t: Tensor) -> Node | None:
    users = graph.consumers(t)
    if len(users) != 1 or t is graph.output:
        return None
    return users[0]


def _broadcast(node: Node, where: str) -> Step:
    """An ``add`` or ``mul`` step: y = a (+ or ·) b with NumPy broadcasting, over at most 3 loop axes."""
    a, b = node.inputs
    out = node.output.shape
    dims, (sa, sb) = merge_axes(list(out), _broadcast_strides(a.shape, out), _broadcast_strides(b.shape, out))
    if len(dims) > 3:
        raise ExportError(f"{where}: broadcasting {a.shape} with {b.shape} needs {len(dims)} loop axes; the C "
                          "kernel handles 3")
    pad = 3 - len(dims)
    dims, sa, sb = [1] * pad + dims, [0] * pad + sa, [0] * pad + sb
    params = {"dims": dims, "sa": sa, "sb": sb, "a_full": a.shape == out and a.kind != "const"}
    return Step(node.kind, [a, b], node.output, params, where)


def _mean(node: Node, where: str) -> Step:
    """A ``mean`` step over a run of neighbouring axes of a contiguous input: outer x n x inner -> outer x inner."""
    shape = node.inputs[0].shape
    axis = node.attrs.get("axis")
    axes = sorted(range(len(shape))) if axis is None else sorted(
        a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if axes != list(range(axes[0], axes[-1] + 1)):
        raise ExportError(f"{where}: a mean over the axes {tuple(axes)} of {shape}, which are not neighbours, is not "
                          "supported by the C kernel")
    prod = lambda dims: int(np.prod(dims, dtype=np.int64))  # noqa: E731
    params = {"outer": prod(shape[:axes[0]]), "n": prod(shape[axes[0]:axes[-1] + 1]),
              "inner": prod(shape[axes[-1] + 1:])}
    return Step("mean", node.inputs, node.output, params, where)


def _broadcast_strides(shape: tuple[int, ...], out: tuple[int, ...]) -> list[int]:
    """Element strides of a row-major array of ``shape`` seen through NumPy broadcasting to ``out`` (0 = repeated)."""
    shape = (1,) * (len(out) - len(shape)) + tuple(shape)
    strides, s = [0] * len(out), 1
    for i in range(len(out) - 1, -1, -1):
        strides[i] = 0 if shape[i] == 1 and out[i] != 1 else s
        s *= shape[i]
    return strides


def _softmax(node: Node, where: str) -> Step:
    shape = node.inputs[0].shape
    axis = int(node.attrs.get("axis", -1))
    if not -len(shape) <= axis < len(shape):
        raise ExportError(f"{where}: axis {axis} is out of range for shape {shape}")
    axis %= len(shape)
    params = {"outer": int(np.prod(shape[:axis], dtype=np.int64)), "n": shape[axis],
              "inner": int(np.prod(shape[axis + 1:], dtype=np.int64)), "log": int(node.kind == "log_softmax")}
    return Step(node.kind, node.inputs, node.output, params, where)
