"""Write the grader's verdicts into nbgrader's world: the autograded notebook and the gradebook.

Only the grader process calls this, one submission at a time (the batch serialises the calls), so parallel
grading never writes the gradebook concurrently. Scores come from the verdicts alone (visible part ran, judge
accepted): each graded test cell gets its points when it passed, else 0; no cell output is read (nbgrader's
partial-credit rule never runs). nbgrader's ``AssignLatePenalties`` still applies the course's late-submission
plugin, and the autograded notebook keeps the source's nbgrader metadata, so ``generate_feedback``,
``formgrader`` and ``export`` work as before.
"""

from __future__ import annotations

import contextlib
import shutil
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
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


@dataclass(frozen=True)
class _NotebookCells:
    """The ids of one released notebook's rows: the notebook and its cells by name (nbgrader's schema)."""

    id: str
    graded: dict[str, str]
    solution: dict[str, str]
    task: dict[str, str]

    @property
    def grade_ids(self) -> dict[str, str]:
        """Cells that get a Grade row: graded cells and task cells."""
        return {**self.graded, **self.task}

    @property
    def comment_ids(self) -> dict[str, str]:
        """Cells that get a Comment row: solution cells and task cells."""
        return {**self.solution, **self.task}


class GradebookWriter:
    """Writes one assignment's results for a batch into an open gradebook, one transaction per submission.

    The assignment's structure (its notebooks, the ids of their graded, solution and task cells, its due date and
    max score) is read once, when the writer is made; each :meth:`save` is then a few indexed SQL statements on
    nbgrader's tables and one commit: ~2-7 ms of CPU, where nbgrader's ``update_or_create_student`` /
    ``update_or_create_submission`` / ``find_grade`` path (a commit each, an ORM load per cell) took ~20-55 ms, all
    of it in the grader's one serial thread. The rows are the ones nbgrader's ``Gradebook.add_submission`` makes: a
    submission mirrors every notebook of the assignment, with a Grade per graded or task cell and a Comment per
    solution or task cell; the score is read back through nbgrader's own ``SubmittedAssignment.score``.
    tests/course/test_grading_record.py compares every row with what nbgrader's API writes.

    Raises:
        GradebookError: if the gradebook has no such assignment (run ``course release`` first).
    """

    def __init__(self, gb: Any, course_dir: Path, assignment: str) -> None:
        from nbgrader.api import MissingEntry

        self.gb = gb
        self.course_dir = course_dir
        self.assignment = assignment
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry as exc:
            raise GradebookError(f"the gradebook {course_dir / 'gradebook.db'} has no assignment {assignment}; run "
                                 f"`autograd-lab course release {assignment}` first") from exc
        self.assignment_id: str = found.id
        self.max_score = float(found.max_score)
        self.duedate = found.duedate
        self.notebooks = {nb.name: _NotebookCells(nb.id, {c.name: c.id for c in nb.grade_cells},
                                                  {c.name: c.id for c in nb.solution_cells},
                                                  {c.name: c.id for c in nb.task_cells}) for nb in found.notebooks}

    def save(self, student: str, job: Job, passed: dict[str, bool], stubs: set[str],
             notebook: NotebookNode | None) -> tuple[float, float]:
        """Record one submission; (its score, the assignment's max score) as stored.

        ``passed`` maps each graded test's grade_id to its verdict; ``stubs`` holds the answer cells left
        unanswered (they get nbgrader's "No response." comment).

        Raises:
            GradebookError: if the gradebook's copy of the assignment lacks the notebook or one of its cells (the
                source changed since the release).
        """
        from nbgrader import utils
        from nbgrader.api import Comment, Grade, Student, SubmittedAssignment, SubmittedNotebook, new_uuid
        from sqlalchemy import bindparam, insert, select, update

        notebook_id = Path(job.notebook).stem
        if notebook_id not in self.notebooks:
            raise GradebookError(f"the gradebook's copy of {job.assignment} has no notebook {notebook_id}; run "
                                 f"`autograd-lab course release {job.assignment}` again")
        cells = self.notebooks[notebook_id]
        scores: dict[str, float] = {}  # grade cell id -> auto score
        notes: dict[str, str | None] = {}  # solution cell id -> auto comment
        for cell in job.cells:
            graded = cell.kind == TEST and cell.points > 0
            if not (graded or cell.kind == ANSWER) or cell.grade_id is None:
                continue
            ids = cells.grade_ids if graded else cells.comment_ids
            if cell.grade_id not in ids:
                raise GradebookError(f"the gradebook's copy of {job.assignment} has no cell '{cell.grade_id}': the "
                                     f"source changed since the release; run `autograd-lab course release "
                                     f"{job.assignment}` again")
            if graded:
                scores[ids[cell.grade_id]] = cell.points if passed.get(cell.grade_id) else 0.0
            else:
                notes[ids[cell.grade_id]] = "No response." if cell.grade_id in stubs else None
        text = _timestamp(self.course_dir, student, job.assignment)
        stamp = utils.parse_utc(text) if text else None
        grade, comment, submitted = Grade.__table__, Comment.__table__, SubmittedAssignment.__table__
        db = self.gb.db
        try:
            if db.execute(select(Student.id).where(Student.id == student)).first() is None:
                db.execute(insert(Student.__table__).values(id=student))
            row = db.execute(select(submitted.c.id, submitted.c.timestamp, submitted.c.extension).where(
                submitted.c.assignment_id == self.assignment_id, submitted.c.student_id == student)).first()
            if row is None:
                submission_id, extension = new_uuid(), None
                db.execute(insert(submitted).values(id=submission_id, assignment_id=self.assignment_id,
                                                    student_id=student, timestamp=stamp))
                for nb in self.notebooks.values():
                    mirror = new_uuid()
                    db.execute(insert(SubmittedNotebook.__table__).values(id=mirror, assignment_id=submission_id,
                                                                          notebook_id=nb.id))
                    for table, ids in ((grade, nb.grade_ids), (comment, nb.comment_ids)):
                        if ids:
                            db.execute(insert(table), [{"id": new_uuid(), "cell_id": cid, "notebook_id": mirror}
                                                       for cid in ids.values()])
            else:
                submission_id, old_stamp, extension = row
                if stamp is not None:
                    db.execute(update(submitted).where(submitted.c.id == submission_id).values(timestamp=stamp))
                else:
                    stamp = old_stamp
            mine = db.execute(select(SubmittedNotebook.id).where(
                SubmittedNotebook.assignment_id == submission_id, SubmittedNotebook.notebook_id == cells.id)
            ).scalar_one()
            if scores:
                db.execute(update(grade).where(grade.c.notebook_id == mine, grade.c.cell_id == bindparam("cell"))
                           .values(auto_score=bindparam("score"), needs_manual_grade=grade.c.manual_score.is_not(None)),
                           [{"cell": cid, "score": value} for cid, value in scores.items()])
            if notes:
                db.execute(update(comment).where(comment.c.notebook_id == mine, comment.c.cell_id == bindparam("cell"))
                           .values(auto_comment=bindparam("note")),
                           [{"cell": cid, "note": value} for cid, value in notes.items()])
            due = self.duedate + extension if self.duedate is not None and extension is not None else self.duedate
            late = stamp is not None and due is not None and stamp > due  # nbgrader's total_seconds_late > 0
            if not late:
                db.execute(update(SubmittedNotebook.__table__).where(SubmittedNotebook.id == mine)
                           .values(late_submission_penalty=None))
            db.commit()
        except BaseException:
            db.rollback()
            raise
        score = db.execute(select(SubmittedAssignment.score).where(SubmittedAssignment.id == submission_id)).scalar()
        result = float(score), self.max_score
        if late:  # the course's late-submission plugin decides the penalty, as in nbgrader's own autograde
            _late_penalty(self.course_dir, student, job, notebook_id, f"sqlite:///{self.course_dir / 'gradebook.db'}",
                          notebook)
        db.expire_all()  # rows changed behind the session's back (these statements, the plugin's own gradebook)
        return result


def save_scores(course_dir: Path, student: str, job: Job, passed: dict[str, bool], stubs: set[str],
                notebook: NotebookNode | None, gb: Any) -> tuple[float, float]:
    """Record one submission in ``course_dir/gradebook.db`` (a one-off :class:`GradebookWriter`); (its score, the
    assignment's max score) as stored. A batch makes one writer and calls :meth:`GradebookWriter.save` instead.

    Raises:
        GradebookError: if the gradebook has no such assignment, notebook or cell (run ``course release`` first).
    """
    return GradebookWriter(gb, course_dir, job.assignment).save(student, job, passed, stubs, notebook)


def _late_penalty(course_dir: Path, student: str, job: Job, notebook_id: str, url: str,
                  notebook: NotebookNode | None) -> None:
    from nbgrader.preprocessors import AssignLatePenalties
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    resources = {"nbgrader": {"student": student, "assignment": job.assignment, "notebook": notebook_id,
                              "db_url": url}}
    AssignLatePenalties(config=config).preprocess(notebook or nbformat.v4.new_notebook(), resources)
