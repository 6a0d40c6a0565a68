"""What a mutant is: a plausible wrong answer to one graded exercise, written as edits of the instructor's solution.

A chapter's mutants live in ``chapters/chNN.py`` as a list ``MUTANTS`` of :class:`Mutant`. Each one is built from
the *current* solution cell by :func:`build` (so a mutant follows the solution when the solution changes) and names
the mistake it plants and the words a visible test's message must use to name it (``says``, a regular expression,
case-insensitive). Example::

    Mutant("add_op_code", "b's gradient negated",
           edits=[("return grad, grad", "return grad, -grad")],
           says=r"gradient of b|second input")

``edits`` are ``(old, new)`` replacements: each ``old`` must occur exactly once in the solution cell, so a stale
mutant fails loudly instead of silently testing the solution. ``source=`` gives the whole wrong cell instead, for
mistakes that are rewrites rather than edits.

``alternatives/chNN.py`` lists ``ALTERNATIVES``: *correct* answers of another design than the solution's (another
algorithm, another decomposition), built the same way with :func:`Alternative`. They guard the other side: a test
strict enough to catch every mutant must still pass every honest design.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SOURCE = REPO / "assignments" / "source"


class StaleMutant(ValueError):
    """A mutant's edit no longer applies to the solution (its text is missing or repeated, or changes nothing)."""


@dataclass(frozen=True)
class Mutant:
    """One planted mistake in the answer cell ``answer`` (its grade_id)."""

    answer: str
    mistake: str
    says: str
    edits: list[tuple[str, str]] = field(default_factory=list)
    source: str | None = None
    correct: bool = False  # an alternative design that must pass everything, not a mistake


def Alternative(answer: str, design: str, *, edits: list[tuple[str, str]] | None = None,
                source: str | None = None) -> Mutant:
    """A correct answer to ``answer`` in another design (``design`` says which); see the module docstring."""
    return Mutant(answer, design, "", list(edits or []), source, correct=True)


def chapters() -> list[str]:
    """The course's chapters (the folders of assignments/source), in order."""
    return sorted(p.name for p in SOURCE.iterdir() if p.is_dir())


def notebook(chapter: str) -> dict:
    return json.loads((SOURCE / chapter / f"{chapter}.ipynb").read_text(encoding="utf-8"))


def text(cell: dict) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def answer_cells(chapter: str, challenges: bool = False) -> dict[str, str]:
    """{grade_id: solution source} of the chapter's graded exercises (its answer cells); the optional challenge
    tier's answer cells (``*_challenge_code``, never graded) only with ``challenges=True``."""
    out = {}
    for cell in notebook(chapter)["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution") and not meta.get("grade"):
            if challenges or not meta["grade_id"].endswith("_challenge_code"):
                out[meta["grade_id"]] = text(cell)
    return out


def _listed(folder: str, chapter: str, name: str) -> list[Mutant]:
    try:
        module = importlib.import_module(f"{__package__}.{folder}.ch{chapter[:2]}")
    except ModuleNotFoundError:
        return []
    return list(getattr(module, name))


def mutants(chapter: str) -> list[Mutant]:
    """The chapter's mutants (``chapters/chNN.py``), then its correct alternatives (``alternatives/chNN.py``)."""
    return _listed("chapters", chapter, "MUTANTS") + _listed("alternatives", chapter, "ALTERNATIVES")


def build(mutant: Mutant, solution: str) -> str:
    """The mutant's answer cell, made from ``solution``.

    Raises:
        StaleMutant: if an edit's text does not occur exactly once, or the result equals the solution.
    """
    if mutant.source is not None:
        out = mutant.source
    else:
        out = solution
        for old, new in mutant.edits:
            count = out.count(old)
            if count != 1:
                raise StaleMutant(f"{mutant.answer} / {mutant.mistake}: {old!r} occurs {count} times in the "
                                  f"solution, not once")
            out = out.replace(old, new)
    if out == solution:
        raise StaleMutant(f"{mutant.answer} / {mutant.mistake}: the mutant is the solution")
    if not mutant.correct:
        re.compile(mutant.says)
    return out
