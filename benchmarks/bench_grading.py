"""Grading throughput, measured in one run: ``python benchmarks/bench_grading.py [ASSIGNMENT] [--students N]``.

Builds a throw-away course with one assignment (default ``02_operators``), releases it, writes N correct
submissions (the release with the source's answers, as a student would hand in), and grades the batch with the
sandboxed grader twice, with ``--jobs 1`` and ``--jobs 2``, side by side. Prints:

1. seconds per submission with 1 job (wall clock of ``autograde``, gradebook writes included) and the mean time one
   sandbox run takes (start-up, harness, tests);
2. the speed-up of 2 jobs over 1 on this machine. Goal: >= 1.8x on 2 cores;
3. a projection for a class of 300 on 16 cores: 300 x (seconds per submission) / (16 x the parallel efficiency
   measured with 2 jobs). Goal for 02_operators: <= 3 s per submission per core.

The machine may be shared: the two runs are interleaved (1, 2, 1, 2 jobs) and the best of each is reported.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
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


def grade(course: Path, assignment: str, jobs: int) -> tuple[float, list]:
    start = time.perf_counter()
    reports = instructor.autograde(course, assignment, jobs=jobs)
    return time.perf_counter() - start, reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", nargs="?", default="02_operators")
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        course = build_course(Path(tmp), args.assignment, args.students)
        best = {1: float("inf"), 2: float("inf")}
        for _ in range(args.rounds):
            for jobs in (1, 2):
                seconds, reports = grade(course, args.assignment, jobs)
                bad = [r for r in reports if r.score != r.max_score]
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
