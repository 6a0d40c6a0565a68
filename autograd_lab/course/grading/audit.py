"""A second line behind the static check: a CPython audit hook armed in the sandbox before any student code runs.

The static check (:mod:`.static`) refuses answer cells that could run code from text, swap a function's code or
reach processes; but a check of syntax cannot see every path through the standard library (``singledispatch``
evaluating a string annotation was one). The interpreter itself reports such actions as audit events
(PEP 578, https://peps.python.org/pep-0578/, and the table of events in the ``sys`` documentation), so the harness
installs a hook that refuses them. A hook cannot be removed once added, and forked processes inherit it.

Refused once armed, unless the Python frame that caused the event belongs to the harness or to one of the few
library files that legitimately make code (``dataclasses``, ``collections.namedtuple``, the import system):

- ``compile`` and ``exec`` (code from text, or code objects executed by ``exec``);
- setting or deleting a function's or class's ``__code__``, ``__globals__``, ``__closure__``, ``__defaults__``,
  ``__kwdefaults__``, ``__class__``, ``__bases__`` or ``__dict__``, and reading ``__code__``/``__globals__``/
  ``__builtins__`` outside the trusted checks;
- processes, signals, sockets, ctypes, the garbage collector's object lists, tracing and new audit hooks.

A refused event raises :class:`GraderRefused` in the code that caused it, so that test fails with the reason.
"""

from __future__ import annotations

import os
import sys
from typing import Any


class GraderRefused(RuntimeError):
    """An action that the grader does not allow while student code runs."""


_HERE = os.path.dirname(os.path.abspath(__file__))
_COURSE = os.path.dirname(_HERE)
_STDLIB = os.path.dirname(os.__file__)
#: Files whose frames may compile and exec: the harness and the library code that builds classes from text.
_MAY_MAKE_CODE = frozenset({
    os.path.join(_STDLIB, "dataclasses.py"),
    os.path.join(_STDLIB, "collections", "__init__.py"),
    os.path.join(_STDLIB, "ast.py"),  # ast.parse compiles to a syntax tree only (the harness parses every cell)
    "<frozen importlib._bootstrap>",
    "<frozen importlib._bootstrap_external>",
})
#: Files whose frames may read code objects and globals: the own-code checks, inspect (used by dataclasses).
_MAY_READ_CODE = frozenset(os.path.join(_STDLIB, name) for name in (
    "inspect.py", "dataclasses.py", "traceback.py", "linecache.py", "warnings.py", "functools.py"))
#: The library itself reads frames to name the user's calling line in its error messages.
_PACKAGE = os.path.dirname(_COURSE)
_SENSITIVE_WRITES = frozenset({"__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__",
                               "__class__", "__bases__", "__dict__", "__builtins__"})
_SENSITIVE_READS = frozenset({"__code__", "__globals__", "__builtins__", "f_globals", "f_locals", "f_back",
                              "f_builtins", "tb_frame", "gi_frame", "cr_frame", "ag_frame"})
_REFUSED_EXACT = frozenset({
    "os.system", "os.fork", "os.forkpty", "os.kill", "os.killpg", "os.posix_spawn", "os.spawn", "os.exec",
    "os.startfile", "signal.pthread_kill", "subprocess.Popen", "pty.spawn", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys.settrace", "sys.setprofile", "sys._current_frames", "sys.addaudithook",
    "code.__new__", "function.__new__", "_thread.start_new_thread", "os.setuid", "os.setgid", "os.chroot",
})
_REFUSED_PREFIXES = ("socket.", "ctypes.", "_ctypes.", "mmap.", "winreg.", "os.exec", "os.spawn", "os.posix_spawn")

_state = {"armed": False, "busy": False}


def _trusted(filename: str) -> bool:
    return filename.startswith(_COURSE + os.sep)


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _state["armed"] or _state["busy"]:
        return
    watched = event in ("compile", "exec", "object.__setattr__", "object.__delattr__", "object.__getattr__")
    if not watched and event not in _REFUSED_EXACT and not event.startswith(_REFUSED_PREFIXES):
        return
    _state["busy"] = True  # sys._getframe raises an event of its own
    try:
        caller = sys._getframe(1).f_code.co_filename
    finally:
        _state["busy"] = False
    if _trusted(caller):
        return
    if event in ("compile", "exec"):
        if caller in _MAY_MAKE_CODE:
            return
        raise GraderRefused(f"the grader refuses running code made from text or code objects ({event}) while "
                            "student code runs")
    if event in ("object.__setattr__", "object.__delattr__"):
        name = str(args[1]) if len(args) > 1 else ""
        if name in _SENSITIVE_WRITES:
            raise GraderRefused(f"the grader refuses changing {name} of an object while student code runs")
        return
    if event == "object.__getattr__":
        name = str(args[1]) if len(args) > 1 else ""
        if name in _SENSITIVE_READS and caller not in _MAY_READ_CODE and not caller.startswith(_PACKAGE + os.sep):
            raise GraderRefused(f"the grader refuses reading {name} while student code runs")
        return
    raise GraderRefused(f"the grader refuses {event} while student code runs (no processes, signals, network, "
                        "raw memory or tracing in a submission)")


def arm() -> None:
    """Install the hook (once per process; forked children inherit it) and start refusing."""
    if not _state.get("installed"):
        sys.addaudithook(_hook)
        _state["installed"] = True
    _state["armed"] = True
