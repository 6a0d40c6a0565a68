"""Checks that the hidden tests of the course notebooks use to make sure an answer is the student's own code.

Later notebooks import the reference implementation of earlier parts from ``autograd_lab``, so the reference of the
exercise itself is one import away. :func:`assert_own_code` refuses the points, with a message that says why, when
the graded class or function

- *is* the reference, imported under the expected name (``from autograd_lab.ops import AddOp``);
- was not defined in the notebook (its ``__module__`` is not ``__main__``, the namespace notebook cells run in);
- subclasses a class from ``autograd_lab`` other than the allowed bases (``Operator`` and ``may_subclass``);
- has a method or body that reaches the reference (a thin wrapper that delegates to it), found from the names its
  code objects use, its closures and its source text.

Using other library pieces (``sum_to_shape``, ``Variable``, earlier operators) stays allowed.

Example, in a hidden test::

    checks.assert_own_code(AddOp, reference=autograd_lab.ops.AddOp)
"""

from __future__ import annotations

import hashlib
import inspect
import os
import re
import types
from collections.abc import Iterator
from typing import Any

from autograd_lab.operator import Operator

PACKAGE = "autograd_lab"


#: Where the grader puts the instructor's secret: an environment variable, or a file named by one. Without either,
#: the public default below is used (CI, learners' own runs), so the visible behaviour is reproducible.
SECRET_ENV = "AUTOGRAD_LAB_GRADING_SECRET"
SECRET_FILE_ENV = "AUTOGRAD_LAB_GRADING_SECRET_FILE"
PUBLIC_SECRET = "autograd-lab-public-default"


def grading_seed(tag: str) -> int:
    """A 64-bit seed for the hidden test named ``tag`` (its ``grade_id``), derived from the grading secret.

    The source notebooks are public, so hidden tests draw their inputs from values a student cannot predict:
    SHA-256 of the secret and ``tag``. The secret is read from ``$AUTOGRAD_LAB_GRADING_SECRET`` or from the file
    named by ``$AUTOGRAD_LAB_GRADING_SECRET_FILE``; without either it is the public default (see docs/instructor.md).

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
    """``np.random.default_rng(grading_seed(tag))``: the generator a hidden test draws its inputs from.

    Example, in the hidden part of the test cell ``add_op_test``::

        hidden = checks.grading_rng("add_op_test")
        A, B = hidden.normal(size=(3, 4)), hidden.normal(size=(3, 4))
    """
    import numpy as np

    return np.random.default_rng(grading_seed(tag))


class NotOwnCodeError(AssertionError):
    """The graded object is (or wraps) the reference implementation; raised as an assertion so the test fails."""


def assert_own_code(
    obj: Any,
    reference: Any = None,
    *,
    may_subclass: tuple[type, ...] = (),
    defined_in: str = "__main__",
) -> None:
    """Fail unless ``obj`` (a class or function written in the notebook) is the student's own code.

    Args:
        obj: the class or function the exercise asks for.
        reference: the library object the exercise mirrors (class, function or method), if any.
        may_subclass: library classes the exercise allows as bases, besides ``Operator``.
        defined_in: the module name a notebook cell defines things in (``"__main__"`` under Jupyter and nbgrader).

    Raises:
        NotOwnCodeError: (an ``AssertionError``) naming the object and the reason no points were given.
    """
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)

    def fail(reason: str) -> None:
        raise NotOwnCodeError(f"No points for {name}: {reason}")

    if reference is not None and obj is reference:
        fail(f"it is the reference {_dotted(reference)} imported from {PACKAGE}, not your own code. "
             f"Write it yourself in the exercise cell.")
    module = getattr(obj, "__module__", None)
    if module != defined_in:
        origin = f"imported from {module}" if module else "not defined by a def or class statement"
        fail(f"it was not written in this notebook ({origin}). Define it yourself in the exercise cell.")
    if isinstance(obj, type):
        allowed = {Operator, object, *may_subclass}
        for base in obj.__mro__[1:]:
            if base in allowed:
                continue
            if base is reference or _in_package(base):
                fail(f"it subclasses {_dotted(base)} from {PACKAGE}, so the work is inherited, not written. "
                     f"Subclass {' or '.join(b.__name__ for b in allowed if b is not object)} instead.")
    for label, func in _functions_of(obj):
        if getattr(func, "__module__", defined_in) != defined_in:
            fail(f"{label} is {_dotted(func)} taken from {func.__module__}, not written in this notebook.")
        target = _delegation_target(func, reference)
        if target is not None:
            fail(f"{label} calls {target}, the reference implementation, instead of computing the result itself.")


def _functions_of(obj: Any) -> Iterator[tuple[str, types.FunctionType]]:
    """(label, function) for a function, or for each function-like attribute defined directly on a class."""
    if isinstance(obj, types.FunctionType):
        yield "its body", obj
        return
    if not isinstance(obj, type):
        return
    for attr, value in vars(obj).items():
        candidates = [value]
        if isinstance(value, (staticmethod, classmethod)):
            candidates = [value.__func__]
        elif isinstance(value, property):
            candidates = [f for f in (value.fget, value.fset, value.fdel) if f is not None]
        for func in candidates:
            if isinstance(func, types.FunctionType):
                yield f"method {attr}", func
            elif callable(func) and _in_package(func):
                yield f"method {attr}", func  # e.g. forward = RefOp.forward wrapped by a descriptor


def _delegation_target(func: types.FunctionType, reference: Any) -> str | None:
    """The dotted name of the reference if ``func`` reaches it, else None."""
    if reference is None or not isinstance(func, types.FunctionType):
        return None
    ref_name = getattr(reference, "__name__", "")
    names = set(_all_names(func.__code__))
    reached: list[Any] = [func.__globals__[n] for n in names if n in func.__globals__]
    reached += [cell.cell_contents for cell in (func.__closure__ or ()) if _has_contents(cell)]
    for value in reached:
        if value is reference or _same_function(value, reference):
            return _dotted(reference)
        # A library module or class whose attribute is the reference: ops.AddOp, Engine.topo_sort.
        if ref_name in names and _in_package(value) and isinstance(value, (type, types.ModuleType)):
            attr = getattr(value, ref_name, None)
            if attr is reference or _same_function(attr, reference):
                return _dotted(reference)
    if not ref_name:
        return None
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return None
    # Imports inside the body: "from autograd_lab.ops import AddOp", import_module("autograd_lab.ops").AddOp.
    word = re.escape(ref_name)
    if re.search(rf"from\s+{PACKAGE}[\w.]*\s+import\s+[^\n]*\b{word}\b", source) or re.search(
        rf"{PACKAGE}[\w.]*[\"')\s]*\.\s*{word}\b", source
    ):
        return _dotted(reference)
    return None


def _all_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_names(const)


def _has_contents(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty closure cell raises ValueError)
    except ValueError:
        return False
    return True


def _same_function(value: Any, reference: Any) -> bool:
    code = getattr(value, "__code__", None)
    return code is not None and code is getattr(reference, "__code__", None)


def _in_package(value: Any) -> bool:
    module = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
    return isinstance(module, str) and (module == PACKAGE or module.startswith(PACKAGE + "."))


def _dotted(value: Any) -> str:
    module = getattr(value, "__module__", None)
    qual = str(getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or repr(value))
    return f"{module}.{qual}" if module else qual
