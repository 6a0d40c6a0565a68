"""Edge cases of the generated replay function (capture/pycode.py), each one where it once disagreed with eager
execution or with Replay.run_checked, or behaved worse than them (found by an adversarial review)."""

from __future__ import annotations

import numpy as np
import pytest

from autograd_lab import Engine, Operator, Parameter, Variable, detect_anomaly
from autograd_lab.capture import Plan, Replay, capture
from autograd_lab.errors import AnomalyError, ShapeError
from autograd_lab.ops import LogOp, MulOp, SumOp


def nothing_saved(program):
    return all(n.op.inputs == () and not hasattr(n.op, "output") for n in program.nodes)


class Scale(Operator):
    """2x; from its second backward on, returns ``Scale.later(gy)`` (an op whose backward misbehaves on replay)."""

    later = None

    def __init__(self) -> None:
        self._calls = 0

    def forward(self, a):
        return a * 2

    def backward(self, gy):
        self._calls += 1
        return [gy * 2] if self._calls == 1 else Scale.later(gy)


@pytest.mark.parametrize("later, message", [
    (lambda gy: [None], "returned None for input 0, whose gradient is needed"),
    (lambda gy: [gy * 2, gy], r"one gradient per input \(1\), got 2"),
    (lambda gy: [], r"one gradient per input \(1\), got 0"),
])
def test_a_bad_backward_result_is_refused_by_the_generated_function_as_by_run_checked(monkeypatch, later, message):
    """Before: None became asarray(None).astype(float64), a 0-d NaN stored as w.grad (shape () for a (3,) weight);
    an extra gradient was ignored; a missing one raised IndexError. Eager and run_checked raise ShapeError."""
    w = Parameter(np.ones(3))
    program, _ = capture(lambda x: SumOp()(MulOp()(Scale()(w), x)), np.ones(3))
    replay = Replay(program)
    monkeypatch.setattr(Scale, "later", staticmethod(later))
    for run in (replay.run_checked, replay.run):
        w.grad = None
        with pytest.raises(ShapeError, match=message):
            run(np.ones(3))
        assert w.grad is None and nothing_saved(program)


def test_an_operator_class_name_cannot_become_code():
    """The class name went unescaped into the backward comment; a newline in it made the rest a statement."""
    ran = []
    name = "Evil\n        ran.append(1)\n        #"
    evil = type(name, (Operator,), {"forward": lambda self, a: a * 2, "backward": lambda self, gy: [gy * 2]})
    w = Parameter(np.ones(3))
    program, _ = capture(lambda x: SumOp()(MulOp()(evil()(w), x)), np.ones(3))
    replay = Replay(program)
    assert "def replay_step" in replay.source and replay._compile() is not None  # generated and compiled
    replay._step.__globals__["ran"] = ran  # what injected code would reach
    w.grad = None
    (loss,) = replay.run(np.full(3, 2.0))
    assert loss == 12 and np.array_equal(w.grad, [4.0, 4.0, 4.0])
    assert ran == []
    assert all("ran.append" not in line or -1 < line.find("#") < line.find("ran.append")
               for line in replay.source.splitlines())


def test_a_name_that_is_not_a_string_does_not_break_capture():
    """Variable.name is not checked; Parameter(name=5) captured and replayed before the change (describe() and the
    checked loop format it), but _comment iterated it: TypeError: 'int' object is not iterable."""
    w = Parameter(np.arange(3.0), name=5)
    program, _ = capture(lambda x: SumOp()(MulOp()(w, x)), np.ones(3))
    w.grad = None
    (loss,) = Replay(program).run(np.full(3, 2.0))
    assert loss == 6 and np.array_equal(w.grad, [2.0, 2.0, 2.0])


class Sneaky(str):
    def __repr__(self):
        return "'x', copy); ran.append(1); (None"


def test_a_name_whose_repr_is_code_stays_data():
    """A placeholder's label went into the source through repr(): a str subclass's __repr__ became code."""
    ran = []
    x = Variable(np.ones(3), name=Sneaky("images"))
    w = Parameter(np.ones(3))
    program, _ = capture(lambda x: SumOp()(MulOp()(w, x)), x)
    replay = Replay(program)
    assert "def replay_step" in replay.source and replay._compile() is not None  # generated and compiled
    replay._step.__globals__["ran"] = ran
    assert replay.run(np.full(3, 2.0))[0] == 6
    assert ran == []
    with pytest.raises(TypeError, match=r"^images: expected a real numeric array"):
        replay.run(np.ones(3, dtype=complex))
    assert ran == []


