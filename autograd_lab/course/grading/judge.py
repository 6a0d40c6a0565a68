"""The judge: a trusted process that decides each hidden test from the student's data and the reference's.

It runs outside the sandbox, as a subprocess of the grader (``python -m autograd_lab.course.grading.judge``), on the
INSTRUCTOR's source notebook only: the setup cell, the locked helper cells and the solution cells (the reference),
in notebook order, once. At each graded test cell it forks a *snapshot* process that keeps the namespace as it is
there. Per submission and test, the snapshot forks a worker (so no state leaks between submissions) that runs the
test's hidden part with :class:`JudgeMode`: ``x = inputs(rng(seed))``; ``want = decode(encode(exercise(x)))`` on the
solution; the student's bytes are parsed by :func:`exchange.decode`; then ``test.decide(inputs(rng(seed)), got,
want)``. Nothing from the submission is imported, unpickled or executed here: it arrives as bytes and is parsed
strictly.

Protocol (frames ``<byte count>\\n<JSON>`` on stdin, JSON lines on stdout): first ``{"cells": [{"index", "kind",
"grade_id", "source"}], "cell_seconds"}``; then per submission ``{"seeds": {grade_id: int}, "results": {grade_id:
base64 | null}}``, answered by ``{"verdicts": {grade_id: {"passed": bool, "message": str}}}`` or ``{"error": str}``
when the reference itself failed (a :class:`checks.GraderError`: the instructor's bug, not a verdict).
"""

from __future__ import annotations

import base64
import json
import os
import queue
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograd_lab.course import checks
from autograd_lab.course.grading import exchange
from autograd_lab.course.grading.cells import Budget, CellRunner, main_namespace
from autograd_lab.course.grading.wire import frame, read_frame, read_until, write_all


@dataclass(frozen=True)
class Verdict:
    """One hidden test's decision; ``message`` is empty when it passed, else a fixed text or the judge's text."""

    passed: bool
    message: str


class JudgeMode:
    """``checks.hidden_test`` in a judge worker: compute ``want`` on the solution and decide on the student's data."""

    def __init__(self, seed: int, data: bytes | None) -> None:
        self.seed = seed
        self.data = data
        self.outcome: dict[str, Any] | None = None

    def run(self, test: checks.HiddenTest) -> None:
        if self.outcome is not None:
            self.outcome = {"error": f"{test.tag}: checks.hidden_test was called more than once"}
            return
        try:
            want = exchange.decode(exchange.encode(test.exercise(test.draw(self.seed))))
        except BaseException as exc:
            self.outcome = {"error": f"{test.tag}: the exercise failed on the solution "
                                     f"({type(exc).__name__}: {str(exc)[:500]})"}
            return
        self.outcome = {"verdict": decide(test, self.seed, self.data, want)}


def decide(test: checks.HiddenTest, seed: int, data: bytes | None, want: Any) -> tuple[bool, str]:
    """(passed, message) for the student's ``data`` against ``want``; only fixed texts or the judge's own text."""
    if data is None:
        return False, checks.NO_RESULT
    try:
        got = exchange.decode(data)
    except exchange.DataError:
        return False, checks.NOT_PLAIN
    try:
        test.decide(test.draw(seed), got, want)
    except checks.HiddenTestFailed as exc:
        text = str(exc)
        return False, text if text.startswith(checks.WRONG_FORM) else f"{checks.FAILED}: {text}"
    except BaseException:  # the student's data broke the judge (or ran it past its time): a fixed text, no class
        return False, checks.UNCHECKABLE
    return True, ""


