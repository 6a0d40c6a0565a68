"""What an answer cell may use: the allow-list of the static check, and how names resolve to modules.

:mod:`.static` applies these rules to a cell's syntax tree; this module holds the lists (modules, builtins,
attributes, special methods, decorators) and the few lookups that tell whether a dotted name is a module. Only
modules of allowed packages are ever imported here (to see whether ``numpy.linalg`` is a module); no student code
runs.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import inspect
import types
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Top-level modules an answer cell may import (with their public submodules).
ALLOWED_MODULES = frozenset({"numpy", "math", "functools", "itertools", "collections", "typing", "dataclasses",
                             "autograd_lab", "__future__"})
#: Modules refused even though their package is allowed: the grading machinery, tools that write files or run
#: processes, and numpy's ways to raw memory and to files.
DENIED_MODULES = frozenset({
    "autograd_lab.course", "autograd_lab.cli", "autograd_lab.export.build", "autograd_lab.export.simulate",
    "autograd_lab.data.download", "autograd_lab.data.idx", "autograd_lab.data.catalog",
    "numpy.ctypeslib", "numpy.f2py", "numpy.distutils", "numpy.testing.extbuild", "numpy.lib.format",
    "numpy.lib.npyio", "numpy.core", "numpy._core",
    # Array types whose reductions skip entries (masked arrays) or whose methods a subclass could override.
    "numpy.ma", "numpy.matlib",
    # Typing plugins and build hooks: they import mypy, PyInstaller and the like.
    "numpy.typing.mypy_plugin", "numpy._pyinstaller",
})
#: Submodule names refused in any allowed package: test suites import ctypes, subprocess and pytest, and their
#: helpers write files (``numpy.lib.tests.test_io.c_bool`` is a ctypes type).
DENIED_SUBMODULE_NAMES = frozenset({"tests", "testing_utils", "conftest", "setup", "benchmarks"})
#: Builtins that run code from text, reach any attribute or namespace, read files or stop the interpreter.
DENIED_BUILTINS = frozenset({
    "exec", "eval", "compile", "open", "__import__", "getattr", "setattr", "delattr", "globals", "locals", "vars",
    "breakpoint", "input", "exit", "quit", "help", "memoryview", "get_ipython", "display", "copyright", "credits",
    "license", "BaseException", "SystemExit", "KeyboardInterrupt", "GeneratorExit", "__build_class__", "__loader__",
    "__spec__", "__builtins__",
})
#: Attribute names that reach frames, code objects, the garbage collector or files, on whatever object.
_FRAMES = ("f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "f_lasti", "gi_frame", "gi_code",
           "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code", "tb_frame", "tb_next", "co_code",
           "co_consts", "co_names", "func_globals", "func_code", "get_objects", "get_referrers", "get_referents",
           "get_type_hints", "ForwardRef",
           # make_dataclass takes a namespace dict, whose string keys could define __eq__ without a dunder name.
           "make_dataclass")
_RAW_MEMORY_AND_FILES = ("ctypeslib", "ctypes", "as_strided", "frombuffer", "load", "save", "savez",
                         "savez_compressed", "fromfile", "tofile", "memmap", "open_memmap", "loadtxt", "savetxt",
                         "genfromtxt", "fromregex", "DataSource", "dump", "dumps",
                         # autograd_lab's file, process and network entry points; graphviz rendering runs `dot`.
                         "read_idx", "write_idx", "write_c", "export_c", "fetch", "load_dataset", "cache_root",
                         "render", "pipe", "view")
_SKIPPING_ARRAYS = ("ma", "masked_array", "MaskedArray", "matrix", "asmatrix")
#: Library helpers that set arbitrary attributes (update_wrapper can swap a function's code), evaluate strings
#: (singledispatch's register reads string annotations with eval) or walk attributes named in a string
#: (str.format's "{0.__globals__}"): each is a way around the rules above.
_HIDDEN_SETATTR_OR_EVAL = ("update_wrapper", "wraps", "singledispatch", "singledispatchmethod", "format",
                           "format_map", "attrgetter", "methodcaller",
                           # these set methods on the class they are given: dataclass(type(v)) gave Variable an
                           # __eq__ that makes any two Variables equal (third hostile review)
                           "dataclass", "total_ordering", "no_type_check", "runtime_checkable")
#: Attribute names refused on whatever object, with the reason given to the student.
DENIED_ATTRIBUTES: dict[str, str] = {
    **dict.fromkeys(_FRAMES, "it reaches frames, code objects or the objects of other code"),
    **dict.fromkeys(_RAW_MEMORY_AND_FILES, "it reaches files, processes, the network or raw memory"),
    **dict.fromkeys(_HIDDEN_SETATTR_OR_EVAL, "it sets attributes, evaluates strings or reads attributes named in a "
                                             "string behind the scenes"),
    "format": "str.format reads attributes named in its format string (`{0.__globals__}`); use an f-string",
    "format_map": "it reads attributes named in its format string; use an f-string",
    "dataclass": "called on a class it sets methods on that class; write `from dataclasses import dataclass` and "
                 "use it only as `@dataclass` on a class of your own",
    **dict.fromkeys(_SKIPPING_ARRAYS, "masked arrays and matrices compare and reduce differently from arrays, so "
                                      "a test could pass on wrong values"),
}
#: Dunder attributes that may be read (plain strings) and dunder methods that may be called (``super().__init__()``).
READABLE_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__"})
CALLABLE_DUNDERS = frozenset({"__init__", "__repr__", "__str__"})
#: Dunder methods a class may define. Comparison, truth, array and attribute hooks are left out: with them an object
#: could claim to equal any expected value or change what a test sees.
DEFINABLE_DUNDERS = frozenset({"__init__", "__repr__", "__str__", "__post_init__", "__len__", "__iter__",
                               "__getitem__"})
#: Methods that change a list, dict, set or array in place: not to be called on the instructor's objects.
MUTATING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
                              "popitem", "sort", "reverse", "add", "discard", "difference_update",
                              "intersection_update", "symmetric_difference_update", "fill", "resize", "put",
                              "itemset", "setflags", "appendleft", "extendleft", "popleft", "rotate"})
ALLOWED_DECORATORS = frozenset({"staticmethod", "classmethod", "property"})

BUILTIN_NAMES = frozenset(dir(builtins))

#: What the setup cells of this course import, assumed under the given context so that an answer cannot use a
#: dangerous module that some setup cell imported even when the caller passes no context.
DEFAULT_CONTEXT = """
import builtins, ctypes, gc, importlib, inspect, io, multiprocessing, os, pathlib, pickle, platform, resource
import shutil, signal, socket, subprocess, sys, tempfile, threading, time, warnings
import matplotlib
import matplotlib.pyplot as plt
from pathlib import Path
from unittest import mock
import numpy as np
import autograd_lab
from autograd_lab import Engine, Operator, Parameter, Variable
from autograd_lab.nn import Module
from autograd_lab.course import checks
"""


@dataclass(frozen=True)
class Binding:
    module: str | None  # dotted module name if the name is bound to a module
    origin: str  # dotted name of what the import bound ("numpy", "os.path", "autograd_lab.ops.AddOp")


def context_imports(sources: Sequence[str]) -> dict[str, Binding]:
    names: dict[str, Binding] = {}
    for text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue  # an instructor cell with IPython syntax binds nothing we can see
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name, binding in bindings_of(node):
                    names[name] = binding
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node in tree.body:
                names.pop(node.name, None)
    return names


def defined_names(sources: Sequence[str]) -> set[str]:
    """Names the instructor's cells bind at top level by assignment, ``def`` or ``class`` (not by import)."""
    names: set[str] = set()
    for text in sources:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(stmt.name)
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def bindings_of(node: ast.Import | ast.ImportFrom) -> Iterable[tuple[str, Binding]]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                yield alias.asname, Binding(alias.name, alias.name)
            else:
                top = alias.name.split(".")[0]
                yield top, Binding(top, top)
    else:
        base = "." * node.level + (node.module or "")
        for alias in node.names:
            dotted = f"{base}.{alias.name}"
            yield alias.asname or alias.name, Binding(dotted if is_module(dotted) else None, dotted)


