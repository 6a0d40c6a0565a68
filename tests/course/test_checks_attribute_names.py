"""assert_own_code follows what the code references, not attribute names anywhere in it (honest-student trial).

Chapter 03 allows ``Engine.topo_sort`` in ``backward``; a backward that used it and called ``node.op.backward(g)``
was refused as "calls Engine.backward": the check looked every attribute name of the body (``backward`` from
``node.op.backward``) up on ``Engine``. Now a name is looked up on a library module or class only where the body
reads it from something that came from outside (a global, a closure cell, an import or a local assigned from one),
and the ways of reaching the reference stay refused. Functions are made from source text registered in linecache,
as IPython does for a notebook cell, with ``__name__ == "__main__"``.
"""

from __future__ import annotations

import functools
import itertools
import linecache
import textwrap

import numpy as np
import pytest

import autograd_lab
import autograd_lab.nn
import autograd_lab.optim
from autograd_lab import Engine, Variable
from autograd_lab.course.checks import NotOwnCodeError, assert_own_code
from autograd_lab.ops import AddOp, MulOp

_count = itertools.count()


def cell(source: str, name: str) -> object:
    """Define ``name`` by running ``source`` as a notebook cell would (module __main__, source in linecache)."""
    source = textwrap.dedent(source)
    filename = f"/tmp/ipykernel_test/{next(_count)}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = {"__name__": "__main__", "np": np, "Engine": Engine, "Variable": Variable, "autograd_lab": autograd_lab,
          "functools": functools, "AddOp": AddOp, "MulOp": MulOp}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


HONEST_BACKWARD = """
def backward(root):
    order = Engine.topo_sort(root)
    root.grad = np.ones_like(root.data)
    for node in reversed(order):
        if node.is_leaf or node.grad is None:
            continue
        grads = node.op.backward(node.grad)
        for parent, g in zip(node.parents, grads):
            if g is None:
                continue
            parent.grad = np.array(g, copy=True) if parent.grad is None else parent.grad + g
        node.grad = None
"""


def test_the_honest_backward_on_engine_topo_sort_passes_and_is_right() -> None:
    backward = cell(HONEST_BACKWARD, "backward")
    assert_own_code(backward, reference=Engine.backward)
    x = Variable.from_numpy(np.array(3.0))
    y = MulOp()(x, x)
    backward(MulOp()(AddOp()(y, x), y))  # w = x^4 + x^3
    assert np.isclose(x.grad, 135.0)


@pytest.mark.parametrize("body", [
    "Engine.backward(root)",
    "autograd_lab.Engine.backward(root)",
    "autograd_lab.engine.Engine.backward(root)",
    "E = Engine\n    F = E\n    F.backward(root)",
    "run = Engine.backward\n    run(root)",
    "functools.partial(Engine.backward, grad=None)(root)",
    "functools.partial(Engine().backward)(root)",
    "[Engine][0].backward(root)",
    "{'e': Engine}['e'].backward(root)",
    "a, b = (Engine, 1)\n    a.backward(root)",
    "for e in [Engine]:\n        e.backward(root)",
    "if (e := Engine):\n        e.backward(root)",
    "(lambda e: e.backward(root))(Engine)",
    "getattr(Engine, 'backward')(root)",
    "getattr(getattr(autograd_lab, 'Engine'), 'backward')(root)",
    "functools.reduce(getattr, ['engine', 'Engine', 'backward'], autograd_lab)(root)",
    "from autograd_lab import Engine as E\n    E.backward(root)",
    "import autograd_lab.engine as m\n    m.Engine.backward(root)",
    "def inner(e):\n        return e.backward\n    inner(Engine)(root)",
])
def test_reaching_engine_backward_any_way_is_still_refused(body: str) -> None:
    backward = cell(f"def backward(root):\n    order = Engine.topo_sort(root)\n    {body}\n", "backward")
    with pytest.raises(NotOwnCodeError, match=r"Engine\.backward"):
        assert_own_code(backward, reference=Engine.backward)


