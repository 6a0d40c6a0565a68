"""The check that feedback shows nothing a student must not see, whatever the student's code printed.

Feedback HTML shows the notebook as graded: the instructor's cells, the student's answer cells and every output.
Three kinds of text must never reach a student through it:

- a **hidden test**: a line found only between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS`` in the
  source notebooks;
- **instructor source**: a line of a solution region (``### BEGIN SOLUTION`` ... ``### END SOLUTION``) that the
  released notebook does not show;
- **another student's work**: a line of another student's answer cells that no instructor notebook holds.

A student may well type a line that one of these also holds (``while stack:``), so the lines of the student's own
*answer sources* are not counted: seeing their own typing is no leak. Outputs are never the student's own: a cell
that prints a hidden test, the instructor's source or a classmate's answer is caught, since that text came from
somewhere else. Lines shorter than a minimum length are not counted (they are not distinctive).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
END_HIDDEN = "### END HIDDEN TESTS"
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
#: Another student's line counts only from this length on: short lines are common idioms.
OTHER_STUDENT_MIN_LENGTH = 20


@dataclass(frozen=True)
class Leak:
    """One line of forbidden text found in a feedback file: ``kind`` is ``"hidden test"``, ``"instructor
    source"`` or ``"another student's work"``; ``origin`` names the other student for the last kind."""

    kind: str
    line: str
    origin: str = ""

    def __str__(self) -> str:
        if self.kind == "hidden test":
            return self.line
        return f"[{self.kind}{' ' + self.origin if self.origin else ''}] {self.line}"


