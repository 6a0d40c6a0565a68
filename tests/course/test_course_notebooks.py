"""The real course: the committed release is current, nbgrader validates source and release, nbval runs the source
twice on fresh kernels, and one representative assignment goes through the grading pipeline."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograd_lab.course import instructor
from autograd_lab.course.instructor.sync import check_release_in_sync
from autograd_lab.course.learner.progress import workspace_progress

from .conftest import COURSE, REPO, copy_course
from .submissions import CASES, write_batch

# One xdist worker runs the whole module, so the module-scoped fixtures start once.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("course_notebooks")]

REPRESENTATIVE = "02_operators"
ASSIGNMENTS = sorted(p.name for p in (COURSE / "source").iterdir() if p.is_dir())


def test_committed_release_matches_the_source() -> None:
    problems = check_release_in_sync(COURSE, REPO / "notebooks")
    assert not problems, "notebooks/ drifted from assignments/source:\n" + "\n".join(problems)


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = copy_course(tmp_path_factory.mktemp("validate") / "course")
    instructor.release(course, course / "notebooks")
    return course


def test_every_source_notebook_passes_its_tests(released: Path) -> None:
    results = instructor.validate_notebooks(released, sorted(released.glob("source/*/*.ipynb")))
    failing = {p.name: [c.get("raw_error", "")[-300:] for c in r.get("failed", [])] or r for p, r in results.items()
               if r}
    assert not failing, f"nbgrader validate failed on the source: {failing}"


def test_every_test_fails_on_the_release(released: Path) -> None:
    results = instructor.validate_notebooks(released, sorted(released.glob("release/*/*.ipynb")), invert=True)
    passing = {p.name: [c["source"][:200] for c in r.get("passed", [])] or r for p, r in results.items() if r}
    assert not passing, f"tests that pass on the untouched release (they test nothing the student writes): {passing}"


def run_nbval() -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nbval-lax", "--nbval-current-env",
           "--nbval-cell-timeout=120", "--nbval-sanitize-with", str(COURSE / "nbval_sanitize.cfg"),
           "-o", "addopts=", str(COURSE / "source")]
    if "PYTEST_XDIST_WORKER" not in os.environ:  # under `pytest -n 2` the other worker already has the 2nd core
        cmd[-1:-1] = ["-n", "2", "--dist", "loadfile"]
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=1200)


def test_nbval_passes_twice_in_a_row_on_fresh_kernels() -> None:
    for attempt in (1, 2):
        proc = run_nbval()
        assert proc.returncode == 0, f"nbval run {attempt} failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
        assert " passed" in proc.stdout and " failed" not in proc.stdout, proc.stdout[-2000:]


def test_representative_assignment_grades_full_and_blank(tmp_path: Path) -> None:
    course = copy_course(tmp_path / "course", which=(REPRESENTATIVE,))
    instructor.release(course, tmp_path / "notebooks")
    release_nb = course / "release" / REPRESENTATIVE / f"{REPRESENTATIVE}.ipynb"
    write_batch(release_nb, course / "source" / REPRESENTATIVE / f"{REPRESENTATIVE}.ipynb", tmp_path / "subs",
                REPRESENTATIVE, cases={k: CASES[k] for k in ("full", "blank")})
    archive = tmp_path / "subs.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for path in (tmp_path / "subs").rglob("*.ipynb"):
            z.write(path, path.relative_to(tmp_path / "subs").as_posix())
    instructor.collect(course, archive)
    reports = {r.student: r for r in instructor.autograde(course, REPRESENTATIVE)}
    full, blank = reports["full"], reports["blank"]
    assert full.max_score >= 5 and full.score == full.max_score, str(full)
    assert blank.score == 0 and blank.max_score == full.max_score, str(blank)

    # The learner's progress command agrees: the full solution passes every visible test, the blank one none.
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for case in ("full", "blank"):
        src = tmp_path / "subs" / "students" / case / REPRESENTATIVE / release_nb.name
        (workspace / f"{case}.ipynb").write_bytes(src.read_bytes())
    progress = {r.name: r for r in workspace_progress(workspace)}
    assert progress["full.ipynb"].complete and progress["full.ipynb"].points == full.max_score
    assert progress["blank.ipynb"].points == 0 and progress["blank.ipynb"].tests


def test_every_chapter_grades_full_marks_for_its_solutions_and_zero_for_the_release(
    released: Path, tmp_path: Path
) -> None:
    """Through the sandboxed grader: the source's own answers earn every point of every chapter, the untouched
    release earns none, and `course feedback` passes its leak check on that honest class (the hostile cases are in
    tests/course/adversarial and test_pipeline.py)."""
    subs = tmp_path / "subs"
    for name in ASSIGNMENTS:
        write_batch(released / "release" / name / f"{name}.ipynb", released / "source" / name / f"{name}.ipynb",
                    subs, name, cases={k: CASES[k] for k in ("full", "blank")})
    instructor.collect(released, subs)
    wrong = {}
    for name in ASSIGNMENTS:
        reports = {r.student: r for r in instructor.autograde(released, name, jobs=2)}
        instructor.feedback(released, name)  # raises CourseError on a hidden-test line in any feedback file
        full, blank = reports["full"], reports["blank"]
        if not (full.max_score > 0 and full.score == full.max_score and blank.score == 0):
            wrong[name] = (str(full), str(blank))
    assert not wrong, "chapters that do not grade full/zero:\n" + "\n".join(f"{k}: {v}" for k, v in wrong.items())
