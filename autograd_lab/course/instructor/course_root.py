"""The nbgrader course root (``assignments/``): its assignments, its configuration, and nbgrader run inside it.

Every instructor command works on a course root, the folder holding ``nbgrader_config.py`` and ``source/``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class CourseError(RuntimeError):
    """An instructor command could not do its job; the message says what and where."""


def assignments(course_dir: Path) -> list[str]:
    """The assignment ids (folder names) under ``course_dir/source``, sorted.

    Raises:
        CourseError: if ``course_dir`` has no ``source/`` folder.
    """
    source = course_dir / "source"
    if not source.is_dir():
        raise CourseError(f"no source/ folder in the course directory {course_dir}")
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))


def source_notebook(course_dir: Path, assignment: str) -> Path:
    """``course_dir/source/<assignment>/<assignment>.ipynb``, the instructor's notebook of ``assignment``.

    Raises:
        CourseError: if that file does not exist.
    """
    path = course_dir / "source" / assignment / f"{assignment}.ipynb"
    if not path.is_file():
        raise CourseError(f"assignment {assignment}: expected the notebook source/{assignment}/{assignment}.ipynb "
                          f"in {course_dir}")
    return path


def load_config(course_dir: Path) -> Any:
    """The traitlets configuration of ``course_dir/nbgrader_config.py`` (a ``traitlets.config.Config``)."""
    from traitlets.config.loader import PyFileConfigLoader

    return PyFileConfigLoader("nbgrader_config.py", path=str(course_dir)).load_config()


def run_nbgrader(
    course_dir: Path, *args: str, check: bool = True, env_extra: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``nbgrader ARGS`` in ``course_dir`` with this interpreter.

    Raises:
        CourseError: if ``check`` and nbgrader exits with a non-zero status (the message holds its last lines).
    """
    env = dict(os.environ, **(env_extra or {}))
    # nbgrader runs its database migrations through the `alembic` script next to the interpreter.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args], cwd=course_dir, env=env, capture_output=True, text=True
    )
    if check and proc.returncode != 0:
        raise CourseError(f"`nbgrader {' '.join(args)}` failed in {course_dir} (exit {proc.returncode}):\n"
                          f"{tail(proc.stdout + proc.stderr)}")
    return proc


@contextlib.contextmanager
def tools_on_path() -> Iterator[None]:
    """Put this interpreter's scripts folder first on PATH while nbgrader runs in this process (it runs
    ``alembic`` from there)."""
    old = os.environ.get("PATH", "")
    os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + old
    try:
        yield
    finally:
        os.environ["PATH"] = old


def tail(text: str, lines: int = 40) -> str:
    """The last ``lines`` lines of ``text``, for error messages that quote a tool's output."""
    return "\n".join(text.strip().splitlines()[-lines:])
