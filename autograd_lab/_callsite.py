"""Find the line of user code that called into the library, for error messages."""

from __future__ import annotations

import os
import sys
from types import FrameType

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def user_callsite(skip: int = 1) -> str | None:
    """Return ``"file:line"`` of the innermost frame outside the ``autograd_lab`` package, or None.

    ``skip`` frames are skipped first (this function's caller is frame 1).
    """
    try:
        frame: FrameType | None = sys._getframe(skip + 1)
    except ValueError:
        return None
    while frame is not None:
        filename = frame.f_code.co_filename
        if not os.path.abspath(filename).startswith(_PACKAGE_DIR):
            return f"{filename}:{frame.f_lineno}"
        frame = frame.f_back
    return None
