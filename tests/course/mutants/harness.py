"""Run a chapter's mutants through its tests: ``python -m tests.course.mutants.harness [CHAPTER ...]``.

For every mutant (:mod:`.spec`) the harness asks two questions, the ones the grader and the learner ask:

- **hidden:** does the judge refuse it? At least one graded test's hidden part must fail: the mutant's exercise
  results, computed with the chapter's stubbed library from a seed, are decided by the real judge
  (:func:`autograd_lab.course.grading.judge.decide`) against the instructor's solution on the same seed.
- **visible:** does a visible test fail in the learner's notebook (whole library, "Run All" order), and does the
  first failing test's message name the mistake (the mutant's ``says`` pattern)?

The solution itself runs through the same three sides first and must pass everything, so a harness fault cannot
pass for a caught mutant. Prints one line per chapter (counts and rates) and, with ``-v``, one per mutant.
"""

from __future__ import annotations

import base64  # noqa: F401 - the sides' wire format
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograd_lab.course.grading import assemble, stubs, testcell

from .build import built
from .spec import REPO, SOURCE, Mutant, answer_cells, chapters

CELL_SECONDS = 60.0


@dataclass
class Outcome:
    """What the tests made of one mutant."""

    mutant: Mutant
    hidden_caught: bool
    visible_caught: bool
    named: bool
    first_message: str  # the first failing visible test's grade_id and message ("" if none failed)
    hidden_messages: list[str]


@dataclass
class ChapterReport:
    chapter: str
    outcomes: list[Outcome]
    per_answer: dict[str, int]
    solution_problems: list[str]

    @property
    def mutants(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.mutant.correct]

    @property
    def refused_alternatives(self) -> list[Outcome]:
        """Correct answers of another design that a visible or a hidden test refused (must be none)."""
        return [o for o in self.outcomes if o.mutant.correct and (o.visible_caught or o.hidden_caught)]

    @property
    def hidden_rate(self) -> float:
        return sum(o.hidden_caught for o in self.mutants) / max(1, len(self.mutants))

    @property
    def visible_rate(self) -> float:
        return sum(o.visible_caught for o in self.mutants) / max(1, len(self.mutants))

    @property
    def named_rate(self) -> float:
        return sum(o.visible_caught and o.named for o in self.mutants) / max(1, len(self.mutants))

    def line(self) -> str:
        n = len(self.mutants)
        alt = len(self.outcomes) - n
        return (f"{self.chapter:34s} {n:4d} mutants ({alt} correct alternatives, {len(self.refused_alternatives)} "
                f"refused) over {len(self.per_answer):2d} exercises (min "
                f"{min(self.per_answer.values(), default=0)} each): hidden fail {self.hidden_rate:6.1%}, visible "
                f"fail {self.visible_rate:6.1%}, visible fail naming the mistake {self.named_rate:6.1%}")


def _jobs(chapter: str) -> tuple[list[dict], list[dict], list[dict], list[str]]:
    path = SOURCE / chapter / f"{chapter}.ipynb"
    nb = nbformat.read(path, as_version=4)
    kinds, tests = assemble._source_facts(path)
    public, graded = [], []
    for index, (cell, kind) in enumerate(zip(nb.cells, kinds)):
        if kind in (None, assemble.DEMO):
            continue
        gid = assemble.source_meta(cell).get("grade_id")
        src = cell.source if isinstance(cell.source, str) else "".join(cell.source)
        if kind == assemble.TEST:
            public.append({"index": index, "kind": kind, "grade_id": gid, "source": testcell.split(src)[0]})
            if index in tests:
                graded.append({"index": index, "kind": kind, "grade_id": gid, "source": tests[index].exercise})
        else:
            public.append({"index": index, "kind": kind, "grade_id": gid, "source": src})
            graded.append({"index": index, "kind": kind, "grade_id": gid, "source": src})
    return public, graded, assemble.judge_cells(path), assemble.replaced_names(path)


def _side(side: str, job: dict, work: Path, pythonpath: str) -> subprocess.Popen:
    (work / f"{side}.job.json").write_text(json.dumps(job))
    env = dict(os.environ, PYTHONPATH=pythonpath, OPENBLAS_NUM_THREADS="1", MPLBACKEND="agg")
    return subprocess.Popen([sys.executable, "-m", "tests.course.mutants.side", side, str(work / f"{side}.job.json"),
                             str(work / f"{side}.out.json")], cwd=work, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def _wait(proc: subprocess.Popen, side: str, work: Path) -> dict:
    _, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"the {side} side failed ({proc.returncode}):\n{err[-3000:]}")
    return json.loads((work / f"{side}.out.json").read_text())


