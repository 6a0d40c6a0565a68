"""Deferred imports in the exercise process and the judge: a module named in :data:`LAZY` runs its code on first use,
not on import.

Most chapters' setup cell runs ``import matplotlib.pyplot as plt`` for its demo cells, which the sandbox never runs
(:meth:`autograd_lab.course.grading.assemble.Job.public_cells`). Running matplotlib and pyplot costs ~0.5 s of CPU
per sandbox, twice per submission. Deferred, the import binds the same module objects and their code runs on the
first access to anything else than what the import system itself reads, so a cell that does plot gets the real
modules, only later. It changes when the code runs, never what it does: a student who undoes it only spends their
own time.

Why not ``importlib.util.LazyLoader`` alone: its module runs on the first access to *any* attribute, ``__path__``
included, which the import system reads from a package to import a submodule, so ``import matplotlib.pyplot`` would
still run all of matplotlib (~0.15 s).
"""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from typing import Any, cast

#: Modules deferred in the sandbox: imported by setup cells, used by demo cells and challenge tests only (a hidden
#: part that used one would run it in each test's process; none does). ~0.2 s of CPU (matplotlib), ~40 ms (others).
LAZY = ("matplotlib", "matplotlib.pyplot", "graphviz", "unittest.mock")

#: What the import system reads from a module while importing it or a submodule: served without running it.
_IMPORT_ATTRS = frozenset({"__name__", "__spec__", "__path__", "__loader__", "__package__", "__file__", "__cached__",
                           "__dict__", "__class__"})


class _Deferred(types.ModuleType):
    """A module whose code has not run yet: the first access to another attribute runs it (then it is a plain
    module). Submodules imported meanwhile are served as they are (``import a.b as c`` reads ``a.b``)."""

    def __getattribute__(self, name: str) -> Any:
        namespace = object.__getattribute__(self, "__dict__")
        if name in _IMPORT_ATTRS or (isinstance(namespace.get(name), types.ModuleType)
                                     and f"{namespace['__name__']}.{name}" in sys.modules):
            return namespace[name]
        _run(self)
        return getattr(self, name)

    def __delattr__(self, name: str) -> None:
        _run(self)
        delattr(self, name)

    def __dir__(self) -> list[str]:
        _run(self)
        return dir(self)


def _run(module: types.ModuleType) -> None:
    """Run a deferred module's code, its deferred parent packages' first (the order of an ordinary import)."""
    _run_parent(object.__getattribute__(module, "__name__"))
    module.__class__ = types.ModuleType  # first, so that the module's own code reads it plainly
    spec: Any = module.__spec__
    loader = spec.loader.loader if isinstance(spec.loader, _DeferredLoader) else spec.loader
    spec.loader = module.__loader__ = loader
    loader.exec_module(module)


def _run_parent(name: str) -> None:
    parent = sys.modules.get(name.rpartition(".")[0])
    if type(parent) is _Deferred:
        _run(parent)


class _DeferredLoader:
    """Wraps a source loader: ``exec_module`` only marks the module as deferred."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> types.ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        module.__class__ = _Deferred


class LazyFinder:
    """A ``sys.meta_path`` finder (the protocol of ``importlib.abc.MetaPathFinder``, whose import costs more than
    this saves in a small chapter): finds ``names`` with the other finders and defers their code."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, name: str, path: Sequence[str] | None, target: types.ModuleType | None = None,
                  ) -> ModuleSpec | None:
        if name not in self.names:
            _run_parent(name)  # a submodule that is not deferred runs after its package, as it expects
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = cast(Any, _DeferredLoader(spec.loader))
                return spec
        return None


def install(names: Sequence[str] = LAZY) -> None:
    """Defer ``names`` in this process (first on ``sys.meta_path``, so it sees them before the usual finders)."""
    sys.meta_path.insert(0, LazyFinder(names))


def loaded(name: str) -> types.ModuleType | None:
    """``sys.modules[name]`` if that module's code has run, else None (absent, or deferred and not used yet)."""
    module = sys.modules.get(name)
    return module if type(module) is types.ModuleType else None
