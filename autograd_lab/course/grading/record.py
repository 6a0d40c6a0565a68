"""Write what the harness decided into nbgrader's world: the autograded notebook and the gradebook.

Only the grader process calls this, one submission at a time (the batch serialises the calls), so parallel
grading never writes the gradebook concurrently. Scores come from the harness's verdicts alone: each graded test
cell gets its points when its verdict passed, else 0; no cell output is read (nbgrader's partial-credit rule
never runs). nbgrader's ``AssignLatePenalties`` still applies the course's late-submission plugin, and the
autograded notebook keeps the source's nbgrader metadata, so ``generate_feedback``, ``formgrader`` and ``export``
work as before.
"""

from __future__ import annotations

import contextlib
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from autograd_lab.course.grading.assemble import ANSWER, TEST, Job


class GradebookError(RuntimeError):
    """The gradebook does not know the assignment (it was never released) or is unusable."""


def write_autograded(course_dir: Path, student: str, job: Job, notebook: NotebookNode) -> Path:
    """Write ``autograded/<student>/<assignment>/<notebook>`` (replacing the folder) and copy timestamp.txt."""
    folder = course_dir / "autograded" / student / job.assignment
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    path = folder / job.notebook
    nbformat.write(notebook, path)
    stamp = course_dir / "submitted" / student / job.assignment / "timestamp.txt"
    if stamp.is_file():
        shutil.copyfile(stamp, folder / "timestamp.txt")
    return path


def clear_autograded(course_dir: Path, student: str, assignment: str) -> None:
    folder = course_dir / "autograded" / student / assignment
    if folder.exists():
        shutil.rmtree(folder)


def _timestamp(course_dir: Path, student: str, assignment: str) -> str | None:
    stamp = course_dir / "submitted" / student / assignment / "timestamp.txt"
    if stamp.is_file():
        text = stamp.read_text(encoding="utf-8", errors="replace").strip()
        return text or None
    return None


@contextlib.contextmanager
def open_gradebook(course_dir: Path) -> Iterator[Any]:
    """nbgrader's Gradebook for ``course_dir/gradebook.db``, opened once for a whole batch (each open costs
    ~0.2 s of schema checks)."""
    from nbgrader.api import Gradebook

    with warnings.catch_warnings(), Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        # nbgrader's update_or_create_submission triggers SQLAlchemy's autoflush warnings (nbgrader 0.9.6).
        warnings.simplefilter("ignore", category=Warning)
        yield gb


def save_scores(course_dir: Path, student: str, job: Job, passed: dict[str, bool], stubs: set[str],
                notebook: NotebookNode | None, gb: Any) -> tuple[float, float]:
    """Record one submission in ``course_dir/gradebook.db``; (its score, the assignment's max score) as stored.

    ``passed`` maps each graded test's grade_id to its verdict; ``stubs`` holds the answer cells left unanswered
    (they get nbgrader's "No response." comment). ``gb`` is the batch's open Gradebook (:func:`open_gradebook`).

    Raises:
        GradebookError: if the gradebook has no such assignment or notebook (run ``course release`` first).
    """
    from nbgrader.api import MissingEntry

    url = f"sqlite:///{course_dir / 'gradebook.db'}"
    notebook_id = Path(job.notebook).stem
    timestamp = _timestamp(course_dir, student, job.assignment)
    try:
        assignment = gb.find_assignment(job.assignment)
    except MissingEntry as exc:
        raise GradebookError(f"the gradebook {course_dir / 'gradebook.db'} has no assignment "
                             f"{job.assignment}; run `autograd-lab course release {job.assignment}` "
                             f"first") from exc
    gb.update_or_create_student(student)
    kwargs = {"timestamp": timestamp} if timestamp else {}
    submission = gb.update_or_create_submission(job.assignment, student, **kwargs)
    # The submission's grade and comment rows in one go (nbgrader's find_grade is one joined query per cell).
    notebooks = [n for n in submission.notebooks if n.name == notebook_id]
    if not notebooks:
        raise GradebookError(f"the gradebook's copy of {job.assignment} has no notebook {notebook_id}; run "
                             f"`autograd-lab course release {job.assignment}` again")
    grades = {g.name: g for g in notebooks[0].grades}
    comments = {c.name: c for c in notebooks[0].comments}
    for cell in job.cells:
        wanted = grades if cell.kind == TEST and cell.points > 0 else comments if cell.kind == ANSWER else None
        if wanted is None or cell.grade_id is None:
            continue
        if cell.grade_id not in wanted:
            raise GradebookError(f"the gradebook's copy of {job.assignment} has no cell '{cell.grade_id}': "
                                 f"the source changed since the release; run `autograd-lab course release "
                                 f"{job.assignment}` again")
        if wanted is grades:
            grade = grades[cell.grade_id]
            grade.auto_score = cell.points if passed.get(cell.grade_id) else 0.0
            grade.needs_manual_grade = grade.manual_score is not None
        else:
            comments[cell.grade_id].auto_comment = "No response." if cell.grade_id in stubs else None
    late = submission.total_seconds_late > 0
    if not late:
        notebooks[0].late_submission_penalty = None
    gb.db.commit()
    result = float(submission.score), float(assignment.max_score)
    if late:  # the course's late-submission plugin decides the penalty, as in nbgrader's own autograde
        _late_penalty(course_dir, student, job, notebook_id, url, notebook)
    return result


def _late_penalty(course_dir: Path, student: str, job: Job, notebook_id: str, url: str,
                  notebook: NotebookNode | None) -> None:
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    resources = {"nbgrader": {"student": student, "assignment": job.assignment, "notebook": notebook_id,
                              "db_url": url}}
    AssignLatePenalties(config=config).preprocess(notebook or nbformat.v4.new_notebook(), resources)
