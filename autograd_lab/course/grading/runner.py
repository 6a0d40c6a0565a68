"""The harness that runs inside the sandbox: executes one assembled notebook and reports verdicts on a pipe.

Started by :mod:`autograd_lab.course.grading.sandbox` as ``python -m autograd_lab.course.grading.runner``. It reads
the job (JSON) from stdin and closes stdin, so the hidden tests never exist on any disk the student's code can see.
Its stdout is the report channel: the harness keeps a private copy of that descriptor and points descriptors 1
and 2 at ``/dev/null`` before any cell runs, so nothing a cell prints reaches the grader except through the
harness. The report is JSON lines: ``start`` (a cell begins), ``cell`` (an answer/helper cell raised), ``test``
(a verdict), ``outputs`` (captured outputs for feedback), ``done``.

Processes (no Jupyter kernel; NumPy and autograd_lab are imported once, before anything forks):

- the harness runs the setup, helper and answer cells in one namespace, in notebook order (the static check
  allows only definitions in answer cells); demo cells are not run here, since tests may use only the setup,
  helpers and answers above them (assignments/CONVENTIONS.md);
- for each graded test cell it forks a child that runs the test and writes one record to a pipe of its own. The
  verdict is "the record says the cell ran to the end without an exception AND the child exited with status 0";
  a crash, a timeout (the harness kills the child) or a memory blow-up costs only that test. Nothing displayed
  counts;
- a feedback child, forked before any student code ran, waits until every verdict is in and then runs all
  non-test cells (demos included) to capture their outputs; its records are checked and can never be verdicts.
"""

from __future__ import annotations

import ast
import base64
import builtins
import io
import json
import linecache
import os
import resource
import select
import signal
import sys
import time
import traceback
import types
from typing import Any

from autograd_lab.course.grading import audit, guard, hidden

MIB = 1024**2


class CellTimeout(BaseException):
    """The cell ran past its wall-clock limit (a BaseException, so ``except Exception`` cannot swallow it)."""


class AnswerRefused(RuntimeError):
    """Raised in place of an answer cell that the static check refused."""


class _Budget:
    """Bytes of output still allowed for the whole notebook (every MIME type counts)."""

    def __init__(self, total: int) -> None:
        self.left = total
        self.truncated = False

    def take(self, size: int) -> bool:
        if size > self.left:
            self.left = 0
            self.truncated = True
            return False
        self.left -= size
        return True


class _Capture(io.TextIOBase):
    """A text stream that stores what a cell writes, clipped to the output budget."""

    def __init__(self, name: str, outputs: list[dict], budget: _Budget) -> None:
        self.name = name
        self.outputs = outputs
        self.budget = budget

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:
            return 0
        if not self.budget.take(len(text.encode("utf-8", "replace"))):
            return len(text)
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["output_type"] == "stream" and last["name"] == self.name:
            last["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": self.name, "text": text})
        return len(text)


class _Cell:
    """Runs cells in one namespace with captured output."""

    def __init__(self, ns: dict[str, Any], budget: _Budget, figures: bool,
                 attributes: guard.AttributeGuard | None = None) -> None:
        self.ns = ns
        self.budget = budget
        self.figures = figures
        self.outputs: list[dict] = []
        self.attributes = attributes  # answer cells' attribute writes go through it (see grading/guard.py)

    def display(self, *objs: Any, **_: Any) -> None:
        for obj in objs:
            self._add("display_data", obj)

    def _add(self, output_type: str, obj: Any) -> None:
        data = _mime_bundle(obj)
        size = sum(len(v) for v in data.values())
        if not self.budget.take(size):
            return
        out: dict[str, Any] = {"output_type": output_type, "data": data, "metadata": {}}
        if output_type == "execute_result":
            out["execution_count"] = None
        self.outputs.append(out)

    def run(self, source: str, filename: str, timeout: float | None) -> dict[str, Any] | None:
        """Execute ``source``; return None on success or {ename, evalue, traceback} for the exception raised."""
        self.outputs = []
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        old = sys.stdout, sys.stderr
        sys.stdout = _Capture("stdout", self.outputs, self.budget)
        sys.stderr = _Capture("stderr", self.outputs, self.budget)
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        error = None
        try:
            tree = ast.parse(source, filename)
            answer = self.attributes is not None and filename in self.attributes.student_files
            if answer and self.attributes is not None:
                self.attributes.resolve(filename, self.ns)
                tree = guard.instrument(tree, filename, self.attributes.method_names.get(filename, frozenset()))
            last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            if last is not None:
                tree.body.pop()
            exec(compile(tree, filename, "exec"), self.ns)
            if answer and self.attributes is not None:
                self.attributes.adopt(self.ns, tree)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), filename, "eval"), self.ns)
                if value is not None:
                    self._add("execute_result", value)
        except BaseException as exc:
            error = _describe(exc, filename)
        finally:
            if timeout:
                signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout, sys.stderr = old
        if self.figures:
            self._collect_figures()
        return error

    def _collect_figures(self) -> None:
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return
        try:
            for number in plt.get_fignums():
                buf = io.BytesIO()
                plt.figure(number).savefig(buf, format="png", dpi=72)
                png = base64.b64encode(buf.getvalue()).decode("ascii")
                if self.budget.take(len(png)):
                    self.outputs.append({"output_type": "display_data", "metadata": {},
                                         "data": {"image/png": png, "text/plain": "<Figure>"}})
            plt.close("all")
        except Exception:
            pass


