"""Checks that the hidden tests of the course notebooks use to make sure an answer is the student's own code.

Later notebooks import the reference implementation of earlier parts from ``autograd_lab``, so the reference of the
exercise itself is one import away. :func:`assert_own_code` refuses the points, with a message that says why, when
the graded class or function

- *is* the reference, imported under the expected name (``from autograd_lab.ops import AddOp``);
- was not defined in the notebook (its ``__module__`` is not ``__main__``, the namespace notebook cells run in);
- subclasses a class from ``autograd_lab`` other than the allowed bases (``Operator`` and ``may_subclass``);
- has a method or body that reaches the reference (a thin wrapper that delegates to it): through the globals its
  code uses, closure cells, default arguments, constants, containers (recursively), ``functools.partial`` and
  ``partialmethod`` objects, bound methods, class attributes, instances, attribute and ``getattr`` chains with
  constant names, or imports inside the body;
- runs code that is not its own: a code object cloned from the reference (the same object, one compiled from the
  library's file, or the same bytecode at the reference's line numbers, which is what executing the reference
  module's source text gives), or code made from text with ``exec`` (file name ``<string>``).

A name is looked up on a library module or class only where the body reads it from a value that came from
outside (a global, a closure cell, an import, or a local assigned from one), as the function's source says:
``node.op.backward(g)`` on a graph node does not make a body that also uses ``Engine.topo_sort`` "call
``Engine.backward``". Without readable source every name of the code counts.

Equal bytecode alone proves nothing (an honest ``return a + b`` compiles like the reference's), and the source of
one class run under a made-up file name cannot be told from the student's own typing at run time: the static
check of answer cells (``autograd_lab.course.grading.static``) refuses ``exec`` and ``compile`` for that reason.

Using other library pieces (``sum_to_shape``, ``Variable``, earlier operators) stays allowed.

Example, in a hidden test::

    checks.assert_own_code(AddOp, reference=autograd_lab.ops.AddOp)
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import inspect
import os
import re
import sys
import textwrap
import types
from collections import deque
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


#: How many objects the walk from the graded object visits at most (it stops quietly there: bounded time).
WALK_LIMIT = 20_000


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
    name = _safe_name(obj)

    def fail(reason: str) -> None:
        raise NotOwnCodeError(f"No points for {name}: {reason}")

    if reference is not None and obj is reference:
        fail(f"it is the reference {_dotted(reference)} imported from {PACKAGE}, not your own code. "
             f"Write it yourself in the exercise cell.")
    module = _static_attr(obj, "__module__")
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
    walk = _Walk(reference, defined_in)
    for label, func in _functions_of(obj):
        if _static_attr(func, "__module__") not in (defined_in, None) or (
                not isinstance(func, types.FunctionType) and _in_package(func)):
            fail(f"{label} is {_dotted(func)} taken from {_static_attr(func, '__module__')}, not written in this "
                 f"notebook.")
        problem = walk.function(func) if isinstance(func, types.FunctionType) else walk.value(func)
        if problem is not None:
            fail(f"{label} {problem}")
    if isinstance(obj, type):
        for attr, value in _class_dict(obj).items():
            problem = walk.value(value)
            if problem is not None:
                fail(f"its class attribute {attr} {problem}")


def _functions_of(obj: Any) -> Iterator[tuple[str, Any]]:
    """(label, function) for a function, or for each function-like attribute defined directly on a class."""
    if isinstance(obj, types.FunctionType):
        yield "its body", obj
        return
    if not isinstance(obj, type):
        return
    for attr, value in _class_dict(obj).items():
        candidates = [value]
        if isinstance(value, (staticmethod, classmethod)):
            candidates = [value.__func__]
        elif isinstance(value, property):
            candidates = [f for f in (value.fget, value.fset, value.fdel) if f is not None]
        for func in candidates:
            if isinstance(func, types.FunctionType) or (inspect.isroutine(func) and _in_package(func)):
                yield f"method {attr}", func  # e.g. forward = RefOp.forward wrapped by a descriptor


class _Walk:
    """Everything a student's object can reach, searched for the reference; :meth:`value` says how it is reached.

    Each object is visited once and at most :data:`WALK_LIMIT` objects in all, so a huge or cyclic structure ends.
    """

    def __init__(self, reference: Any, defined_in: str) -> None:
        self.reference = reference
        self.defined_in = defined_in
        self.ref_functions = _reference_functions(reference)
        self.ref_codes = {c for f in self.ref_functions for c in _all_codes(f.__code__)}
        self.ref_files = {c.co_filename for c in self.ref_codes}
        self.seen: set[int] = set()
        self.budget = WALK_LIMIT
        try:
            self.package_dir = os.path.dirname(os.path.abspath(sys.modules[PACKAGE].__file__ or ""))
        except (KeyError, TypeError):  # pragma: no cover (this module is part of the package)
            self.package_dir = ""

    def value(self, value: Any, names: frozenset[str] = frozenset()) -> str | None:
        """Why ``value`` is (or leads to) the reference, or None. ``names``: attribute names the code that
        reached it may look up on it (its ``co_names`` and string constants)."""
        if self.budget <= 0 or (id(value) in self.seen and not names):
            return None
        self.seen.add(id(value))
        self.budget -= 1
        ref = self.reference
        if ref is not None:
            if value is ref or _same_function(value, ref):
                return f"calls {_dotted(ref)}, the reference implementation, instead of computing the result itself."
            if isinstance(ref, type) and type(value) is ref:
                return f"uses an instance of {_dotted(ref)}, the reference implementation."
            if isinstance(value, type) and value is not ref and isinstance(ref, type) and ref in value.__mro__:
                return f"uses {_safe_name(value)}, a subclass of the reference {_dotted(ref)}."
            code = _static_attr(value, "__code__")
            if isinstance(code, types.CodeType) and code in self.ref_codes:
                return f"calls {_dotted(value)}, part of the reference implementation {_dotted(ref)}."
        if isinstance(value, types.CodeType):
            return self.code(value)
        if isinstance(value, types.FunctionType):
            # The student's own functions are searched; a library function is only compared with the reference.
            filename = value.__code__.co_filename
            if _static_attr(value, "__module__") == self.defined_in or filename.startswith("<"):
                return self.function(value)
            return None
        if isinstance(value, (types.MethodType, staticmethod, classmethod)):
            return self.value(value.__func__) or self.value(_static_attr(value, "__self__"))
        if isinstance(value, property):
            return self.all(f for f in (value.fget, value.fset, value.fdel) if f is not None)
        if isinstance(value, (functools.partial, functools.partialmethod)):
            keywords = value.keywords or {}
            return self.all([value.func, *value.args, *keywords.values()])
        if isinstance(value, dict):
            return self.all([*list(value.keys())[:1000], *list(value.values())[:1000]])
        if isinstance(value, (list, tuple, set, frozenset, deque)):
            return self.all(list(value)[:1000])
        if isinstance(value, (types.ModuleType, type)) and names:
            found = self.attributes(value, names)
            if found is not None:
                return found
        if isinstance(value, type) and _static_attr(value, "__module__") == self.defined_in:
            return self.all(_class_dict(value).values())
        if not isinstance(value, (type, types.ModuleType)) and type(value).__module__ == self.defined_in:
            inst = _instance_dict(value)
            return self.value(type(value)) or self.all(inst.values())
        return None

    def all(self, values: Any) -> str | None:
        for item in values:
            found = self.value(item)
            if found is not None:
                return found
        return None

    def attributes(self, holder: Any, names: frozenset[str], depth: int = 3) -> str | None:
        """Follow attribute chains from a module or class by the names the code uses (``ops.AddOp``,
        ``getattr(autograd_lab, "ops")``), ``depth`` steps at most."""
        frontier = [holder]
        for _ in range(depth):
            nxt = []
            for item in frontier:
                for attr in names:
                    try:
                        found = inspect.getattr_static(item, attr)
                    except AttributeError:
                        continue
                    if isinstance(found, (staticmethod, classmethod)):
                        found = found.__func__
                    ref = self.reference
                    if ref is not None and (found is ref or _same_function(found, ref)):
                        return (f"calls {_dotted(ref)}, the reference implementation, instead of computing the "
                                f"result itself.")
                    if isinstance(found, (types.ModuleType, type)) and id(found) not in self.seen:
                        self.seen.add(id(found))
                        nxt.append(found)
            frontier = nxt
        return None

    def function(self, func: types.FunctionType) -> str | None:
        found = self.code(func.__code__)
        if found is not None:
            return found
        names = frozenset(_names_used(func.__code__))
        # Attribute names count only where the body looks them up on something that came from outside it (a
        # global, a closure cell, an import, or a local assigned from one): node.op.backward(g) on a parameter
        # does not look "backward" up on the Engine the body also uses (Engine.topo_sort(root)).
        on_holders = _holder_names(func)
        chain = names if on_holders is None else on_holders
        glob = func.__globals__
        reached: list[Any] = [glob[n] for n in names if n in glob]
        # "import autograd_lab.ops" inside the body: the module is named in co_names by its dotted name.
        reached += [sys.modules[n] for n in names if n.startswith(PACKAGE) and n in sys.modules and n not in glob]
        reached += [cell.cell_contents for cell in (func.__closure__ or ()) if _has_contents(cell)]
        reached += list(func.__defaults__ or ()) + list((func.__kwdefaults__ or {}).values())
        reached += list(_instance_dict(func).values())
        for item in reached:
            found = self.value(item, chain if isinstance(item, (types.ModuleType, type)) else frozenset())
            if found is not None:
                return found
        return self.source_imports(func)

    def code(self, code: types.CodeType) -> str | None:
        """Code that is not the student's: the reference's code object, one compiled from a library file, one made
        from text with exec/compile, or the same bytecode with the reference's line numbers."""
        for c in _all_codes(code):
            if c in self.ref_codes:  # code objects compare equal when bytecode, constants and line numbers match
                return (f"runs the code object of {_dotted(self.reference)}, the reference implementation, or an "
                        f"exact copy of it (same bytecode at the same line numbers).")
            filename = c.co_filename
            if filename in self.ref_files or (self.package_dir and filename.startswith(self.package_dir + os.sep)):
                return (f"runs a code object compiled from {filename}, a file of {PACKAGE} (a copy of the library's "
                        f"code, not yours).")
            if filename == "<string>" and c.co_name not in _GENERATED_BY_LIBRARIES:
                return ("runs code made from text with exec or compile, not written as a def in this notebook "
                        "(executing a copy of the reference's source is not your own code).")
        return None

    def source_imports(self, func: types.FunctionType) -> str | None:
        """Imports in the body's source: ``from autograd_lab.ops import AddOp``, ``import_module(...).AddOp``."""
        ref_name = getattr(self.reference, "__name__", "") if self.reference is not None else ""
        if not ref_name:
            return None
        try:
            source = inspect.getsource(func)
        except (OSError, TypeError):
            return None
        word = re.escape(ref_name)
        if re.search(rf"from\s+{PACKAGE}[\w.]*\s+import\s+[^\n]*\b{word}\b", source) or re.search(
                rf"{PACKAGE}[\w.]*[\"')\s]*\.\s*{word}\b", source):
            return f"calls {_dotted(self.reference)}, the reference implementation, instead of computing the result " \
                   f"itself."
        return None


