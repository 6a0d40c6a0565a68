"""The report of one autograded submission and the gradebook reads around it.

The messages themselves are made by the sandboxed grader (:mod:`autograd_lab.course.grading.batch`) from what it
assembled, ignored or refused and from the harness's verdicts; nbgrader's log is no longer read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SubmissionReport:
    """The outcome of autograding one student's assignment. ``score``/``max_score`` are points."""

    student: str
    assignment: str
    score: float
    max_score: float
    messages: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.student:<16} {self.assignment:<28} {self.score:g}/{self.max_score:g}  " + "; ".join(
            self.messages
        )


def expected_notebooks(course_dir: Path, assignment: str) -> list[str]:
    """File names of the notebooks an assignment consists of (from its release, else its source folder)."""
    for stage in ("release", "source"):
        names = sorted(p.name for p in (course_dir / stage / assignment).glob("*.ipynb"))
        if names:
            return names
    return [f"{assignment}.ipynb"]


def gradebook_score(course_dir: Path, student: str, assignment: str) -> tuple[float, float]:
    """(score, max score) of a submission as nbgrader's gradebook holds them; (0, max) when it has none."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course_dir / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:
        max_score = gb.find_assignment(assignment).max_score
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return 0.0, max_score
        return float(submission.score), float(max_score)

