"""Instructor commands: thin wrappers around the nbgrader command line, run in the course root (``assignments/``).

Each step is one nbgrader call plus the checks nbgrader leaves out:

- :func:`release`: ``generate_assignment`` for each assignment, then copy the student notebooks to ``notebooks/``.
- :func:`collect`: copy submissions laid out as ``students/<id>/<assignment>/*.ipynb`` (a folder or a zip) into
  ``submitted/``, refusing a malformed layout (or a notebook renamed from its released name) with an error that
  names the bad entry and what was expected.
- :func:`autograde`: each submission graded in its own bubblewrap sandbox (:mod:`autograd_lab.course.grading`),
  ``--jobs N`` at a time; scores from the harness's verdicts go into nbgrader's gradebook; one score and message
  per submission.
- :func:`feedback`: ``generate_feedback``, then a check that no hidden-test line appears in any feedback file
  (every file is checked, and all offending files are named).
- :func:`export_grades`: ``export`` to a CSV file.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from autograd_lab.course.diagnose import SubmissionReport, expected_notebooks
from autograd_lab.course.grading.limits import Limits
from autograd_lab.course.leaks import find_leaks

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SUCCESS = "Success!"


class CourseError(RuntimeError):
    """An instructor command could not do its job; the message says what and where."""


def run_nbgrader(
    course_dir: Path, *args: str, check: bool = True, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``nbgrader ARGS`` in ``course_dir`` with this interpreter; raise CourseError on failure if ``check``."""
    env = dict(os.environ, **(env_extra or {}))
    # nbgrader runs its database migrations through the `alembic` script next to the interpreter.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course_dir, env=env, capture_output=True, text=True
    )
    if check and proc.returncode != 0:
        raise CourseError(f"`nbgrader {' '.join(args)}` failed in {course_dir} (exit {proc.returncode}):\n"
                          f"{_tail(proc.stdout + proc.stderr)}")
    return proc


def assignments(course_dir: Path) -> list[str]:
    """The assignment ids under ``course_dir/source``, sorted."""
    source = course_dir / "source"
    if not source.is_dir():
        raise CourseError(f"no source/ folder in the course directory {course_dir}")
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))


def release(course_dir: Path, notebooks_dir: Path, which: Sequence[str] = ()) -> list[Path]:
    """Generate the student version of each assignment and copy it flat to ``notebooks_dir/<assignment>.ipynb``.

    Runs nbgrader's ``generate_assignment`` in this process (one process for the whole course is ~10x faster than
    one ``nbgrader`` call per assignment); the release also stays in ``course_dir/release`` for nbgrader's exchange.
    Returns the written notebook paths.

    Raises:
        CourseError: if an assignment does not hold its notebook ``<assignment>.ipynb``, or nbgrader fails.
    """
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    names = list(which or assignments(course_dir))
    for name in names:
        if not (course_dir / "source" / name / f"{name}.ipynb").is_file():
            raise CourseError(f"assignment {name}: expected the notebook source/{name}/{name}.ipynb in {course_dir}")
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    notebooks_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with _tools_on_path():
        api = NbGraderAPI(config=config)
        for name in names:
            result = api.generate_assignment(name, force=True)
            if not result["success"]:
                raise CourseError(f"generate_assignment {name} failed:\n{_tail(result['log'] + result['error'])}")
            dest = notebooks_dir / f"{name}.ipynb"
            shutil.copyfile(course_dir / "release" / name / f"{name}.ipynb", dest)
            written.append(dest)
    return written


@contextlib.contextmanager
def _tools_on_path() -> Iterator[None]:
    """Put this interpreter's scripts folder first on PATH (nbgrader runs `alembic` from there)."""
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + old
    try:
        yield
    finally:
        os.environ["PATH"] = old


def validate(path: Path, invert: bool = False) -> tuple[bool, str]:
    """Run ``nbgrader validate`` on one notebook and read its verdict (the command exits 0 either way).

    Returns (passed, output): for ``invert=False`` passed means every test passes; for ``invert=True`` it means
    every test fails.
    """
    args = ["validate", str(path.resolve())] + (["--invert"] if invert else [])
    proc = run_nbgrader(path.parent, *args, check=False)
    out = proc.stdout + proc.stderr
    return _SUCCESS in proc.stdout, out


