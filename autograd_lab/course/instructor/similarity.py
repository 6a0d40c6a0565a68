"""A similarity report for one assignment: each answer against the references and against classmates' answers.

Retyping the reference by hand is plagiarism, not something a check at grading time can refuse, so the instructor
gets a table to read instead. Each answer cell's source is *normalised* before comparing, so that formatting,
comments, docstrings and the names of local variables do not hide a copy: the source is parsed, docstrings are
dropped, every function's parameters and locals are renamed ``v0, v1, ...`` in order of first use, and the tree is
printed back (``ast.unparse``). Two normalised sources are then compared with :class:`difflib.SequenceMatcher`
(``ratio()`` in [0, 1]; 1 means identical after normalising).

Compared, for every submitted answer cell:

- against the instructor's solution of that cell (the source notebook, solution markers removed);
- against the library objects the cell's hidden tests name as re-implemented (``checks.hidden_test(...,
  replaces=["autograd_lab.ops.AddOp"])``), their source read with :func:`inspect.getsource`;
- against the same cell of every other student.

The ratio is a pointer for a human, not a verdict: short cells (``return a + b``) are alike in every submission.
"""

from __future__ import annotations

import ast
import csv
import difflib
import inspect
import re
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import nbformat

_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$", re.MULTILINE)
_REPLACES = re.compile(r"replaces\s*=\s*[\[(]([^\])]*)[\])]")
_DOTTED = re.compile(r"[\"']((?:numpy|autograd_lab)(?:\.\w+)+)[\"']")


@dataclass(frozen=True)
class Match:
    """One comparison: ``student``'s answer ``grade_id`` against ``other`` (a student id, ``"solution"`` or
    ``"reference <dotted name>"``), with the ratio of their normalised sources and the shorter one's length."""

    student: str
    grade_id: str
    other: str
    ratio: float
    length: int


class _Renamer(ast.NodeTransformer):
    """Rename each function's parameters and locals to v0, v1, ... in order of first appearance."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        names: dict[str, str] = {}
        args = node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]:
            names.setdefault(arg.arg, f"v{len(names)}")
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.setdefault(sub.id, f"v{len(names)}")
        for sub in ast.walk(node):
            if isinstance(sub, ast.arg) and sub.arg in names:
                sub.arg = names[sub.arg]
            elif isinstance(sub, ast.Name) and sub.id in names:
                sub.id = names[sub.id]
        node.body = [self.visit(stmt) for stmt in node.body]
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def normalise(source: str) -> str:
    """``source`` without comments, docstrings, formatting or local names (see the module docstring); text that
    does not parse is only stripped of solution markers and blank space."""
    text = textwrap.dedent(_MARKER.sub("", source))
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return "\n".join(line.strip() for line in text.splitlines() if line.strip())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    tree = _Renamer().visit(tree)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            node.returns = None
            for arg in ast.walk(node.args):
                if isinstance(arg, ast.arg):
                    arg.annotation = None
    return ast.unparse(tree)


def ratio(a: str, b: str) -> float:
    """difflib's ratio of two normalised sources, compared line by line then character by character."""
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def _answer_cells(nb: nbformat.NotebookNode, answer_ids: set[str] | None = None) -> dict[str, str]:
    cells: dict[str, str] = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id")
        if cell.get("cell_type") == "code" and gid and (gid in answer_ids if answer_ids is not None
                                                         else meta.get("solution")):
            cells.setdefault(gid, cell.source)
    return cells


def _references_by_cell(nb: nbformat.NotebookNode) -> dict[str, list[str]]:
    """{answer grade_id: dotted names in the ``replaces=`` lists of the hidden tests that follow it}."""
    refs: dict[str, list[str]] = {}
    current = None
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution"):
            current = meta.get("grade_id")
            refs.setdefault(current, [])
        elif meta.get("grade") and current is not None:
            for ref in (r for listed in _REPLACES.findall(cell.source) for r in _DOTTED.findall(listed)):
                if ref not in refs[current]:
                    refs[current].append(ref)
    return refs


def _reference_source(dotted: str) -> str | None:
    from autograd_lab.course.checks import resolve

    try:
        return inspect.getsource(resolve(dotted))
    except (LookupError, OSError, TypeError):
        return None


def compare(answers: dict[str, dict[str, str]], solutions: dict[str, str],
            references: dict[str, list[str]]) -> list[Match]:
    """Every comparison for ``answers`` ({student: {grade_id: source}}), most similar first."""
    norm = {s: {g: normalise(src) for g, src in cells.items()} for s, cells in answers.items()}
    others: dict[str, dict[str, str]] = {g: {"solution": normalise(src)} for g, src in solutions.items()}
    for gid, dotted_names in references.items():
        for dotted in dotted_names:
            text = _reference_source(dotted)
            if text is not None:
                others.setdefault(gid, {})[f"reference {dotted}"] = normalise(text)
    matches = []
    students = sorted(norm)
    for i, student in enumerate(students):
        for gid, mine in norm[student].items():
            for label, theirs in others.get(gid, {}).items():
                matches.append(Match(student, gid, label, ratio(mine, theirs), min(len(mine), len(theirs))))
            for other in students[i + 1:]:
                if gid in norm[other]:
                    theirs = norm[other][gid]
                    matches.append(Match(student, gid, other, ratio(mine, theirs), min(len(mine), len(theirs))))
    return sorted(matches, key=lambda m: (-m.ratio, m.student, m.grade_id, m.other))


def similarity_report(course_dir: Path, assignment: str, out: Path | None = None) -> tuple[Path, list[Match]]:
    """Compare every submission of ``assignment`` and write the table as CSV.

    Reads ``source/<assignment>/*.ipynb`` (solutions and references) and ``submitted/*/<assignment>/*.ipynb``
    (answer cells known by the source's grade_ids; an unreadable notebook is skipped). Writes ``out`` (default
    ``course_dir/reports/<assignment>_similarity.csv``) with columns student, grade_id, compared_with, ratio,
    length; returns its path and the matches, most similar first.

    Raises:
        FileNotFoundError: if the assignment has no source notebook.
    """
    sources = sorted((course_dir / "source" / assignment).glob("*.ipynb"))
    if not sources:
        raise FileNotFoundError(f"no source notebook for {assignment} under {course_dir / 'source'}")
    solutions: dict[str, str] = {}
    references: dict[str, list[str]] = {}
    for path in sources:
        nb = nbformat.read(path, as_version=4)
        solutions.update(_answer_cells(nb))
        references.update(_references_by_cell(nb))
    answers: dict[str, dict[str, str]] = {}
    for path in sorted((course_dir / "submitted").glob(f"*/{assignment}/*.ipynb")):
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception:  # a damaged submission has no answers to compare
            continue
        answers.setdefault(path.parent.parent.name, {}).update(_answer_cells(nb, set(solutions)))
    matches = compare(answers, solutions, references)
    out = out or course_dir / "reports" / f"{assignment}_similarity.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "grade_id", "compared_with", "ratio", "length"])
        writer.writerows([m.student, m.grade_id, m.other, f"{m.ratio:.3f}", m.length] for m in matches)
    return out, matches


def format_matches(matches: Sequence[Match], threshold: float, min_length: int = 40) -> Iterable[str]:
    """Lines for the matches at or above ``threshold`` whose shorter source has at least ``min_length``
    characters (short cells look alike in every submission)."""
    for m in matches:
        if m.ratio >= threshold and m.length >= min_length:
            yield f"{m.ratio:.2f}  {m.student:<16} {m.grade_id:<28} ~ {m.other}"