def run_chapter(chapter: str, salt: str = "mutants") -> ChapterReport:
    """Run every mutant of ``chapter`` (and the solution) through its visible and hidden tests."""
    pairs = built(chapter)
    public, graded, judged, replaced = _jobs(chapter)
    index_of = {c["grade_id"]: c["index"] for c in public if c["kind"] == assemble.ANSWER}
    by_cell: dict[str, list[str]] = {}
    keys = []
    for m, src in pairs:
        cell = str(index_of[m.answer])
        keys.append(f"{cell}:{len(by_cell.setdefault(cell, []))}")
        by_cell[cell].append(src)
    with tempfile.TemporaryDirectory(prefix="mutants-") as tmp:
        work = Path(tmp)
        package = stubs.stubbed_package(replaced, work / "cache")
        base = {"mutants": by_cell, "seed": salt, "cell_seconds": CELL_SECONDS}
        # The side modules come from the repository; the stubbed copy shadows its autograd_lab.
        fb = _side("feedback", {**base, "cells": public}, work, str(REPO))
        gr = _side("graded", {**base, "cells": graded}, work, f"{package.parent}{os.pathsep}{REPO}")
        feedback, graded_out = _wait(fb, "feedback", work), _wait(gr, "graded", work)
        runs = [graded_out["solution"].get("results", {})] + [graded_out["mutants"][k].get("results", {})
                                                                for k in keys]
        judge = _wait(_side("judge", {**base, "cells": judged, "data": runs}, work, str(REPO)), "judge", work)
    problems = [f"judge side: cell {i} raised {e}" for i, e in judge.pop("__errors__", [])]
    verdicts = {gid: r.get("verdicts") for gid, r in judge.items()}
    for gid, r in judge.items():
        if not r.get("verdicts"):
            problems.append(f"judge side: {gid}: {r}")
    sol = feedback["solution"]
    problems += [f"visible test {g} fails on the solution: {e}: {v}" for g, e, v in sol.get("failures", [])]
    if "crash" in sol:
        problems.append(f"feedback side crashed on the solution: {sol['crash']}")
    for gid, vs in verdicts.items():
        if vs and vs[0] is not None and not vs[0][0]:
            problems.append(f"hidden test {gid} refuses the solution: {vs[0][1]}")
    outcomes = []
    for n, ((m, _), key) in enumerate(zip(pairs, keys), start=1):
        fails = feedback["mutants"][key].get("failures", [])
        crash = feedback["mutants"][key].get("crash")
        first = f"{fails[0][0]}: {fails[0][1]}: {fails[0][2]}" if fails else (crash or "")
        hidden = [f"{gid}: {vs[n][1]}" for gid, vs in verdicts.items() if vs and vs[n] is not None and not vs[n][0]]
        outcomes.append(Outcome(m, bool(hidden), bool(fails), bool(fails) and bool(
            re.search(m.says, f"{fails[0][1]}: {fails[0][2]}", re.IGNORECASE | re.DOTALL)), first, hidden))
    per_answer = {a: 0 for a in answer_cells(chapter)}
    for m, _ in pairs:
        per_answer[m.answer] += 0 if m.correct else 1
    return ChapterReport(chapter, outcomes, per_answer, problems)


def main() -> None:
    verbose = "-v" in sys.argv
    names = [a for a in sys.argv[1:] if a != "-v"] or chapters()
    for chapter in names:
        report = run_chapter(chapter)
        print(report.line(), flush=True)
        for p in report.solution_problems:
            print(f"   HARNESS PROBLEM: {p}")
        for o in report.outcomes:
            wrong = (o.visible_caught or o.hidden_caught) if o.mutant.correct else not (
                o.hidden_caught and o.visible_caught and o.named)
            if verbose or wrong:
                flag = "".join(c if ok else "-" for c, ok in zip("HVN", (o.hidden_caught, o.visible_caught, o.named)))
                kind = "ALTERNATIVE " if o.mutant.correct else ""
                print(f"   [{flag}] {kind}{o.mutant.answer} / {o.mutant.mistake}\n        first visible: "
                      f"{o.first_message[:300]!r}\n        hidden: {o.hidden_messages[:2]}")


if __name__ == "__main__":
    main()
