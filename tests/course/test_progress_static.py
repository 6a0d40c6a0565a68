"""`course progress` runs the grader's static check on the answer cells: a refused cell is reported with its cell
and line, and its tests do not count as passed (honest-student trial: a notebook the grader refuses showed
"11/11 done")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograd_lab.course.grading.static import check_answer_cell
from autograd_lab.course.progress import (
    ChallengeResult,
    NotebookProgress,
    StaticRefusal,
    format_progress,
    mark_refused,
    static_refusals,
)
from autograd_lab.course.progress import TestResult as Result

SETUP = "import numpy as np\nfrom autograd_lab import Variable"
REFUSED_ANSWER = "import os\n\n\ndef double(x):\n    return 2 * x\n\n\nprint(double(2))\n"
GOOD_ANSWER = "def half(x):\n    return x / 2\n"
STUB_ANSWER = "def third(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"


def meta(grade_id: str, *, solution: bool = False, grade: bool = False, locked: bool = False) -> dict:
    return {"nbgrader": {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked,
                         "points": 1 if grade else 0, "schema_version": 3}}


def notebook() -> nbformat.NotebookNode:
    return new_notebook(cells=[
        new_code_cell(SETUP, metadata=meta("setup", locked=True)),
        new_markdown_cell("## double"),
        new_code_cell(REFUSED_ANSWER, metadata=meta("double_code", solution=True)),
        new_code_cell("assert double(2) == 4", metadata=meta("double_test", grade=True, locked=True)),
        new_code_cell(GOOD_ANSWER, metadata=meta("half_code", solution=True)),
        new_code_cell("assert half(2) == 1", metadata=meta("half_test", grade=True, locked=True)),
        new_code_cell(STUB_ANSWER, metadata=meta("third_code", solution=True)),
        new_code_cell("third(3)", metadata=meta("third_test", grade=True, locked=True)),
        new_code_cell("def double(x):\n    return 2 * x\n", metadata=meta("quad_challenge_code", solution=True)),
        new_code_cell("assert double(1) == 2", metadata=meta("quad_challenge_test", locked=True)),
    ])


def test_refusals_are_the_graders_own_with_cell_and_line() -> None:
    found = static_refusals(notebook())
    expected = check_answer_cell(REFUSED_ANSWER, grade_id="double_code", protected_names=frozenset())
    mine = [(r.line, r.message) for r in found if r.grade_id == "double_code"]
    assert mine == [(e.line, e.message) for e in expected]
    assert {r.line for r in found if r.grade_id == "double_code"} == {1, 8}  # import os, the top-level print
    assert all(r.cell == 3 for r in found if r.grade_id == "double_code")  # the third cell of the notebook
    assert {r.grade_id for r in found} == {"double_code"}  # the stub line is not checked


def test_rebinding_a_name_of_a_locked_cell_is_refused_as_by_the_grader() -> None:
    release = notebook()
    release.cells[4].source = "def half(x):\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    nb = notebook()
    nb.cells[4].source = "np = 3\n\n\n" + GOOD_ANSWER  # np is bound by the locked setup cell
    refused = [r for r in static_refusals(nb, release) if r.grade_id == "half_code"]
    assert refused and refused[0].line == 1 and "np" in refused[0].message
    assert not [r for r in static_refusals(release, release) if r.grade_id == "half_code"]  # the stub itself


ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize("source", sorted((ROOT / "assignments" / "source").glob("*/*.ipynb")), ids=lambda p: p.stem)
def test_the_instructors_answers_are_not_refused(source: Path) -> None:
    # The honest answers of every chapter pass the check as progress runs it, against the real release.
    release = ROOT / "notebooks" / source.name
    nb = nbformat.read(source, as_version=4)
    assert static_refusals(nb, nbformat.read(release, as_version=4) if release.is_file() else None) == []


def test_the_real_release_passes_the_check_and_a_wrapper_answer_is_refused() -> None:
    release = nbformat.read(Path(__file__).parents[2] / "notebooks" / "03_engine.ipynb", as_version=4)
    assert static_refusals(release, release) == []
    nb = nbformat.read(Path(__file__).parents[2] / "notebooks" / "03_engine.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "backward_code")
    cell.source = "import subprocess\n\n\ndef backward(root):\n    Engine.backward(root)\n"
    refused = static_refusals(nb, release)
    assert [(r.grade_id, r.line) for r in refused] == [("backward_code", 1)]
    assert refused[0].cell == nb.cells.index(cell) + 1


def test_tests_of_a_refused_cell_fail_and_the_notebook_is_not_done() -> None:
    nb = notebook()
    nb.cells[8].source = "import os\n\n\n" + nb.cells[8].source
    progress = NotebookProgress("a.ipynb", [Result("double_test", 1, None), Result("half_test", 1, None),
                                            Result("third_test", 1, None)],
                                challenges=[ChallengeResult("quad", "passed")])
    progress.refusals = static_refusals(nb)
    mark_refused(nb, progress)
    errors = {t.grade_id: t.error for t in progress.tests}
    assert errors["half_test"] is None and errors["third_test"] is None
    assert errors["double_test"] is not None and "refuses answer cell 'double_code'" in errors["double_test"]
    assert progress.challenges[0].status == "failing"
    assert not progress.complete and progress.points == 2
    text = format_progress([progress])
    assert "done" not in text.splitlines()[1]
    assert "refused by the grader: answer cell 'double_code' (cell 3), line 1:" in text


def test_a_clean_notebook_has_no_refusals() -> None:
    nb = notebook()
    nb.cells[2].source = "def double(x):\n    return 2 * x\n"
    assert static_refusals(nb) == []
    assert str(StaticRefusal("a_code", 2, 5, "why")) == "answer cell 'a_code' (cell 2), line 5: why"


@pytest.mark.slow
def test_progress_reports_a_refused_cell_whose_tests_pass_in_the_kernel(tmp_path: Path) -> None:
    nb = notebook()
    nb.cells = nb.cells[:4]  # setup, the refused double (it runs fine in a kernel) and its passing test
    nbformat.write(nb, tmp_path / "a.ipynb")
    cmd = [str(Path(sys.executable).parent / "autograd-lab"), "course", "progress", "--workspace", str(tmp_path),
           "--release", str(tmp_path / "no-release")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    table = proc.stdout.splitlines()
    assert "0/1" in table[1] and "done" not in table[1], proc.stdout
    assert "refused by the grader: answer cell 'double_code' (cell 3), line 1:" in proc.stdout
