"""``autograd-lab course progress``: run each workspace notebook as the learner has it and report per exercise.

Each notebook runs on a copy (the learner's file is never modified) in a fresh ``python3`` kernel with a per-cell
timeout, from the notebook's own folder, exactly as Jupyter's *Restart and Run All* would: the release holds the
visible tests only, so that is what runs. A graded test cell passes when it runs without an error. The points shown
are those of the visible tests: the grader also runs each test's hidden part on inputs drawn for each submission,
so the final score can be lower. No answer is refused for its style; there is no check here that the grader makes
differently.

Each exercise (an answer cell and the graded tests after it) is reported as ``passed``, ``not answered``,
``failing`` or ``did not run``. Challenge tests (the optional tier: locked, ungraded cells with grade id
``<x>_challenge_test``) are reported on a line of their own; they never count towards the points. A notebook saved
in nbformat 3 is converted for the run (``nbformat.convert``).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

# The kernel logs a warning on start about its local TCP sockets being unencrypted, once per notebook; learners can
# do nothing about it. Its errors are still printed, and the learner's code output goes into the notebook anyway.
QUIET_KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=ERROR",)
MESSAGE_LIMIT = 2000  # characters of a failing test's message shown by ``progress -v``

HIDDEN_TESTS_NOTE = ("Points count the visible tests only. Grading also runs each test's hidden part, on other inputs "
                     "(other shapes and values) drawn for your submission, so the final score can be lower.")
NOT_ANSWERED = "not answered yet (the answer cell still raises NotImplementedError)"


@dataclass
class TestResult:
    """One graded test cell: its grade id, points, the error that made it fail (None when it passed), and the
    exercise it tests (the grade id of the answer cell above it without ``_code``; its own id if none)."""

    grade_id: str
    points: float
    error: str | None
    exercise: str = ""


@dataclass(frozen=True)
class ExerciseResult:
    """One exercise: its name and one of ``passed``, ``not answered``, ``failing`` or ``did not run``."""

    name: str
    status: str


CHALLENGE_SUFFIX = "_challenge_test"
CHALLENGE_NOTE = "Challenges are optional and never change the points (100% needs none of them)."
PASSED, NOT_ATTEMPTED, FAILING, DID_NOT_RUN = "passed", "not attempted", "failing", "did not run"
UNANSWERED = "not answered"  # an exercise whose every test stops at the released stub


@dataclass
class ChallengeResult:
    """One optional challenge test: its name (the grade id without ``_challenge_test``), one of ``passed``,
    ``not attempted``, ``failing`` or ``did not run``, and the error of a failing one."""

    name: str
    status: str
    error: str | None = None


@dataclass
class NotebookProgress:
    """The visible-test results of one notebook; ``problem`` is set when the notebook could not run to the end.

    ``challenges`` holds the optional challenge tests, which are not part of ``points`` or ``complete``;
    ``converted`` is True when the file is in nbformat 3 and was converted for the run.
    """

    name: str
    tests: list[TestResult] = field(default_factory=list)
    problem: str | None = None
    challenges: list[ChallengeResult] = field(default_factory=list)
    converted: bool = False

    @property
    def points(self) -> float:
        return sum(t.points for t in self.tests if t.error is None)

    @property
    def max_points(self) -> float:
        return sum(t.points for t in self.tests)

    @property
    def complete(self) -> bool:
        return self.problem is None and all(t.error is None for t in self.tests)

    @property
    def exercises(self) -> list[ExerciseResult]:
        """The exercises in notebook order, each with the status of its tests taken together."""
        names = list(dict.fromkeys(t.exercise or t.grade_id for t in self.tests))
        return [ExerciseResult(n, _status([t.error for t in self.tests if (t.exercise or t.grade_id) == n]))
                for n in names]


def _status(errors: list[str | None]) -> str:
    if all(e is None for e in errors):
        return PASSED
    if all(e == NOT_ANSWERED for e in errors):
        return UNANSWERED
    if all(e in (DID_NOT_RUN, None) for e in errors):
        return DID_NOT_RUN
    return FAILING


def read_notebook(path: Path) -> tuple[nbformat.NotebookNode, bool]:
    """The notebook at ``path`` as nbformat 4, and whether it was converted from an older major version.

    Raises:
        nbformat.reader.NotJSONError, ValueError, OSError: for a file that is not a readable notebook.
    """
    nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    if nb.nbformat < 4:
        return nbformat.convert(nb, 4), True
    return nb, False


def run_notebook(path: Path, timeout: int = 60) -> NotebookProgress:
    """Execute the notebook at ``path`` (a copy in memory) and collect its graded test cells' outcomes."""
    progress = NotebookProgress(path.name)
    try:
        nb, progress.converted = read_notebook(path)
    except Exception as exc:  # any unreadable file is reported, not raised
        progress.problem = f"cannot be read as a notebook: {exc}"
        return progress
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            interrupt_on_timeout=True, resources={"metadata": {"path": str(path.parent)}},
                            extra_arguments=list(QUIET_KERNEL_ARGUMENTS))
    try:
        client.execute()
    except DeadKernelError:
        progress.problem = "the kernel died while running it (os._exit, a crash, or out of memory)"
    progress.tests, progress.challenges = collect_results(nb)
    return progress


