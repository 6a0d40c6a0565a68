"""The autograding pipeline end to end: release, collect a zip of damaged submissions, autograde, feedback, CSV.

Runs the real course configuration (assignments/nbgrader_config.py) on the small fixture assignment
(tests/course/fixtures: AddOp worth 2 + 3 points, sum_of_squares worth 1) through the sandboxed grader, with a short
per-cell timeout and a small memory cap so that the infinite loop and the memory hog cost seconds, not minutes.
The forgeries (``forge_*``) answer AddOp honestly and fake sum_of_squares so that its visible test passes: none may
earn that test's point.
"""

from __future__ import annotations

import csv
import html
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from autograd_lab.course import checks, instructor
from autograd_lab.course.grading import batch, seeds
from autograd_lab.course.grading.limits import course_limits
from autograd_lab.course.instructor.report import SubmissionReport

from .conftest import FIXTURE_SOURCE, copy_course
from .submissions import CASES, SHARED_WITH_HIDDEN_TEST, write_batch

# One xdist worker runs the whole module, so the module-scoped fixtures start once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("course_pipeline")]

ASSIGNMENT = "90_fixture"
MAX = 6.0
TIMEOUT_S = 6
MEMORY_MB = 1200  # a kernel with the course imports maps ~0.9 GB; the hog fails after ~0.3 GB more

# Graded a second time, sequentially, after the parallel batch (the quick cases: no timeouts).
REGRADED = ["blank", "duplicate_id", "full", "huge_output", "kernel_death", "forge_write_every_fd"]
# The feedback run has the whole library (as the learner's Jupyter), so a reference imported as the answer passes the
# visible tests there; the graded run's stub stops the hidden part, and the message says so.
STUB = re.escape(checks.STUB_CALLED)
DIFFERS = re.escape("The hidden test found: results['s'] differs from the expected value")

