"""Grade a class's submissions of one assignment: each runs in its own sandbox, a trusted judge decides.

Per submission: assemble the job (:mod:`.assemble`), derive its seeds (:mod:`.seeds`), run it in the sandbox
(:mod:`.sandbox`, :mod:`.exercise`) for the feedback outputs and each hidden test's bytes (:func:`exercise`), and have
the judge (:mod:`.judge`) decide each test from those bytes (:func:`verdicts`; :func:`run_one` is the two in a row).
A graded test passes when its visible part ran without an error in the feedback run AND the judge accepted its hidden
results.

Sandbox runs happen in worker threads, ``jobs`` at a time. Each submission's verdicts are asked for in a second pool
of as many threads, from as many judge processes, lent out one decision at a time (:class:`.judge.Judges`), so a
worker starts its next sandbox while the judge decides: at most ``jobs`` sandboxes and ``jobs`` decisions run at once.
A decision takes tens of milliseconds of CPU against a sandbox run's hundreds, so a sandbox shares its core now and
then; the limits are wall clock (as in Jupyter), so a cell within a few percent of its limit may pass in one batch and
time out in another, as under any other load on the machine. Everything that writes (the autograded notebooks and
the gradebook) happens in the calling thread, one submission at a time, in student order, so a parallel batch writes
what a sequential one writes. The reference's run on seed 0 (the authoring check) and the judges' start-up overlap
the first sandbox runs; the check must pass before anything is written.
"""

from __future__ import annotations

import contextlib
import os
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograd_lab.course import checks
from autograd_lab.course.grading import assemble, record, sandbox, seeds, stubs
from autograd_lab.course.grading.assemble import ANSWER, Job
from autograd_lab.course.grading.judge import Judge, Judges
from autograd_lab.course.grading.limits import Limits
from autograd_lab.course.grading.seeds import SecretError

UNSAFE_NOTE = "UNSAFE: graded without a sandbox (--unsafe-no-sandbox); the submission ran with the grader's rights"
#: The fixed texts of a failed graded test, besides the judge's (checks.NO_RESULT etc.).
VISIBLE_NOT_RUN = "its visible tests did not run (the notebook stopped before this cell)"
STOPPED = ("the hidden tests did not all finish within the notebook's time limit (notebook_seconds = {:g} s); "
           "those without results score 0")


@dataclass
class Outcome:
    """One submission's verdicts and explanations, before anything is written."""

    student: str
    job: Job | None
    passed: dict[str, bool] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    results: dict[int, dict[str, Any]] = field(default_factory=dict)  # cell index -> outputs / verdict
    ran: bool = False  # the sandbox ran (so an autograded notebook is written)
    grader_error: str | None = None  # the grader or the reference failed: nothing is recorded
    seconds: float = 0.0  # wall clock of the sandbox run, seen by the grader
    cpu_seconds: float = 0.0  # CPU time of the processes in the sandbox, as the harness reported it


def _points(points: float) -> str:
    return f"{points:g} point" + ("" if float(points) == 1 else "s")


def explain(ename: str, evalue: str, limits: Limits) -> str:
    """A plain-language reason for an error raised by a cell of the feedback run (the student's public notebook)."""
    first = evalue.strip().splitlines()[0] if evalue.strip() else ""
    if ename == "CellTimeoutError":
        return (f"the cell ran past the time limit (cell_seconds = {limits.cell_seconds:g} s) and was interrupted "
                f"(an infinite loop?)")
    if ename == "MemoryError":
        return f"the cell ran out of the memory allowed to the grader (memory_mb = {limits.memory_mb} MiB)"
    if ename == "NotImplementedError" and not first:
        return "the exercise is not answered yet (NotImplementedError)"
    return f"{ename}: {first[:300]}" if first else ename


def prepare(course_dir: Path, assignment: str, student: str) -> tuple[Job, list[str]]:
    """Assemble the job of one student's submission (no student code runs) and the messages about its files."""
    name = f"{assignment}.ipynb"
    source = course_dir / "source" / assignment / name
    release = course_dir / "release" / assignment / name
    folder = course_dir / "submitted" / student / assignment
    found = sorted(p.name for p in folder.glob("*.ipynb"))
    messages = [f"{other} is not a notebook of {assignment} (expected {name}); it was not graded"
                for other in found if other != name]
    if name not in found:
        others = f" (found {', '.join(found)})" if found else ""
        messages.insert(0, f"{name} is missing from the submission{others}; expected {name}, with the released "
                           f"name, so nothing of it was graded and its tests score 0")
        return assemble.assemble(source, None, release, assignment), messages
    job = assemble.assemble(source, folder / name, release, assignment)
    if job.unreadable:
        messages.append(f"{job.unreadable}; nothing could be graded, so the score is 0")
    return job, messages


def _clean(outputs: Any) -> list[dict[str, Any]]:
    from autograd_lab.course.grading.exercise import _clean_output

    try:
        return [_clean_output(o) for o in outputs][:100]
    except Exception:
        return []


