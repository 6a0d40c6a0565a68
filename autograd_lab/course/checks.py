"""What the course's test cells use: seeded hidden inputs, and a hidden test split into exercise and judge.

A graded test cell has a visible part (plain ``assert`` statements with fixed, readable values: they teach) and a
hidden part, which is one call of :func:`hidden_test`::

    ### BEGIN HIDDEN TESTS
    def inputs(rng):                       # plain data drawn from the seeded generator
        return {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=(3, 4))}

    def exercise(x):                       # calls the answer; returns plain data
        a, b = Variable.from_numpy(x["a"]), Variable.from_numpy(x["b"])
        y = AddOp()(a, b)
        Engine.backward(y, grad=np.ones((3, 4)))
        return {"y": y.data, "ga": a.grad, "gb": b.grad}

    checks.hidden_test("add_op_test", inputs=inputs, exercise=exercise, replaces=["autograd_lab.ops.AddOp"])
    ### END HIDDEN TESTS

Where it runs decides what the call does:

- **In a notebook** (an instructor running the source, nbval, ``nbgrader validate``): everything in one kernel.
  ``exercise`` runs twice on inputs drawn twice from the same seed; both results make a round trip through the
  plain-data encoding; the judge compares them. This proves the exercise deterministic and its results plain data;
  a failure raises ``AssertionError`` with the details.
- **In the grader's sandbox** (:mod:`autograd_lab.course.grading.exercise`): ``exercise`` runs on the student's
  answers and its results leave the sandbox as bytes. Nothing is decided there.
- **In the judge** (:mod:`autograd_lab.course.grading.judge`), a trusted process that never runs student code:
  ``exercise`` runs on the instructor's solution, from inputs drawn from the same seed, giving the expected
  results. The student's results are parsed strictly; they must have the expected form (keys, types, shapes,
  dtypes, lengths), then ``judge(x, got, want)`` decides, by default :func:`compare`.

Every message a student can see from a hidden part is text the judge wrote: a fixed sentence, or the ``message``
an author gave :func:`expect` / :func:`expect_close` (write it without hidden values).
"""

from __future__ import annotations

import hashlib
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

#: Where the grader puts the instructor's secret: an environment variable, or a file named by one. Without either,
#: the public default below is used (CI, an instructor's own runs), so the behaviour is reproducible.
SECRET_ENV = "AUTOGRAD_LAB_GRADING_SECRET"
SECRET_FILE_ENV = "AUTOGRAD_LAB_GRADING_SECRET_FILE"
PUBLIC_SECRET = "autograd-lab-public-default"

#: The fixed texts of a hidden part's failures (they never depend on hidden values).
NO_RESULT = ("The hidden test did not finish on its hidden inputs: your code raised an exception, ran past the "
             "time limit or ended the process. The hidden inputs have other shapes and values than the visible ones.")
NOT_PLAIN = "The hidden test's results could not be read as plain data."
WRONG_FORM = "The hidden test's results do not have the expected form"
FAILED = "The hidden test found"
UNCHECKABLE = "The hidden test's judge could not check your results."
STUB_CALLED = ("The hidden test stopped in a library part that this chapter asks you to write: while grading it is a "
               "stub that raises \"write it yourself\". Use your own version instead of the library's.")


