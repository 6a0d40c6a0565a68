"""Grade a class's submissions of one assignment, each in its own sandbox, ``jobs`` at a time.

Sandbox runs happen in worker threads (each only waits on its own ``bwrap`` process); everything that writes
(the autograded notebooks and the gradebook) happens in the calling thread, one submission at a time, in student
order, so a parallel batch writes exactly what a sequential one writes.
"""

from __future__ import annotations

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograd_lab.course.grading import assemble, record, sandbox
from autograd_lab.course.grading.assemble import ANSWER, TEST, Job
from autograd_lab.course.grading.limits import Limits

UNSAFE_NOTE = "UNSAFE: graded without a sandbox (--unsafe-no-sandbox); the submission ran with the grader's rights"


@dataclass
class Outcome:
    """One submission's verdicts and explanations, before anything is written."""

    student: str
    job: Job | None
    passed: dict[str, bool] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    results: dict[int, dict[str, Any]] = field(default_factory=dict)  # cell index -> outputs / verdict
    ran: bool = False  # the sandbox ran (so an autograded notebook is written)
    seconds: float = 0.0  # wall clock of the sandbox run, seen by the grader
    cpu_seconds: float = 0.0  # CPU time of the processes in the sandbox, as the harness reported it


class SecretError(RuntimeError):
    """The grading secret is kept where students can read it (inside the course folder)."""


def grading_seeds(tags: list[str], course_dir: Path | None = None) -> dict[str, int]:
    """{tag: seed} for the hidden tests, from the instructor's secret (read here, outside the sandbox only).

    Raises:
        SecretError: if ``$AUTOGRAD_LAB_GRADING_SECRET_FILE`` lies inside ``course_dir`` (or the repository
            around it), where it would be published with the course.
        OSError: if the secret file cannot be read.
    """
    from autograd_lab.course import checks

    secret_file = os.environ.get(checks.SECRET_FILE_ENV)
    if secret_file and course_dir is not None:
        where = Path(secret_file).resolve()
        for root in (course_dir.resolve(), course_dir.resolve().parent):
            if (root / ".git").exists() or root == course_dir.resolve():
                if where.is_relative_to(root):
                    raise SecretError(f"the grading secret file {where} is inside {root}, where it would be "
                                      f"published with the course; keep it outside (docs/instructor.md)")
    return {tag: checks.grading_seed(tag) for tag in tags}


def per_student_seeds(seeds: dict[str, int], student: str) -> dict[str, int]:
    """Each student's own hidden inputs: the secret-derived seed of each tag mixed with the student id (SHA-256), so
    what one student's feedback might show about a hidden test's inputs tells nothing about a classmate's."""
    return {tag: int.from_bytes(hashlib.sha256(f"{seed}\0{student}".encode()).digest()[:8], "little")
            for tag, seed in seeds.items()}


def _points(points: float) -> str:
    return f"{points:g} point" + ("" if float(points) == 1 else "s")


def explain(ename: str, evalue: str, limits: Limits) -> str:
    """A plain-language reason for an error raised by a cell or a test."""
    first = evalue.strip().splitlines()[0] if evalue.strip() else ""
    if ename == "CellTimeoutError":
        return (f"the cell ran past the time limit (cell_seconds = {limits.cell_seconds:g} s) and was interrupted "
                f"(an infinite loop?)")
    if ename == "MemoryError":
        return f"the cell ran out of the memory allowed to the grader (memory_mb = {limits.memory_mb} MiB)"
    if ename == "NotImplementedError" and not first:
        return "the exercise is not answered yet (NotImplementedError)"
    if ename == "AnswerRefused":
        return first
    if ename == "TestProcessDied" and "SIGXCPU" in first:
        return f"{first} (cpu_seconds = {limits.cpu_seconds} s)"
    return f"{ename}: {first[:300]}" if first else ename


def prepare(course_dir: Path, assignment: str, student: str) -> tuple[Job | None, list[str]]:
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


