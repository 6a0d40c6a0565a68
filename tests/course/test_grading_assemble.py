"""Assembling a grading job from the source notebook and a submission (no sandbox, no student code runs; fast).

Only answer cells are taken from a submission: forged or damaged metadata is ignored, named in the report, and
never changes what is graded or how many points it is worth.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest

from autograd_lab.course.grading import assemble
from autograd_lab.course.grading.assemble import ANSWER, DEMO, HELPER, TEST
from autograd_lab.course.grading.limits import Limits, parse_overrides

from .conftest import FIXTURE_SOURCE

SOURCE = FIXTURE_SOURCE / "90_fixture" / "90_fixture.ipynb"


def gid(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


@pytest.fixture
def submission() -> nbformat.NotebookNode:
    return nbformat.read(SOURCE, as_version=4)


def write(tmp_path: Path, nb: nbformat.NotebookNode) -> Path:
    path = tmp_path / "90_fixture.ipynb"
    nbformat.write(nb, path)
    return path


def answer_of(job: assemble.Job, grade_id: str) -> assemble.JobCell:
    return next(c for c in job.cells if c.grade_id == grade_id)


def test_the_job_is_the_source_with_the_students_answers(tmp_path: Path, submission: nbformat.NotebookNode) -> None:
    cell = next(c for c in submission.cells if gid(c) == "sum_of_squares_code")
    cell.source = "def sum_of_squares(x):\n    return float((x * x).sum())\n"
    job = assemble.assemble(SOURCE, write(tmp_path, submission))
    assert [c.kind for c in job.cells] == [HELPER, ANSWER, TEST, TEST, ANSWER, TEST, DEMO]
    assert answer_of(job, "sum_of_squares_code").source == cell.source
    assert "checks.hidden_test(\"sum_of_squares_test\"" in answer_of(job, "sum_of_squares_test").source
    assert job.max_score == 6 and job.unreadable is None
    assert job.answers["sum_of_squares_code"] == cell.source and job.tags == [
        "add_op_forward_test", "add_op_backward_test", "sum_of_squares_test"]


def test_the_sandbox_gets_the_visible_parts_first_and_the_hidden_parts_without_judges(
    tmp_path: Path, submission: nbformat.NotebookNode
) -> None:
    job = assemble.assemble(SOURCE, write(tmp_path, submission))
    public = job.public_cells()
    # every cell but the instructor's demos (tests may not use them; grading does not run them)
    assert [c["index"] for c in public] == [c.index for c in job.cells if c.kind != assemble.DEMO]
    assert not any("BEGIN HIDDEN TESTS" in c["source"] or "hidden_test" in c["source"] for c in public)
    secret = job.secret_tests()
    assert [t["grade_id"] for t in secret] == job.tags
    backward = next(t for t in secret if t["grade_id"] == "add_op_backward_test")["source"]
    assert "def exercise(x):" in backward and "def judge" not in backward and "judge=" not in backward
    judged = {c["grade_id"]: c for c in assemble.judge_cells(SOURCE)}
    assert "def judge(x, got, want):" in judged["add_op_backward_test"]["source"]  # the judge gets it
    assert "### BEGIN SOLUTION" in judged["add_op_code"]["source"]  # and the solution, as written
    assert assemble.replaced_names(SOURCE) == ["autograd_lab.ops.AddOp"]


def test_a_source_test_cell_that_breaks_the_contract_is_an_authoring_error(tmp_path: Path) -> None:
    source = nbformat.read(SOURCE, as_version=4)
    cell = next(c for c in source.cells if gid(c) == "sum_of_squares_test")
    cell.source = cell.source.replace('checks.hidden_test("sum_of_squares_test"', 'checks.hidden_test("other"')
    path = tmp_path / "source.ipynb"
    nbformat.write(source, path)
    with pytest.raises(assemble.AuthoringError, match=r"source.ipynb, cell 9 \(test cell 'sum_of_squares_test'\)"):
        assemble.assemble(path, None)


def test_an_nbformat_3_submission_is_converted_and_graded(tmp_path: Path, submission: nbformat.NotebookNode) -> None:
    cell = next(c for c in submission.cells if gid(c) == "sum_of_squares_code")
    cell.source = "def sum_of_squares(x):\n    return 42.0\n"
    v3_cells = [{"cell_type": "code", "input": c.source, "language": "python", "metadata": dict(c.metadata),
                 "outputs": [], "collapsed": False} if c.cell_type == "code" else
                {"cell_type": "markdown", "source": c.source, "metadata": {}} for c in submission.cells]
    path = tmp_path / "90_fixture.ipynb"
    path.write_text(json.dumps({"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": ""},
                                "worksheets": [{"cells": v3_cells, "metadata": {}}]}), encoding="utf-8")
    job = assemble.assemble(SOURCE, path)
    assert job.unreadable is None and answer_of(job, "sum_of_squares_code").source == cell.source


def test_forged_metadata_is_ignored_and_named(tmp_path: Path, submission: nbformat.NotebookNode) -> None:
    cells = submission.cells
    answer = next(c for c in cells if gid(c) == "add_op_code")
    answer.metadata.nbgrader.update(grade=True, points=50)  # an answer cell marked as graded
    extra = nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "points": 100, "grade_id": "bonus", "schema_version": 3}})
    twin = copy.deepcopy(next(c for c in cells if gid(c) == "sum_of_squares_code"))
    twin.source = "def sum_of_squares(x):\n    return 0.0\n"
    cells.insert(1, extra)
    cells.append(twin)  # a second copy of an answer cell: the first one counts
    test = next(c for c in cells if gid(c) == "add_op_forward_test")
    test.source = "pass"
    test.metadata.nbgrader["points"] = 200
    submission.metadata["kernelspec"] = {"name": "evil", "display_name": "evil", "language": "python"}
    job = assemble.assemble(SOURCE, write(tmp_path, submission))
    notes = "\n".join(job.ignored)
    assert "cell 'bonus' is not part of the assignment; it was ignored" in notes
    assert "answer cell 'add_op_code' was marked as graded; the marking was ignored" in notes
    assert "cell id 'sum_of_squares_code' appears more than once; the first copy was used" in notes
    assert "kernelspec was changed; ignored" in notes
    assert job.max_score == 6
    assert [c.grade_id for c in job.cells if c.kind == TEST] == [
        "add_op_forward_test", "add_op_backward_test", "sum_of_squares_test"]
    assert "return 0.0" not in answer_of(job, "sum_of_squares_code").source
    assert answer_of(job, "add_op_forward_test").source.startswith("y = AddOp()")  # the source's test ran


def test_an_answer_cell_that_lost_its_nbgrader_metadata_is_found_by_its_cell_id(
    tmp_path: Path, submission: nbformat.NotebookNode
) -> None:
    """Found by a hostile-student review: answers whose cells lost metadata.nbgrader were graded as stubs (0 points)
    although each cell id still names the answer. Damaged metadata must never change a correct score."""
    cell = next(c for c in submission.cells if gid(c) == "sum_of_squares_code")
    cell.source = "def sum_of_squares(x):\n    return float((x * x).sum())\n"
    for c in submission.cells:
        if c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            del c.metadata["nbgrader"]
    job = assemble.assemble(SOURCE, write(tmp_path, submission))
    assert answer_of(job, "sum_of_squares_code").source == cell.source
    assert any("lost its nbgrader metadata" in m and "sum_of_squares_code" in m for m in job.ignored), job.ignored


def test_a_forged_checksum_is_named(tmp_path: Path, submission: nbformat.NotebookNode) -> None:
    release = nbformat.read(SOURCE, as_version=4)
    for cell in release.cells:
        if gid(cell) == "add_op_code":
            cell.metadata.nbgrader["checksum"] = "released-checksum"
    release_path = tmp_path / "release.ipynb"
    nbformat.write(release, release_path)
    for cell in submission.cells:
        if gid(cell) == "add_op_code":
            cell.metadata.nbgrader["checksum"] = "forged"
    job = assemble.assemble(SOURCE, write(tmp_path, submission), release_path)
    assert "the checksum of cell 'add_op_code' was changed; ignored" in job.ignored


def test_damaged_json_grades_the_stubs(tmp_path: Path) -> None:
    path = tmp_path / "90_fixture.ipynb"
    path.write_text('{"cells": [ {"cell_type": "code", ', encoding="utf-8")
    job = assemble.assemble(SOURCE, path)
    assert job.unreadable and "is not valid notebook JSON" in job.unreadable
    stub = answer_of(job, "add_op_code").source
    assert "raise NotImplementedError()" in stub and "return a + b" not in stub and "class AddOp" in stub


def test_a_missing_answer_cell_becomes_the_released_stub(tmp_path: Path, submission: nbformat.NotebookNode) -> None:
    submission.cells = [c for c in submission.cells if gid(c) != "add_op_code"]
    job = assemble.assemble(SOURCE, write(tmp_path, submission))
    assert answer_of(job, "add_op_code").source == assemble.stub_of(
        next(c.source for c in nbformat.read(SOURCE, as_version=4).cells if gid(c) == "add_op_code"))
    assert any("answer cell 'add_op_code' is missing" in m for m in job.ignored)


def test_the_autograded_notebook_never_holds_an_execute_result_in_a_test_cell(tmp_path: Path) -> None:
    job = assemble.assemble(SOURCE, None)
    test = answer_of(job, "add_op_forward_test")
    answer = answer_of(job, "add_op_code")
    results = {test.index: {"passed": False, "ename": "NotImplementedError", "evalue": "",
                            "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2"},
                                         "metadata": {}, "execution_count": 1}]},
               answer.index: {"outputs": [{"output_type": "stream", "name": "stdout", "text": "hi\n"}],
                              "error": {"ename": "ValueError", "evalue": "in the feedback run", "line": "2"}}}
    nb = assemble.autograded_notebook(job, results)
    assert [(o.output_type, o.get("ename")) for o in nb.cells[answer.index].outputs] == [
        ("stream", None), ("error", "ValueError")]
    cell = nb.cells[test.index]
    assert [o.output_type for o in cell.outputs] == ["display_data", "error"]
    other = answer_of(job, "add_op_backward_test")
    assert [o.output_type for o in nb.cells[other.index].outputs] == ["error"]  # never ran: not passed
    nbformat.validate(nb)
    assert json.loads(nbformat.writes(nb))["metadata"]["kernelspec"]["name"] == "python3"


def test_limits_are_checked_and_overridable() -> None:
    limits = Limits().replace(**parse_overrides(["memory-mb=2048", "cell_seconds=2.5"]))
    assert (limits.memory_mb, limits.cell_seconds) == (2048, 2.5)
    with pytest.raises(ValueError, match="unknown grading limit 'memory'"):
        Limits().replace(memory=1)
    with pytest.raises(ValueError, match="must be positive"):
        Limits().replace(file_mb=0)
    with pytest.raises(ValueError, match="NAME=VALUE"):
        parse_overrides(["memory_mb"])


def test_autograde_refuses_without_a_sandbox_unless_told_it_is_unsafe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from autograd_lab.course import instructor
    from autograd_lab.course.grading import batch, sandbox

    course = tmp_path / "course"
    (course / "source" / "90_fixture").mkdir(parents=True)
    (course / "source" / "90_fixture" / "90_fixture.ipynb").write_bytes(SOURCE.read_bytes())
    (course / "nbgrader_config.py").write_text("c = get_config()\n", encoding="utf-8")
    monkeypatch.setattr(sandbox, "sandbox_problem", lambda: "bubblewrap (bwrap) is not installed")
    with pytest.raises(instructor.CourseError, match=r"no sandbox for grading: bubblewrap \(bwrap\) is not "
                                                     r"installed.*--unsafe-no-sandbox"):
        instructor.autograde(course, "90_fixture")
    assert batch.UNSAFE_NOTE.startswith("UNSAFE: graded without a sandbox")


def test_the_autograde_command_checks_its_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nc.GradingLimits.memory_mb = 999\n",
                                                 encoding="utf-8")
    base = ["course", "autograde", "90_fixture", "--course-dir", str(tmp_path)]
    assert main([*base, "--limit", "bogus=1"]) == 1
    assert "unknown grading limit 'bogus'" in capsys.readouterr().err
    assert main([*base, "--jobs", "0"]) == 1
    assert "--jobs must be at least 1" in capsys.readouterr().err
    assert main([*base, "--limit", "output_kb=8"]) == 1  # valid options; no source notebook in this course
    assert "expected the notebook source/90_fixture/90_fixture.ipynb" in capsys.readouterr().err
    from autograd_lab.course.grading.limits import course_limits

    assert course_limits(tmp_path).memory_mb == 999
