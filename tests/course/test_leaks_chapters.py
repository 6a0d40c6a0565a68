"""The leak check on the real chapters: an honest class's feedback flags nothing in any chapter, and a real hidden
line pasted into feedback is flagged in the cell where it shows.

Every chapter is released, then each gets two honest students' feedback, rendered with nbgrader's feedback template
after the feedback preprocessors of the course configuration:

- ``ada``: her release with the solution's answers, run in a kernel (the visible tests and their outputs: what the
  grader's feedback run shows);
- ``bea``: the grader's view, the source notebook with her answers and the hidden parts stripped (ClearHiddenTests).
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_output
from nbgrader.preprocessors import ClearHiddenTests

from autograd_lab.course import instructor
from autograd_lab.course.instructor import feedback_files
from autograd_lab.course.instructor.leaks import check_feedback, hidden_material
from autograd_lab.course.instructor.preprocessors import NeutraliseOutputs, ShortTracebacks

from .conftest import COURSE, copy_course
from .submissions import full_solution
from .test_leaks import render

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("leaks_chapters")]

CHAPTERS = sorted(p.name for p in (COURSE / "source").iterdir() if p.is_dir())


def for_feedback(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """What nbgrader's GenerateFeedback does to an autograded notebook before rendering it (GetGrades aside)."""
    nb = copy.deepcopy(nb)
    for preprocessor in (ClearHiddenTests(), ShortTracebacks(), NeutraliseOutputs()):
        nb, _ = preprocessor.preprocess(nb, {})
    for cell in nb.cells:
        grading = cell.metadata.get("nbgrader", {})
        if grading.get("grade") or grading.get("solution"):
            grading.update(score=0, points=grading.get("points", 0))
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_course(tmp_path_factory.mktemp("leaks") / "course")
    instructor.release(root, root / "notebooks")
    (root / "ada_ran").mkdir()  # ada's executed notebooks, for the pasted-line test
    for name in CHAPTERS:
        source = nbformat.read(root / "source" / name / f"{name}.ipynb", as_version=4)
        honest = full_solution(nbformat.read(root / "release" / name / f"{name}.ipynb", as_version=4), source)
        ran = copy.deepcopy(honest)
        NotebookClient(ran, timeout=120, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(root)}}).execute()
        graded_source = copy.deepcopy(source)  # the source's answers are bea's
        for student, shown in (("ada", ran), ("bea", graded_source)):
            submitted = root / "submitted" / student / name / f"{name}.ipynb"
            submitted.parent.mkdir(parents=True)
            nbformat.write(honest, submitted)
            page = root / "feedback" / student / name / f"{name}.html"
            page.parent.mkdir(parents=True)
            page.write_text(render(for_feedback(shown), name), encoding="utf-8")
        nbformat.write(ran, root / "ada_ran" / f"{name}.ipynb")
    return root


def feedback_pages(course: Path, name: str) -> list[Path]:
    return sorted((course / "feedback").glob(f"*/{name}/*.html"))


@pytest.mark.parametrize("name", CHAPTERS)
def test_an_honest_class_feedback_flags_nothing(course: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert check_feedback(course, name, feedback_pages(course, name)) == []
    monkeypatch.setattr(feedback_files, "run_nbgrader", lambda *args, **kwargs: None)  # pages are written above
    result = feedback_files.feedback(course, name)
    assert [p.parent.parent.name for p in result.files] == ["ada", "bea"] and result.accepted == []


@pytest.mark.parametrize("name", CHAPTERS)
def test_a_real_hidden_line_pasted_into_feedback_is_flagged_in_its_cell(course: Path, name: str) -> None:
    source = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
    release = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
    line = max(sorted(hidden_material(source, release)), key=len)
    nb = nbformat.read(course / "ada_ran" / f"{name}.ipynb", as_version=4)
    # An answer cell's output: feedback keeps it (a graded test cell keeps only its error, NeutraliseOutputs).
    index, cell = next((i, c) for i, c in enumerate(nb.cells)
                       if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    cell.outputs.append(new_output("stream", name="stdout", text=f"    {line}\n"))
    page = course / "feedback" / "eve" / name / f"{name}.html"
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(render(for_feedback(nb), name), encoding="utf-8")
    try:
        leaks = check_feedback(course, name, [page])
    finally:
        page.unlink()
    gid = cell.metadata.nbgrader.grade_id
    # Rendered as eve's page with no submission of eve's, ada's answer lines are not excluded as the student's own
    # (collect's real flow excludes them): a solution line that a hidden part repeats may be flagged beside it.
    assert (f"cell {index + 1} ({gid})", line) in [(leak.where, leak.line) for leak in leaks]
