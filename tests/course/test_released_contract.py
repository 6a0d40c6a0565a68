"""What chapters 01 and 03 tell learners about a node released by ``Engine.backward`` (issue 14, decided contract).

A released internal node keeps its ``op`` (whose saved values are dropped), so ``is_leaf`` stays False;
``is_released`` is True, ``parents`` is ``[]``, its repr says "released", and a second backward through it raises
``GraphReleasedError``.

"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Variable
from autograd_lab.errors import GraphReleasedError
from autograd_lab.ops import AddOp, MulOp


def running_example() -> tuple[Variable, Variable, Variable]:
    """x = 3, y = x·x, w = (y + x)·y: the graph of chapters 01 and 03."""
    x = Variable.from_numpy(np.array(3.0), name="x")
    y = MulOp()(x, x)
    w = MulOp()(AddOp()(y, x), y)
    w.name = "w"
    return x, y, w


def test_released_node_reports_released_and_keeps_its_value_and_leaves_their_gradients() -> None:
    x, y, w = running_example()
    Engine.backward(w)
    assert w.is_released and y.is_released and not x.is_released
    assert w.parents == [] and y.parents == []
    assert w.grad is None and y.grad is None and float(x.grad) == 135.0
    assert float(w.data) == 108.0
    with pytest.raises(GraphReleasedError, match="retain_graph"):
        Engine.backward(w)


def test_released_node_keeps_its_op_so_it_is_not_a_leaf() -> None:
    x, y, w = running_example()
    op = w.op
    Engine.backward(w)
    assert w.op is op and isinstance(w.op, MulOp)
    assert not w.is_leaf and not y.is_leaf and x.is_leaf
    assert "released" in repr(w)


def test_retain_graph_keeps_op_and_parents() -> None:
    x, _y, w = running_example()
    Engine.backward(w, retain_graph=True)
    assert not w.is_released and w.parents and w.op is not None and not w.is_leaf
    Engine.backward(w, retain_graph=True)
    assert float(x.grad) == 270.0
