"""Trace a model into a small graph description that the C generator can walk.

The front end is define-and-run's: the model is captured once (:func:`autograd_lab.capture.capture`, evaluation
mode, forward only) into the same Program that replay runs in NumPy, and the Program is lowered here. One
intermediate representation, two back ends. Every node that depends on the input becomes a :class:`Node`; every leaf
and every node that does not depend on the input (a constant sub-expression) becomes a constant :class:`Tensor`
whose value is baked into flash. Dropout is the identity at inference, so its output is the very same tensor as its
input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograd_lab.capture import CaptureError, Program, Value, capture, program_from_graph
from autograd_lab.capture.ir import NODE
from autograd_lab.capture.ir import Node as ProgramNode
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
    "TransposeOp": "transpose",
    "SliceOp": "slice",
    "MulOp": "mul",
    "MeanOp": "mean",
    "GELUOp": "gelu",
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
    """Capture ``model`` on a zero placeholder of ``input_shape`` (float32, evaluation mode, forward only) and
    describe the captured Program for the C generator (:func:`graph_from_program`).

    Args:
        model: anything that maps a Variable to a Variable (an ``nn`` module, a function of ops).
        input_shape: the input shape of one call of the generated C function, e.g. ``(1, 784)``.

    Raises:
        ExportError: if ``input_shape`` is not a non-empty tuple of positive integers (a zero-size input would give
            C that reads nothing), the model does not return a Variable built from the input by supported ops, or it
            breaks the tracing rule of :mod:`autograd_lab.capture` (reads a value while being traced).
    """
    check_input_shape(input_shape)
    x = Variable.from_numpy(np.zeros(input_shape, dtype=np.float32), name="input")
    try:
        with eval_mode():
            program, _ = capture(model, x, backward=False, keep_values=True)
    except CaptureError as exc:
        raise ExportError(f"the model cannot be traced: {exc}") from exc
    return graph_from_program(program)


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

    The graph is first written as a Program (:func:`autograd_lab.capture.program_from_graph`), then lowered like a
    traced one: see :func:`graph_from_program` for the rules and errors.
    """
    if np.ndim(input.data) == 0 or input.data.size == 0:
        raise ExportError(f"the input Variable has shape {tuple(input.shape)}, which is not exportable: the C "
                          "function needs at least one input value along at least one axis")
    return graph_from_program(program_from_graph(root, [input]))


def graph_from_program(program: Program) -> Graph:
    """Describe a forward-only Program with one input and one output for the C generator.

    The input placeholder is the C function's input; every other leaf, and every node that does not depend on the
    input (a constant sub-expression), becomes a constant :class:`Tensor` with its captured value (so the Program
    must keep its values: ``capture(keep_values=True)``). Dropout nodes must have been captured in evaluation
    mode, where they are the identity; a dropout captured in training mode is refused, because its random mask is
    not part of the model. Nodes the output does not need are left out. A node's ``index`` is its position with
    the leaves first (in order of first use), then the nodes in the order they ran.

    Raises:
        ExportError: naming the op class and the node (its name or index) for an unsupported op or a training-mode
            dropout; if the output does not depend on the input; if a constant holds NaN or inf; or, naming the
            shape, if the input is 0-d or any computed value (input, output, intermediate) has no element.
    """
    values = program.values
    if len(program.inputs) != 1 or len(program.outputs) != 1:
        raise ExportError(f"the C exporter takes a function of one input with one output; the program has "
                          f"{len(program.inputs)} input(s) and {len(program.outputs)} output(s)")
    (input_index,), (output_index,) = program.inputs, program.outputs
    source = values[input_index]
    if len(source.shape) == 0 or int(np.prod(source.shape)) == 0:
        raise ExportError(f"the input Variable has shape {source.shape}, which is not exportable: the C "
                          "function needs at least one input value along at least one axis")
    leaves = [v.index for v in values if v.kind != NODE]
    position = {index: k for k, index in enumerate(leaves)}
    for n in program.nodes:
        position[n.output] = len(leaves) + n.index
    needed = _needed_nodes(program, output_index)
    depends = {input_index}
    tensors: dict[int, Tensor] = {input_index: Tensor(source.name or "input", source.shape, "input")}
    nodes: list[Node] = []
    for n in program.nodes:
        if n.index not in needed:
            continue
        out = values[n.output]
        index = position[n.output]
        if not any(i in depends for i in n.inputs):
            tensors[n.output] = _constant(out, index)
            continue
        depends.add(n.output)
        cls = n.op_class
        kind = SUPPORTED_OPS.get(cls)
        where = f"node {index}" + (f" ({out.name!r})" if out.name else "")
        if kind is None:
            raise ExportError(
                f"{cls} at {where} is not supported by the C exporter; supported ops: {', '.join(SUPPORTED_OPS)}"
            )
        inputs = [tensors[i] if i in tensors else _constant(values[i], position[i]) for i in n.inputs]
        for i, t in zip(n.inputs, inputs):
            tensors.setdefault(i, t)
        if kind == "identity":
            if _dropout_active(program, n):
                raise ExportError(f"{cls} at {where} was traced in training mode; trace under eval_mode()")
            tensors[n.output] = inputs[0]
            continue
        if int(np.prod(out.shape)) == 0:
            raise ExportError(f"{cls} at {where} computes a value of shape {out.shape} with no element: "
                              "the C code would read or write nothing")
        tensor = Tensor(out.name or f"{kind}_{index}", out.shape, "act")
        nodes.append(Node(index, kind, cls, inputs, tensor, dict(n.op.config())))
        tensors[n.output] = tensor
    if output_index not in depends:
        raise ExportError("the output does not depend on the input Variable: nothing to compute at run time")
    return Graph(tensors[input_index], tensors[output_index], nodes)


def _needed_nodes(program: Program, output: int) -> set[int]:
    """Indices of the nodes the output depends on (a walk back from it, newest node first)."""
    needed: set[int] = set()
    wanted = {output}
    for n in reversed(program.nodes):
        if n.output in wanted:
            needed.add(n.index)
            wanted.update(n.inputs)
    return needed


def _constant(v: Value, index: int) -> Tensor:
    name = v.name or f"const_{index}"
    if v.data is None:
        raise ExportError(f"the program holds no value for {name}: capture it with keep_values=True")
    check_finite(name, v.data)
    value = np.array(v.data, dtype=np.float32)
    value.setflags(write=False)
    return Tensor(name, v.shape, "const", value)


def _dropout_active(program: Program, node: ProgramNode) -> bool:
    # In evaluation mode DropoutOp returns its input array itself.
    return program.values[node.output].data is not program.values[node.inputs[0]].data
