"""``autograd-lab course progress``: run each workspace notebook and report which visible tests pass.

Each notebook runs on a copy (the learner's file is never modified) in a fresh ``python3`` kernel with a per-cell
timeout, from the notebook's own folder. A graded test cell passes when it runs without an error. The points shown
are those of the visible tests only: the grader also runs hidden tests, so the final score can be lower.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError


@dataclass
class TestResult:
    """One graded test cell: its grade id, points, and the error that made it fail (None when it passed)."""

    grade_id: str
    points: float
    error: str | None


@dataclass
class NotebookProgress:
    """The visible-test results of one notebook; ``problem`` is set when the notebook could not run to the end."""

    name: str
    tests: list[TestResult] = field(default_factory=list)
    problem: str | None = None

    @property
    def points(self) -> float:
        return sum(t.points for t in self.tests if t.error is None)

    @property
    def max_points(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def complete(self) -> bool:
        return self.problem is None and all(t.error is None for t in self.tests)


def run_notebook(path: Path, timeout: int = 60) -> NotebookProgress:
    """Execute the notebook at ``path`` (a copy in memory) and collect its graded test cells' outcomes."""
    progress = NotebookProgress(path.name)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # any unreadable file is reported, not raised
        progress.problem = f"cannot be read as a notebook: {exc}"
        return progress
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except DeadKernelError:
        progress.problem = "the kernel died while running it (os._exit, a crash, or out of memory)"
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade"):
            continue
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        ran = cell.get("execution_count") is not None or bool(cell.get("outputs"))
        error = _describe(errors[-1]) if errors else (None if ran else "did not run")
        progress.tests.append(TestResult(meta.get("grade_id", "?"), float(meta.get("points", 0)), error))
    return progress


def workspace_progress(workspace: Path, names: list[str] | None = None, timeout: int = 60) -> list[NotebookProgress]:
    """Run every ``*.ipynb`` in ``workspace`` (or only ``names``) in name order."""
    paths = sorted(workspace.glob("*.ipynb"))
    if names:
        paths = [p for p in paths if p.name in names or p.stem in names]
    if not paths:
        raise FileNotFoundError(f"no notebooks to check in {workspace}; run 'autograd-lab course setup' first")
    return [run_notebook(p, timeout=timeout) for p in paths]


def format_progress(results: list[NotebookProgress], verbose: bool = False) -> str:
    """A table: notebook, visible tests passed, points; failing tests listed under their notebook if ``verbose``."""
    lines = [f"{'notebook':<40} {'visible tests':>14} {'points':>10}"]
    for r in results:
        passed = sum(t.error is None for t in r.tests)
        mark = "done" if r.complete else ""
        lines.append(f"{r.name:<40} {f'{passed}/{len(r.tests)}':>14} {f'{r.points:g}/{r.max_points:g}':>10}  {mark}")
        if r.problem:
            lines.append(f"    {r.problem}")
        if verbose:
            lines += [f"    {t.grade_id}: {_first_line(t.error)}" for t in r.tests if t.error is not None]
    lines.append("Points count visible tests only; the grader also runs hidden tests.")
    return "\n".join(lines)


def _describe(error: nbformat.NotebookNode) -> str:
    if error.ename == "NotImplementedError" and not error.evalue.strip():
        return "not answered yet (the answer cell still raises NotImplementedError)"
    return f"{error.ename}: {error.evalue}".strip()


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:150] if (text or "").strip() else ""
