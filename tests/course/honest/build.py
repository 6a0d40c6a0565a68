"""Build the honest-style corpus: correct answers to every exercise of every chapter, written in many styles.

The grader must never refuse honest code for its style. Each *persona* below is a student who writes correct
answers with their own habits: re-imports of what the setup cell already imported, imports inside functions,
``getattr`` and ``str.format``, helper classes with ``__slots__`` and dunder methods, ``typing.NamedTuple`` and
``dataclasses.field(default_factory=...)``, ``functools.lru_cache``, ``match``, the walrus operator in
comprehensions, ``nonlocal`` and ``global``, generators and ``itertools``, ``np.add``/``np.append``/``np.sort``/
``np.insert``, ``self.__class__``, dicts of int constants, recursion to depth 900, debug prints left in.

A persona's answer is the instructor's solution with those habits woven in by :mod:`ast`: a block of helper
definitions at the top of the cell, and at the start of every function and method a call that exercises them.
The woven code never changes what the answer computes, so every persona must score full marks; a lost point is a
false refusal by the grader.

Run ``python -m tests.course.honest.build OUT`` to write, per chapter and persona, the answer cells as
``OUT/<chapter>/<persona>.py`` (sections ``# answer: <grade_id>``) to read by hand.
"""

from __future__ import annotations

import ast
import copy
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbformat import NotebookNode

#: Helper definitions, one block per habit; a persona's cell starts with the blocks of its habits.
BLOCKS: dict[str, str] = {
    "reimports": """\
import copy as _hs_copy
import functools
import itertools
import operator
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
""",
    "state": """\
_HS_STATE = {"calls": 0, "depth": 0, "limit": 900}
_HS_SEEN = set()
_HS_CALLS = 0
""",
    "classes": """\
class _HsVec:
    \"\"\"A tiny 2-vector with the dunder methods students like to write.\"\"\"

    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __add__(self, other):
        return self.__class__(self.x + other.x, self.y + other.y)

    def __call__(self):
        return self.x + self.y

    def __eq__(self, other):
        return isinstance(other, _HsVec) and (self.x, self.y) == (other.x, other.y)

    def __hash__(self):
        return hash((self.x, self.y))

    def __iter__(self):
        yield self.x
        yield self.y

    def __len__(self):
        return 2

    def __repr__(self):
        return "{}({!r}, {!r})".format(type(self).__name__, self.x, self.y)


class _HsPair(NamedTuple):
    first: int
    second: int


@dataclass
class _HsBox:
    items: list = field(default_factory=list)
""",
    "recursion": """\
def _hs_depth(n):
    return 0 if n == 0 else 1 + _hs_depth(n - 1)


@functools.lru_cache(maxsize=None)
def _hs_cached(n):
    return n * 2
""",
    "misc": """\
def _hs_misc(value):
    count = 0

    def bump():
        nonlocal count
        count += 1
        return count

    def evens(limit):
        for i in itertools.count():
            if i >= limit:
                return
            if i % 2 == 0:
                yield i

    match (value, bump()):
        case (None, n):
            kind = "none"
        case (int() | float(), n) if n > 0:
            kind = "number"
        case _:
            kind = "other"
    doubled = [y for x in range(4) if (y := x * 2) > 0]
    return kind, doubled, list(itertools.islice(evens(10), 3)), functools.reduce(operator.add, doubled)
""",
}

#: What the call at the start of every function does, per habit (``{self}`` is the method's first argument).
PREAMBLES: dict[str, str] = {
    "reimports": """\
import math as _hs_math
from collections import deque as _hs_deque
_hs_q = _hs_deque([_hs_math.pi])
""",
    "state": """\
global _HS_CALLS
_HS_CALLS += 1
_HS_STATE["calls"] = _HS_STATE["calls"] + 1
""",
    "debug": """\
if "{name}" not in _HS_SEEN:
    _HS_SEEN.add("{name}")
    print("debug: {name} called")
""",
    "classes": """\
_hs_v = _HsVec(1, 2) + _HsVec(3, 4)
assert tuple(_hs_v) == (4, 6) and _hs_v() == 10 and len(_hs_v) == 2 and _hs_v == _HsVec(4, 6)
_hs_b = _HsBox()
_hs_b.items.append(_HsPair(1, 2))
""",
    "reflection": """\
_hs_add = getattr(np, "add")
assert _hs_add(1, 2) == 3 and "{{}}+{{}}".format(1, 2) == "1+2" and operator.add(1, 2) == 3
assert _hs_copy.deepcopy([1, [2]]) == [1, [2]]
_hs_arr = np.sort(np.insert(np.append(np.array([3, 1]), 2), 0, 0))
assert list(_hs_arr) == [0, 1, 2, 3]
""",
    "self": """\
_hs_name = {self}.__class__.__name__
""",
    "recursion": """\
if not _HS_STATE["depth"]:
    _HS_STATE["depth"] = _hs_depth(_HS_STATE["limit"])
assert _hs_cached(21) == 42
""",
    "misc": """\
assert _hs_misc(3)[0] == "number"
""",
}


