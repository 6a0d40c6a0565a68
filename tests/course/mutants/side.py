"""One side of a mutation run, in its own interpreter: ``python -m tests.course.mutants.side SIDE JOB OUT``.

The three sides mirror the grader (autograd_lab/course/grading): the *feedback* side runs the notebook as the
learner's Jupyter does (whole library, visible parts of the tests); the *graded* side runs the answers and each
test's hidden exercise with the chapter's stubbed library (the harness puts that copy first on ``sys.path``) and
keeps the encoded results; the *judge* side runs the instructor's solution and decides on those results with
:func:`autograd_lab.course.grading.judge.decide`. The notebook runs once per side; at each answer cell that has
mutants a child is forked per mutant, which runs the mutant and the rest of the notebook (a fork tree, so a
mutant costs the tail of the notebook only).

JOB is JSON: ``{"cells": [{"index", "kind", "grade_id", "source"}], "mutants": {"<cell index>": [source, ...]},
"seed": str, "cell_seconds": float}`` (the judge side also gets ``"data": [{grade_id: base64|null}, ...]``, one
dict per run: the solution's run first, then the mutants in order). OUT receives the side's JSON report.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any


def _in_child(fn: Any, *args: Any) -> Any:
    """fn(*args) in a forked child; its JSON result (or {"crash": ...} if the child died)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = json.dumps(fn(*args)).encode()
        except BaseException as exc:
            out = json.dumps({"crash": f"{type(exc).__name__}: {exc}"}).encode()
        view = memoryview(out)
        while view:
            view = view[os.write(w, view):]
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 1 << 20):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    data = b"".join(chunks)
    return json.loads(data) if data else {"crash": "the child died without a report"}


def _seed(tag: str, salt: str) -> int:
    from autograd_lab.course import checks

    return checks.grading_seed(f"{tag}|{salt}")


def main() -> None:
    side, job_path, out_path = sys.argv[1:4]
    job = json.loads(open(job_path, encoding="utf-8").read())
    os.environ.setdefault("MPLBACKEND", "agg")
    import numpy  # noqa: F401 - before any fork, as in the grader

    from autograd_lab.course.grading.cells import Budget, CellRunner, main_namespace

    ns = main_namespace()
    runner = CellRunner(ns, Budget(1 << 20))
    cells, seconds, salt = job["cells"], job["cell_seconds"], job["seed"]
    mutants = {int(k): v for k, v in job["mutants"].items()}

    if side == "feedback":
        def tail(start: int, first: str | None) -> dict:
            failures, own = [], None
            for n, cell in enumerate(cells[start:]):
                src = first if (n == 0 and first is not None) else cell["source"]
                err = runner.run(src, f"<cell {cell['index']}>", seconds)
                if err and cell["kind"] == "test":
                    failures.append([cell["grade_id"], err["ename"], err["evalue"]])
                elif err and n == 0 and first is not None:
                    own = f"{err['ename']}: {err['evalue']}"
            return {"failures": failures, "own": own}
    elif side == "graded":
        from autograd_lab.course import checks
        from autograd_lab.course.grading import exchange

        class Exercise(checks.Mode):
            def __init__(self) -> None:
                self.data: bytes | None = None

            def run(self, test: checks.HiddenTest) -> None:
                self.data = exchange.encode(test.exercise(test.draw(_seed(test.tag, salt))))

        def hidden(cell: dict) -> dict:
            mode = Exercise()
            checks.set_mode(mode)
            runner.run(cell["source"], f"<hidden test {cell['grade_id']}>", seconds)
            return {"data": None if mode.data is None else base64.b64encode(mode.data).decode()}

        def tail(start: int, first: str | None) -> dict:
            results = {}
            for n, cell in enumerate(cells[start:]):
                if cell["kind"] == "test":
                    results[cell["grade_id"]] = _in_child(hidden, cell).get("data")
                else:
                    runner.run(first if (n == 0 and first is not None) else cell["source"], f"<cell {cell['index']}>",
                               seconds)
            return {"results": results}
    else:
        from autograd_lab.course import checks
        from autograd_lab.course.grading import exchange, judge

        runs = job["data"]

        class Decide(checks.Mode):
            def __init__(self) -> None:
                self.verdicts: list | str | None = None

            def run(self, test: checks.HiddenTest) -> None:
                seed = _seed(test.tag, salt)
                want = exchange.decode(exchange.encode(test.exercise(test.draw(seed))))
                verdicts = []
                for run in runs:
                    if test.tag not in run:
                        verdicts.append(None)  # this run did not reach the test (it came before the mutant)
                        continue
                    data = run[test.tag]
                    verdicts.append(list(judge.decide(test, seed, None if data is None else base64.b64decode(data),
                                                      want)))
                self.verdicts = verdicts

        def decide(cell: dict) -> dict:
            mode = Decide()
            checks.set_mode(mode)
            err = runner.run(cell["source"], f"<hidden test {cell['grade_id']}>", None)
            return {"verdicts": mode.verdicts, "error": err}

        report = {}
        for cell in cells:
            if cell["kind"] == "test":
                report[cell["grade_id"]] = _in_child(decide, cell)
            else:
                err = runner.run(cell["source"], f"<cell {cell['index']}>", None)
                if err:
                    report.setdefault("__errors__", []).append([cell["index"], err])
        with open(out_path, "w", encoding="utf-8") as f:
            json.dump(report, f)
        return

    report: dict[str, Any] = {"mutants": {}}
    for i, cell in enumerate(cells):
        for n, source in enumerate(mutants.get(cell["index"], [])):
            report["mutants"][f"{cell['index']}:{n}"] = _in_child(tail, i, source)
        if i == 0:
            report["solution"] = _in_child(tail, 0, None)
        if side == "feedback" or cell["kind"] != "test":  # the graded side runs hidden parts in children only
            runner.run(cell["source"], f"<cell {cell['index']}>", seconds)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
