"""Large graphs are folded: the drawing stays small, says how much it folded, and `dot` lays it out quickly.

The timeouts are hang guards (pytest-timeout), not speed targets: drawing and rendering a 10,000-node graph takes
well under a second here.
"""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable
from autograd_lab.ops import AddOp, MatMulOp, MulOp, ReLUOp, SumOp
from autograd_lab.viz import draw_graph

from .helpers import html_label, parse_dot, visible_text


def chain(n_steps: int) -> Variable:
    """x, multiplied n_steps times by a fresh constant each time, then summed: 2 * n_steps + 2 Variables."""
    v = Variable.from_numpy(np.ones(3), name="x")
    for _ in range(n_steps):
        v = MulOp()(v, Variable.from_numpy(np.full(3, 1.0001)))
    return SumOp()(v)


def caption(source: str) -> str:
    line = next(line for line in source.splitlines() if line.strip().startswith("label=<"))
    return visible_text(html_label(line))


@pytest.mark.timeout(60)
def test_ten_thousand_node_chain_is_folded_into_one_box_and_renders():
    root = chain(5000)  # 10,002 Variables
    g = draw_graph(root)
    dot = parse_dot(g.source)
    folds = [k for k in dot.nodes if k.startswith("f")]
    assert folds == ["f0"]
    assert "9,998 nodes folded" in visible_text(html_label(dot.nodes["f0"]))
    assert "MulOp ×4,999" in visible_text(html_label(dot.nodes["f0"]))
    assert caption(g.source) == "9,998 of 10,002 Variables folded into 1 box(es) (max_nodes=200)"
    # x, the first product and its constant, and the root stay visible.
    assert len([k for k in dot.nodes if k.startswith("n")]) == 4
    assert g.pipe(format="svg").startswith(b"<?xml")


@pytest.mark.timeout(60)
def test_wide_graph_keeps_the_nodes_nearest_the_root():
    leaves = [Variable.from_numpy([float(i)]) for i in range(5000)]
    level = leaves
    while len(level) > 1:  # a balanced tree of additions: no chains to fold
        pairs = [AddOp()(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        level = pairs + level[len(pairs) * 2 :]
    g = draw_graph(level[0], max_nodes=50)
    dot = parse_dot(g.source)
    variables = [k for k in dot.nodes if k.startswith("n")]
    assert len(variables) == 49 and [k for k in dot.nodes if k.startswith("f")] == ["f0"]
    assert f"n{len(leaves) * 2 - 2}" in variables  # the root (9,999 Variables, numbered from 0)
    assert caption(g.source) == "9,950 of 9,999 Variables folded into 1 box(es) (max_nodes=50)"
    assert g.pipe(format="svg").startswith(b"<?xml")


@pytest.mark.timeout(60)
def test_deep_named_network_folds_by_module():
    rng = np.random.default_rng(0)
    h = Variable.from_numpy(rng.normal(size=(2, 4)), name="x")
    for i in range(30):  # 30 layers x (W, b, MatMul, Add, ReLU) = 150 Variables + x + root
        W = Parameter(rng.normal(size=(4, 4)) * 0.5, name=f"layer{i}.W")
        b = Parameter(np.zeros(4), name=f"layer{i}.b")
        h = ReLUOp()(AddOp()(MatMulOp()(h, W), b))
    g = draw_graph(SumOp()(h), group_by="module", max_nodes=100)
    dot = parse_dot(g.source)
    folds = [visible_text(html_label(a)) for k, a in dot.nodes.items() if k.startswith("f")]
    assert len(folds) == 30
    assert folds[0] == "5 nodes folded\nlayer0\nParameter ×2, MatMulOp ×1, AddOp ×1, ReLUOp ×1"
    assert ("f0", "f1", "style=dashed") in dot.edges
    assert caption(g.source) == "150 of 152 Variables folded into 30 box(es) (max_nodes=100)"
    assert g.pipe(format="svg").startswith(b"<?xml")


def test_small_graphs_are_never_folded():
    g = draw_graph(chain(10))
    assert not [k for k in parse_dot(g.source).nodes if k.startswith("f")]
    assert "folded" not in g.source
