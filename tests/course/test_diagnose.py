"""Per-submission messages about the submitted files and failed tests (no gradebook, no sandbox; fast)."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbformat.v4 import new_notebook

from autograd_lab.course.grading import batch
from autograd_lab.course.grading.limits import Limits
from autograd_lab.course.instructor.report import SubmissionReport, expected_notebooks

from .conftest import FIXTURE_SOURCE

A = "90_fixture"


def course_with_source(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    shutil.copytree(FIXTURE_SOURCE / A, course / "source" / A)
    return course


def test_a_renamed_notebook_is_named_with_the_expected_name(tmp_path: Path) -> None:
    course = course_with_source(tmp_path)
    (course / "submitted" / "dan" / A).mkdir(parents=True)
    nbformat.write(new_notebook(cells=[]), course / "submitted" / "dan" / A / "wrongname.ipynb")
    job, messages = batch.prepare(course, A, "dan")
    assert messages == [
        f"{A}.ipynb is missing from the submission (found wrongname.ipynb); expected {A}.ipynb, with the released "
        "name, so nothing of it was graded and its tests score 0",
        f"wrongname.ipynb is not a notebook of {A} (expected {A}.ipynb); it was not graded",
    ]
    assert job is not None and job.unreadable  # nothing of it runs


def test_an_empty_submission_folder_says_which_notebook_was_expected(tmp_path: Path) -> None:
    course = course_with_source(tmp_path)
    (course / "submitted" / "eve" / A).mkdir(parents=True)
    assert batch.prepare(course, A, "eve")[1] == [
        f"{A}.ipynb is missing from the submission; expected {A}.ipynb, with the released name, so nothing of it "
        "was graded and its tests score 0"]
    assert expected_notebooks(course, A) == [f"{A}.ipynb"]


def test_points_are_singular_or_plural_and_limits_are_named() -> None:
    assert [batch._points(p) for p in (1, 2, 0.5)] == ["1 point", "2 points", "0.5 points"]
    limits = Limits(cell_seconds=7, memory_mb=900)
    assert "cell_seconds = 7 s" in batch.explain("CellTimeoutError", "", limits)
    assert "memory_mb = 900 MiB" in batch.explain("MemoryError", "", limits)
    assert batch.explain("NotImplementedError", "", limits) == "the exercise is not answered yet (NotImplementedError)"
    assert batch.explain("AssertionError", "shape (2, 3)\nmore", limits) == "AssertionError: shape (2, 3)"


def test_a_report_line_holds_the_score_and_every_message() -> None:
    line = str(SubmissionReport("ada", A, 5, 6, ["x failed", "y ignored"]))
    assert line.startswith("ada") and "5/6" in line and line.endswith("x failed; y ignored")
