"""Attribute writes in answer code, checked as they happen: an answer changes only objects it made itself.

The static check (:mod:`.static`) refuses ``Variable.data = ...`` and ``np.allclose = ...`` by name, but a class can
reach a local name in ways no syntax check can follow: returned by a helper (``def k(v): return type(v)``), kept
on ``self`` (``self.k = type(v); self.k.parents = ...``), or given to a library helper. A write through such a name
patches the class for the rest of the test process, so the instructor's checks that run after the answer in the
same test cell (``Engine.topo_sort`` in a hidden test, ``Variable.parents``, a property getter) read the patch: a
hostile-student review (the third) had all of these accepted. CPython raises no audit event for a write to a
class attribute (``type.__setattr__`` is silent in 3.11), so :mod:`.audit` cannot see it either.

The same review rewrote a test's spy: ``evaluate(model, ...)`` skipped ``no_grad()`` and then overwrote the modes
the test's ``SpyModel`` had recorded (``model.modes[:] = [(False, False)] * 3``): full marks in chapter 07.

So the harness compiles every answer cell through :func:`instrument`: each attribute assignment or deletion
``obj.attr = value`` becomes ``__grader_attr__(obj, "attr").attr = value``, and so do the item stores and in-place
container methods reached through an attribute (``obj.attr[k] = v``, ``obj.attr.clear()``), which change what
``obj`` holds. :class:`AttributeGuard` (bound to that name in the notebook's namespace, where no answer can name or
rebind it: dunder names are refused statically) lets the write through only when ``obj`` is not a class, module or
function, nor an instance of a class that an instructor's cell defined (a spy), unless the answer cells defined that
class or function. (A container first copied to a local name, ``log = model.modes``, is not followed: see
docs/instructor.md.) Anything else raises :class:`~.audit.GraderRefused` before the write happens, so
catching the error does not help: nothing was changed. Line numbers are kept, so messages still name the line.
"""

from __future__ import annotations

import ast
import functools
import types
from typing import Any

import numpy as np

from autograd_lab.course.grading.audit import GraderRefused

#: The names the instrumented code calls; dunders, so an answer cell can neither use nor shadow them.
GUARD_NAME = "__grader_attr__"
CALL_NAME = "__grader_call__"
#: Calls left as they are: zero-argument ``super()`` and ``dir()`` read the frame they are called from.
_FRAME_READERS = frozenset({"super", "dir"})
#: Builtins that never call what they are given (map, sorted, min, max, filter and friends do: they stay guarded),
#: and methods of lists, sets, dicts and arrays, left unguarded when the cell does not rebind the builtin's name and
#: no reference of the cell has a method of that name: a graph walk is mostly such calls, and wrapping each one
#: made it 20x slower.
_FIRST_ORDER_BUILTINS = frozenset({
    "id", "len", "range", "isinstance", "issubclass", "int", "float", "bool", "str", "tuple", "list", "dict", "set",
    "frozenset", "abs", "round", "enumerate", "zip", "type", "hasattr", "hash", "repr", "print", "divmod", "pow",
    "chr", "ord", "any", "all", "sum", "bytes", "complex", "slice", "format", "ascii", "bin", "hex", "oct", "callable",
})
_CONTAINER_METHODS = frozenset({
    "append", "add", "pop", "popleft", "appendleft", "get", "items", "keys", "values", "extend", "insert", "remove",
    "discard", "update", "setdefault", "copy", "clear", "index", "count", "union", "intersection", "difference",
    "issubset", "issuperset", "reshape", "astype", "ravel", "flatten", "transpose", "squeeze", "tolist", "item",
    "startswith", "endswith", "join", "split", "strip", "lower", "upper", "replace",
})

#: Function-like objects: plain and builtin functions, methods, partials and NumPy's public functions (array-function
#: dispatchers and ufuncs carry a ``__dict__`` of their own).
_FUNCTIONS = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.BuiltinMethodType,
              types.WrapperDescriptorType, types.MethodWrapperType, types.MethodDescriptorType, functools.partial,
              type(np.allclose), np.ufunc)


