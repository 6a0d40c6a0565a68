"""``course collect``: take a class's submissions into the course's ``submitted/`` folder, as nbgrader's collect does.

The input is a folder or a zip laid out ``students/<id>/<assignment>/<notebook>.ipynb``, optionally with nbgrader's
``timestamp.txt`` beside the notebook. For each submission this:

- refuses a malformed layout (wrong depth, not ``.ipynb``, unsafe path, invalid id, unknown assignment, a notebook
  not named as released) before anything is copied, naming the bad entry and what was expected;
- records when it was submitted in ``submitted/<id>/<assignment>/timestamp.txt`` (nbgrader's file and format), so
  the grader applies the course's late penalties: from the ``timestamp.txt`` given, else from the notebook's
  modification time (a file's mtime, a zip entry's date, read as this machine's local time as zip stores it);
- converts an nbformat 3 notebook to nbformat 4 (``nbformat.convert``), since nbgrader reads version 4 only;
- warns about ids that are not in the class list (the gradebook's students, ``nbgrader db student add/import``)
  and about an assignment without a due date (``nbgrader db assignment add ID --duedate=...``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograd_lab.course.instructor.course_root import CourseError, assignments, tools_on_path
from autograd_lab.course.instructor.report import expected_notebooks

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_LAYOUT = "students/<student_id>/<assignment>/<notebook>.ipynb"
TIMESTAMP_FILE = "timestamp.txt"
#: nbgrader's ``Exchange.timestamp_format`` with its default time zone, UTC.
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f UTC"


@dataclass(frozen=True)
class Submission:
    """One collected submission. ``submitted_at`` is UTC (naive, as nbgrader stores it); ``time_from`` says where
    it came from (``"timestamp.txt"`` or ``"file time"``); ``converted`` is True for an nbformat 3 notebook."""

    student: str
    assignment: str
    submitted_at: dt.datetime
    time_from: str
    converted: bool = False

    def __str__(self) -> str:
        note = ", converted from nbformat 3" if self.converted else ""
        return (f"collected {self.student}/{self.assignment} (submitted {self.submitted_at:%Y-%m-%d %H:%M:%S} UTC, "
                f"from its {self.time_from}{note})")


@dataclass
class Collection:
    """What :func:`collect` did: the submissions in (student, assignment) order, and warnings for the instructor."""

    submissions: list[Submission] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def collect(course_dir: Path, source: Path, which: Sequence[str] = ()) -> Collection:
    """Copy submissions from the folder or zip ``source`` into ``course_dir/submitted`` (only the assignments in
    ``which``, when given). Existing ``submitted/<id>/<assignment>`` folders are replaced.

    Raises:
        CourseError: naming the first entry that breaks the layout (wrong depth, not .ipynb or timestamp.txt,
            unsafe path, invalid student id, unknown assignment, a notebook not named like the released one,
            e.g. ``03_engine.ipynb``, an unreadable timestamp.txt), or an unreadable zip. Nothing is copied then.
    """
    known = set(assignments(course_dir))
    with tempfile.TemporaryDirectory() as tmp:
        if source.is_file():
            root = Path(tmp)
            file_times = _extract_zip(source, root)
        elif source.is_dir():
            root = source
            file_times = {}
        else:
            raise CourseError(f"no submissions at {source}: expected a folder or a .zip file")
        found = _scan_layout(root, source, known, set(which), course_dir)
        collection = Collection()
        for student, assignment, notebook in found:
            rel = notebook.relative_to(root).as_posix()
            stamp = notebook.parent / TIMESTAMP_FILE
            if stamp.is_file():
                shown = f"{rel.rsplit('/', 1)[0]}/{TIMESTAMP_FILE}"
                when, origin = _read_timestamp(stamp, shown, source), TIMESTAMP_FILE
            else:
                when = file_times.get(rel) or _utc(dt.datetime.fromtimestamp(notebook.stat().st_mtime, dt.timezone.utc))
                origin = "file time"
            collection.submissions.append(Submission(student, assignment, when, origin, _is_nbformat3(notebook)))
        for sub, (_, _, notebook) in zip(collection.submissions, found):
            _store(course_dir, sub, notebook)
    collection.warnings = class_list_warnings(course_dir, collection.submissions)
    return collection


def _extract_zip(path: Path, dest: Path) -> dict[str, dt.datetime]:
    """Extract ``path`` into ``dest``; {entry name: its date as UTC} (zip dates are local time, without zone)."""
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise CourseError(f"{path} is not a readable zip file: {exc}") from exc
    with archive:
        for info in archive.infolist():
            parts = Path(info.filename).parts
            if info.filename.startswith("/") or ".." in parts:
                raise CourseError(f"bad entry '{info.filename}' in {path}: absolute or '..' paths are refused")
        archive.extractall(dest)
        return {info.filename: _utc(dt.datetime(*info.date_time).astimezone(dt.timezone.utc))
                for info in archive.infolist() if not info.is_dir()}


def _utc(moment: dt.datetime) -> dt.datetime:
    return moment.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _read_timestamp(path: Path, shown: str, source: Path) -> dt.datetime:
    """A timestamp.txt as naive UTC: ``date time zone`` with a zone name (``UTC``, ``Europe/Berlin``) as nbgrader
    reads it (``nbgrader.utils.parse_utc``), or with a ``+HHMM`` offset, which parse_utc would take for seconds."""
    from nbgrader.utils import parse_utc

    text = path.read_text(encoding="utf-8", errors="replace").strip()
    parts = text.split(" ")
    try:
        if not text:
            raise ValueError("it is empty")
        if len(parts) == 3 and re.fullmatch(r"[+-]\d{4}", parts[2]):
            offset = dt.timedelta(hours=int(parts[2][1:3]), minutes=int(parts[2][3:]))
            return parse_utc(" ".join(parts[:2])) - (offset if parts[2][0] == "+" else -offset)
        if len(parts) == 3:
            _zone(parts[2])
        return parse_utc(text)
    except (ValueError, OverflowError) as exc:
        raise CourseError(f"bad entry '{shown}' in {source}: {text[:60]!r} is not a time nbgrader can read "
                          f"({exc}); expected e.g. '2026-12-01 17:59:00 UTC'") from exc


def _zone(name: str) -> None:
    """Raise ValueError unless ``name`` is a time zone of the system's database (nbgrader would read an unknown
    name as UTC)."""
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name!r}") from None


def _is_nbformat3(notebook: Path) -> bool:
    try:
        data = json.loads(notebook.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False  # not JSON: copied as it is, the grader reports it
    return isinstance(data, dict) and data.get("nbformat") == 3


def _store(course_dir: Path, sub: Submission, notebook: Path) -> None:
    dest = course_dir / "submitted" / sub.student / sub.assignment
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if sub.converted:
        old = nbformat.reads(notebook.read_text(encoding="utf-8"), as_version=nbformat.NO_CONVERT)
        nbformat.write(nbformat.convert(old, 4), dest / notebook.name)
    else:
        shutil.copyfile(notebook, dest / notebook.name)
    (dest / TIMESTAMP_FILE).write_text(sub.submitted_at.strftime(TIMESTAMP_FORMAT), encoding="utf-8")


def _scan_layout(root: Path, shown: Path, known: set[str], which: set[str],
                 course_dir: Path) -> list[tuple[str, str, Path]]:
    """[(student, assignment, notebook path)] in path order, or CourseError at the first entry off the layout."""
    if not (root / "students").is_dir():
        raise CourseError(f"{shown}: no top-level 'students/' folder; expected {_LAYOUT}")
    found = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or any(p in (".ipynb_checkpoints", "__MACOSX") for p in rel.parts):
            continue
        parts = rel.parts
        bad = f"bad entry '{rel.as_posix()}' in {shown}"
        if len(parts) != 4 or parts[0] != "students" or (path.suffix != ".ipynb" and parts[3] != TIMESTAMP_FILE):
            raise CourseError(f"{bad}: expected {_LAYOUT} (and optionally {TIMESTAMP_FILE} beside it)")
        student, assignment = parts[1], parts[2]
        if not _ID.match(student):
            raise CourseError(f"{bad}: student id '{student}' may only hold letters, digits, '_', '.', '-'")
        if assignment not in known:
            raise CourseError(f"{bad}: unknown assignment '{assignment}' (known: {', '.join(sorted(known))})")
        if parts[3] == TIMESTAMP_FILE:
            continue
        names = expected_notebooks(course_dir, assignment)
        if parts[3] not in names:
            raise CourseError(f"{bad}: expected {' or '.join(names)} (the released notebook name; the grader finds "
                              f"a notebook only by that name)")
        if not which or assignment in which:
            found.append((student, assignment, path))
    if not found:
        raise CourseError(f"{shown}: no submissions found; expected {_LAYOUT}")
    return found


def class_list_warnings(course_dir: Path, submissions: Sequence[Submission]) -> list[str]:
    """Warnings about ``submissions`` against the gradebook: ids not in the class list, assignments without a due
    date, late submissions. Reads ``course_dir/gradebook.db`` without creating it."""
    from nbgrader.api import Gradebook, MissingEntry

    db = course_dir / "gradebook.db"
    if not db.is_file():
        return [f"no gradebook at {db} yet, so no class list to check the student ids against and no due dates: "
                f"add them first (docs/instructor.md, section 2a)"]
    warnings = []
    with tools_on_path(), Gradebook(f"sqlite:///{db}") as gb:
        roster = {s.id for s in gb.students}
        unknown = sorted({s.student for s in submissions} - roster)
        if not roster:
            warnings.append("the class list is empty (nbgrader db student import students.csv): no student id "
                            "could be checked")
        elif unknown:
            warnings.append(f"not in the class list: {', '.join(unknown)} (a typo in a folder name, or a student "
                            f"to add with 'nbgrader db student add ID')")
        for assignment in sorted({s.assignment for s in submissions}):
            try:
                due = gb.find_assignment(assignment).duedate
            except MissingEntry:
                due = None
            if due is None:
                warnings.append(f"{assignment} has no due date, so no late penalty applies (nbgrader db assignment "
                                f"add {assignment} --duedate='YYYY-MM-DD HH:MM:SS UTC')")
                continue
            late = [f"{s.student} ({_late_by(s.submitted_at - due)})" for s in submissions
                    if s.assignment == assignment and s.submitted_at > due]
            if late:
                warnings.append(f"{assignment} was due {due:%Y-%m-%d %H:%M} UTC; late: {', '.join(late)}")
    return warnings


def _late_by(delta: dt.timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:.1f} h late" if hours < 48 else f"{hours / 24:.1f} days late"
