"""Variable and Parameter: the nodes of a computational graph.

A Variable holds a value (``.data``), a gradient buffer (``.grad``), the Operator that produced it (``.op``) and that
operator's inputs (``.parents``, in input order, duplicates kept). Leaves (``op is None``) are made with
:meth:`Variable.from_numpy`; internal nodes are made by operators through :meth:`Variable._new`.

Values are never changed in place behind the engine's back: every ``.data`` array is read-only, so ``v.data[0] = 1``
raises ``ValueError: assignment destination is read-only``. A leaf copies the array it is given, so later changes to
the caller's array do not leak into the graph. The one sanctioned in-place write is :meth:`Parameter.add_` (used by the
optimizers), which bumps a version counter so that a graph that saved the old value refuses to run backward.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np

from autograd_lab.config import Config

if TYPE_CHECKING:
    from autograd_lab.operator import Operator


_refcount = getattr(sys, "getrefcount", None)


def as_leaf_array(array: Any, where: str, copy: bool = True) -> np.ndarray:
    """Turn ``array`` into a read-only floating-point ndarray, by default a private copy: what a leaf holds.

    Used by :class:`Variable` and by replay (:mod:`autograd_lab.capture`) to bind new arguments the same way.

    Floating dtypes are kept; integer and boolean input is converted to float64 (so that integer class labels can
    still be fed to :class:`~autograd_lab.ops.SoftmaxCrossEntropyOp`). Anything else raises TypeError. With
    ``copy=False`` a floating ndarray is used as it is and marked read-only, so later writes by the caller fail
    loudly instead of silently changing the leaf.

    Args:
        array: any real array-like. where: the name used in the error message (``"Variable(x)"``).

    Raises:
        TypeError: for complex, object or string data.
    """
    data = np.asarray(array)
    kind = data.dtype.kind
    if kind == "f":
        # Without a copy, only an array that owns its memory is safe: a view's base could still be written.
        if copy or not data.flags.owndata:
            data = data.copy()
    elif kind in "iub":
        data = data.astype(np.float64)
    else:
        raise TypeError(
            f"{where}: expected a real numeric array, got dtype {data.dtype} "
            "(integers and booleans are converted to float64; complex, object and string arrays are not supported)"
        )
    data.setflags(write=False)
    return data


class Variable:
    """A node of the computational graph.

    Attributes:
        data: the value, an ndarray of any shape with a floating dtype (float32 or float64); read-only.
        grad: the accumulated gradient d(root)/d(self), same shape as ``data``, or None before backward.
        name: an optional label used by ``repr``, the graph drawings and the C exporter.
    """

    __slots__ = ("__weakref__", "_data", "_op", "_parents", "_released", "_version", "grad", "name")

    _data: np.ndarray
    _op: Operator | None
    _parents: list[Variable]
    _released: bool
    _version: int
    grad: np.ndarray | None
    name: str | None

    def __init__(self, data: Any, name: str | None = None, *, copy: bool = True) -> None:
        self._data = as_leaf_array(data, f"{type(self).__name__}({name or ''})", copy)
        self._op = None
        self._parents = []
        self._released = False
        self._version = 0
        self.grad = None
        self.name = name

    # -- factories -----------------------------------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, array: Any, name: str | None = None, *, copy: bool = True) -> Variable:
        """Make a leaf from an array-like: float dtypes kept, int/bool converted to float64, value read-only.

        Args:
            array: any real array-like, e.g. (N, 784) float32 images.
            name: an optional label.
            copy: True (default) stores a private copy, so later changes to ``array`` cannot reach the graph.
                False uses a floating ndarray that owns its memory as it is and makes it read-only (for a mini-batch
                made for this call); a view is still copied, since its base array could be written.

        Raises:
            TypeError: for complex, object or string data.
        """
        return cls(array, name=name, copy=copy)

    @classmethod
    def _new(cls, data: np.ndarray, op: Operator | None, parents: list[Variable]) -> Variable:
        """Make an internal node. Called by :class:`~autograd_lab.Operator`; ``data`` must already be read-only."""
        var = object.__new__(cls)
        var._data = data
        var._op = op
        var._parents = parents
        var._released = False
        var._version = 0
        var.grad = None
        var.name = None
        return var

    # -- graph structure -----------------------------------------------------------------------------------------
    @property
    def op(self) -> Operator | None:
        """The Operator that produced this node, or None for a leaf. Read-only: assigning raises AttributeError."""
        return self._op

    @property
    def parents(self) -> list[Variable]:
        """The op's inputs, in input order; an input used twice appears twice. Empty for a leaf."""
        return self._parents

    @property
    def is_leaf(self) -> bool:
        """True when no operator produced this node (``op is None``)."""
        return self._op is None

    @property
    def is_released(self) -> bool:
        """True once a backward without ``retain_graph`` has released this node: it keeps its ``op`` (whose saved
        values are dropped), ``parents`` is ``[]``, and a backward through it raises GraphReleasedError."""
        return self._released

    # -- value ---------------------------------------------------------------------------------------------------
    @property
    def data(self) -> np.ndarray:
        """The value (read-only ndarray)."""
        if Config.read_hook is not None:  # a capture is running
            Config.read_hook(self)
        return self._data

    @data.setter
    def data(self, value: Any) -> None:
        """Replace a leaf's value with a copy of ``value`` (for placeholders re-run with :meth:`Engine.forward`).

        Raises:
            AttributeError: for an internal node, whose value belongs to its operator.
        """
        if self._op is not None:
            raise AttributeError(
                f"cannot assign .data of a node computed by {type(self._op).__name__}; "
                "change the leaves and call Engine.forward(root) instead"
            )
        self._data = as_leaf_array(value, f"{type(self).__name__}({self.name or ''}).data")
        self._version += 1

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of ``data``."""
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        """dtype of ``data``."""
        return self._data.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions of ``data``."""
        return self._data.ndim

    @property
    def size(self) -> int:
        """Number of elements of ``data``."""
        return self._data.size

    def numpy(self) -> np.ndarray:
        """Return a writable copy of the value."""
        if Config.read_hook is not None:  # a capture is running
            Config.read_hook(self)
        return self._data.copy()

    def item(self) -> float:
        """Return the value of a one-element Variable as a Python float."""
        if Config.read_hook is not None:  # a capture is running
            Config.read_hook(self)
        return float(self._data.reshape(-1)[0]) if self._data.size == 1 else float(self._data.item())

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        shape = "x".join(map(str, self.shape)) or "scalar"
        if self._op is None:
            origin = "leaf"
        else:
            origin = f"op={type(self._op).__name__}" + (", released" if self._released else "")
        grad = "None" if self.grad is None else ("x".join(map(str, self.grad.shape)) or "scalar")
        return f"{type(self).__name__}({name}shape={shape}, dtype={self.dtype}, {origin}, grad={grad})"