def collect(course_dir: Path, source: Path, which: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Copy submissions from a folder or zip laid out as ``students/<id>/<assignment>/<notebook>.ipynb``.

    Existing ``submitted/<id>/<assignment>`` folders are replaced. Returns the (student, assignment) pairs.

    Raises:
        CourseError: naming the first entry that breaks the layout (wrong depth, not .ipynb, unsafe path,
            invalid student id, unknown assignment, a notebook not named like the released one, e.g.
            ``03_engine.ipynb``), or an unreadable zip.
    """
    known = set(assignments(course_dir))
    with tempfile.TemporaryDirectory() as tmp:
        if source.is_file():
            root = Path(tmp)
            _extract_zip(source, root)
        elif source.is_dir():
            root = source
        else:
            raise CourseError(f"no submissions at {source}: expected a folder or a .zip file")
        pairs = _scan_layout(root, source, known, set(which), course_dir)
        for student, assignment in pairs:
            dest = course_dir / "submitted" / student / assignment
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(root / "students" / student / assignment, dest)
    return pairs


def _extract_zip(path: Path, dest: Path) -> None:
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


def _scan_layout(
    root: Path, shown: Path, known: set[str], which: set[str], course_dir: Path
) -> list[tuple[str, str]]:
    expected = "students/<student_id>/<assignment>/<notebook>.ipynb"
    students = root / "students"
    if not students.is_dir():
        raise CourseError(f"{shown}: no top-level 'students/' folder; expected {expected}")
    pairs = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_dir() or any(p in (".ipynb_checkpoints", "__MACOSX") for p in rel.parts):
            continue
        parts = rel.parts
        if len(parts) != 4 or parts[0] != "students" or path.suffix != ".ipynb":
            raise CourseError(f"bad entry '{rel.as_posix()}' in {shown}: expected {expected}")
        student, assignment = parts[1], parts[2]
        if not _ID.match(student):
            raise CourseError(f"bad entry '{rel.as_posix()}' in {shown}: student id '{student}' may only hold "
                              f"letters, digits, '_', '.', '-'")
        if assignment not in known:
            raise CourseError(f"bad entry '{rel.as_posix()}' in {shown}: unknown assignment '{assignment}' "
                              f"(known: {', '.join(sorted(known))})")
        expected_names = expected_notebooks(course_dir, assignment)
        if parts[3] not in expected_names:
            raise CourseError(f"bad entry '{rel.as_posix()}' in {shown}: expected {' or '.join(expected_names)} "
                              f"(the released notebook name; the grader finds a notebook only by that name)")
        if (not which or assignment in which) and (student, assignment) not in pairs:
            pairs.append((student, assignment))
    if not pairs:
        raise CourseError(f"{shown}: no submissions found; expected {expected}")
    return pairs


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
    """Autograde every submission of ``assignment``, each in its own sandbox; one report per student.

    Each submission's answer cells are taken into the instructor's source notebook and run by the harness in
    bubblewrap (see :mod:`autograd_lab.course.grading`); the verdicts alone decide the scores, which are written
    to nbgrader's gradebook with the autograded notebooks (so ``feedback`` and ``grades`` work as before).

    Args:
        jobs: submissions graded at the same time (each in its own sandbox; at most the number of cores).
        limits: the resource limits; default: the course configuration's (``c.GradingLimits``).
        unsafe: grade without a sandbox when bubblewrap is unavailable; every report then says so.
        timeout, memory_mb: shortcuts overriding ``limits.cell_seconds`` and ``limits.memory_mb``.

    The batch always completes; a submission that breaks, stalls or hits a limit keeps the points of the tests
    decided before that, and its report says why.

    Raises:
        CourseError: if there is no source notebook for ``assignment``, it was not released into the gradebook,
            or no sandbox is available and ``unsafe`` is False.
    """
    from autograd_lab.course.checks import GraderError
    from autograd_lab.course.grading import assemble, batch, record, sandbox
    from autograd_lab.course.grading.limits import course_limits
    from autograd_lab.course.grading.stubs import StubError

    if not (course_dir / "source" / assignment / f"{assignment}.ipynb").is_file():
        raise CourseError(f"assignment {assignment}: expected the notebook source/{assignment}/{assignment}.ipynb "
                          f"in {course_dir}")
    try:
        limits = (limits or course_limits(course_dir)).replace(cell_seconds=timeout, memory_mb=memory_mb)
    except ValueError as exc:
        raise CourseError(str(exc)) from exc
    submitted = course_dir / "submitted"
    students = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}") if p.is_dir())
    try:
        outcomes = batch.grade_batch(course_dir, assignment, students, jobs=jobs, limits=limits, unsafe=unsafe)
    except sandbox.SandboxUnavailable as exc:
        raise CourseError(f"no sandbox for grading: {exc}. Install bubblewrap, or pass --unsafe-no-sandbox to "
                          f"grade with the grader's own rights (only for code you trust)") from exc
    except (record.GradebookError, batch.SecretError, assemble.AuthoringError, GraderError, StubError,
            OSError) as exc:
        raise CourseError(str(exc)) from exc
    reports = []
    for outcome, score, max_score in outcomes:
        reports.append(SubmissionReport(outcome.student, assignment, score, max_score, outcome.messages))
    return reports


def feedback(course_dir: Path, assignment: str) -> list[Path]:
    """Generate feedback HTML and prove it holds no hidden test; returns the feedback files.

    Raises:
        CourseError: listing every feedback file that shows a line of a hidden test from the source notebook
            (lines the student wrote in their own cells are not counted, see :mod:`autograd_lab.course.leaks`).
    """
    run_nbgrader(course_dir, "generate_feedback", assignment, "--force")
    files = sorted((course_dir / "feedback").glob(f"*/{assignment}/*.html"))
    leaks = find_leaks(course_dir, assignment, files)
    if leaks:
        raise CourseError(f"hidden tests leaked into {len(leaks)} of {len(files)} feedback files:\n" + "\n".join(
            f"  {path}: {lines[0]!r}" + (f" and {len(lines) - 1} more lines" if len(lines) > 1 else "")
            for path, lines in leaks.items()))
    return files


def export_grades(course_dir: Path, csv_path: Path) -> Path:
    """Export the gradebook to ``csv_path`` (one row per student and assignment) and return the path."""
    run_nbgrader(course_dir, "export", f"--to={csv_path.resolve()}")
    return csv_path


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def validate_notebooks(course_dir: Path, paths: Sequence[Path], invert: bool = False) -> dict[Path, dict]:
    """nbgrader's Validator, in this process, with the course configuration: {notebook: problems}.

    An empty dict for a notebook means it passed: every test passes (or with ``invert``, every test fails).
    Otherwise the keys say what went wrong: 'failed' / 'passed' (cells with their source and error), 'changed'
    (locked cells whose checksum changed), 'type_changed'. One process for all notebooks saves the startup cost
    of one ``nbgrader validate`` call each (whose exit status is 0 either way).
    """
    from nbgrader.validator import Validator
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()
    config.Validator.invert = invert
    validator = Validator(config=config)
    return {path: validator.validate(str(path)) for path in paths}
