"""Tracing: unsupported ops are named with their node, dropout is the identity at inference."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Parameter, Variable, eval_mode
from autograd_lab.export import ExportError, graph_from_root, graph_to_c, trace
from autograd_lab.ops import AddOp, DivOp, DropoutOp, MulOp, ReLUOp


def test_an_unsupported_op_is_named_with_its_node():
    x = Variable.from_numpy(np.ones((1, 3), dtype=np.float32), name="input")
    y = DivOp()(x, Parameter(np.ones(3, dtype=np.float32), name="scale"))
    y.name = "scaled"
    with pytest.raises(ExportError, match=r"DivOp at node 2 \('scaled'\) is not supported"):
        graph_from_root(ReLUOp()(y), x)


def test_dropout_traced_in_eval_mode_is_the_identity():
    def model(x):
        return ReLUOp()(DropoutOp(0.5)(x))

    graph = trace(model, (1, 4))
    assert [n.kind for n in graph.nodes] == ["relu"]
    assert graph.nodes[0].inputs[0] is graph.input


def test_dropout_traced_in_training_mode_is_refused():
    x = Variable.from_numpy(np.ones((1, 64), dtype=np.float32), name="input")
    y = DropoutOp(0.5, rng=np.random.default_rng(0))(x)
    with pytest.raises(ExportError, match=r"DropoutOp at node 1.*training mode"):
        graph_from_root(ReLUOp()(y), x)


def test_constant_subexpressions_are_folded_into_one_constant():
    a = Parameter(np.ones(3, dtype=np.float32), name="a")
    b = Parameter(np.full(3, 2.0, dtype=np.float32), name="b")
    x = Variable.from_numpy(np.zeros(3, dtype=np.float32), name="input")
    with eval_mode():
        y = AddOp()(x, MulOp()(a, b))
    graph = graph_from_root(y, x)
    assert len(graph.nodes) == 1
    np.testing.assert_array_equal(graph.nodes[0].inputs[1].value, [2.0, 2.0, 2.0])


def test_a_model_that_only_passes_its_input_through_is_refused():
    with pytest.raises(ExportError, match="no operation"):
        graph_to_c(trace(lambda x: DropoutOp(0.1)(x), (1, 3)), "m")


def test_an_output_independent_of_the_input_is_refused():
    x = Variable.from_numpy(np.zeros(3, dtype=np.float32), name="input")
    c = Parameter(np.ones(3, dtype=np.float32))
    with pytest.raises(ExportError, match="does not depend on the input"):
        graph_from_root(ReLUOp()(c), x)