def _reference_functions(reference: Any) -> list[types.FunctionType]:
    """The reference's Python functions: itself, or its methods (through its library bases)."""
    if reference is None:
        return []
    roots: list[Any] = []
    if isinstance(reference, type):
        for klass in reference.__mro__:
            if klass is not object and (klass is reference or _in_package(klass)) and klass is not Operator:
                for value in _class_dict(klass).values():
                    if isinstance(value, (staticmethod, classmethod)):
                        value = value.__func__
                    if isinstance(value, property):
                        roots += [f for f in (value.fget, value.fset, value.fdel) if f is not None]
                    else:
                        roots.append(value)
    else:
        roots.append(_static_attr(reference, "__func__") or reference)
    return [root for root in roots if isinstance(root, types.FunctionType)]


def _all_codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _all_codes(const)


def _names_used(code: types.CodeType) -> Iterator[str]:
    """Global and attribute names the code uses, and string constants that look like names (``getattr`` chains)."""
    for c in _all_codes(code):
        yield from c.co_names
        yield from c.co_freevars
        for const in _string_constants(c.co_consts):
            if const.isidentifier():
                yield const


def _holder_names(func: types.FunctionType) -> frozenset[str] | None:
    """Attribute names the body of ``func`` looks up on values that may come from outside it, from its source.

    A value may come from outside when it is a name the body does not assign (a global, builtin or closure cell),
    an attribute, item or ``getattr`` of such a value, a container or call holding one among its parts, or a local
    assigned from one anywhere in the body (flow-insensitive, so ``E = Engine; E.backward`` counts). Parameters and
    results of calls on plain values do not: ``node.op.backward(g)`` looks ``backward`` up on the student's data.
    String constants that are identifiers count too (``getattr(Engine, "backward")``, ``reduce(getattr, ...)``).

    Returns None (the caller then counts every name of the code) when the source cannot be read, does not parse,
    or does not name every name the compiled code uses (so it is not the source of this code).
    """
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    top = tree.body[0] if tree.body else None
    if not isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)) or top.name != func.__code__.co_name:
        return None
    written: set[str] = set()
    for node in ast.walk(top):
        if isinstance(node, ast.Name):
            written.add(node.id)
        elif isinstance(node, ast.Attribute):
            written.add(node.attr)
        elif isinstance(node, ast.alias):
            written.update(node.name.split("."))
            if node.asname:
                written.add(node.asname)
        elif isinstance(node, ast.ImportFrom) and node.module:
            written.update(node.module.split("."))
    compiled = {part for c in _all_codes(func.__code__) for n in c.co_names for part in n.split(".")}
    if not compiled - _GRADER_NAMES <= written:
        return None
    strings = {k for c in _all_codes(func.__code__) for k in _string_constants(c.co_consts) if k.isidentifier()}
    return frozenset(_HolderNames(top, func.__globals__).names | strings)