# case -> (points, a pattern the message must contain)
EXPECTED: dict[str, tuple[float, str]] = {
    "full": (6, r"all tests passed$"),
    "blank": (0, r"add_op_forward_test \(2 points\) failed: its visible tests failed: the exercise is not answered "
                 r"yet"),
    "malformed_json": (0, r"is not valid notebook JSON .*the score is 0"),
    "duplicate_id": (6, r"cell id 'add_op_forward_test' appears more than once; the first copy was used"),
    "deleted_test": (6, r"cell 'add_op_backward_test' was deleted; the instructor's copy was used"),
    "edited_locked_test": (0, r"read-only cell 'add_op_forward_test' was edited; the instructor's copy was used"),
    "deleted_setup": (6, r"cell 'setup' was deleted; the instructor's copy was used"),
    "loop_at_top_level": (1, r"add_op_code: the cell ran past the time limit \(cell_seconds = 6 s\)"),
    "infinite_loop": (1, r"add_op_forward_test \(2 points\) failed: its visible tests failed: the cell ran past the "
                         r"time limit \(cell_seconds = 6 s\)"),
    "kernel_death": (5, r"sum_of_squares_test \(1 point\) failed: its visible tests did not run"),
    "memory_hog": (5, r"sum_of_squares_test \(1 point\) failed: its visible tests failed: the cell ran out of the "
                      r"memory allowed to the grader \(memory_mb = 1200 MiB\)"),
    "imports_reference": (1, r"add_op_forward_test \(2 points\) failed: " + STUB),
    "subclasses_reference": (1, r"add_op_backward_test \(3 points\) failed: " + STUB),
    "stub_with_numeric_result": (0, r"sum_of_squares_test \(1 point\) failed: its visible tests failed: the "
                                    r"exercise is not answered yet"),
    "huge_output": (6, r"more than output_kb = \d+ KiB; the rest of its output was dropped"),
    "shares_hidden_line": (6, r"all tests passed$"),
    "prints_hidden_inputs": (6, r"all tests passed$"),
    "forge_exit_early": (5, r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NO_RESULT)),
    "forge_write_every_fd": (5, r"sum_of_squares_test \(1 point\) failed: " + DIFFERS),
    "forge_monkeypatch": (5, r"sum_of_squares_test \(1 point\) failed: " + DIFFERS),
    "forge_returns_nan": (5, r"sum_of_squares_test \(1 point\) failed: " + DIFFERS),
    "forge_huge_data": (5, r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NOT_PLAIN)),
    "forge_lying_float": (5, r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NOT_PLAIN)),
    "forge_pickled": (5, r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NOT_PLAIN)),
    "forge_object_array": (5, r"sum_of_squares_test \(1 point\) failed: " + re.escape(checks.NOT_PLAIN)),
}
# Placed in submitted/ directly (as nbgrader's own exchange would), since collect refuses a renamed notebook.
MISNAMED = ("misnamed", (0, r"90_fixture\.ipynb is missing from the submission \(found wrongname\.ipynb\); expected "
                            r"90_fixture\.ipynb.*; wrongname\.ipynb is not a notebook of 90_fixture"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("pipeline")
    course = copy_course(tmp / "course", FIXTURE_SOURCE)
    instructor.release(course, tmp / "notebooks")
    write_batch(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", tmp / "subs", ASSIGNMENT)
    archive = tmp / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in sorted((tmp / "subs").rglob("*.ipynb")):
            z.write(path, path.relative_to(tmp / "subs").as_posix())
    collected = instructor.collect(course, archive)
    misnamed = course / "submitted" / MISNAMED[0] / ASSIGNMENT / "wrongname.ipynb"
    misnamed.parent.mkdir(parents=True)
    shutil.copyfile(tmp / "subs" / "students" / "full" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", misnamed)
    reports = instructor.autograde(course, ASSIGNMENT, timeout=TIMEOUT_S, memory_mb=MEMORY_MB, jobs=2)
    parallel = gradebook_cells(course)
    # Grade some of them again one at a time: the gradebook must not change.
    limits = course_limits(course).replace(cell_seconds=TIMEOUT_S, memory_mb=MEMORY_MB)
    again = batch.grade_batch(course, ASSIGNMENT, REGRADED, jobs=1, limits=limits)
    feedback = instructor.feedback(course, ASSIGNMENT).files
    grades = instructor.export_grades(course, tmp / "grades.csv")
    return {"course": course, "collected": collected, "reports": {r.student: r for r in reports},
            "feedback": feedback, "grades": grades, "parallel": parallel, "sequential": gradebook_cells(course),
            "sequential_messages": {outcome.student: outcome.messages for outcome, _, _ in again}}


def gradebook_cells(course: Path) -> dict[tuple[str, str], float | None]:
    """{(student, grade cell): auto score} as stored in the course's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        return {(sub.student.id, grade.name): grade.auto_score
                for sub in gb.assignment_submissions(ASSIGNMENT) for nb in sub.notebooks for grade in nb.grades}


def test_a_parallel_batch_writes_the_same_gradebook_as_a_sequential_one(graded: dict) -> None:
    assert graded["sequential"] == graded["parallel"]
    assert len(graded["parallel"]) == 3 * (len(CASES) + 1)  # three graded tests per submission
    assert sorted(graded["sequential_messages"]) == sorted(REGRADED)
    for student, messages in graded["sequential_messages"].items():
        assert messages == graded["reports"][student].messages, student


def test_every_case_was_collected_and_graded(graded: dict) -> None:
    assert sorted(s.student for s in graded["collected"].submissions) == sorted(CASES)
    assert sorted(graded["reports"]) == sorted([*CASES, MISNAMED[0]])
    assert set(EXPECTED) == set(CASES)


@pytest.mark.parametrize("case", sorted([*EXPECTED, MISNAMED[0]]))
def test_each_submission_ends_with_a_defined_score_and_a_clear_message(graded: dict, case: str) -> None:
    report: SubmissionReport = graded["reports"][case]
    points, pattern = dict([MISNAMED], **EXPECTED)[case]
    message = "; ".join(report.messages)
    assert (report.score, report.max_score) == (points, MAX), f"{case}: {report}"
    assert re.search(pattern, message), f"{case}: message {message!r} lacks {pattern!r}"


def test_grades_csv_has_one_row_per_submission_with_the_expected_score(graded: dict) -> None:
    with open(graded["grades"], newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    everyone = dict([MISNAMED], **EXPECTED)
    assert sorted(rows) == sorted(everyone)
    for case, (points, _) in everyone.items():
        row = rows[case]
        assert row["assignment"] == ASSIGNMENT
        assert float(row["score"]) == points, f"{case}: CSV score {row['score']}, expected {points}"
        assert float(row["max_score"]) == MAX, f"{case}: CSV max_score {row['max_score']}"


def test_feedback_exists_for_every_graded_submission_and_shows_no_hidden_test(graded: dict) -> None:
    # Submissions whose notebook could not be read at all (not JSON, misnamed) get no feedback file.
    expected = sorted(set(EXPECTED) - {"malformed_json"})
    assert sorted(p.parent.parent.name for p in graded["feedback"]) == expected
    hidden_only = ["def inputs(rng):", 'return {"s": sum_of_squares(x["x"].copy())}', "def judge(x, got, want):",
                   "checks.hidden_test("]
    for path in graded["feedback"]:
        text = html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))
        for line in hidden_only:
            assert line not in text, f"hidden test line {line!r} leaked into {path}"


def test_a_student_line_that_a_hidden_test_also_holds_is_not_a_leak(graded: dict) -> None:
    # feedback() raised no CourseError for the whole batch although this student's feedback shows the line.
    path = next(p for p in graded["feedback"] if p.parent.parent.name == "shares_hidden_line")
    text = html.unescape(re.sub(r"<[^>]+>", "", path.read_text(encoding="utf-8")))
    assert SHARED_WITH_HIDDEN_TEST.strip() in text


def test_feedback_shows_only_the_visible_runs_of_an_answer_that_prints_its_inputs(graded: dict) -> None:
    import nbformat

    path = graded["course"] / "autograded" / "prints_hidden_inputs" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    printed = [line for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"
               for out in cell.outputs if out.output_type == "stream" for line in out.text.splitlines()]
    # the visible test's call only: demo cells are not run for grading, and the hidden test's calls printed nothing
    # that was kept
    assert printed == ["INPUTS [1.0, 2.0]", "ERROR [1.0, 2.0]"]


def test_feedback_tells_the_student_the_exercise_is_theirs_to_write(graded: dict) -> None:
    """The feedback run has the whole library (as the learner's Jupyter), so an answer that imports the reference
    passes its visible tests there; the hidden part stopped in the chapter's stub, and the message says so."""
    path = next(p for p in graded["feedback"] if p.parent.parent.name == "imports_reference")
    text = html.unescape(path.read_text(encoding="utf-8"))
    assert checks.STUB_CALLED in text


def test_every_report_warns_when_grading_with_the_public_secret(graded: dict) -> None:
    for student, report in graded["reports"].items():
        assert report.messages[0] == seeds.PUBLIC_WARNING, student


def test_nbgraders_own_autograde_refuses_and_names_the_course_command(graded: dict) -> None:
    before = gradebook_cells(graded["course"])
    proc = instructor.run_nbgrader(graded["course"], "autograde", ASSIGNMENT, "--force", check=False)
    assert proc.returncode != 0
    assert "autograd-lab course autograde" in proc.stdout + proc.stderr
    assert gradebook_cells(graded["course"]) == before


def test_huge_output_is_capped_in_the_gradebook_copy(graded: dict) -> None:
    graded_nb = graded["course"] / "autograded" / "huge_output" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert graded_nb.stat().st_size < 400_000  # 3 MB + 1.3 MB were printed
