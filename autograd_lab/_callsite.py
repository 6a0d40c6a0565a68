"""Find the line of user code that called into the library, for error messages."""

from __future__ import annotations

import linecache
import os
import sys
from types import FrameType

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_callsite(skip: int = 1) -> str | None:
    """Return where the innermost frame outside the ``autograd_lab`` package is, with its source line, or None.

    A file gives ``"path/to/file.py:12 (`y = op(x)`)"``. A Jupyter cell is compiled from a temporary file that the
    learner never sees, so it gives ``"line 12 of a notebook cell (`y = op(x)`)"`` instead.
    ``skip`` frames are skipped first (this function's caller is frame 1).
    """
    try:
        frame: FrameType | None = sys._getframe(skip + 1)
    except ValueError:
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR):
            return describe_line(filename, frame.f_lineno)
        frame = frame.f_back
    return None


def is_notebook_cell(filename: str) -> bool:
    """True for the file names IPython gives the code of a cell (ipykernel 6+: ``/tmp/ipykernel_<pid>/<hash>.py``)."""
    return "ipykernel_" in os.path.basename(os.path.dirname(filename)) or filename.startswith("<ipython-input-")


def describe_line(filename: str, lineno: int) -> str:
    """``file:line`` (or ``line N of a notebook cell``) followed by the source line in backquotes, when it is known."""
    where = f"line {lineno} of a notebook cell" if is_notebook_cell(filename) else f"{filename}:{lineno}"
    source = linecache.getline(filename, lineno).strip()
    return f"{where} (`{source}`)" if source else where
