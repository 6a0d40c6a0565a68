"""Run notebook cells in one namespace, as Jupyter would, capturing what they print and display (in the sandbox).

Used by the exercise process (:mod:`autograd_lab.course.grading.exercise`). A cell runs exactly as written: its last
expression, if any, is displayed as Jupyter's ``execute_result``; errors are reported, not raised. Output is kept
up to a byte budget shared by the whole notebook (every MIME type counts).
"""

from __future__ import annotations

import ast
import base64
import builtins
import io
import linecache
import signal
import sys
import traceback
import types
from typing import Any

from autograd_lab.course.grading import lazy


class CellTimeout(BaseException):
    """The cell ran past its wall-clock limit (a BaseException, so ``except Exception`` does not swallow it)."""


class Budget:
    """Bytes of output still allowed for the whole notebook."""

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
    """A text stream that stores what a cell writes, clipped to the budget."""

    def __init__(self, name: str, outputs: list[dict], budget: Budget) -> None:
        self.name = name
        self.outputs = outputs
        self.budget = budget

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if text and self.budget.take(len(text.encode("utf-8", "replace"))):
            last = self.outputs[-1] if self.outputs else None
            if last is not None and last["output_type"] == "stream" and last["name"] == self.name:
                last["text"] += text
            else:
                self.outputs.append({"output_type": "stream", "name": self.name, "text": text})
        return len(text)


def main_namespace() -> dict[str, Any]:
    """A fresh ``__main__`` module's namespace, installed as ``sys.modules["__main__"]`` (as in a kernel)."""
    module = types.ModuleType("__main__")
    sys.modules["__main__"] = module
    module.__dict__["__builtins__"] = builtins
    return module.__dict__


def _on_alarm(signum: int, frame: Any) -> None:
    raise CellTimeout("the cell ran past its time limit")


class CellRunner:
    """Runs cells in ``ns`` with captured output; ``figures`` collects matplotlib figures after each cell."""

    def __init__(self, ns: dict[str, Any], budget: Budget, figures: bool = False) -> None:
        self.ns = ns
        self.budget = budget
        self.figures = figures
        self.outputs: list[dict] = []
        self._compiled: dict[tuple[str, str], tuple[types.CodeType, types.CodeType | None]] = {}
        ns["display"] = self.display
        signal.signal(signal.SIGALRM, _on_alarm)

    def display(self, *objs: Any, **_: Any) -> None:
        for obj in objs:
            self._add("display_data", obj)

    def _add(self, output_type: str, obj: Any) -> None:
        data = mime_bundle(obj)
        if not self.budget.take(sum(len(v) for v in data.values())):
            return
        out: dict[str, Any] = {"output_type": output_type, "data": data, "metadata": {}}
        if output_type == "execute_result":
            out["execution_count"] = None
        self.outputs.append(out)

    def compile(self, source: str, filename: str) -> tuple[types.CodeType, types.CodeType | None]:
        """(the cell's code but its last expression, that expression's code or None), compiled once per text: the
        judge compiles a hidden part before it forks a worker per submission.

        Raises:
            SyntaxError: if ``source`` is not Python.
        """
        key = (source, filename)
        if key not in self._compiled:
            tree = ast.parse(source, filename)
            tail = tree.body[-1] if tree.body else None
            last = tail if isinstance(tail, ast.Expr) else None
            if last is not None:
                tree.body.pop()
            self._compiled[key] = (compile(tree, filename, "exec"),
                                   None if last is None else compile(ast.Expression(last.value), filename, "eval"))
        return self._compiled[key]

    def run(self, source: str, filename: str, timeout: float | None) -> dict[str, str] | None:
        """Execute ``source``; None on success, else ``{"ename", "evalue", "line"}`` of the exception raised."""
        self.outputs = []
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        old = sys.stdout, sys.stderr
        sys.stdout = _Capture("stdout", self.outputs, self.budget)
        sys.stderr = _Capture("stderr", self.outputs, self.budget)
        if timeout:
            signal.setitimer(signal.ITIMER_REAL, timeout)
        error = None
        try:
            body, last = self.compile(source, filename)
            exec(body, self.ns)
            if last is not None:
                value = eval(last, self.ns)
                if value is not None:
                    self._add("execute_result", value)
        except BaseException as exc:  # the cell's error is reported; the notebook goes on, as "Run All" does
            error = describe(exc, filename)
        finally:
            if timeout:
                signal.setitimer(signal.ITIMER_REAL, 0)
            sys.stdout, sys.stderr = old
        if self.figures:
            self._collect_figures()
        return error

    def _collect_figures(self) -> None:
        plt = lazy.loaded("matplotlib.pyplot")
        if plt is None:  # never imported, or deferred and never used: no figures
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
        except Exception:  # a broken figure costs its picture, not the feedback
            pass


def mime_bundle(obj: Any) -> dict[str, str]:
    """``{"text/plain": repr(obj)}``, plus a PNG from ``_repr_png_`` when the object has one."""
    data: dict[str, str] = {}
    try:
        png = obj._repr_png_() if callable(getattr(obj, "_repr_png_", None)) else None
    except Exception:
        png = None
    if isinstance(png, bytes):
        data["image/png"] = base64.b64encode(png).decode("ascii")
    try:
        data["text/plain"] = repr(obj)
    except Exception as exc:
        data["text/plain"] = f"<repr failed: {type(exc).__name__}>"
    return data


def describe(exc: BaseException, filename: str) -> dict[str, str]:
    """ename, evalue (clipped) and the last line of the cell on the traceback."""
    if isinstance(exc, CellTimeout):
        return {"ename": "CellTimeoutError", "evalue": str(exc), "line": ""}
    line = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = str(frame.lineno)
    try:
        evalue = str(exc)
    except Exception:
        evalue = "<unprintable>"
    return {"ename": type(exc).__name__, "evalue": evalue[:2000], "line": line}
