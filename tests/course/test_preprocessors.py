"""The nbgrader preprocessors the course configuration adds, run on small notebooks without a gradebook."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lab.course.instructor.preprocessors import (
    RESTORED_NOTICE,
    DeduplicateCellIds,
    LimitOutputSize,
    RestoreMissingCells,
    ShortTracebacks,
    grade_id,
    kernel_memory_limit_argument,
)


def graded(gid: str, source: str = "", **flags: object) -> nbformat.NotebookNode:
    meta = {"grade": False, "solution": False, "locked": False, "grade_id": gid, "schema_version": 3, **flags}
    return new_code_cell(source, metadata={"nbgrader": meta})


def release_notebook() -> nbformat.NotebookNode:
    return new_notebook(cells=[
        new_markdown_cell("# Title"),
        graded("setup", "import numpy as np", locked=True),
        graded("f_code", "def f(): raise NotImplementedError()", solution=True),
        graded("f_test", "assert f() == 1", grade=True, locked=True, points=1),
        graded("g_code", "def g(): raise NotImplementedError()", solution=True),
        graded("g_test", "assert g() == 2", grade=True, locked=True, points=2),
    ])


def restore(submission: nbformat.NotebookNode, tmp_path: Path) -> nbformat.NotebookNode:
    (tmp_path / "a1").mkdir()
    nbformat.write(release_notebook(), tmp_path / "a1" / "a1.ipynb")
    pp = RestoreMissingCells(release_root=str(tmp_path))
    resources = {"nbgrader": {"assignment": "a1", "notebook": "a1"}}
    nb, _ = pp.preprocess(submission, resources)
    return nb


def test_deleted_setup_and_test_cells_come_back_in_release_order(tmp_path: Path) -> None:
    sub = release_notebook()
    sub.cells = [c for c in sub.cells if grade_id(c) not in ("setup", "g_test")]
    sub.cells.append(new_code_cell("print('my scratch cell')"))
    nb = restore(sub, tmp_path)
    ids = [grade_id(c) for c in nb.cells]
    assert ids == [None, "setup", "f_code", "f_test", "g_code", "g_test", None]
    setup = nb.cells[1]
    assert setup.source == RESTORED_NOTICE + "import numpy as np"


def test_complete_submission_is_left_unchanged(tmp_path: Path) -> None:
    sub = release_notebook()
    before = nbformat.writes(sub)
    assert nbformat.writes(restore(sub, tmp_path)) == before


def test_missing_release_restores_nothing(tmp_path: Path) -> None:
    sub = new_notebook(cells=[graded("f_code", "def f(): return 1", solution=True)])
    pp = RestoreMissingCells(release_root=str(tmp_path))
    nb, _ = pp.preprocess(sub, {"nbgrader": {"assignment": "nope", "notebook": "nope"}})
    assert [grade_id(c) for c in nb.cells] == ["f_code"]


def test_duplicated_grade_id_keeps_the_last_copy_and_strips_the_others() -> None:
    nb = new_notebook(cells=[
        graded("f_test", "assert f() == 1  # first", grade=True, locked=True, points=1),
        graded("f_test", "assert f() == 1  # second", grade=True, locked=True, points=1),
    ])
    nb, _ = DeduplicateCellIds().preprocess(nb, {})
    assert "nbgrader" not in nb.cells[0].metadata
    assert grade_id(nb.cells[1]) == "f_test"


def test_output_is_cut_to_the_byte_budget_with_a_note() -> None:
    cell = new_code_cell("print(...)", outputs=[
        new_output("stream", name="stdout", text="a" * 80),
        new_output("stream", name="stdout", text="b" * 80),
        new_output("execute_result", data={"text/plain": "c" * 80, "image/png": "Z" * 500}, execution_count=1),
    ])
    cell, _ = LimitOutputSize(max_bytes=100).preprocess_cell(cell, {}, 0)
    assert cell.outputs[0].text == "a" * 80
    assert cell.outputs[1].text.startswith("b" * 20 + "\n... output truncated by the autograder (60 characters")
    assert cell.outputs[2].data["text/plain"].startswith("\n... output truncated")
    assert cell.outputs[2].data["image/png"] == "Z" * 500  # binary payloads are never cut (would corrupt them)


def test_tracebacks_shrink_to_their_last_line() -> None:
    cell = new_code_cell("x", outputs=[new_output("error", ename="AssertionError", evalue="wrong sign",
                                                  traceback=["----> 3 assert secret_hidden_check(x)", "..."])])
    cell, _ = ShortTracebacks().preprocess_cell(cell, {}, 0)
    assert cell.outputs[0].traceback == ["AssertionError: wrong sign"]


def test_memory_limit_argument_sets_soft_and_hard_address_space_limit() -> None:
    arg = kernel_memory_limit_argument(2 * 1024**3)
    assert arg.startswith("--IPKernelApp.exec_lines=")
    assert "RLIMIT_AS, (2147483648, 2147483648)" in arg
    with pytest.raises(ValueError, match="must be positive"):
        kernel_memory_limit_argument(0)