def _work(source: str, tag: str, seed: int, data: bytes | None, runner: CellRunner, out: int,
          seconds: float) -> None:
    """The worker: run the hidden part once, write one JSON line (never returns)."""
    try:
        mode = JudgeMode(seed, data)
        checks.set_mode(mode)  # type: ignore[arg-type]
        signal.setitimer(signal.ITIMER_REAL, seconds)
        error = runner.run(source, f"<hidden test {tag}>", None)
        signal.setitimer(signal.ITIMER_REAL, 0)
        if mode.outcome is None:
            why = f"{error['ename']}: {error['evalue'][:500]}" if error else "checks.hidden_test was not called"
            mode.outcome = {"error": f"{tag}: the hidden part failed on the solution ({why})"}
        write_all(out, (json.dumps(mode.outcome) + "\n").encode())
    finally:
        os._exit(0)


def _snapshot(cell: dict, runner: CellRunner, requests: int, answers: int, seconds: float) -> None:
    """Serve requests ``{"seed", "data"}`` for one test, one forked worker each (never returns)."""
    try:
        os.close(0)  # requests come only through its own pipe
        try:  # once here, not in every worker (a broken cell is reported by the worker that runs it)
            runner.compile(cell["source"], f"<hidden test {cell['grade_id']}>")
        except Exception:  # SyntaxError, or ValueError for a null byte
            pass
        while True:
            try:
                request = read_frame(requests)
            except ValueError:
                break
            data = None if request["data"] is None else base64.b64decode(request["data"])
            pid = os.fork()
            if pid == 0:
                _work(cell["source"], cell["grade_id"], int(request["seed"]), data, runner, answers, seconds)
            os.waitpid(pid, 0)
    finally:
        os._exit(0)


def main() -> None:
    channel = os.dup(1)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.environ.setdefault("MPLBACKEND", "agg")
    from autograd_lab.course.grading import lazy

    lazy.install()  # setup cells import matplotlib for demo cells, which the judge never runs: ~0.3 s per judge
    setup = read_frame(0)
    seconds = float(setup["cell_seconds"])
    runner = CellRunner(main_namespace(), Budget(0))
    snapshots: dict[str, tuple[int, int]] = {}  # grade_id -> (request fd, answer fd)
    problems = []
    for cell in sorted(setup["cells"], key=lambda c: c["index"]):
        if cell["kind"] in ("helper", "answer"):
            error = runner.run(cell["source"], f"<cell {cell['index']}: {cell['grade_id']}>", None)
            if error:
                problems.append(f"cell '{cell['grade_id']}' of the source raised {error['ename']}: "
                                f"{error['evalue'][:300]}")
        elif cell["kind"] == "test":
            req_r, req_w = os.pipe()
            ans_r, ans_w = os.pipe()
            if os.fork() == 0:
                os.close(req_w)
                os.close(ans_r)
                os.close(channel)
                for fds in snapshots.values():
                    for fd in fds:
                        os.close(fd)
                _snapshot(cell, runner, req_r, ans_w, seconds)
            os.close(req_r)
            os.close(ans_w)
            snapshots[cell["grade_id"]] = (req_w, ans_r)
    write_all(channel, (json.dumps({"ready": True, "problems": problems}) + "\n").encode())
    while True:
        try:
            request = read_frame(0)
        except ValueError:
            break
        verdicts: dict[str, Any] = {}
        failure: str | None = None
        for tag, (req_w, ans_r) in snapshots.items():
            write_all(req_w, frame({"seed": request["seeds"].get(tag, 0), "data": request["results"].get(tag)}))
            line = read_until(ans_r, time.monotonic() + 2 * seconds + 5, lambda c, n: c[-1].endswith(b"\n"))
            try:
                outcome = json.loads(line)
            except ValueError:
                outcome = {"error": f"{tag}: the judge's worker ended without a verdict"}
            if "error" in outcome:
                failure = str(outcome["error"])
                break
            passed, message = outcome["verdict"]
            verdicts[tag] = {"passed": passed is True, "message": str(message)}
        reply = {"error": failure} if failure else {"verdicts": verdicts}
        write_all(channel, (json.dumps(reply) + "\n").encode())


