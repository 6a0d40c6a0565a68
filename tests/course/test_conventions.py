"""The course source notebooks follow assignments/CONVENTIONS.md (static checks: nothing is executed)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from .conftest import COURSE, FIXTURE_SOURCE

SOURCES = sorted(COURSE.glob("source/*/*.ipynb")) + sorted(FIXTURE_SOURCE.glob("*/*.ipynb"))
GRADE_ID = re.compile(r"^[a-z0-9_]+$")


def nbgrader_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in nb.cells if "nbgrader" in c.metadata]


def test_the_course_has_its_chapters() -> None:
    names = [p.parent.name for p in SOURCES if p.parent.parent.parent == COURSE]
    assert len(names) >= 8, f"expected the course chapters under assignments/source, found {names}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_layout_kernel_and_cleared_outputs(path: Path) -> None:
    assert re.match(r"^\d\d_[a-z0-9_]+$", path.parent.name), f"{path.parent.name}: folder must be NN_slug"
    assert path.stem == path.parent.name, f"{path}: the notebook must be named after its folder"
    assert [p.name for p in path.parent.iterdir() if p.name != ".ipynb_checkpoints"] == [path.name], (
        f"{path.parent}: only the notebook belongs in an assignment folder")
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3", f"{path.name}: kernelspec name must be python3"
    dirty = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and (c.outputs or c.execution_count)]
    assert not dirty, f"{path.name}: cells {dirty} have outputs; clear them before committing"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_nbgrader_metadata(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    first = code[0].metadata.get("nbgrader", {})
    assert first.get("grade_id") == "setup" and first.get("locked") and not first.get("solution"), (
        f"{path.name}: the first code cell must be the read-only setup cell (grade_id 'setup', locked)")
    ids = [c.metadata.nbgrader.get("grade_id") for c in nbgrader_cells(nb)]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicated grade_id {[i for i in ids if ids.count(i) > 1]}"
    previous = None
    for cell in nbgrader_cells(nb):
        meta = cell.metadata.nbgrader
        gid = meta.get("grade_id", "")
        assert meta.get("schema_version") == 3, f"{path.name}: {gid}: schema_version must be 3"
        assert GRADE_ID.match(gid), f"{path.name}: grade_id {gid!r} must match {GRADE_ID.pattern}"
        assert not meta.get("task"), f"{path.name}: {gid}: task cells are not used"
        if meta.get("grade"):
            assert cell.cell_type == "code" and not meta.get("solution") and meta.get("locked"), (
                f"{path.name}: {gid}: graded cells are locked code test cells (no manual grading)")
            assert isinstance(meta.get("points"), int) and 1 <= meta["points"] <= 5, (
                f"{path.name}: {gid}: points must be an integer 1-5, got {meta.get('points')!r}")
            assert previous is not None and previous != "setup", (
                f"{path.name}: {gid}: a test cell must follow the answer cell it tests")
        if meta.get("solution"):
            assert "### BEGIN SOLUTION" in cell.source, f"{path.name}: {gid}: answer cell without BEGIN SOLUTION"
        previous = gid


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.parent.name)
def test_every_graded_test_cell_splits_into_exercise_and_judge(path: Path) -> None:
    """The grader's own static reading (grading/testcell.py): a hidden part of function definitions and one
    checks.hidden_test call tagged with the cell's grade_id, whose replaces= the sandbox can stub."""
    from autograd_lab.course.grading import stubs, testcell

    nb = nbformat.read(path, as_version=4)
    tests = [c for c in nbgrader_cells(nb) if c.metadata.nbgrader.get("grade")]
    assert tests, f"{path.name}: no graded test cells"
    for cell in tests:
        gid = cell.metadata.nbgrader.grade_id
        assert cell.source.count("### BEGIN HIDDEN TESTS") == cell.source.count("### END HIDDEN TESTS") == 1, (
            f"{path.name}: {gid}: one hidden part, with both markers")
        for name in testcell.read(cell.source, gid, path.name).replaces:
            stubs.definition(name)  # raises StubError naming it when it cannot be stubbed
