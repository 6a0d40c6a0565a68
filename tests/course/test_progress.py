"""`course progress`: the table, each exercise's status, whole failure messages, the hidden-test note, unknown
names, nbformat 3, a quiet kernel. No answer is checked for its style: the notebook runs as the learner has it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograd_lab.course.learner.progress import (
    MESSAGE_LIMIT,
    NOT_ANSWERED,
    ChallengeResult,
    ExerciseResult,
    NotebookProgress,
    collect_results,
    format_progress,
    read_notebook,
    workspace_progress,
)
from autograd_lab.course.learner.progress import (
    TestResult as Result,
)

HINT = "hint: the gradient of a broadcast input sums over the broadcast axes"
LONG_MESSAGE = ("AssertionError: AddOp backward: b was broadcast over 2 rows, so its gradient sums them: expected "
                "[2, 2, 2], got [1, 1, 1]\n" + "shape detail " * 12 + "\n" + HINT)


def test_verbose_shows_the_whole_message_wrapped_and_indented() -> None:
    result = NotebookProgress("03_engine.ipynb", [Result("backward_test", 2, LONG_MESSAGE)])
    text = format_progress([result], verbose=True)
    assert HINT in text  # the third line of the message, past 150 characters
    assert "shape detail shape detail" in text
    lines = text.splitlines()
    start = lines.index("    backward_test:")
    body = [line for line in lines[start + 1:] if line.startswith("        ")]
    assert len(body) >= 3 and all(len(line) <= 8 + 100 for line in body)
    assert " ".join(line.strip() for line in body).startswith(" ".join(LONG_MESSAGE.split()[:12]))


def test_verbose_caps_only_very_long_messages() -> None:
    huge = "AssertionError: " + "x" * 5000
    text = format_progress([NotebookProgress("a.ipynb", [Result("t", 1, huge)])], verbose=True)
    shown = "".join(line.strip() for line in text.splitlines() if line.startswith("        "))
    assert shown.startswith("AssertionError: xxx")
    assert shown.count("x") == MESSAGE_LIMIT - len("AssertionError: ")
    assert f"[{len(huge) - MESSAGE_LIMIT} more characters]" in shown


def test_the_table_ends_with_the_hidden_part_note() -> None:
    text = format_progress([NotebookProgress("a.ipynb", [Result("t", 1, None)])])
    assert " ".join(text.splitlines()[2:]) == (
        "Points count the visible tests only. Grading also runs each test's hidden part, on other inputs (other "
        "shapes and values) drawn for your submission, so the final score can be lower.")


def graded_meta(grade_id: str, points: int = 1) -> dict:
    return {"nbgrader": {"grade": True, "solution": False, "locked": True, "grade_id": grade_id, "points": points,
                         "schema_version": 3}}


def answer_meta(grade_id: str) -> dict:
    return {"nbgrader": {"grade": False, "solution": True, "locked": False, "grade_id": grade_id,
                         "schema_version": 3}}


def test_each_test_belongs_to_the_exercise_of_the_answer_cell_above_it() -> None:
    stub = new_output("error", ename="NotImplementedError", evalue="", traceback=[])
    wrong = new_output("error", ename="AssertionError", evalue="AddOp backward: expected [1, 1]", traceback=[])
    nb = new_notebook(cells=[
        new_code_cell("class AddOp: ...", metadata=answer_meta("add_op_code"), execution_count=1),
        new_code_cell("...", metadata=graded_meta("add_op_forward_test", 2), execution_count=2),
        new_code_cell("...", metadata=graded_meta("add_op_backward_test", 3), execution_count=3, outputs=[wrong]),
        new_code_cell("def mul(a, b):\n    raise NotImplementedError()", metadata=answer_meta("mul_code"),
                      execution_count=4),
        new_code_cell("...", metadata=graded_meta("mul_test"), execution_count=5, outputs=[stub]),
        new_code_cell("def neg(a):\n    return -a", metadata=answer_meta("neg_code"), execution_count=6),
        new_code_cell("...", metadata=graded_meta("neg_test"), execution_count=7),
        # A constant answer left as released: the cell itself raises, so its test meets a NameError.
        new_code_cell("VIEWS = ...\n# YOUR CODE HERE\nraise NotImplementedError()", metadata=answer_meta("views_code"),
                      execution_count=8, outputs=[stub]),
        new_code_cell("...", metadata=graded_meta("views_test"), execution_count=9, outputs=[
            new_output("error", ename="NameError", evalue="name 'VIEWS' is not defined", traceback=[])]),
    ])
    tests, _ = collect_results(nb)
    assert [(t.grade_id, t.points, t.error, t.exercise) for t in tests] == [
        ("add_op_forward_test", 2, None, "add_op"),
        ("add_op_backward_test", 3, "AssertionError: AddOp backward: expected [1, 1]", "add_op"),
        ("mul_test", 1, NOT_ANSWERED, "mul"), ("neg_test", 1, None, "neg"), ("views_test", 1, NOT_ANSWERED, "views")]
    progress = NotebookProgress("02_operators.ipynb", tests)
    assert progress.exercises == [ExerciseResult("add_op", "failing"), ExerciseResult("mul", "not answered"),
                                  ExerciseResult("neg", "passed"), ExerciseResult("views", "not answered")]
    assert (progress.points, progress.max_points) == (3, 8)
    assert "    exercises: add_op failing; mul not answered; neg passed; views not answered" in \
        format_progress([progress]).splitlines()


def test_a_complete_notebook_has_no_exercise_line() -> None:
    text = format_progress([NotebookProgress("a.ipynb", [Result("t", 1, None, "a")])])
    assert "exercises:" not in text and text.splitlines()[1].rstrip().endswith("done")


def test_an_exercise_stopped_by_a_dead_kernel_did_not_run() -> None:
    progress = NotebookProgress("a.ipynb", [Result("a_test", 1, None, "a"), Result("b_test", 1, "did not run", "b")],
                                problem="the kernel died")
    assert progress.exercises == [ExerciseResult("a", "passed"), ExerciseResult("b", "did not run")]


NB3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""}, "worksheets": [{"metadata": {}, "cells": [
    {"cell_type": "code", "input": "assert 1 + 1 == 2", "language": "python", "outputs": [], "collapsed": False,
     "metadata": graded_meta("t")}]}]}


def test_an_nbformat_3_notebook_is_read_converted(tmp_path: Path) -> None:
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(NB3))
    nb, converted = read_notebook(path)
    assert converted and nb.nbformat == 4
    assert [(c.source, c.metadata.nbgrader.grade_id) for c in nb.cells] == [("assert 1 + 1 == 2", "t")]
    assert json.loads(path.read_text()) == NB3  # the learner's file is untouched


def write_notebook(path: Path, *sources: str, graded: bool = True) -> None:
    meta = {"grade": True, "solution": False, "locked": True, "grade_id": "t", "points": 1, "schema_version": 3}
    cells = [new_code_cell(s, metadata={"nbgrader": meta} if graded else {}) for s in sources]
    nbformat.write(new_notebook(cells=cells), path)


def test_an_unknown_name_lists_the_available_notebooks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    for name in ("00_welcome", "03_engine"):
        write_notebook(tmp_path / f"{name}.ipynb", "pass")
    with pytest.raises(FileNotFoundError, match=r"no notebook in .* matches 'nosuch'; available: 00_welcome, "
                                                r"03_engine$"):
        workspace_progress(tmp_path, ["nosuch"])
    with pytest.raises(FileNotFoundError, match=r"matches 'nosuch', 'other'"):
        workspace_progress(tmp_path, ["03_engine", "nosuch", "other"])
    assert main(["course", "progress", "nosuch", "--workspace", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "no notebook in" in err and "run 'autograd-lab course setup'" not in err


def test_an_empty_workspace_still_says_to_run_setup(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no notebooks to check in .*run 'autograd-lab course setup' first"):
        workspace_progress(tmp_path, ["nosuch"])


@pytest.mark.slow
def test_progress_runs_without_kernel_transport_noise_and_keeps_errors(tmp_path: Path) -> None:
    # Two notebooks, so a once-per-notebook warning would show twice; the second one's test fails.
    write_notebook(tmp_path / "a.ipynb", "assert 1 + 1 == 2")
    message = "expected 4 for 2 + 2\\n" + HINT
    write_notebook(tmp_path / "b.ipynb", f"assert 2 + 2 == 5, '{message}'")
    nb = nbformat.read(tmp_path / "a.ipynb", as_version=4)
    nb.cells += challenge_cells("double", "def double(x):\n    return 2 * x", [])
    nb.cells[-1].source = "assert double(2) == 4, 'double(2) should be 4'\nprint('double: challenge passed')"
    nbformat.write(nb, tmp_path / "a.ipynb")
    (tmp_path / "c.ipynb").write_text(json.dumps(NB3))  # saved by an old Jupyter: converted for the run
    cmd = [str(Path(sys.executable).parent / "autograd-lab"), "course", "progress", "-v", "--workspace", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "without encryption" not in proc.stderr and "IPKernelApp" not in proc.stderr, proc.stderr
    assert "AssertionError: expected 4 for 2 + 2" in proc.stdout and HINT in proc.stdout
    assert "a.ipynb" in proc.stdout and "1/1" in proc.stdout and "0/1" in proc.stdout
    assert "challenge (optional, no points): double passed" in proc.stdout
    rows = {line.split()[0]: line for line in proc.stdout.splitlines() if line.endswith(("done", "1/1", "0/1"))}
    assert rows["c.ipynb"].split()[1:] == ["1/1", "1/1", "done"]
    assert "    saved in nbformat 3: converted for this run (save it again in JupyterLab to update it)" in proc.stdout


def challenge_cells(name: str, answer: str, outputs: list) -> list:
    """An executed challenge pair: the answer cell and its locked, ungraded test cell with the given outputs."""
    code = {"solution": True, "grade": False, "locked": False, "grade_id": f"{name}_challenge_code"}
    test = {"solution": False, "grade": False, "locked": True, "grade_id": f"{name}_challenge_test"}
    return [new_code_cell(answer, metadata={"nbgrader": code}, execution_count=1),
            new_code_cell("...", metadata={"nbgrader": test}, execution_count=2, outputs=outputs)]


def test_challenges_are_collected_apart_from_the_graded_tests() -> None:
    graded = {"grade": True, "solution": False, "locked": True, "grade_id": "t_test", "points": 2, "schema_version": 3}
    stub_error = new_output("error", ename="NotImplementedError", evalue="", traceback=[])
    cells = [new_code_cell("assert True", metadata={"nbgrader": graded}, execution_count=1)]
    cells += challenge_cells("solved", "def f():\n    return 1", [new_output("stream", name="stdout", text="ok\n")])
    cells += challenge_cells("stub_printed", "def f():\n    raise NotImplementedError()",
                             [new_output("stream", name="stdout", text="f: not attempted (optional)\n")])
    cells += challenge_cells("stub_raised", "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()",
                             [stub_error])
    cells += challenge_cells("wrong", "def f():\n    return 2", [
        new_output("error", ename="AssertionError", evalue="f() should be 1, got 2", traceback=[])])
    cells += challenge_cells("skipped", "def f():\n    return 1", [])
    cells[-1].execution_count = None  # the kernel stopped before this cell
    tests, challenges = collect_results(new_notebook(cells=cells))
    assert [(t.grade_id, t.points, t.error) for t in tests] == [("t_test", 2, None)]
    assert [(c.name, c.status) for c in challenges] == [
        ("solved", "passed"), ("stub_printed", "not attempted"), ("stub_raised", "not attempted"),
        ("wrong", "failing"), ("skipped", "did not run")]
    assert challenges[3].error == "AssertionError: f() should be 1, got 2"


def test_the_table_shows_challenges_on_their_own_line_outside_the_points() -> None:
    result = NotebookProgress("03_engine.ipynb", [Result("t_test", 2, None)], challenges=[
        ChallengeResult("backward_order", "passed"), ChallengeResult("backward_to", "not attempted"),
        ChallengeResult("gru_cell", "failing", "AssertionError: h_next is wrong")])
    text = format_progress([result], verbose=True)
    row = next(line for line in text.splitlines() if line.startswith("03_engine.ipynb"))
    assert "1/1" in row and "2/2" in row and row.rstrip().endswith("done"), "challenges do not change the score"
    flat = " ".join(text.split())  # the challenge line wraps at 100 characters
    assert "challenge (optional, no points): backward_order passed; backward_to not attempted; gru_cell failing" in flat
    assert "gru_cell (challenge):" in text and "h_next is wrong" in text
    assert "never change the points" in flat
    assert "challenge" not in format_progress([NotebookProgress("a.ipynb", [Result("t", 1, None)])])