def _regions(source_dir: Path, begin: str, end: str) -> tuple[set[str], set[str]]:
    """(stripped lines inside begin/end regions, stripped lines outside them) over the notebooks in a folder."""
    inside_lines: set[str] = set()
    outside_lines: set[str] = set()
    for path in sorted(source_dir.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            inside = False
            for line in cell.source.splitlines():
                text = line.strip()
                if begin in text:
                    inside = True
                elif end in text:
                    inside = False
                elif text:
                    (inside_lines if inside else outside_lines).add(text)
    return inside_lines, outside_lines


def hidden_test_lines(source_dir: Path, min_length: int = 12) -> list[str]:
    """Lines found only inside hidden-test regions of the notebooks in ``source_dir`` (stripped, at least
    ``min_length`` characters so that they are distinctive): the text that must never reach a student."""
    hidden, visible = _regions(source_dir, BEGIN_HIDDEN, END_HIDDEN)
    return sorted(line for line in hidden - visible if len(line) >= min_length)


def solution_lines(source_dir: Path, release_dir: Path | None = None, min_length: int = 12) -> list[str]:
    """Lines of the solution regions in ``source_dir`` that the release (``release_dir``, when given) does not
    show and that appear nowhere else in the source: the instructor's own answers."""
    solution, elsewhere = _regions(source_dir, BEGIN_SOLUTION, END_SOLUTION)
    shown = set(elsewhere)
    if release_dir is not None and release_dir.is_dir():
        shown |= _all_lines(release_dir.glob("*.ipynb"))
    return sorted(line for line in solution - shown if len(line) >= min_length)


def _all_lines(paths: Iterable[Path]) -> set[str]:
    lines: set[str] = set()
    for path in paths:
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception:  # an unreadable notebook holds no lines
            continue
        for cell in nb.cells:
            lines.update(line.strip() for line in cell.get("source", "").splitlines() if line.strip())
    return lines


def _answer_ids(source_dir: Path) -> set[str]:
    ids: set[str] = set()
    for path in source_dir.glob("*.ipynb"):
        for cell in nbformat.read(path, as_version=4).cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("solution") and not meta.get("grade") and not meta.get("locked"):
                ids.add(meta.get("grade_id"))
    return ids


def student_lines(notebook: Path, answer_ids: set[str] | None = None) -> set[str]:
    """Stripped lines the student typed in ``notebook`` (an autograded or submitted notebook): the *sources* of
    its answer cells (by ``grade_id``: ``answer_ids``, the source notebook's answer cells, when given; otherwise
    the cells marked as answers) and of cells without nbgrader metadata. Outputs are never included: they are
    what the code printed, and that may be anyone's text. Empty if the file is unreadable."""
    try:
        nb = nbformat.read(notebook, as_version=4)
    except Exception:  # an unreadable notebook has nothing to exclude; every line is checked
        return set()
    lines: set[str] = set()
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if answer_ids is not None:
            own = not meta or meta.get("grade_id") in answer_ids
        else:
            own = not (meta.get("locked") or (meta.get("grade") and not meta.get("solution")))
        if own:
            lines.update(line.strip() for line in str(cell.get("source", "")).splitlines() if line.strip())
    return lines


def visible_text(html_text: str) -> str:
    """The text of an HTML page as a reader sees it: tags removed, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", html_text))


def leaked_lines(html_text: str, hidden: Sequence[str], own: Iterable[str] = ()) -> list[str]:
    """The ``hidden`` lines that appear in ``html_text`` (tags removed, entities decoded), except those in
    ``own`` (the student's own lines, see :func:`student_lines`), which the student may have written."""
    text = visible_text(html_text)
    mine = set(own)
    return [line for line in hidden if line not in mine and line in text]


def find_all_leaks(course_dir: Path, assignment: str, files: Sequence[Path]) -> dict[Path, list[Leak]]:
    """{feedback file: leaks} for every file in ``files`` that shows a hidden test, instructor source or another
    student's work (all files are checked).

    ``files`` are ``feedback/<student>/<assignment>/<notebook>.html``. The student's own lines are the answer
    sources of ``autograded/<student>/<assignment>/<notebook>.ipynb`` and ``submitted/...``; other students' work
    is read from the same folders of everyone else.
    """
    source_dir = course_dir / "source" / assignment
    hidden = hidden_test_lines(source_dir)
    solutions = solution_lines(source_dir, course_dir / "release" / assignment)
    instructor_text = _all_lines(source_dir.glob("*.ipynb")) | _all_lines(
        (course_dir / "release" / assignment).glob("*.ipynb"))
    answer_ids = _answer_ids(source_dir)
    own_by_student: dict[str, set[str]] = {}
    students = {p.parent.parent.name for p in files}
    for stage in ("autograded", "submitted"):
        students |= {p.parent.name for p in (course_dir / stage).glob(f"*/{assignment}") if p.is_dir()}
    for student in sorted(students):
        own: set[str] = set()
        for stage in ("autograded", "submitted"):
            for nb_path in sorted((course_dir / stage / student / assignment).glob("*.ipynb")):
                own |= student_lines(nb_path, answer_ids)
        own_by_student[student] = own
    leaks: dict[Path, list[Leak]] = {}
    for path in files:
        student = path.parent.parent.name
        own = own_by_student.get(student, set())
        text = visible_text(path.read_text(encoding="utf-8", errors="replace"))
        found = [Leak("hidden test", line) for line in hidden if line not in own and line in text]
        found += [Leak("instructor source", line) for line in solutions if line not in own and line in text]
        for other, lines in own_by_student.items():
            if other == student:
                continue
            found += [Leak("another student's work", line, other) for line in sorted(lines - own - instructor_text)
                      if len(line) >= OTHER_STUDENT_MIN_LENGTH and line in text]
        if found:
            leaks[path] = found
    return leaks


def find_leaks(course_dir: Path, assignment: str, files: Sequence[Path]) -> dict[Path, list[str]]:
    """{feedback file: leaked lines} as text (see :func:`find_all_leaks`): a hidden-test line as it is, other
    kinds prefixed with their kind, e.g. ``[another student's work bob] for parent in node.parents:``."""
    return {path: [str(leak) for leak in found] for path, found in find_all_leaks(course_dir, assignment,
                                                                                   files).items()}