def _mime_bundle(obj: Any) -> dict[str, str]:
    data: dict[str, str] = {}
    for mime, method in (("image/svg+xml", "_repr_svg_"), ("image/png", "_repr_png_"), ("text/html", "_repr_html_")):
        try:
            value = getattr(obj, method, None)
            value = value() if callable(value) else None
        except Exception:
            value = None
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        if isinstance(value, str):
            data[mime] = value
    try:
        data["text/plain"] = repr(obj)
    except Exception as exc:
        data["text/plain"] = f"<repr failed: {type(exc).__name__}>"
    return data


def _describe(exc: BaseException, filename: str) -> dict[str, Any]:
    """ename, evalue and the last lines of the traceback that belong to the cell (line numbers only)."""
    if isinstance(exc, CellTimeout):
        return {"ename": "CellTimeoutError", "evalue": str(exc), "line": ""}
    line = ""
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in frames:
        if frame.filename == filename:
            line = str(frame.lineno)
    try:
        evalue = str(exc)
    except Exception:
        evalue = "<unprintable>"
    raised_here = bool(frames) and frames[-1].filename == filename  # not in a call below the cell's line
    return {"ename": type(exc).__name__, "evalue": evalue[:2000], "line": line, "in_cell": raised_here,
            "own_code": _own_code_refusal(exc, frames, filename)}


def _own_code_refusal(exc: BaseException, frames: traceback.StackSummary, filename: str) -> bool:
    """Whether ``exc`` is the grader's own-code refusal: the real NotOwnCodeError, raised by checks.assert_own_code
    called straight from the cell, with no other code between (its message names the student's code and the
    reference's public name only, never a hidden input: grading/hidden.py shows it)."""
    from autograd_lab.course import checks

    if type(exc) is not checks.NotOwnCodeError:
        return False
    in_cell = [i for i, frame in enumerate(frames) if frame.filename == filename]
    below = frames[in_cell[-1] + 1:] if in_cell else []
    checks_file = checks.assert_own_code.__code__.co_filename
    return (bool(below) and below[0].name == "assert_own_code" and below[-1].name == "fail"
            and all(frame.filename == checks_file for frame in below))


class _Reporter:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, record: dict[str, Any]) -> None:
        data = (json.dumps(record) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]


def _apply_limits(limits: dict[str, Any]) -> None:
    def cap(which: int, value: int) -> None:
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (value, value))

    cap(resource.RLIMIT_AS, int(limits["memory_mb"]) * MIB)
    cpu = int(limits["cpu_seconds"])
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5 if hard == resource.RLIM_INFINITY else hard))
    cap(resource.RLIMIT_FSIZE, int(limits["file_mb"]) * MIB)
    cap(resource.RLIMIT_NPROC, int(limits["processes"]) + int(limits.get("nproc_base", 0)) + 3)
    cap(resource.RLIMIT_CORE, 0)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a too-big file then fails with OSError in its own cell


def _on_alarm(signum: int, frame: Any) -> None:
    raise CellTimeout("the cell ran past its time limit")