def run_one(job: Job, student: str, limits: Limits, unsafe: bool, secret: seeds.Secret, package: Path,
            judge: Judge | Judges, feedback_package: Path | None = None) -> Outcome:
    """Run one assembled job in its sandbox, have ``judge`` decide, and turn both into verdicts and messages
    (:func:`exercise` then :func:`verdicts`).

    Raises:
        checks.GraderError: if the reference failed on this submission's seeds (nothing is decided).
    """
    return verdicts(job, exercise(job, student, limits, unsafe, secret, package, feedback_package), limits, judge)


@dataclass
class Exercised:
    """What one submission's sandbox runs handed back, with the seeds they used: all the judge needs."""

    student: str
    seeds: dict[str, int]
    run: sandbox.RunResult


def exercise(job: Job, student: str, limits: Limits, unsafe: bool, secret: seeds.Secret, package: Path,
             feedback_package: Path | None = None) -> Exercised:
    """Run one assembled job in its sandbox(es) (never raises for anything the submission does)."""
    test_seeds = seeds.submission_seeds(secret, job.assignment, student, job.answers, job.tags)
    run = sandbox.run_job(job.public_cells(), {"seeds": test_seeds, "tests": job.secret_tests()}, package, limits,
                          unsafe=unsafe, feedback_package=feedback_package, feedback_only=job.feedback_only())
    return Exercised(student, test_seeds, run)


def verdicts(job: Job, done: Exercised, limits: Limits, judge: Judge | Judges) -> Outcome:
    """Have ``judge`` decide each graded test from ``done``'s data, and turn the verdicts and the feedback run's
    outputs into the submission's :class:`Outcome`.

    Raises:
        checks.GraderError: if the reference failed on this submission's seeds (nothing is decided).
    """
    outcome = Outcome(done.student, job, ran=True)
    tags, run = job.tags, done.run
    outcome.seconds, outcome.cpu_seconds = run.seconds, run.cpu_seconds
    decided = judge.decide(done.seeds, {tag: run.results.get(tag) for tag in tags})
    messages = outcome.messages
    for cell in job.cells:
        shown = run.outputs.get(cell.index, {})
        error = shown.get("error") if isinstance(shown.get("error"), dict) else None
        outcome.results[cell.index] = {"outputs": _clean(shown.get("outputs", [])), "error": error}
        if not cell.graded:
            if error and cell.kind != "test":
                where = f" (line {error.get('line')})" if error.get("line") else ""
                messages.append(f"{cell.grade_id or f'cell {cell.index + 1}'}{where}: "
                                f"{explain(str(error.get('ename', '')), str(error.get('evalue', '')), limits)}")
            continue
        tag = cell.grade_id or ""
        if cell.index not in run.outputs:
            ename, why = "NotRun", VISIBLE_NOT_RUN
        elif error:
            ename = str(error.get("ename", ""))
            why = "its visible tests failed: " + explain(ename, str(error.get("evalue", "")), limits)
        elif not decided[tag].passed:
            stub = tag in run.stubbed and decided[tag].message == checks.NO_RESULT
            ename, why = "HiddenTestFailed", checks.STUB_CALLED if stub else decided[tag].message
        else:
            ename, why = "", ""
        outcome.passed[tag] = not why
        outcome.results[cell.index].update(passed=not why, ename=ename, evalue=why)
        if why:
            messages.append(f"{tag} ({_points(cell.points)}) failed: {why}")
    if run.truncated:
        messages.append(f"the notebook printed or displayed more than output_kb = {limits.output_kb} KiB; the rest "
                        f"of its output was dropped from the feedback (the points are not affected)")
    if run.killed_at_limit and run.public_done and any(run.results.get(t) is None for t in tags):
        messages.append(STOPPED.format(limits.notebook_seconds))
    return outcome


def grade_batch(
    course_dir: Path, assignment: str, students: list[str], *, jobs: int = 1, limits: Limits | None = None,
    unsafe: bool = False,
) -> list[tuple[Outcome, float, float]]:
    """Grade ``students``' submissions and record them; [(outcome, score, max_score)] in student order.

    A submission on which the grader or the reference fails is reported (``outcome.grader_error``, a message
    starting "GRADER ERROR") and not recorded; the batch goes on.

    Raises:
        record.GradebookError: if the assignment was never released into the gradebook.
        sandbox.SandboxUnavailable: if bubblewrap cannot run and ``unsafe`` is False.
        seeds.SecretError: if the grading secret is kept inside the course or cannot be read.
        assemble.AuthoringError: if a test cell of the source breaks the hidden-test contract.
        checks.GraderError: if the source notebook itself fails in the judge.
    """
    limits = limits or Limits()
    if not unsafe:
        problem = sandbox.sandbox_problem()
        if problem:
            raise sandbox.SandboxUnavailable(problem)
    source = course_dir / "source" / assignment / f"{assignment}.ipynb"
    secret = seeds.read_secret(course_dir)
    cells = assemble.judge_cells(source)
    tags = [c["grade_id"] for c in cells if c["kind"] == "test"]
    workers = max(1, min(jobs, os.cpu_count() or 1, len(students) or 1))
    # The judges build their namespaces while the first sandboxes run.
    judges = Judges(cells, limits.cell_seconds, workers)
    try:
        return _grade(course_dir, assignment, source, students, workers, limits, unsafe, secret, judges, tags)
    finally:
        judges.close()