def test_a_default_argument_holding_the_reference_is_still_refused() -> None:
    backward = cell("def backward(root, run=Engine.backward):\n    run(root)\n", "backward")
    with pytest.raises(NotOwnCodeError, match=r"Engine\.backward"):
        assert_own_code(backward, reference=Engine.backward)


def test_a_global_function_named_like_the_reference_method_is_not_the_reference() -> None:
    # count_nodes (reference Engine.topo_sort) calling the student's own topo_sort and Engine.backward.
    count_nodes = cell("""
        def topo_sort(root):
            return [root]

        def count_nodes(root):
            Engine.backward(root, retain_graph=True)
            return len(topo_sort(root))
        """, "count_nodes")
    assert_own_code(count_nodes, reference=Engine.topo_sort)
    wrapper = cell("def count_nodes(root):\n    return len(Engine.topo_sort(root))\n", "count_nodes")
    with pytest.raises(NotOwnCodeError, match=r"Engine\.topo_sort"):
        assert_own_code(wrapper, reference=Engine.topo_sort)


def test_a_method_calling_forward_on_its_layers_is_not_the_reference_forward() -> None:
    # unroll (reference nn.RNN.forward) using the library's nn module and its cell's .forward.
    unroll = cell("""
        def unroll(cell, xs, h):
            outs = []
            for x in xs:
                h = cell.forward(x, h)
                outs.append(h)
            return outs, autograd_lab.nn.RNN
        """, "unroll")
    assert_own_code(unroll, reference=autograd_lab.nn.RNN.forward)
    wrapper = cell("def unroll(cell, xs, h):\n    return autograd_lab.nn.RNN.forward(cell, xs, h)\n", "unroll")
    with pytest.raises(NotOwnCodeError, match=r"RNN\.forward"):
        assert_own_code(wrapper, reference=autograd_lab.nn.RNN.forward)


def test_an_optimizer_step_calling_step_on_something_else_is_not_the_reference() -> None:
    SGD = cell("""
        class SGD:
            def __init__(self, params, lr):
                self.params, self.lr, self.schedule = list(params), lr, None

            def step(self):
                if self.schedule is not None:
                    self.schedule.step()
                for p in self.params:
                    if p.grad is not None:
                        p.data -= self.lr * p.grad
                return autograd_lab.optim
        """, "SGD")
    assert_own_code(SGD, reference=autograd_lab.optim.SGD)


def test_without_source_every_name_still_counts() -> None:
    # No source to read (code made outside a cell): the check falls back to every name of the code, as before.
    ns: dict = {"__name__": "__main__", "Engine": Engine, "np": np}
    exec(compile(HONEST_BACKWARD, "/nonexistent/cell.py", "exec"), ns)
    with pytest.raises(NotOwnCodeError):
        assert_own_code(ns["backward"], reference=Engine.backward)


def test_the_names_the_grader_instruments_with_are_the_guards() -> None:
    # The runner compiles answer cells from an instrumented tree; the check must know the names it adds, or it
    # would read no cell's source in the sandbox and fall back to every name (the false refusal again).
    from autograd_lab.course import checks
    from autograd_lab.course.grading import guard

    assert {guard.GUARD_NAME, guard.CALL_NAME} == checks._GRADER_NAMES
    source = HONEST_BACKWARD.lstrip()
    filename = f"/tmp/ipykernel_test/{next(_count)}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    tree = guard.instrument(__import__("ast").parse(source), filename)
    ns = {"__name__": "__main__", "np": np, "Engine": Engine, guard.GUARD_NAME: None, guard.CALL_NAME: None}
    exec(compile(tree, filename, "exec"), ns)
    assert {guard.CALL_NAME} <= set(ns["backward"].__code__.co_names)
    assert_own_code(ns["backward"], reference=Engine.backward)
