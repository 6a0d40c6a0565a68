"""``autograd-lab course <step>``: the learner's and the instructor's course commands.

Learners: ``setup`` (copy the release into a git-ignored workspace, never overwriting) and ``progress`` (which
exercises pass their visible tests). Instructors, wrapping nbgrader in the course root ``assignments/``:
``release``, ``collect``, ``autograde``, ``feedback``, ``grades``, ``similarity``. See docs/student.md and
docs/instructor.md.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``course`` subcommand (with its own steps) to ``subparsers``."""
    p = subparsers.add_parser("course", help="course notebooks: workspace, progress, and nbgrader steps",
                              description=__doc__.split("\n\n", 1)[1])
    steps = p.add_subparsers(title="steps", dest="step", metavar="<step>")
    p.set_defaults(func=lambda args: (p.print_help(sys.stderr), 2)[1])

    s = steps.add_parser("setup", help="copy the released notebooks into your workspace (never overwrites)")
    s.add_argument("workspace", nargs="?", type=Path, default=Path("workspace"),
                   help="folder to work in (default: workspace/, ignored by git)")
    s.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="the release (default: notebooks/)")
    s.set_defaults(func=_setup)

    s = steps.add_parser("progress", help="run your workspace notebooks and show which visible tests pass")
    s.add_argument("notebooks", nargs="*", help="only these notebooks (file names or stems)")
    s.add_argument("--workspace", type=Path, default=Path("workspace"), help="default: workspace/")
    s.add_argument("--timeout", type=int, default=60, help="seconds allowed per cell (default: 60)")
    s.add_argument("-v", "--verbose", action="store_true", help="list each failing test and its error")
    s.set_defaults(func=_progress)

    def course_dir_option(q: argparse.ArgumentParser) -> None:
        q.add_argument("--course-dir", type=Path, default=Path("assignments"),
                       help="the nbgrader course root holding nbgrader_config.py (default: assignments/)")

    s = steps.add_parser("release", help="generate the student notebooks (nbgrader) into notebooks/")
    s.add_argument("assignments", nargs="*", help="assignment ids (default: all under source/)")
    s.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="output folder (default: notebooks/)")
    course_dir_option(s)
    s.set_defaults(func=_release)

    s = steps.add_parser("collect", help="take in submissions: students/<id>/<assignment>/<assignment>.ipynb, "
                                           "folder or zip, with their submission times")
    s.add_argument("source", type=Path, help="a folder or .zip holding students/<id>/<assignment>/*.ipynb (and "
                                             "optionally nbgrader's timestamp.txt beside each notebook)")
    s.add_argument("--assignment", action="append", default=[], help="only this assignment (repeatable)")
    course_dir_option(s)
    s.set_defaults(func=_collect)

    s = steps.add_parser("autograde", help="grade the collected submissions of an assignment")
    s.add_argument("assignment")
    s.add_argument("--jobs", "-j", type=int, default=1,
                   help="submissions graded at once, each in its own sandbox (default: 1; at most the cores)")
    s.add_argument("--timeout", type=float, default=None,
                   help="seconds per cell (default: GradingLimits.cell_seconds in the course config, 60)")
    s.add_argument("--memory-mb", type=int, default=None,
                   help="address space per sandbox process in MiB (default: GradingLimits.memory_mb, 3072)")
    s.add_argument("--limit", action="append", default=[], metavar="NAME=VALUE",
                   help="override one grading limit (repeatable): cell_seconds, notebook_seconds, cpu_seconds, "
                        "memory_mb, processes, file_mb, scratch_mb, output_kb (see docs/instructor.md)")
    s.add_argument("--unsafe-no-sandbox", action="store_true",
                   help="grade without bubblewrap, with the grader's own rights (only for code you trust); "
                        "every report line then says so")
    course_dir_option(s)
    s.set_defaults(func=_autograde)

    s = steps.add_parser("feedback", help="write feedback HTML (hidden tests removed, and checked)")
    s.add_argument("assignment")
    s.add_argument("--accept", action="append", type=Path, default=[], metavar="FILE",
                   help="a feedback file you have read and accept although the leak check flags lines in it "
                        "(repeatable)")
    course_dir_option(s)
    s.set_defaults(func=_feedback)

    s = steps.add_parser("grades", help="export all grades to a CSV file")
    s.add_argument("--output", type=Path, default=Path("grades.csv"), help="default: grades.csv")
    course_dir_option(s)
    s.set_defaults(func=_grades)

    s = steps.add_parser("similarity", help="compare answers with the solution, the references and each other")
    s.add_argument("assignment")
    s.add_argument("--output", type=Path, default=None,
                   help="CSV file (default: <course-dir>/reports/<assignment>_similarity.csv)")
    s.add_argument("--threshold", type=float, default=0.9, help="print pairs at least this similar (default 0.9)")
    course_dir_option(s)
    s.set_defaults(func=_similarity)
    return p


