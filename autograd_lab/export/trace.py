"""Trace a model into a small graph description that the C generator can walk.

The model runs once, in evaluation mode, on a placeholder input Variable; the resulting graph is walked leaves first
(:meth:`Engine.topo_sort`). Every node that depends on the input becomes a :class:`Node`; every leaf and every node
that does not depend on the input (a constant sub-expression) becomes a constant :class:`Tensor` whose value is
baked into flash. Dropout is the identity at inference, so its output is the very same tensor as its input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograd_lab.engine import Engine
from autograd_lab.export.errors import ExportError
from autograd_lab.export.floats import check_finite
from autograd_lab.modes import eval_mode
from autograd_lab.variable import Variable

#: Operator class name -> the kind of C kernel that computes it at inference.
SUPPORTED_OPS = {
    "MatMulOp": "matmul",
    "AddOp": "add",
    "ReLUOp": "relu",
    "LeakyReLUOp": "leaky_relu",
    "SigmoidOp": "sigmoid",
    "TanhOp": "tanh",
    "SoftmaxOp": "softmax",
    "LogSoftmaxOp": "log_softmax",
    "LayerNormOp": "layer_norm",
    "DropoutOp": "identity",
    "Conv2DOp": "conv2d",
    "MaxPool2DOp": "max_pool2d",
    "AvgPool2DOp": "avg_pool2d",
    "BatchNormOp": "batch_norm",
    "ReshapeOp": "reshape",
    "FlattenOp": "reshape",
}


@dataclass(eq=False)
class Tensor:
    """A value of the traced graph.

    Attributes:
        name: a readable name (the Variable's name, or the producing op and node index).
        shape: the shape at the traced input size.
        kind: ``"input"``, ``"const"`` (value baked into flash) or ``"act"`` (an activation computed at run time).
        value: the float32 value of a constant (None otherwise).
        dtype: ``"f32"`` (float), or ``"q16"`` for int8-quantized activations packed as int16 pairs (``size``
            counts 32-bit words then).
    """

    name: str
    shape: tuple[int, ...]
    kind: str
    value: np.ndarray | None = None
    dtype: str = "f32"

    @property
    def size(self) -> int:
        """Number of elements."""
        return int(np.prod(self.shape, dtype=np.int64))


@dataclass(eq=False)
class Node:
    """One operation at inference: ``output = kind(*inputs; attrs)``. ``index`` is its position in topological order."""

    index: int
    kind: str
    op_class: str
    inputs: list[Tensor]
    output: Tensor
    attrs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Graph:
    """A traced graph: its input and output tensors and the nodes in an order where producers come first."""

    input: Tensor
    output: Tensor
    nodes: list[Node]

    def consumers(self, tensor: Tensor) -> list[Node]:
        """The nodes that read ``tensor`` (a node appears once per use)."""
        return [n for n in self.nodes for t in n.inputs if t is tensor]


def trace(model: Callable[[Variable], Variable], input_shape: tuple[int, ...]) -> Graph:
    """Run ``model`` once on a zero placeholder of ``input_shape`` (float32, evaluation mode) and trace the graph.

    Args:
        model: anything that maps a Variable to a Variable (an ``nn`` module, a function of ops).
        input_shape: the input shape of one call of the generated C function, e.g. ``(1, 784)``.

    Raises:
        ExportError: if ``input_shape`` is not a non-empty tuple of positive integers (a zero-size input would give
            C that reads nothing), or the model does not return a Variable built from the input by supported ops.
    """
    check_input_shape(input_shape)
    x = Variable.from_numpy(np.zeros(input_shape, dtype=np.float32), name="input")
    with eval_mode():
        y = model(x)
    if not isinstance(y, Variable):
        raise ExportError(f"the model returned {type(y).__name__}, expected a Variable")
    return graph_from_root(y, x)


def check_input_shape(input_shape: object) -> tuple[int, ...]:
    """Return ``input_shape`` as a tuple if it is a non-empty sequence of positive integers.

    Raises:
        ExportError: naming the shape, otherwise (``()``, ``(0, 3)``, ``(-1, 4)``, ``(2.5,)``, ``"784"``...).
    """
    if not (isinstance(input_shape, (tuple, list)) and len(input_shape) > 0 and all(
            isinstance(d, (int, np.integer)) and not isinstance(d, (bool, np.bool_)) and d > 0 for d in input_shape)):
        raise ExportError(f"input_shape {input_shape!r} is not exportable: it must be a non-empty tuple of positive "
                          "integers (the C function reads that many floats; a zero-size input reads nothing)")
    return tuple(int(d) for d in input_shape)


def graph_from_root(root: Variable, input: Variable) -> Graph:
    """Describe the graph that computes ``root`` from ``input`` (already built, e.g. by hand from ops).

    Every other leaf is a constant. Dropout nodes must have been built in evaluation mode, where they are the
    identity; a dropout built in training mode is refused, because its random mask is not part of the model.

    Raises:
        ExportError: naming the op class and the node (its name or topological index) for an unsupported op or a
            training-mode dropout; if ``root`` does not depend on ``input``; if a constant holds NaN or inf; or,
            naming the shape, if the input is 0-d or any computed value (input, output, intermediate) has no element.
    """
    if np.ndim(input.data) == 0 or input.data.size == 0:
        raise ExportError(f"the input Variable has shape {tuple(input.shape)}, which is not exportable: the C "
                          "function needs at least one input value along at least one axis")
    order = Engine.topo_sort(root)
    if not any(v is input for v in order):
        raise ExportError("the output does not depend on the input Variable: nothing to compute at run time")
    tensors: dict[int, Tensor] = {id(input): Tensor(input.name or "input", tuple(input.shape), "input")}
    nodes: list[Node] = []
    for index, v in enumerate(order):
        if id(v) in tensors:
            continue
        live_parents = [p for p in v.parents if tensors.get(id(p)) is not None and tensors[id(p)].kind != "const"]
        if v.op is None or not live_parents:
            tensors[id(v)] = _constant(v, index)
            continue
        cls = type(v.op).__name__
        kind = SUPPORTED_OPS.get(cls)
        where = f"node {index}" + (f" ({v.name!r})" if v.name else "")
        if kind is None:
            raise ExportError(
                f"{cls} at {where} is not supported by the C exporter; supported ops: {', '.join(SUPPORTED_OPS)}"
            )
        inputs = [tensors[id(p)] for p in v.parents]
        if kind == "identity":
            if _dropout_active(v):
                raise ExportError(f"{cls} at {where} was traced in training mode; trace under eval_mode()")
            tensors[id(v)] = inputs[0]
            continue
        if v.data.size == 0:
            raise ExportError(f"{cls} at {where} computes a value of shape {tuple(v.shape)} with no element: "
                              "the C code would read or write nothing")
        out = Tensor(v.name or f"{kind}_{index}", tuple(v.shape), "act")
        nodes.append(Node(index, kind, cls, inputs, out, dict(v.op.config())))
        tensors[id(v)] = out
    output = tensors[id(root)]
    return Graph(tensors[id(input)], output, nodes)


def _constant(v: Variable, index: int) -> Tensor:
    name = v.name or f"const_{index}"
    check_finite(name, v.data)
    value = np.array(v.data, dtype=np.float32)
    value.setflags(write=False)
    return Tensor(name, tuple(v.shape), "const", value)


def _dropout_active(v: Variable) -> bool:
    # In evaluation mode DropoutOp returns its input array itself.
    return v.data is not v.parents[0].data
