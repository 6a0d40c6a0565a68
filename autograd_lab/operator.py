"""Operator: the base class of every differentiable operation.

A subclass implements two methods on raw NumPy arrays:

* ``forward(self, *xs) -> ndarray`` computes the output from the input values;
* ``backward(self, gy) -> list[ndarray | None]`` turns the gradient of the output into one gradient per input, in
  input order, each with exactly its input's shape (None for an input whose gradient nobody asked for, see
  :meth:`Operator.needs_grad`).

Calling an operator on Variables, ``MulOp()(x, y)``, runs ``forward`` and wires the graph: the result's ``op`` is the
operator and its ``parents`` are ``[x, y]``. The base class saves the input values in ``self.inputs`` and the output in
``self.output`` for backward, and checks every gradient that ``backward`` returns. An operator instance records one
call only, so state saved for backward (a dropout mask, say) can never be mixed up between two nodes.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.engine import Engine
from autograd_lab.errors import AnomalyError, InPlaceModificationError, OperatorReuseError, ShapeError
from autograd_lab.variable import Variable


class Operator:
    """Base class of all operators. See the module docstring for the contract.

    Attributes:
        inputs: the input values of the recorded call (tuple of read-only ndarrays), for use in ``backward``.
        output: the output value of the recorded call (read-only ndarray).
    """

    #: True for an operator whose ``forward`` reads ``Engine.is_training`` (dropout, batch normalisation). The mode is
    #: read once, at forward time: the output and whatever ``forward`` saves for ``backward`` follow the mode of that
    #: call, and ``backward`` never consults the mode. The flag changes nothing in the engine; it tells tools that
    #: inspect a graph that the node would compute differently in the other mode: the graph views draw such an
    #: operator dashed and labelled "train/eval dependent", and a tracer or exporter must build the graph in the mode
    #: it means to record (the C exporter needs one built in evaluation mode). Subclasses set it as a class attribute.
    training_dependent: ClassVar[bool] = False

    inputs: tuple[np.ndarray, ...]
    output: np.ndarray
    _versions: list[int]
    # Defaults that a call overrides per instance.
    _needs: tuple[bool, ...] | None = None
    _called: bool = False
    _created_at: str | None = None

    # Each op declares its own inputs, forward(self, a, b). `*xs: Any, **kwargs: Any` is the typing spec's "any
    # signature" (like Callable[..., ndarray]), so type checkers accept every such override.
    def forward(self, *xs: Any, **kwargs: Any) -> np.ndarray:
        """Compute the output value from the input values (called with the inputs only). Subclasses implement this."""
        raise NotImplementedError(f"{type(self).__name__}.forward is not implemented")

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        """Return d(root)/d(input_i) for each input, given ``gy`` = d(root)/d(output). Subclasses implement this."""
        raise NotImplementedError(f"{type(self).__name__}.backward is not implemented")

    def needs_grad(self, i: int) -> bool:
        """Whether the gradient of input ``i`` is wanted in the current backward (skip the work when it is not)."""
        needs = self._needs
        return needs is None or needs[i]

    def config(self) -> dict[str, object]:
        """The operator's configuration (axis, flags, ...) for drawings and error messages."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and k not in ("inputs", "output")}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({args})"

    # -- graph wiring ----------------------------------------------------------------------------------------------
    def __call__(self, *variables: Variable) -> Variable:
        """Run ``forward`` on the inputs' values and return the output Variable (a new graph node).

        Raises:
            OperatorReuseError: if this operator instance was already called.
            TypeError: if an input is not a Variable.
            ShapeError: if the input shapes do not fit (names the op, the shapes and the calling line).
            AnomalyError: under ``detect_anomaly()``, if the output holds NaN or inf.
        """
        if self._called:
            raise OperatorReuseError(
                f"this {type(self).__name__} instance was already called; an operator records one call, "
                f"so create a new one for each use: {self!r}({_argument_names(self, len(variables))})"
            )
        self._called = True
        for i, v in enumerate(variables):
            if not isinstance(v, Variable):
                raise TypeError(
                    f"{type(self).__name__} input {i} must be a Variable, got {type(v).__name__}; "
                    "wrap arrays with Variable.from_numpy(array)"
                )
        if Engine.detect_anomaly:
            self._created_at = user_callsite()
        out = self._run_forward(tuple([v._data for v in variables]))
        if Engine.grad_enabled:
            self._versions = [v._version for v in variables]
            result = Variable._new(out, self, list(variables))
        else:
            # no_grad(): the result is a plain leaf and nothing is kept for backward.
            self.inputs = ()
            del self.output
            result = Variable._new(out, None, [])
        if Engine.recorder is not None:  # a capture is running (autograd_lab.capture)
            Engine.recorder(self, variables, result)
        return result

    def _run_forward(self, xs: tuple[np.ndarray, ...]) -> np.ndarray:
        """Run ``forward`` on input values, save inputs and output for backward, and return the read-only output."""
        try:
            out = self.forward(*xs)
        except ValueError as exc:
            if isinstance(exc, ShapeError):
                raise
            shapes = ", ".join(str(x.shape) for x in xs)
            raise ShapeError(
                f"{type(self).__name__}.forward failed for input shapes {shapes} "
                f"(called at {user_callsite() or 'unknown'}): {exc}"
            ) from exc
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        out.setflags(write=False)
        if Engine.detect_anomaly and not np.isfinite(out).all():
            raise AnomalyError(
                f"{type(self).__name__} produced {_describe_bad(out)} in its forward value "
                f"(node created at {self._created_at or user_callsite() or 'unknown'})"
            )
        self.inputs = xs
        self.output = out
        return out

    def _run_backward(self, gy: np.ndarray, parents: list[Variable]) -> list[np.ndarray | None]:
        """Call ``backward`` and check its result: count, shapes, dtypes, and (under detect_anomaly) finiteness.

        Raises:
            InPlaceModificationError: if an input was modified in place after the forward pass.
            ShapeError: if the count of gradients or a gradient's shape is wrong (names the op and the input index).
            AnomalyError: under ``detect_anomaly()``, if a gradient holds NaN or inf.
        """
        # A modified input is reported first, whatever else might go wrong: it is the cause.
        if [p._version for p in parents] != self._versions:
            self._raise_modified(parents)
        grads = self.backward(gy)
        if type(grads) is not list or len(grads) != len(parents):
            grads = self._check_count(grads, parents)
        for i, (parent, g) in enumerate(zip(parents, grads)):
            if g is None:
                if self.needs_grad(i):
                    raise ShapeError(
                        f"{type(self).__name__}.backward returned None for input {i}, whose gradient is needed"
                    )
                continue
            if type(g) is not np.ndarray:  # a NumPy scalar from a full reduction, or a list
                g = np.asarray(g)
            # Speed: the parent's array is read once (its .shape and .dtype properties would be two calls each).
            data = parent._data
            if g.shape != data.shape:
                raise ShapeError(
                    f"{type(self).__name__}.backward: gradient for input {i} has shape {g.shape}, expected "
                    f"{data.shape} (the input's shape){self._where()}"
                )
            if g.dtype != data.dtype:
                g = g.astype(data.dtype)
            if Engine.detect_anomaly and not np.isfinite(g).all():
                raise AnomalyError(
                    f"{type(self).__name__}.backward produced {_describe_bad(g)} in the gradient of input {i}"
                    f"{self._where()}"
                )
            grads[i] = g
        return grads

    def _release(self) -> None:
        """Drop what the recorded call saved for backward: ``inputs``, ``output`` and the op's own saved values
        (private attributes holding arrays, e.g. a dropout mask), keeping its configuration (:meth:`config`).

        ``Engine.backward`` calls it when it releases the node; the op then cannot run backward again.
        """
        self.inputs = ()
        saved = vars(self)
        saved.pop("output", None)
        # Speed: Engine.backward calls this for every node, so the base class's own bookkeeping (never arrays) is
        # skipped by name and the common case, an array, is tested first.
        for name in [k for k, v in saved.items()
                     if k[0] == "_" and k not in _BOOKKEEPING and (type(v) is np.ndarray or _holds_array(v))]:
            del saved[name]

    def _check_count(self, grads: object, parents: list[Variable]) -> list[np.ndarray | None]:
        if isinstance(grads, tuple) and len(grads) == len(parents):
            return list(grads)
        got = len(grads) if isinstance(grads, (list, tuple)) else type(grads).__name__
        raise ShapeError(
            f"{type(self).__name__}.backward must return a list with one gradient per input "
            f"({len(parents)}), got {got}"
        )

    def _raise_modified(self, parents: list[Variable]) -> None:
        for i, (p, version) in enumerate(zip(parents, self._versions)):
            if p._version != version:
                raise InPlaceModificationError(
                    f"{type(self).__name__} input {i} ({p.name or 'unnamed'}, shape {p.shape}) was modified after "
                    "the graph was built (an optimizer step or a .data assignment); run the forward pass again "
                    "before backward"
                )

    def _where(self) -> str:
        return f" (node created at {self._created_at})" if self._created_at else ""


