"""Leak test: after a training-style step, the only live Variables are the Parameters.

Backward releases the graph (each node drops its operator and parents), so once the caller lets go of the batch and the
loss, nothing keeps the graph alive. Counting uses the garbage collector's view of live objects.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np

from autograd_lab import Engine, Parameter, Variable
from autograd_lab.ops import AddOp, DropoutOp, MatMulOp, ReLUOp, SoftmaxCrossEntropyOp


def live_variables(exclude: set[int]) -> list[Variable]:
    gc.collect()
    # issubclass(type(o)) rather than isinstance(o): isinstance reads o.__class__, which some lazy modules intercept.
    return [o for o in gc.get_objects() if issubclass(type(o), Variable) and id(o) not in exclude]


def training_step(params: list[Parameter], rng: np.random.Generator, lr: float = 0.1) -> float:
    w1, b1, w2, b2 = params
    x = Variable.from_numpy(rng.standard_normal((16, 8)).astype(np.float32), name="x")
    labels = Variable.from_numpy(rng.integers(0, 4, size=16), name="labels")
    h = ReLUOp()(AddOp()(MatMulOp(transpose_b=True)(x, w1), b1))
    h = DropoutOp(0.2, rng=rng)(h)
    logits = AddOp()(MatMulOp(transpose_b=True)(h, w2), b2)
    loss = SoftmaxCrossEntropyOp()(logits, labels)
    Engine.backward(loss, inputs=params)
    for p in params:
        p.add_(-lr * p.grad)
        p.grad = None
    return loss.item()


def make_params(rng: np.random.Generator) -> list[Parameter]:
    shapes = [(12, 8), (12,), (4, 12), (4,)]
    return [Parameter((0.3 * rng.standard_normal(s)).astype(np.float32), name=f"p{i}") for i, s in enumerate(shapes)]


def test_after_a_training_step_the_live_variables_are_exactly_the_parameters():
    before = {id(o) for o in live_variables(set())}
    rng = np.random.default_rng(0)
    params = make_params(rng)
    for _ in range(3):
        training_step(params, rng)
    alive = live_variables(before)
    assert len(alive) == len(params)
    assert {id(v) for v in alive} == {id(p) for p in params}
    assert all(isinstance(v, Parameter) for v in alive)


def test_the_graph_is_freed_even_while_the_caller_keeps_the_loss():
    """Holding the (released) loss keeps only the loss and its op: the parents and saved values were dropped."""
    rng = np.random.default_rng(1)
    params = make_params(rng)
    x = Variable.from_numpy(rng.standard_normal((4, 8)))
    h = ReLUOp()(MatMulOp(transpose_b=True)(x, params[0]))
    probe = weakref.ref(h)
    loss = SoftmaxCrossEntropyOp()(MatMulOp(transpose_b=True)(h, params[2]), Variable.from_numpy([0, 1, 2, 3]))
    del h
    Engine.backward(loss)
    gc.collect()
    assert probe() is None
    assert loss.op is not None and loss.parents == [] and loss.op.inputs == ()