def collect_results(nb: nbformat.NotebookNode) -> tuple[list[TestResult], list[ChallengeResult]]:
    """The outcome of each graded test cell and each challenge test cell of an executed notebook, in cell order.

    A failing test below an answer cell that itself stopped at the released stub (a bare ``NotImplementedError``,
    as in ``VIEWS = ...`` left unanswered) reports :data:`NOT_ANSWERED` rather than the ``NameError`` it met.
    """
    tests: list[TestResult] = []
    challenges: list[ChallengeResult] = []
    answers = {}  # grade id -> source of each answer cell, to tell an untouched challenge from a failing one
    exercise = ""  # the answer cell above, without "_code"
    stub_raised = False  # the answer cell above raised the stub's NotImplementedError
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code":
            continue
        grade_id = str(meta.get("grade_id", "?"))
        errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        if meta.get("solution"):
            answers[grade_id] = cell.source
            exercise = grade_id.removesuffix("_code")
            stub_raised = bool(errors) and _describe(errors[-1]) == NOT_ANSWERED
        if not meta.get("grade") and not grade_id.endswith(CHALLENGE_SUFFIX):
            continue
        ran = cell.get("execution_count") is not None or bool(cell.get("outputs"))
        if meta.get("grade"):
            error = _describe(errors[-1]) if errors else (None if ran else DID_NOT_RUN)
            error = NOT_ANSWERED if error is not None and stub_raised else error
            tests.append(TestResult(grade_id, float(meta.get("points", 0)), error, exercise))
        else:
            answer = answers.get(grade_id[: -len(CHALLENGE_SUFFIX)] + "_challenge_code", "")
            challenges.append(_challenge(grade_id, cell, errors, ran, answer))
    return tests, challenges


def _challenge(grade_id: str, cell: nbformat.NotebookNode, errors: list, ran: bool, answer: str) -> ChallengeResult:
    """Classify a challenge test cell. Not attempted: its answer cell still holds the released stub, or the test
    raised the stub's bare NotImplementedError, or it printed that it was not attempted."""
    name = grade_id[: -len(CHALLENGE_SUFFIX)]
    printed = "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")
    stub = "raise NotImplementedError()" in answer or (
        bool(errors) and errors[-1].ename == "NotImplementedError" and not errors[-1].evalue.strip())
    if stub or (not errors and NOT_ATTEMPTED in printed):
        return ChallengeResult(name, NOT_ATTEMPTED)
    if errors:
        return ChallengeResult(name, FAILING, _describe(errors[-1]))
    return ChallengeResult(name, PASSED if ran else DID_NOT_RUN)


def workspace_progress(workspace: Path, names: list[str] | None = None, timeout: int = 60) -> list[NotebookProgress]:
    """Run every ``*.ipynb`` in ``workspace`` (or only ``names``: file names or stems) in name order.

    Raises:
        FileNotFoundError: if the workspace holds no notebook (run setup first), or a name in ``names`` matches none
            of its notebooks (the message lists the available ones).
    """
    paths = sorted(workspace.glob("*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no notebooks to check in {workspace}; run 'autograd-lab course setup' first")
    if names:
        unknown = [n for n in names if not any(n in (p.name, p.stem) for p in paths)]
        if unknown:
            quoted = ", ".join(f"'{n}'" for n in unknown)
            raise FileNotFoundError(f"no notebook in {workspace} matches {quoted}; available: "
                                    f"{', '.join(p.stem for p in paths)}")
        paths = [p for p in paths if p.name in names or p.stem in names]
    return [run_notebook(p, timeout=timeout) for p in paths]


def format_progress(results: list[NotebookProgress], verbose: bool = False) -> str:
    """A table: notebook, visible tests passed, points; under each notebook a line with each exercise's status
    and one with its challenges; each failing test's message under its notebook if ``verbose``."""
    lines = [f"{'notebook':<40} {'visible tests':>14} {'points':>10}"]
    for r in results:
        passed = sum(t.error is None for t in r.tests)
        mark = "done" if r.complete else ""
        lines.append(f"{r.name:<40} {f'{passed}/{len(r.tests)}':>14} {f'{r.points:g}/{r.max_points:g}':>10}  {mark}")
        if r.converted:
            lines.append("    saved in nbformat 3: converted for this run (save it again in JupyterLab to update it)")
        if r.problem:
            lines.append(f"    {r.problem}")
        if r.exercises and not r.complete:
            listed = "; ".join(f"{e.name} {e.status}" for e in r.exercises)
            lines += textwrap.wrap(f"exercises: {listed}", width=100, initial_indent="    ",
                                   subsequent_indent="      ")
        if r.challenges:
            listed = "; ".join(f"{c.name} {c.status}" for c in r.challenges)
            lines += textwrap.wrap(f"challenge (optional, no points): {listed}", width=100,
                                   initial_indent="    ", subsequent_indent="      ")
        if verbose:
            lines += [_failure(t) for t in r.tests if t.error is not None]
            lines += [_failure(TestResult(f"{c.name} (challenge)", 0, c.error)) for c in r.challenges
                      if c.error is not None]
    lines += textwrap.wrap(HIDDEN_TESTS_NOTE, width=100)
    if any(r.challenges for r in results):
        lines += textwrap.wrap(CHALLENGE_NOTE, width=100)
    return "\n".join(lines)


def _describe(error: nbformat.NotebookNode) -> str:
    if error.ename == "NotImplementedError" and not error.evalue.strip():
        return NOT_ANSWERED
    return f"{error.ename}: {error.evalue}".strip()


def _failure(test: TestResult) -> str:
    """The test's id and its whole message (cut only past MESSAGE_LIMIT), each line wrapped and indented."""
    text = (test.error or "").strip()
    if len(text) > MESSAGE_LIMIT:
        text = text[:MESSAGE_LIMIT] + f" ... [{len(text) - MESSAGE_LIMIT} more characters]"
    body = []
    for line in text.splitlines():  # short lines stay as they are (printed arrays keep their alignment)
        body += textwrap.wrap(line, width=100, subsequent_indent="  ") if len(line) > 100 else [line]
    return "\n".join([f"    {test.grade_id}:"] + [f"        {w}" for w in body])
