"""Chapter 03's graded tests, run against the library's Engine (issue 21, item 7).

The claim: ``Engine.topo_sort``, ``Engine.backward_order`` and ``Engine.backward`` are the engine a learner writes
in ``assignments/source/03_engine/03_engine.ipynb`` plus release, checks and modes. Each test below is one visible
test of that notebook (named after its ``grade_id``), with the same cases and the same expected values, called on
the library instead of the learner's function. Where the library differs, the difference is one of the three and
the test says which:

* release: without ``retain_graph=True`` the graph is released after one backward, so a second backward on the
  same graph is run with ``retain_graph=True`` on the first;
* checks: a backward that returns None for a gradient that is needed is refused (the notebook's engine skips it);
  a root of more than one element needs ``grad=`` (the notebook seeds ones of any shape);
* modes: ``inputs=`` is the notebook's ``backward_to`` challenge.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from autograd_lab import CycleError, Engine, Operator, Parameter, ShapeError, Variable
from autograd_lab.ops import AddOp, DivOp, MulOp, SubOp

rng = np.random.default_rng(0)


def v(value, name=None):
    return Variable.from_numpy(np.asarray(value, dtype=float), name=name)


def running_example():
    x = v(3.0, "x")
    y = MulOp()(x, x)
    z = AddOp()(y, x)
    w = MulOp()(z, y)
    return x, y, z, w


def assert_topological(order, root):
    assert isinstance(order, list) and len({id(n) for n in order}) == len(order)
    assert order and order[-1] is root
    position = {id(n): i for i, n in enumerate(order)}
    for n in order:
        for p in n.parents:
            assert position[id(p)] < position[id(n)]


def assert_backward_order(order, root):
    assert isinstance(order, list) and order and order[0] is root
    assert len({id(n) for n in order}) == len(order)
    position = {id(n): i for i, n in enumerate(order)}
    for n in order:
        for p in n.parents:
            assert position[id(p)] > position[id(n)]


def random_graph(n_ops: int):
    pool = [v(rng.normal(size=2)) for _ in range(4)]
    for _ in range(n_ops):
        i, j = (int(k) for k in rng.integers(0, len(pool), size=2))
        pool.append([AddOp, MulOp, SubOp][int(rng.integers(0, 3))]()(pool[i], pool[j]))
    return pool[-1]


class TightRecursionLimit:
    """A recursion limit a few frames above the current depth: any recursion over a graph would hit it."""

    def __enter__(self):
        depth, frame = 0, sys._getframe()
        while frame is not None:
            depth, frame = depth + 1, frame.f_back
        self.previous = sys.getrecursionlimit()
        sys.setrecursionlimit(depth + 60)

    def __exit__(self, *exc):
        sys.setrecursionlimit(self.previous)


# -- topo_sort_test ---------------------------------------------------------------------------------------------------
def test_topo_sort_test_valid_orders_and_cycles():
    *_, w = running_example()
    order = Engine.topo_sort(w)
    assert_topological(order, w)
    assert len(order) == 4
    a = v(np.ones(2), "a")
    assert Engine.topo_sort(a) == [a]
    p = v(1.0, "p")
    q = AddOp()(p, p)
    p.parents.append(q)  # tampering: a cycle
    with pytest.raises(RuntimeError):  # the library's CycleError is a RuntimeError, as the notebook asks
        Engine.topo_sort(q)


# -- topo_sort_deep_test ----------------------------------------------------------------------------------------------
def test_topo_sort_deep_test_a_chain_5000_deep():
    c, x0 = v(1.0001, "c"), v(0.5, "x0")
    h = x0
    for _ in range(5000):
        h = MulOp()(h, c)
    with TightRecursionLimit():
        order = Engine.topo_sort(h)
    assert len(order) == 5002 and order[-1] is h
    assert_topological(order, h)


# -- backward_test ----------------------------------------------------------------------------------------------------
def test_backward_test_running_example_and_two_leaves():
    x, y, z, w = running_example()
    Engine.backward(w, retain_graph=True)  # release: kept for the second pass below
    assert np.isclose(x.grad, 135.0)  # dw/dx for w = x^4 + x^3 at x = 3
    assert y.grad is None and z.grad is None and w.grad is None

    av, bv = rng.uniform(1.0, 2.0, size=3), rng.uniform(1.0, 2.0, size=3)
    a, bb = v(av, "a"), v(bv, "b")
    f = DivOp()(SubOp()(a, bb), MulOp()(a, bb))  # 1/b - 1/a
    Engine.backward(f, grad=np.ones(3))  # checks: a root of 3 elements needs grad=
    assert np.allclose(a.grad, 1 / av**2) and np.allclose(bb.grad, -1 / bv**2)

    p32 = Variable.from_numpy(np.array([1.0, 2.0], dtype=np.float32))
    Engine.backward(MulOp()(p32, p32), grad=np.ones(2, np.float32))
    assert p32.grad is not None and p32.grad.dtype == np.float32

    Engine.backward(w)
    assert np.isclose(x.grad, 270.0)  # a second backward adds to the leaf's gradient


def test_backward_test_a_none_gradient_is_refused_where_needed_and_skipped_where_not():
    """The notebook's engine skips a None gradient; the library's check refuses one that is needed, and with
    inputs= (a mode) a None for an input nobody wants is fine: the node below it is skipped, as in the notebook."""

    class NoGradOp(Operator):
        def forward(self, a):
            return a.copy()

        def backward(self, gy):
            return [None]

    q = v(2.0, "q")
    with pytest.raises(ShapeError, match=r"NoGradOp\.backward returned None for input 0"):
        Engine.backward(AddOp()(NoGradOp()(MulOp()(q, q)), q))
    assert q.grad is None  # nothing is stored by a backward that raised
    q2 = v(2.0, "q2")
    other = v(1.0, "other")
    Engine.backward(AddOp()(NoGradOp()(MulOp()(other, other)), q2), inputs=[q2])
    assert np.isclose(q2.grad, 1.0) and other.grad is None


# -- backward_accumulate_test -----------------------------------------------------------------------------------------
def test_backward_accumulate_test_shared_gradient_arrays_and_a_deep_chain():
    a, bb = v(1.0, "a"), v(1.0, "b")
    Engine.backward(AddOp()(AddOp()(a, bb), a))  # AddOp hands the same array to both inputs
    assert np.isclose(bb.grad, 1.0) and np.isclose(a.grad, 2.0)

    c, x0 = v(1.0002, "c"), v(0.5, "x0")
    h = x0
    for _ in range(5000):
        h = MulOp()(h, c)
    with TightRecursionLimit():
        Engine.backward(h)
    assert np.isclose(x0.grad, 1.0002**5000)
    assert np.isclose(c.grad, 5000 * 0.5 * 1.0002**4999)


# -- zero_grad_test ---------------------------------------------------------------------------------------------------
def test_zero_grad_test_retain_graph_then_start_from_scratch():
    x, k = v(3.0, "x"), v(2.0, "k")
    y = MulOp()(x, k)
    Engine.backward(y, retain_graph=True)
    for node in Engine.topo_sort(y):  # the notebook's zero_grad
        node.grad = None
    assert x.grad is None and k.grad is None
    Engine.backward(y)
    assert np.isclose(x.grad, 2.0)


# -- backward_order_challenge_test ------------------------------------------------------------------------------------
def test_backward_order_challenge_test():
    x, *_, w = running_example()
    order = Engine.backward_order(w)
    assert_backward_order(order, w)
    assert len(order) == 4 and order[-1] is x
    root = random_graph(40)
    assert_backward_order(Engine.backward_order(root), root)
    c = v(1.0)
    h = c
    for _ in range(5000):
        h = AddOp()(h, c)
    with TightRecursionLimit():
        deep = Engine.backward_order(h)
    assert len(deep) == 5001 and deep[-1] is c
    p = v(1.0)
    q = AddOp()(p, p)
    r = MulOp()(q, p)
    p.parents.append(q)
    with pytest.raises(CycleError):
        Engine.backward_order(r)


# -- backward_to_challenge_test ---------------------------------------------------------------------------------------
def test_backward_to_challenge_test_is_backward_with_inputs():
    calls = []

    class CountingMulOp(MulOp):
        def __init__(self, tag):
            self.tag = tag

        def backward(self, gy):
            calls.append(self.tag)
            return super().backward(gy)

    x = v(rng.normal(size=3), "x")
    W = Parameter(rng.normal(size=3), name="W")
    c = v(rng.normal(size=3), "c")
    hx = CountingMulOp("x*x")(x, x)
    hw = CountingMulOp("h*W")(hx, W)
    out = CountingMulOp("out")(hw, c)
    Engine.backward(out, grad=np.ones(3), inputs=[W])
    assert sorted(calls) == ["h*W", "out"]  # only the operators on the way to W
    assert x.grad is None and c.grad is None
    assert np.allclose(W.grad, hx.data * c.data)
    assert hw.grad is None and out.grad is None
