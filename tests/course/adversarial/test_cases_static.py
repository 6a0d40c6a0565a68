"""The hostile batch, checked fast without a sandbox: each case's answer cells meet the static check as stated.

A case whose expected report says an answer cell was refused must be refused by
:func:`~autograd_lab.course.grading.static.check_answer_cell` with that message; every other case's answer cells
must pass it (they are caught later, by the limits, the hidden tests or the assembly of the notebook).
"""

from __future__ import annotations

import re

import pytest

from autograd_lab.course.grading.static import check_answer_cell

from .build import ADD, CASES, HELPERS, SETUP, SQUARES, Case, build_case, refusal_fragment, source_notebook

REFERENCES = {ADD: ("autograd_lab.ops.AddOp",), SQUARES: ()}


def answers_of(case: Case) -> dict[str, str]:
    source = source_notebook()
    nb = build_case(case, source, source)
    return {c.metadata.nbgrader["grade_id"]: c.source for c in nb.cells
            if c.metadata.get("nbgrader", {}).get("grade_id") in (ADD, SQUARES)}


def static(gid: str, code: str) -> list[str]:
    found = check_answer_cell(code, grade_id=gid, protected_names={"close", "rng"}, references=REFERENCES[gid],
                              context=[SETUP, HELPERS])
    return [str(r) for r in found]


def test_there_are_at_least_25_hostile_cases_across_the_kinds() -> None:
    hostile = [c for c in CASES.values() if c.kind != "good"]
    assert len(hostile) >= 25
    kinds = {c.kind for c in hostile}
    for kind in ("monkeypatch numpy", "monkeypatch checks", "monkeypatch test helpers", "monkeypatch builtins",
                 "IPython hooks", "display hooks", "forged execute_result", "exec of the reference source",
                 "code-object cloning", "partial wrapper", "closure wrapper", "container wrapper", "getattr chain",
                 "read instructor source", "read another submission", "write the gradebook",
                 "tamper with another student", "infinite loop", "memory hog", "fork bomb", "huge output",
                 "os._exit", "SystemExit", "signal the parent", "network", "forged metadata",
                 "hard-coded visible output"):
        assert kind in kinds, f"no hostile case of the kind {kind!r}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_meets_the_static_check_as_its_report_says(name: str) -> None:
    case = CASES[name]
    answers = answers_of(case)
    expected = refusal_fragment(case)
    if expected is None:
        for gid, code in answers.items():
            assert static(gid, code) == [], f"{name}: {gid} is refused, but the case expects it to run"
        return
    gid, fragment = expected
    found = static(gid, answers[gid])
    assert any(fragment in message for message in found), f"{name}: {gid}: {found} lacks {fragment!r}"
    assert all(re.match(r"^line \d+: ", message) for message in found)
