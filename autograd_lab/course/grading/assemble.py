"""Build the job that the sandbox runs from the instructor's source notebook and a submission (trusted side).

No student code runs here. The template is the SOURCE notebook (hidden tests included); from the submission only
the text of answer cells is taken, matched by ``grade_id`` against the source's solution cells (the first match
wins). Everything else (setup, helper, demo and test cells, metadata, checksums, the kernelspec) comes from the
source, so damaged or forged metadata in a submission can neither gain points nor cost a correct answer any: it is
ignored, and :attr:`Job.ignored` says what was ignored. Each answer cell is checked statically before anything
runs (:func:`autograd_lab.course.grading.static.check_answer_cell`); a refused cell is replaced by code that
raises :class:`AnswerRefused` naming the cell and line.
"""

from __future__ import annotations

import ast
import copy
import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

STUB = "# YOUR CODE HERE\nraise NotImplementedError()"

#: Kinds of code cell, decided by the source's nbgrader metadata.
ANSWER, TEST, HELPER, DEMO = "answer", "test", "helper", "demo"


@dataclass
class JobCell:
    """One code cell to run: ``kind`` is answer/test/helper/demo; ``points`` > 0 only for graded tests."""

    index: int  # position in the source notebook
    kind: str
    grade_id: str | None
    source: str  # what runs in the sandbox
    points: float = 0.0
    shown: str | None = None  # the student's text for an answer cell (shown in feedback), if different
    references: list[str] = field(default_factory=list)  # an answer's references, which it may not call

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "grade_id": self.grade_id, "source": self.source,
                "graded": self.kind == TEST and self.points > 0, "references": self.references}


@dataclass
class Job:
    """Everything needed to grade one notebook, and what was ignored or refused while assembling it."""

    assignment: str
    notebook: str  # file name, e.g. 02_operators.ipynb
    template: NotebookNode  # the source notebook
    cells: list[JobCell]
    ignored: list[str] = field(default_factory=list)  # what the submission held that was not used
    refused: dict[str, list[str]] = field(default_factory=dict)  # answer grade_id -> "line N: reason"
    unreadable: str | None = None  # why the submission could not be read at all (then only stubs are graded)
    seed_tags: list[str] = field(default_factory=list)  # tags passed to checks.grading_rng in the tests

    @property
    def max_score(self) -> float:
        return sum(c.points for c in self.cells if c.kind == TEST)


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


def _text(source: Any) -> str:
    if isinstance(source, list):
        return "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def read_submission(path: Path) -> tuple[list[dict], dict, str | None]:
    """(cells, notebook metadata, problem) of a submitted notebook, read as plain JSON, never trusting it.

    A file that is not notebook JSON gives no cells and a problem message.
    """
    try:
        raw = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        first = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        return [], {}, f"{path.name} is not valid notebook JSON ({first})"
    if not isinstance(raw, dict) or not isinstance(raw.get("cells"), list):
        return [], {}, f"{path.name} is not a notebook (no list of cells)"
    cells = [c for c in raw["cells"] if isinstance(c, dict)]
    meta: dict = raw["metadata"] if isinstance(raw.get("metadata"), dict) else {}
    return cells, meta, None


def assemble(
    source_path: Path, submission_path: Path | None, release_path: Path | None = None, assignment: str = ""
) -> Job:
    """The job for one submitted notebook (``submission_path`` None: nothing was submitted; stubs are graded).

    ``release_path`` (the released notebook) supplies the stub of a missing answer cell and the checksums a
    submission is compared with; without it the stub is ``raise NotImplementedError()``.
    """
    template = _read_notebook(source_path)
    facts = _source_facts(source_path)
    release = _read_notebook(release_path) if release_path and release_path.is_file() else None
    released = {source_meta(c).get("grade_id"): c for c in (release.cells if release else [])}
    kinds = facts.kinds
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
            stub = _text(released[gid].source) if gid in released else stub_of(_text(cell.source))
            text = answers.get(gid)
            if text is None:
                if job.unreadable is None:
                    job.ignored.append(f"answer cell '{gid}' is missing from the submission; the released stub was "
                                       f"graded in its place")
                text = stub
            # The released stub is the instructor's text: it is not checked (its top-level raise would be refused).
            refusals = [] if text == stub else check_answer(text, gid, facts.protected[index], facts.references[index],
                                                            facts.contexts[index])
            if refusals:
                job.refused[gid] = refusals
                run = refused_code(gid, refusals)
            else:
                run = text
            job.cells.append(JobCell(index, kind, gid, run, shown=text, references=list(facts.references[index])))
        elif kind == TEST:
            points = float(meta.get("points", 0) or 0)
            job.cells.append(JobCell(index, kind, gid, _text(cell.source), points))
        else:
            job.cells.append(JobCell(index, kind, gid, _text(cell.source)))
    job.seed_tags = list(facts.seed_tags)
    return job


@dataclass(frozen=True)
class _Facts:
    """What the grader reads from the source notebook once, whatever the submission: cell kinds, and per answer
    cell the names it may not rebind and the references its tests name; the tags of ``grading_rng`` calls."""

    kinds: list[str | None]
    protected: dict[int, set[str]]
    references: dict[int, list[str]]
    seed_tags: tuple[str, ...]
    contexts: dict[int, tuple[str, ...]]  # per answer cell, the sources of the locked helper cells above it


