"""Embedding lookup: rows of a table picked by integer ids, and the scatter-add that is its gradient."""

from __future__ import annotations

import numpy as np

from autograd_lab.operator import Operator


class EmbeddingOp(Operator):
    """``y = weight[ids]``: ``EmbeddingOp()(weight, ids)`` takes row ``ids[p]`` of the table for every position p.

    Shapes: weight (V, E), a table of V vectors of width E; ids (...) of any shape, whole numbers in [0, V) (a
    Variable holds them as floats, as it holds class labels); y (..., E), weight's dtype.

    Backward: y[p] = weight[ids[p]], so dweight[v] = Σ_{p: ids[p] = v} gy[p], a scatter-add (``np.add.at``: an id
    that occurs twice receives both gradients; rows that no id picked get 0). The ids are discrete and get a zero
    gradient, like the labels of :class:`~autograd_lab.ops.SoftmaxCrossEntropyOp`.

    Raises:
        ShapeError: if weight is not 2-D, or an id is not a whole number in [0, V) (the message names the first such
            id and its position).
    """

    saved = ("_index",)

    _index: np.ndarray  # the ids as integers

    def forward(self, weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
        if weight.ndim != 2:
            raise ValueError(f"weight must be a (V, E) table, got shape {weight.shape}")
        n_rows = weight.shape[0]
        with np.errstate(invalid="ignore"):  # NaN or ±inf casts to garbage, which the check below refuses
            index = ids.astype(np.intp)
        bad = ~((index == ids) & (index >= 0) & (index < n_rows))  # NaN equals nothing
        if bad.any():
            where = tuple(int(i) for i in np.argwhere(bad)[0])
            raise ValueError(f"ids must be whole numbers in [0, {n_rows}) (the table has {n_rows} rows); "
                             f"ids[{', '.join(map(str, where))}] = {float(ids[where])}")
        self._index = index
        return weight[index]

    def backward(self, gy: np.ndarray) -> list[np.ndarray | None]:
        weight, ids = self.inputs
        g_weight = None
        if self.needs_grad(0):
            g_weight = np.zeros_like(weight)
            np.add.at(g_weight, self._index.reshape(-1), gy.reshape(-1, weight.shape[1]))
        return [g_weight, np.zeros_like(ids) if self.needs_grad(1) else None]
