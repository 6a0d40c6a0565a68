"""Replay: run a captured Program again on new argument values, with no new Variables or Operators.

A :class:`Replay` runs a Program in one of two ways, with the same results bit for bit:

* the loop in :meth:`Replay.run_checked`, the plain statement of what replay does: bind the arguments, call every
  op's ``forward`` in the captured order, then the ``backward`` of the nodes the gradients need in the captured
  backward order, summing gradients exactly as :meth:`Engine.backward` does (same order, so the results are
  bit-identical), hand the Parameters their gradients and drop what the ops saved. It runs the base class's checks
  on every call (gradient count, shapes, finiteness), and is used for the capture itself and under
  ``detect_anomaly()``;
* the same steps unrolled into a straight-line Python function, generated once from the Program
  (:mod:`autograd_lab.capture.pycode`, shown by :attr:`Replay.source`): the fast path of every other run. The checks
  that cannot change while the shapes do not (which the capture ran once) are not repeated there, and a gradient
  nobody needs is never looked at.

:class:`Plan` is the user-facing wrapper: call it like the function; it captures on the first calls for each input
signature (shapes, dtypes, training mode) and replays afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from autograd_lab.capture.errors import CaptureError
from autograd_lab.capture.ir import CONST, PARAM, Program
from autograd_lab.capture.pycode import RELEASED, argument_error, compile_source, count_error, none_error, python_source
from autograd_lab.engine import Engine, _store_leaf_grads
from autograd_lab.errors import AnomalyError, ShapeError
from autograd_lab.variable import Parameter, Variable, _as_leaf_array


class Replay:
    """Executes one Program (see the module docstring). The ops' ``_needs`` are set once, here.

    Attributes:
        program: the Program.
        source: the text of the generated replay function (the plan printed as Python).
    """

    def __init__(self, program: Program) -> None:
        self.program = program
        values = program.values
        self._size = len(values)
        self._inputs = [(v.index, v.shape, v.dtype, v.label()) for v in (values[i] for i in program.inputs)]
        self._leaves = [(v.index, v.leaf) for v in values if v.kind in (PARAM, CONST)]
        # What the loop of run_checked needs, looked up once: per node the op, its input slots and its output slot.
        self._forward = [(n.op, n.inputs, n.output) for n in program.nodes]
        self._ops = [n.op for n in program.nodes]
        # Per visited node: the op, the slot of its output gradient, and for each input whose gradient is needed
        # (only those: the data's gradient is never handled) its position among the op's inputs, its slot and its
        # dtype (a gradient of another dtype is cast, as eager does); then every input's (slot or None, dtype, shape)
        # for the checks.
        self._backward = []
        for k in program.backward_order:
            node = program.nodes[k]
            node.op._needs = node.needs
            needs = node.needs or ()
            wanted = tuple((pos, i, values[i].dtype) for pos, (i, need) in enumerate(zip(node.inputs, needs)) if need)
            targets = tuple((i if need else None, values[i].dtype, values[i].shape)
                            for i, need in zip(node.inputs, needs))
            self._backward.append((node.op, node.output, wanted, targets))
        self._wrt: list[tuple[int, Variable]] = [(i, values[i].leaf) for i in program.wrt]  # type: ignore[misc]
        loss = program.loss
        self._loss = loss
        # d(loss)/d(loss) = 1, made once; each run gets a fresh copy (cheaper than np.ones), writable as eager's seed.
        self._seed: np.ndarray | None = None
        if loss is not None:
            self._seed = np.ones(values[loss].shape, dtype=values[loss].dtype)
        # Generated on the first fast run, not here: capture() makes a Replay only to run the checked loop once.
        self._step: Callable[..., list[np.ndarray]] | None = None
        self._generated = True  # False once the compiler could not compile it (see _compile)

    @property
    def source(self) -> str:
        """The text of the generated replay function (the plan printed as Python)."""
        return python_source(self.program)[0]

    def _compile(self) -> Callable[..., list[np.ndarray]] | None:
        """Generate and compile the fast function. Where CPython cannot compile a function that large (its compiler
        recurses over the nesting and raises RecursionError), replay keeps to the checked loop: slower, the same
        results."""
        source, env = python_source(self.program)
        try:
            self._step = compile_source(source, env)
        except RecursionError:  # only compile is guarded: any other fault in generating it is a bug to see
            self._generated = False
        return self._step

    def run(self, *args: Any, copy: bool = True) -> list[np.ndarray]:
        """Replay on new arguments; return the outputs (read-only arrays). Parameters get gradients in ``.grad``
        (added to any gradient already there), as after ``Engine.backward(loss, inputs=wrt)``.

        Runs the generated function; :meth:`run_checked` under ``detect_anomaly()``, or where the compiler cannot
        compile it (RecursionError on a very large program).

        Raises:
            ReplayShapeError: if an argument's shape or dtype differs from the captured one.
            TypeError: for the wrong number of arguments.
            ShapeError: if an operator's forward fails (names the node and the op).
        """
        if len(args) != len(self._inputs):
            raise TypeError(f"the captured function takes {len(self._inputs)} argument(s), got {len(args)}")
        if Engine.detect_anomaly:
            return self.run_checked(*args, copy=copy)
        step = self._step or (self._compile() if self._generated else None)
        if step is None:
            return self.run_checked(*args, copy=copy)
        return step(*args, copy=copy)

    def run_checked(self, *args: Any, copy: bool = True) -> list[np.ndarray]:
        """:meth:`run` as a loop over the nodes, with the base class's checks on every forward and backward
        (the reference the generated function must match)."""
        values: list[Any] = [None] * self._size
        for (index, shape, dtype, label), a in zip(self._inputs, args):
            x = _as_leaf_array(a, label, copy)
            if x.shape != shape or x.dtype != dtype:
                raise argument_error(label, x, shape, dtype)
            values[index] = x
        for index, leaf in self._leaves:
            values[index] = leaf._data  # type: ignore[union-attr]  # params and consts have their Variable
        op: Any = None
        try:
            for op, ins, out in self._forward:
                values[out] = op._run_forward(tuple([values[i] for i in ins]))
        except BaseException as exc:
            self.release()  # whatever the error (an AnomalyError is no ValueError), no op keeps what it saved
            if not isinstance(exc, ValueError):
                raise
            cause = _forward_error(op, exc)
            if isinstance(cause, ShapeError):
                raise
            # The generated function's message: the node and the op, and the forward's own message.
            raise ShapeError(f"replay: node {self._ops.index(op)} ({type(op).__name__}) failed: {cause}") from cause
        return self.finish(values)

    def finish(self, values: list[Any]) -> list[np.ndarray]:
        """The rest of a checked step once the forward values are in ``values``: backward, gradients, release,
        outputs."""
        try:
            if self._seed is not None:
                self._run_backward()
            return [values[i] for i in self.program.outputs]
        finally:
            self.release()

    def _run_backward(self) -> None:
        grads: list[Any] = [None] * self._size
        # As in Engine.backward: a gradient stored as received may be shared (AddOp hands gy to both inputs), so
        # `+=` only goes into a slot whose array this pass created by an earlier sum.
        owned = [False] * self._size
        grads[self._loss] = self._seed.copy()  # type: ignore[index,union-attr]  # a program with a backward has a loss
        for op, out, wanted, targets in self._backward:
            gy = grads[out]
            grads[out] = None
            result = _check_grads(op, op.backward(gy), targets)
            for position, slot, dtype in wanted:
                g = result[position]
                if type(g) is not np.ndarray:
                    g = np.asarray(g)
                if g.dtype != dtype:
                    g = g.astype(dtype)
                current = grads[slot]
                if current is None:
                    grads[slot] = g
                elif owned[slot]:
                    current += g
                else:
                    grads[slot] = np.asarray(current + g)  # 0-d + 0-d gives a NumPy scalar
                    owned[slot] = True
        self._hand_out(grads)

    def _hand_out(self, grads: list[Any]) -> None:
        """Give the wanted Parameters their gradients, with Engine.backward's rules (:func:`_store_leaf_grads`)."""
        leaf_grads = {}
        for slot, leaf in self._wrt:
            g = grads[slot]
            if g is not None:
                leaf_grads[leaf] = g
        _store_leaf_grads(leaf_grads, set())

    def release(self) -> None:
        """Drop the values the ops saved for backward (so a Parameter's array is referenced by it alone again,
        and the optimizer updates it in place)."""
        for op in self._ops:
            op.inputs = ()
            op.output = RELEASED


