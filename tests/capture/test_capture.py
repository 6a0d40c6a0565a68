"""Capture and replay: the Program, the tracing rule, re-capture on new shapes, stateful ops, no new graph objects."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Operator, Parameter, Variable, detect_anomaly, eval_mode, no_grad
from autograd_lab.capture import CaptureError, Plan, Replay, ReplayShapeError, capture
from autograd_lab.errors import AnomalyError, ShapeError
from autograd_lab.nn.losses import cross_entropy
from autograd_lab.ops import AddOp, LogOp, MatMulOp, MulOp, ReLUOp, SumOp

RNG = np.random.default_rng(0)


def params(*shapes):
    return [Parameter(RNG.standard_normal(s)) for s in shapes]


def loss_fn(w, b):
    def f(x, y):
        return cross_entropy(AddOp()(MatMulOp(transpose_b=True)(x, w), b), y)
    return f


def eager_grads(fn, ps, *args):
    for p in ps:
        p.grad = None
    loss = fn(*[Variable.from_numpy(a) for a in args])
    Engine.backward(loss, inputs=ps)
    return loss.data, [p.grad.copy() for p in ps]


def test_capture_records_the_calls_in_order_and_runs_one_step():
    w, b = params((3, 4), (3,))
    x, y = RNG.standard_normal((5, 4)), np.array([0, 1, 2, 1, 0])
    expected_loss, expected = eager_grads(loss_fn(w, b), [w, b], x, y)
    w.grad = b.grad = None
    program, (loss,) = capture(loss_fn(w, b), x, y)
    assert [n.op_class for n in program.nodes] == ["MatMulOp", "AddOp", "SoftmaxCrossEntropyOp"]
    assert [program.values[i].kind for i in program.inputs] == ["input", "input"]
    assert [program.values[i].leaf for i in program.wrt] == [w, b]
    assert [program.nodes[i].op_class for i in program.backward_order] == ["SoftmaxCrossEntropyOp", "AddOp",
                                                                           "MatMulOp"]
    assert program.nodes[0].needs == (False, True)  # never d/dx
    assert loss == expected_loss and not loss.flags.writeable
    assert np.array_equal(w.grad, expected[0]) and np.array_equal(b.grad, expected[1])
    assert "MatMulOp(transpose_a=False, transpose_b=True)(input0" in program.describe()


def test_replay_matches_eager_on_new_data_and_accumulates_like_backward():
    w, b = params((3, 4), (3,))
    program, _ = capture(loss_fn(w, b), RNG.standard_normal((5, 4)), np.zeros(5))
    replay = Replay(program)
    for _ in range(3):
        x, y = RNG.standard_normal((5, 4)), RNG.integers(0, 3, 5)
        expected_loss, expected = eager_grads(loss_fn(w, b), [w, b], x, y)
        w.grad = b.grad = None
        (loss,) = replay.run(x, y)
        assert loss == expected_loss
        assert np.array_equal(w.grad, expected[0]) and np.array_equal(b.grad, expected[1])
    replay.run(x, y)  # no zero_grad: added to the gradient already there, as Engine.backward does
    assert np.array_equal(w.grad, 2 * expected[0])


def test_a_value_used_twice_sums_both_paths_in_eager_order():
    (w,) = params((4,))

    def f(x):
        h = MulOp()(x, w)
        return SumOp()(MulOp()(h, h))  # h feeds one op twice: d/dw sums two equal paths

    x = RNG.standard_normal(4)
    _, (expected,) = eager_grads(f, [w], x)
    w.grad = None
    Plan(f, verify=False)(x)
    assert np.array_equal(w.grad, expected)
    np.testing.assert_allclose(w.grad, 2 * w.data * x**2, rtol=1e-12)  # d/dw sum((w x)^2), by hand


def test_replay_builds_no_variables_and_no_operators(monkeypatch):
    w, b = params((3, 4), (3,))
    plan = Plan(loss_fn(w, b))
    x, y = RNG.standard_normal((5, 4)), np.zeros(5)
    plan(x, y)
    plan(x, y)  # the two captures

    def refuse(*args, **kwargs):
        raise AssertionError("replay created a graph object")

    monkeypatch.setattr(Variable, "_new", classmethod(refuse))
    monkeypatch.setattr(Operator, "__call__", refuse)
    monkeypatch.setattr(Operator, "__init__", refuse)
    plan(x, y)
    assert plan.captures == 2


def test_a_new_shape_captures_again_and_replay_refuses_a_wrong_shape():
    w, b = params((3, 4), (3,))
    plan = Plan(loss_fn(w, b), verify=False)
    plan(RNG.standard_normal((5, 4)), np.zeros(5))
    plan(RNG.standard_normal((2, 4)), np.zeros(2))
    assert plan.captures == 2
    plan(RNG.standard_normal((5, 4)), np.ones(5))
    assert plan.captures == 2
    with pytest.raises(ReplayShapeError, match=r"shape \(7, 4\).*captured for shape \(5, 4\)"):
        Replay(plan._replays[next(iter(plan._replays))].program).run(RNG.standard_normal((7, 4)), np.zeros(7))


@pytest.mark.parametrize("read", ["data", "item", "numpy", "param"])
def test_python_reading_a_value_while_capturing_is_refused_naming_the_line(read):
    (w,) = params((3,))

    def f(x):
        h = MulOp()(x, w)
        s = SumOp()(h)
        if read == "data" and h.data.sum() > 0:  # data-dependent control flow
            h = ReLUOp()(h)
        if read == "item" and s.item() > 0:
            h = ReLUOp()(h)
        if read == "numpy" and x.numpy().max() > 0:
            h = ReLUOp()(h)
        if read == "param" and w.data[0] > 0:
            h = ReLUOp()(h)
        return SumOp()(h)

    with pytest.raises(CaptureError, match=r"read the value of .*test_capture.py:\d+"):
        capture(f, np.ones(3))
    assert Engine.recorder is None  # the capture is cleaned up after the error
    f(Variable.from_numpy(np.ones(3)))  # eagerly, reading values is fine


def test_shapes_may_be_read_and_constants_made_while_capturing():
    (w,) = params((3,))

    def f(x):
        ones = Variable.from_numpy(np.ones(x.shape))  # a constant: a leaf made inside
        assert ones.data.sum() == 3  # reading a constant is fine
        return SumOp()(MulOp()(AddOp()(x, ones), w))

    plan = Plan(f)
    x = RNG.standard_normal(3)
    plan(x)
    plan(x)
    assert plan(x) == np.sum((x + 1) * w.data)
    assert [v.kind for v in plan.program.values if v.kind != "node"] == ["input", "const", "param"]


def test_a_graph_that_changes_between_two_captures_is_refused():
    (w,) = params((3,))
    calls = []

    def f(x):  # the structure depends on a counter, which no value read reveals
        calls.append(1)
        h = MulOp()(x, w)
        if len(calls) % 2 == 0:
            h = ReLUOp()(h)
        return SumOp()(h)

    plan = Plan(f)
    plan(np.ones(3))
    with pytest.raises(CaptureError, match=r"graph changed between two captures.*node 1 was SumOp"):
        plan(np.ones(3))


def test_a_node_computed_outside_the_function_is_refused():
    (w,) = params((3,))
    outside = ReLUOp()(w)
    with pytest.raises(CaptureError, match="computed outside the captured function"):
        capture(lambda x: SumOp()(MulOp()(x, outside)), np.ones(3))


def test_outputs_must_be_variables_and_the_loss_one_element():
    (w,) = params((3,))
    with pytest.raises(CaptureError, match="output 0 of the captured function is float"):
        capture(lambda x: 1.0, np.ones(3))
    with pytest.raises(ShapeError, match=r"one element; it has shape \(3,\)"):
        capture(lambda x: MulOp()(x, w), np.ones(3))
    program, (y,) = capture(lambda x: MulOp()(x, w), np.ones(3), backward=False)
    assert np.array_equal(y, w.data) and program.loss is None and w.grad is None


def test_ops_under_no_grad_are_replayed_forward_only():
    (w,) = params((3,))

    def f(x):
        with no_grad():
            scale = SumOp()(x)  # recomputed on every replay, but a constant for backward
        return SumOp()(MulOp()(MulOp()(x, w), scale))

    plan = Plan(f, verify=False)
    plan(np.ones(3))
    x = np.array([1.0, 2.0, 3.0])
    w.grad = None
    np.testing.assert_allclose(plan(x), np.sum(x * w.data) * 6, rtol=1e-14)
    np.testing.assert_array_equal(w.grad, x * 6)
    assert [n.recorded for n in plan.program.nodes] == [False, True, True, True]


class RunningMean:
    def __init__(self):
        self.mean = np.zeros(3)


class TrackMeanOp(Operator):
    """Identity that replaces ``stats.mean`` with a running mean in training (the BatchNormOp contract)."""

    def __init__(self, stats):
        self.stats = stats

    def forward(self, x):
        if Engine.is_training:
            self.stats.mean = 0.9 * self.stats.mean + 0.1 * x.mean(axis=0)
        return x * 1.0

    def backward(self, gy):
        return [gy]


def test_stateful_ops_and_dropout_replay_exactly_as_eager():
    from autograd_lab.ops import DropoutOp

    runs = []
    for engine in ("eager", "plan"):
        (w,) = params((3,))
        w.copy_(np.array([0.5, -1.0, 2.0]))
        stats, gen = RunningMean(), np.random.default_rng(5)

        def f(x, w=w, stats=stats, gen=gen):
            h = DropoutOp(0.5, rng=gen)(TrackMeanOp(stats)(MulOp()(x, w)))
            return SumOp()(h)

        plan = Plan(f)
        grads = []
        for k in range(5):
            x = np.full((4, 3), float(k + 1))
            w.grad = None
            if engine == "eager":
                Engine.backward(f(Variable.from_numpy(x)), inputs=[w])
            else:
                plan(x)
            grads.append(w.grad)
        runs.append((stats.mean, grads))
    (m_eager, g_eager), (m_plan, g_plan) = runs
    assert np.array_equal(m_eager, m_plan) and m_plan[0] != 0
    assert all(np.array_equal(a, b) for a, b in zip(g_eager, g_plan))


def test_detect_anomaly_checks_every_replayed_value():
    (w,) = params((3,))
    plan = Plan(lambda x: SumOp()(LogOp()(MulOp()(x, w))), verify=False)
    plan(np.ones(3) * np.sign(w.data))
    bad = -np.ones(3) * np.sign(w.data)
    with np.errstate(invalid="ignore"):
        assert np.isnan(plan(bad))  # without the checks, NaN flows through
        with detect_anomaly(), pytest.raises(AnomalyError, match="LogOp"):
            plan(bad)


def test_training_and_evaluation_mode_are_separate_programs():
    (w,) = params((3,))
    plan = Plan(lambda x: SumOp()(MulOp()(x, w)), backward=False, verify=False)
    plan(np.ones(3))
    with eval_mode():
        plan(np.ones(3))
    assert plan.captures == 2 and plan.program.training is False


def test_arguments_are_values_not_parameters():
    (w,) = params((3,))
    with pytest.raises(TypeError, match="argument 0 of capture"):
        capture(lambda p: SumOp()(p), w)


def test_captures_do_not_nest():
    with pytest.raises(CaptureError, match="do not nest"):
        capture(lambda x: capture(lambda z: z, np.ones(1))[0], np.ones(1), backward=False)
    assert Engine.recorder is None
