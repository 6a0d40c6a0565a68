"""The whole hostile batch, graded once through the sandboxed grader: scores, messages, isolation, time.

One module-scoped batch (``instructor.autograde(course, "91_hostile", jobs=2)``) grades every case of
:mod:`.build` next to the full and blank submissions; the tests then read its reports, the gradebook and the
files. The batch must finish within :data:`BATCH_BOUND_S` seconds: 60 submissions at 2 jobs,
with a 4 s cell limit for the infinite loop. Measured at 33-53 s for 48 and 47-74 s for 60 on the shared 2-core
machine (noisy); the bound has room for a loaded machine. (Feedback is left out to keep the suite short: its HTML
is checked by ``tests/course/test_feedback_safety.py`` and ``test_leaks.py``, and end to end by
``test_pipeline.py``.)
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import time
from pathlib import Path

import pytest

from autograd_lab.course import instructor

from ..conftest import copy_course
from .build import ASSIGNMENT, CASES, MAX_SCORE, write_batch, write_source

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hostile_batch")]

CELL_SECONDS = 4
MEMORY_MB = 1200
BATCH_BOUND_S = 180.0


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def batch(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("hostile")
    write_source(tmp / "source")
    course = copy_course(tmp / "course", tmp / "source")
    instructor.release(course, tmp / "notebooks")
    written = write_batch(course)
    protected = [course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", course / "nbgrader_config.py",
                 *written.values()]
    before = {path: _digest(path) for path in protected}
    start = time.perf_counter()
    reports = instructor.autograde(course, ASSIGNMENT, jobs=2, timeout=CELL_SECONDS, memory_mb=MEMORY_MB)
    seconds = time.perf_counter() - start
    grades = instructor.export_grades(course, tmp / "grades.csv")
    return {"course": course, "reports": {r.student: r for r in reports}, "seconds": seconds, "before": before,
            "grades": grades}


def test_every_hostile_submission_was_graded_within_the_bound(batch: dict) -> None:
    assert sorted(batch["reports"]) == sorted(CASES)
    print(f"hostile batch: {len(CASES)} submissions graded in {batch['seconds']:.1f} s with 2 jobs")
    assert batch["seconds"] < BATCH_BOUND_S, f"the batch took {batch['seconds']:.0f} s (bound {BATCH_BOUND_S:.0f})"


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_case_gets_its_expected_score_and_message(batch: dict, name: str) -> None:
    case = CASES[name]
    report = batch["reports"][name]
    message = "; ".join(report.messages)
    assert (report.score, report.max_score) == (case.score, MAX_SCORE), f"{name} ({case.kind}): {report}"
    assert re.search(case.message, message), f"{name}: report {message!r} lacks {case.message!r}"


def test_gradebook_export_holds_the_grader_scores_for_everyone(batch: dict) -> None:
    with open(batch["grades"], newline="") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted(CASES)
    for name, case in CASES.items():
        assert float(rows[name]["score"]) == case.score, f"{name}: CSV score {rows[name]['score']}"
        assert float(rows[name]["max_score"]) == MAX_SCORE


def test_no_submission_changed_the_source_the_config_or_anyone_submission(batch: dict) -> None:
    for path, digest in batch["before"].items():
        assert _digest(path) == digest, f"{path} was changed during grading"


def test_the_victim_of_tampering_keeps_full_marks(batch: dict) -> None:
    assert batch["reports"]["full"].score == MAX_SCORE


@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.kind == "leak hidden inputs"))
def test_hidden_inputs_never_reach_the_feedback(batch: dict, name: str) -> None:
    graded = batch["course"] / "autograded" / name / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    cells = json.loads(graded.read_text())["cells"]  # the outputs only: the answer's own text says LEAK too
    text = json.dumps([c.get("outputs", []) for c in cells]) + "; ".join(batch["reports"][name].messages)
    assert "LEAK" not in text, f"{name}: the hidden inputs reached the autograded notebook or the report"
    if name == "library_error_carries_hidden_inputs":
        assert "cannot reshape" not in text, f"{name}: numpy's message (it names a shape made of the inputs) shown"
