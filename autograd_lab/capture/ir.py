"""The captured form: a Program of Values and Nodes, shared by replay (NumPy) and the C exporter.

A Program is what one call of a function of Variables did, written down once: every value it used (``Value``: an
input placeholder, a Parameter, a constant or the output of a node) and every operator call in the order it ran
(``Node``), plus, when a backward pass was captured, the order in which the nodes' ``backward`` runs and which
inputs' gradients each one must produce. Values are referred to by their index in ``Program.values``.

The operator instances are the ones the function created; replay calls their ``forward`` and ``backward`` again, so
a Program is tied to one model's layers and Parameters (a Parameter is held by reference: replay reads its current
value, so optimizer updates are seen).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from autograd_lab.operator import Operator
    from autograd_lab.variable import Variable

#: Kinds of Value.
INPUT, PARAM, CONST, NODE = "input", "param", "const", "node"


@dataclass(eq=False)
class Value:
    """One array the program reads or computes.

    Attributes:
        index: position in ``Program.values``.
        kind: ``"input"`` (a placeholder bound on every run), ``"param"`` (a Parameter, read at run time),
            ``"const"`` (any other leaf, read at run time from its Variable) or ``"node"`` (a node's output).
        shape, dtype: as captured; replay refuses inputs of another shape or dtype.
        name: the Variable's name, if it had one.
        leaf: the Variable of a param or const (None for inputs and node outputs).
        data: the value at capture time, kept only when asked for (``capture(keep_values=True)``, the exporter's
            constant folding); None otherwise.
    """

    index: int
    kind: str
    shape: tuple[int, ...]
    dtype: np.dtype
    name: str | None = None
    leaf: Variable | None = None
    data: np.ndarray | None = None

    def label(self) -> str:
        """A short readable name: the Variable's name, else ``kind`` and index (``node7``)."""
        return str(self.name) if self.name else f"{self.kind}{self.index}"  # a name need not be a str


@dataclass(eq=False)
class Node:
    """One operator call: ``values[output] = op.forward(*[values[i] for i in inputs])``.

    Attributes:
        index: position in ``Program.nodes`` (the order the calls ran in, which is a topological order).
        op: the operator instance (reused by replay).
        inputs: value indices, in input order (an input used twice appears twice).
        output: the value index of the result.
        recorded: False if the call ran under ``no_grad()`` (its output is then a constant for backward).
        needs: for a node on the backward path, which inputs' gradients its ``backward`` must return (passed to
            the op's ``run_backward`` on every replay); None for a node that backward does not visit.
    """

    index: int
    op: Operator
    inputs: tuple[int, ...]
    output: int
    recorded: bool = True
    needs: tuple[bool, ...] | None = None

    @property
    def op_class(self) -> str:
        """The operator's class name, e.g. ``"MatMulOp"``."""
        return type(self.op).__name__


@dataclass(eq=False)
class Program:
    """A captured call: values, nodes in run order, and (optionally) the backward schedule.

    Attributes:
        values: every Value, indexed by ``Value.index``.
        nodes: the operator calls in the order they ran.
        inputs: value indices of the placeholders, in the order of the function's arguments.
        outputs: value indices of what the function returned, in order.
        backward_order: node indices in the order backward visits them (root first, each node after all its
            consumers, as :meth:`Engine.backward_order`); empty for a forward-only capture.
        wrt: value indices (Parameters or inputs) that receive gradients, in the order they were asked for.
        training: ``Config.is_training`` at capture time.
        returns_tuple: whether the function returned a tuple or list (else one Variable).
    """

    values: list[Value]
    nodes: list[Node]
    inputs: list[int]
    outputs: list[int]
    backward_order: list[int] = field(default_factory=list)
    wrt: list[int] = field(default_factory=list)
    training: bool = True
    returns_tuple: bool = False

    @property
    def loss(self) -> int | None:
        """The value index backward starts from (the first output), or None for a forward-only capture."""
        return self.outputs[0] if self.backward_order or self.wrt else None

    def signature(self) -> tuple[tuple[tuple[int, ...], str], ...]:
        """The input shapes and dtypes this program was captured for (replay needs exactly these)."""
        return tuple((self.values[i].shape, self.values[i].dtype.str) for i in self.inputs)

    def structure(self) -> tuple[object, ...]:
        """Everything that makes two captures the same program, apart from values: op classes, their
        configurations, the wiring, the leaves used and the shapes. Two captures of a function whose graph depends on
        the data differ here (see :func:`autograd_lab.capture.check_same_structure`)."""
        leaves = tuple((v.kind, id(v.leaf) if v.kind == PARAM else None, v.shape, v.dtype.str) for v in self.values
                       if v.kind != NODE)
        nodes = tuple((n.op_class, repr(n.op.config()), n.inputs, n.output, n.recorded) for n in self.nodes)
        return leaves, nodes, tuple(self.inputs), tuple(self.outputs), tuple(self.backward_order), tuple(self.wrt)

    def describe(self) -> str:
        """A listing, one line per node: ``node3 (64, 128) float32 = ReLUOp(node2)``, then the backward order."""
        lines = []
        for i in self.inputs:
            v = self.values[i]
            lines.append(f"input {v.label()} {v.shape} {v.dtype}")
        for n in self.nodes:
            out = self.values[n.output]
            args = ", ".join(self.values[i].label() for i in n.inputs)
            flag = "" if n.recorded else "   # no_grad"
            lines.append(f"{out.label()} {out.shape} {out.dtype} = {n.op!r}({args}){flag}")
        lines.append("outputs: " + ", ".join(self.values[i].label() for i in self.outputs))
        if self.backward_order:
            lines.append("backward: " + " -> ".join(self.nodes[i].op_class for i in self.backward_order))
            lines.append("gradients for: " + ", ".join(self.values[i].label() for i in self.wrt))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"Program({len(self.inputs)} input(s), {len(self.nodes)} node(s), "
                f"{'forward and backward' if self.backward_order else 'forward only'})")
