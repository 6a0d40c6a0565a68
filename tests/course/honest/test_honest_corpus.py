"""Zero false refusals: the honest-style corpus (tests/course/honest/build.py) scores full marks in every chapter,
through the real grader (sandboxed exercise, trusted judge), on two jobs.

Every chapter's answer cells are written by six personas (the instructor's solution plus five students' habits: re-
imports, getattr/str.format, dunder helper classes, NamedTuple, field(default_factory), lru_cache, match, walrus,
nonlocal/global, generators, itertools, np.add/append/sort/insert, self.__class__, recursion to depth 900, debug
prints). A point lost by any of them is a refusal of honest code.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograd_lab.course import instructor

from ..conftest import COURSE, copy_course
from .build import PERSONAS, count_answers, submission

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("honest_corpus")]

CHAPTERS = sorted(p.name for p in (COURSE / "source").iterdir() if p.is_dir())


def test_the_corpus_holds_at_least_150_answers_over_every_chapter() -> None:
    counts = {ch: count_answers(nbformat.read(COURSE / "source" / ch / f"{ch}.ipynb", as_version=4))
              for ch in CHAPTERS}
    assert all(n >= len(PERSONAS) for n in counts.values()), counts
    assert sum(counts.values()) >= 150, counts


def test_every_persona_scores_full_marks_in_every_chapter(tmp_path: Path) -> None:
    course = copy_course(tmp_path / "course")
    instructor.release(course, course / "notebooks")
    subs = tmp_path / "subs"
    for ch in CHAPTERS:
        release = nbformat.read(course / "release" / ch / f"{ch}.ipynb", as_version=4)
        source = nbformat.read(course / "source" / ch / f"{ch}.ipynb", as_version=4)
        for persona in PERSONAS:
            path = subs / "students" / persona.name / ch / f"{ch}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(submission(release, source, persona), path)
    instructor.collect(course, subs)
    refused = {}
    for ch in CHAPTERS:
        for report in instructor.autograde(course, ch, jobs=2):
            if not (report.max_score > 0 and report.score == report.max_score):
                refused[f"{ch}/{report.student}"] = str(report)
    assert not refused, "honest answers lost points:\n" + "\n\n".join(f"{k}:\n{v}" for k, v in refused.items())