#: Names the grader's runner adds when it instruments an answer cell's tree (grading/guard.py routes attribute
#: stores and calls through them); they are in the compiled code but not in the cell's source.
_GRADER_NAMES = frozenset({"__grader_attr__", "__grader_call__"})


def _string_constants(consts: Any) -> Iterator[str]:
    """The strings among a code object's constants, also inside constant tuples (``["ops", "AddOp"]`` compiles to
    one tuple constant)."""
    for const in consts:
        if isinstance(const, str):
            yield const
        elif isinstance(const, (tuple, frozenset)):
            yield from _string_constants(const)


class _HolderNames:
    """The flow-insensitive analysis behind :func:`_holder_names`, over one function's syntax tree."""

    def __init__(self, top: ast.FunctionDef | ast.AsyncFunctionDef, globals_: dict[str, Any]) -> None:
        self.globals = globals_
        self.assigned: dict[str, list[ast.expr | None]] = {}  # local name -> values it is assigned (None: unknown)
        for node in ast.walk(top):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                args = node.args
                for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                    if a is not None:  # a nested function's parameters get what the body passes: maybe Engine
                        self.assigned.setdefault(a.arg, []).extend([] if node is top else [None])
                if not isinstance(node, ast.Lambda) and node is not top:
                    self.assigned.setdefault(node.name, [])
            elif isinstance(node, ast.ClassDef):
                self.assigned.setdefault(node.name, [])
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    self.bind(target, node.value)
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                self.bind(node.target, node.value)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                self.bind(node.target, node.iter)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                self.bind(node.optional_vars, node.context_expr)
            elif isinstance(node, ast.NamedExpr):
                self.bind(node.target, node.value)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                self.assigned.setdefault(node.name, [])
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:  # an imported module or object comes from outside
                    self.assigned.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        self.tainted: set[str] = set()
        changed = True
        while changed:  # locals assigned from outside values, to a fixpoint (aliases of aliases)
            changed = False
            for name, values in self.assigned.items():
                if name not in self.tainted and any(v is None or self.outside(v) for v in values):
                    self.tainted.add(name)
                    changed = True
        self.names = {node.attr for node in ast.walk(top)
                      if isinstance(node, ast.Attribute) and self.outside(node.value)}

    def makes_data(self, node: ast.expr) -> bool:
        """Whether ``node`` is a global (or builtin) name, or attributes of one, that is a function or a builtin
        class (``zip``, ``reversed``, ``list``): its result is made of its arguments, not of where it lives."""
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.assigned:
            return False
        namespace = self.globals if node.id in self.globals else vars(builtins)
        if node.id not in namespace:
            return False
        value = namespace[node.id]
        for attr in reversed(attrs):
            try:
                value = inspect.getattr_static(value, attr)
            except AttributeError:
                return False
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
        if isinstance(value, type):
            return value.__module__ == "builtins"
        return inspect.isroutine(value)

    def bind(self, target: ast.expr, value: ast.expr | None) -> None:
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.assigned.setdefault(node.id, []).append(value)

    def outside(self, node: ast.expr) -> bool:
        """Whether the value of ``node`` may be (or hold) something from outside the body."""
        if isinstance(node, ast.Name):
            return node.id not in self.assigned or node.id in self.tainted
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            return self.outside(node.value)
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "getattr" and node.args:
                return self.outside(node.args[0])
            if any(self.outside(a) for a in (*node.args, *(k.value for k in node.keywords))):
                return True
            # Engine() gives an Engine, whose methods are the class's; Engine.topo_sort(root) and reversed(order)
            # give data made from their arguments.
            return self.outside(func) and not self.makes_data(func)
        if isinstance(node, ast.Constant):
            return False
        if isinstance(node, ast.Lambda):
            return False  # its body is part of the tree, analysed with it
        return any(self.outside(child) for child in ast.iter_child_nodes(node) if isinstance(child, ast.expr))