#: The base class's private attributes, which hold flags and counters, never saved arrays (see Operator._release).
_BOOKKEEPING = frozenset({"_called", "_versions", "_needs", "_created_at"})


def _holds_array(value: object) -> bool:
    return isinstance(value, np.ndarray) or (
        isinstance(value, (tuple, list)) and any(isinstance(v, np.ndarray) for v in value))


def _describe_bad(a: np.ndarray) -> str:
    n_nan = int(np.isnan(a).sum())
    n_inf = int(np.isinf(a).sum())
    first = np.unravel_index(int(np.flatnonzero(~np.isfinite(a))[0]), a.shape) if a.ndim else ()
    return f"{n_nan} NaN and {n_inf} inf (first at index {tuple(int(i) for i in first)})"



def _argument_names(op: Operator, n_given: int) -> str:
    """The arguments of a call of ``op``, for messages: the names of its ``forward`` parameters (``a, b`` for
    ``MulOp``), or ``x0, x1, ...`` for a ``forward(*xs)`` (as many as this call passed)."""
    params = list(inspect.signature(type(op).forward).parameters.values())[1:]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not names or any(p.kind is p.VAR_POSITIONAL for p in params):
        names = ["x"] if n_given == 1 else [f"x{i}" for i in range(n_given)]
    return ", ".join(names)
