"""Grading throughput, measured in one run: ``python benchmarks/bench_grading.py [ASSIGNMENT] [--students N]``.

Builds a throw-away course with one assignment (default ``02_operators``), releases it, writes N correct
submissions (the release with the source's answers, as a student would hand in), and grades the batch with the
sandboxed grader twice, with ``--jobs 1`` and ``--jobs 2``, side by side. Prints:

1. seconds per submission with 1 job (wall clock of the batch, gradebook writes included) and the mean time one
   sandbox run takes (start-up, harness, tests);
2. the speed-up of 2 jobs over 1 on this machine. Goal: >= 1.8x on 2 cores;
3. a projection for a class of 300 on 16 cores: 300 x (seconds per submission) / (16 x the parallel efficiency
   measured with 2 jobs). Goal for 02_operators: <= 3 s per submission per core.

It also prints the CPU seconds spent by the grader process (serial) and by the sandboxes (parallel), and the speed-up
that Amdahl's law allows with two free cores, a figure that does not depend on how busy the machine is.

The machine may be shared: the two runs are interleaved (1, 2, 1, 2 jobs) and the best of each is reported.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from autograd_lab.course import instructor  # noqa: E402


def build_course(root: Path, assignment: str, students: int) -> Path:
    course = root / "course"
    (course / "source").mkdir(parents=True)
    shutil.copy(REPO / "assignments" / "nbgrader_config.py", course)
    shutil.copytree(REPO / "assignments" / "source" / assignment, course / "source" / assignment)
    instructor.release(course, root / "notebooks", [assignment])
    release = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    source = nbformat.read(course / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    answers = {c.metadata.nbgrader["grade_id"]: c.source for c in source.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    for cell in release.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    for k in range(students):
        folder = course / "submitted" / f"student{k:03d}" / assignment
        folder.mkdir(parents=True)
        nbformat.write(release, folder / f"{assignment}.ipynb")
    return course


def grade(course: Path, assignment: str, jobs: int) -> tuple[float, list, float, float]:
    """(wall seconds, results, CPU seconds of the grader process, CPU seconds inside the sandboxes)."""
    from autograd_lab.course.grading import batch
    from autograd_lab.course.grading.limits import course_limits

    students = sorted(p.parent.name for p in (course / "submitted").glob(f"*/{assignment}"))
    limits = course_limits(course)
    own = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    results = batch.grade_batch(course, assignment, students, jobs=jobs, limits=limits)
    wall = time.perf_counter() - start
    own2 = resource.getrusage(resource.RUSAGE_SELF)
    grader_cpu = (own2.ru_utime + own2.ru_stime) - (own.ru_utime + own.ru_stime)
    return wall, results, grader_cpu, sum(outcome.cpu_seconds for outcome, _, _ in results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", nargs="?", default="02_operators")
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        course = build_course(Path(tmp), args.assignment, args.students)
        best = {1: float("inf"), 2: float("inf")}
        cpu_grader, cpu_sandboxes = [], []
        for _ in range(args.rounds):
            for jobs in (1, 2):
                seconds, results, own, kids = grade(course, args.assignment, jobs)
                cpu_grader.append(own)
                cpu_sandboxes.append(kids)
                bad = [(o.student, o.messages) for o, score, top in results if score != top]
                if bad:
                    raise SystemExit(f"a correct submission did not get full marks: {bad[0]}")
                best[jobs] = min(best[jobs], seconds)
        sandbox_runs = _sandbox_seconds(course, args.assignment)
    n = args.students
    per_sub = best[1] / n
    speedup = best[1] / best[2]
    efficiency = speedup / 2
    projection = 300 * per_sub / (16 * efficiency)
    print(f"assignment {args.assignment}, {n} correct submissions, cores: {os.cpu_count()} "
          f"(best of {args.rounds} interleaved rounds; shared machine, timings are noisy)")
    print(f"1 job : {best[1]:7.2f} s for the batch = {per_sub:5.2f} s per submission "
          f"(goal <= 3 s per submission per core){' ' + sandbox_runs if sandbox_runs else ''}")
    print(f"2 jobs: {best[2]:7.2f} s for the batch; speed-up {speedup:4.2f}x (goal >= 1.8x on 2 cores)")
    serial, parallel = min(cpu_grader), min(cpu_sandboxes)
    print(f"CPU per batch: grader {serial:.2f} s (serial: one interpreter), sandboxes {parallel:.2f} s (parallel); "
          f"speed-up bound with 2 free cores (Amdahl): {(serial + parallel) / (serial + parallel / 2):4.2f}x")
    print(f"class of 300 on 16 cores (efficiency {efficiency:.0%} as measured with 2 jobs): "
          f"{projection:6.1f} s = {projection / 60:4.1f} min")


def _sandbox_seconds(course: Path, assignment: str) -> str:
    """Mean time of one sandbox run alone (start-up + harness + tests), from a direct run of one job."""
    from autograd_lab.course.grading import batch, sandbox
    from autograd_lab.course.grading.limits import course_limits

    job, _ = batch.prepare(course, assignment, "student000")
    if job is None or sandbox.sandbox_problem():
        return ""
    limits = course_limits(course)
    seeds = batch.grading_seeds(job.seed_tags)
    times = [batch.run_one(job, "student000", limits, False, seeds).seconds for _ in range(3)]
    return f"; one sandbox run alone: {min(times):.2f} s"


if __name__ == "__main__":
    main()
