"""A graph with every operator of autograd_lab.ops (discovered from ``ops.__all__``, so new ops are covered) draws,
labels its inputs, and renders."""

from __future__ import annotations

import inspect

import numpy as np

import autograd_lab.ops as ops
from autograd_lab import Engine, Parameter, Variable
from autograd_lab.viz import draw_graph

from .helpers import html_label, parse_dot, visible_text

RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2.0, size=(2, 3))
Y = RNG.uniform(0.5, 2.0, size=(2, 3))

# Ops that need settings or particular inputs; every other op is built with no arguments and called on as many
# (2, 3) positive inputs as its forward has required parameters.
RECIPES = {
    "PowOp": lambda v: ops.PowOp()(v("x", X), v("p", np.full((2, 3), 2.0))),
    "MatMulOp": lambda v: ops.MatMulOp(transpose_b=True)(v("x", X), v("y", Y)),
    "LeakyReLUOp": lambda v: ops.LeakyReLUOp(0.1)(v("x", X)),
    "EmbeddingOp": lambda v: ops.EmbeddingOp()(v("weight", X), v("ids", np.array([[1.0, 0.0, 1.0]]))),
    "SumOp": lambda v: ops.SumOp(axis=1, keepdims=True)(v("x", X)),
    "MeanOp": lambda v: ops.MeanOp(axis=0)(v("x", X)),
    "MaxOp": lambda v: ops.MaxOp(axis=1)(v("x", X)),
    "ReshapeOp": lambda v: ops.ReshapeOp((3, 2))(v("x", X)),
    "BroadcastToOp": lambda v: ops.BroadcastToOp((4, 2, 3))(v("x", X)),
    "SoftmaxCrossEntropyOp": lambda v: ops.SoftmaxCrossEntropyOp()(v("logits", X), v("labels", np.array([0, 2]))),
    "DropoutOp": lambda v: ops.DropoutOp(0.5, rng=np.random.default_rng(0))(v("x", X)),
    "SliceOp": lambda v: ops.SliceOp(1, 3)(v("x", X)),
    "SelectOp": lambda v: ops.SelectOp(0, axis=1)(v("x", X)),
    "StackOp": lambda v: ops.StackOp(axis=1)(v("x", X), v("y", Y)),
    "ConcatenateOp": lambda v: ops.ConcatenateOp(axis=1)(v("x", X), v("y", Y)),
    "IndexOp": lambda v: ops.IndexOp((slice(None, None, 2), None, Ellipsis))(v("x", X)),
    "ClipOp": lambda v: ops.ClipOp(0.8, 1.5)(v("x", X)),
    "LSTMGatesOp": lambda v: ops.LSTMGatesOp()(v("gates", RNG.normal(size=(2, 8)))),
    "LSTMCellStateOp": lambda v: ops.LSTMCellStateOp(axis=-1)(v("gates", RNG.random((2, 8))), v("c", X[:, :2])),
    "LSTMHiddenOp": lambda v: ops.LSTMHiddenOp(axis=-1)(v("gates", RNG.random((2, 8))), v("c", X[:, :2])),
    "LayerNormOp": lambda v: ops.LayerNormOp()(v("x", X), v("gamma", np.ones(3)), v("beta", np.zeros(3))),
    "Conv2DOp": lambda v: ops.Conv2DOp(padding=1)(v("x", X.reshape(1, 1, 2, 3)), v("w", Y.reshape(1, 1, 2, 3))),
    "MaxPool2DOp": lambda v: ops.MaxPool2DOp(2, stride=1)(v("x", X.reshape(1, 1, 2, 3))),
    "AvgPool2DOp": lambda v: ops.AvgPool2DOp((1, 3))(v("x", X.reshape(1, 1, 2, 3))),
    "BatchNormOp": lambda v: ops.BatchNormOp(ops.RunningStats(3, np.float64))(
        v("x", X), v("gamma", np.ones(3)), v("beta", np.zeros(3))),
}


def build(name: str) -> Variable:
    def leaf(label: str, value: np.ndarray) -> Variable:
        return Parameter(value, name=f"{name}.{label}")

    if name in RECIPES:
        return RECIPES[name](leaf)
    op_type = getattr(ops, name)
    params = list(inspect.signature(op_type.forward).parameters.values())[1:]
    required = [p for p in params if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    inputs = [leaf(p.name, X if i == 0 else Y) for i, p in enumerate(required)]
    try:
        return op_type()(*inputs)
    except Exception as exc:
        raise AssertionError(f"cannot build {name} generically ({exc}); add a recipe to RECIPES in {__file__}") from exc


def every_op_graph() -> tuple[Variable, dict[str, Variable]]:
    """One output per op, each summed to a scalar, all added into one root."""
    outputs = {name: build(name) for name in ops.__all__}
    root = None
    for out in outputs.values():
        total = ops.SumOp()(out)
        root = total if root is None else ops.AddOp()(root, total)
    return root, outputs


def test_every_op_appears_with_its_inputs_in_order():
    root, outputs = every_op_graph()
    order = Engine.topo_sort(root)
    index = {v: k for k, v in enumerate(order)}
    dot = parse_dot(draw_graph(root, max_nodes=10_000).source)
    for name, out in outputs.items():
        k = index[out]
        assert visible_text(html_label(dot.nodes[f"op{k}"])).split("\n")[0] == name
        into = dot.edge_labels(f"op{k}")
        assert [tail for tail, _ in into] == [f"n{index[p]}" for p in out.parents]
        if len(out.parents) > 1 and name not in ("AddOp", "MulOp"):
            assert [label.split(":")[0] for _, label in into] == [str(i) for i in range(len(out.parents))]


def test_every_op_graph_renders_with_values_and_gradients():
    root, _ = every_op_graph()
    Engine.backward(root, retain_graph=True)
    g = draw_graph(root, topo_numbers=True, legend=True, max_nodes=10_000)
    svg = g.pipe(format="svg", encoding="utf-8")  # PNG of this wide graph takes seconds; the MLP test renders PNG
    assert svg.count('class="node"') == len(parse_dot(g.source).nodes)
