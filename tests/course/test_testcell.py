"""A graded test cell read statically (grading/testcell.py): the split, the contract of the hidden part, and what
the sandbox receives (no judge)."""

from __future__ import annotations

import pytest

from autograd_lab.course.grading import testcell
from autograd_lab.course.grading.testcell import AuthoringError

CELL = '''\
assert f(1) == 2, "f(1) should be 2"
### BEGIN HIDDEN TESTS
def inputs(rng):
    return {"x": rng.normal(size=3)}

def exercise(x):
    return {"y": f(x["x"])}

@staticmethod
def judge(x, got, want):
    checks.expect(got["y"].sum() > SECRET_THRESHOLD, "too small")

checks.hidden_test("f_test", inputs=inputs, exercise=exercise, judge=judge,
                   replaces=["autograd_lab.ops.AddOp"])
### END HIDDEN TESTS
'''


def test_a_cell_splits_into_visible_and_hidden_parts_with_line_numbers_kept() -> None:
    cell = testcell.read(CELL, "f_test", "nb, cell 3")
    assert cell.visible == 'assert f(1) == 2, "f(1) should be 2"\n'
    assert cell.hidden.splitlines()[2] == "def inputs(rng):"  # line 3 of the cell is line 3 of the hidden part
    assert cell.replaces == ("autograd_lab.ops.AddOp",)


def test_the_sandbox_receives_no_judge() -> None:
    cell = testcell.read(CELL, "f_test", "nb, cell 3")
    assert "SECRET_THRESHOLD" not in cell.exercise and "judge" not in cell.exercise.replace("### ", "")
    assert "def exercise(x):" in cell.exercise
    assert len(cell.exercise.splitlines()) == len(cell.hidden.splitlines())
    namespace: dict = {}
    calls = []

    class Checks:
        @staticmethod
        def hidden_test(tag, **kwargs):
            calls.append((tag, sorted(kwargs)))

    exec(cell.exercise, {"checks": Checks, "f": lambda v: v})
    assert calls == [("f_test", ["exercise", "inputs", "replaces"])]
    assert namespace == {}


@pytest.mark.parametrize("hidden, error", [
    ("x = 1\n", "line 3 of the cell, in the hidden part, is neither a function definition nor the "
                "checks.hidden_test call"),
    ("def inputs(rng): pass\n", "exactly once, not 0 times"),
    ("checks.hidden_test('other_test', inputs=i, exercise=e)\n", "must be the string 'f_test'"),
    ("checks.hidden_test(tag, inputs=i, exercise=e)\n", "must be the string 'f_test'"),
    ("checks.hidden_test('f_test', exercise=e)\n", "needs inputs="),
    ("checks.hidden_test('f_test', inputs=i, exercise=e, judge=checks.compare)\n", "judge= must name a function"),
    ("checks.hidden_test('f_test', inputs=i, exercise=e, replaces=NAMES)\n", "literal list or tuple of strings"),
    ("checks.hidden_test('f_test', inputs=i, exercise=e, replaces=['a', 1])\n", "literal list or tuple of strings"),
    ("checks.hidden_test('f_test', inputs=i, exercise=e, **more)\n", "no \\*\\*kwargs"),
    ("if True:\n", "does not parse"),
])
def test_a_hidden_part_that_breaks_the_contract_is_an_authoring_error_naming_the_cell(hidden: str, error: str) -> None:
    with pytest.raises(AuthoringError, match=f"^nb, cell 3 \\(test cell 'f_test'\\): .*{error}"):
        testcell.read("assert True\n### BEGIN HIDDEN TESTS\n" + hidden, "f_test", "nb, cell 3")


def test_a_graded_cell_without_a_hidden_part_is_an_authoring_error() -> None:
    with pytest.raises(AuthoringError, match="no '### BEGIN HIDDEN TESTS' line"):
        testcell.read("assert True\n", "f_test", "nb, cell 3")
