"""The feedback leak check flags a hidden-test line the student never saw, whole lines only, with file and cell.

Feedback files here are rendered with nbgrader's own feedback template (what ``generate_feedback`` writes), from
small notebooks, so the check reads the markup it reads in a course. The real chapters are in
test_leaks_chapters.py.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograd_lab.course.instructor import feedback_files as feedback_step
from autograd_lab.course.instructor.course_root import CourseError
from autograd_lab.course.instructor.leaks import (
    MIN_LENGTH,
    check_feedback,
    find_leaks,
    hidden_material,
    shown_lines,
)

HIDDEN_ASSERT = "assert topo_order(graph) == expected, 'order of the hidden graph'"
HIDDEN_REPEATED = "graph = {0: [1], 1: [2], 2: []}"  # also in the visible test: the student saw it
HIDDEN_SHORT = "while stack:"  # 12 characters: too short to mean anything
HIDDEN_BUILD = "expected = reference_order(graph_from_seed(17))"
VISIBLE = "assert topo_order(graph) == [0, 1, 2], 'a chain sorts in order'"


def meta(gid: str, **flags: object) -> dict:
    base = {"grade": False, "solution": False, "locked": False, "grade_id": gid, "schema_version": 3}
    return {"nbgrader": {**base, **flags}}


def source_notebook() -> nbformat.NotebookNode:
    test = "\n".join([HIDDEN_REPEATED, VISIBLE, "### BEGIN HIDDEN TESTS", HIDDEN_REPEATED, HIDDEN_BUILD,
                      HIDDEN_SHORT, "    " + HIDDEN_ASSERT, "### END HIDDEN TESTS"])
    return new_notebook(cells=[
        new_markdown_cell("# Topological order"),
        new_code_cell("def topo_order(graph):\n    ### BEGIN SOLUTION\n    return sorted(graph)\n    ### END SOLUTION",
                      metadata=meta("topo_code", solution=True)),
        new_code_cell(test, metadata=meta("topo_test", grade=True, locked=True, points=2)),
    ])


def release_notebook() -> nbformat.NotebookNode:
    nb = source_notebook()
    nb.cells[1].source = "def topo_order(graph):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    nb.cells[2].source = "\n".join([HIDDEN_REPEATED, VISIBLE])
    return nb


def graded(answer: str, printed: str = "", test_printed: str = "") -> nbformat.NotebookNode:
    """A feedback notebook as the grader leaves it: the release's cells, the student's answer, outputs."""
    nb = release_notebook()
    nb.cells[1].source = answer
    for cell, text in ((nb.cells[1], printed), (nb.cells[2], test_printed)):
        cell.outputs = [new_output("stream", name="stdout", text=text)] if text else []
    for cell in nb.cells[1:]:
        cell.metadata.nbgrader.update(score=0, points=cell.metadata.nbgrader.get("points", 0))
    return nb


@functools.cache
def _exporter() -> object:
    """nbconvert's HTML exporter set up as nbgrader's GenerateFeedback sets it (its feedback template)."""
    import nbgrader
    from nbconvert import HTMLExporter

    formgrader = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
    return HTMLExporter(template_name="feedback", extra_template_basedirs=[str(formgrader / "templates")],
                        extra_template_paths=[str(formgrader / "static" / "node_modules" / "bootstrap" / "dist" /
                                                  "css")])


def render(nb: nbformat.NotebookNode, name: str = "a1") -> str:
    resources = {"nbgrader": {"notebook": name, "score": 0, "max_score": 2, "late_penalty": 0}}
    return _exporter().from_notebook_node(nb, resources=resources)[0]


def make_course(tmp_path: Path, students: dict[str, tuple[str, nbformat.NotebookNode]]) -> tuple[Path, list[Path]]:
    """A course holding the source, the release, each student's submitted answer and their feedback HTML."""
    course = tmp_path / "course"
    for stage, nb in (("source", source_notebook()), ("release", release_notebook())):
        (course / stage / "a1").mkdir(parents=True)
        nbformat.write(nb, course / stage / "a1" / "a1.ipynb")
    files = []
    for student, (answer, feedback_nb) in students.items():
        submitted = course / "submitted" / student / "a1" / "a1.ipynb"
        submitted.parent.mkdir(parents=True)
        sub = release_notebook()
        sub.cells[1].source = answer
        nbformat.write(sub, submitted)
        path = course / "feedback" / student / "a1" / "a1.html"
        path.parent.mkdir(parents=True)
        path.write_text(render(feedback_nb), encoding="utf-8")
        files.append(path)
    return course, files


