"""Ops that take parts of arrays apart and put them together: Slice, Select, Stack, Concatenate, Index.

A recurrent network needs all three: it slices the four gate blocks out of one (N, 4H) pre-activation, selects the
time step t of an (N, T, D) sequence, and stacks the T hidden states into an (N, T, H) output. Each backward routes
the gradient back to the elements it came from; elements that were not taken get a zero gradient.

Forward values of Slice and Select are read-only views of the input (no copy); Stack copies, as ``np.stack`` does.
"""

from __future__ import annotations

from types import EllipsisType
from typing import TypeAlias

import numpy as np

from autograd_lab._callsite import user_callsite
from autograd_lab.errors import ShapeError
from autograd_lab.operator import Operator
from autograd_lab.variable import Variable


def _axis_in_range(op: str, axis: int, ndim: int) -> int:
    """``axis`` made non-negative, or a ShapeError naming the op when the input has no such axis."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{op}: axis {axis} is out of range for an input with {ndim} dimension(s)")
    return axis % ndim


class SliceOp(Operator):
    """``x[..., start:stop:step, ...]``: every ``step``-th element of start ... stop - 1 along ``axis`` (a view).

    Shapes: x (..., n, ...) -> (..., ⌈(stop - start) / step⌉, ...), the other axes unchanged. Backward: a zero array
    of x's shape with ``gy`` written into the slice, since y_j = x_(start + j·step) and the rest of x does not reach y.
    (:class:`IndexOp` takes any basic index: several axes, ``None``, ``...``.)

    Args:
        start, stop: the half-open range ``[start, stop)``, ``0 ≤ start < stop ≤ n``.
        axis: the axis to slice (negative counts from the end; default -1, the feature axis).
        step: the stride, a positive integer (default 1).

    Raises:
        ShapeError: if the input has no such axis or the range does not lie inside it (NumPy would silently return a
            shorter slice; a gate block of the wrong width must not go unnoticed).
        ValueError: for a step that is not a positive integer.
    """

    cached = ("_checked",)

    # The input shape last checked and its index: a replayed plan calls forward again with the same shape, and the
    # checks and the index tuple cost several times the slicing itself (an LSTM step slices four times).
    _checked: tuple[tuple[int, ...], tuple[slice, ...]] | None = None

    def __init__(self, start: int, stop: int, axis: int = -1, step: int = 1) -> None:
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 1:
            raise ValueError(f"SliceOp: step must be a positive integer, got {step!r}")
        self.start = int(start)
        self.stop = int(stop)
        self.axis = int(axis)
        self.step = int(step)

    def _index(self, shape: tuple[int, ...]) -> tuple[slice, ...]:
        """The index of the slice in an input of ``shape``, checked once per shape."""
        checked = self._checked
        if checked is not None and checked[0] == shape:
            return checked[1]
        axis = _axis_in_range("SliceOp", self.axis, len(shape))
        n = shape[axis]
        if not 0 <= self.start < self.stop <= n:
            raise ShapeError(
                f"SliceOp: range [{self.start}, {self.stop}) does not lie inside axis {self.axis} of length {n} "
                f"(input shape {shape})"
            )
        index = (slice(None),) * axis + (slice(self.start, self.stop, self.step),)
        self._checked = (shape, index)
        return index

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x[self._index(x.shape)]

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        gx = np.zeros(x.shape, x.dtype)  # np.zeros: about half the cost of zeros_like for an LSTM's (N, 4H) gates
        gx[self._index(x.shape)] = gy
        return [gx]


class SelectOp(Operator):
    """``x[:, index]`` for ``axis=1``: one position along ``axis``, which is removed (like ``torch.select``).

    Shapes: x (N, T, D) -> (N, D) for ``axis=1``; in general the axis is dropped. Backward: zeros of x's shape with
    ``gy`` at the selected position. When x's gradient is not wanted (an input batch), backward skips that work.

    Args:
        index: the position, ``-n ≤ index < n`` (negative counts from the end).
        axis: the axis to select from (default 1, the time axis of a batch-first sequence).

    Raises:
        ShapeError: if the input has no such axis or ``index`` is out of range.
    """

    cached = ("_checked",)

    _checked: tuple[tuple[int, ...], tuple[slice | int, ...]] | None = None  # as SliceOp's

    def __init__(self, index: int, axis: int = 1) -> None:
        self.index = int(index)
        self.axis = int(axis)

    def _key(self, shape: tuple[int, ...]) -> tuple[slice | int, ...]:
        """The index of the position in an input of ``shape``, checked once per shape."""
        checked = self._checked
        if checked is not None and checked[0] == shape:
            return checked[1]
        axis = _axis_in_range("SelectOp", self.axis, len(shape))
        n = shape[axis]
        if not -n <= self.index < n:
            raise ShapeError(f"SelectOp: index {self.index} is out of range for axis {self.axis} of length {n} "
                             f"(input shape {shape})")
        key = (slice(None),) * axis + (self.index,)
        self._checked = (shape, key)
        return key

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x[self._key(x.shape)]

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        if not self.needs_grad(0):
            return [None]
        x = self.inputs[0]
        gx = np.zeros(x.shape, x.dtype)
        gx[self._key(x.shape)] = gy
        return [gx]


class StackOp(Operator):
    """``np.stack(xs, axis)``: join k arrays of the same shape along a new axis.

    Shapes: k inputs of shape (N, H) -> (N, k, H) for ``axis=1``. Backward: input i gets the slice i of ``gy`` along
    that axis (stacking is the inverse of selecting), a view of ``gy``, so nothing is copied.

    Args:
        axis: where the new axis goes in the output (default 1: time steps of a batch-first sequence).

    Raises:
        ShapeError: if there are no inputs or their shapes differ (naming each input's shape).
    """

    def __init__(self, axis: int = 1) -> None:
        self.axis = int(axis)

    def __call__(self, *variables: Variable) -> Variable:
        """Stack the inputs, given as separate arguments: ``StackOp(axis=1)(*states)``.

        Raises:
            TypeError: if an input is a list or tuple (the states passed as one list instead of unpacked), or not a
                Variable; ShapeError as in the class docstring.
        """
        for i, v in enumerate(variables):
            if isinstance(v, (list, tuple)):
                kind, items = type(v).__name__, "1 item" if len(v) == 1 else f"{len(v)} items"
                raise TypeError(
                    f"StackOp input {i} is a {kind} of {items} (called at {user_callsite() or 'unknown'}); "
                    f"StackOp takes the arrays to stack as separate arguments: unpack the {kind} with *, as in "
                    f"StackOp(axis={self.axis})(*states)"
                )
        return super().__call__(*variables)

    def forward(self, *xs: np.ndarray) -> np.ndarray:
        if not xs:
            raise ShapeError("StackOp needs at least one input")
        shapes = {x.shape for x in xs}
        if len(shapes) != 1:
            listed = ", ".join(str(x.shape) for x in xs)
            raise ShapeError(f"StackOp: all inputs must have the same shape, got {listed}")
        _axis_in_range("StackOp", self.axis, xs[0].ndim + 1)
        return np.stack(xs, axis=self.axis)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        lead = (slice(None),) * (self.axis % gy.ndim)
        keys: list[tuple[slice | int, ...]] = [(*lead, i) for i in range(len(self.inputs))]
        return [gy[key] if self.needs_grad(i) else None for i, key in enumerate(keys)]


class ConcatenateOp(Operator):
    """``np.concatenate(xs, axis)``: join k arrays along an existing axis (``torch.cat``).

    Shapes: inputs equal except along ``axis`` (lengths n_1 ... n_k, zero allowed) -> that axis of length Σ n_i.
    Backward: input i gets its own block of ``gy``, rows n_1 + ... + n_(i-1) up to the next block (a view).

    Args:
        axis: the axis to join along (negative counts from the end; default 0).

    Raises:
        ShapeError: if there are no inputs, an input is 0-d, the axis is out of range, or the shapes differ off the
            axis (naming each input's shape).
    """

    def __init__(self, axis: int = 0) -> None:
        self.axis = int(axis)

    def forward(self, *xs: np.ndarray) -> np.ndarray:
        if not xs:
            raise ShapeError("ConcatenateOp needs at least one input")
        axis = _axis_in_range("ConcatenateOp", self.axis, xs[0].ndim)
        if len({(x.ndim, x.shape[:axis] + x.shape[axis + 1:]) for x in xs}) != 1:
            listed = ", ".join(str(x.shape) for x in xs)
            raise ShapeError(f"ConcatenateOp: inputs must have the same shape except along axis {self.axis}, "
                             f"got {listed}")
        return np.concatenate(xs, axis=axis)

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        axis = self.axis % gy.ndim
        ends = np.cumsum([x.shape[axis] for x in self.inputs])
        lead = (slice(None),) * axis
        return [gy[(*lead, slice(end - x.shape[axis], end))] if self.needs_grad(i) else None
                for i, (x, end) in enumerate(zip(self.inputs, ends))]


#: One entry of a basic index: an integer, a slice, None (a new axis of length 1) or Ellipsis.
IndexEntry: TypeAlias = int | slice | EllipsisType | None


class IndexOp(Operator):
    """``x[key]`` for a basic NumPy index: integers, slices with any step, ``None`` and ``...`` (a read-only view).

    ``IndexOp((slice(1, 5, 2), None, Ellipsis, 0))(x)`` is ``x[1:5:2, None, ..., 0]``. Out-of-range slice ends are
    clipped, as in NumPy and PyTorch; an integer out of range is an error. Shapes follow NumPy's basic indexing.
    Backward: a zero array of x's shape with ``gy`` written at the indexed elements (``gx[key] = gy``); basic indexing
    never picks an element twice, so nothing needs adding. Integer arrays (advanced indexing) are not accepted.

    Args:
        key: one entry or a tuple of entries (int, slice, None, Ellipsis).

    Raises:
        TypeError: for an entry of another kind (an array, a float, a Variable).
        ShapeError: for an integer out of range, too many indices, more than one Ellipsis, or a step of 0.
    """

    def __init__(self, key: IndexEntry | tuple[IndexEntry, ...]) -> None:
        key = key if isinstance(key, tuple) else (key,)
        for entry in key:
            ok = entry is None or entry is Ellipsis or isinstance(entry, slice) or (
                isinstance(entry, (int, np.integer)) and not isinstance(entry, bool))
            if not ok:
                raise TypeError(f"IndexOp: an index entry must be an int, a slice, None or Ellipsis, got {entry!r}")
        self.key = key

    def forward(self, x: np.ndarray) -> np.ndarray:
        try:
            return x[self.key]
        except IndexError as exc:
            raise ShapeError(f"IndexOp: index {self.key} does not fit an input of shape {x.shape}: {exc}") from exc

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        x = self.inputs[0]
        gx = np.zeros(x.shape, x.dtype)
        gx[self.key] = gy
        return [gx]
