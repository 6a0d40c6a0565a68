"""Build the hostile batch: a small assignment (source notebook) and one submission per attack, all by script.

Nothing here is a committed notebook blob. :func:`write_source` writes the instructor's source of the assignment
``91_hostile`` (AddOp forward 2 points, AddOp backward 2 points, sum_of_squares 1 point; each hidden test is an
exercise and a judge, ``checks.hidden_test``); after nbgrader has released it, :func:`write_batch` starts from the
release (what a student receives), fills in the instructor's answers and patches cells the way a hostile student would.

Each case states its expected score (out of :data:`MAX_SCORE`) and a regular expression that the grader's report
for it must match. An attacked exercise loses its points and keeps the others: a wrong answer scores 0 whatever
else the notebook does, and a correct one is never lost to forged metadata. Many cases were written against the
earlier grader, which refused their answer cells statically; they now run as written, and the judge, which runs
none of their code, gives the exercise they attack no points (:func:`_refused_add` names that test's failure).

Run ``python -m tests.course.adversarial.build OUT`` to write the source and a release-free batch (answers filled
into the source with the solutions stripped) for a look by hand.
"""

from __future__ import annotations

import copy
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograd_lab.course import checks

from ..submissions import full_solution

ASSIGNMENT = "91_hostile"
MAX_SCORE = 5.0
ADD, SQUARES = "add_op_code", "sum_of_squares_code"

SETUP = """\
import os
from unittest import mock

import numpy as np

import autograd_lab
import autograd_lab.ops
from autograd_lab import Operator, Variable
from autograd_lab.course import checks
from autograd_lab.ops._broadcast import sum_to_shape

rng = np.random.default_rng(0)"""

HELPERS = '''\
def close(a, b):
    """The tests' comparison: same shape and equal to 1e-12."""
    return np.shape(a) == np.shape(b) and bool(np.allclose(a, b, rtol=0, atol=1e-12))'''

ADD_SOLUTION = """\
class AddOp(Operator):
    \"\"\"a + b with broadcasting.\"\"\"

    def forward(self, a, b):
        ### BEGIN SOLUTION
        return a + b
        ### END SOLUTION

    def backward(self, gy):
        ### BEGIN SOLUTION
        a, b = self.inputs
        return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]
        ### END SOLUTION"""

ADD_FORWARD_TEST = """\
y = AddOp()(Variable.from_numpy(np.array([1.0, 2.0])), Variable.from_numpy(np.array([3.0, 4.0])))
assert close(y.data, np.array([4.0, 6.0])), f"AddOp forward: expected [4, 6] for [1, 2] + [3, 4], got {y.data}"
### BEGIN HIDDEN TESTS
def inputs(rng):
    return {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=(4,))}

def exercise(x):
    y = AddOp()(Variable.from_numpy(x["a"]), Variable.from_numpy(x["b"]))
    return {"y": np.asarray(y.data)}

checks.hidden_test("add_op_forward_test", inputs=inputs, exercise=exercise, replaces=["autograd_lab.ops.AddOp"])
### END HIDDEN TESTS"""

ADD_BACKWARD_TEST = """\
op = AddOp()
op(Variable.from_numpy(np.ones((2, 3))), Variable.from_numpy(np.arange(3.0)))
ga, gb = op.backward(np.ones((2, 3)))
assert close(gb, np.array([2.0, 2.0, 2.0])), f"AddOp backward: b's gradient sums 2 rows: expected [2, 2, 2], got {gb}"
### BEGIN HIDDEN TESTS
def inputs(rng):
    return {"a": rng.normal(size=(2, 5)), "b": rng.normal(size=(1, 5)), "g": rng.normal(size=(2, 5))}

def exercise(x):
    op = AddOp()
    op(Variable.from_numpy(x["a"]), Variable.from_numpy(x["b"]))
    ga, gb = op.backward(x["g"].copy())
    return {"ga": np.asarray(ga), "gb": np.asarray(gb)}

def judge(x, got, want):
    checks.expect(np.all(np.isfinite(got["ga"])) and np.all(np.isfinite(got["gb"])), "gradients must be finite")
    checks.compare(x, got, want)

checks.hidden_test("add_op_backward_test", inputs=inputs, exercise=exercise, judge=judge,
                   replaces=["autograd_lab.ops.AddOp"])
### END HIDDEN TESTS"""