def grading_seed(tag: str) -> int:
    """A 64-bit seed for the hidden test named ``tag`` (its ``grade_id``), derived from the grading secret.

    SHA-256 of the secret and ``tag``. The secret is read from ``$AUTOGRAD_LAB_GRADING_SECRET`` or from the file
    named by ``$AUTOGRAD_LAB_GRADING_SECRET_FILE``; without either it is the public default (docs/instructor.md).
    The grader mixes in the student and the submission as well (:mod:`autograd_lab.course.grading.seeds`).

    Raises:
        OSError: if ``$AUTOGRAD_LAB_GRADING_SECRET_FILE`` names a file that cannot be read.
    """
    secret = os.environ.get(SECRET_ENV)
    if secret is None and os.environ.get(SECRET_FILE_ENV):
        with open(os.environ[SECRET_FILE_ENV], encoding="utf-8") as f:
            secret = f.read().strip()
    digest = hashlib.sha256(f"{secret or PUBLIC_SECRET}\0{tag}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def grading_rng(tag: str) -> Any:
    """``np.random.default_rng(grading_seed(tag))``."""
    import numpy as np

    return np.random.default_rng(grading_seed(tag))


class HiddenTestFailed(AssertionError):
    """A judge's verdict that the student's results are wrong; its message is the judge's own text."""


class GraderError(RuntimeError):
    """The instructor's side failed (an exercise that fails on the solution, a judge that crashed): not a verdict."""


def expect(condition: Any, message: str) -> None:
    """In a judge: fail the test with ``message`` unless ``condition`` is true.

    Raises:
        HiddenTestFailed: with ``message``.
    """
    if not bool(condition):
        raise HiddenTestFailed(message)


def expect_close(got: Any, want: Any, message: str, *, rtol: float | None = None, atol: float | None = None) -> None:
    """In a judge: fail with ``message`` unless ``got`` matches ``want`` as :func:`compare` defines it.

    Raises:
        HiddenTestFailed: with ``message``.
    """
    if _first_difference(got, want, "results", rtol, atol) is not None:
        raise HiddenTestFailed(message)


def _kind(v: Any) -> str:
    import numpy as np

    if isinstance(v, np.ndarray):
        return f"an array of dtype {v.dtype}"  # never its shape: hidden inputs decide it
    if isinstance(v, np.generic):
        return f"a NumPy {v.dtype} scalar"
    return {type(None): "None", bool: "a bool", int: "an int", float: "a float", str: "a str", list: "a list",
            dict: "a dict"}.get(type(v), type(v).__name__)


def form_difference(got: Any, want: Any, path: str = "results") -> str | None:
    """Where ``got`` first differs in form from ``want`` (type, dict keys, list length, array shape and dtype), or
    None. The text names dict keys only, never a list index or a value, so it tells nothing of hidden values."""
    import numpy as np

    if isinstance(want, np.ndarray) or isinstance(want, np.generic):
        if type(got) is not type(want) and not (isinstance(got, np.ndarray) and isinstance(want, np.ndarray)):
            return f"{path} should be {_kind(want)}"
        if got.dtype != want.dtype:
            return f"{path} should have dtype {want.dtype}"
        if np.shape(got) != np.shape(want):
            return f"{path} should have another shape"
        return None
    if type(got) is not type(want):
        return f"{path} should be {_kind(want)}"
    if isinstance(want, list):
        if len(got) != len(want):
            return f"{path} should be a list of another length"
        for g, w in zip(got, want):
            found = form_difference(g, w, f"{path}[…]")
            if found:
                return found
    if isinstance(want, dict):
        if set(got) != set(want):
            # Only the expected keys are named: the student's own keys could spell out hidden values.
            missing = sorted(set(want) - set(got))
            return f"{path} should have the keys {sorted(want)}" + (f", missing {missing}" if missing else "") + (
                ", and no others" if set(got) - set(want) else "")
        for key in want:
            found = form_difference(got[key], want[key], f"{path}[{key!r}]")
            if found:
                return found
    return None


def _tolerances(dtype: Any, rtol: float | None, atol: float | None) -> tuple[float, float]:
    import numpy as np

    low = np.dtype(dtype).kind in "fc" and np.dtype(dtype).itemsize <= (4 if np.dtype(dtype).kind == "f" else 8)
    return (rtol if rtol is not None else (2e-4 if low else 1e-7)), (atol if atol is not None else
                                                                      (1e-5 if low else 1e-10))


def _first_difference(got: Any, want: Any, path: str, rtol: float | None, atol: float | None) -> str | None:
    import numpy as np

    found = form_difference(got, want, path)
    if found:
        return found
    if isinstance(want, dict):
        for key in want:
            found = _first_difference(got[key], want[key], f"{path}[{key!r}]", rtol, atol)
            if found:
                return found
        return None
    if isinstance(want, list):
        for g, w in zip(got, want):
            found = _first_difference(g, w, f"{path}[…]", rtol, atol)
            if found:
                return found
        return None
    if isinstance(want, (np.ndarray, np.generic)) or type(want) is float:
        g, w = np.asarray(got), np.asarray(want)
        if w.dtype.kind in "fc":
            r, a = _tolerances(w.dtype, rtol, atol)
            nan_w, nan_g = np.isnan(w), np.isnan(g)
            finite_w = np.isfinite(w)
            same = np.where(nan_w, nan_g, np.where(finite_w, np.isfinite(g), g == w))
            with np.errstate(invalid="ignore", over="ignore"):
                close = np.where(finite_w & np.isfinite(g), np.abs(g - w) <= a + r * np.abs(w), True)
            ok = bool(np.all(same & close))
        else:
            ok = bool(np.array_equal(g, w))
        return None if ok else f"{path} differs from the expected values"
    return None if got == want else f"{path} differs from the expected value"


def compare(x: Any, got: Any, want: Any, *, rtol: float | None = None, atol: float | None = None) -> None:
    """The default judge: ``got`` must equal ``want``; floats to within ``atol + rtol·|want|``.

    Defaults: ``rtol=2e-4, atol=1e-5`` for float32 and smaller, ``rtol=1e-7, atol=1e-10`` for float64 and Python
    floats. NaN must stand where the expected value has NaN, and infinities must match exactly.

    Raises:
        HiddenTestFailed: naming the first result (by its key) that differs.
    """
    found = _first_difference(got, want, "results", rtol, atol)
    if found:
        raise HiddenTestFailed(found)


@dataclass
class HiddenTest:
    """One graded test's hidden part (see the module docstring)."""

    tag: str
    inputs: Callable[[Any], Any]
    exercise: Callable[[Any], Any]
    judge: Callable[[Any, Any, Any], None] | None = None
    rtol: float | None = None
    atol: float | None = None
    replaces: Sequence[str] = field(default_factory=tuple)

    def draw(self, seed: int) -> Any:
        import numpy as np

        return self.inputs(np.random.default_rng(seed))

    def decide(self, x: Any, got: Any, want: Any) -> None:
        """Run the judge on parsed results; raises HiddenTestFailed with the judge's text."""
        found = form_difference(got, want)
        if found:
            raise HiddenTestFailed(f"{WRONG_FORM}: {found}.")
        if self.judge is not None:
            self.judge(x, got, want)
        else:
            compare(x, got, want, rtol=self.rtol, atol=self.atol)


class Mode:
    """What :func:`hidden_test` does; the harnesses install their own with :func:`set_mode`."""

    def run(self, test: HiddenTest) -> None:  # pragma: no cover - interface
        raise NotImplementedError


class InKernel(Mode):
    """All in one kernel: exercise twice from one seed, a round trip through the encoding, then the judge."""

    def run(self, test: HiddenTest) -> None:
        from autograd_lab.course.grading import exchange

        for name in test.replaces:
            resolve(name)
        seed = grading_seed(test.tag)
        want = exchange.decode(exchange.encode(test.exercise(test.draw(seed))))
        got = exchange.decode(exchange.encode(test.exercise(test.draw(seed))))
        if form_difference(got, want) or _first_difference(got, want, "results", 0.0, 0.0):
            raise AssertionError(f"{test.tag}: the exercise gave two different results from one seed; it must be "
                                 f"deterministic (draw everything from the rng that inputs() receives)")
        try:
            test.decide(test.draw(seed), got, want)
        except HiddenTestFailed as exc:
            raise AssertionError(f"{test.tag}: the judge refused the exercise's own results: {exc}") from None


_mode: Mode = InKernel()


def set_mode(mode: Mode) -> Mode:
    """Install ``mode`` for later :func:`hidden_test` calls; returns the one it replaces (for the harnesses)."""
    global _mode
    old, _mode = _mode, mode
    return old


def hidden_test(tag: str, *, inputs: Callable[[Any], Any], exercise: Callable[[Any], Any],
                judge: Callable[[Any, Any, Any], None] | None = None, rtol: float | None = None,
                atol: float | None = None, replaces: Sequence[str] = ()) -> None:
    """Declare and run the hidden part of the test cell ``tag`` (its ``grade_id``).

    Args:
        tag: the test cell's ``grade_id`` (a string constant: the grader reads it from the source).
        inputs: ``inputs(rng) -> x``, plain data drawn from ``rng`` (a ``numpy.random.Generator``) only.
        exercise: ``exercise(x) -> results``, calls the answer; returns plain data (see
            :mod:`autograd_lab.course.grading.exchange`). It must be deterministic given ``x`` and must not change
            ``x`` (the judge draws its own copy).
        judge: ``judge(x, got, want)``, raising :class:`HiddenTestFailed` (use :func:`expect`,
            :func:`expect_close`); default :func:`compare` with ``rtol``/``atol``. It runs only on the trusted
            side: never in the sandbox.
        replaces: dotted names of the library objects the chapter's answers re-implement
            (``"autograd_lab.ops.AddOp"``, ``"autograd_lab.Engine.backward"``). The sandbox's copy of the library
            holds stubs in their place, so an answer can neither call nor copy them. String constants.

    Raises:
        AssertionError: in a notebook, when the exercise or its judge fails.
    """
    _mode.run(HiddenTest(tag, inputs, exercise, judge, rtol, atol, tuple(replaces)))


def resolve(dotted: str) -> Any:
    """The object named by a dotted path (module, then attributes): ``"autograd_lab.Engine.backward"``.

    Raises:
        LookupError: if no such object exists.
    """
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            break
        return obj
    raise LookupError(f"replaces={dotted!r}: no such module, class or function")


__all__ = ["FAILED", "NOT_PLAIN", "NO_RESULT", "STUB_CALLED", "UNCHECKABLE", "WRONG_FORM", "GraderError", "HiddenTest",
           "HiddenTestFailed", "compare", "expect", "expect_close", "form_difference", "grading_rng", "grading_seed",
           "hidden_test", "resolve", "set_mode"]