def test_hidden_material_is_the_long_hidden_lines_the_release_does_not_show() -> None:
    assert hidden_material(source_notebook(), release_notebook()) == {HIDDEN_ASSERT, HIDDEN_BUILD}
    assert len(HIDDEN_SHORT) < MIN_LENGTH <= len(HIDDEN_BUILD)


def test_an_honest_feedback_file_flags_nothing(tmp_path: Path) -> None:
    answer = "def topo_order(graph):\n    return sorted(graph)"
    course, files = make_course(tmp_path, {"ada": (answer, graded(answer, printed="[0, 1, 2]\n"))})
    assert check_feedback(course, "a1", files) == []


def test_a_hidden_line_inside_a_longer_shown_line_is_not_flagged(tmp_path: Path) -> None:
    # The old check matched substrings: a student printing a sentence that quotes a hidden line was "a leak".
    answer = "def topo_order(graph):\n    return sorted(graph)"
    printed = f"my note: {HIDDEN_BUILD} is how I would test it\n"
    course, files = make_course(tmp_path, {"ada": (answer, graded(answer, printed=printed))})
    assert check_feedback(course, "a1", files) == []


def test_a_hidden_line_shown_whole_is_flagged_with_its_file_and_cell(tmp_path: Path) -> None:
    answer = "def topo_order(graph):\n    return sorted(graph)"
    course, files = make_course(tmp_path, {
        "ada": (answer, graded(answer)),
        "eve": (answer, graded(answer, test_printed=f"{HIDDEN_BUILD}\n    {HIDDEN_ASSERT}\n")),
    })
    leaks = check_feedback(course, "a1", files)
    assert [(leak.path, leak.where, leak.line) for leak in leaks] == [
        (files[1], "cell 3 (topo_test)", HIDDEN_BUILD), (files[1], "cell 3 (topo_test)", HIDDEN_ASSERT)]
    assert str(leaks[0]) == f"{files[1]}: cell 3 (topo_test): {HIDDEN_BUILD}"


def test_a_line_the_student_typed_in_an_answer_is_theirs(tmp_path: Path) -> None:
    answer = f"def topo_order(graph):\n    {HIDDEN_BUILD}\n    return sorted(graph)"
    course, files = make_course(tmp_path, {"ada": (answer, graded(answer))})
    assert check_feedback(course, "a1", files) == []


def test_a_forged_answer_flag_on_the_test_cell_does_not_make_its_lines_own(tmp_path: Path) -> None:
    answer = "def topo_order(graph):\n    return sorted(graph)"
    course, files = make_course(tmp_path, {"eve": (answer, graded(answer, test_printed=HIDDEN_ASSERT))})
    forged = release_notebook()
    forged.cells[2].metadata.nbgrader["solution"] = True
    forged.cells[2].source += "\n" + HIDDEN_ASSERT
    nbformat.write(forged, course / "submitted" / "eve" / "a1" / "a1.ipynb")
    assert [leak.line for leak in check_feedback(course, "a1", files)] == [HIDDEN_ASSERT]


def test_cells_of_the_page_are_numbered_and_grade_cells_named(tmp_path: Path) -> None:
    path = tmp_path / "f.html"
    path.write_text(render(graded("def topo_order(graph):\n    return [1]", printed="hello\n")), encoding="utf-8")
    where = dict((line, place) for place, line in shown_lines(path))
    assert where["Topological order¶"] == "cell 1"  # markdown is rendered, with its anchor link
    assert where["return [1]"] == "cell 2 (topo_code)" and where["hello"] == "cell 2 (topo_code)"
    assert where[VISIBLE] == "cell 3 (topo_test)"