def run_one(job: Job, student: str, limits: Limits, unsafe: bool, seeds: dict[str, int]) -> Outcome:
    """Run one assembled job in its sandbox and turn the report into verdicts and messages."""
    outcome = Outcome(student, job, ran=True)
    payload = {"cells": [c.to_json() for c in job.cells], "seeds": seeds}
    run = sandbox.run_job(payload, limits, unsafe=unsafe)
    outcome.seconds = run.seconds
    by_index = {c.index: c for c in job.cells}
    messages = outcome.messages
    messages += [f"answer cell '{gid}' was refused and not run: " + "; ".join(reasons)
                 for gid, reasons in job.refused.items()]
    last_start = None
    truncated = False
    for rec in run.records:
        event = rec.get("event")
        index = rec.get("index")
        cell = by_index.get(index) if isinstance(index, int) else None
        if event == "start":
            last_start = cell
        elif event == "test" and cell is not None and cell.kind == TEST:
            outcome.passed[cell.grade_id or ""] = rec.get("passed") is True
            outcome.results[cell.index] = {"outputs": rec.get("outputs", []), "passed": rec.get("passed") is True,
                                           "ename": rec.get("ename", ""), "evalue": rec.get("evalue", "")}
            if rec.get("passed") is not True:
                why = explain(str(rec.get("ename", "")), str(rec.get("evalue", "")), limits)
                if rec.get("ename") == "NameError" and refused_above(job, cell.index):
                    why += f" (answer cell '{refused_above(job, cell.index)}' was refused, see above)"
                messages.append(f"{cell.grade_id} ({_points(cell.points)}) failed: {why}")
        elif event == "cell" and cell is not None and cell.kind != TEST:
            error = rec.get("error") or {}
            if cell.kind == ANSWER and cell.grade_id in job.refused:
                continue
            where = f" (line {error.get('line')})" if error.get("line") else ""
            messages.append(f"{cell.grade_id or 'a setup cell'}{where}: "
                            f"{explain(str(error.get('ename', '')), str(error.get('evalue', '')), limits)}")
        elif event == "outputs" and cell is not None and cell.kind != TEST:
            outcome.results[cell.index] = {"outputs": rec.get("outputs", []), "error": rec.get("error")}
        elif event == "done":
            truncated = bool(rec.get("truncated"))
            cpu = rec.get("cpu_seconds")
            outcome.cpu_seconds = float(cpu) if isinstance(cpu, (int, float)) else 0.0
    if truncated:
        messages.append(f"the notebook printed or displayed more than output_kb = {limits.output_kb} KiB; the rest "
                        f"of its output was dropped from the feedback (the points are not affected)")
    missing = [c for c in job.cells if c.kind == TEST and c.points > 0 and (c.grade_id or "") not in outcome.passed]
    if not run.finished and missing:
        if run.killed_at_limit:
            why = (f"the notebook ran past its time limit (notebook_seconds = {limits.notebook_seconds:g} s) and was "
                   f"stopped")
        else:
            status = run.exit_status
            why = ("the grading process stopped" + (f" while running {last_start.grade_id or 'a cell'}"
                                                     if last_start is not None else "")
                   + f" (exit status {status}: os._exit, a crash, or a limit)")
        names = ", ".join(f"{c.grade_id} ({_points(c.points)})" for c in missing)
        messages.append(f"{why}; the tests decided before that keep their points, these were not run and score "
                        f"0: {names}")
    for c in missing:
        outcome.passed[c.grade_id or ""] = False
        outcome.results[c.index] = {"outputs": [], "passed": False, "ename": "NotRun",
                                    "evalue": "the grader stopped before this test ran"}
    return outcome


def refused_above(job: Job, index: int) -> str | None:
    """The grade_id of the nearest refused answer cell above cell ``index``, if any."""
    for cell in reversed([c for c in job.cells if c.index < index and c.kind == ANSWER]):
        if cell.grade_id in job.refused:
            return cell.grade_id
    return None


def grade_batch(
    course_dir: Path, assignment: str, students: list[str], *, jobs: int = 1, limits: Limits | None = None,
    unsafe: bool = False,
) -> list[tuple[Outcome, float, float]]:
    """Grade ``students``' submissions and record them; [(outcome, score, max_score)] in student order.

    Raises:
        record.GradebookError: if the assignment was never released into the gradebook.
        sandbox.SandboxUnavailable: if bubblewrap cannot run and ``unsafe`` is False.
    """
    limits = limits or Limits()
    if not unsafe:
        problem = sandbox.sandbox_problem()
        if problem:
            raise sandbox.SandboxUnavailable(problem)
    name = f"{assignment}.ipynb"
    # The seed tags are the source's: the same for every submission.
    seeds = grading_seeds(assemble.assemble(course_dir / "source" / assignment / name, None).seed_tags, course_dir)

    def work(student: str) -> Outcome:
        job, messages = prepare(course_dir, assignment, student)  # in the worker: overlaps other sandboxes
        if job is None or job.unreadable:
            return Outcome(student, job, messages=list(messages))
        try:
            outcome = run_one(job, student, limits, unsafe, per_student_seeds(seeds, student))
        except Exception as exc:  # a fault of the grader itself: this student scores 0 and is told, the batch goes on
            return Outcome(student, job, messages=[*messages, f"the grader failed on this submission "
                                                              f"({type(exc).__name__}: {exc}); grade it again"])
        outcome.messages[:0] = messages + job.ignored
        return outcome

    results = []
    workers = max(1, min(jobs, os.cpu_count() or 1, len(students) or 1))
    with record.open_gradebook(course_dir) as gb:
        writer = record.GradebookWriter(gb, course_dir, assignment)  # before anything runs: a bad gradebook stops here
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for outcome in pool.map(work, students):  # map keeps student order: writes are sequential and ordered
                results.append(_record(course_dir, assignment, outcome, unsafe, writer))
    return results


def _record(course_dir: Path, assignment: str, outcome: Outcome, unsafe: bool,
            writer: record.GradebookWriter) -> tuple[Outcome, float, float]:
    job = outcome.job
    if job is None:
        raise RuntimeError(f"no job for {outcome.student}")  # prepare() always assembles one
    stubs = {c.grade_id for c in job.cells if c.kind == ANSWER and c.grade_id and _is_stub(c.shown or "")}
    notebook = None
    if outcome.ran:
        notebook = assemble.autograded_notebook(job, outcome.results)
        record.write_autograded(course_dir, outcome.student, job, notebook)
    else:
        record.clear_autograded(course_dir, outcome.student, assignment)
    score, max_score = writer.save(outcome.student, job, outcome.passed, stubs, notebook)
    if unsafe:
        outcome.messages.insert(0, UNSAFE_NOTE)
    if not [m for m in outcome.messages if m != UNSAFE_NOTE]:
        outcome.messages.append("all tests passed" if score == max_score else "some tests failed")
    return outcome, score, max_score


def _is_stub(text: str) -> bool:
    body = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    return body == ["raise NotImplementedError()"] or not body
