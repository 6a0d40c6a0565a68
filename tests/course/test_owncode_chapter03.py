"""Chapter 03 graded by the real grader: an honest backward on the allowed ``Engine.topo_sort`` keeps full marks
(honest-student trial: it scored 0 on both backward tests, refused as "calls Engine.backward")."""

from __future__ import annotations

import nbformat
import pytest

from autograd_lab.course import instructor

from .conftest import copy_course
from .submissions import full_solution

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("owncode_ch03")]

CHAPTER = "03_engine"


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("ch03")
    course = copy_course(tmp / "course", which=(CHAPTER,))
    instructor.release(course, tmp / "notebooks")
    release = nbformat.read(course / "release" / CHAPTER / f"{CHAPTER}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / CHAPTER / f"{CHAPTER}.ipynb", as_version=4)
    for name in ("full", "engine_topo_sort"):
        nb = full_solution(release, source)
        if name == "engine_topo_sort":
            cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "backward_code")
            assert "order = topo_sort(root)" in cell.source
            cell.source = cell.source.replace("order = topo_sort(root)", "order = Engine.topo_sort(root)")
        path = course / "submitted" / name / CHAPTER / f"{CHAPTER}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    return {r.student: r for r in instructor.autograde(course, CHAPTER, jobs=2)}


def test_the_honest_backward_on_engine_topo_sort_keeps_full_marks(reports: dict) -> None:
    full, variant = reports["full"], reports["engine_topo_sort"]
    assert full.max_score > 0 and full.score == full.max_score, str(full)
    assert variant.score == full.max_score, "; ".join(variant.messages)