def test_a_notebook_file_is_checked_in_its_sources_and_outputs(tmp_path: Path) -> None:
    path = tmp_path / "a1.ipynb"
    nbformat.write(graded("def topo_order(graph):\n    return [1]", test_printed=HIDDEN_ASSERT), path)
    leaks = find_leaks(path, hidden_material(source_notebook(), release_notebook()))
    assert [(leak.where, leak.line) for leak in leaks] == [("cell 3 (topo_test)", HIDDEN_ASSERT)]


def test_a_damaged_notebook_file_is_checked_as_text(tmp_path: Path) -> None:
    path = tmp_path / "a1.ipynb"
    path.write_text("not json\n" + HIDDEN_ASSERT + "\n", encoding="utf-8")
    assert [(leak.where, leak.line) for leak in find_leaks(path, {HIDDEN_ASSERT})] == [("page", HIDDEN_ASSERT)]


@pytest.fixture
def leaking_course(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Path]]:
    answer = "def topo_order(graph):\n    return sorted(graph)"
    course, files = make_course(tmp_path, {
        "ada": (answer, graded(answer)),
        "bob": (answer, graded(answer, printed=HIDDEN_ASSERT)),
        "cat": (answer, graded(answer, test_printed=HIDDEN_BUILD)),
    })
    monkeypatch.setattr(feedback_step, "run_nbgrader", lambda *args, **kwargs: None)  # the HTML is already there
    return course, files


def test_feedback_step_lists_every_flagged_line_of_every_file(leaking_course: tuple[Path, list[Path]]) -> None:
    course, files = leaking_course
    with pytest.raises(CourseError) as err:
        feedback_step.feedback(course, "a1")
    message = str(err.value)
    assert message.startswith("2 hidden-test line(s) in 2 of 3 feedback files; do not send these files.")
    assert f"  {files[1]}: cell 2 (topo_code): {HIDDEN_ASSERT}" in message.splitlines()
    assert f"  {files[2]}: cell 3 (topo_test): {HIDDEN_BUILD}" in message.splitlines()
    assert str(files[0]) not in message


def test_accepted_files_pass_and_their_lines_are_still_listed(leaking_course: tuple[Path, list[Path]]) -> None:
    course, files = leaking_course
    result = feedback_step.feedback(course, "a1", accept=[files[1], files[2]])
    assert result.files == files
    assert [(leak.path, leak.line) for leak in result.accepted] == [(files[1], HIDDEN_ASSERT),
                                                                   (files[2], HIDDEN_BUILD)]
    with pytest.raises(CourseError, match=r"^1 hidden-test line\(s\) in 1 of 3"):
        feedback_step.feedback(course, "a1", accept=[files[1]])


def test_accepting_a_file_that_is_not_feedback_is_an_error(leaking_course: tuple[Path, list[Path]]) -> None:
    course, _ = leaking_course
    with pytest.raises(CourseError, match=r"--accept names no feedback file of a1: .*typo\.html"):
        feedback_step.feedback(course, "a1", accept=[course / "feedback" / "typo.html"])


def test_feedback_without_a_release_says_to_release_first(leaking_course: tuple[Path, list[Path]]) -> None:
    course, _ = leaking_course
    os.remove(course / "release" / "a1" / "a1.ipynb")
    with pytest.raises(CourseError, match=r"needs .*release/a1/a1\.ipynb; run 'autograd-lab course release' first"):
        feedback_step.feedback(course, "a1")


def test_cli_feedback_prints_accepted_lines_and_exits_0(leaking_course: tuple[Path, list[Path]],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from autograd_lab.cli import main

    course, files = leaking_course
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    args = ["course", "feedback", "a1", "--course-dir", str(course)]
    assert main(args) == 1
    assert f"{files[1]}: cell 2 (topo_code): {HIDDEN_ASSERT}" in capsys.readouterr().err
    assert main([*args, "--accept", str(files[1]), "--accept", str(files[2])]) == 0
    out = capsys.readouterr().out
    assert f"accepted: {files[1]}: cell 2 (topo_code): {HIDDEN_ASSERT}" in out
    assert "wrote 3 feedback files" in out