@dataclass(frozen=True)
class Persona:
    name: str
    habits: tuple[str, ...]
    describe: str


PERSONAS: tuple[Persona, ...] = (
    Persona("plain", (), "the instructor's solution as it is"),
    Persona("tidy_engineer", ("reimports", "state", "reflection"),
            "re-imports, getattr/str.format/operator/copy, np.add/append/sort/insert, a dict of ints, global"),
    Persona("debugger", ("reimports", "state", "debug", "self"), "debug prints left in, self.__class__"),
    Persona("pythonista", ("reimports", "classes", "misc"),
            "__slots__, __add__/__call__/__eq__/__hash__/__iter__, NamedTuple, field(default_factory), match, "
            "walrus, nonlocal, generators, itertools, functools.reduce"),
    Persona("recursive", ("reimports", "state", "recursion"), "recursion to depth 900 and lru_cache"),
    Persona("kitchen_sink", ("reimports", "state", "classes", "recursion", "misc", "debug", "reflection", "self"),
            "every habit at once"),
)

_BLOCK_ORDER = ("reimports", "state", "classes", "recursion", "misc")


class _Weaver(ast.NodeTransformer):
    """Inserts the persona's preamble at the start of every function and method not nested in a function."""

    def __init__(self, habits: tuple[str, ...]) -> None:
        self.habits = habits
        self.in_function = 0

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if self.in_function:
            return node
        self.in_function += 1
        self.generic_visit(node)
        self.in_function -= 1
        args = node.args.posonlyargs + node.args.args
        is_method = bool(args) and args[0].arg in ("self", "cls")
        lines = []
        for habit in self.habits:
            text = PREAMBLES.get(habit)
            if text is None or (habit == "self" and not (is_method and args[0].arg == "self")):
                continue
            lines.append(text.format(name=node.name, self=args[0].arg if is_method else ""))
        if not lines:
            return node
        preamble = ast.parse("".join(lines)).body
        docstring = (node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
                     and isinstance(node.body[0].value.value, str))
        at = 1 if docstring else 0
        node.body[at:at] = preamble
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]


def weave(source: str, persona: Persona) -> str:
    """The answer ``source`` (a solution cell, markers and all) written in ``persona``'s style."""
    if not persona.habits:
        return source
    tree = ast.parse(source)
    tree = _Weaver(persona.habits).visit(tree)
    ast.fix_missing_locations(tree)
    needed = {"reimports", *persona.habits}  # the preambles use the re-imported modules
    if needed & {"debug", "recursion"}:
        needed.add("state")  # where they keep what they saw
    blocks = [BLOCKS[h] for h in _BLOCK_ORDER if h in needed]
    return "\n\n".join(b.rstrip("\n") for b in blocks) + "\n\n\n" + ast.unparse(tree) + "\n"


def _gid(cell: NotebookNode) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def answers(source: NotebookNode) -> dict[str, str]:
    """{grade_id: solution source} of every answer cell of a source notebook, challenges included."""
    return {_gid(c): c.source for c in source.cells
            if c.cell_type == "code" and c.get("metadata", {}).get("nbgrader", {}).get("solution")}


def submission(release: NotebookNode, source: NotebookNode, persona: Persona) -> NotebookNode:
    """The release (what a student receives) with every answer cell written by ``persona``."""
    written = {gid: weave(text, persona) for gid, text in answers(source).items()}
    nb = copy.deepcopy(release)
    for cell in nb.cells:
        if _gid(cell) in written:
            cell.source = written[_gid(cell)]
    return nb


def count_answers(source: NotebookNode) -> int:
    """How many honest answers the corpus holds for this chapter (answer cells × personas)."""
    return len(answers(source)) * len(PERSONAS)


def main(out: Path) -> None:
    root = Path(__file__).resolve().parents[3] / "assignments" / "source"
    total = 0
    for path in sorted(root.glob("*/*.ipynb")):
        source = nbformat.read(path, as_version=4)
        for persona in PERSONAS:
            target = out / path.parent.name / f"{persona.name}.py"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("".join(f"# answer: {gid}\n{weave(text, persona)}\n"
                                      for gid, text in answers(source).items()), encoding="utf-8")
        total += count_answers(source)
    print(f"{total} honest answers in {len(PERSONAS)} styles written below {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("honest-corpus"))
