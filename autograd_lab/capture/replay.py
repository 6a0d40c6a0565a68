"""Replay: run a captured Program again on new argument values, with no new Variables or Operators.

A :class:`Replay` runs a Program in one of two ways, with the same results bit for bit:

* the loop in :meth:`Replay.run_checked`, the plain statement of what replay does: bind the arguments, call every
  op's ``forward`` in the captured order, then the ``backward`` of the nodes the gradients need in the captured
  backward order, summing gradients exactly as :meth:`Engine.backward` does (same order, so the results are
  bit-identical), hand the Parameters their gradients and release the ops. It runs the base class's checks of every
  forward (finiteness under ``detect_anomaly()``), and is used for the capture itself and under ``detect_anomaly()``;
* the same steps unrolled into a straight-line Python function, generated once from the Program
  (:mod:`autograd_lab.capture.pycode`, shown by :attr:`Replay.source`): the fast path of every other run.

Both call the same functions for what every backward pass does (:mod:`autograd_lab.gradients`: which inputs need a
gradient, how gradients are summed, how leaves receive them) and the same check of each backward result
(:meth:`autograd_lab.Operator.run_backward`), and release the ops the same way (:meth:`autograd_lab.Operator.release`,
which drops what the op declares in ``saved``). Replay is the operator contract's replay mode: the Program's ops are
called again on every step.

:class:`~autograd_lab.capture.Plan` (:mod:`autograd_lab.capture.plan`) is the user-facing wrapper.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from autograd_lab.capture.ir import CONST, PARAM, Program
from autograd_lab.capture.pycode import argument_error, compile_source, python_source
from autograd_lab.config import Config
from autograd_lab.errors import ShapeError
from autograd_lab.gradients import add_gradient, store_leaf_grads
from autograd_lab.variable import Variable, as_leaf_array


class Replay:
    """Executes one Program (see the module docstring).

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
        # Per visited node: the op, the slot of its output gradient, which inputs need a gradient, the input slots.
        visited = [program.nodes[k] for k in program.backward_order]
        self._backward = [(n.op, n.output, n.needs, n.inputs) for n in visited]
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
        if Config.detect_anomaly:
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
            x = as_leaf_array(a, label, copy)
            if x.shape != shape or x.dtype != dtype:
                raise argument_error(label, x, shape, dtype)
            values[index] = x
        for index, leaf in self._leaves:
            values[index] = leaf._data  # type: ignore[union-attr]  # params and consts have their Variable
        op: Any = None
        try:
            for op, ins, out in self._forward:
                values[out] = op.run_forward(tuple([values[i] for i in ins]))
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
        """Engine.backward's walk over slots: same order, same check, same sums, same hand-out to the leaves."""
        grads: list[Any] = [None] * self._size
        summed = [0] * self._size  # gradients received so far, per slot (add_gradient's rule depends on it)
        grads[self._loss] = self._seed.copy()  # type: ignore[index,union-attr]  # a program with a backward has a loss
        summed[self._loss] = 1  # type: ignore[index]
        for op, out, needs, inputs in self._backward:
            gy = grads[out]
            grads[out] = None
            for slot, g in zip(inputs, op.run_backward(gy, needs)):
                if g is not None:
                    grads[slot] = add_gradient(grads[slot], g, summed[slot])
                    summed[slot] += 1
        leaf_grads = {leaf: grads[slot] for slot, leaf in self._wrt if grads[slot] is not None}
        store_leaf_grads(leaf_grads, [leaf for slot, leaf in self._wrt if summed[slot] > 1 or slot == self._loss])

    def release(self) -> None:
        """Release every op (:meth:`Operator.release`): drop what it saved for backward, so that a Parameter's array
        is referenced by the Parameter alone again, and the optimizer updates it in place."""
        for op in self._ops:
            op.release()


def _forward_error(op: Any, exc: ValueError) -> ValueError:
    """The ValueError ``op.forward`` raised: ``Operator.run_forward`` wraps one that is not a ShapeError in a
    ShapeError naming the input shapes and the calling line (here, the replay's), which is unwrapped."""
    cause = exc.__cause__
    if (isinstance(exc, ShapeError) and isinstance(cause, ValueError) and not isinstance(cause, ShapeError)
            and str(exc).startswith(f"{type(op).__name__}.forward raised ValueError on inputs of shapes")):
        return cause
    return exc
