"""The exercise process: runs a submission in the sandbox and hands out data. It decides nothing.

Started by :mod:`autograd_lab.course.grading.sandbox` as ``python -m autograd_lab.course.grading.exercise``. Its
stdout is the report channel, JSON lines; descriptors 1 and 2 point at ``/dev/null`` before any cell runs. The job
arrives on stdin in two frames (``<byte count>\\n<JSON>``), and the grader sends the second only after the first
part's report is complete:

1. **Public part** ``{"limits", "cells": [{"index", "kind", "grade_id", "source"}]}``: the student's notebook as
   the learner sees it (setup, helper, answer and demo cells, and only the *visible* part of each test cell). A
   feedback child, forked before the secret part exists in the sandbox, runs every cell in order as Jupyter's
   "Run All" does (an error does not stop later cells) and reports each cell's outputs and error: ``{"event":
   "outputs", ...}`` per cell, then ``{"event": "public_done"}``. That is all the feedback a student sees from the
   sandbox, so it cannot depend on hidden values; the grader accepts no outputs after ``public_done``.
2. **Secret part** ``{"seeds": {grade_id: int}, "tests": [{"index", "grade_id", "source"}]}``: each graded test's
   hidden part without its judge. This process runs the setup, helper and answer cells once, in notebook order, and
   at each graded test forks a child that runs the hidden part with :class:`ExerciseMode`: ``hidden_test`` draws
   ``x`` from the test's seed, runs ``exercise(x)`` and writes ``exchange.encode(results)`` to the child's own
   pipe. The harness forwards those bytes (at most :data:`exchange.MAX_BYTES`) as ``{"event": "result",
   "grade_id", "data": base64 | null}``; a timeout, crash or memory blow-up gives ``null`` for that test only.
   ``{"event": "done"}`` ends the report.

Any process here may be the student's: whatever it writes is data for the judge, never a verdict.
"""

from __future__ import annotations

import base64
import json
import os
import resource
import signal
import time
from typing import Any

from autograd_lab.course.grading.cells import Budget, CellRunner, main_namespace
from autograd_lab.course.grading.wire import read_frame, read_until, write_all

MIB = 1024**2
FRAME_HEADER = 8  # a test child's message: its length (8 bytes, big-endian), then the bytes
STUB_FRAME = b"\xff" * FRAME_HEADER  # no length: the hidden part stopped in one of the chapter's stubs


def stubs_mark() -> str:
    from autograd_lab.course.grading.stubs import MARK

    return MARK


class _Reporter:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, record: dict[str, Any]) -> None:
        write_all(self.fd, (json.dumps(record) + "\n").encode())


