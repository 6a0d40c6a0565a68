"""The audit hook behind the static check (grading/audit.py), tested on its own: code compiled from an answer cell
cannot make code from text, swap a function's code or start processes, even through the standard library, while
library code that the harness or a test calls by itself is left alone. Each case runs in a fresh interpreter
(an audit hook cannot be removed). Cases F1 and F4 come from a hostile-student review that got full marks with
nothing implemented through functools.update_wrapper and singledispatch's eval of a string annotation."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

STUDENT = "<cell 3: add_op_code>"

PRELUDE = f"""
import dataclasses, functools, os
from autograd_lab.course.grading import audit
STUDENT = {STUDENT!r}
def student(src):
    ns = {{"functools": functools, "os": os, "dataclasses": dataclasses}}
    exec(compile(src, STUDENT, "exec"), ns)  # the harness compiles answer cells under their own filename
    return ns
audit.arm(frozenset({{STUDENT}}))
"""


def run(body: str) -> str:
    code = PRELUDE + textwrap.dedent(body)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip()


@pytest.mark.parametrize("name, body", [
    ("F4: singledispatch evaluates a string annotation", """
ns = student('''
def base(x):
    return x
def hook(x: "exec('print(1)') or int"):
    return x
def attack():
    functools.singledispatch(base).register(hook)
''')"""),
    ("F1: update_wrapper swaps a library function's code", """
ns = student('''
def keep(*a, **k):
    return True
def attack():
    functools.update_wrapper(os.path.join, keep, ("__code__",))
''')"""),
    ("a process", """
ns = student('''
def attack():
    os.system("true")
''')"""),
    ("a signal to the grader", """
ns = student('''
def attack():
    os.kill(os.getppid(), 0)
''')"""),
])
def test_student_code_is_refused_even_through_the_standard_library(name: str, body: str) -> None:
    out = run(body + """
try:
    ns["attack"]()
except audit.GraderRefused as exc:
    print("refused:", exc)
else:
    print("NOT REFUSED")
""")
    assert out.startswith("refused:"), f"{name}: {out}"


def test_dataclasses_in_answers_and_library_code_called_by_the_harness_still_work() -> None:
    out = run("""
ns = student('''
@dataclasses.dataclass
class Tape:
    steps: list
def make():
    return Tape([1, 2])
''')
assert ns["make"]().steps == [1, 2]
exec(compile("y = 1", "<cell 4: add_op_test>", "exec"), {})  # a test cell is trusted code
import typing
typing.get_type_hints(type("X", (), {"__annotations__": {"a": "int"}}))  # no student frame on the stack
print("ok")
""")
    assert out == "ok"


def test_a_library_module_imported_by_an_answer_may_make_code_at_its_own_top_level(tmp_path) -> None:
    # An honest `from autograd_lab.nn import Linear` in an answer cell was refused: typing compiles annotations
    # while the module is first imported. Here a module that compiles and execs at its top level stands for it.
    (tmp_path / "makes_code_at_import.py").write_text("exec(compile('VALUE = 41 + 1', 'lib', 'exec'))\n")
    out = run(f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
ns = student('''
import makes_code_at_import
def attack():
    exec("x = 1")
''')
assert ns["makes_code_at_import"].VALUE == 42
try:
    ns["attack"]()
except audit.GraderRefused:
    print("ok")
""")
    assert out == "ok"


def test_an_answer_that_trains_with_the_library_plan_keeps_working_under_the_hook() -> None:
    # The plan compiles its replay function at run time; under the hook, with an answer on the stack, that compile
    # is refused, and the replay keeps to its checked loop (same results) instead of failing an honest answer.
    out = run("""
import numpy as np
from autograd_lab.nn import MLP
from autograd_lab.optim import SGD
from autograd_lab.training import train_epoch
ns = student('''
def train(train_epoch, model, opt, x, y, np):
    return [train_epoch(model, opt, x, y, 8, np.random.default_rng(0)) for _ in range(3)]
''')
rng = np.random.default_rng(1)
x, y = rng.random((32, 6), dtype=np.float32), rng.integers(0, 3, 32)
weights = []
for engine in ("plan", "eager"):
    model = MLP([6, 5, 3], rng=0)
    opt = SGD(model.parameters(), lr=0.1)
    if engine == "plan":
        ns["train"](train_epoch, model, opt, x, y, np)
    else:
        [train_epoch(model, opt, x, y, 8, np.random.default_rng(0), engine="eager") for _ in range(3)]
    weights.append([p.numpy() for p in model.parameters()])
print("ok" if all(np.array_equal(a, b) for a, b in zip(*weights)) else "differ")
""")
    assert out == "ok"
