"""The similarity report: normalising hides no copy, and the table ranks copies first (no grading involved)."""

from __future__ import annotations

import csv
import inspect
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from autograd_lab.cli import main
from autograd_lab.course.instructor.similarity import normalise, ratio, similarity_report
from autograd_lab.ops import SubOp

ORIGINAL = '''def topo(root):
    """Kahn's algorithm."""
    seen = {root}   # visited
    stack = [root]
    while stack:
        node = stack.pop()
        for parent in node.parents:
            if parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return seen
'''
RENAMED = '''def topo(start):
    visited = {start}
    todo = [start]
    while todo:
        current = todo.pop()
        for p in current.parents:
            if p not in visited:
                visited.add(p)
                todo.append(p)

    return visited
'''
DIFFERENT = "def topo(root):\n    return sorted(root.parents, key=id)\n"


def test_renaming_comments_and_docstrings_do_not_hide_a_copy() -> None:
    assert normalise(ORIGINAL) == normalise(RENAMED)
    assert ratio(normalise(ORIGINAL), normalise(RENAMED)) == 1.0
    assert ratio(normalise(ORIGINAL), normalise(DIFFERENT)) < 0.6


def _meta(gid: str, **flags: object) -> dict:
    return {"nbgrader": {"grade": False, "solution": False, "locked": False, "grade_id": gid, "schema_version": 3,
                         **flags}}


def _course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    (course / "source" / "a1").mkdir(parents=True)
    source = new_notebook(cells=[
        new_code_cell("class SubOp:\n    ### BEGIN SOLUTION\n    pass\n    ### END SOLUTION",
                      metadata=_meta("sub_code", solution=True)),
        new_code_cell("checks.hidden_test('sub_test', inputs=inputs, exercise=exercise,\n"
                      "                  replaces=['autograd_lab.ops.SubOp', 'autograd_lab.ops.SubOp'])",
                      metadata=_meta("sub_test", grade=True, locked=True, points=1)),
        new_code_cell("def topo(root):\n    ### BEGIN SOLUTION\n    return []\n    ### END SOLUTION",
                      metadata=_meta("topo_code", solution=True)),
    ])
    nbformat.write(source, course / "source" / "a1" / "a1.ipynb")
    copied_reference = inspect.getsource(SubOp)
    for student, topo, sub in [("ada", ORIGINAL, "class SubOp:\n    pass"), ("bob", RENAMED, copied_reference),
                               ("cy", DIFFERENT, "class SubOp:\n    pass")]:
        nb = new_notebook(cells=[new_code_cell(sub, metadata=_meta("sub_code", solution=True)),
                                 new_code_cell(topo, metadata=_meta("topo_code", solution=True))])
        path = course / "submitted" / student / "a1" / "a1.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    return course


def test_report_ranks_a_classmate_copy_and_a_reference_copy_first(tmp_path: Path) -> None:
    course = _course(tmp_path)
    path, matches = similarity_report(course, "a1")
    top = {(m.student, m.grade_id, m.other) for m in matches if m.ratio == 1.0}
    assert ("ada", "topo_code", "bob") in top
    assert ("bob", "sub_code", "reference autograd_lab.ops.SubOp") in top
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows[0].keys() == {"student", "grade_id", "compared_with", "ratio", "length"}
    assert len(rows) == len(matches)


def test_cli_prints_the_pairs_above_the_threshold(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    course = _course(tmp_path)
    (course / "nbgrader_config.py").write_text("")
    assert main(["course", "similarity", "a1", "--course-dir", str(course), "--threshold", "0.95"]) == 0
    out = capsys.readouterr().out
    assert "ada" in out and "~ bob" in out and "reports/a1_similarity.csv" in out
