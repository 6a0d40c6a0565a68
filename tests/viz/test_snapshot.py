"""The DOT text of one small graph, compared exactly with tests/viz/snapshots/small_graph.dot.

Any change to the drawing (labels, colours, layout attributes, node ids) shows up here. When the change is meant:

    AUTOGRAD_LAB_UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/viz/test_snapshot.py   # rewrites the file (test skips)
    git diff tests/viz/snapshots/                                                  # review it, then commit it

then render it (``dot -Tpng tests/viz/snapshots/small_graph.dot -o /tmp/small.png``) and look at the picture.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from autograd_lab import Engine, Parameter, Variable
from autograd_lab.ops import MulOp, SubOp, SumOp
from autograd_lab.viz import draw_graph

SNAPSHOT = Path(__file__).parent / "snapshots" / "small_graph.dot"


def small_graph_source() -> str:
    """loss = sum((a - b)²) with a = [1, 2] (leaf), b = [3, -1] (Parameter), after backward."""
    a = Variable.from_numpy(np.array([1.0, 2.0]), name="a")
    b = Parameter(np.array([3.0, -1.0]), name="b")
    d = SubOp()(a, b)
    loss = SumOp()(MulOp()(d, d))
    Engine.backward(loss, retain_graph=True)
    return draw_graph(loss, topo_numbers=True).source


def test_small_graph_dot_matches_the_snapshot():
    source = small_graph_source()
    if os.environ.get("AUTOGRAD_LAB_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(source, encoding="utf-8")
        pytest.skip(f"snapshot rewritten: review `git diff {SNAPSHOT}`")
    assert source == SNAPSHOT.read_text(encoding="utf-8"), (
        "the DOT output changed; if that is intended, see this module's docstring to update the snapshot"
    )


def test_snapshot_values_are_the_hand_computed_ones():
    """The snapshot itself holds the right numbers: d = [-2, 3], loss = 13, dloss/da = 2d, dloss/db = -2d."""
    text = SNAPSHOT.read_text(encoding="utf-8")
    for expected in ("data [-2, 3]", "data 13", "grad [-4, 6]", "grad [4, -6]"):
        assert expected in text
