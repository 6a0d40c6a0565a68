"""Mutation tests of the course's tests (issue 24): every graded exercise has at least six plausible wrong answers
(``chapters/chNN.py``, built from the current solution by :mod:`.build`); the hidden tests must refuse every one of
them, and the visible tests must fail at least 90% of them with a first message that names the mistake. The
correct answers of other designs listed beside them (``ALTERNATIVES``) must pass every visible and hidden test.

The rates are printed per chapter at the end of the run ("mutation rates" section), passing or not.
"""

from __future__ import annotations

import pytest

from .build import built
from .harness import run_chapter
from .spec import answer_cells, chapters

MIN_PER_EXERCISE = 6
MIN_VISIBLE_NAMED = 0.90


@pytest.mark.parametrize("chapter", chapters())
def test_every_graded_exercise_has_six_mutants_that_apply(chapter: str) -> None:
    pairs = built(chapter)  # raises StaleMutant for an edit that no longer applies
    counts = {a: 0 for a in answer_cells(chapter)}
    for m, _ in pairs:
        counts[m.answer] += 0 if m.correct else 1
    short = {a: n for a, n in counts.items() if n < MIN_PER_EXERCISE}
    assert not short, f"{chapter}: exercises with fewer than {MIN_PER_EXERCISE} mutants: {short}"
    mistakes = [(m.answer, m.mistake) for m, _ in pairs]
    assert len(set(mistakes)) == len(mistakes), f"{chapter}: two mutants share a name"
    sources = [src for _, src in pairs]
    assert len(set(sources)) == len(sources), f"{chapter}: two mutants are the same cell"


@pytest.mark.slow
@pytest.mark.parametrize("chapter", chapters())
def test_the_tests_catch_every_mutant(chapter: str, record_property) -> None:
    report = run_chapter(chapter)
    record_property("mutation rates", report.line())
    assert not report.solution_problems, "the solution does not pass its own tests here:\n" + "\n".join(
        report.solution_problems)
    refused = [f"{o.mutant.answer} / {o.mutant.mistake}: {o.first_message[:300] or o.hidden_messages[:1]}"
               for o in report.refused_alternatives]
    assert not refused, f"{chapter}: correct answers of another design are refused:\n" + "\n".join(refused)
    escaped = [f"{o.mutant.answer} / {o.mutant.mistake}" for o in report.mutants if not o.hidden_caught]
    assert not escaped, f"{chapter}: the hidden tests accept {len(escaped)} mutants:\n" + "\n".join(escaped)
    unnamed = [f"{o.mutant.answer} / {o.mutant.mistake} (should say /{o.mutant.says}/): "
               f"{o.first_message[:300] or 'no visible test failed'}"
               for o in report.mutants if not (o.visible_caught and o.named)]
    assert report.named_rate >= MIN_VISIBLE_NAMED, (
        f"{chapter}: visible tests name the mistake for {report.named_rate:.0%} of the mutants (need "
        f"{MIN_VISIBLE_NAMED:.0%}); missed:\n" + "\n".join(unnamed))
