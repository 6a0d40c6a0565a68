"""``course autograde``: every submission of an assignment graded by the sandboxed grader, one report each.

This module is the instructor's only call into the grader (:func:`_grade`), so a change of the grader's signature
is adapted here alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from autograd_lab.course.grading.limits import Limits
from autograd_lab.course.instructor.course_root import CourseError, source_notebook
from autograd_lab.course.instructor.report import SubmissionReport

NO_SECRET = ("no grading secret is set ($AUTOGRAD_LAB_GRADING_SECRET or $AUTOGRAD_LAB_GRADING_SECRET_FILE): hidden "
             "inputs come from the public default, which students can reproduce; set one for grades that count "
             "(docs/instructor.md, 'The grading secret')")


def secret_warning() -> str | None:
    """:data:`NO_SECRET` when neither secret variable is set in this process's environment, else None."""
    from autograd_lab.course import checks

    if os.environ.get(checks.SECRET_ENV) or os.environ.get(checks.SECRET_FILE_ENV):
        return None
    return NO_SECRET


def autograde(
    course_dir: Path,
    assignment: str,
    *,
    jobs: int = 1,
    limits: Limits | None = None,
    unsafe: bool = False,
    timeout: float | None = None,
    memory_mb: int | None = None,
) -> list[SubmissionReport]:
    """Autograde every collected submission (``submitted/*/<assignment>``); one report per student, in id order.

    Each submission's answers run in a bubblewrap sandbox that only produces data; a trusted judge decides each
    test and the scores go into nbgrader's gradebook with the autograded notebooks, so ``feedback`` and
    ``grades`` work as before (see :mod:`autograd_lab.course.grading`).

    Args:
        jobs: submissions graded at the same time (each in its own sandbox; at most the number of cores).
        limits: the resource limits; default: the course configuration's (``c.GradingLimits``).
        unsafe: grade without a sandbox when bubblewrap is unavailable; every report then says so.
        timeout, memory_mb: shortcuts overriding ``limits.cell_seconds`` and ``limits.memory_mb``.

    Raises:
        CourseError: if there is no source notebook for ``assignment``, a limit is invalid, the assignment was not
            released into the gradebook, the secret is kept inside the course, or no sandbox is available and
            ``unsafe`` is False.
    """
    from autograd_lab.course.grading.limits import course_limits

    source_notebook(course_dir, assignment)
    try:
        limits = (limits or course_limits(course_dir)).replace(cell_seconds=timeout, memory_mb=memory_mb)
    except ValueError as exc:
        raise CourseError(str(exc)) from exc
    students = sorted(p.parent.name for p in (course_dir / "submitted").glob(f"*/{assignment}") if p.is_dir())
    return [SubmissionReport(outcome.student, assignment, score, max_score, list(outcome.messages))
            for outcome, score, max_score in _grade(course_dir, assignment, students, jobs, limits, unsafe)]


def _grade(course_dir: Path, assignment: str, students: list[str], jobs: int, limits: Limits,
           unsafe: bool) -> list[tuple[Any, float, float]]:
    """The call into the grader: [(outcome with ``.student`` and ``.messages``, score, max score)]; the grader's
    errors become CourseError."""
    from autograd_lab.course.checks import GraderError
    from autograd_lab.course.grading import assemble, batch, record, sandbox
    from autograd_lab.course.grading.stubs import StubError

    try:
        return batch.grade_batch(course_dir, assignment, students, jobs=jobs, limits=limits, unsafe=unsafe)
    except sandbox.SandboxUnavailable as exc:
        raise CourseError(f"no sandbox for grading: {exc}. Install bubblewrap, or pass --unsafe-no-sandbox to "
                          f"grade with the grader's own rights (only for code you trust)") from exc
    except (record.GradebookError, batch.SecretError, assemble.AuthoringError, GraderError, StubError,
            OSError) as exc:
        raise CourseError(str(exc)) from exc