def _source_facts(path: Path) -> _Facts:
    stat = path.stat()
    return _facts_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _facts_cached(path: str, mtime_ns: int, size: int) -> _Facts:
    template = _read_cached(path, mtime_ns, size)
    kinds = [cell_kind(c) for c in template.cells]
    helpers = _protected_names(template, kinds)
    answers = [i for i, k in enumerate(kinds) if k == ANSWER]
    tags = sorted({tag for c, k in zip(template.cells, kinds) if k == TEST for tag in seed_tags(_text(c.source))})
    # The static check reads the helper cells' imports (what each notebook name is), so that re-importing a name
    # the setup cell imports is not taken for rebinding it.
    contexts = {i: tuple(_text(template.cells[j].source) for j in range(i) if kinds[j] == HELPER) for i in answers}
    return _Facts(kinds, {i: helpers - bound_names(_text(template.cells[i].source)) for i in answers},
                  {i: _references(template, kinds, i) for i in answers}, tuple(tags), contexts)


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


class _Binder(ast.NodeVisitor):
    """Names a cell binds at its top level (assignments, imports, def, class), not inside function bodies."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self.names.add(node.id)

    def visit_Import(self, node: ast.Import) -> None:
        self.names.update((a.asname or a.name).split(".")[0] for a in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.names.update(a.asname or a.name for a in node.names if a.name != "*")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.names.add(node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.names.add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return


def bound_names(source: str) -> set[str]:
    """Top-level names bound by ``source``; an unparsable cell binds none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    binder = _Binder()
    binder.visit(tree)
    return binder.names


def _protected_names(template: NotebookNode, kinds: list[str | None]) -> set[str]:
    names: set[str] = set()
    for cell, kind in zip(template.cells, kinds):
        if kind == HELPER:
            names |= bound_names(_text(cell.source))
    return names


def _references(template: NotebookNode, kinds: list[str | None], answer_index: int) -> list[str]:
    """Dotted ``reference=`` arguments of ``checks.assert_own_code`` in the tests of this exercise (the test cells
    after this answer cell, up to the next answer cell)."""
    refs: list[str] = []
    for cell, kind in zip(template.cells[answer_index + 1:], kinds[answer_index + 1:]):
        if kind == ANSWER:
            break
        if kind != TEST:
            continue
        try:
            tree = ast.parse(_text(cell.source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _call_name(node.func).endswith("assert_own_code"):
                for kw in node.keywords:
                    if kw.arg == "reference" and ast.unparse(kw.value) not in refs:
                        refs.append(ast.unparse(kw.value))
    return refs


def seed_tags(source: str) -> set[str]:
    """The constant tags of ``checks.grading_rng("tag")`` / ``grading_seed("tag")`` calls in a test cell."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    tags = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and _call_name(node.func).split(".")[-1] in ("grading_rng", "grading_seed")
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            tags.add(node.args[0].value)
    return tags


def _call_name(func: ast.expr) -> str:
    try:
        return ast.unparse(func)
    except Exception:  # pragma: no cover (unparse handles every expression node)
        return ""


def check_answer(source: str, grade_id: str | None, protected: set[str], references: list[str],
                 context: tuple[str, ...] = ()) -> list[str]:
    """Static refusals of one answer cell as ``"line N: reason"`` strings (empty: the cell may run); ``context``
    holds the sources of the instructor's helper cells above it (see :func:`static.check_answer_cell`)."""
    from autograd_lab.course.grading.static import check_answer_cell

    refusals = check_answer_cell(source, grade_id=grade_id or "", protected_names=frozenset(protected),
                                 references=tuple(references), context=context)
    return [f"line {r.line}: {r.message}" for r in refusals]


def refusal_message(grade_id: str | None, refusals: list[str]) -> str:
    return f"answer cell '{grade_id}' was refused by the grader and not run: " + "; ".join(refusals)


def refused_code(grade_id: str | None, refusals: list[str]) -> str:
    """Code that stands in for a refused answer cell: it raises AnswerRefused naming the cell and the reasons."""
    return f"raise AnswerRefused({refusal_message(grade_id, refusals)!r})\n"


def autograded_notebook(job: Job, results: dict[int, dict]) -> NotebookNode:
    """The source notebook with the student's answers and the captured outputs (``results``: by cell index).

    Test cells never hold an ``execute_result`` (nbgrader's partial-credit rule reads it): their values are stored
    as ``display_data``, and a failed test gets an ``error`` output from the harness's verdict.
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
            cell.source = job_cell.shown if job_cell.shown is not None else job_cell.source
        outputs = [nbformat.from_dict(o) for o in results.get(index, {}).get("outputs", [])]
        error = results.get(index, {}).get("error")
        if job_cell.kind != TEST and isinstance(error, dict) and error.get("ename"):
            outputs.append(nbformat.v4.new_output("error", ename=str(error["ename"]),
                                                  evalue=str(error.get("evalue", "")), traceback=[]))
        if job_cell.kind == TEST:
            outputs = [_no_execute_result(o) for o in outputs if o.get("output_type") != "error"]
            verdict = results.get(index, {})
            if not verdict.get("passed"):
                outputs.append(nbformat.v4.new_output("error", ename=verdict.get("ename", "TestFailed"),
                                                      evalue=verdict.get("evalue", "the test did not finish"),
                                                      traceback=[]))
        if job_cell.kind == ANSWER and job_cell.grade_id in job.refused:
            why = refusal_message(job_cell.grade_id, job.refused[job_cell.grade_id])
            outputs = [nbformat.v4.new_output("error", ename="AnswerRefused", evalue=why, traceback=[])]
        cell.outputs = outputs
    return nb


def _no_execute_result(output: NotebookNode) -> NotebookNode:
    if output.get("output_type") == "execute_result":
        return nbformat.v4.new_output("display_data", data=output.get("data", {}))
    return output
