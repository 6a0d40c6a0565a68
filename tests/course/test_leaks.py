"""The feedback leak check: a hidden test shown in feedback is caught in every file; a student's own line is not.

The feedback files are real HTML from nbconvert (the exporter nbgrader's feedback step builds on), made from small
autograded notebooks, so the check sees the syntax-highlighted markup it sees in a course.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograd_lab.course import instructor
from autograd_lab.course.leaks import find_leaks, hidden_test_lines, leaked_lines

HIDDEN = ["assert topo_order(graph) == expected, 'HIDDEN_ORDER'", "while stack:", "node = stack.pop()"]
VISIBLE_TEST = "assert topo_order(tiny) == [0]"


def cell(gid: str, source: str, **flags: object) -> nbformat.NotebookNode:
    meta = {"grade": False, "solution": False, "locked": False, "grade_id": gid, "schema_version": 3, **flags}
    return new_code_cell(source, metadata={"nbgrader": meta})


def source_notebook() -> nbformat.NotebookNode:
    hidden = "\n".join(["### BEGIN HIDDEN TESTS", *HIDDEN, "### END HIDDEN TESTS"])
    return new_notebook(cells=[
        cell("topo_code", "def topo_order(graph):\n    raise NotImplementedError()", solution=True),
        cell("topo_test", VISIBLE_TEST + "\n" + hidden, grade=True, locked=True, points=2),
    ])


def autograded(answer: str, test_source: str, printed: str = "") -> nbformat.NotebookNode:
    answer_cell = cell("topo_code", answer, solution=True)
    if printed:
        answer_cell.outputs = [new_output("stream", name="stdout", text=printed)]
    return new_notebook(cells=[answer_cell, cell("topo_test", test_source, grade=True, locked=True, points=2)])


# An answer that holds two hidden-test lines, as a correct iterative sort well may.
OWN_ANSWER = "def topo_order(graph):\n    stack = [0]\n    while stack:\n        node = stack.pop()\n    return [0]"


def make_course(tmp_path: Path, students: dict[str, nbformat.NotebookNode]) -> tuple[Path, list[Path]]:
    course = tmp_path / "course"
    (course / "source" / "a1").mkdir(parents=True)
    nbformat.write(source_notebook(), course / "source" / "a1" / "a1.ipynb")
    files = []
    for student, nb in students.items():
        graded = course / "autograded" / student / "a1" / "a1.ipynb"
        graded.parent.mkdir(parents=True)
        nbformat.write(nb, graded)
        html_path = course / "feedback" / student / "a1" / "a1.html"
        html_path.parent.mkdir(parents=True)
        html_path.write_text(HTMLExporter(template_name="classic").from_notebook_node(nb)[0], encoding="utf-8")
        files.append(html_path)
    return course, files


def test_hidden_lines_are_the_ones_only_inside_hidden_regions(tmp_path: Path) -> None:
    course, _ = make_course(tmp_path, {})
    # "while stack:" is exactly 12 characters, the shortest line counted.
    assert hidden_test_lines(course / "source" / "a1") == sorted(HIDDEN)


def test_a_student_answer_sharing_lines_with_a_hidden_test_is_not_a_leak(tmp_path: Path) -> None:
    course, files = make_course(tmp_path, {"ada": autograded(OWN_ANSWER, VISIBLE_TEST, printed="node = stack.pop()")})
    text = files[0].read_text(encoding="utf-8")
    hidden = hidden_test_lines(course / "source" / "a1")
    assert leaked_lines(text, hidden) == ["node = stack.pop()", "while stack:"]  # what the old check blamed
    assert find_leaks(course, "a1", files) == {}


def test_a_hidden_test_in_feedback_is_caught_even_next_to_a_sharing_answer(tmp_path: Path) -> None:
    leaking_test = VISIBLE_TEST + "\n" + "\n".join(HIDDEN)
    course, files = make_course(tmp_path, {
        "ada": autograded(OWN_ANSWER, VISIBLE_TEST),
        "bob": autograded(OWN_ANSWER, leaking_test),  # shares two lines, but the assert line gives it away
        "cat": autograded("def topo_order(graph):\n    return [0]", leaking_test),
    })
    leaks = find_leaks(course, "a1", files)
    assert sorted(p.parent.parent.name for p in leaks) == ["bob", "cat"]
    assert leaks[files[1]] == [HIDDEN[0]]
    assert leaks[files[2]] == sorted(HIDDEN)


def test_feedback_step_names_every_leaking_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    leaking_test = VISIBLE_TEST + "\n" + "\n".join(HIDDEN)
    course, files = make_course(tmp_path, {
        "ada": autograded(OWN_ANSWER, VISIBLE_TEST),
        "bob": autograded(OWN_ANSWER, leaking_test),
        "cat": autograded(OWN_ANSWER, leaking_test),
    })
    monkeypatch.setattr(instructor, "run_nbgrader", lambda *args, **kwargs: None)  # the HTML is already there
    with pytest.raises(instructor.CourseError, match="hidden tests leaked into 2 of 3 feedback files") as err:
        instructor.feedback(course, "a1")
    assert str(files[1]) in str(err.value) and str(files[2]) in str(err.value)
    assert str(files[0]) not in str(err.value)


def test_feedback_step_passes_when_only_students_share_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    course, files = make_course(tmp_path, {"ada": autograded(OWN_ANSWER, VISIBLE_TEST),
                                           "bob": autograded(OWN_ANSWER, VISIBLE_TEST)})
    monkeypatch.setattr(instructor, "run_nbgrader", lambda *args, **kwargs: None)
    assert instructor.feedback(course, "a1") == files
