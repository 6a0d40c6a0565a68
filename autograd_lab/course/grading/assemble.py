"""Build the job for one submission from the instructor's source notebook and the submission (trusted side).

No student code runs here. The template is the SOURCE notebook; from the submission only the text of answer cells
is taken, matched by ``grade_id`` against the source's solution cells (the first match wins). Everything else
(setup, helper, demo and test cells, metadata, the kernelspec) comes from the source, so damaged or forged metadata
in a submission can neither gain points nor cost a correct answer any: it is ignored, and :attr:`Job.ignored` says
what was ignored. An nbformat 3 submission is converted to nbformat 4 first.

From the job the grader sends the sandbox two parts (:mod:`autograd_lab.course.grading.exercise`):
:meth:`Job.public_cells` (the notebook as the learner sees it) and :meth:`Job.secret_tests` (each graded test's
hidden part without its judge). The judge gets :func:`judge_cells` (the source, solutions included).
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from autograd_lab.course.grading import testcell
from autograd_lab.course.grading.testcell import AuthoringError, TestCell

STUB = "# YOUR CODE HERE\nraise NotImplementedError()"

#: Kinds of code cell, decided by the source's nbgrader metadata.
ANSWER, TEST, HELPER, DEMO = "answer", "test", "helper", "demo"
#: The grade_id ending of a challenge test: a locked, ungraded test of an optional exercise (CONVENTIONS.md).
CHALLENGE_TEST = "_challenge_test"


@dataclass
class JobCell:
    """One code cell: ``kind`` is answer/test/helper/demo; ``points`` > 0 only for graded tests; ``source`` is the
    student's text for an answer cell and the instructor's for every other."""

    index: int  # position in the source notebook
    kind: str
    grade_id: str | None
    source: str
    points: float = 0.0
    test: TestCell | None = None  # the split of a graded test cell

    @property
    def graded(self) -> bool:
        return self.kind == TEST and self.points > 0

    @property
    def challenge_test(self) -> bool:
        """A challenge test: its outputs are for the learner (the feedback run), it decides nothing."""
        return self.kind == HELPER and is_challenge_test(self.grade_id)


@dataclass
class Job:
    """Everything needed to grade one notebook, and what was ignored while assembling it."""

    assignment: str
    notebook: str  # file name, e.g. 02_operators.ipynb
    template: NotebookNode  # the source notebook
    cells: list[JobCell]
    ignored: list[str] = field(default_factory=list)  # what the submission held that was not used
    unreadable: str | None = None  # why the submission could not be read at all (then only stubs are graded)

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.cells if c.kind == TEST)

    @property
    def answers(self) -> dict[str, str]:
        """``{grade_id: source}`` of the answer cells as graded (the seeds depend on them)."""
        return {c.grade_id or "": c.source for c in self.cells if c.kind == ANSWER}

    @property
    def tags(self) -> list[str]:
        """The grade_ids of the graded test cells, in notebook order."""
        return [c.grade_id or "" for c in self.cells if c.graded]

    def public_cells(self) -> list[dict[str, Any]]:
        """The sandbox's public part: every code cell as the learner sees it (test cells: the visible part), except
        the instructor's demo cells. Tests may not use names a demo cell binds (CONVENTIONS.md), and a demo (a training
        run, a drawing) says nothing about the submission while it can cost tens of seconds per student."""
        return [{"index": c.index, "kind": c.kind, "grade_id": c.grade_id,
                 "source": c.test.visible if c.test is not None else
                 (testcell.split(c.source)[0] if c.kind == TEST else c.source)} for c in self.cells if c.kind != DEMO]

    def feedback_only(self) -> list[int]:
        """Indices of the public cells the graded run skips: the challenge tests. Nothing graded may use what they
        bind (CONVENTIONS.md), the judge does not run them either, and one can cost as much as its exercise."""
        return [c.index for c in self.cells if c.challenge_test]

    def secret_tests(self) -> list[dict[str, Any]]:
        """The sandbox's secret part: each graded test's hidden part without its judge."""
        return [{"index": c.index, "grade_id": c.grade_id, "source": c.test.exercise}
                for c in self.cells if c.graded and c.test is not None]


def source_meta(cell: NotebookNode | dict) -> dict[str, Any]:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def cell_kind(cell: NotebookNode) -> str | None:
    """answer / test / helper / demo for a source code cell, None for markdown and raw cells."""
    if cell.get("cell_type") != "code":
        return None
    meta = source_meta(cell)
    if meta.get("solution"):
        return ANSWER
    if meta.get("grade"):
        return TEST
    if meta.get("locked"):
        return HELPER
    return DEMO


def is_challenge_test(grade_id: str | None) -> bool:
    return (grade_id or "").endswith(CHALLENGE_TEST)


def _text(source: Any) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def read_submission(path: Path) -> tuple[list[dict], dict, str | None]:
    """(cells, notebook metadata, problem) of a submitted notebook, read as plain JSON, never trusting it.

    An nbformat 3 notebook is converted with nbformat. A file that is not notebook JSON gives no cells and a problem
    message naming the file and what is wrong.
    """
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        return [], {}, f"{path.name} is not valid notebook JSON ({first})"
    if isinstance(raw, dict) and raw.get("nbformat") == 3:
        try:
            raw = nbformat.convert(nbformat.from_dict(raw), 4)
        except Exception as exc:
            return [], {}, f"{path.name} is an nbformat 3 notebook that could not be converted ({type(exc).__name__})"
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        return [], {}, f"{path.name} is not a notebook (no list of cells)"
    cells = [c for c in raw["cells"] if isinstance(c, dict)]
    meta: dict = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
    return cells, meta, None


def assemble(
    source_path: Path, submission_path: Path | None, release_path: Path | None = None, assignment: str = ""
) -> Job:
    """The job for one submitted notebook (``submission_path`` None: nothing was submitted; stubs are graded).

    ``release_path`` (the released notebook) supplies the stub of a missing answer cell; without it the stub is
    made from the source (:func:`stub_of`).

    Raises:
        AuthoringError: if a graded test cell of the source breaks the hidden-test contract (names the cell).
    """
    template = _read_notebook(source_path)
    kinds, tests = _source_facts(source_path)
    release = _read_notebook(release_path) if release_path and release_path.is_file() else None
    released = {source_meta(c).get("grade_id"): c for c in (release.cells if release else [])}
    job = Job(assignment or source_path.parent.name, source_path.name, template, [])

    sub_cells: list[dict] = []
    sub_meta: dict = {}
    if submission_path is not None:
        sub_cells, sub_meta, job.unreadable = read_submission(submission_path)
    else:
        job.unreadable = f"{source_path.name} was not submitted"
    answers, job.ignored = _pick_answers(sub_cells, template, kinds, released)
    if sub_meta.get("kernelspec") and sub_meta.get("kernelspec") != template.metadata.get("kernelspec"):
        job.ignored.append("the notebook's kernelspec was changed; ignored (the grader always uses its own Python)")

    for index, (cell, kind) in enumerate(zip(template.cells, kinds)):
        if kind is None:
            continue
        meta = source_meta(cell)
        gid = str(meta.get("grade_id", ""))
        if kind == ANSWER:
            text = answers.get(gid)
            if text is None:
                if job.unreadable is None:
                    job.ignored.append(f"answer cell '{gid}' is missing from the submission; the released stub was "
                                       f"graded in its place")
                text = _text(released[gid].source) if gid in released else stub_of(_text(cell.source))
            job.cells.append(JobCell(index, kind, gid, text))
        elif kind == TEST:
            points = float(meta.get("points", 0) or 0)
            job.cells.append(JobCell(index, kind, gid, _text(cell.source), points, tests.get(index)))
        else:
            job.cells.append(JobCell(index, kind, gid, _text(cell.source)))
    return job


def judge_cells(source_path: Path) -> list[dict[str, Any]]:
    """What the judge runs: the setup, helper and solution cells of the source as written, and each graded test's
    hidden part (judge included), as the graded run does: demo cells, visible parts and challenge tests are not
    part of it.

    Raises:
        AuthoringError: as :func:`assemble`.
    """
    template = _read_notebook(source_path)
    kinds, tests = _source_facts(source_path)
    out = []
    for index, (cell, kind) in enumerate(zip(template.cells, kinds)):
        gid = str(source_meta(cell).get("grade_id", ""))
        if kind == HELPER and is_challenge_test(gid):
            continue
        if kind in (HELPER, ANSWER):
            out.append({"index": index, "kind": kind, "grade_id": gid, "source": _text(cell.source)})
        elif index in tests:
            out.append({"index": index, "kind": TEST, "grade_id": gid, "source": tests[index].hidden})
    return out


def replaced_names(source_path: Path) -> list[str]:
    """Every name in the ``replaces=`` lists of the source's hidden tests (what the sandbox's library stubs).

    Raises:
        AuthoringError: as :func:`assemble`.
    """
    _, tests = _source_facts(source_path)
    return sorted({name for test in tests.values() for name in test.replaces})


def _source_facts(path: Path) -> tuple[list[str | None], dict[int, TestCell]]:
    """(cell kinds, graded test cells by index) of a source notebook, read once per version of the file."""
    stat = path.stat()
    return _facts_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _facts_cached(path: str, mtime_ns: int, size: int) -> tuple[list[str | None], dict[int, TestCell]]:
    template = _read_cached(path, mtime_ns, size)
    kinds = [cell_kind(c) for c in template.cells]
    tests = {}
    for index, (cell, kind) in enumerate(zip(template.cells, kinds)):
        meta = source_meta(cell)
        if kind == TEST and float(meta.get("points", 0) or 0) > 0:
            tests[index] = testcell.read(_text(cell.source), str(meta.get("grade_id", "")),
                                         f"{Path(path).name}, cell {index + 1}")
    return kinds, tests


def stub_of(source: str) -> str:
    """The student version of an answer cell, as nbgrader's ClearSolutions makes it: each ``### BEGIN SOLUTION`` ...
    ``### END SOLUTION`` region becomes ``# YOUR CODE HERE`` / ``raise NotImplementedError()`` at its indentation
    (a cell without the markers becomes :data:`STUB`)."""
    out: list[str] = []
    inside = False
    for line in source.splitlines():
        marker = line.strip()
        if marker == "### BEGIN SOLUTION":
            indent = line[: len(line) - len(line.lstrip())]
            out += [f"{indent}# YOUR CODE HERE", f"{indent}raise NotImplementedError()"]
            inside = True
        elif marker == "### END SOLUTION":
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out) if any("BEGIN SOLUTION" in line for line in source.splitlines()) else STUB


def _read_notebook(path: Path) -> NotebookNode:
    """The notebook at ``path``, parsed once per version of the file (a batch reads the same source N times).

    Callers must not modify it (:func:`autograded_notebook` works on a copy)."""
    stat = path.stat()
    return _read_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read_cached(path: str, mtime_ns: int, size: int) -> NotebookNode:
    return nbformat.read(path, as_version=4)


def _pick_answers(
    sub_cells: list[dict], template: NotebookNode, kinds: list[str | None], released: dict
) -> tuple[dict[str, str], list[str]]:
    """Answer texts by grade_id (first match wins) and the list of what else the submission held."""
    by_id = {source_meta(c).get("grade_id"): k for c, k in zip(template.cells, kinds) if source_meta(c)}
    # A cell whose nbgrader metadata was lost is still known by its cell id (the release keeps the source's ids).
    answer_by_cell_id = {c.get("id"): source_meta(c).get("grade_id") for c, k in zip(template.cells, kinds)
                         if k == ANSWER and c.get("id")}
    answer_by_cell_id.update({c.get("id"): gid for gid, c in released.items()
                              if gid and c.get("id") and by_id.get(gid) == ANSWER})
    answers: dict[str, str] = {}
    ignored: list[str] = []
    seen: set[str] = set()
    for cell in sub_cells:
        meta = source_meta(cell)
        gid = meta.get("grade_id")
        if (not isinstance(gid, str) or not gid) and not meta.get("grade") and not meta.get("locked"):
            gid = answer_by_cell_id.get(cell.get("id"))
            if gid and gid not in seen:
                ignored.append(f"answer cell '{gid}' had lost its nbgrader metadata; it was found by its cell id")
        if not isinstance(gid, str) or not gid:
            continue
        kind = by_id.get(gid)
        if gid in seen:
            ignored.append(f"cell id '{gid}' appears more than once; the first copy was used, the others ignored")
            continue
        seen.add(gid)
        if kind is None:
            if meta.get("grade") or meta.get("solution"):
                ignored.append(f"cell '{gid}' is not part of the assignment; it was ignored (its points do not "
                               f"count)")
            continue
        if kind != ANSWER:
            original = released.get(gid) or next(c for c in template.cells if source_meta(c).get("grade_id") == gid)
            if _text(cell.get("source")).strip() != _text(original.source).strip() and gid in released:
                ignored.append(f"read-only cell '{gid}' was edited; the instructor's copy was used")
            continue
        if cell.get("cell_type") != "code":
            ignored.append(f"answer cell '{gid}' was turned into a {cell.get('cell_type')} cell; its text was "
                           f"graded as code")
        if meta.get("grade") or meta.get("points"):
            ignored.append(f"answer cell '{gid}' was marked as graded; the marking was ignored (points come from "
                           f"the instructor's copy)")
        rel = released.get(gid)
        if rel is not None and "checksum" in meta and meta.get("checksum") != source_meta(rel).get("checksum"):
            ignored.append(f"the checksum of cell '{gid}' was changed; ignored")
        answers[gid] = _text(cell.get("source"))
    for cell, kind in zip(template.cells, kinds):
        gid = source_meta(cell).get("grade_id")
        if kind in (TEST, HELPER) and gid not in seen and sub_cells:
            ignored.append(f"cell '{gid}' was deleted; the instructor's copy was used")
    return answers, ignored


def autograded_notebook(job: Job, results: dict[int, dict]) -> NotebookNode:
    """The source notebook with the student's answers and the feedback run's outputs (``results``: by cell index,
    ``{"outputs", "error"}``; for a graded test also ``{"passed", "ename", "evalue"}``: the verdict).

    Test cells never hold an ``execute_result`` (nbgrader's partial-credit rule reads it): their values are stored
    as ``display_data``, and a failed test gets an ``error`` output that says why.
    """
    nb = copy.deepcopy(job.template)
    by_index = {c.index: c for c in job.cells}
    for index, cell in enumerate(nb.cells):
        if cell.get("cell_type") != "code":
            continue
        cell.execution_count = None
        cell.outputs = []
        job_cell = by_index.get(index)
        if job_cell is None:
            continue
        if job_cell.kind == ANSWER:
            cell.source = job_cell.source
        result = results.get(index, {})
        outputs = [nbformat.from_dict(o) for o in result.get("outputs", [])]
        error = result.get("error")
        if job_cell.kind != TEST and isinstance(error, dict) and error.get("ename"):
            outputs.append(nbformat.v4.new_output("error", ename=str(error["ename"]),
                                                  evalue=str(error.get("evalue", "")), traceback=[]))
        if job_cell.kind == TEST:
            outputs = [_no_execute_result(o) for o in outputs if o.get("output_type") != "error"]
            if job_cell.graded and not result.get("passed"):
                outputs.append(nbformat.v4.new_output("error", ename=str(result.get("ename", "TestFailed")),
                                                      evalue=str(result.get("evalue", "the test did not finish")),
                                                      traceback=[]))
        cell.outputs = outputs
    return nb


def _no_execute_result(output: NotebookNode) -> NotebookNode:
    if output.get("output_type") == "execute_result":
        return nbformat.v4.new_output("display_data", data=output.get("data", {}))
    return output


__all__ = ["ANSWER", "DEMO", "HELPER", "TEST", "AuthoringError", "Job", "JobCell", "assemble", "autograded_notebook",
           "cell_kind", "judge_cells", "read_submission", "replaced_names", "source_meta", "stub_of"]