class Parameter(Variable):
    """A trainable leaf: the only kind of Variable that optimizers update.

    ``Parameter(array, name=None)`` copies ``array`` (float32 or float64 kept; int/bool become float64).
    """

    __slots__ = ()

    def __init__(self, data: Any, name: str | None = None, *, copy: bool = True) -> None:
        # A Parameter always owns a private copy: add_ and copy_ write into it.
        super().__init__(data, name, copy=True)

    def add_(self, delta: np.ndarray) -> None:
        """``data += delta``, in place when nothing else holds the array; bumps the version so stale graphs refuse
        backward.

        Copy-on-write: if anything else still refers to the value array (an operator of a retained graph saved it, or
        a reshape/transpose output is a view of it), the sum goes into a new array instead, so values already handed
        out never change behind the engine's back. In a training loop the graph is released by then, and the update
        allocates nothing.

        Args:
            delta: broadcastable to ``self.shape``; cast to ``self.dtype``.
        """
        data = self._private_data()
        data.setflags(write=True)
        try:
            np.add(data, delta, out=data)  # a ufunc's default casting into out= is "same_kind"
        finally:
            data.setflags(write=False)
        self._version += 1

    def copy_(self, value: np.ndarray) -> None:
        """``data[...] = value`` (for loading weights), with the same copy-on-write rule as :meth:`add_`.

        Raises:
            ValueError: when ``value`` does not have this Parameter's shape.
        """
        value = np.asarray(value)
        if value.shape != self.shape:
            raise ValueError(f"Parameter {self.name!r}: expected shape {self.shape}, got {value.shape}")
        data = self._private_data()
        data.setflags(write=True)
        try:
            np.copyto(data, value, casting="same_kind")
        finally:
            data.setflags(write=False)
        self._version += 1

    def _private_data(self) -> np.ndarray:
        """The value array, replaced by a private copy first if any other object refers to it."""
        # Two references are ours: the attribute and getrefcount's own argument (CPython reference counting; where
        # the interpreter cannot count references, always copy).
        if _refcount is None or _refcount(self._data) > 2:
            self._data = self._data.copy()
        return self._data
