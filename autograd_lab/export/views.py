"""Views: reshape, transpose and slice as index remaps instead of copies.

A :class:`View` says where the elements of a tensor of some shape lie in the buffer of another tensor: element
``idx`` is at ``offset + sum(idx[a] * strides[a])`` (in elements), as a NumPy array's strides say it. A reshape, a
transpose or a slice of a view is again a view (when NumPy could do it without a copy), so the head split of
attention (a slice of the fused projection, a reshape to heads, a transpose) costs nothing at run time: the batched
matrix product reads the projection's buffer through the strides. Kernels that read plain contiguous arrays get a
``copy`` step (``al_copy_f32``, a strided gather) when a view is not the whole of its buffer in row-major order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from autograd_lab.export.errors import ExportError
from autograd_lab.export.steps import Step
from autograd_lab.export.trace import Tensor

#: Loop axes of al_copy_f32 (templates/copy_f32.c).
COPY_AXES = 4


def row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a contiguous row-major array of ``shape``."""
    strides, s = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = s
        s *= shape[i]
    return tuple(strides)


@dataclass(frozen=True, eq=False)
class View:
    """A tensor's elements seen in ``base``'s buffer: element ``idx`` at ``offset + Σ idx[a]·strides[a]``."""

    base: Tensor
    offset: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    @staticmethod
    def whole(t: Tensor) -> View:
        """The tensor itself: its whole buffer in row-major order."""
        return View(t, 0, tuple(t.shape), row_major(tuple(t.shape)))

    @property
    def is_whole(self) -> bool:
        """Whether this is exactly ``base``'s buffer in row-major order (what plain kernels read)."""
        size = int(np.prod(self.shape, dtype=np.int64))
        return self.offset == 0 and size == self.base.size and all(
            s == r for s, r, d in zip(self.strides, row_major(self.shape), self.shape) if d != 1)

    def transpose(self, axes: tuple[int, ...] | None) -> View:
        """The view of ``np.transpose(x, axes)`` (axes None: reversed)."""
        order = tuple(range(len(self.shape)))[::-1] if axes is None else tuple(a % len(self.shape) for a in axes)
        return View(self.base, self.offset, tuple(self.shape[a] for a in order),
                    tuple(self.strides[a] for a in order))

    def slice(self, start: int, stop: int, axis: int, step: int) -> View:
        """The view of ``x[..., start:stop:step, ...]`` along ``axis``."""
        axis %= len(self.shape)
        first, _, _ = slice(start, stop, step).indices(self.shape[axis])
        n = len(range(*slice(start, stop, step).indices(self.shape[axis])))
        shape = (*self.shape[:axis], n, *self.shape[axis + 1:])
        strides = (*self.strides[:axis], self.strides[axis] * step, *self.strides[axis + 1:])
        return View(self.base, self.offset + first * self.strides[axis], shape, strides)

    def reshape(self, shape: tuple[int, ...]) -> View | None:
        """The view of ``x.reshape(shape)`` when it needs no copy, else None.

        Each run of axes of the new shape must fill a run of the old axes whose elements are evenly spaced (the
        rule of NumPy's no-copy reshape)."""
        old = [(d, s) for d, s in zip(self.shape, self.strides) if d != 1]
        new_shape = tuple(int(d) for d in shape)
        new = [d for d in new_shape if d != 1]
        strides_new: list[int] = []
        i = j = 0
        while i < len(old) and j < len(new):
            # grow the two runs until their products agree
            oi, nj = i + 1, j + 1
            po, pn = old[i][0], new[j]
            while po != pn:
                if po < pn:
                    po *= old[oi][0]
                    oi += 1
                else:
                    pn *= new[nj]
                    nj += 1
            for k in range(i, oi - 1):
                if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                    return None  # the old run is not evenly spaced: splitting it differently needs a copy
            s = old[oi - 1][1]
            run = []
            for d in reversed(new[j:nj]):
                run.append(s)
                s *= d
            strides_new.extend(reversed(run))
            i, j = oi, nj
        it = iter(strides_new)
        strides = tuple(next(it) if d != 1 else 0 for d in new_shape)
        return View(self.base, self.offset, new_shape, strides)


def merge_axes(dims: list[int], *strides: list[int]) -> tuple[list[int], list[list[int]]]:
    """Drop axes of length 1, then merge neighbouring axes along which every stride list is contiguous: the fewest
    loop axes that visit the same elements in the same order. Returns (dims, [strides...])."""
    keep = [i for i, d in enumerate(dims) if d != 1]
    dims = [dims[i] for i in keep]
    ss = [[s[i] for i in keep] for s in strides]
    i = len(dims) - 2
    while i >= 0:
        if all(s[i] == s[i + 1] * dims[i + 1] for s in ss):
            dims[i:i + 2] = [dims[i] * dims[i + 1]]
            for s in ss:
                s[i:i + 2] = [s[i + 1]]
        i -= 1
    return dims, ss


def copy_step(view: View, dst: Tensor, where: str) -> Step:
    """A ``copy`` step: the elements of ``view`` in row-major order into ``dst`` (contiguous).

    Raises:
        ExportError: naming the step, if the view needs more than :data:`COPY_AXES` loop axes.
    """
    dims, (strides,) = merge_axes(list(view.shape), list(view.strides))
    if len(dims) > COPY_AXES:
        raise ExportError(f"{where}: gathering a view of shape {view.shape} with strides {view.strides} needs "
                          f"{len(dims)} loop axes; the C kernel handles {COPY_AXES}")
    pad = COPY_AXES - len(dims)
    params = {"offset": view.offset, "dims": [1] * pad + dims, "strides": [0] * pad + strides}
    return Step("copy", [view.base], dst, params, where)