def _class_dict(klass: type) -> dict[str, Any]:
    try:
        return dict(type.__dict__["__dict__"].__get__(klass))  # the real class dict, whatever the class defines
    except (KeyError, TypeError):  # pragma: no cover (every class has one)
        return {}


def _instance_dict(value: Any) -> dict[str, Any]:
    try:
        found = object.__getattribute__(value, "__dict__")
    except (AttributeError, TypeError):
        return {}
    return dict(found) if isinstance(found, dict) else {}


def _static_attr(value: Any, attr: str) -> Any:
    """An attribute read without running the object's own code (no properties, no ``__getattr__``)."""
    try:
        found = inspect.getattr_static(value, attr)
    except AttributeError:
        return None
    if isinstance(found, (types.MemberDescriptorType, types.GetSetDescriptorType)):
        try:  # a slot of a builtin type (a function's __module__, a class's __qualname__): C code reads it
            return found.__get__(value, type(value))
        except (AttributeError, TypeError):
            return None
    return found


def _safe_name(obj: Any) -> str:
    for attr in ("__qualname__", "__name__"):
        value = _static_attr(obj, attr)
        if isinstance(value, str):
            return value
    return object.__repr__(obj)


#: Names of the methods that dataclasses and collections.namedtuple make with exec (their code objects say
#: "<string>"); they are boilerplate, not a copy of the reference's work.
_GENERATED_BY_LIBRARIES = frozenset({
    "__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__lt__", "__le__", "__gt__",
    "__ge__", "__getstate__", "__setstate__", "__create_fn__", "<lambda>",
})


def _has_contents(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty closure cell raises ValueError)
    except ValueError:
        return False
    return True


def _same_function(value: Any, reference: Any) -> bool:
    code = _static_attr(value, "__code__")
    ref_code = _static_attr(_static_attr(reference, "__func__") or reference, "__code__")
    return isinstance(code, types.CodeType) and code is ref_code


def _in_package(value: Any) -> bool:
    module = value.__name__ if isinstance(value, types.ModuleType) else _static_attr(value, "__module__")
    return isinstance(module, str) and (module == PACKAGE or module.startswith(PACKAGE + "."))


def _dotted(value: Any) -> str:
    module = _static_attr(value, "__module__")
    qual = _safe_name(value)
    return f"{module}.{qual}" if isinstance(module, str) else qual
