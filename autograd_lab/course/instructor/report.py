"""The report of one autograded submission, and the gradebook and release reads around it.

The messages themselves are written by the grader (:mod:`autograd_lab.course.grading`): what it took from the
submission or ignored, and the judge's verdicts.
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
