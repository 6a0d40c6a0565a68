"""The exporter's front end is the captured Program: one graph form for replay and for C."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Variable, eval_mode
from autograd_lab.capture import capture
from autograd_lab.export import ExportError, graph_from_root, trace
from autograd_lab.export.trace import graph_from_program
from autograd_lab.nn import MLP
from autograd_lab.ops import AddOp, ReLUOp, SumOp


def test_trace_lowers_the_program_that_capture_records():
    model = MLP([6, 5, 3], dropout=0.5, layer_norm=True, rng=0)
    x = Variable.from_numpy(np.zeros((1, 6), dtype=np.float32), name="input")
    with eval_mode():
        program, (out,) = capture(model, x, backward=False, keep_values=True)
    graph = graph_from_program(program)
    traced = trace(model, (1, 6))
    assert [(n.index, n.kind, n.output.name, n.output.shape) for n in graph.nodes] == \
           [(n.index, n.kind, n.output.name, n.output.shape) for n in traced.nodes]
    # Program node i is graph node (number of leaves + i); dropout is the identity and is left out.
    kinds = [n.op_class for n in program.nodes]
    assert "DropoutOp" in kinds and "identity" not in [n.kind for n in graph.nodes]
    leaves = sum(v.kind != "node" for v in program.values)
    assert [n.index - leaves for n in graph.nodes] == [i for i, k in enumerate(kinds) if k != "DropoutOp"]
    # The same program replays in NumPy: the output of the capture is the model's output.
    with eval_mode():
        np.testing.assert_array_equal(out, model(x).data)


def test_a_graph_built_by_hand_goes_through_the_same_program():
    x = Variable.from_numpy(np.zeros((1, 3), dtype=np.float32), name="input")
    y = ReLUOp()(AddOp()(x, Variable.from_numpy(np.ones(3, dtype=np.float32), name="bias")))
    graph = graph_from_root(y, x)
    assert [(n.index, n.kind) for n in graph.nodes] == [(2, "add"), (3, "relu")]
    assert graph.nodes[0].inputs[1].name == "bias" and graph.nodes[0].inputs[1].kind == "const"


def test_a_model_that_reads_a_value_while_traced_is_refused():
    def model(x):
        h = ReLUOp()(x)
        return h if SumOp()(h).item() > 0 else x  # data-dependent: not exportable

    with pytest.raises(ExportError, match=r"cannot be traced.*read the value"):
        trace(model, (1, 4))


def test_a_program_without_its_values_cannot_be_lowered():
    model = MLP([4, 2], rng=0)
    with eval_mode():
        program, _ = capture(model, np.zeros((1, 4), dtype=np.float32), backward=False)
    with pytest.raises(ExportError, match="keep_values=True"):
        graph_from_program(program)