def test_run_checked_releases_the_saved_values_on_any_exception():
    """Under detect_anomaly(), Replay.run is run_checked; an AnomalyError (not a ValueError) in node 1's forward left
    node 0 holding its inputs, the Parameter's array among them (so the next Parameter.add_ copies it)."""
    w = Parameter(np.ones(3))
    program, _ = capture(lambda x: SumOp()(LogOp()(MulOp()(x, w))), np.ones(3))
    replay = Replay(program)
    with detect_anomaly(), np.errstate(invalid="ignore"), pytest.raises(AnomalyError, match="LogOp"):
        replay.run(-np.ones(3))
    assert nothing_saved(program)


class Picky(Operator):
    fail = False

    def forward(self, a):
        if Picky.fail:
            raise ValueError("no")
        return a * 1

    def backward(self, gy):
        return [gy]


def test_a_failing_forward_names_the_node_on_both_paths(monkeypatch):
    """The generated function says 'replay: node 1 (Picky) failed: no'; run_checked (the path of run under
    detect_anomaly) said 'Picky.forward raised ValueError on inputs of shapes (3,) (called at <the replay call>):
    no'."""
    w = Parameter(np.ones(3))
    program, _ = capture(lambda x: SumOp()(Picky()(MulOp()(x, w))), np.ones(3))
    replay = Replay(program)
    monkeypatch.setattr(Picky, "fail", True)
    messages = []
    for run in (replay.run, replay.run_checked):
        with pytest.raises(ShapeError) as info:
            run(np.ones(3))
        messages.append(str(info.value))
        assert nothing_saved(program)
    assert messages == ["replay: node 1 (Picky) failed: no"] * 2


def test_capture_does_not_generate_code_it_never_runs(monkeypatch):
    """capture() builds a Replay only to run the checked loop once; it compiled the fast function each time, so a
    Plan compiled three times per signature (two captures and the replay) where one is used."""
    import autograd_lab.capture.replay as replay_module

    compiled = []
    real = replay_module.compile_source
    monkeypatch.setattr(replay_module, "compile_source", lambda source, env: compiled.append(1) or real(source, env))
    w = Parameter(np.ones(3))
    fn = lambda x: SumOp()(MulOp()(w, x))  # noqa: E731
    capture(fn, np.ones(3))
    assert compiled == []
    plan = Plan(fn)
    for _ in range(4):
        plan(np.ones(3))
    assert plan.captures == 2 and len(compiled) == 1
    assert "def replay_step" in Replay(plan.program).source


def test_eager_agrees_after_the_fixes():
    """A value used twice, a Parameter in two places, a float32/float64 mix: fast path, checked path and eager."""
    rng = np.random.default_rng(3)
    w = Parameter(rng.standard_normal(3).astype(np.float32), name="w\u2028\r\n'\"")
    b = Parameter(rng.standard_normal(3), name=7)

    def fn(x):
        h = MulOp()(x, w)
        return SumOp()(MulOp()(MulOp()(h, h), MulOp()(b, w)))

    program, _ = capture(fn, np.ones(3, np.float32))
    replay = Replay(program)
    x = rng.standard_normal(3).astype(np.float32)
    results = []
    for run in (replay.run, replay.run_checked, None):
        w.grad = b.grad = None
        if run is None:
            loss = fn(Variable(x))
            Engine.backward(loss, inputs=[w, b])
            out = loss.data
        else:
            (out,) = run(x)
        results.append((out, w.grad, b.grad))
    for other in results[1:]:
        assert all(a.dtype == c.dtype and np.array_equal(a, c) for a, c in zip(results[0], other))


def test_describe_takes_a_name_that_is_not_a_string():
    w = Parameter(np.ones(3), name=5)
    program, _ = capture(lambda x: SumOp()(MulOp()(x, w)), np.ones(3), wrt=[w])
    assert "5" in program.describe()


def test_a_program_too_large_for_the_compiler_replays_through_the_checked_loop(monkeypatch):
    """CPython's compiler recurses over nesting and raises RecursionError on a huge generated function: replay then
    keeps to the checked loop, with the same results. Any other fault in making the function is not swallowed."""
    import autograd_lab.capture.replay as replay_module

    w = Parameter(np.arange(3.0))
    plan = Plan(lambda x: SumOp()(MulOp()(w, x)))
    plan(np.ones(3))
    expected = [a.tolist() for a in Replay(plan.program).run(np.full(3, 2.0))]
    assert expected == [6.0]  # sum(w * 2) with w = [0, 1, 2]

    def too_deep(source, env):
        raise RecursionError("maximum recursion depth exceeded during compilation")

    monkeypatch.setattr(replay_module, "compile_source", too_deep)
    assert [a.tolist() for a in Replay(plan.program).run(np.full(3, 2.0))] == expected
    monkeypatch.setattr(replay_module, "compile_source", lambda source, env: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        Replay(plan.program).run(np.full(3, 2.0))
