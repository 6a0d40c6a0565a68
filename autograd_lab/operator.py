"""Operator: the base class of every differentiable operation.

A subclass implements two methods on raw NumPy arrays, and declares what its forward keeps for backward:

* ``forward(self, *xs) -> ndarray`` computes the output from the input values;
* ``backward(self, gy) -> list[ndarray | None]`` turns the gradient of the output into one gradient per input, in
  input order, each with exactly its input's shape (None for an input whose gradient nobody asked for, see
  :meth:`Operator.needs_grad`);
* ``saved = ("_mask",)``, one class attribute: the names of the attributes ``forward`` sets on ``self`` for
  ``backward``, so that release, replay and the exporter read one declaration instead of guessing (and
  ``cached = (...)`` for the rare per-shape cache that may outlive a call).

Calling an operator on Variables, ``MulOp()(x, y)``, runs ``forward`` and wires the graph: the result's ``op`` is the
operator and its ``parents`` are ``[x, y]``. The base class saves the input values in ``self.inputs`` and the output in
``self.output`` for backward, and checks every gradient that ``backward`` returns (:meth:`Operator.run_backward`).

Two modes of use (the operator contract):

* **eager** (``op(x, y)``, then :meth:`Engine.backward`): an instance records one call only, so state saved for
  backward (a dropout mask, say) can never be mixed up between two nodes; a second call raises OperatorReuseError.
  Backward runs once, then :meth:`Operator.release` drops what was saved and the op cannot run backward again.
* **replay** (:mod:`autograd_lab.capture`): a captured Program owns its ops and calls the same instance again on
  every step, ``run_forward`` (or ``forward`` itself, in the generated replay) then ``run_backward``, and
  :meth:`Operator.release` after each step. The one-call rule does not apply there: a Program's node is one call
  site, and each step's forward overwrites what the previous step's release dropped.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.config import Config
from autograd_lab.errors import AnomalyError, InPlaceModificationError, OperatorReuseError, ShapeError
from autograd_lab.variable import Variable


class Operator:
    """Base class of all operators. See the module docstring for the contract.

    Attributes:
        inputs: the input values of the recorded call (tuple of read-only ndarrays), for use in ``backward``.
        output: the output value of the recorded call (read-only ndarray).
    """

    #: True for an operator whose ``forward`` reads ``Config.is_training`` (dropout, batch normalisation). The mode is
    #: read once, at forward time: the output and whatever ``forward`` saves for ``backward`` follow the mode of that
    #: call, and ``backward`` never consults the mode. The flag changes nothing in the engine; it tells tools that
    #: inspect a graph that the node would compute differently in the other mode: the graph views draw such an
    #: operator dashed and labelled "train/eval dependent", and a tracer or exporter must build the graph in the mode
    #: it means to record (the C exporter needs one built in evaluation mode). Subclasses set it as a class attribute.
    training_dependent: ClassVar[bool] = False

    #: The names of the attributes ``forward`` sets on ``self`` for ``backward`` (beyond ``inputs`` and ``output``,
    #: which the base class saves), e.g. ``saved = ("_scale_mask",)``. One line per operator class, inherited by
    #: subclasses. :meth:`release` drops exactly these; a test checks that every operator of the library declares
    #: exactly what its forward sets.
    saved: ClassVar[tuple[str, ...]] = ()

    #: The names of the attributes ``forward`` sets that depend only on the configuration and the input shape, and
    #: are checked on every use (a slice index made once per shape), e.g. ``cached = ("_checked",)``. Release keeps
    #: them, so a replayed op does not rebuild them on every step. Every attribute forward sets is in ``saved`` or
    #: in ``cached``.
    cached: ClassVar[tuple[str, ...]] = ()

    inputs: tuple[np.ndarray, ...]
    output: np.ndarray
    _versions: list[int]
    # Defaults that a call overrides per instance.
    _needs: tuple[bool, ...] | None = None  # the needs of the backward call running now (see run_backward)
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
        """Whether the gradient of input ``i`` is wanted in the backward call running now (skip the work when it is
        not). Every input's is wanted unless the caller of :meth:`run_backward` said otherwise."""
        needs = self._needs
        return needs is None or needs[i]

    def config(self) -> dict[str, object]:
        """The operator's configuration (axis, flags, ...): its public attributes, minus what a call saved (``inputs``,
        ``output`` and the names in :attr:`saved`). Drawings, error messages, capture's structure check and the C
        exporter read an op through it."""
        saved = type(self).saved  # the class's declaration: an instance attribute of that name is a subclass's own
        return {k: v for k, v in vars(self).items()
                if not k.startswith("_") and k not in ("inputs", "output") and k not in saved}

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
        if Config.detect_anomaly:
            self._created_at = user_callsite()
        out = self.run_forward(tuple([v._data for v in variables]))
        if Config.grad_enabled:
            self.watch_versions(variables)
            result = Variable._new(out, self, list(variables))
        else:
            # no_grad(): the result is a plain leaf and nothing is kept for backward.
            self.inputs = ()
            del self.output
            result = Variable._new(out, None, [])
        if Config.recorder is not None:  # a capture is running (autograd_lab.capture)
            Config.recorder(self, variables, result)
        return result

    def run_forward(self, xs: tuple[np.ndarray, ...]) -> np.ndarray:
        """Run ``forward`` on input values, save inputs and output for backward, and return the read-only output.

        The forward step of both modes (``__call__``, :meth:`Engine.forward`, replay's checked loop).

        Raises:
            ShapeError: if ``forward`` raises a ValueError (names the op, the input shapes and the calling line).
            ValueError: if ``forward`` writes into an input (read-only); names the op and the calling line.
            AnomalyError: under ``detect_anomaly()``, if the output holds NaN or inf.
        """
        try:
            out = self.forward(*xs)
        except ValueError as exc:
            if isinstance(exc, ShapeError):
                raise
            if "read-only" in str(exc):  # NumPy's words for a write into a read-only input: not a shape fault
                raise ValueError(
                    f"{type(self).__name__}.forward wrote into one of its inputs, which are read-only: compute a new "
                    f"array instead (called at {user_callsite() or 'unknown'}): {exc}"
                ) from exc
            shapes = ", ".join(str(x.shape) for x in xs)
            raise ShapeError(
                f"{type(self).__name__}.forward raised ValueError on inputs of shapes {shapes} "
                f"(called at {user_callsite() or 'unknown'}): {exc}"
            ) from exc
        if type(out) is not np.ndarray:
            out = np.asarray(out)
        out.setflags(write=False)
        if Config.detect_anomaly and not np.isfinite(out).all():
            raise AnomalyError(
                f"{type(self).__name__} produced {_describe_bad(out)} in its forward value "
                f"(node created at {self._created_at or user_callsite() or 'unknown'})"
            )
        self.inputs = xs
        self.output = out
        return out

    def run_backward(self, gy: np.ndarray, needs: tuple[bool, ...] | None = None) -> list[np.ndarray | None]:
        """Call ``backward`` and check its result: the one backward call of every walk (``Engine.backward``, replay's
        checked loop and the generated replay all call it).

        While ``backward`` runs, :meth:`needs_grad` answers from ``needs``. The result is a list with one entry per
        input: None where ``needs`` says no gradient is wanted (whatever ``backward`` returned there), else an
        ndarray of the input's shape, cast to the input's dtype.

        Args:
            gy: d(root)/d(output), the output's shape; made read-only (a write into it raises ValueError).
            needs: one flag per input, True where the gradient is wanted; None: every input's is.

        Raises:
            ShapeError: if ``backward`` returns the wrong count of gradients, None for a wanted one, or a gradient of
                the wrong shape (names the op and the input index).
            AnomalyError: under ``detect_anomaly()``, if a wanted gradient holds NaN or inf.
        """
        self._needs = needs
        if gy.flags.writeable:  # read-only while backward runs, as the inputs and the output are
            gy.setflags(write=False)
        grads = self.backward(gy)
        inputs = self.inputs
        if type(grads) is not list or len(grads) != len(inputs):
            grads = self._check_count(grads, len(inputs))
        i = 0
        for x in inputs:
            g = grads[i]
            if needs is not None and not needs[i]:
                grads[i] = None
            # Speed: the common case, an array of the input's dtype and shape, is recognised in one line.
            elif type(g) is not _ndarray or g.dtype is not x.dtype or g.shape != x.shape or Config.detect_anomaly:
                grads[i] = self._check_gradient(i, g, x)
            i += 1
        return grads

    def _check_gradient(self, i: int, g: Any, x: np.ndarray) -> np.ndarray:
        """The checks of :meth:`run_backward` for the gradient ``g`` of input ``i`` (value ``x``): an array of x's
        shape, cast to x's dtype, finite under ``detect_anomaly()``."""
        if g is None:
            raise ShapeError(f"{type(self).__name__}.backward returned None for input {i}, whose gradient is needed")
        if type(g) is not np.ndarray:  # a NumPy scalar from a full reduction, or a list
            g = np.asarray(g)
        if g.shape != x.shape:
            raise ShapeError(
                f"{type(self).__name__}.backward: gradient for input {i} has shape {g.shape}, expected "
                f"{x.shape} (the input's shape){self._where()}"
            )
        if g.dtype != x.dtype:
            g = g.astype(x.dtype)
        if Config.detect_anomaly and not np.isfinite(g).all():
            raise AnomalyError(
                f"{type(self).__name__}.backward produced {_describe_bad(g)} in the gradient of input {i}"
                f"{self._where()}"
            )
        return g

    def release(self) -> None:
        """Drop what the recorded call saved for backward: ``inputs``, ``output`` and the attributes named in
        :attr:`saved`, keeping the configuration (:meth:`config`) and the flags.

        Eager: ``Engine.backward`` calls it when it releases the node; the op then cannot run backward again.
        Replay: called after every step, so that between steps a Parameter's array is held by the Parameter alone
        (and the optimizer updates it in place).
        """
        self.inputs = ()
        state = self.__dict__
        state.pop("output", None)
        for name in type(self).saved:  # the class's declaration, whatever a subclass's forward put on self.saved
            state.pop(name, None)

    def watch_versions(self, inputs: tuple[Variable, ...] | list[Variable]) -> None:
        """Remember the inputs' versions at forward time, so that backward can refuse inputs changed since."""
        self._versions = [v._version for v in inputs]

    def check_versions(self, inputs: list[Variable]) -> None:
        """Eager backward's first check (replay binds fresh values on every run, so it has none).

        Raises:
            InPlaceModificationError: if an input was modified in place after the forward pass (names the input).
        """
        if [p._version for p in inputs] != self._versions:
            self._raise_modified(inputs)

    def _check_count(self, grads: object, n_inputs: int) -> list[np.ndarray | None]:
        if isinstance(grads, (list, tuple)) and len(grads) == n_inputs:
            return list(grads)  # a tuple, or a list subclass: a plain list, which run_backward may write into
        got = len(grads) if isinstance(grads, (list, tuple)) else type(grads).__name__
        raise ShapeError(
            f"{type(self).__name__}.backward must return a list with one gradient per input "
            f"({n_inputs}), got {got}"
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


_ndarray = np.ndarray  # one global lookup instead of two in run_backward's loop


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