def _read_all(fd: int, deadline: float, until_newline: bool = False) -> tuple[bytes, bool]:
    """Read ``fd`` until EOF (or a newline, if ``until_newline``) or ``deadline`` (time.monotonic).

    Returns (data, complete). A test's record is one line: processes the test left running still hold the pipe
    open, so the end of the record, not EOF, says the test process is done.
    """
    chunks: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"".join(chunks), False
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks), True
        chunks.append(chunk)
        if until_newline and chunk.endswith(b"\n"):
            return b"".join(chunks), True


def _kill(pid: int) -> int:
    """SIGKILL ``pid`` if it still runs and reap it; its wait status."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return os.waitpid(pid, 0)[1]


def _reap(pid: int, deadline: float) -> int:
    """Wait for ``pid`` to exit until ``deadline``, then kill it; its wait status."""
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.002)
    return _kill(pid)


#: Modules whose attributes each test process puts back as they were before any student code ran: a definition
#: that slipped a monkeypatch past the static check (``np.allclose = ...``) cannot carry it into the tests.
PRISTINE = ("builtins", "numpy", "numpy.random", "numpy.testing", "numpy.linalg", "math",
            "autograd_lab", "autograd_lab.ops", "autograd_lab.engine", "autograd_lab.variable",
            "autograd_lab.operator", "autograd_lab.gradcheck", "autograd_lab.course.checks")


class _Pristine:
    """A snapshot of the attributes of :data:`PRISTINE` modules, restorable in a test process."""

    def __init__(self) -> None:
        self.saved = {name: dict(vars(sys.modules[name])) for name in PRISTINE if name in sys.modules}

    def restore(self) -> list[str]:
        """Undo changes since the snapshot; the names of what was changed (for the record)."""
        changed = []
        for name, attrs in self.saved.items():
            namespace = vars(sys.modules[name])
            # Added submodules stay: importing numpy.fft legitimately sets numpy.fft (numpy's lazy __getattr__
            # would recurse without it).
            for key in [k for k, v in namespace.items() if k not in attrs and not isinstance(v, types.ModuleType)]:
                del namespace[key]
                changed.append(f"{name}.{key}")
            for key, value in attrs.items():
                if namespace.get(key, _MISSING) is not value:
                    namespace[key] = value
                    changed.append(f"{name}.{key}")
        return changed


_MISSING = object()


def _namespace(job: dict[str, Any]) -> dict[str, Any]:
    module = types.ModuleType("__main__")
    sys.modules["__main__"] = module
    ns = module.__dict__
    ns["__builtins__"] = builtins
    ns["AnswerRefused"] = AnswerRefused
    return ns


def _student_files(cells: list[dict]) -> frozenset[str]:
    """The file names answer cells are compiled under (the audit hook and the attribute guard watch them)."""
    return frozenset(f"<cell {c['index']}: {c['grade_id'] or 'unnamed'}>" for c in cells if c["kind"] == "answer")


def _references(cells: list[dict]) -> dict[str, list[str]]:
    """Each answer cell's file name -> the references its tests name (it may not call them, see grading/guard.py)."""
    return {f"<cell {c['index']}: {c['grade_id'] or 'unnamed'}>": [str(r) for r in c.get("references", [])]
            for c in cells if c["kind"] == "answer"}


def _install_seeds(seeds: dict[str, int]) -> None:
    from autograd_lab.course import checks

    def grading_seed(tag: str) -> int:
        if tag not in seeds:
            raise KeyError(f"checks.grading_rng({tag!r}): the grader prepared no seed for this tag; a hidden test "
                           f"must pass a constant string (its grade_id)")
        return seeds[tag]

    checks.grading_seed = grading_seed  # type: ignore[assignment]


