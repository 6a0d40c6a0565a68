"""Grading throughput, measured in one run: ``python benchmarks/bench_grading.py [ASSIGNMENT] [--students N]
[--source DIR]``.

Builds a throw-away course with one assignment (default ``02_operators`` from ``assignments/source``; ``--source
tests/course/fixtures/course/source 90_fixture`` for the small fixture), releases it and writes N submissions, a
fixed mix of the kinds a class hands in (:data:`KINDS`, cycled by student number): correct ones (the release with
the source's answers), wrong ones, blank ones, one that is not JSON, and hostile ones (a wrong answer that patches
NumPy so that the visible tests pass, a top-level infinite loop, a forward pass that asks for 8 TiB). It grades the
batch with the sandboxed grader with ``--jobs 1`` and ``--jobs 2``, interleaved (1, 2, 1, 2, ...), each run on a fresh
copy of the course so that every run is a first grading (gradebook rows created, not updated). Every run must give
the same scores and messages as the first (a parallel batch writes what a sequential one writes) and every
correct submission full marks, or the benchmark stops. Prints:

1. seconds per submission with 1 job (wall clock of the batch, gradebook writes included) and the time one
   sandbox run of a correct submission takes alone (start-up, harness, tests);
2. the speed-up of 2 jobs over 1 on this machine (best run of each, and each round's pair). Goal: >= 1.8x on 2
   cores. The default batch is 24 submissions, a small class section: whatever the batch size, the last
   submission runs alone for about half a sandbox run on average (the other worker has nothing left), so with 12
   submissions that tail alone costs about 0.1x of the speed-up (measured: 1.75-1.88x with 12, 1.80-1.96x with 24,
   on the same code);
3. CPU per submission: all of it (the grader's process and its children: sandboxes and judges; goal <= 1 s on
   average), the grader's own process (serial work: assembling, reading reports, the autograded notebooks, the
   gradebook), and the processes inside the sandboxes (as the exercise process reports them);
4. a projection for a class of 300 on 16 cores: 300 x (seconds per submission) / (16 x the parallel efficiency
   measured with 2 jobs). Goal for 02_operators: <= 3 s per submission per core.

``--profile`` adds where the grader process spends its time per submission, by phase (wall clock and CPU of the
thread that runs the phase), for 1 and 2 jobs. ``--results FILE`` writes the scores and messages as JSON, to
compare two versions of the grader on the same submissions.

The machine may be shared: the load average is printed before and after, and timings are noisy.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import collections
import functools
import json
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograd_lab.course import instructor  # noqa: E402

#: The mix of submissions, cycled by student number: 5 correct in 12.
KINDS = ("correct", "wrong", "correct", "wrong_patches_numpy", "correct", "asks_8_tib", "blank", "not_json",
         "correct", "wrong", "correct", "loops_at_top_level")

# A wrong answer for 02_operators (the quotient rule's sign); elsewhere "wrong" leaves the first answer unanswered.
WRONG = {"02_operators": ("return [ga, -ga * self.output]", "return [ga, ga * self.output]"),
         "90_fixture": ("return a + b\n", "return a - b\n")}
# A forward pass that asks for 8 TiB (the memory limit stops it at once).
HOG = {"02_operators": ("return a + b\n", "return np.ones(2**40) + a + b\n"),
       "90_fixture": ("return a + b\n", "return np.ones(2**40) + a + b\n")}


CELL_SECONDS = [10.0]  # set from --cell-seconds


def _gid(cell: Any) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


def submission(kind: str, release: Any, answers: dict[str, str], assignment: str) -> str:
    """The notebook text of one submission of ``kind``."""
    if kind == "not_json":
        return '{"cells": [ this is not JSON'
    nb = nbformat.from_dict(nbformat.reads(nbformat.writes(release), as_version=4))
    if kind == "blank":
        return nbformat.writes(nb)
    filled = [c for c in nb.cells if _gid(c) in answers]
    for cell in filled:
        cell.source = answers[_gid(cell)]
    first = filled[0]
    if kind in ("wrong", "wrong_patches_numpy"):
        old, new = WRONG.get(assignment, ("", ""))
        target = next((c for c in filled if old and old in c.source), None)
        if target is not None:
            target.source = target.source.replace(old, new)
        else:
            first.source = next(c.source for c in release.cells if _gid(c) == _gid(first))
    if kind == "wrong_patches_numpy":
        first.source = "np.allclose = lambda *args, **kwargs: True\n" + first.source
    elif kind == "loops_at_top_level":
        first.source = "while True:\n    pass\n" + first.source
    elif kind == "asks_8_tib":
        old, new = HOG.get(assignment, ("", ""))
        target = next((c for c in filled if old and old in c.source), first)
        target.source = target.source.replace(old, new) if old in target.source else \
            "import numpy as np\n\n\ndef hog():\n    return np.ones(2**40)\n\n\n" + target.source
    return nbformat.writes(nb)


def build_course(root: Path, assignment: str, students: int, source_dir: Path) -> Path:
    course = root / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", course)
    shutil.copytree(source_dir / assignment, course / "source" / assignment)
    instructor.release(course, root / "notebooks", [assignment])
    release = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    answers = {_gid(c): c.source for c in source.cells if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    for k in range(students):
        folder = course / "submitted" / f"student{k:03d}" / assignment
        folder.mkdir(parents=True)
        (folder / f"{assignment}.ipynb").write_text(submission(KINDS[k % len(KINDS)], release, answers, assignment))
    return course


class Phases:
    """Wall clock and thread CPU per phase of the grader process (``--profile``), by wrapping module functions."""

    def __init__(self) -> None:
        self.totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
        self.undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                total = self.totals[label]
                total[0] += time.perf_counter() - wall
                total[1] += time.thread_time() - cpu

        setattr(owner, name, timed)
        self.undo.append(lambda: setattr(owner, name, original))

    def __enter__(self) -> Phases:
        from autograd_lab.course.grading import assemble, batch, judge, record, sandbox

        self.wrap(batch, "prepare", "prepare: read + assemble (worker)")
        self.wrap(sandbox, "run_job", "sandbox run, seen from the grader (worker)")
        self.wrap(judge.Judge, "decide", "judge's verdicts, seen from the grader (worker)")
        self.wrap(assemble, "autograded_notebook", "autograded notebook built (main)")
        self.wrap(record, "write_autograded", "autograded notebook written (main)")
        self.wrap(record.GradebookWriter, "save", "gradebook written (main)")
        return self

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self.undo):
            undo()


def grade(built: Path, assignment: str, jobs: int, work: Path, phases: Phases | None = None) -> dict[str, Any]:
    """Grade a fresh copy of ``built``: wall seconds, results, CPU of the grader process and inside the sandboxes."""
    from autograd_lab.course.grading import batch
    from autograd_lab.course.grading.limits import course_limits

    course = work / f"course-{time.monotonic_ns()}"
    shutil.copytree(built, course)
    students = sorted(p.parent.name for p in (course / "submitted").glob(f"*/{assignment}"))
    limits = course_limits(course).replace(cell_seconds=CELL_SECONDS[0])
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if phases is not None:
        with phases:
            results = batch.grade_batch(course, assignment, students, jobs=jobs, limits=limits)
    else:
        results = batch.grade_batch(course, assignment, students, jobs=jobs, limits=limits)
    wall = time.perf_counter() - start
    own2 = resource.getrusage(resource.RUSAGE_SELF)
    kids2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    shutil.rmtree(course)
    grader_cpu = (own2.ru_utime + own2.ru_stime) - (own.ru_utime + own.ru_stime)
    return {"wall": wall, "results": [(o.student, score, top, o.messages) for o, score, top in results],
            "grader_cpu": grader_cpu,
            "judge_cpu": (kids2.ru_utime + kids2.ru_stime) - (kids.ru_utime + kids.ru_stime),
            "sandbox_cpu": sum(outcome.cpu_seconds for outcome, _, _ in results)}


def check(run: dict[str, Any], first: dict[str, Any] | None, students: int) -> None:
    """Stop unless every correct submission got full marks, every other kind less, and ``run`` equals ``first``."""
    for k, (student, score, top, messages) in enumerate(run["results"]):
        kind = KINDS[k % len(KINDS)]
        if (score == top) != (kind == "correct"):
            raise SystemExit(f"{student} ({kind}) got {score}/{top}: {messages}")
    if len(run["results"]) != students:
        raise SystemExit(f"{len(run['results'])} results for {students} submissions")
    if first is not None and run["results"] != first["results"]:
        diff = next(a for a, b in zip(run["results"], first["results"]) if a != b)
        raise SystemExit(f"a run differs from the first (1 job): {diff}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", nargs="?", default="02_operators")
    parser.add_argument("--students", type=int, default=24, help="submissions in the batch (see item 2 above)")
    parser.add_argument("--source", type=Path, default=REPO / "assignments" / "source",
                        help="the folder of source assignments to take ASSIGNMENT from")
    parser.add_argument("--cell-seconds", type=float, default=10.0,
                        help="the per-cell limit while measuring (the infinite loop of the mix costs that much)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds of (1 job, 2 jobs)")
    parser.add_argument("--profile", action="store_true", help="print the grader's time per phase")
    parser.add_argument("--results", type=Path, help="write the scores and messages (JSON) here, to compare the "
                                                      "grader of two versions on the same submissions")
    args = parser.parse_args()
    CELL_SECONDS[0] = args.cell_seconds
    n = args.students
    load_before = os.getloadavg()
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    profiles: dict[int, Phases] = {}
    with tempfile.TemporaryDirectory() as tmp:
        built = build_course(Path(tmp), args.assignment, n, args.source)
        grade(built, args.assignment, 1, Path(tmp))  # warm-up: imports and first-use costs in this process
        first = None
        for _ in range(args.rounds):
            for jobs in (1, 2):
                run = grade(built, args.assignment, jobs, Path(tmp))
                check(run, first, n)
                first = first or run
                runs[jobs].append(run)
        if args.profile:
            for jobs in (1, 2):
                profiles[jobs] = Phases()
                check(grade(built, args.assignment, jobs, Path(tmp), profiles[jobs]), first, n)
        alone = _sandbox_seconds(built, args.assignment)
    if args.results and first is not None:
        args.results.write_text(json.dumps(first["results"], indent=1))
    best = {jobs: min(r["wall"] for r in runs[jobs]) for jobs in (1, 2)}
    per_sub = best[1] / n
    speedup = best[1] / best[2]
    efficiency = speedup / 2
    projection = 300 * per_sub / (16 * efficiency)
    mix = collections.Counter(KINDS[k % len(KINDS)] for k in range(n))
    print(f"assignment {args.assignment}, {n} submissions ({', '.join(f'{v} {k}' for k, v in mix.items())}), "
          f"cores: {os.cpu_count()}, load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f} "
          f"(shared machine: timings are noisy)")
    for jobs in (1, 2):
        print(f"{jobs} job{'s' if jobs > 1 else ' '}: " + ", ".join(f"{r['wall']:.2f}" for r in runs[jobs])
              + " s per batch (interleaved rounds)")
    print(f"1 job : best {best[1]:7.2f} s = {per_sub:5.2f} s per submission (goal <= 3 s per submission per core)"
          f"{'; one sandbox run alone (correct submission): ' + alone if alone else ''}")
    print(f"2 jobs: best {best[2]:7.2f} s; speed-up {speedup:4.2f}x (goal >= 1.8x on 2 cores); each of the "
          f"{2 * args.rounds} runs gave the same scores and messages; each round's pair: "
          + ", ".join(f"{a['wall'] / b['wall']:.2f}x" for a, b in zip(runs[1], runs[2])))
    serial = min(r["grader_cpu"] for rs in runs.values() for r in rs)
    parallel = min(r["sandbox_cpu"] for rs in runs.values() for r in rs)
    total = min(r["grader_cpu"] + r["judge_cpu"] + r["sandbox_cpu"] for rs in runs.values() for r in rs)
    print(f"CPU per submission, all processes (grader, judges and other reaped children, sandboxes as reported): "
          f"{total / n:.2f} s (goal <= 1 s; the top-level infinite loop alone costs cell_seconds = "
          f"{CELL_SECONDS[0]:g} s of CPU)")
    print(f"CPU per submission: grader process {1000 * serial / n:.0f} ms (one interpreter), sandboxes "
          f"{1000 * parallel / n:.0f} ms; speed-up bound with 2 free cores if the grader's work overlapped nothing "
          f"(Amdahl): {(serial + parallel) / (serial + parallel / 2):4.2f}x, if it all overlapped: "
          f"{2 * (serial + parallel) / max(serial + parallel, 2 * serial):4.2f}x")
    print(f"class of 300 on 16 cores (efficiency {efficiency:.0%} as measured with 2 jobs): "
          f"{projection:6.1f} s = {projection / 60:4.1f} min")
    for jobs, phases in profiles.items():
        print(f"grader time per submission by phase, {jobs} job{'s' if jobs > 1 else ''} (wall / CPU of its thread):")
        for label, (wall, cpu) in phases.totals.items():
            print(f"  {label:52s} {1000 * wall / n:7.1f} ms / {1000 * cpu / n:6.1f} ms")


def _sandbox_seconds(course: Path, assignment: str) -> str:
    """Best time of one sandbox run and its verdicts alone (start-up, feedback run, hidden tests, judge) of the
    first (correct) submission."""
    from autograd_lab.course.grading import assemble, batch, sandbox, seeds, stubs
    from autograd_lab.course.grading.judge import Judge
    from autograd_lab.course.grading.limits import course_limits

    job, _ = batch.prepare(course, assignment, "student000")
    if sandbox.sandbox_problem():
        return ""
    source = course / "source" / assignment / f"{assignment}.ipynb"
    limits = course_limits(course).replace(cell_seconds=CELL_SECONDS[0])
    package = stubs.stubbed_package(assemble.replaced_names(source), course / ".autograd-lab")
    judge = Judge(assemble.judge_cells(source), limits.cell_seconds)
    try:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            batch.run_one(job, "student000", limits, False, seeds.read_secret(), package, judge)
            times.append(time.perf_counter() - start)
    finally:
        judge.close()
    return f"{min(times):.2f} s"


if __name__ == "__main__":
    main()