def allowed_module(dotted: str, private_ok: bool = False) -> bool:
    """Whether an answer may use ``dotted``; ``private_ok`` for names the instructor's cells imported from it."""
    if dotted.startswith("."):
        return False
    parts = dotted.split(".")
    if parts[0] not in ALLOWED_MODULES:
        return False
    if not private_ok and any(p.startswith("_") for p in parts[1:]):
        return False
    if any(p in DENIED_SUBMODULE_NAMES for p in parts[1:]):
        return False
    return not any(dotted == d or dotted.startswith(d + ".") for d in DENIED_MODULES)


_MODULE_CACHE: dict[str, bool] = {}


def is_module(dotted: str) -> bool:
    """Whether ``dotted`` names a module; only modules of allowed packages are looked up (their imports run)."""
    if dotted in _MODULE_CACHE:
        return _MODULE_CACHE[dotted]
    result = False
    top = dotted.split(".")[0]
    parent, _, attr = dotted.rpartition(".")
    if top in ALLOWED_MODULES and not dotted.startswith(".") and (not parent or allowed_module(parent, True)):
        try:
            if parent:
                value = inspect.getattr_static(importlib.import_module(parent), attr, None)
                result = isinstance(value, types.ModuleType) or (
                    value is None and importlib.util.find_spec(dotted) is not None)
            else:
                result = importlib.util.find_spec(dotted) is not None
        except (ImportError, ValueError, AttributeError):
            result = False
    _MODULE_CACHE[dotted] = result
    return result


