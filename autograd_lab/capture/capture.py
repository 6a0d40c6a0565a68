"""Capture: run a function of Variables once, recording every operator call into a :class:`Program`.

While capturing, every ``Operator.__call__`` reports to a recorder (``Config.recorder``), so the nodes are written
down in the order they ran, the very order eager execution uses (which keeps random draws, e.g. dropout masks, in
step). Leaves met on the way become Values: the placeholders standing for the arguments, the Parameters and any other
leaf (a constant).

The tracing rule (what a captured function may do), checked while capturing:

* Python code may not look at a value that depends on the arguments or the Parameters: reading ``.data``,
  ``.item()`` or ``.numpy()`` of a placeholder, a Parameter or a node computed during the capture raises
  :class:`CaptureError` at that line. Such a read is how control flow comes to depend on the data (``if
  loss.item() > 1: ...``), and the captured program would freeze whichever branch the first batch took.
  Shapes (``x.shape``) may be read: a program is captured per input shape, and a new shape captures again.
* The function must take every per-step value as an argument: an array it picks up from elsewhere is baked in as a
  constant. And it may not use a node computed outside it (pass the value in instead).
* :class:`~autograd_lab.capture.Plan` captures twice on the first two calls with a given shape and compares the two
  programs' structure, which catches a graph that changes for reasons the read check cannot see (a random choice
  of branch, a counter in a closure).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.capture.errors import CaptureError
from autograd_lab.capture.ir import CONST, INPUT, NODE, PARAM, Node, Program, Value
from autograd_lab.capture.replay import Replay
from autograd_lab.config import Config
from autograd_lab.engine import Engine
from autograd_lab.errors import ShapeError
from autograd_lab.gradients import needed_inputs
from autograd_lab.operator import Operator
from autograd_lab.variable import Parameter, Variable


class _Recorder:
    """Collects Values and Nodes while the function runs (installed as ``Config.recorder`` and
    ``Config.read_hook``)."""

    def __init__(self) -> None:
        self.values: list[Value] = []
        self.nodes: list[Node] = []
        self.slot: dict[int, int] = {}  # id(Variable) -> value index
        self.variables: list[Variable] = []  # by value index; keeps each id unique while capturing
        self.watched: set[int] = set()  # ids of Variables whose value Python must not read

    def add(self, var: Variable, kind: str, *, watch: bool) -> int:
        index = len(self.values)
        leaf = var if kind in (PARAM, CONST) else None
        self.values.append(Value(index, kind, tuple(var.shape), var.dtype, var.name, leaf))
        self.slot[id(var)] = index
        self.variables.append(var)
        if watch:
            self.watched.add(id(var))
        return index

    def value_of(self, var: Variable, op: Operator, position: int) -> int:
        index = self.slot.get(id(var))
        if index is not None:
            return index
        if not var.is_leaf or var.is_released:
            raise CaptureError(
                f"{type(op).__name__} input {position} is {var!r}, computed outside the captured function "
                f"(at {user_callsite() or 'unknown'}); pass its value in as an argument instead"
            )
        is_param = isinstance(var, Parameter)
        return self.add(var, PARAM if is_param else CONST, watch=is_param)

    def record(self, op: Operator, variables: Sequence[Variable], result: Variable) -> None:
        inputs = tuple(self.value_of(v, op, i) for i, v in enumerate(variables))
        output = self.add(result, NODE, watch=True)
        self.nodes.append(Node(len(self.nodes), op, inputs, output, recorded=result.op is op))

    def read(self, var: Variable) -> None:
        if id(var) in self.watched:
            value = self.values[self.slot[id(var)]]
            what = {INPUT: "an argument", PARAM: "a Parameter",
                    NODE: "a value computed from the arguments or Parameters"}[value.kind]
            raise CaptureError(
                f"the captured function read the value of {var!r} ({what}) at {user_callsite() or 'unknown'}. "
                "A captured program replays the same operators on new data, so Python code must not look at values "
                "while capturing: a decision made on the first batch's values would be frozen into the program. "
                "Compute with operators instead, or do not capture this function: call it directly, without Plan or "
                "capture (the command line's `autograd-lab train` has --engine eager for this)"
            )


def capture(fn: Callable[..., Any], *args: Any, wrt: Iterable[Parameter] | None = None, backward: bool = True,
            copy: bool = True, keep_values: bool = False) -> tuple[Program, list[np.ndarray]]:
    """Run ``fn`` once on placeholders holding ``args`` and return its Program and the outputs of this call.

    With ``backward=True`` the first output must have one element (the loss); its backward pass is captured too and
    run once for this call, so the Parameters in ``wrt`` receive their gradients in ``.grad`` exactly as
    ``Engine.backward(loss, inputs=wrt)`` would give them. Capturing is therefore one complete step: the call's
    random draws and state updates (dropout masks, running statistics) happen once, as in eager execution.

    Args:
        fn: a function of Variables returning a Variable or a tuple/list of Variables.
        args: the arguments' values (array-likes), one placeholder each; integer and boolean arrays become float64,
            as with :meth:`Variable.from_numpy`.
        wrt: the Parameters that receive gradients; default: every Parameter the function used, in order of use.
        backward: capture (and run) the backward pass of the first output; False for a forward-only program (the
            C exporter's).
        copy: copy each argument (default). False uses a floating array that owns its memory as it is and marks it
            read-only (as ``Variable.from_numpy(copy=False)``), for mini-batches made for the call. A leaf Variable
            (not a Parameter) is used as the placeholder itself.
        keep_values: store every value of this call in ``Value.data`` (the C exporter folds constants with them).

    Returns:
        The Program and this call's output values (read-only arrays, in the order ``fn`` returned them).

    Raises:
        CaptureError: if ``fn`` breaks the tracing rule (see the module docstring), returns something other than
            Variables, or a capture is already running; TypeError: if an argument is a Parameter or an internal
            node; ValueError: if an item of ``wrt`` is not a Parameter (one the
            function did not use gets no gradient, as with ``Engine.backward(inputs=...)``).
        ShapeError: if the first output has more than one element when ``backward`` is True.
    """
    if Config.recorder is not None:
        raise CaptureError("capture() was called while another capture is running; captures do not nest")
    rec = _Recorder()
    placeholders = []
    for i, a in enumerate(args):
        if isinstance(a, Parameter) or (isinstance(a, Variable) and not a.is_leaf):
            raise TypeError(f"argument {i} of capture() is {a!r}; arguments are the per-call values (arrays or leaf "
                            "Variables), while Parameters are used by the function directly and read at replay")
        x = a if isinstance(a, Variable) else Variable.from_numpy(a, name=f"input{i}", copy=copy)
        placeholders.append(x)
        rec.add(x, INPUT, watch=True)
    Config.recorder = rec.record
    Config.read_hook = rec.read
    try:
        result = fn(*placeholders)
    finally:
        Config.recorder = None
        Config.read_hook = None
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    for k, out in enumerate(outs):
        if not isinstance(out, Variable) or id(out) not in rec.slot:
            raise CaptureError(
                f"output {k} of the captured function is {type(out).__name__}, not a Variable it computed or was "
                "given; return the Variables (the loss first)"
            )
    program = Program(rec.values, rec.nodes, list(range(len(placeholders))), [rec.slot[id(v)] for v in outs],
                      training=Config.is_training, returns_tuple=isinstance(result, (tuple, list)))
    if backward:
        _plan_backward(program, rec, outs[0], wrt)
    values = [v._data for v in rec.variables]
    if keep_values:
        for value, data in zip(program.values, values):
            value.data = data
    replay = Replay(program)
    outputs = replay.finish(values)
    return program, outputs


def _plan_backward(program: Program, rec: _Recorder, loss: Variable, wrt: Iterable[Parameter] | None) -> None:
    """Fill ``program.backward_order``, ``wrt`` and each visited node's ``needs`` from the recorded graph.

    The order is :meth:`Engine.backward_order` of the loss and the needs are :func:`needed_inputs`, as in
    ``Engine.backward(loss, inputs=wrt)``, so gradients are summed in the same order as eager backward (bit-identical
    results); a node is visited only if some wanted Parameter lies below it.
    """
    if loss.size != 1:
        raise ShapeError(f"the first output of a captured function is differentiated, so it must have one element; "
                         f"it has shape {loss.shape} (return the loss first, or capture with backward=False)")
    if wrt is None:
        program.wrt = [v.index for v in program.values if v.kind == PARAM]
    else:
        program.wrt = []
        for p in wrt:
            if not isinstance(p, Parameter):
                raise ValueError(f"wrt takes Parameters only; got {p!r}")
            index = rec.slot.get(id(p))
            if index is not None:  # a Parameter the function did not use gets no gradient, as in eager backward
                program.wrt.append(index)
    order = Engine.backward_order(loss)
    needs = needed_inputs(order, [rec.variables[i] for i in program.wrt])
    node_of = {n.output: n for n in program.nodes if n.recorded}
    program.backward_order = []
    for var in order:
        flags = needs.get(var)
        if flags is not None:
            node = node_of[rec.slot[id(var)]]
            node.needs = flags
            program.backward_order.append(node.index)


def check_same_structure(first: Program, second: Program) -> None:
    """Raise CaptureError, naming the first difference, if two captures of one function are not the same program.

    Two captures with the same input shapes must record the same operators (class and configuration), wired the same
    way, reading the same Parameters; otherwise the function's graph depends on something other than the shapes.
    """
    if first.structure() == second.structure():
        return
    detail = "the leaves, outputs or backward pass differ"
    if len(first.nodes) != len(second.nodes):
        detail = f"the first capture ran {len(first.nodes)} operators, the second {len(second.nodes)}"
    for a, b in zip(first.nodes, second.nodes):
        if (a.op_class, a.op.config(), a.inputs) != (b.op_class, b.op.config(), b.inputs):
            detail = f"node {a.index} was {a.op!r} on {a.inputs} the first time, {b.op!r} on {b.inputs} the second"
            break
    raise CaptureError(
        f"the graph changed between two captures with the same input shapes: {detail}. A graph whose structure "
        "depends on the data (or on anything but the input shapes) cannot be replayed. Call the function directly, "
        "without Plan or capture (the command line's `autograd-lab train` has --engine eager for this), or make the "
        "decision inside an operator"
    )


def program_from_graph(root: Variable, inputs: Sequence[Variable]) -> Program:
    """The forward-only Program of a graph that is already built (by hand, from ops), computing ``root``.

    Nodes come in :meth:`Engine.topo_sort` order; ``inputs`` become the placeholders, other Parameters params and
    other leaves constants. Every value is kept in ``Value.data``.

    Raises:
        GraphReleasedError: if the graph was released by a backward.
    """
    values: list[Value] = []
    nodes: list[Node] = []
    slot: dict[int, int] = {}
    input_ids = [id(v) for v in inputs]
    order = Engine.topo_sort(root)
    for var in order:  # the leaves come first
        if var.op is None:
            kind = INPUT if id(var) in input_ids else PARAM if isinstance(var, Parameter) else CONST
            slot[id(var)] = len(values)
            values.append(Value(len(values), kind, tuple(var.shape), var.dtype, var.name,
                                None if kind == INPUT else var, var.data))
    for var in inputs:
        if id(var) not in slot:  # an input the root does not depend on
            slot[id(var)] = len(values)
            values.append(Value(len(values), INPUT, tuple(var.shape), var.dtype, var.name, None, var.data))
    for var in order:
        if var.op is not None:
            slot[id(var)] = len(values)
            values.append(Value(len(values), NODE, tuple(var.shape), var.dtype, var.name, None, var.data))
            nodes.append(Node(len(nodes), var.op, tuple(slot[id(p)] for p in var.parents), slot[id(var)]))
    return Program(values, nodes, [slot[i] for i in input_ids], [slot[id(root)]], training=Config.is_training)