def apply_limits(limits: dict[str, Any]) -> None:
    """Per-process limits, inherited by every child (memory, CPU, file size, processes, no core files)."""
    def cap(which: int, value: int) -> None:
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))

    cap(resource.RLIMIT_AS, int(limits["memory_mb"]) * MIB)
    cpu = int(limits["cpu_seconds"])
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5 if hard == resource.RLIM_INFINITY else hard))
    cap(resource.RLIMIT_FSIZE, int(limits["file_mb"]) * MIB)
    # + the harness and the one child (feedback run or test) that student code runs in
    cap(resource.RLIMIT_NPROC, int(limits["processes"]) + int(limits.get("nproc_base", 0)) + 2)
    cap(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big file then fails with OSError in its own cell


def _filename(cell: dict) -> str:
    return f"<cell {cell['index']}: {cell['grade_id'] or 'unnamed'}>"


def _kill(pid: int) -> None:
    """SIGKILL ``pid``'s process group and ``pid``, and reap it."""
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _clean_output(out: Any) -> dict[str, Any]:
    """One output, rebuilt from plain text and PNG only (a forged record cannot carry HTML or script)."""
    kind = out["output_type"]
    if kind == "stream":
        return {"output_type": "stream", "name": "stderr" if out["name"] == "stderr" else "stdout",
                "text": str(out["text"])}
    if kind in ("display_data", "execute_result"):
        data = {str(k): str(v) for k, v in dict(out["data"]).items() if k in ("text/plain", "image/png")}
        clean: dict[str, Any] = {"output_type": kind, "data": data, "metadata": {}}
        if kind == "execute_result":
            clean["execution_count"] = None
        return clean
    raise ValueError(kind)


def _feedback_child(cells: list[dict], out_w: int, limits: dict[str, Any], figures: bool) -> None:
    """Run every public cell in order and stream ``{"index", "outputs", "error"}`` lines (never returns)."""
    try:
        os.setpgid(0, 0)  # its own group, so the harness can kill whatever it leaves running
        runner = CellRunner(main_namespace(), Budget(int(limits["output_kb"]) * 1024), figures)
        for cell in cells:
            error = runner.run(cell["source"], _filename(cell), float(limits["cell_seconds"]))
            write_all(out_w, (json.dumps({"index": cell["index"], "outputs": runner.outputs, "error": error},
                                          default=str) + "\n").encode())
        write_all(out_w, (json.dumps({"end": True, "truncated": runner.budget.truncated}) + "\n").encode())
    finally:
        os._exit(0)


def _public(cells: list[dict], limits: dict[str, Any], report: _Reporter, stdin: int) -> set[int]:
    """Fork the feedback child, forward its checked records, then report ``public_done``; the indices of the cells
    that ran past their time limit there (the secret part does not run them again: the same code, no secret yet,
    would only spend another ``cell_seconds``)."""
    figures = any("matplotlib" in c["source"] for c in cells)  # pyplot itself loads on first use (lazy.py)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(report.fd)
        os.close(stdin)  # the secret part will arrive there
        _feedback_child(cells, w, limits, figures)
    os.close(w)
    deadline = time.monotonic() + float(limits["notebook_seconds"]) / 2
    data = read_until(r, deadline, lambda chunks, size: b'{"end": true' in b"".join(chunks[-2:])[-200:])
    os.close(r)
    _kill(pid)
    known = {c["index"] for c in cells}
    budget = Budget(int(limits["output_kb"]) * 1024)
    seen: set[int] = set()
    timed_out: set[int] = set()
    truncated = False
    for line in data.splitlines():
        try:
            record = json.loads(line)
            if record.get("end") is True:
                truncated = record.get("truncated") is True
                break
            index = int(record["index"])
            outputs = [_clean_output(o) for o in record["outputs"]][:100]
            error = record.get("error")
            error = {k: str(error.get(k, ""))[:2000] for k in ("ename", "evalue", "line")} if error else None
        except Exception:  # the student's code may write to this pipe too: a malformed line is dropped
            continue
        if index in known and index not in seen and budget.take(len(json.dumps(outputs))):
            seen.add(index)
            report.send({"event": "outputs", "index": index, "outputs": outputs, "error": error})
            if error and error["ename"] == "CellTimeoutError":
                timed_out.add(index)
    report.send({"event": "public_done", "truncated": truncated or budget.truncated})
    return timed_out


class ExerciseMode:
    """``checks.hidden_test`` in a test child: draw ``x`` from the seed, run the exercise, write the encoded results
    (a framed message; empty when the results are not plain data) to ``fd`` and end the process."""

    def __init__(self, seeds: dict[str, int], fd: int) -> None:
        self.seeds = seeds
        self.fd = fd

    def run(self, test: Any) -> None:
        from autograd_lab.course.grading import exchange

        if test.tag not in self.seeds:
            os._exit(0)
        results = test.exercise(test.draw(self.seeds[test.tag]))
        try:
            data = exchange.encode(results)
        except exchange.DataError:
            data = b""
        write_all(self.fd, len(data).to_bytes(FRAME_HEADER, "big") + data)
        os._exit(0)


def _run_test(test: dict, runner: CellRunner, seeds: dict[str, int], cell_s: float, report_fd: int) -> bytes | None:
    """Fork a child that runs one test's hidden part; its encoded results, or None."""
    from autograd_lab.course import checks
    from autograd_lab.course.grading import exchange

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.close(r)
            os.close(report_fd)
            checks.set_mode(ExerciseMode(seeds, w))  # type: ignore[arg-type]
            error = runner.run(test["source"], f"<hidden test {test['grade_id']}>", None)
            if error and error.get("ename") == "NotImplementedError" and stubs_mark() in str(error.get("evalue")):
                write_all(w, STUB_FRAME)  # a hint for the message of an already failed test, never a result
        finally:
            os._exit(0)
    os.close(w)
    limit = FRAME_HEADER + exchange.MAX_BYTES

    def complete(chunks: list[bytes], size: int) -> bool:
        if size >= FRAME_HEADER:  # each chunk holds at least a byte: the header is within the first eight
            want = FRAME_HEADER + int.from_bytes(b"".join(chunks[:FRAME_HEADER])[:FRAME_HEADER], "big")
            return size >= min(want, limit + 1)
        return False

    data = read_until(r, time.monotonic() + cell_s, complete)
    os.close(r)
    _kill(pid)
    if data[:FRAME_HEADER] == STUB_FRAME:
        return STUB_FRAME
    if len(data) < FRAME_HEADER:
        return None
    size = int.from_bytes(data[:FRAME_HEADER], "big")
    body = data[FRAME_HEADER:FRAME_HEADER + size]
    return body if size <= exchange.MAX_BYTES and len(body) == size else None


def _secret(cells: list[dict], job: dict, limits: dict[str, Any], report: _Reporter, skip: set[int]) -> None:
    """Run setup, helpers and answers in order (except ``skip``); at each graded test, fork its exercise child."""
    seeds = {str(k): int(v) for k, v in job["seeds"].items()}
    tests = {int(t["index"]): t for t in job["tests"]}
    runner = CellRunner(main_namespace(), Budget(0))
    cell_s = float(limits["cell_seconds"])
    for cell in cells:
        if cell["kind"] in ("helper", "answer") and cell["index"] not in skip:
            runner.run(cell["source"], _filename(cell), cell_s)
        elif cell["index"] in tests:
            test = tests[cell["index"]]
            data = _run_test(test, runner, seeds, cell_s, report.fd)
            stub = data == STUB_FRAME
            report.send({"event": "result", "grade_id": test["grade_id"], "stub": stub,
                         "data": None if data is None or stub else base64.b64encode(data).decode("ascii")})


def main() -> None:
    public = read_frame(0)
    report = _Reporter(os.dup(1))
    null_out = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null_out, 1)
    os.dup2(null_out, 2)
    limits = public["limits"]
    apply_limits(limits)
    import numpy  # noqa: F401  (imported once, before anything forks)

    import autograd_lab  # noqa: F401
    from autograd_lab.course import checks  # noqa: F401
    from autograd_lab.course.grading import lazy

    lazy.install()

    cells = sorted(public["cells"], key=lambda c: c["index"])
    stdin = os.dup(0)
    null_in = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_in, 0)  # the feedback child inherits no way to read the secret part
    skip = {int(i) for i in public.get("skip", [])}  # cells the secret part does not run (sandbox.run_job)
    if public.get("feedback", True):
        skip |= _public(cells, limits, report, stdin)
    else:  # the feedback ran in a sandbox of its own, with the whole library (sandbox.run_job)
        report.send({"event": "public_done", "truncated": False})
    secret = read_frame(stdin)
    os.close(stdin)
    if secret["tests"]:
        _secret(cells, secret, limits, report, skip)
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    report.send({"event": "done", "cpu_seconds": round(own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
                                                        3)})


if __name__ == "__main__":
    main()
    os._exit(0)  # everything was reported; skip finalizers the student's code left behind
