"""A graded test cell, read statically: its visible part, its hidden part, and what the sandbox may see of it.

A test cell (assignments/CONVENTIONS.md) is a visible part, then ``### BEGIN HIDDEN TESTS``, then a hidden part
made only of function definitions and exactly one call ``checks.hidden_test("<the cell's grade_id>", inputs=...,
exercise=..., judge=..., replaces=[...])``. Nothing here runs the cell: it is parsed with :mod:`ast`, on the trusted
side, from the instructor's source notebook.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

BEGIN = "### BEGIN HIDDEN TESTS"
END = "### END HIDDEN TESTS"


class AuthoringError(ValueError):
    """A source notebook's test cell does not follow the hidden-test contract; the message names the cell."""


@dataclass(frozen=True)
class TestCell:
    """One graded test cell of a source notebook, split and checked.

    Attributes:
        grade_id: the cell's ``grade_id`` (also the ``hidden_test`` tag).
        visible: the visible part's source (may be empty).
        hidden: the hidden part's source, as the instructor wrote it (runs only in the judge).
        exercise: the hidden part without the ``judge=`` function and argument (what the sandbox receives).
        replaces: the dotted names of its ``replaces=`` list.
    """

    grade_id: str
    visible: str
    hidden: str
    exercise: str
    replaces: tuple[str, ...]


def split(source: str) -> tuple[str, str | None]:
    """(visible part, hidden part or None) of a test cell's source, split at the first :data:`BEGIN` line.

    The hidden part is padded with blank lines so its line numbers are those of the whole cell.
    """
    lines = source.splitlines(True)
    at = next((i for i, line in enumerate(lines) if line.strip().startswith(BEGIN)), None)
    if at is None:
        return source, None
    return "".join(lines[:at]), "\n" * at + "".join(lines[at:])


def _is_hidden_test_call(node: ast.stmt) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    func = node.value.func
    return (isinstance(func, ast.Attribute) and func.attr == "hidden_test" and isinstance(func.value, ast.Name)
            and func.value.id == "checks")


def read(source: str, grade_id: str, where: str) -> TestCell:
    """Split and check one graded test cell; ``where`` names it in errors (``"90_fixture.ipynb, cell 5"``).

    Raises:
        AuthoringError: naming the cell when it has no hidden part, a part does not parse, the hidden part holds
            anything but function definitions and one ``checks.hidden_test`` call, the call's tag is not the
            cell's ``grade_id``, ``inputs=``/``exercise=`` are missing, ``judge=`` is not a function defined in the
            hidden part, or ``replaces=`` is not a literal list or tuple of strings.
    """
    def fail(why: str) -> AuthoringError:
        return AuthoringError(f"{where} (test cell '{grade_id}'): {why} (assignments/CONVENTIONS.md, 'Exercise and "
                              f"judge')")

    visible, hidden = split(source)
    if hidden is None:
        raise fail(f"no '{BEGIN}' line: every graded test cell needs a hidden part")
    try:
        ast.parse(visible)
        tree = ast.parse(hidden)
    except SyntaxError as exc:
        why = f"({exc.msg}, line {exc.lineno}); the {BEGIN} line must be at the top level"
        raise fail(f"it does not parse {why}") from None
    defs = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    calls = [node for node in tree.body if _is_hidden_test_call(node)]
    others = [node for node in tree.body if not isinstance(node, ast.FunctionDef) and not _is_hidden_test_call(node)]
    if others:
        raise fail(f"line {others[0].lineno} of the cell, in the hidden part, is neither a function definition nor "
                   f"the checks.hidden_test call")
    if len(calls) != 1:
        raise fail(f"the hidden part must call checks.hidden_test exactly once, not {len(calls)} times")
    first = calls[0]
    assert isinstance(first, ast.Expr)
    call = first.value
    assert isinstance(call, ast.Call)
    if not (len(call.args) == 1 and isinstance(call.args[0], ast.Constant) and call.args[0].value == grade_id):
        raise fail(f"checks.hidden_test's first argument must be the string {grade_id!r} (the cell's grade_id)")
    keywords = {kw.arg: kw.value for kw in call.keywords}
    if None in keywords:
        raise fail("checks.hidden_test takes no **kwargs")
    for needed in ("inputs", "exercise"):
        if needed not in keywords:
            raise fail(f"checks.hidden_test needs {needed}=")
    judge = keywords.get("judge")
    if judge is not None and not (isinstance(judge, ast.Name) and judge.id in defs):
        raise fail("judge= must name a function defined in the hidden part")
    replaces = keywords.get("replaces")
    names: tuple[str, ...] = ()
    if replaces is not None:
        if not (isinstance(replaces, (ast.List, ast.Tuple)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in replaces.elts)):
            raise fail("replaces= must be a literal list or tuple of strings")
        names = tuple(e.value for e in replaces.elts)  # type: ignore[attr-defined]
    return TestCell(grade_id, visible, hidden, _without_judge(hidden, tree, judge), names)


def _without_judge(hidden: str, tree: ast.Module, judge: ast.expr | None) -> str:
    """The hidden part with the judge's definition and the ``judge=`` argument blanked out, line numbers kept."""
    if judge is None:
        return hidden
    assert isinstance(judge, ast.Name)
    lines = hidden.splitlines(True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == judge.id:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            for i in range(first - 1, node.end_lineno or node.lineno):
                lines[i] = "\n"
    text = "".join(lines)
    call = next(node.value for node in ast.parse(text).body
                if _is_hidden_test_call(node) and isinstance(node, ast.Expr))
    assert isinstance(call, ast.Call)
    call.keywords = [kw for kw in call.keywords if kw.arg != "judge"]
    out = text.splitlines(True)
    start, end = call.lineno - 1, (call.end_lineno or call.lineno)
    statement = "".join(out[start:end])
    indent = statement[: len(statement) - len(statement.lstrip())]
    replacement = (indent + ast.unparse(call)).splitlines(True)
    replacement[-1] = replacement[-1].rstrip("\n") + "\n"
    return "".join(out[:start] + replacement + ["\n"] * (end - start - len(replacement)) + out[end:])


__all__ = ["BEGIN", "END", "AuthoringError", "TestCell", "read", "split"]
