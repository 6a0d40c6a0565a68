"""Chapter 03 graded by the real grader: an honest backward on the allowed ``Engine.topo_sort`` keeps full marks
(honest-student trial: it scored 0 on both backward tests, refused as "calls Engine.backward")."""

from __future__ import annotations

import pytest
from nbformat import NotebookNode

from .submissions import grade_solution_variants

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("owncode_ch03")]

CHAPTER = "03_engine"


def _on_engine_topo_sort(nb: NotebookNode) -> None:
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "backward_code")
    assert "order = topo_sort(root)" in cell.source
    cell.source = cell.source.replace("order = topo_sort(root)", "order = Engine.topo_sort(root)")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    edits = {"full": None, "engine_topo_sort": _on_engine_topo_sort}
    return grade_solution_variants(tmp_path_factory.mktemp("ch03"), CHAPTER, edits)


def test_the_honest_backward_on_engine_topo_sort_keeps_full_marks(reports: dict) -> None:
    full, variant = reports["full"], reports["engine_topo_sort"]
    assert full.max_score > 0 and full.score == full.max_score, str(full)
    assert variant.score == full.max_score, "; ".join(variant.messages)