SQUARES_SOLUTION = """\
def sum_of_squares(x):
    \"\"\"Sum of x**2 over all entries (a float).\"\"\"
    ### BEGIN SOLUTION
    return float(np.sum(np.square(x)))
    ### END SOLUTION"""

SQUARES_TEST = """\
assert sum_of_squares(np.array([1.0, 2.0])) == 5.0, "sum_of_squares([1, 2]) should be 1 + 4 = 5"
### BEGIN HIDDEN TESTS
def inputs(rng):
    return {"x": rng.normal(size=7)}

def exercise(x):
    return {"s": float(sum_of_squares(x["x"].copy()))}

checks.hidden_test("sum_of_squares_test", inputs=inputs, exercise=exercise)
### END HIDDEN TESTS"""


def _meta(gid: str, *, grade: bool = False, solution: bool = False, locked: bool = False,
          points: int | None = None) -> dict:
    meta: dict = {"grade": grade, "grade_id": gid, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def source_notebook() -> NotebookNode:
    """The instructor's source of the hostile assignment (5 points)."""
    cells = [
        new_markdown_cell("# Hostile fixture\n\nA small assignment that the adversarial suite attacks."),
        new_code_cell(SETUP, metadata=_meta("setup", locked=True)),
        new_code_cell(HELPERS, metadata=_meta("helpers_setup", locked=True)),
        new_markdown_cell("## AddOp\n\nForward and backward of addition with broadcasting."),
        new_code_cell(ADD_SOLUTION, metadata=_meta(ADD, solution=True)),
        new_code_cell(ADD_FORWARD_TEST, metadata=_meta("add_op_forward_test", grade=True, locked=True, points=2)),
        new_code_cell(ADD_BACKWARD_TEST, metadata=_meta("add_op_backward_test", grade=True, locked=True, points=2)),
        new_markdown_cell("## Sum of squares"),
        new_code_cell(SQUARES_SOLUTION, metadata=_meta(SQUARES, solution=True)),
        new_code_cell(SQUARES_TEST, metadata=_meta("sum_of_squares_test", grade=True, locked=True, points=1)),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def write_source(course_source: Path) -> Path:
    """Write ``course_source/91_hostile/91_hostile.ipynb`` and return its path."""
    path = course_source / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(source_notebook(), path)
    return path


# --- patching helpers --------------------------------------------------------------------------------------------

def _gid(cell: NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def _cell(nb: NotebookNode, gid: str) -> NotebookNode:
    return next(c for c in nb.cells if _gid(c) == gid)


Patch = Callable[[NotebookNode], None]


def answer(gid: str, code: str) -> Patch:
    """Replace the answer cell ``gid`` by ``code``."""
    def patch(nb: NotebookNode) -> None:
        _cell(nb, gid).source = code
    return patch


def append(gid: str, code: str) -> Patch:
    """Add ``code`` after the (correct) answer in cell ``gid``."""
    def patch(nb: NotebookNode) -> None:
        _cell(nb, gid).source += "\n\n" + code
    return patch


def metadata(gid: str, **changes: object) -> Patch:
    def patch(nb: NotebookNode) -> None:
        _cell(nb, gid).metadata.nbgrader.update(changes)
    return patch


def extra_cell(code: str, meta: dict | None = None) -> Patch:
    def patch(nb: NotebookNode) -> None:
        nb.cells.append(new_code_cell(code, metadata=meta or {}))
    return patch


def kernelspec(name: str) -> Patch:
    def patch(nb: NotebookNode) -> None:
        nb.metadata["kernelspec"] = {"name": name, "display_name": name, "language": "python"}
    return patch


WRONG_ADD = """\
class AddOp(Operator):
    def forward(self, a, b):
        return a - b

    def backward(self, gy):
        return [gy, gy]"""

WRONG_SQUARES = "def sum_of_squares(x):\n    return 0.0"

@dataclass(frozen=True)
class Case:
    """One hostile submission: how to build it, the score it must get and what its report must say."""

    kind: str  # the kind of attack, as listed in issue 10
    patches: tuple[Patch, ...]
    score: float
    message: str  # a regular expression the joined report messages must match
    from_release: bool = False  # start from the untouched release instead of the full solution


def _refused_add(what: str) -> str:
    """The report of a case whose AddOp answer is wrong or forged (``what`` says how; no longer refused: the judge
    decides)."""
    return r"add_op_(forward|backward)_test \(2 points\) failed"


def _refused_squares(what: str) -> str:
    """As :func:`_refused_add`, for sum_of_squares."""
    return r"sum_of_squares_test \(1 point\) failed"


HONEST_IDIOMS_ADD = """\
import numpy as np
from dataclasses import dataclass

from autograd_lab import Operator
from autograd_lab.ops._broadcast import sum_to_shape


@dataclass(frozen=True)
class _Grads:
    first: object
    second: object


class AddOp(Operator):
    def forward(self, a, b):
        return np.add(a, b)

    def backward(self, gy):
        a, b = self.inputs
        calls = 0

        def reduce(shape):
            nonlocal calls
            calls += 1
            return sum_to_shape(gy, shape)

        pair = _Grads(reduce(a.shape), reduce(b.shape))
        assert calls == 2, f"{type(self).__name__}: two gradients"
        return [pair.first, pair.second]"""

CASES: dict[str, Case] = {
    # Good behaviour, kept as the baseline.
    "full": Case("good", (), 5, r"all tests passed$"),
    # Honest idioms an instructor trial found refused: re-importing the setup's names, an own @dataclass, a
    # nonlocal counter, type(self).__name__ (full marks, run for real in the sandbox).
    "honest_idioms": Case("good", (answer(ADD, HONEST_IDIOMS_ADD),), 5, r"all tests passed$"),
    "blank": Case("good", (), 0, r"add_op_forward_test \(2 points\) failed: its visible tests failed: the exercise is "
                                r"not answered yet",
                  from_release=True),
    # Monkeypatching numpy, checks, the test helpers, builtins (each with a wrong answer that it tries to hide).
    "patch_numpy": Case("monkeypatch numpy", (answer(ADD, WRONG_ADD + "\n\nnp.allclose = lambda *a, **k: True"),),
                        1, _refused_add("only plain names can be assigned")),
    "patch_numpy_in_method": Case("monkeypatch numpy", (answer(ADD, WRONG_ADD.replace(
        "        return a - b", "        np.allclose = lambda *args, **kwargs: True\n        return a - b")),),
        1, _refused_add("assigning an attribute of `np`")),
    "patch_checks": Case("monkeypatch checks", (answer(SQUARES, (
        "def sum_of_squares(x):\n    checks.assert_own_code = lambda *a, **k: None\n    return 0.0")),),
        4, _refused_squares("`checks` comes from `autograd_lab.course.checks`")),
    "patch_test_helper": Case("monkeypatch test helpers", (answer(ADD, WRONG_ADD + (
        "\n\n\ndef close(a, b):\n    return True")),), 1, _refused_add("`close` is defined by the notebook")),
    "patch_builtin": Case("monkeypatch builtins", (answer(SQUARES, WRONG_SQUARES + (
        "\n\n\ndef abs(x):\n    return 0.0")),), 4, _refused_squares("would hide Python's builtin")),
    "patch_builtins_module": Case("monkeypatch builtins", (answer(SQUARES, (
        "import builtins\n\n\ndef sum_of_squares(x):\n    builtins.abs = lambda v: 0.0\n    return 0.0")),), 4,
        _refused_squares("importing `builtins` is not allowed")),
    # IPython hooks and display hooks; a numeric result next to a stub.
    "ipython_event": Case("IPython hooks", (answer(SQUARES, (
        "def sum_of_squares(x):\n    get_ipython().events.register('post_run_cell', print)\n    return 0.0")),), 4,
        _refused_squares("`get_ipython` is not allowed")),
    "display_hook": Case("display hooks", (answer(SQUARES, (
        "import sys\n\n\ndef sum_of_squares(x):\n    sys.displayhook = print\n    return 0.0")),), 4,
        _refused_squares("importing `sys` is not allowed")),
    "numeric_result_with_stub": Case("forged execute_result", (answer(SQUARES, (
        "def sum_of_squares(x):\n    raise NotImplementedError()\n\n\n1.0")),), 4,
        _refused_squares("runs when the cell runs")),
    "lying_equality": Case("lying objects", (answer(SQUARES, (
        "class Anything(float):\n    def __eq__(self, other):\n        return True\n\n    def __lt__(self, other):\n"
        "        return True\n\n\ndef sum_of_squares(x):\n    return Anything(0.0)")),), 4,
        _refused_squares("may not define `__eq__`")),
    "lying_array_subclass": Case("lying objects", (answer(SQUARES, (
        "class Lie(np.ndarray):\n    def all(self, *args, **kwargs):\n        return True\n\n\n"
        "def sum_of_squares(x):\n    return 0.0")),), 4, _refused_squares("subclassing `np.ndarray` is not allowed")),
    # Found by a fresh hostile-student review: library helpers that setattr or eval behind the static check's back.
    "update_wrapper_code_swap": Case("monkeypatch through the standard library", (answer(ADD, WRONG_ADD + (
        "\n\nimport functools\n\n\ndef _keep(*a, **k):\n    return None\n\n\n"
        "def neutralise():\n    functools.update_wrapper(np.allclose, _keep, ('__code__',))")),), 1,
        _refused_add("`.update_wrapper` is not allowed")),
    "singledispatch_eval": Case("code from text through the standard library", (answer(ADD, (
        "import functools\n\n\ndef base(x):\n    return x\n\n\ndef hook(x: \"exec('import os') or int\"):\n"
        "    return x\n\n\nclass AddOp(Operator):\n    def forward(self, a, b):\n"
        "        functools.singledispatch(base).register(hook)\n")),), 1,
        _refused_add("`.singledispatch` is not allowed")),
    "masked_array": Case("lying objects", (answer(ADD, ADD_SOLUTION.replace(
        "        return a + b", "        return np.ma.masked_array(a - b, mask=True)")),), 3,
        r"add_op_forward_test \(2 points\) failed"),
    # Third hostile review: a library class patched from inside a test through a name the static check cannot
    # follow (a helper's return value, an attribute of self). The patch reached the instructor's hidden test in
    # the same test process ("PATCH SURVIVED"); now the write is refused as it happens.
    "class_patch_through_helper": Case("monkeypatch library classes", (answer(ADD, ADD_SOLUTION.replace(
        "    def forward(self, a, b):\n",
        "    def forward(self, a, b):\n        def boom(*args, **kwargs):\n"
        "            raise RuntimeError('PATCH SURVIVED into the hidden test')\n"
        "        c = _class_of(Variable.from_numpy(a))\n        c.from_numpy = boom\n").replace(
        "class AddOp", "def _class_of(v):\n    return type(v)\n\n\nclass AddOp")),), 3,
        r"add_op_backward_test \(2 points\) failed: its visible tests failed: RuntimeError: PATCH SURVIVED"),
    "class_patch_through_self": Case("monkeypatch library classes", (answer(ADD, ADD_SOLUTION.replace(
        "    def forward(self, a, b):\n",
        "    def forward(self, a, b):\n        self.k = type(Variable.from_numpy(a))\n"
        "        self.k.parents = self.k.is_leaf\n")),), 5, r"all tests passed$"),
    "dataclass_on_library_class": Case("monkeypatch library classes", (answer(ADD, (
        "import dataclasses\n\n\n" + WRONG_ADD.replace(
            "        return a - b", "        dataclasses.dataclass(type(Variable.from_numpy(a)), eq=True)\n"
                                  "        return a - b"))),), 1, _refused_add("`.dataclass` is not allowed")),
    "library_table_changed_in_place": Case("monkeypatch library classes", (answer(SQUARES, (
        "def sum_of_squares(x):\n    autograd_lab.ops.__all__.clear()\n    return 0.0")),), 4,
        _refused_squares("special attribute `.__all__`")),
    "pathlib_through_the_library": Case("read instructor source", (answer(SQUARES, (
        "def sum_of_squares(x):\n    print(autograd_lab.data.bundled.Path('/proc/self/environ').read_text())\n"
        "    return float(np.sum(x * x))")),), 4, _refused_squares("is `pathlib.Path`")),
    "ctypes_in_a_numpy_test_suite": Case("raw memory", (answer(SQUARES, (
        "def sum_of_squares(x):\n    np.lib.tests.test_io.c_bool.from_address(0)\n    return 0.0")),), 4,
        _refused_squares("is the module `numpy.lib.tests`")),
    # Third hostile review: the answer receives the hidden inputs as arguments and showed them in its feedback
    # (printed, or in an error message, its own or a library's); with them a resubmission can hard-code the
    # outputs. The fixture's hidden inputs are read-only, so "LEAK" is printed for hidden inputs only.
    "print_hidden_inputs": Case("leak hidden inputs", (answer(SQUARES, (
        "def sum_of_squares(x):\n    if not x.flags.writeable:\n        print('LEAK', x.tolist())\n"
        "    return float(np.sum(x * x))")),), 5, r"all tests passed$"),
    "error_carries_hidden_inputs": Case("leak hidden inputs", (answer(SQUARES, (
        "def sum_of_squares(x):\n    if len(x) != 2:\n        raise ValueError('LEAK ' + str(x.tolist()))\n"
        "    return float(np.sum(x * x))")),), 4,
        r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NO_RESULT)),
    "library_error_carries_hidden_inputs": Case("leak hidden inputs", (answer(SQUARES, (
        "def sum_of_squares(x):\n    if len(x) != 2:\n"
        "        np.reshape(x, (int(abs(x[0]) * 1e6) + 7,))\n    return float(np.sum(x * x))")),), 4,
        r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NO_RESULT)),
    # Third hostile review: the reference reached at run time through a library layer that uses it (Linear adds
    # its bias with AddOp): no name of it anywhere, so the static check and assert_own_code saw nothing (5/5).
    "reference_through_a_library_layer": Case("reference reached at run time", (answer(ADD, (
        "from autograd_lab.nn import Linear\n\n\ndef _ref():\n"
        "    return type(Linear(1, 1)(Variable.from_numpy(np.ones((1, 1)))).op)\n\n\n"
        "class AddOp(Operator):\n    def forward(self, a, b):\n        return _ref().forward(self, a, b)\n\n"
        "    def backward(self, gy):\n        return _ref().backward(self, gy)")),), 1,
        r"add_op_forward_test \(2 points\) failed: The hidden test stopped in a library part that this chapter asks "
        r"you to write"),
    # Own code: the reference imported, subclassed, wrapped, executed from its source, or its code cloned.
    "imports_reference": Case("reference", (answer(ADD, "from autograd_lab.ops import AddOp"),), 1,
                              _refused_add("is the reference implementation")),
    "subclasses_reference": Case("reference", (answer(ADD, "class AddOp(autograd_lab.ops.AddOp):\n    pass"),), 1,
                                 _refused_add("reference implementation")),
    "exec_reference_source": Case("exec of the reference source", (answer(ADD, (
        "import inspect\n\n\nclass AddOp(Operator):\n    def forward(self, a, b):\n"
        "        return a + b\n")),), 3, r"add_op_backward_test \(2 points\) failed: its visible tests failed: "
                                        r"NotImplementedError"),
    "exec_text": Case("exec of the reference source", (answer(ADD, (
        "class AddOp(Operator):\n    def forward(self, a, b):\n        scope = {'a': a, 'b': b}\n"
        "        exec('out = a + b', scope)\n        return scope['out']\n\n    def backward(self, gy):\n"
        "        return [gy, gy]")),), 3, r"add_op_backward_test \(2 points\) failed"),
    "clone_code_object": Case("code-object cloning", (answer(ADD, (
        "class AddOp(Operator):\n    def forward(self, a, b):\n        return a\n\n    def backward(self, gy):\n"
        "        return [gy, gy]\n\n\ndef _clone():\n"
        "    AddOp.forward.__code__ = autograd_lab.ops.AddOp.forward.__code__")),), 1,
        _refused_add("special attribute `.__code__`")),
    "partial_wrapper": Case("partial wrapper", (answer(ADD, (
        "import functools\n\n\nclass AddOp(Operator):\n    def forward(self, a, b):\n"
        "        return functools.partial(autograd_lab.ops.AddOp.forward, self)(a, b)\n")),), 1,
        _refused_add("reference implementation")),
    "closure_wrapper": Case("closure wrapper", (answer(ADD, (
        "def _make():\n    impl = autograd_lab.ops.AddOp\n\n    class Wrapped(Operator):\n        pass\n"
        "    return impl\n\n\nclass AddOp(Operator):\n    def forward(self, a, b):\n"
        "        return _make()().forward(a, b)\n")),), 1, _refused_add("reference implementation")),
    "container_wrapper": Case("container wrapper", (answer(ADD, (
        "class AddOp(Operator):\n    impls = (autograd_lab.ops.AddOp,)\n\n    def forward(self, a, b):\n"
        "        return self.impls[0]().forward(a, b)\n")),), 1, _refused_add("only constants")),
    "getattr_chain": Case("getattr chain", (answer(ADD, (
        "class AddOp(Operator):\n    def forward(self, a, b):\n"
        "        return getattr(getattr(autograd_lab, 'ops'), 'Add' + 'Op')().forward(a, b)\n")),), 1,
        _refused_add("`getattr` is not allowed")),
    "dunder_escape": Case("reflection", (answer(SQUARES, (
        "def sum_of_squares(x):\n    for k in ().__class__.__base__.__subclasses__():\n        pass\n"
        "    return 0.0")),), 4, _refused_squares("special attribute")),
    # Reading or writing files the sandbox hides: the source, other students' work, the gradebook.
    "read_source": Case("read instructor source", (answer(SQUARES, (
        "def sum_of_squares(x):\n    print(open('../../source/91_hostile/91_hostile.ipynb').read())\n"
        "    return float(np.sum(x * x))")),), 4, _refused_squares("`open` is not allowed")),
    "read_other_student": Case("read another submission", (answer(SQUARES, (
        "def sum_of_squares(x):\n    print(autograd_lab.data.read_idx('../../../submitted/full/91_hostile/x'))\n"
        "    return float(np.sum(x * x))")),), 4, _refused_squares("`.read_idx` is not allowed")),
    "write_gradebook": Case("write the gradebook", (answer(SQUARES, (
        "def sum_of_squares(x):\n    with open('../../gradebook.db', 'w') as f:\n        f.write('')\n"
        "    return float(np.sum(x * x))")),), 4, _refused_squares("`open` is not allowed")),
    "tamper_other_student": Case("tamper with another student", (answer(SQUARES, (
        "def sum_of_squares(x):\n    np.save('../../../submitted/full/91_hostile/91_hostile.ipynb', x)\n"
        "    return float(np.sum(x * x))")),), 4, _refused_squares("`.save` is not allowed")),
    # Resource exhaustion: the limits stop it, the exercise scores 0, the rest keeps its points.
    "infinite_loop": Case("infinite loop", (answer(SQUARES, "def sum_of_squares(x):\n    while True:\n        pass"),),
                          4, r"sum_of_squares_test \(1 point\) failed: its visible tests failed: the cell ran past "
                             r"the time limit"),
    "memory_hog": Case("memory hog", (answer(SQUARES, (
        "def sum_of_squares(x):\n    hog = []\n    while True:\n        hog.append(np.zeros(100_000_000))")),), 4,
        r"sum_of_squares_test \(1 point\) failed: its visible tests failed: the cell ran out of the memory allowed"),
    "fork_bomb": Case("fork bomb", (answer(SQUARES, (
        "def sum_of_squares(x):\n    while True:\n        os.fork()")),), 4, _refused_squares("`os` comes from")),
    "process_through_library": Case("fork bomb", (answer(SQUARES, (
        "from autograd_lab.export.build import run\n\n\ndef sum_of_squares(x):\n"
        "    run(['sh', '-c', ':(){ :|:& };:'], 'bomb')\n    return 0.0")),), 4,
        _refused_squares("importing `autograd_lab.export.build.run`")),
    "huge_text_output": Case("huge output", (answer(SQUARES, (
        "def sum_of_squares(x):\n    print('x' * 20_000_000)\n    return float(np.sum(x * x))")),), 5,
        r"output_kb = \d+ KiB"),
    "huge_html_output": Case("huge output", (answer(SQUARES, (
        "class Page:\n    def _repr_html_(self):\n        return '<script>alert(1)</script>' * 1_000_000\n\n\n"
        "def sum_of_squares(x):\n    return Page()")),), 4, _refused_squares("may not define `_repr_html_`")),
    "huge_image_output": Case("huge output", (answer(SQUARES, (
        "def sum_of_squares(x):\n    display({'image/png': 'A' * 50_000_000}, raw=True)\n"
        "    return float(np.sum(x * x))")),), 5, r"more than output_kb = \d+ KiB"),
    # Stopping or killing the grader, and the network.
    "os_exit": Case("os._exit", (answer(SQUARES, "def sum_of_squares(x):\n    os._exit(0)"),), 4,
                    _refused_squares("`os` comes from")),
    "system_exit": Case("SystemExit", (answer(SQUARES, "def sum_of_squares(x):\n    raise SystemExit(0)"),), 4,
                        _refused_squares("`SystemExit` is not allowed")),
    "signal_parent": Case("signal the parent", (answer(SQUARES, (
        "def sum_of_squares(x):\n    os.kill(os.getppid(), 9)\n    return 0.0")),), 0,
        r"sum_of_squares_test \(1 point\) failed: its visible tests did not run"),
    "network": Case("network", (answer(SQUARES, (
        "import socket\n\n\ndef sum_of_squares(x):\n    socket.create_connection(('example.org', 80))\n"
        "    return 0.0")),), 4, _refused_squares("importing `socket` is not allowed")),
    "network_through_library": Case("network", (answer(SQUARES, (
        "def sum_of_squares(x):\n    autograd_lab.data.load_dataset('mnist', download=True)\n"
        "    return float(np.sum(x * x))")),), 4, _refused_squares("`.load_dataset` is not allowed")),
    # Forged metadata: ignored, never costs a correct answer its points, never gains any.
    "extra_graded_cell": Case("forged metadata", (extra_cell("assert True", _meta("bonus_test", grade=True,
                                                                                  locked=True, points=100)),),
                              5, r"cell 'bonus_test' is not part of the assignment; it was ignored"),
    "answer_marked_graded": Case("forged metadata", (metadata(ADD, grade=True, points=50),), 5,
                                 r"answer cell 'add_op_code' was marked as graded; the marking was ignored"),
    "forged_checksum": Case("forged metadata", (metadata(ADD, checksum="0" * 32),), 5,
                            r"the checksum of cell 'add_op_code' was changed; ignored"),
    "changed_kernelspec": Case("forged metadata", (kernelspec("evil-kernel"),), 5,
                               r"the notebook's kernelspec was changed; ignored"),
    "forged_test_as_answer": Case("forged metadata", (
        metadata("sum_of_squares_test", solution=True, locked=False),
        lambda nb: setattr(_cell(nb, "sum_of_squares_test"), "source", "pass")), 5,
        r"read-only cell 'sum_of_squares_test' was edited; the instructor's copy was used"),
    # Hard-coding what the visible test expects: the hidden test's secret inputs catch it.
    "hard_coded_squares": Case("hard-coded visible output", (
        answer(SQUARES, "def sum_of_squares(x):\n    return 5.0"),), 4, r"sum_of_squares_test \(1 point\) failed"),
    "mutates_test_inputs": Case("hard-coded visible output", (answer(ADD, ADD_SOLUTION.replace(
        "        a, b = self.inputs\n        return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]",
        "        a, b = self.inputs\n        if np.all(gy == 1.0):\n"
        "            return [sum_to_shape(gy, a.shape), sum_to_shape(gy, b.shape)]\n"
        "        gy[...] = 0.0  # zero the test's own array, so that expected values computed later match\n"
        "        return [gy, np.zeros(b.shape)]")),), 3, r"add_op_backward_test \(2 points\) failed"),
    "hard_coded_forward": Case("hard-coded visible output", (answer(ADD, ADD_SOLUTION.replace(
        "        return a + b", "        return np.array([4.0, 6.0])")),), 3,
        r"add_op_forward_test \(2 points\) failed"),
}


def build_case(case: Case, release: NotebookNode, source: NotebookNode) -> NotebookNode:
    nb = copy.deepcopy(release) if case.from_release else full_solution(release, source)
    for patch in case.patches:
        patch(nb)
    return nb


def write_batch(course_dir: Path, cases: dict[str, Case] | None = None) -> dict[str, Path]:
    """Write each case as ``course_dir/submitted/<case>/91_hostile/91_hostile.ipynb`` (as nbgrader's exchange
    would), built from ``course_dir/release`` and ``course_dir/source``; returns {case: path}."""
    release = nbformat.read(course_dir / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    source = nbformat.read(course_dir / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    written = {}
    for name, case in (cases or CASES).items():
        path = course_dir / "submitted" / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(build_case(case, release, source), path)
        written[name] = path
    return written


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("hostile-batch")
    source_path = write_source(out / "source")
    source = nbformat.read(source_path, as_version=4)
    for name, case in CASES.items():
        path = out / "students" / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(build_case(case, source, source), path)
    print(f"wrote the source and {len(CASES)} submissions under {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
