"""A second line behind the static check: a CPython audit hook armed in the sandbox before any student code runs.

The static check (:mod:`.static`) refuses answer cells that could run code from text, swap a function's code or
reach processes; but a check of syntax cannot see every path through the standard library (``singledispatch``
evaluating a string annotation was one). The interpreter itself reports such actions as audit events
(PEP 578, https://peps.python.org/pep-0578/, and the table of events in the ``sys`` documentation), so the harness
installs a hook that refuses them. A hook cannot be removed once added, and forked processes inherit it.

Refused once armed, whenever code compiled from an answer cell is among the callers (so library code that the
setup cell or a test calls on its own is never disturbed), unless the frame that caused a ``compile`` or ``exec``
is one of the few library files that legitimately make code (``dataclasses``, ``collections.namedtuple``,
``ast.parse``, the import system) or runs inside an import (a library module's own top-level code, run by the
answer's ``import`` line):

- ``compile`` and ``exec`` (code from text, or code objects executed by ``exec``);
- setting or deleting a function's or class's ``__code__``, ``__globals__``, ``__closure__``, ``__defaults__``,
  ``__kwdefaults__``, ``__class__``, ``__bases__`` or ``__dict__``;
- processes, signals, sockets, ctypes, the garbage collector's object lists, tracing and new audit hooks.

A refused event raises :class:`GraderRefused` in the code that caused it, so that test fails with the reason.
"""

from __future__ import annotations

import os
import sys
from typing import Any


class GraderRefused(RuntimeError):
    """An action that the grader does not allow while student code runs."""


_STDLIB = os.path.dirname(os.__file__)
#: Files whose frames may compile and exec: the harness and the library code that builds classes from text.
_MAY_MAKE_CODE = frozenset({
    os.path.join(_STDLIB, "dataclasses.py"),
    os.path.join(_STDLIB, "collections", "__init__.py"),
    os.path.join(_STDLIB, "ast.py"),  # ast.parse compiles to a syntax tree only (the harness parses every cell)
    "<frozen importlib._bootstrap>",
    "<frozen importlib._bootstrap_external>",
})
_SENSITIVE_WRITES = frozenset({"__code__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__",
                               "__class__", "__bases__", "__dict__", "__builtins__"})
_REFUSED_EXACT = frozenset({
    "os.system", "os.fork", "os.forkpty", "os.kill", "os.killpg", "os.posix_spawn", "os.spawn", "os.exec",
    "os.startfile", "signal.pthread_kill", "subprocess.Popen", "pty.spawn", "gc.get_objects", "gc.get_referrers",
    "gc.get_referents", "sys.settrace", "sys.setprofile", "sys._current_frames", "sys.addaudithook",
    "code.__new__", "function.__new__", "_thread.start_new_thread", "os.setuid", "os.setgid", "os.chroot",
})
_REFUSED_PREFIXES = ("socket.", "ctypes.", "_ctypes.", "mmap.", "winreg.", "os.exec", "os.spawn", "os.posix_spawn")

_state: dict[str, Any] = {"armed": False, "busy": False, "student_files": frozenset()}


def _student_on_stack(frame: Any) -> bool:
    """Whether student code (a frame compiled from an answer cell) is among the callers."""
    files = _state["student_files"]
    while frame is not None:
        if frame.f_code.co_filename in files:
            return True
        frame = frame.f_back
    return False


def _importing(frame: Any) -> bool:
    """Whether ``frame`` runs inside an import (the import system is between it and the nearest student frame).

    A library module imported for the first time by an answer's ``import`` line runs its own top-level code, which
    may make code (``typing.NamedTuple`` compiles its annotations): that is the library's doing, not the answer's.
    """
    files = _state["student_files"]
    while frame is not None:
        name = frame.f_code.co_filename
        if name in files:
            return False
        if name == "<frozen importlib._bootstrap>":
            return True
        frame = frame.f_back
    return False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if not _state["armed"] or _state["busy"]:
        return
    watched = event in ("compile", "exec", "object.__setattr__", "object.__delattr__")
    if not watched and event not in _REFUSED_EXACT and not event.startswith(_REFUSED_PREFIXES):
        return
    if watched and event.startswith("object.") and (len(args) < 2 or str(args[1]) not in _SENSITIVE_WRITES):
        return
    _state["busy"] = True  # sys._getframe raises an event of its own
    try:
        caller = sys._getframe(1)
        involved = _student_on_stack(caller)
    finally:
        _state["busy"] = False
    # Library code that the harness, the setup cell or a test calls is not the student's doing.
    if not involved:
        return
    if event in ("compile", "exec"):
        if caller.f_code.co_filename in _MAY_MAKE_CODE:
            return
        _state["busy"] = True
        try:
            importing = _importing(caller)
        finally:
            _state["busy"] = False
        if importing:
            return
        raise GraderRefused(f"the grader refuses running code made from text or code objects ({event}) in a "
                            "submission")
    if event.startswith("object."):
        raise GraderRefused(f"the grader refuses changing {args[1]} of an object in a submission")
    raise GraderRefused(f"the grader refuses {event} in a submission (no processes, signals, network, raw memory, "
                        "tracing or new code objects)")


def arm(student_files: frozenset[str]) -> None:
    """Install the hook (once per process; forked children inherit it) and start refusing what code compiled from
    ``student_files`` (the answer cells' filenames) causes, directly or through the library it calls."""
    _state["student_files"] = frozenset(student_files)
    if not _state.get("installed"):
        sys.addaudithook(_hook)
        _state["installed"] = True
    _state["armed"] = True
