"""Build every chapter's mutants from the current solutions: ``python -m tests.course.mutants.build [OUT]``.

Without ``OUT`` it checks that every mutant applies and prints the counts per exercise; with ``OUT`` it also writes
``OUT/<chapter>/<answer>__<n>.py``, each a wrong answer cell headed by the mistake it plants, to read by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .spec import answer_cells, build, chapters, mutants


def built(chapter: str) -> list[tuple[object, str]]:
    """[(mutant, its answer cell's source)] of ``chapter``; raises StaleMutant or KeyError for a broken one."""
    solutions = answer_cells(chapter)  # graded exercises only: the challenge tier has no hidden tests
    out = []
    for m in mutants(chapter):
        if m.answer not in solutions:
            raise KeyError(f"{chapter}: no answer cell {m.answer!r} (have {sorted(solutions)})")
        out.append((m, build(m, solutions[m.answer])))
    return out


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    for chapter in chapters():
        pairs = built(chapter)
        counts = {a: 0 for a in answer_cells(chapter)}
        for m, src in pairs:
            counts[m.answer] += 1
            if out:
                n = counts[m.answer]
                path = out / chapter / f"{m.answer}__{n}.py"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"# mistake: {m.mistake}\n# a visible test should say: {m.says}\n{src}")
        print(f"{chapter}: {len(pairs)} mutants; " + ", ".join(f"{a} {n}" for a, n in counts.items()))


if __name__ == "__main__":
    main()
