"""The batch's gradebook writer against nbgrader's own Gradebook API, row by row (no sandbox, no release: the
gradebook is filled directly through nbgrader's API; fast)."""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from autograd_lab.course.grading import assemble, record
from autograd_lab.course.grading.assemble import ANSWER, TEST, Job

from .conftest import FIXTURE_SOURCE, copy_course

A = "90_fixture"


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A course whose gradebook knows 90_fixture (its graded and answer cells, plus a task cell the job never names,
    as nbgrader would record one). Made once."""
    from nbgrader import api

    course = copy_course(tmp_path_factory.mktemp("record") / "course", FIXTURE_SOURCE)
    with open(course / "nbgrader_config.py", "a") as config:  # a late submission then loses its points visibly
        config.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    job = assemble.assemble(course / "source" / A / f"{A}.ipynb", None)
    with pytest.MonkeyPatch.context() as mp:
        # A new gradebook asks the `alembic` command for the schema version (seconds); only migrations read it.
        mp.setattr(api, "get_alembic_version", lambda: "test")
        api.Gradebook(f"sqlite:///{course / 'gradebook.db'}").close()
    with api.Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.update_or_create_assignment(A, duedate="2026-12-01 12:00:00 UTC")
        gb.add_notebook(A, A)
        for cell in job.cells:
            if cell.kind == TEST and cell.points > 0:
                gb.add_grade_cell(cell.grade_id, A, A, max_score=cell.points, cell_type="code")
            elif cell.kind == ANSWER:
                gb.add_solution_cell(cell.grade_id, A, A)
        gb.add_task_cell("essay", A, A, max_score=2, cell_type="markdown")
    return course


@pytest.fixture
def course(released: Path, tmp_path: Path) -> tuple[Path, Job]:
    """A fresh copy of the released course and the job of a blank submission."""
    course = tmp_path / "course"
    shutil.copytree(released, course)
    return course, assemble.assemble(course / "source" / A / f"{A}.ipynb", None)


def nbgrader_save(gb: Any, course: Path, student: str, job: Job, passed: dict[str, bool], stubs: set[str]) -> None:
    """The oracle: the same verdicts written through nbgrader's public Gradebook methods, one call per row."""
    stamp = course / "submitted" / student / A / "timestamp.txt"
    gb.update_or_create_student(student)
    kwargs = {"timestamp": stamp.read_text().strip()} if stamp.is_file() else {}
    gb.update_or_create_submission(A, student, **kwargs)
    for cell in job.cells:
        if cell.kind == TEST and cell.points > 0:
            grade = gb.find_grade(cell.grade_id, A, A, student)
            grade.auto_score = cell.points if passed.get(cell.grade_id) else 0.0
            grade.needs_manual_grade = grade.manual_score is not None
        elif cell.kind == ANSWER:
            gb.find_comment(cell.grade_id, A, A, student).auto_comment = "No response." if cell.grade_id in stubs \
                else None
    gb.db.commit()
    # nbgrader's autograde runs its late-penalty preprocessor on every submission, with the course's configuration.
    from nbformat.v4 import new_notebook
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    resources = {"nbgrader": {"student": student, "assignment": A, "notebook": A,
                              "db_url": f"sqlite:///{course / 'gradebook.db'}"}}
    AssignLatePenalties(config=config).preprocess(new_notebook(), resources)
    gb.db.expire_all()


def rows(gb: Any, student: str) -> dict[str, Any]:
    """Everything the gradebook holds about one student's submission (ids aside)."""
    sub = gb.find_submission(A, student)
    (nb,) = sub.notebooks
    return {"timestamp": sub.timestamp, "score": sub.score, "late": nb.late_submission_penalty,
            "grades": {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in nb.grades},
            "comments": {c.name: c.auto_comment for c in nb.comments}}


def test_the_writer_stores_what_nbgraders_own_api_stores(course: tuple[Path, Job]) -> None:
    from nbgrader.api import Gradebook

    course_dir, job = course
    for student in ("ann", "bob"):  # the same (late) timestamp for both
        (course_dir / "submitted" / student / A).mkdir(parents=True)
        (course_dir / "submitted" / student / A / "timestamp.txt").write_text("2026-12-02 08:00:00 UTC\n")
    tests = [c.grade_id or "" for c in job.cells if c.kind == TEST and c.points > 0]
    answers = [c.grade_id or "" for c in job.cells if c.kind == ANSWER]
    rounds = [({t: True for t in tests}, set()),  # first grading: rows created
              ({t: k % 2 == 0 for k, t in enumerate(tests)}, {answers[0]}),  # regraded: rows updated
              ({}, set(answers))]  # after the instructor gave a manual score (below)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        warnings.simplefilter("ignore")
        writer = record.GradebookWriter(gb, course_dir, A)
        for k, (passed, stubs) in enumerate(rounds):
            if k == 2:
                for student in ("ann", "bob"):
                    gb.find_grade(tests[0], A, A, student).manual_score = 0.5
                gb.db.commit()
            score, max_score = writer.save("ann", job, passed, stubs, None)
            nbgrader_save(gb, course_dir, "bob", job, passed, stubs)
            ann, bob = rows(gb, "ann"), rows(gb, "bob")
            assert ann == bob, f"round {k}"
            assert (score, max_score) == (ann["score"], gb.find_assignment(A).max_score), f"round {k}"
            assert set(ann["grades"]) == {*tests, "essay"} and set(ann["comments"]) == {*answers, "essay"}
            assert ann["late"] == ann["score"]  # late: the "zero" penalty method took every point
        assert ann["timestamp"] is not None and ann["grades"][tests[0]] == (0.0, 0.5, True)


def test_a_submission_on_time_has_no_late_penalty_and_the_score_is_the_sum_of_passed_points(
    course: tuple[Path, Job],
) -> None:
    from nbgrader.api import Gradebook

    course_dir, job = course
    graded = [c for c in job.cells if c.kind == TEST and c.points > 0]
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        score, max_score = record.save_scores(course_dir, "cy", job, {graded[0].grade_id or "": True}, set(), None, gb)
        assert (score, max_score) == (graded[0].points, sum(c.points for c in graded) + 2)  # + the task cell
        assert rows(gb, "cy")["late"] is None and rows(gb, "cy")["timestamp"] is None


def test_a_gradebook_without_the_assignment_or_its_cells_is_named(course: tuple[Path, Job], tmp_path: Path) -> None:
    from nbgrader.api import Gradebook

    course_dir, job = course
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        with pytest.raises(record.GradebookError, match="has no assignment 91_other; run `autograd-lab course "
                                                        "release 91_other` first"):
            record.GradebookWriter(gb, course_dir, "91_other")
        writer = record.GradebookWriter(gb, course_dir, A)
        changed = Job(A, job.notebook, job.template, [*job.cells, assemble.JobCell(99, TEST, "new_test", "", 1.0)])
        with pytest.raises(record.GradebookError, match="has no cell 'new_test': the source changed since the "
                                                        "release"):
            writer.save("dee", changed, {}, set(), None)
        renamed = Job(A, "other.ipynb", job.template, job.cells)
        with pytest.raises(record.GradebookError, match="has no notebook other"):
            writer.save("dee", renamed, {}, set(), None)
        writer.save("dee", job, {}, set(), None)  # the failed saves left nothing half-written behind
        assert rows(gb, "dee")["score"] == 0