def main() -> None:
    job = json.loads(sys.stdin.buffer.read())
    null_in = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null_in, 0)
    report = _Reporter(os.dup(1))
    null_out = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null_out, 1)
    os.dup2(null_out, 2)
    limits = job["limits"]
    _apply_limits(limits)
    os.environ.setdefault("MPLBACKEND", "agg")
    import numpy  # imported once here, so every forked child starts warm

    import autograd_lab  # noqa: F401

    figures = any("matplotlib" in c["source"] for c in job["cells"])
    if figures:
        import matplotlib

        matplotlib.use("agg")
        import matplotlib.pyplot
    import numpy.linalg
    import numpy.testing  # noqa: F401

    _install_seeds({k: int(v) for k, v in job.get("seeds", {}).items()})
    pristine = _Pristine()
    signal.signal(signal.SIGALRM, _on_alarm)
    budget = _Budget(int(limits["output_kb"]) * 1024)
    cells = job["cells"]
    cell_s = float(limits["cell_seconds"])

    go_r, go_w = os.pipe()
    fb_r, fb_w = os.pipe()
    feedback_pid = os.fork()
    if feedback_pid == 0:
        os.close(go_w)
        os.close(fb_r)
        os.close(report.fd)
        _feedback_child(cells, go_r, fb_w, job, cell_s, figures)
    os.close(go_r)
    os.close(fb_w)

    ns = _namespace(job)
    student_files = _student_files(cells)
    runner = _Cell(ns, budget, figures=False, attributes=guard.install(ns, student_files, _references(cells)))
    ns["display"] = runner.display
    # From here on student code runs (the feedback child, forked before, only makes outputs for feedback).
    audit.arm(student_files)
    for cell in cells:
        filename = f"<cell {cell['index']}: {cell['grade_id'] or 'unnamed'}>"
        if cell["kind"] in ("answer", "helper"):
            report.send({"event": "start", "index": cell["index"]})
            error = runner.run(cell["source"], filename, cell_s)
            if cell["kind"] == "answer":
                pristine.restore()  # the harness itself needs intact builtins and numpy
            if error is not None:
                report.send({"event": "cell", "index": cell["index"], "error": error})
        elif cell["graded"]:
            report.send({"event": "start", "index": cell["index"]})
            report.send(_run_test(cell, runner, filename, cell_s, budget, report.fd, (go_w, fb_r), pristine))

    # Every verdict is in: let the feedback child run and forward its outputs (checked: never a verdict).
    allowed = {c["index"] for c in cells if not c["graded"]}
    os.write(go_w, b"g")
    os.close(go_w)
    deadline = time.monotonic() + float(limits["notebook_seconds"])
    data, _ = _read_all(fb_r, deadline)
    _kill(feedback_pid)
    for line in data.splitlines():
        try:
            record = json.loads(line)
            index = int(record["index"])
            outputs = [_clean_output(o) for o in record["outputs"]][:100]
            error = record.get("error")
            error = {k: str(error.get(k, ""))[:2000] for k in ("ename", "evalue", "line")} if error else None
        except Exception:
            continue
        if index in allowed:
            size = len(json.dumps(outputs))
            if budget.take(size):
                report.send({"event": "outputs", "index": index, "outputs": outputs, "error": error})
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    report.send({"event": "done", "truncated": budget.truncated, "cpu_seconds": round(cpu, 3)})


def _clean_output(out: Any) -> dict[str, Any]:
    kind = out["output_type"]
    if kind == "stream":
        return {"output_type": "stream", "name": "stderr" if out["name"] == "stderr" else "stdout",
                "text": str(out["text"])}
    if kind in ("display_data", "execute_result"):
        # Only plain text and PNG ever leave the sandbox: a forged record cannot carry HTML or script.
        data = {str(k): str(v) for k, v in dict(out["data"]).items() if k in ("text/plain", "image/png")}
        clean: dict[str, Any] = {"output_type": kind, "data": data, "metadata": {}}
        if kind == "execute_result":
            clean["execution_count"] = None
        return clean
    raise ValueError(kind)