#: Methods that change a container in place: ``obj.attr.clear()`` counts as a write to ``obj``.
_MUTATORS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
                       "sort", "reverse", "add", "discard", "difference_update", "intersection_update",
                       "symmetric_difference_update", "fill", "resize", "put", "itemset", "setflags",
                       "appendleft", "extendleft", "popleft", "rotate", "__setitem__", "__delitem__"})


def _guarded(node: ast.Attribute) -> None:
    """Make ``node`` (``obj.attr``) evaluate ``obj`` through the guard."""
    call = ast.Call(func=ast.Name(GUARD_NAME, ast.Load()), args=[node.value, ast.Constant(node.attr)], keywords=[])
    node.value = ast.copy_location(call, node.value)


class _Rewriter(ast.NodeTransformer):
    def __init__(self, filename: str | None, tree: ast.Module, reference_methods: frozenset[str]) -> None:
        self.filename = filename  # set: every call also goes through CALL_NAME, tagged with the cell's file
        bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        bound |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
        self.plain_builtins = _FIRST_ORDER_BUILTINS - bound
        self.plain_methods = _CONTAINER_METHODS - reference_methods

    def _unguarded(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Name):
            return func.id in _FRAME_READERS or func.id in self.plain_builtins
        return isinstance(func, ast.Attribute) and func.attr in self.plain_methods

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            _guarded(node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        # obj.attr[k] = v changes what obj holds: a write to obj (a test's spy keeps its record in obj.attr).
        self.generic_visit(node)
        if isinstance(node.ctx, (ast.Store, ast.Del)) and isinstance(node.value, ast.Attribute):
            _guarded(node.value)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        # obj.attr.clear() likewise.
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _MUTATORS and isinstance(func.value, ast.Attribute):
            _guarded(func.value)
        if self.filename is None or self._unguarded(func):
            return node
        # f(a, k=b) -> __grader_call__("<cell>", f, a, k=b): the callee and its arguments are seen before the call.
        call = ast.Call(func=ast.Name(CALL_NAME, ast.Load()), args=[ast.Constant(self.filename), func, *node.args],
                        keywords=node.keywords)
        return ast.copy_location(call, node)


def instrument(tree: ast.Module, filename: str | None = None,
               reference_methods: frozenset[str] = frozenset()) -> ast.Module:
    """Route every attribute store and delete of ``tree`` (an answer cell, parsed) through :data:`GUARD_NAME`, and
    with ``filename`` (the cell's file name) every call through :data:`CALL_NAME`, but for first-order builtins
    and container methods whose names ``reference_methods`` (the method names of the cell's references) lacks."""
    tree = _Rewriter(filename, tree, reference_methods).visit(tree)
    return ast.fix_missing_locations(tree)


class AttributeGuard:
    """Decides whether answer code may set or delete an attribute of ``obj``; see the module docstring.

    Args:
        student_files: the file names the answer cells are compiled under: a function whose code comes from one
            of them is the answer's own.
    """

    def __init__(self, student_files: frozenset[str], references: dict[str, list[str]] | None = None) -> None:
        self.student_files = student_files
        self.own_classes: list[type] = []  # strong references: an id could otherwise be reused by another class
        self.reference_names = references or {}  # cell file -> dotted references, as the tests write them
        self.references: dict[str, tuple[dict[int, str], tuple[type, ...], list[Any]]] = {}
        self.method_names: dict[str, frozenset[str]] = {}  # cell file -> attribute names of its references

    def resolve(self, filename: str, ns: dict[str, Any]) -> None:
        """Look up the references of the answer cell ``filename`` in the notebook namespace ``ns`` (call before the
        cell runs: the setup cell has bound the names they start from). A reference class counts with the
        functions its own ``__dict__`` holds; one that cannot be found is skipped (its test fails on its own)."""
        ids: dict[int, str] = {}
        classes: list[type] = []
        keep: list[Any] = []
        for dotted in self.reference_names.get(filename, []):
            head, *rest = dotted.split(".")
            value = ns.get(head, _MISSING)
            for part in rest:
                value = getattr(value, part, _MISSING) if value is not _MISSING else _MISSING
            if value is _MISSING:
                continue
            found = [value]
            if isinstance(value, type):
                classes.append(value)
                found += [getattr(v, "__func__", v) for v in vars(value).values()
                          if isinstance(v, (types.FunctionType, staticmethod, classmethod, property))]
                found += [f for v in vars(value).values() if isinstance(v, property)
                          for f in (v.fget, v.fset, v.fdel) if f is not None]
            found = [getattr(v, "__func__", v) for v in found]
            keep += found
            ids.update((id(v), dotted) for v in found)
        self.references[filename] = (ids, tuple(classes), keep)
        self.method_names[filename] = frozenset(
            name for cls in classes for name in vars(cls)) | frozenset(d.rsplit(".", 1)[-1] for d in
                                                                    self.reference_names.get(filename, []))

    def call(self, filename: str, func: Any, /, *args: Any, **kwargs: Any) -> Any:
        """Call ``func(*args, **kwargs)`` for answer code compiled from ``filename``, unless it or an argument is
        (or wraps) a reference of that cell: the reference reached at run time (``type(layer(x).op)`` is the
        library's AddOp) is still not the student's own code."""
        refs = self.references.get(filename)
        if refs is not None and refs[0]:
            for value in (func, *args, *kwargs.values()):
                hit = self._reference_in(value, refs)
                if hit is not None:
                    raise GraderRefused(f"the grader refuses calling {hit}, the reference implementation of this "
                                        f"exercise, from the answer (reached at run time): write it yourself")
        return func(*args, **kwargs)

    @staticmethod
    def _reference_in(value: Any, refs: tuple[dict[int, str], tuple[type, ...], list[Any]]) -> str | None:
        ids, classes, _ = refs
        for _ in range(8):  # partial(partial(f)) and bound methods, a few levels deep
            if id(value) in ids:
                return ids[id(value)]
            if classes and isinstance(value, classes):
                return ids.get(id(type(value))) or type(value).__qualname__
            inner = value.__func__ if isinstance(value, types.MethodType) else (
                value.func if isinstance(value, functools.partial) else None)
            if inner is None:
                return None
            value = inner
        return None

    def adopt(self, ns: dict[str, Any], tree: ast.Module) -> None:
        """Record the classes an answer cell's top-level ``class`` statements defined (call after it ran)."""
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef) and isinstance(ns.get(stmt.name), type):
                self.own_classes.append(ns[stmt.name])

    def __call__(self, obj: Any, attr: str) -> Any:
        if isinstance(obj, type):
            if any(obj is own for own in self.own_classes):
                return obj
            raise GraderRefused(f"the grader refuses changing `{attr}` of the class "
                                f"{getattr(obj, '__qualname__', '?')}, which the answer did not define: the tests "
                                f"use it (change your own classes, instances and local variables only)")
        if isinstance(obj, types.ModuleType):
            raise GraderRefused(f"the grader refuses changing `{attr}` of the module {obj.__name__}")
        kind = type(obj)
        if kind.__module__ == "__main__" and not any(own in kind.__mro__ for own in self.own_classes):
            raise GraderRefused(f"the grader refuses changing `{attr}` of a {kind.__qualname__}: the notebook's "
                                f"tests made that object (to watch what the answer does), not the answer")
        if isinstance(obj, _FUNCTIONS):
            code = getattr(obj, "__code__", None)
            if code is None or code.co_filename not in self.student_files:
                name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or type(obj).__name__
                raise GraderRefused(f"the grader refuses changing `{attr}` of the function {name}, which the "
                                    f"answer did not define")
        return obj


_MISSING = object()


def install(ns: dict[str, Any], student_files: frozenset[str],
            references: dict[str, list[str]] | None = None) -> AttributeGuard:
    """Put a fresh :class:`AttributeGuard` into the notebook namespace ``ns`` (both names) and return it."""
    guard = AttributeGuard(student_files, references)
    ns[GUARD_NAME] = guard
    ns[CALL_NAME] = guard.call
    return guard
