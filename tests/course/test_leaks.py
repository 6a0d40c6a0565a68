"""The feedback leak check: a hidden test shown in feedback is caught in every file; a student's own line is not.

The feedback files are real HTML from nbconvert (the exporter nbgrader's feedback step builds on), made from small
autograded notebooks, so the check sees the syntax-highlighted markup it sees in a course.
"""

from __future__ import annotations

import functools
from pathlib import Path

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbformat.v4 import new_code_cell, new_notebook, new_output

from autograd_lab.course import instructor
from autograd_lab.course.leaks import find_all_leaks, find_leaks, hidden_test_lines, leaked_lines

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


@functools.cache
def _exporter() -> HTMLExporter:
    return HTMLExporter(template_name="classic")  # one exporter: building one costs about a second


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
        html_path.write_text(_exporter().from_notebook_node(nb)[0], encoding="utf-8")
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


# --- what the student's own code printed is checked too ----------------------------------------------------------

SOLUTION_LINE = "return sorted_by_kahn(graph, queue=deque())"


def source_with_solution() -> nbformat.NotebookNode:
    nb = source_notebook()
    nb.cells[0].source = ("def topo_order(graph):\n    ### BEGIN SOLUTION\n    " + SOLUTION_LINE
                          + "\n    ### END SOLUTION")
    return nb


def test_a_hidden_test_the_student_printed_is_caught(tmp_path: Path) -> None:
    course, files = make_course(tmp_path, {
        "eve": autograded("def topo_order(graph):\n    return [0]", VISIBLE_TEST, printed="\n".join(HIDDEN))})
    leaks = find_leaks(course, "a1", files)
    assert leaks == {files[0]: sorted(HIDDEN)}


def test_a_hidden_test_printed_as_notebook_json_is_caught(tmp_path: Path) -> None:
    # Reading the source notebook and printing it shows the hidden lines inside JSON strings.
    dumped = nbformat.writes(source_notebook())
    course, files = make_course(tmp_path, {"eve": autograded("def topo_order(graph):\n    return [0]",
                                                             VISIBLE_TEST, printed=dumped)})
    assert HIDDEN[0] in find_leaks(course, "a1", files)[files[0]]


def test_instructor_solution_the_student_printed_is_caught(tmp_path: Path) -> None:
    course, files = make_course(tmp_path, {"eve": autograded("def topo_order(graph):\n    return [0]",
                                                             VISIBLE_TEST, printed=SOLUTION_LINE)})
    nbformat.write(source_with_solution(), course / "source" / "a1" / "a1.ipynb")
    leaks = find_all_leaks(course, "a1", files)
    assert [(leak.kind, leak.line) for leak in leaks[files[0]]] == [("instructor source", SOLUTION_LINE)]
    assert find_leaks(course, "a1", files)[files[0]] == [f"[instructor source] {SOLUTION_LINE}"]


def test_instructor_solution_typed_by_the_student_is_not_a_leak(tmp_path: Path) -> None:
    course, files = make_course(tmp_path, {"ada": autograded("def topo_order(graph):\n    " + SOLUTION_LINE,
                                                             VISIBLE_TEST)})
    nbformat.write(source_with_solution(), course / "source" / "a1" / "a1.ipynb")
    assert find_leaks(course, "a1", files) == {}


def test_another_students_answer_printed_into_feedback_is_caught(tmp_path: Path) -> None:
    bob_line = "return [n for n in reversed(kahn_queue(graph)) if n is not None]"
    course, files = make_course(tmp_path, {
        "bob": autograded("def topo_order(graph):\n    " + bob_line, VISIBLE_TEST),
        "eve": autograded("def topo_order(graph):\n    return [0]", VISIBLE_TEST,
                          printed="def topo_order(graph):\n    " + bob_line),
    })
    leaks = find_all_leaks(course, "a1", files)
    assert list(leaks) == [files[1]]
    assert [(leak.kind, leak.origin, leak.line) for leak in leaks[files[1]]] == [
        ("another student's work", "bob", bob_line)]


def test_a_forged_answer_flag_on_a_test_cell_does_not_make_its_output_own(tmp_path: Path) -> None:
    # The student marks the test cell as an answer and prints the hidden lines from it; answer cells are known
    # by their grade_id in the source notebook, so the forged flag changes nothing.
    nb = autograded("def topo_order(graph):\n    return [0]", VISIBLE_TEST)
    nb.cells[1].metadata.nbgrader["solution"] = True
    nb.cells[1].outputs = [new_output("stream", name="stdout", text="\n".join(HIDDEN))]
    course, files = make_course(tmp_path, {"eve": nb})
    assert find_leaks(course, "a1", files) == {files[0]: sorted(HIDDEN)}
