"""``course feedback``: nbgrader's ``generate_feedback``, then the leak check of every feedback file.

The check (:mod:`autograd_lab.course.instructor.leaks`) lists every hidden-test line a feedback file shows with its
file and cell. The instructor reads them and either fixes the cause or accepts the file (``--accept PATH``): an
accepted file's lines are still listed, as accepted, and do not fail the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograd_lab.course.instructor.course_root import CourseError, run_nbgrader
from autograd_lab.course.instructor.leaks import Leak, check_feedback


@dataclass
class Feedback:
    """The feedback files written, and the leaks found in files the instructor accepted."""

    files: list[Path] = field(default_factory=list)
    accepted: list[Leak] = field(default_factory=list)


def feedback(course_dir: Path, assignment: str, accept: Sequence[Path] = ()) -> Feedback:
    """Generate feedback HTML for ``assignment`` and check it for hidden-test lines.

    Args:
        accept: feedback files the instructor has read and accepts although they show hidden lines.

    Raises:
        CourseError: listing every hidden line in a file not accepted, as ``file: cell N (grade_id): line``; or
            naming an ``accept`` path that is not a feedback file of this assignment; or when nbgrader fails.
    """
    run_nbgrader(course_dir, "generate_feedback", assignment, "--force")
    files = sorted((course_dir / "feedback").glob(f"*/{assignment}/*.html"))
    accepted = {p.resolve() for p in accept}
    strangers = sorted(str(p) for p in accepted - {f.resolve() for f in files})
    if strangers:
        raise CourseError(f"--accept names no feedback file of {assignment}: {', '.join(strangers)}")
    try:
        leaks = check_feedback(course_dir, assignment, files)
    except FileNotFoundError as exc:
        raise CourseError(str(exc)) from exc
    refused = [leak for leak in leaks if leak.path.resolve() not in accepted]
    if refused:
        paths = sorted({leak.path for leak in refused})
        raise CourseError(
            f"{len(refused)} hidden-test line(s) in {len(paths)} of {len(files)} feedback files; do not send these "
            f"files. Fix the cause, or read a file and pass --accept FILE if it reveals nothing:\n"
            + "\n".join(f"  {leak}" for leak in refused))
    return Feedback(files, [leak for leak in leaks if leak.path.resolve() in accepted])
