"""One score and one plain-language message per autograded submission (the leak check is in ``leaks``).

nbgrader records scores in its gradebook and explains failures only in its log. :func:`report_submission`
reads the submitted notebook, the release, the autograded notebook and the gradebook, and says what happened:
malformed JSON, duplicated or deleted cells, edited read-only cells, timeouts, memory errors, a dead kernel,
the own-code check, truncated output, and which tests failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograd_lab.course.preprocessors import grade_id


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


def report_submission(course_dir: Path, student: str, assignment: str, log: str = "") -> SubmissionReport:
    """Score (from the gradebook; 0 when grading did not finish) and messages for one submission."""
    messages = submission_messages(course_dir, student, assignment, log)
    score, max_score = gradebook_score(course_dir, student, assignment)
    if not messages:
        messages.append("all tests passed" if score == max_score else "some tests failed")
    return SubmissionReport(student, assignment, score, max_score, messages)


def expected_notebooks(course_dir: Path, assignment: str) -> list[str]:
    """File names of the notebooks an assignment consists of (from its release, else its source folder)."""
    for stage in ("release", "source"):
        names = sorted(p.name for p in (course_dir / stage / assignment).glob("*.ipynb"))
        if names:
            return names
    return [f"{assignment}.ipynb"]


def submission_messages(course_dir: Path, student: str, assignment: str, log: str = "") -> list[str]:
    """The problems found in one submission (empty when there is nothing to explain), read from the submitted and
    autograded notebooks and the autograde ``log``; a notebook that is missing or misnamed is named."""
    messages: list[str] = []
    release_dir = course_dir / "release" / assignment
    expected = expected_notebooks(course_dir, assignment)
    submitted = sorted((course_dir / "submitted" / student / assignment).glob("*.ipynb"))
    found = [p.name for p in submitted]
    for name in expected:
        if name not in found:
            others = f" (found {', '.join(found)})" if found else ""
            messages.append(f"{name} is missing from the submission{others}; expected {name}, with the released "
                            f"name, so nothing of it was graded and its tests score 0")
    for path in submitted:
        if path.name not in expected:
            messages.append(f"{path.name} is not a notebook of {assignment} (expected {', '.join(expected)}); "
                            f"it was not graded")
            continue
        problems = _submitted_problems(path, release_dir / path.name)
        messages += problems
        graded = course_dir / "autograded" / student / assignment / path.name
        if any("is not valid notebook JSON" in p or "could not be read" in p for p in problems):
            continue  # already explained, and nothing was graded
        if not graded.is_file():
            messages.append(f"{path.name}: {_failure_reason(_student_log(log, student))}; no tests were scored, "
                            f"so the score is 0")
        else:
            messages += _graded_problems(graded)
    return messages


def _student_log(log: str, student: str) -> str:
    """The part of an ``nbgrader autograde`` log about ``student`` (nbgrader starts each with this line)."""
    blocks = re.split(r"(?=\[AutogradeApp \| INFO\] Creating/updating student with ID ')", log)
    mine = [b for b in blocks if b.startswith(f"[AutogradeApp | INFO] Creating/updating student with ID '{student}'")]
    return "".join(mine)


def _failure_reason(log: str) -> str:
    if "Kernel died" in log or "DeadKernelError" in log:
        return "the kernel died while running it (os._exit, a crash, or the operating system killed it)"
    if "NotJSONError" in log or "not appear to be JSON" in log:
        return "the file is not a notebook"
    errors = re.findall(r"^\s*(\w+(?:Error|Exception)\b.*)$", log, flags=re.MULTILINE)
    return f"grading stopped with {errors[-1].strip()[:160]}" if errors else "grading did not finish"


def _submitted_problems(path: Path, release: Path) -> list[str]:
    try:
        nb = nbformat.read(path, as_version=4)
    except (json.JSONDecodeError, nbformat.reader.NotJSONError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        return [f"{path.name} is not valid notebook JSON ({first}); nothing could be graded, so the score is 0"]
    except Exception as exc:  # nbformat raises assorted errors for notebooks it cannot read
        return [f"{path.name} could not be read as a notebook ({type(exc).__name__}: {exc}); the score is 0"]
    problems = []
    ids = [grade_id(cell) for cell in nb.cells]
    for gid in sorted({g for g in ids if g and ids.count(g) > 1}):
        problems.append(f"cell id '{gid}' appears {ids.count(gid)} times; only the last copy was graded and its "
                        f"points count once")
    if release.is_file():
        original = {grade_id(c): c for c in nbformat.read(release, as_version=4).cells if grade_id(c)}
        submitted = {grade_id(c): c for c in nb.cells if grade_id(c)}
        for name, cell in original.items():
            if name not in submitted:
                problems.append(f"cell '{name}' was deleted; it was restored from the release before grading")
            elif cell.metadata.nbgrader.get("locked") and not cell.metadata.nbgrader.get("solution") and (
                submitted[name].source.strip() != cell.source.strip()
            ):
                problems.append(f"read-only cell '{name}' was edited; the original was restored before grading")
    return problems


def _graded_problems(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    problems = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        gid = grade_id(cell) or "an ungraded cell"
        meta = cell.metadata.get("nbgrader", {})
        timed_out = any(o.output_type == "error" and o.ename == "CellTimeoutError" for o in cell.outputs)
        for out in cell.outputs:
            if out.output_type == "error" and not (timed_out and out.ename == "KeyboardInterrupt"):
                what = _explain_error(out.ename, out.evalue)
                if meta.get("grade"):
                    problems.append(f"{gid} ({_points(meta.get('points', 0))}) failed: {what}")
                elif out.ename in ("CellTimeoutError", "MemoryError", "DeadKernelError"):
                    problems.append(f"{gid}: {what}")
            elif out.output_type == "stream" and "output truncated by the autograder" in out.text:
                problems.append(f"{gid}: printed output was too long and was truncated")
    return problems


def _points(points: float) -> str:
    """``1 point``, ``2 points``, ``0.5 points``."""
    return f"{points:g} point" + ("" if float(points) == 1 else "s")


def _explain_error(ename: str, evalue: str) -> str:
    first = evalue.strip().splitlines()[0] if evalue.strip() else ""
    if ename == "CellTimeoutError":
        return "the cell ran past the time limit and was interrupted (an infinite loop?)"
    if ename == "MemoryError":
        return "the cell ran out of the memory allowed to the grader"
    if ename == "NotImplementedError" and not first:
        return "the exercise is not answered yet (NotImplementedError)"
    return f"{ename}: {first}" if first else ename


def gradebook_score(course_dir: Path, student: str, assignment: str) -> tuple[float, float]:
    from nbgrader.api import Gradebook, MissingEntry

    db = course_dir / "gradebook.db"
    with Gradebook(f"sqlite:///{db}") as gb:
        max_score = gb.find_assignment(assignment).max_score
        try:
            submission = gb.find_submission(assignment, student)
        except MissingEntry:
            return 0.0, max_score
        return float(submission.score), float(max_score)