def _fail(message: object) -> int:
    print(f"autograd-lab course: error: {message}", file=sys.stderr)
    return 1


def _setup(args: argparse.Namespace) -> int:
    from autograd_lab.course.learner.workspace import setup_workspace

    try:
        result = setup_workspace(args.notebooks, args.workspace)
    except FileNotFoundError as exc:
        return _fail(exc)
    print(result.summary())
    return 0


def _progress(args: argparse.Namespace) -> int:
    from autograd_lab.course.learner.progress import format_progress, workspace_progress

    try:
        results = workspace_progress(args.workspace, args.notebooks, timeout=args.timeout)
    except FileNotFoundError as exc:
        return _fail(exc)
    print(format_progress(results, verbose=args.verbose))
    return 0


def _instructor(args: argparse.Namespace) -> Any:
    from autograd_lab.course import instructor

    if not (args.course_dir / "nbgrader_config.py").is_file():
        raise instructor.CourseError(f"{args.course_dir} has no nbgrader_config.py; pass --course-dir")
    return instructor


def _course_errors_as_messages(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn a CourseError (a bad course folder, submission or assignment name) into one error line and status 1."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from autograd_lab.course.instructor.course_root import CourseError

        try:
            return command(args)
        except CourseError as exc:
            return _fail(exc)

    return run


@_course_errors_as_messages
def _release(args: argparse.Namespace) -> int:
    written = _instructor(args).release(args.course_dir, args.notebooks, args.assignments)
    print("\n".join(f"released {p}" for p in written))
    return 0


@_course_errors_as_messages
def _collect(args: argparse.Namespace) -> int:
    collection = _instructor(args).collect(args.course_dir, args.source, args.assignment)
    print("\n".join(str(s) for s in collection.submissions))
    for warning in collection.warnings:
        print(f"autograd-lab course: warning: {warning}", file=sys.stderr)
    return 0


@_course_errors_as_messages
def _autograde(args: argparse.Namespace) -> int:
    from autograd_lab.course.grading.limits import course_limits, parse_overrides

    instructor = _instructor(args)
    if args.jobs < 1:
        return _fail(f"--jobs must be at least 1, got {args.jobs}")
    try:
        limits = course_limits(args.course_dir).replace(**parse_overrides(args.limit))
    except ValueError as exc:
        return _fail(exc)
    warning = instructor.secret_warning()
    if warning:  # before the batch, which may take long, and again after it, where the report ends
        print(f"autograd-lab course: warning: {warning}", file=sys.stderr)
    reports = instructor.autograde(args.course_dir, args.assignment, jobs=args.jobs, limits=limits,
                                   unsafe=args.unsafe_no_sandbox, timeout=args.timeout, memory_mb=args.memory_mb)
    for report in reports:
        print(report)
    if warning:
        print(f"autograd-lab course: warning: {warning}", file=sys.stderr)
    return 0


@_course_errors_as_messages
def _feedback(args: argparse.Namespace) -> int:
    result = _instructor(args).feedback(args.course_dir, args.assignment, accept=args.accept)
    for leak in result.accepted:
        print(f"accepted: {leak}")
    files = result.files
    noun = "feedback file" if len(files) == 1 else "feedback files"
    print(f"wrote {len(files)} {noun} under {args.course_dir / 'feedback'}; no hidden-test line found in "
          f"{'it' if len(files) == 1 else 'them'}" + (" but in the files you accepted" if result.accepted else ""))
    return 0


@_course_errors_as_messages
def _grades(args: argparse.Namespace) -> int:
    print(f"wrote {_instructor(args).export_grades(args.course_dir, args.output)}")
    return 0


def _similarity(args: argparse.Namespace) -> int:
    from autograd_lab.course.instructor.similarity import format_matches, similarity_report

    if not 0.0 <= args.threshold <= 1.0:
        return _fail(f"--threshold must be between 0 and 1, got {args.threshold}")
    try:
        path, matches = similarity_report(args.course_dir, args.assignment, args.output)
    except FileNotFoundError as exc:
        return _fail(exc)
    lines = list(format_matches(matches, args.threshold))
    print("\n".join(lines) if lines else f"no answers at least {args.threshold:.2f} alike")
    print(f"wrote {path} ({len(matches)} comparisons)")
    return 0
