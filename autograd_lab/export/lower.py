"""Lower a traced :class:`Graph` to kernel steps: pick a kernel per node, fuse layers, lay weights out for the loops.

A ``MatMulOp`` of an activation vector by a constant matrix becomes a *dense* step (the fast kernel), which absorbs a
following bias ``AddOp`` and a ReLU or leaky ReLU when nothing else reads the intermediate values. Every other node
keeps its own step. Steps name their tensors; buffers are assigned later by :mod:`autograd_lab.export.memory`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autograd_lab.export.conv import hwc_permutation, lower_conv, lower_pool
from autograd_lab.export.errors import ExportError
from autograd_lab.export.steps import Step as Step
from autograd_lab.export.trace import Graph, Node, Tensor

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
        self.view_of: dict[int, Tensor] = {}  # reshape output id -> the tensor holding its data (reshape is free)
        self.hwc: dict[int, tuple[int, int, int]] = {}  # tensor id -> (C, H, W) of data stored channels last
        self._chw: dict[tuple[int, tuple[int, ...]], Tensor] = {}

    def run(self) -> list[Step]:
        for node in self.graph.nodes:
            if id(node) in self.fused:
                continue
            where = f"{node.op_class} at node {node.index} ({node.output.name!r})"
            if node.kind == "reshape":
                self._reshape(node)
                continue
            if node.kind in ("conv2d", "max_pool2d", "avg_pool2d"):
                node = self._resolved(node, keep_hwc=True)
                self.steps.append(lower_conv(self, node, where) if node.kind == "conv2d"
                                  else lower_pool(self, node, where))
                continue
            if node.kind == "batch_norm":
                raise ExportError(f"{where}: the exporter folds batch norm into the conv or dense layer right before "
                                  "it, and this one follows something else")
            if node.kind in _ELEMENTWISE:
                node = self._resolved(node, keep_hwc=True)
                if node.inputs[0].shape == node.output.shape and self.is_hwc(node.inputs[0]):
                    self.hwc[id(node.output)] = self.hwc[id(node.inputs[0])]
            elif node.kind == "matmul":
                node = self._resolved(node, keep_hwc=True)
            else:
                node = self._resolved(node, keep_hwc=False)
            step = self._plain(node, where)
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

    def _reshape(self, node: Node) -> None:
        src = node.inputs[0]
        if node.output is self.graph.output:
            if self.is_hwc(src):
                self.steps.append(self._to_chw_step(src, node.output))
            else:
                self.steps.append(Step("to_chw", [src], node.output, {"c": 1, "h": 1, "w": node.output.size},
                                       f"copy of {src.name!r}"))
            return
        # A flatten of channels-last data stays channels last (the next dense layer permutes its weights);
        # reshaping it into another image shape needs the NCHW order.
        if self.is_hwc(src) and len(node.output.shape) != 2:
            src = self._chw_copy(src, src.shape)
        if self.is_hwc(src):
            self.hwc[id(node.output)] = self.hwc_of(src)
        # The reshape's output tensor stands for the same data under its new shape (a view): the shape guides the
        # lowering of its readers, and the steps read the source tensor (see storage()).
        self.view_of[id(node.output)] = self.storage(src)

    def storage(self, t: Tensor) -> Tensor:
        """The tensor whose buffer holds ``t``'s data (``t`` itself unless it is a reshape's view)."""
        return self.view_of.get(id(t), t)

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
        if node.kind == "add":
            return _add(node, where)
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


def _as_matrix(t: Tensor, transpose: bool, left: bool, where: str) -> tuple[int, int, int, int]:
    """Rows, columns and the two element strides of op(t), as np.matmul sees it (a vector is a row on the left and a
    column on the right; the transpose flag applies to matrices only)."""
    if len(t.shape) == 1:
        (k,) = t.shape
        return (1, k, 0, 1) if left else (k, 1, 1, 0)
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
    if a.kind == "const" and b.kind != "const" and m == 1 and sb0 == 1:
        w = _strided(a.value, n, k, sa0, sa1)  # W[i][p] = A[i][p]
        return _dense_step(node, b, w, a.name, where, macs)
    params = {"n": n, "k": k, "m": m, "sa0": sa0, "sa1": sa1, "sb0": sb0, "sb1": sb1}
    return Step("matmul", [a, b], node.output, params, where, macs)


def _strided(value: np.ndarray | None, rows: int, cols: int, s0: int, s1: int) -> np.ndarray:
    flat = np.asarray(value, dtype=np.float32).ravel()
    idx = np.arange(rows)[:, None] * s0 + np.arange(cols)[None, :] * s1
    return flat[idx]


def _dense_step(node: Node, x: Tensor, w: np.ndarray, w_name: str, where: str, macs: int) -> Step:
    m, k = w.shape
    params: dict[str, Any] = {"k": k, "m": m, "weight": np.ascontiguousarray(w), "weight_name": w_name,
                                 "bias": None, "bias_name": None, "act": 0, "slope": 0.0}
    return Step("dense", [x], node.output, params, where, macs)


def _fuse_epilogue(graph: Graph, step: Step, fused: set[int]) -> None:
    """Fold a bias AddOp and then a ReLU / leaky ReLU that follow the dense step into it, when nothing else reads
    the intermediate tensor (and it is not the model's output)."""
    m = int(step.params["m"])
    nxt = _sole_consumer(graph, step.output)
    if nxt is not None and nxt.kind == "add" and nxt.output.shape == step.output.shape:
        other = nxt.inputs[1] if nxt.inputs[0] is step.output else nxt.inputs[0]
        if other.kind == "const" and other is not step.output:
            bias = np.broadcast_to(np.asarray(other.value), step.output.shape).reshape(m)
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


def _add(node: Node, where: str) -> Step:
    a, b = node.inputs
    out = node.output.shape
    dims = list(out)
    sa, sb = _broadcast_strides(a.shape, out), _broadcast_strides(b.shape, out)
    # Drop axes of length 1, then merge neighbouring axes that are contiguous for both operands.
    keep = [i for i, d in enumerate(dims) if d != 1]
    dims, sa, sb = [dims[i] for i in keep], [sa[i] for i in keep], [sb[i] for i in keep]
    i = len(dims) - 2
    while i >= 0:
        if sa[i] == sa[i + 1] * dims[i + 1] and sb[i] == sb[i + 1] * dims[i + 1]:
            dims[i:i + 2] = [dims[i] * dims[i + 1]]
            sa[i:i + 2] = [sa[i + 1]]
            sb[i:i + 2] = [sb[i + 1]]
        i -= 1
    if len(dims) > 3:
        raise ExportError(f"{where}: broadcasting {a.shape} with {b.shape} needs {len(dims)} loop axes; the C "
                          "kernel handles 3")
    pad = 3 - len(dims)
    dims, sa, sb = [1] * pad + dims, [0] * pad + sa, [0] * pad + sb
    params = {"dims": dims, "sa": sa, "sb": sb, "a_full": a.shape == out and a.kind != "const"}
    return Step("add", [a, b], node.output, params, where)


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