def _forward_error(op: Any, exc: ValueError) -> ValueError:
    """The ValueError ``op.forward`` raised: ``Operator._run_forward`` wraps one that is not a ShapeError in a
    ShapeError naming the input shapes and the calling line (here, the replay's), which is unwrapped."""
    cause = exc.__cause__
    if (isinstance(exc, ShapeError) and isinstance(cause, ValueError) and not isinstance(cause, ShapeError)
            and str(exc).startswith(f"{type(op).__name__}.forward failed for input shapes")):
        return cause
    return exc


def _check_grads(op: Any, grads: Any, targets: tuple[tuple[int | None, np.dtype, tuple[int, ...]], ...]) -> list[Any]:
    """The base class's checks of a backward result (count, None for a needed input, shapes, finiteness)."""
    name = type(op).__name__
    if not isinstance(grads, (list, tuple)) or len(grads) != len(targets):
        raise count_error(name, len(targets), grads)
    for i, ((slot, _, shape), g) in enumerate(zip(targets, grads)):
        if slot is None:
            continue
        if g is None:
            raise none_error(name, i)
        if np.shape(g) != shape:
            raise ShapeError(f"{name}.backward: gradient for input {i} has shape {np.shape(g)}, expected {shape} "
                             "(the input's shape)")
        if Engine.detect_anomaly and not np.isfinite(g).all():
            raise AnomalyError(f"{name}.backward produced NaN or inf in the gradient of input {i}")
    return list(grads)