class Judge:
    """The grader's handle on one judge process for one source notebook (not shared between threads).

    Raises (from the constructor, with ``wait=True``; else from the first :meth:`ready` or :meth:`decide`):
        checks.GraderError: if the judge cannot start or a source cell raises.
    """

    def __init__(self, cells: list[dict[str, Any]], cell_seconds: float, wait: bool = True) -> None:
        """Start the judge process and send it the source's cells; with ``wait=False`` return at once, and the
        first :meth:`decide` waits until the judge is ready (so that several judges start side by side)."""
        package_parent = str(Path(__file__).resolve().parents[3])
        env = {**os.environ, "PYTHONPATH": package_parent, "MPLBACKEND": "agg", "OPENBLAS_NUM_THREADS": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "autograd_lab.course.grading.judge"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(frame({"cells": cells, "cell_seconds": cell_seconds}))
        self.proc.stdin.flush()
        self._failure: checks.GraderError | None = None
        self._ready = False
        if wait:
            self.ready()

    def ready(self) -> None:
        """Wait until the judge has built its namespace from the source (at once when it already has;
        :meth:`decide` calls it).

        Raises:
            checks.GraderError: if the judge cannot start or a source cell raises (again on every later call).
        """
        if self._failure is not None:
            raise self._failure
        if self._ready:
            return
        try:
            reply = self._reply()
            if reply.get("problems"):
                raise checks.GraderError("the source notebook fails in the judge: " + "; ".join(reply["problems"]))
        except checks.GraderError as exc:
            self._failure = exc
            self.close()
            raise
        self._ready = True

    def _reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise checks.GraderError(f"the judge process ended (exit status {self.proc.poll()})")
        return json.loads(line)

    def decide(self, seeds: dict[str, int], results: dict[str, bytes | None]) -> dict[str, Verdict]:
        """The verdict of each graded test from the student's ``results`` (None: no data came back).

        Raises:
            checks.GraderError: if the reference failed on these seeds (the instructor's bug, not a verdict), or
                the judge could not start (:meth:`ready`).
        """
        self.ready()
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame({"seeds": seeds, "results": {
            tag: None if data is None else base64.b64encode(data).decode("ascii") for tag, data in results.items()}}))
        self.proc.stdin.flush()
        reply = self._reply()
        if "error" in reply:
            raise checks.GraderError(str(reply["error"]))
        return {tag: Verdict(bool(v["passed"]), str(v["message"])) for tag, v in reply["verdicts"].items()}

    def close(self) -> None:
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:  # the judge already ended (killed, or crashed): its unsent bytes do not matter
                pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def kill(self) -> None:
        """End the judge now: a thread blocked in :meth:`ready` or :meth:`decide` gets a GraderError."""
        self.proc.kill()


class Judges:
    """A batch's judges, ``count`` processes started side by side and lent out one decision at a time (a
    :class:`Judge` is not shared between threads). Thread-safe; :meth:`decide` waits for an idle judge.

    Starting returns at once: each judge builds its namespace while the first sandboxes run, and the first
    :meth:`decide` on it waits for that (:meth:`Judge.ready`).
    """

    def __init__(self, cells: list[dict[str, Any]], cell_seconds: float, count: int) -> None:
        self.started: list[Judge] = []
        self.idle: queue.Queue[Judge] = queue.Queue()
        try:
            for _ in range(max(1, count)):
                self.started.append(Judge(cells, cell_seconds, wait=False))
                self.idle.put(self.started[-1])
        except BaseException:
            self.close()
            raise

    def decide(self, seeds: dict[str, int], results: dict[str, bytes | None]) -> dict[str, Verdict]:
        """:meth:`Judge.decide` on the next idle judge.

        Raises:
            checks.GraderError: as :meth:`Judge.decide`.
        """
        judge = self.idle.get()
        try:
            return judge.decide(seeds, results)
        finally:
            self.idle.put(judge)

    def close(self) -> None:
        for judge in self.started:
            judge.close()

    def kill(self) -> None:
        """End every judge now (an interrupted or failed batch must not wait for a judge stuck in a source cell)."""
        for judge in self.started:
            judge.kill()


if __name__ == "__main__":
    main()
    os._exit(0)