def _grade(course_dir: Path, assignment: str, source: Path, students: list[str], workers: int, limits: Limits,
           unsafe: bool, secret: seeds.Secret, judges: Judges, tags: list[str]) -> list[tuple[Outcome, float, float]]:
    """:func:`grade_batch` once its judges have started."""
    # A chapter that stubs nothing has no feedback package: one sandbox serves both runs (its feedback child is
    # forked before the secret part exists), one Python start-up fewer per submission.
    package, feedback_package = stubs.course_libraries(course_dir, source)

    def failed(student: str, job: Job, messages: list[str], exc: Exception) -> Outcome:
        # the grader's or the reference's fault: reported loudly, nothing recorded
        return Outcome(student, job, grader_error=f"{type(exc).__name__}: {exc}",
                       messages=[*messages, f"GRADER ERROR, not graded ({type(exc).__name__}: {exc}); fix the "
                                            f"cause and grade it again"])

    def decide(job: Job, messages: list[str], done: Exercised) -> Outcome:
        try:
            outcome = verdicts(job, done, limits, judges)
        except Exception as exc:
            return failed(done.student, job, messages, exc)
        outcome.messages[:0] = messages + job.ignored
        return outcome

    def work(student: str) -> Future[Outcome]:
        job, messages = prepare(course_dir, assignment, student)  # in the worker: overlaps other sandboxes
        if job.unreadable:
            return _done(Outcome(student, job, messages=list(messages)))
        try:
            done = exercise(job, student, limits, unsafe, secret, package, feedback_package)
        except Exception as exc:
            return _done(failed(student, job, messages, exc))
        # The verdicts overlap this worker's next sandbox run (measured: --jobs 1 ~16% faster with a second core
        # free, --jobs 2 on 2 cores 3-7%); never more than ``workers`` sandboxes run.
        return deciders.submit(decide, job, messages, done)

    results = []
    with ThreadPoolExecutor(max_workers=workers) as pool, ThreadPoolExecutor(max_workers=workers) as deciders:
        try:
            # The reference must run on some seed before any grade is written: an authoring bug stops the batch
            # here. It goes first in the deciders' queue, so it overlaps the first sandbox runs.
            check = deciders.submit(judges.decide, dict.fromkeys(tags, 0), dict.fromkeys(tags))
            pending = [pool.submit(work, student) for student in students]
            with contextlib.ExitStack() as stack:
                try:
                    gb = stack.enter_context(record.open_gradebook(course_dir))
                    writer = record.GradebookWriter(gb, course_dir, assignment)  # a bad gradebook stops here
                except Exception:
                    check.result()  # an authoring bug is reported first: it is the first thing to fix
                    raise
                check.result()
                for future in pending:  # student order: writes are sequential, as in a batch of one job
                    results.append(_record(course_dir, assignment, future.result().result(), unsafe,
                                           secret.public, writer))
        except BaseException:
            judges.kill()  # a thread blocked on a judge (a looping source cell, say) must not hold up the shutdown
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # a sandbox already running finishes (its own limits)
            deciders.shutdown(wait=True, cancel_futures=True)
    return results


def _done(outcome: Outcome) -> Future[Outcome]:
    future: Future[Outcome] = Future()
    future.set_result(outcome)
    return future


def _record(course_dir: Path, assignment: str, outcome: Outcome, unsafe: bool, public_secret: bool,
            writer: record.GradebookWriter) -> tuple[Outcome, float, float]:
    job = outcome.job
    if job is None:
        raise RuntimeError(f"no job for {outcome.student}")  # prepare() always assembles one
    if outcome.grader_error is not None:
        score, max_score = 0.0, job.max_score
    else:
        stubs_left = {c.grade_id for c in job.cells if c.kind == ANSWER and c.grade_id and _is_stub(c.source)}
        notebook = None
        if outcome.ran:
            notebook = assemble.autograded_notebook(job, outcome.results)
            record.write_autograded(course_dir, outcome.student, job, notebook)
        else:
            record.clear_autograded(course_dir, outcome.student, assignment)
        score, max_score = writer.save(outcome.student, job, outcome.passed, stubs_left, notebook)
    notes = [seeds.PUBLIC_WARNING] if public_secret else []
    notes += [UNSAFE_NOTE] if unsafe else []
    if not outcome.messages:
        outcome.messages.append("all tests passed" if score == max_score else "some tests failed")
    outcome.messages[:0] = notes
    return outcome, score, max_score


def _is_stub(text: str) -> bool:
    body = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return body == ["raise NotImplementedError()"] or not body


__all__ = ["Outcome", "SecretError", "explain", "grade_batch", "prepare", "run_one"]
