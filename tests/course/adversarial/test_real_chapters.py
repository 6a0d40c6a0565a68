"""Hostile answers against real chapters, where a test watches the answer with a spy object: graded once through
the sandboxed grader. Found by the third hostile-student review: ``evaluate`` in chapter 07 skipped ``no_grad()``
and then rewrote the modes the test's ``SpyModel`` had recorded, for full marks (13/13). (A plain attribute write
on the spy is in tests/course/test_guard.py.)"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from nbformat import NotebookNode

from ..submissions import grade_solution_variants

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("hostile_real")]

CHAPTER = "07_training_an_mlp"
EVALUATE_WITHOUT_NO_GRAD = '''
def evaluate(model, x, y, batch_size=500):
    total_loss = 0.0
    correct = 0
    for start in range(0, len(x), batch_size):
        xb, yb = x[start:start + batch_size], y[start:start + batch_size]
        logits = model(Variable.from_numpy(xb))
        loss = SoftmaxCrossEntropyOp()(logits, Variable.from_numpy(yb))
        total_loss += loss.item() * len(xb)
        correct += int(np.sum(logits.data.argmax(axis=1) == yb))
    if hasattr(model, "modes"):
        {rewrite}
    return total_loss / len(x), correct / len(x)
'''
CASES = {
    "spy_items_rewritten": "model.modes[:] = [(False, False)] * len(model.modes)",
    "spy_cleared_and_refilled": "model.modes.clear()",
}


def _rewrite(rewrite: str) -> Callable[[NotebookNode], None]:
    def edit(nb: NotebookNode) -> None:
        cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "evaluate_code")
        cell.source = EVALUATE_WITHOUT_NO_GRAD.replace("{rewrite}", rewrite)
    return edit


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    edits = {"full": None, **{name: _rewrite(rewrite) for name, rewrite in CASES.items()}}
    return grade_solution_variants(tmp_path_factory.mktemp("real"), CHAPTER, edits)


def test_the_honest_solution_keeps_full_marks(reports: dict) -> None:
    full = reports["full"]
    assert full.max_score > 0 and full.score == full.max_score, str(full)


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewriting_the_tests_spy_loses_the_points(reports: dict, name: str) -> None:
    report, full = reports[name], reports["full"]
    message = "; ".join(report.messages)
    assert report.score < full.max_score, f"{name}: {report}"
    # The spy's record is data the answer may rewrite; the hidden part's loss and accuracy, computed with dropout
    # on and a graph built, differ from the solution's.
    assert re.search(r"evaluate_test \(\d+ points?\) failed: ", message), f"{name}: {message}"
