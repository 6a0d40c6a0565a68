"""Build the batch of student submissions that the autograding pipeline test grades.

Each case starts from the released notebook (what a student receives) and the source notebook (the instructor's
solution) of the fixture assignment, and damages it the way real submissions get damaged.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import nbformat
from nbformat import NotebookNode


def _gid(cell: NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def full_solution(release: NotebookNode, source: NotebookNode) -> NotebookNode:
    """The release with every answer cell filled in from the source (hidden tests stay out: locked cells are the
    release's)."""
    answers = {_gid(c): c.source for c in source.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if _gid(cell) in answers:
            cell.source = answers[_gid(cell)]
    return nb


def _cell(nb: NotebookNode, gid: str) -> NotebookNode:
    return next(c for c in nb.cells if _gid(c) == gid)


def _without(nb: NotebookNode, gid: str) -> NotebookNode:
    nb.cells = [c for c in nb.cells if _gid(c) != gid]
    return nb


def _duplicate(nb: NotebookNode, gid: str) -> NotebookNode:
    i = next(i for i, c in enumerate(nb.cells) if _gid(c) == gid)
    twin = copy.deepcopy(nb.cells[i])
    twin["id"] = twin.get("id", "cell") + "-copy"
    nb.cells.insert(i + 1, twin)
    return nb


def _prepend(nb: NotebookNode, gid: str, code: str) -> NotebookNode:
    cell = _cell(nb, gid)
    cell.source = code + "\n" + cell.source
    return nb


def _replace(nb: NotebookNode, gid: str, code: str) -> NotebookNode:
    _cell(nb, gid).source = code
    return nb


def _insert_after(nb: NotebookNode, gid: str, code: str) -> NotebookNode:
    i = next(i for i, c in enumerate(nb.cells) if _gid(c) == gid)
    nb.cells.insert(i + 1, nbformat.v4.new_code_cell(code))
    return nb


# A line a student may well write in a scratch cell of their own that a hidden test of the fixture also holds.
SHARED_WITH_HIDDEN_TEST = '    y = AddOp()(Variable.from_numpy(x["a"]), Variable.from_numpy(x["b"]))'


# A forward pass that never returns: the graded test that calls it must be stopped at the per-cell limit.
INFINITE_FORWARD = """class AddOp(Operator):
    def forward(self, a, b):
        while True:
            pass

    def backward(self, gy):
        return [gy, gy]
"""
# A correct answer that prints megabytes whenever it is called.
LOUD_SUM_OF_SQUARES = """def sum_of_squares(x):
    print('x' * 3_000_000)
    for i in range(20_000):
        print(i)
    return float(np.sum(np.square(x)))
"""
# A scratch function in the answer cell holding a line that a hidden test also holds.
SCRATCH_FUNCTION = "def scratch(x):\n" + SHARED_WITH_HIDDEN_TEST + "\n    return y\n"

# Forgeries: each passes the visible test of sum_of_squares (1 point) without computing it, or tries to reach the
# grade some other way. None may earn that point; the AddOp tests (5 points) are answered honestly.
FORGERIES = {
    # ends the process with status 0 as soon as it is called on hidden inputs
    "exit_early": "def sum_of_squares(x):\n    if len(x) == 2:\n        return 5.0\n    import os\n    os._exit(0)\n",
    # writes a well-formed result for its test, and "done", to every descriptor, then answers wrongly
    "write_every_fd": (
        "import base64, json, os\nfrom autograd_lab.course.grading import exchange\n"
        "for fd in range(3, 51):\n    for record in ({'event': 'result', 'grade_id': 'sum_of_squares_test', "
        "'data': base64.b64encode(exchange.encode({'s': 5.0})).decode()}, {'event': 'public_done'}, "
        "{'event': 'done'}):\n        try:\n            os.write(fd, (json.dumps(record) + '\\n').encode())\n"
        "        except OSError:\n            pass\n"
        "def sum_of_squares(x):\n    return 5.0\n"),
    # patches NumPy, the checks module and the library's classes: the judge runs none of it
    "monkeypatch": (
        "from autograd_lab.course import checks\nimport autograd_lab\n"
        "np.allclose = lambda *a, **k: True\nnp.array_equal = lambda *a, **k: True\n"
        "checks.compare = lambda *a, **k: None\nchecks.HiddenTest.decide = lambda *a, **k: None\n"
        "checks.form_difference = lambda *a, **k: None\nautograd_lab.Variable.__eq__ = lambda *a: True\n"
        "def sum_of_squares(x):\n    return 5.0\n"),
    "returns_nan": "def sum_of_squares(x):\n    return 5.0 if len(x) == 2 else float('nan')\n",
    "huge_data": "def sum_of_squares(x):\n    return 5.0 if len(x) == 2 else np.zeros(6_000_000)\n",
    "lying_float": ("class Anything(float):\n    def __eq__(self, other):\n        return True\n"
                    "    __hash__ = float.__hash__\n"
                    "def sum_of_squares(x):\n    return Anything(0.0)\n"),
    "pickled": ("import pickle\ndef sum_of_squares(x):\n    return 5.0 if len(x) == 2 else pickle.dumps({'s': 5.0})\n"),
    "object_array": "def sum_of_squares(x):\n    return 5.0 if len(x) == 2 else np.array([object()])\n",
}
# An honest answer that prints its inputs and raises on a changed copy: its hidden inputs must not reach feedback.
PRINTS_INPUTS = ("def sum_of_squares(x):\n    print('INPUTS', repr(x.tolist()))\n"
                 "    try:\n        raise ValueError(repr(x.tolist()))\n    except ValueError as e:\n"
                 "        print('ERROR', e)\n    return float(np.sum(np.square(x)))\n")

Case = Callable[[NotebookNode, NotebookNode], NotebookNode | str]


def _answered(gid: str, code: str) -> Case:
    """The full solution with answer cell ``gid`` replaced by ``code``."""
    return lambda rel, src: _replace(full_solution(rel, src), gid, code)


CASES: dict[str, Case] = {
    "full": full_solution,
    "blank": lambda rel, src: copy.deepcopy(rel),
    "malformed_json": lambda rel, src: '{"cells": [ {"cell_type": "code", ',
    "duplicate_id": lambda rel, src: _duplicate(full_solution(rel, src), "add_op_forward_test"),
    "deleted_test": lambda rel, src: _without(full_solution(rel, src), "add_op_backward_test"),
    "edited_locked_test": lambda rel, src: _replace(copy.deepcopy(rel), "add_op_forward_test", "pass"),
    "deleted_setup": lambda rel, src: _without(full_solution(rel, src), "setup"),
    "loop_at_top_level": lambda rel, src: _prepend(full_solution(rel, src), "add_op_code", "while True:\n    pass\n"),
    "infinite_loop": lambda rel, src: _replace(full_solution(rel, src), "add_op_code", INFINITE_FORWARD),
    "kernel_death": lambda rel, src: _prepend(full_solution(rel, src), "sum_of_squares_code",
                                              "import os\nos._exit(1)\n"),
    "memory_hog": lambda rel, src: _replace(
        full_solution(rel, src), "sum_of_squares_code",
        "def sum_of_squares(x):\n    hog = [bytearray(200_000_000)]\n    while True:\n"
        "        hog.append(hog[-1] * 2)\n"),
    "imports_reference": lambda rel, src: _replace(full_solution(rel, src), "add_op_code",
                                                   "from autograd_lab.ops import AddOp"),
    "prints_hidden_inputs": lambda rel, src: _replace(full_solution(rel, src), "sum_of_squares_code", PRINTS_INPUTS),
    **{f"forge_{name}": _answered("sum_of_squares_code", code) for name, code in FORGERIES.items()},
    "subclasses_reference": lambda rel, src: _replace(full_solution(rel, src), "add_op_code",
                                                      "class AddOp(autograd_lab.ops.AddOp):\n    pass"),
    "huge_output": lambda rel, src: _replace(full_solution(rel, src), "sum_of_squares_code", LOUD_SUM_OF_SQUARES),
    "shares_hidden_line": lambda rel, src: _prepend(full_solution(rel, src), "add_op_code", SCRATCH_FUNCTION),
    # The stub still raises; the answer cell and an added cell end with a number, displayed as an execute_result
    # (nbgrader's partial-credit rule read the first execute_result of a cell as its score).
    "stub_with_numeric_result": lambda rel, src: _insert_after(
        _replace(copy.deepcopy(rel), "add_op_code", _cell(rel, "add_op_code").source + "\n6.0"), "add_op_code", "6.0"),
}


def write_batch(
    release_path: Path, source_path: Path, out_root: Path, assignment: str, cases: dict[str, Case] | None = None
) -> dict[str, Path]:
    """Write every case (default: all of CASES) as ``out_root/students/<case>/<assignment>/<notebook>``."""
    release = nbformat.read(release_path, as_version=4)
    source = nbformat.read(source_path, as_version=4)
    written = {}
    for name, make in (cases or CASES).items():
        path = out_root / "students" / name / assignment / release_path.name
        path.parent.mkdir(parents=True, exist_ok=True)
        result = make(release, source)
        if isinstance(result, str):
            path.write_text(result, encoding="utf-8")
        else:
            nbformat.write(result, path)
        written[name] = path
    return written


def grade_solution_variants(tmp: Path, chapter: str, edits: dict[str, Callable[[NotebookNode], None] | None],
                            ) -> dict:
    """Release the real ``chapter`` in a copy of the course under ``tmp``, submit its full solution once per entry
    of ``edits`` (changed in place by ``edits[name]`` first; None: as it is), and grade them all with the sandboxed
    grader on 2 jobs. Returns the reports by student name."""
    from autograd_lab.course import instructor

    from .conftest import copy_course

    course = copy_course(tmp / "course", which=(chapter,))
    instructor.release(course, tmp / "notebooks")
    release = nbformat.read(course / "release" / chapter / f"{chapter}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / chapter / f"{chapter}.ipynb", as_version=4)
    for name, edit in edits.items():
        nb = full_solution(release, source)
        if edit is not None:
            edit(nb)
        path = course / "submitted" / name / chapter / f"{chapter}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(nb, path)
    return {r.student: r for r in instructor.autograde(course, chapter, jobs=2)}