#: Where a value may come from (its class's or its own ``__module__``) to be used through an allowed module: C
#: accelerators of allowed modules are named with a leading underscore (``functools.reduce`` is ``_functools``).
_ALLOWED_ORIGINS = ALLOWED_MODULES | {"builtins", "_functools", "_collections", "_collections_abc"}


def _public_attribute(module: str, attr: str) -> object | None:
    """``module.attr`` looked up without running descriptors, or None: also for a private name, a module outside
    the allow-list (never imported to find out: importing a test suite runs its set-up) or one that fails to import.
    """
    if not allowed_module(module, private_ok=True) or attr.startswith("_"):
        return None
    try:
        return inspect.getattr_static(importlib.import_module(module), attr, None)
    except ImportError:
        return None


def foreign_origin(module: str, attr: str) -> str | None:
    """Where ``module.attr`` really comes from, when that is outside the allow-list; else None.

    An allowed module re-exports what it imported (``autograd_lab.data.bundled.Path`` is :class:`pathlib.Path`,
    ``typing.ABCMeta`` is :class:`abc.ABCMeta`) and holds instances of foreign classes (a ``Path`` constant), so a
    name reached through it can be a file, process or raw-memory tool. The value's own ``__module__`` (classes,
    functions) or its class's (instances) decides; a builtin that :data:`DENIED_BUILTINS` lists counts as foreign.
    """
    value = _public_attribute(module, attr)
    if value is None or isinstance(value, types.ModuleType):
        return None
    named = isinstance(value, type) or (callable(value) and hasattr(value, "__qualname__"))
    holder = value if named else type(value)
    origin = inspect.getattr_static(holder, "__module__", None)
    if not isinstance(origin, str):
        return None
    if origin == "builtins":
        name = getattr(value, "__name__", "")
        return f"builtins.{name}" if isinstance(name, str) and name in DENIED_BUILTINS else None
    # numpy's own internals (numpy._core...) are where numpy's public functions live: fine; the grading machinery
    # re-exported somewhere is not.
    if origin.split(".")[0] in _ALLOWED_ORIGINS and not origin.startswith(("autograd_lab.course", "autograd_lab.cli")):
        return None
    return f"{origin}.{getattr(holder, '__qualname__', type(value).__name__)}"


def module_name_of_attribute(module: str, attr: str) -> str | None:
    """The real module name if ``module.attr`` is a module (``autograd_lab.data.os`` -> ``os``), else None.

    A refused module is never imported to find out (importing a test suite runs its set-up).
    """
    if not allowed_module(module, private_ok=True) or attr.startswith("_"):
        return None
    value = _public_attribute(module, attr)
    if isinstance(value, types.ModuleType):
        return value.__name__
    if value is None and is_module(f"{module}.{attr}"):
        return f"{module}.{attr}"
    return None


def library_class(dotted: str) -> bool:
    """Whether ``dotted`` (``autograd_lab.Variable``) names a Python class of autograd_lab."""
    module, _, attr = dotted.rpartition(".")
    if module.split(".")[0] != "autograd_lab" or not attr:
        return False
    try:
        value = inspect.getattr_static(importlib.import_module(module), attr, None)
    except ImportError:
        return False
    return isinstance(value, type)
