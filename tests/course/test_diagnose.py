"""Per-submission messages, read from small submitted and autograded notebooks (no gradebook, no kernel)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograd_lab.course.diagnose import submission_messages


def graded_test_cell(gid: str, points: float, error: str) -> nbformat.NotebookNode:
    meta = {"grade": True, "solution": False, "locked": True, "grade_id": gid, "points": points, "schema_version": 3}
    c = new_code_cell("assert False", metadata={"nbgrader": meta})
    c.outputs = [new_output("error", ename="AssertionError", evalue=error, traceback=[])]
    return c




def course_with_release(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    (course / "release" / "a1").mkdir(parents=True)
    nbformat.write(new_notebook(cells=[]), course / "release" / "a1" / "a1.ipynb")
    return course


def test_a_renamed_notebook_is_named_with_the_expected_name(tmp_path: Path) -> None:
    course = course_with_release(tmp_path)
    (course / "submitted" / "dan" / "a1").mkdir(parents=True)
    nbformat.write(new_notebook(cells=[]), course / "submitted" / "dan" / "a1" / "wrongname.ipynb")
    messages = submission_messages(course, "dan", "a1", log="")
    assert messages == [
        "a1.ipynb is missing from the submission (found wrongname.ipynb); expected a1.ipynb, with the released "
        "name, so nothing of it was graded and its tests score 0",
        "wrongname.ipynb is not a notebook of a1 (expected a1.ipynb); it was not graded",
    ]
    assert not any("grading did not finish" in m for m in messages)


def test_an_empty_submission_folder_says_which_notebook_was_expected(tmp_path: Path) -> None:
    course = course_with_release(tmp_path)
    (course / "submitted" / "eve" / "a1").mkdir(parents=True)
    assert submission_messages(course, "eve", "a1") == [
        "a1.ipynb is missing from the submission; expected a1.ipynb, with the released name, so nothing of it was "
        "graded and its tests score 0"]


def test_failed_test_points_are_singular_or_plural(tmp_path: Path) -> None:
    course = course_with_release(tmp_path)
    for stage in ("submitted", "autograded"):
        (course / stage / "ada" / "a1").mkdir(parents=True)
        cells = [graded_test_cell("one", 1, "x"), graded_test_cell("two", 2, "y"), graded_test_cell("half", 0.5, "z")]
        nb = new_notebook(cells=cells)
        nbformat.write(nb, course / stage / "ada" / "a1" / "a1.ipynb")
    assert submission_messages(course, "ada", "a1") == [
        "one (1 point) failed: AssertionError: x",
        "two (2 points) failed: AssertionError: y",
        "half (0.5 points) failed: AssertionError: z",
    ]