def _run_test(cell: dict, runner: _Cell, filename: str, cell_s: float, budget: _Budget, report_fd: int,
              private: tuple[int, int], pristine: _Pristine) -> dict[str, Any]:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the test process: runs the test, writes one record, exits without cleanup
        try:
            os.close(r)
            os.close(report_fd)
            for fd in private:
                os.close(fd)
            signal.setitimer(signal.ITIMER_REAL, 0)
            patched = pristine.restore()
            error, outputs = _run_in_parts(cell["source"], runner, filename)
            result = {"passed": error is None, "outputs": outputs, "truncated": budget.truncated,
                      "patched": patched[:20], **(error or {})}
            data = json.dumps(result).encode() + b"\n"
            view = memoryview(data)
            while view:
                view = view[os.write(w, view):]
        finally:
            os._exit(0)
    os.close(w)
    data, eof = _read_all(r, time.monotonic() + cell_s, until_newline=True)
    os.close(r)
    status = _kill(pid) if not eof else _reap(pid, time.monotonic() + 2.0)
    verdict: dict[str, Any] = {"event": "test", "index": cell["index"], "grade_id": cell["grade_id"]}
    if not eof:
        return {**verdict, "passed": False, "ename": "CellTimeoutError",
                "evalue": f"the test ran past the time limit of {cell_s:g} s and was stopped", "outputs": []}
    try:
        record: Any = json.loads(data)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        how = (f"was killed by signal {signal.Signals(os.WTERMSIG(status)).name}" if os.WIFSIGNALED(status)
               else f"exited with status {os.WEXITSTATUS(status)}")
        hint = " (over the CPU time limit)" if os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU \
            else ""
        return {**verdict, "passed": False, "ename": "TestProcessDied",
                "evalue": f"the test process {how}{hint} before the test finished", "outputs": []}
    try:
        outputs = [_clean_output(o) for o in record.get("outputs", [])]
    except Exception:
        outputs = []
    budget.take(len(json.dumps(outputs)))
    budget.truncated = budget.truncated or record.get("truncated") is True
    passed = record.get("passed") is True and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    undone: list = record["patched"] if isinstance(record.get("patched"), list) else []
    return {**verdict, "passed": passed, "ename": str(record.get("ename", "")), "patched": [str(p) for p in undone],
            "evalue": str(record.get("evalue", ""))[:2000], "line": str(record.get("line", "")),
            "outputs": outputs}


def _run_in_parts(source: str, runner: _Cell, filename: str) -> tuple[dict[str, Any] | None, list[dict]]:
    """Run a test cell's visible part, then its hidden part, showing nothing of the hidden inputs (grading/hidden.py).

    Returns (the error or None, the outputs to show).
    """
    visible, hidden_part = hidden.split(source)
    error = runner.run(visible, filename, None) if visible else None
    outputs = list(runner.outputs) if visible else []
    if error is None and hidden_part is not None:
        error = runner.run(hidden_part, filename, None)
        dropped = sum(len(o.get("text", "")) + sum(len(v) for v in o.get("data", {}).values()) for o in runner.outputs)
        if runner.outputs:
            outputs.append(hidden.dropped_note(dropped))
        if error is not None and error["ename"] != "CellTimeoutError":
            line = int(error["line"]) if str(error.get("line", "")).isdigit() else 0
            shown = error["evalue"] if error.get("own_code") else None
            error = {**error, "evalue": hidden.masked_message(source, line, bool(error.get("in_cell")),
                                                             error["ename"], own_code_refusal=shown)}
    return error, outputs


def _feedback_child(cells: list[dict], go_r: int, out_w: int, job: dict, cell_s: float, figures: bool) -> None:
    """Wait for the go signal, then run every non-test cell in order and stream its outputs (never returns)."""
    try:
        if os.read(go_r, 1) != b"g":
            os._exit(0)
        os.close(go_r)
        ns = _namespace(job)
        budget = _Budget(int(job["limits"]["output_kb"]) * 1024)
        runner = _Cell(ns, budget, figures, attributes=guard.install(ns, _student_files(cells), _references(cells)))
        audit.arm(_student_files(cells))  # its outputs go to the student: the same rules as in the tests
        ns["display"] = runner.display
        for cell in cells:
            if cell["graded"]:
                continue
            filename = f"<cell {cell['index']}: {cell['grade_id'] or 'unnamed'}>"
            error = runner.run(cell["source"], filename, cell_s)
            data = (json.dumps({"index": cell["index"], "outputs": runner.outputs, "error": error}) + "\n").encode()
            view = memoryview(data)
            while view:
                view = view[os.write(out_w, view):]
    finally:
        os._exit(0)


if __name__ == "__main__":
    main()
    # Everything was reported (unbuffered, on the report descriptor): skip the interpreter's finalization, which
    # costs ~0.1-0.3 s of CPU with NumPy loaded (and would run finalizers that student code left behind).
    os._exit(0)
