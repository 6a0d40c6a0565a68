"""The generated replay function (capture/pycode.py): the same results as the checked loop and as eager, bit for
bit; safe with any name; the same errors; nothing kept after a run."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from autograd_lab import AnomalyError, Engine, Parameter, Variable, detect_anomaly
from autograd_lab.capture import Plan, Replay, capture
from autograd_lab.capture.pycode import python_source
from autograd_lab.errors import ShapeError
from autograd_lab.nn import CNN, MLP, SequenceClassifier
from autograd_lab.nn.losses import cross_entropy
from autograd_lab.ops import AddOp, LogOp, MatMulOp, MulOp, ReLUOp, SumOp, TanhOp

RNG = np.random.default_rng(11)


def step_of(model):
    def step(x, y):
        logits = model(x)
        return cross_entropy(logits, y), logits
    return step


MODELS = {
    "mlp with dropout": (lambda: MLP([12, 9, 4], dropout=0.3, rng=1), 12),
    "cnn with batch norm and dropout": (lambda: CNN(channels=(2, 3), dropout=0.2, rng=2), 784),
    "lstm": (lambda: SequenceClassifier("lstm", 28, 6, 10, rng=3), 784),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_generated_function_and_checked_loop_agree_bit_for_bit(name):
    """Two copies of one model (same weights, same dropout generator, same batch-norm statistics): one replays with
    the generated function, the other with the checked loop; outputs, gradients and state stay identical."""
    build, features = MODELS[name]
    models = [build(), build()]
    batches = [(RNG.random((5, features), dtype=np.float32), RNG.integers(0, 4, 5)) for _ in range(4)]
    replays = [Replay(capture(step_of(m), *batches[0], wrt=m.parameters())[0]) for m in models]
    for x, y in batches[1:]:
        results = []
        for model, run in zip(models, (replays[0].run, replays[1].run_checked)):
            for p in model.parameters():
                p.grad = None
            outputs = run(x, y)
            results.append([o.copy() for o in outputs] + [p.grad.copy() for p in model.parameters()])
        assert all(np.array_equal(a, b) for a, b in zip(*results))
        states = [m.state_dict() for m in models]
        assert all(np.array_equal(states[0][k], states[1][k]) for k in states[0])


def test_shared_values_duplicate_inputs_and_accumulation_match_eager():
    w = Parameter(RNG.standard_normal((3, 4)), name="w")
    b = Parameter(RNG.standard_normal(3), name="b")

    def f(x):
        h = MatMulOp(transpose_b=True)(x, w)
        s = AddOp()(h, b)
        sq = MulOp()(s, s)  # one value used twice by one op
        both = AddOp()(TanhOp()(sq), ReLUOp()(s))  # and s feeds three ops
        return SumOp()(AddOp()(both, AddOp()(b, b)))  # b used in three places, AddOp hands gy to both inputs

    x0 = RNG.standard_normal((2, 4))
    program, _ = capture(f, x0, wrt=[w, b])
    replay = Replay(program)
    x = RNG.standard_normal((2, 4))
    # A .grad already there is added to, as Engine.backward does.
    w.grad, b.grad = np.ones((3, 4)), None
    (loss,) = replay.run(x)
    got = (loss.copy(), w.grad.copy(), b.grad.copy())
    w.grad, b.grad = np.ones((3, 4)), None
    eager = f(Variable.from_numpy(x))
    Engine.backward(eager, inputs=[w, b])
    assert np.array_equal(got[0], eager.data)
    assert np.array_equal(got[1], w.grad) and np.array_equal(got[2], b.grad)
    assert b.grad.flags.writeable and b.grad.base is None


def logged(calls, tag, method):
    def call(*args):
        calls.append(tag)
        return method(*args)
    return call


@pytest.mark.parametrize("path", ["run", "run_checked"])
def test_a_replay_runs_each_forward_once_in_captured_order_then_backward_in_the_captured_backward_order(path):
    model = MLP([6, 5, 3], rng=0)
    x, y = RNG.random((4, 6), dtype=np.float32), np.zeros(4)
    program, _ = capture(step_of(model), x, y, wrt=model.parameters())
    calls: list[tuple[str, int]] = []
    for node in program.nodes:  # instance attributes, seen by the replay made below
        node.op.forward = logged(calls, ("forward", node.index), node.op.forward)
        node.op.run_backward = logged(calls, ("backward", node.index), node.op.run_backward)
    getattr(Replay(program), path)(x, y)
    assert calls == [("forward", n.index) for n in program.nodes] + [("backward", k) for k in program.backward_order]


@pytest.mark.parametrize("name", ["w\nimport os; os._exit(3)", "a'b\"c\\", "line\u2028sep\u0085next\x0cff\r",
                                  "x" * 500, "\t#\n"])
def test_any_name_stays_a_comment_or_a_string(name):
    w = Parameter(RNG.standard_normal((2, 3)), name=name)

    def f(x):
        return SumOp()(MatMulOp(transpose_b=True)(x, w))

    x = RNG.standard_normal((4, 3))
    program, _ = capture(f, x, wrt=[w])
    source, _ = python_source(program)
    compile(source, "<test>", "exec")
    assert all(line.startswith(("def ", "    ")) or not line for line in source.splitlines())
    w.grad = None
    Replay(program).run(x)
    assert np.allclose(w.grad, np.ones((4, 2)).T @ x)


def test_a_failing_forward_names_the_node_and_leaves_nothing_saved():
    w = Parameter(RNG.standard_normal((3, 4)))

    class Flaky(ReLUOp):
        fail = False

        def forward(self, x):
            if Flaky.fail:
                raise ValueError("went wrong")
            return super().forward(x)

    def f(x):
        return SumOp()(Flaky()(MatMulOp(transpose_b=True)(x, w)))

    x = RNG.standard_normal((2, 4))
    program, _ = capture(f, x, wrt=[w])
    replay = Replay(program)
    Flaky.fail = True
    message = ""
    try:
        replay.run(x)
    except ShapeError as exc:
        message = str(exc)
    assert message == "replay: node 1 (Flaky) failed: went wrong"
    before = weakref.ref(w._data)  # a weak reference does not count
    w.add_(np.ones((3, 4)))  # copy-on-write: in place only if nothing else (no op) holds the array
    assert w._data is before()


def test_after_a_run_each_parameter_array_is_held_by_its_parameter_alone():
    model = MLP([6, 5, 3], rng=0)
    plan = Plan(step_of(model), wrt=model.parameters())
    for _ in range(3):
        plan(RNG.random((4, 6), dtype=np.float32), RNG.integers(0, 3, 4))
    assert plan.replay is not None
    before = [weakref.ref(p._data) for p in model.parameters()]  # a weak reference does not count
    for p in model.parameters():
        p.add_(np.ones_like(p.grad))  # in place: nothing else holds the array
    assert all(p._data is a() for p, a in zip(model.parameters(), before))


def test_detect_anomaly_holds_for_a_replay_as_for_eager():
    """Under detect_anomaly() a replayed step stops at the first inf, naming the op; outside it, the same step
    returns the inf, as eager execution does."""
    w = Parameter(np.array([1.0, 2.0]))
    program, _ = capture(lambda x: SumOp()(LogOp()(MulOp()(x, w))), np.ones(2), wrt=[w])
    replay = Replay(program)
    with np.errstate(all="ignore"):  # log(0) = -inf and its gradient inf, on purpose
        with detect_anomaly(), pytest.raises(AnomalyError, match="LogOp"):
            replay.run(np.array([0.0, 1.0]))
        (loss,) = replay.run(np.array([0.0, 1.0]))
    assert loss == -np.inf


def test_a_dropped_plan_is_freed_at_once_not_by_the_garbage_collector():
    """A Plan made per epoch (train_epoch's default) must free its ops, and what they saved, when it is dropped: a
    reference cycle through the generated function's globals kept every epoch's im2col buffers alive (a CNN's peak
    memory grew by 8 MB an epoch) until a collection ran."""
    model = MLP([6, 5, 3], rng=0)

    def one_epoch():
        plan = Plan(step_of(model), wrt=model.parameters())
        for _ in range(3):
            plan(RNG.random((4, 6), dtype=np.float32), RNG.integers(0, 3, 4))
        assert plan.replay is not None
        return weakref.ref(plan.replay), weakref.ref(plan.replay.program.nodes[0].op)

    gc.collect()
    gc.disable()
    try:
        replay, op = one_epoch()
        assert replay() is None and op() is None
    finally:
        gc.enable()
