"""Deferred imports in the exercise process: a module named in :data:`LAZY` is executed on first use, not on import.

Most chapters' setup cell runs ``import matplotlib.pyplot as plt`` for its demo cells, which the sandbox never runs
(:meth:`autograd_lab.course.grading.assemble.Job.public_cells`). Executing pyplot costs ~0.4 s of CPU per sandbox
(its figure, text and font machinery), twice per submission. Wrapped in the standard library's
:class:`importlib.util.LazyLoader`, the import binds the same module object and runs its code on the first attribute
access, so a cell that does plot gets the real module, only later. It changes when the code runs, never what it
does: a student who undoes this only spends their own time.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Sequence
from importlib.machinery import ModuleSpec

#: Modules deferred in the sandbox: heavy, and imported by setup cells for demos only.
LAZY = ("matplotlib.pyplot",)


class LazyFinder:
    """A ``sys.meta_path`` finder (the protocol of ``importlib.abc.MetaPathFinder``, whose import costs more than
    this saves in a small chapter): finds ``names`` with the other finders and wraps their loader in a
    ``LazyLoader``."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = frozenset(names)

    def find_spec(self, name: str, path: Sequence[str] | None, target: types.ModuleType | None = None,
                  ) -> ModuleSpec | None:
        if name not in self.names:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = importlib.util.LazyLoader(spec.loader)
                return spec
        return None


def install(names: Sequence[str] = LAZY) -> None:
    """Defer ``names`` in this process (first on ``sys.meta_path``, so it sees them before the usual finders)."""
    sys.meta_path.insert(0, LazyFinder(names))


def loaded(name: str) -> types.ModuleType | None:
    """``sys.modules[name]`` if that module's code has run, else None (absent, or deferred and not used yet)."""
    module = sys.modules.get(name)
    # A deferred module's class is LazyLoader's subclass of ModuleType until its first attribute access.
    return module if type(module) is types.ModuleType else None