class Plan:
    """``fn`` captured once per input signature and replayed afterwards: call it as you would call ``fn`` (with
    arrays). Returns the outputs as read-only arrays (a tuple if ``fn`` returns a tuple).

    The first call with a new signature (argument shapes and dtypes, and ``Engine.is_training``) captures; with
    ``verify=True`` (default) the second call with it captures again and compares the two programs
    (:func:`~autograd_lab.capture.check_same_structure`); later calls replay. Each call, capture or replay, is one
    complete step with the same results as running ``fn`` and ``Engine.backward`` eagerly.

    Args:
        fn, wrt, backward, copy: as for :func:`~autograd_lab.capture.capture`.
        verify: capture twice before replaying (see above).

    Attributes:
        captures: how many captures ran so far. program: the Program used by the last call.
        replay: the :class:`Replay` made for the last call's signature (None while that signature is still being
            verified); ``plan.replay.source`` is the generated Python.

    Raises:
        CaptureError: see :func:`~autograd_lab.capture.capture` and :func:`check_same_structure`.
    """

    def __init__(self, fn: Callable[..., Any], *, wrt: Iterable[Parameter] | None = None, backward: bool = True,
                 copy: bool = True, verify: bool = True) -> None:
        self.fn = fn
        self.wrt = None if wrt is None else list(wrt)
        self.backward = backward
        self.copy = copy
        self.verify = verify
        self.captures = 0
        self.program: Program | None = None
        self.replay: Replay | None = None
        self._replays: dict[object, Replay] = {}
        self._first: dict[object, Program] = {}

    def __call__(self, *args: Any) -> Any:
        key = (Engine.is_training, tuple([_signature(a) for a in args]))
        replay = self._replays.get(key)
        if replay is not None:
            outputs = replay.run(*args, copy=self.copy)
            program = replay.program
            self.replay = replay
        else:
            from autograd_lab.capture.capture import capture, check_same_structure

            program, outputs = capture(self.fn, *args, wrt=self.wrt, backward=self.backward, copy=self.copy)
            self.captures += 1
            first = self._first.pop(key, None)
            if self.verify and first is None:
                self._first[key] = program
            else:
                if first is not None:
                    check_same_structure(first, program)
                self._replays[key] = Replay(program)
            self.replay = self._replays.get(key)
        self.program = program
        return tuple(outputs) if program.returns_tuple else outputs[0]


def _signature(a: Any) -> tuple[tuple[int, ...], np.dtype]:
    if type(a) is not np.ndarray:
        a = np.asarray(a)
    if a.dtype.kind not in "fiub":
        raise CaptureError(f"a captured function takes numeric arrays, got dtype {a.dtype}")
    return a.shape, a.dtype
