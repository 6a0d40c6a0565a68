"""draw_graph: structure, styles, values and gradients, topological numbering, rendering, determinism, errors."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, GraphReleasedError, Parameter, Variable
from autograd_lab.ops import AddOp, DropoutOp, LogOp, MatMulOp, MulOp, SubOp, SumOp
from autograd_lab.viz import draw_graph
from autograd_lab.viz.graph import NONFINITE_COLOR, STYLES

from .helpers import attr, build_mlp, html_label, parse_dot, visible_text


def test_mlp_has_one_node_per_variable_and_operator_and_one_edge_per_input():
    """6 leaves + 6 internal Variables, 6 operators; edges: 2 inputs x 5 binary ops + 1 (ReLU) + 6 op->output."""
    mlp = build_mlp()
    dot = parse_dot(draw_graph(mlp.loss).source)
    variables = [k for k in dot.nodes if k.startswith("n")]
    operators = [k for k in dot.nodes if k.startswith("op")]
    assert (len(variables), len(operators)) == (12, 6)
    assert len(dot.edges) == 2 * 5 + 1 + 6


def test_node_ids_follow_engine_topo_sort():
    mlp = build_mlp()
    order = Engine.topo_sort(mlp.loss)
    dot = parse_dot(draw_graph(mlp.loss).source)
    for k, v in enumerate(order):
        text = visible_text(html_label(dot.nodes[f"n{k}"]))
        assert str(v.shape) in text or (v.ndim == 0 and "scalar" in text)
        if v.name:
            assert text.startswith(v.name)
        assert (f"op{k}" in dot.nodes) == (v.op is not None)


def test_edges_follow_parent_order_with_input_index_where_order_matters():
    mlp = build_mlp()
    order = Engine.topo_sort(mlp.loss)
    ids = {v: f"n{k}" for k, v in enumerate(order)}
    dot = parse_dot(draw_graph(mlp.loss).source)
    for k, v in enumerate(order):
        if v.op is None:
            continue
        into = dot.edge_labels(f"op{k}")
        assert [tail for tail, _ in into] == [ids[p] for p in v.parents]
        labels = [label for _, label in into]
        expected = {
            "MatMulOp": ["0: a", "1: b"],
            "SoftmaxCrossEntropyOp": ["0: logits", "1: labels"],
            "AddOp": ["", ""],  # order does not matter for a sum
            "ReLUOp": [""],
        }[type(v.op).__name__]
        assert labels == expected
        assert (f"op{k}", f"n{k}", "") in dot.edges


def test_sub_edges_are_labelled_and_an_input_used_twice_has_two_edges():
    a = Variable.from_numpy([1.0, 2.0], name="a")
    b = Variable.from_numpy([3.0, 4.0], name="b")
    d = SubOp()(b, a)  # b first: the drawing must say so
    sq = MulOp()(d, d)
    dot = parse_dot(draw_graph(sq).source)
    assert dot.edge_labels("op2") == [("n1", "0: a"), ("n0", "1: b")]  # n0 = a, n1 = b in topological order
    assert dot.edge_labels("op3") == [("n2", ""), ("n2", "")]


def test_leaves_parameters_internal_nodes_and_operators_are_styled_apart():
    mlp = build_mlp()
    order = Engine.topo_sort(mlp.loss)
    dot = parse_dot(draw_graph(mlp.loss).source)
    fills = {}
    for k, v in enumerate(order):
        kind = "Parameter" if isinstance(v, Parameter) else "leaf" if v.is_leaf else "internal"
        fills.setdefault(kind, set()).add(attr(dot.nodes[f"n{k}"], "fillcolor"))
        assert attr(dot.nodes[f"n{k}"], "shape") == "box"
        if v.op is not None:
            assert attr(dot.nodes[f"op{k}"], "shape") == "ellipse"
            fills.setdefault("operator", set()).add(attr(dot.nodes[f"op{k}"], "fillcolor"))
    assert all(len(colours) == 1 for colours in fills.values())
    assert len({next(iter(c)) for c in fills.values()}) == 4
    assert attr(dot.nodes[f"n{len(order) - 1}"], "peripheries") == "2"  # the root
    assert fills["Parameter"] == {STYLES["Parameter"]["fillcolor"]}


def test_values_shown_in_full_when_small_and_as_min_mean_max_when_large():
    small = Variable.from_numpy([1.5, -2.0], name="small")
    large = Variable.from_numpy(np.arange(10.0), name="large")
    total = AddOp()(SumOp()(small), SumOp()(large))
    dot = parse_dot(draw_graph(total).source)
    texts = [visible_text(html_label(a)) for a in dot.nodes.values()]
    assert any("small" in t and "data [1.5, -2]" in t for t in texts)
    assert any("large" in t and "data min 0  mean 4.5  max 9" in t for t in texts)
    assert any("data 44.5" in t for t in texts)  # -0.5 + 45
    hidden = parse_dot(draw_graph(total, show_values=False).source)
    assert not any("data" in visible_text(html_label(a)) for k, a in hidden.nodes.items() if k.startswith("n"))


def test_gradients_appear_once_backward_has_run():
    a = Variable.from_numpy([1.0, 2.0, 3.0], name="a")
    w = Parameter([2.0, -1.0, 0.5], name="w")
    loss = SumOp()(MulOp()(a, w))
    before = draw_graph(loss).source
    assert "grad " not in before
    Engine.backward(loss, retain_graph=True)
    texts = [visible_text(html_label(a)) for a in parse_dot(draw_graph(loss).source).nodes.values()]
    assert any(t.startswith("w") and "grad [1, 2, 3]" in t for t in texts)  # d(sum a*w)/dw = a
    assert any(t.startswith("a") and "grad [2, -1, 0.5]" in t for t in texts)
    assert "grad " not in draw_graph(loss, show_grads=False).source


def test_operator_configuration_is_shown():
    x = Variable.from_numpy(np.ones((2, 3)), name="x")
    y = MatMulOp(transpose_b=True)(x, x)
    s = SumOp(axis=1, keepdims=True)(y)
    out = SumOp()(DropoutOp(0.25, rng=np.random.default_rng(0))(s))
    dot = parse_dot(draw_graph(out).source)
    ops = {visible_text(html_label(a)).split("\n")[0]: a for k, a in dot.nodes.items() if k.startswith("op")}
    assert "transpose_a=False\ntranspose_b=True" in visible_text(html_label(ops["MatMulOp"]))
    texts = [visible_text(html_label(a)) for k, a in dot.nodes.items() if k.startswith("op")]
    assert any("axis=1\nkeepdims=True" in t for t in texts)
    assert "p=0.25" in visible_text(html_label(ops["DropoutOp"]))
    assert "dashed" in attr(ops["DropoutOp"], "style")  # output depends on train/eval mode


def test_nan_and_inf_are_highlighted():
    x = Variable.from_numpy([-1.0, 0.0, 1.0], name="x")
    with np.errstate(invalid="ignore", divide="ignore"):
        y = LogOp()(x)  # log(-1) = nan, log(0) = -inf
    dot = parse_dot(draw_graph(y).source)
    bad, good = dot.nodes["n1"], dot.nodes["n0"]
    assert attr(bad, "color") == NONFINITE_COLOR
    assert "BGCOLOR" in html_label(bad) and "BGCOLOR" not in html_label(good)
    assert "data [nan, -inf, 0]" in visible_text(html_label(bad))
    assert attr(good, "color") != NONFINITE_COLOR


def test_a_nonfinite_gradient_is_highlighted():
    w = Parameter([1.0, 2.0], name="w")
    w.grad = np.array([0.5, np.inf])
    dot = parse_dot(draw_graph(w).source)
    assert attr(dot.nodes["n0"], "color") == NONFINITE_COLOR
    assert "grad [0.5, inf]" in visible_text(html_label(dot.nodes["n0"]))


def test_a_lone_leaf_and_an_empty_array_draw():
    dot = parse_dot(draw_graph(Variable.from_numpy(np.zeros((0, 3)), name="empty")).source)
    assert list(dot.nodes) == ["n0"] and not dot.edges
    assert "(0, 3) float64\ndata []" in visible_text(html_label(dot.nodes["n0"]))


def test_topological_numbers_are_kahn_order_and_backward_steps_are_engine_order():
    mlp = build_mlp()
    order = Engine.topo_sort(mlp.loss)
    dot = parse_dot(draw_graph(mlp.loss, topo_numbers=True).source)
    number = {}
    for k in range(len(order)):
        text = visible_text(html_label(dot.nodes[f"n{k}"]))
        number[f"n{k}"] = int(text.split("topo #")[1].split()[0])
        assert number[f"n{k}"] == k
    # A valid topological numbering: every input is numbered before the node its operator produces.
    for tail, head, _ in dot.edges:
        if head.startswith("op"):
            assert number[tail] < int(head[2:])
    expected_steps = [f"op{order.index(v)}" for v in Engine.backward_order(mlp.loss) if v.op is not None]
    for j, op_id in enumerate(expected_steps, start=1):
        assert f"backward step {j}" in visible_text(html_label(dot.nodes[op_id]))
    assert "topo #" not in draw_graph(mlp.loss).source


def test_group_by_module_draws_one_frame_per_layer():
    mlp = build_mlp()
    source = draw_graph(mlp.loss, group_by="module").source
    assert "subgraph cluster_g0" in source and "subgraph cluster_g1" in source
    assert "<B>fc1</B>" in source and "<B>fc2</B>" in source
    with pytest.raises(ValueError, match="group_by"):
        draw_graph(mlp.loss, group_by="layer")


def test_same_graph_gives_identical_dot_without_addresses():
    first, second = build_mlp(seed=3), build_mlp(seed=3)
    a, b = draw_graph(first.loss, topo_numbers=True), draw_graph(second.loss, topo_numbers=True)
    assert a.source == b.source
    assert "0x" not in a.source and "0x" not in repr(a)
    assert repr(a) == "<GraphView: 12 Variables, 18 nodes and 17 edges drawn>"


def test_dot_renders_svg_and_png():
    mlp = build_mlp()
    Engine.backward(mlp.loss, retain_graph=True)
    g = draw_graph(mlp.loss, topo_numbers=True, legend=True)
    svg = g.pipe(format="svg", encoding="utf-8")
    png = g.pipe(format="png")
    assert svg.lstrip().startswith("<?xml") and svg.count('<g id="node') == 18 + 1  # + legend
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000


def test_released_graph_is_refused_with_the_engine_error():
    mlp = build_mlp()
    Engine.backward(mlp.loss)
    with pytest.raises(GraphReleasedError, match="retain_graph=True"):
        draw_graph(mlp.loss)


def test_bad_arguments_are_named():
    mlp = build_mlp()
    with pytest.raises(TypeError, match="expects a Variable, got ndarray"):
        draw_graph(np.ones(3))
    with pytest.raises(ValueError, match="rankdir"):
        draw_graph(mlp.loss, rankdir="UP")
    with pytest.raises(ValueError, match="max_nodes"):
        draw_graph(mlp.loss, max_nodes=1)
