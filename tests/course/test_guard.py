"""The attribute guard (grading/guard.py) on its own: answer code compiled through ``instrument`` may change its own
classes, instances and functions, and nothing else; a refused write leaves the object unchanged. The hostile cases
are the third hostile-student review's class patches, which the static check let through."""

from __future__ import annotations

import ast

import pytest

from autograd_lab import Engine, Variable
from autograd_lab.course.grading import guard
from autograd_lab.course.grading.audit import GraderRefused

STUDENT = "<cell 4: add_op_code>"


def student(source: str, **names: object) -> dict:
    ns: dict = {"__builtins__": __builtins__, "Variable": Variable, "Engine": Engine, **names}
    attributes = guard.install(ns, frozenset({STUDENT}))
    tree = guard.instrument(ast.parse(source, STUDENT))
    exec(compile(tree, STUDENT, "exec"), ns)
    attributes.adopt(ns, tree)
    return ns


HOSTILE = {
    "class from a helper": ("def k(v):\n    return type(v)\n\n\ndef attack():\n    c = k(Variable.from_numpy(1.0))\n"
                            "    def fake(*a):\n        return []\n    c.from_numpy = fake\n", Variable, "from_numpy"),
    "class kept on self": ("class A:\n    def attack(self):\n        self.k = type(Variable.from_numpy(1.0))\n"
                           "        self.k.topo_sort = self.attack\n\n\ndef attack():\n    A().attack()\n",
                           Variable, "topo_sort"),
    "class in a loop variable": ("def attack():\n    for c in [Engine]:\n        c.topo_sort = len\n", Engine,
                                 "topo_sort"),
    "delete through a tuple": ("def attack():\n    box = (Engine,)\n    del box[0].backward\n", Engine, "backward"),
    "augmented write": ("def attack():\n    c = [Engine][0]\n    c.grad_enabled += 1\n", Engine, "grad_enabled"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_answer_code_cannot_change_a_class_it_did_not_define(name: str) -> None:
    source, target, attr = HOSTILE[name]
    before = dict(vars(target))
    ns = student(source)
    with pytest.raises(GraderRefused, match=f"changing `{attr}` of the class {target.__name__}"):
        ns["attack"]()
    assert dict(vars(target)) == before, f"{name}: the class was changed although the write was refused"


def test_modules_and_library_functions_are_refused_too() -> None:
    import numpy as np

    ns = student("def attack(m, f):\n    m.allclose = f\n\n\ndef tag(f):\n    f.tag = 1\n", np=np)
    with pytest.raises(GraderRefused, match="module numpy"):
        ns["attack"](np, len)
    with pytest.raises(GraderRefused, match="function allclose"):
        ns["tag"](np.allclose)
    assert not hasattr(np.allclose, "tag")


def test_own_classes_instances_and_functions_stay_writable() -> None:
    ns = student("class Counter:\n    calls = 0\n\n    @classmethod\n    def bump(cls):\n        cls.calls += 1\n\n"
                 "    def __init__(self):\n        self.n = 0\n        self.n += 1\n\n\n"
                 "def helper():\n    return 1\n\n\ndef use(nodes):\n    helper.seen = True\n    Counter.bump()\n"
                 "    for node in nodes:\n        node.grad = None\n        node.name = 'x'\n    return Counter().n\n")
    v = Variable.from_numpy(1.0)
    v.grad = 1.0
    assert ns["use"]([v]) == 1
    assert ns["Counter"].calls == 1 and ns["helper"].seen is True and v.grad is None and v.name == "x"


def test_line_numbers_survive_the_rewrite() -> None:
    ns = student("def attack():\n    c = [Engine][0]\n\n\n    c.x = 1\n")
    with pytest.raises(GraderRefused) as info:
        ns["attack"]()
    assert info.traceback[-2].lineno + 1 == 5 or any(e.lineno + 1 == 5 for e in info.traceback)


class Spy:
    """Stands for a test's spy: a class an instructor's cell defines (module __main__)."""

    def __init__(self) -> None:
        self.modes = [(True, True)]


Spy.__module__ = "__main__"


@pytest.mark.parametrize("write", ["model.modes = []", "model.modes[:] = [(False, False)]", "model.modes.clear()",
                                   "del model.modes", "model.modes[0] = (False, False)"])
def test_answer_code_cannot_rewrite_a_spy_the_test_made(write: str) -> None:
    ns = student(f"def evaluate(model):\n    {write}\n")
    spy = Spy()
    with pytest.raises(GraderRefused, match="changing `modes` of a Spy"):
        ns["evaluate"](spy)
    assert spy.modes == [(True, True)]


def test_own_subclass_of_a_notebook_class_and_library_containers_stay_writable() -> None:
    ns = student("class Mine(Spy):\n    def reset(self):\n        self.modes.clear()\n\n\n"
                 "def grow(op, v):\n    op.inputs.append(v)\n    v.name = 'v'\n", Spy=Spy)
    mine = ns["Mine"]()
    mine.reset()
    assert mine.modes == []

    class Holder:
        def __init__(self) -> None:
            self.inputs: list = []

    holder = Holder()
    ns["grow"](holder, Variable.from_numpy(1.0))
    assert len(holder.inputs) == 1


def calls_student(source: str, references: list[str]) -> dict:
    import autograd_lab.nn
    import autograd_lab.ops

    ns: dict = {"__builtins__": __builtins__, "Variable": Variable, "Engine": Engine, "autograd_lab": autograd_lab}
    attributes = guard.install(ns, frozenset({STUDENT}), {STUDENT: references})
    attributes.resolve(STUDENT, ns)
    exec(compile(guard.instrument(ast.parse(source, STUDENT), STUDENT), STUDENT, "exec"), ns)
    return ns


REACHED = {
    "class of a library layer's op": "k = type(Linear(1, 1)(Variable.from_numpy(np.ones((1, 1)))).op)\n    "
                                     "return k().forward(a, b)",
    "method of that class, unbound": "k = type(Linear(1, 1)(Variable.from_numpy(np.ones((1, 1)))).op)\n    "
                                     "return k.forward(None, a, b)",
    "the op instance itself": "y = Linear(1, 1)(Variable.from_numpy(np.ones((1, 1))))\n    "
                              "return y.op.forward(a, b)",
    "through partial and map": "k = type(Linear(1, 1)(Variable.from_numpy(np.ones((1, 1)))).op)\n    "
                               "return list(map(functools.partial(k.forward, None), [a], [b]))[0]",
}


@pytest.mark.parametrize("name", sorted(REACHED))
def test_the_reference_reached_at_run_time_cannot_be_called(name: str) -> None:
    import functools

    import numpy as np

    from autograd_lab.nn import Linear

    ns = calls_student(f"def forward(a, b):\n    {REACHED[name]}\n", ["autograd_lab.ops.AddOp"])
    ns.update(np=np, Linear=Linear, functools=functools)
    with pytest.raises(GraderRefused, match=r"calling autograd_lab\.ops\.AddOp, the reference"):
        ns["forward"](np.ones(2), np.ones(2))


def test_other_library_code_and_frame_reading_calls_still_work() -> None:
    import numpy as np

    from autograd_lab.nn import Linear

    ns = calls_student("class Base:\n    def __init__(self):\n        self.n = 1\n\n\nclass Op(Base):\n"
                       "    def __init__(self):\n        super().__init__()\n\n\n"
                       "def forward(a, b):\n    y = Linear(1, 1)(Variable.from_numpy(np.ones((1, 1))))\n"
                       "    return np.add(a, b, out=None), Op().n, sorted(dir())\n", ["autograd_lab.ops.AddOp"])
    ns.update(np=np, Linear=Linear)
    total, n, names = ns["forward"](np.ones(2), np.ones(2))
    assert total.tolist() == [2.0, 2.0] and n == 1 and names == ["a", "b", "y"]
