"""`course autograde` warns, before and after the report, when no grading secret is set; the report lines are the
grader's (the grader itself is replaced here: its behaviour is tested in test_pipeline.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograd_lab.course import checks, instructor
from autograd_lab.course.instructor import SubmissionReport

WARNING = ("autograd-lab course: warning: no grading secret is set ($AUTOGRAD_LAB_GRADING_SECRET or "
           "$AUTOGRAD_LAB_GRADING_SECRET_FILE): hidden inputs come from the public default, which students can "
           "reproduce; set one for grades that count (docs/instructor.md, 'The grading secret')")


@pytest.fixture
def course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "course"
    root.mkdir()
    (root / "nbgrader_config.py").write_text("c = get_config()\n")
    report = SubmissionReport("ada", "01_graphs", 3, 4, ["x_test (1 point) failed: wrong"])
    monkeypatch.setattr(instructor, "autograde", lambda *args, **kwargs: [report])
    monkeypatch.delenv(checks.SECRET_ENV, raising=False)
    monkeypatch.delenv(checks.SECRET_FILE_ENV, raising=False)
    return root


def run(course: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from autograd_lab.cli import main

    status = main(["course", "autograde", "01_graphs", "--course-dir", str(course)])
    out, err = capsys.readouterr()
    return status, out, err


def test_without_a_secret_the_warning_opens_and_closes_the_report(course: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(course, capsys)
    assert status == 0
    assert out == "ada              01_graphs                    3/4  x_test (1 point) failed: wrong\n"
    assert err == f"{WARNING}\n{WARNING}\n"


@pytest.mark.parametrize("variable", [checks.SECRET_ENV, checks.SECRET_FILE_ENV])
def test_with_a_secret_there_is_no_warning(course: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "something")
    assert run(course, capsys)[2] == ""


def test_an_assignment_without_a_source_notebook_is_named(tmp_path: Path) -> None:
    from autograd_lab.course.instructor.autograding import autograde
    from autograd_lab.course.instructor.course_root import CourseError

    (tmp_path / "source" / "03_engine").mkdir(parents=True)
    with pytest.raises(CourseError, match=r"^assignment 03_engine: expected the notebook "
                                          r"source/03_engine/03_engine\.ipynb in "):
        autograde(tmp_path, "03_engine")
